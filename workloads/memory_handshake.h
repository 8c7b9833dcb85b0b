// The child's half of the memory protocol (harness/docs/protocol.md#memory): the parent reads
// this process's memory from /proc, and needs to know when the replay starts and when
// everything has been freed. Over a socket the parent passes (--memory-fd), the child writes
// one line at each phase and waits for the parent's one-line answer:
//
//   child: "replay\n"   streams materialized, nothing of the workload allocated yet
//   parent: "go\n"      after reading the baseline
//   child: "drained\n"  every pass done, every block freed
//   parent: "exit\n"    after its last return point; the child then prints its JSON and exits
//
// Only read(2)/write(2): no allocation, so the allocator's state is not disturbed between the
// drain and the last return point. A closed socket (the parent died) ends the wait.
#pragma once

namespace heapscope::workloads {

class MemoryHandshake {
 public:
  explicit MemoryHandshake(int fd) : fd_(fd) {}  // fd < 0: no parent listening, no-ops

  // Sends `line` (without newline) and waits for one answer line; false on a closed or
  // broken socket or an answer other than `expect`.
  bool exchange(const char* line, const char* expect) const;

 private:
  int fd_;
};

}  // namespace heapscope::workloads
