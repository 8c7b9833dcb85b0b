// One writer per raw run: `<path>.lock` holds the pid of the hsbench process writing `<path>`,
// so a second run, resume or app pointed at the same output is refused instead of both
// rewriting it. A lock whose holder no longer exists (a killed run) is stale and taken over.
#pragma once

#include <stdexcept>
#include <string>

namespace heapscope::harness {

class OutputLockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class OutputLock {
 public:
  // Takes the lock of `output_path` or throws OutputLockError naming the holder; also throws
  // when the output's folder cannot be written (reported before any work starts).
  explicit OutputLock(const std::string& output_path);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string lock_path_;
};

}  // namespace heapscope::harness
