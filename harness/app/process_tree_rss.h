// Resident memory of a whole process tree, read by the parent from /proc
// (harness/docs/protocol.md#measurements: never by the child). A compiler driver or `sh -c 'a | b'`
// runs several processes at once, so the tree's footprint is the SUM of the RSS of every live
// descendant at one instant; its peak is the maximum of that sum over time, sampled every few
// milliseconds by the caller.
//
// Descendants are found through /proc/<pid>/task/<tid>/children, starting from this process,
// so orphans re-parented to us (we are a child subreaper while `hsbench app` runs) are counted.
// Shared pages (libc, a file mapped by two processes) are counted once per process, as `ps`
// and `top` do; the sum is an upper bound of the distinct pages, and it is what the OS would
// have to keep resident if the processes did not share.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace heapscope::harness {

// Every live descendant of `root` (not `root` itself), breadth first, leaving out the processes
// in `skip` and their whole subtrees (a suite case's server runs beside the measured command).
std::vector<pid_t> descendants_of(pid_t root, const std::vector<pid_t>& skip = {});

// Sum of resident bytes (VmRSS of /proc/<pid>/status) of every live descendant of this process,
// `skip` and their subtrees left out, and `uncounted` (a launcher, whose children are counted)
// not added itself.
std::uint64_t descendants_rss_bytes(const std::vector<pid_t>& skip = {}, pid_t uncounted = 0);

}  // namespace heapscope::harness
