#include "harness/campaign/output_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace heapscope::harness {
namespace {

// The pid recorded in an existing lock file, or 0 when it holds none.
pid_t recorded_pid(const std::string& lock_path) {
  std::ifstream in(lock_path);
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

bool process_exists(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

OutputLock::OutputLock(const std::string& output_path) : lock_path_(output_path + ".lock") {
  // Two tries: the second after removing a stale lock (its holder is gone).
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = open(lock_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const std::string text = std::to_string(getpid()) + "\n";
      const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
      const bool closed = close(fd) == 0;
      if (!written || !closed) {
        const std::string why = std::strerror(errno);
        unlink(lock_path_.c_str());
        throw OutputLockError(lock_path_ + ": cannot write: " + why);
      }
      return;
    }
    if (errno != EEXIST) {
      throw OutputLockError("cannot write next to " + output_path + " (" + lock_path_ +
                            "): " + std::strerror(errno));
    }
    const pid_t holder = recorded_pid(lock_path_);
    if (holder != 0 && process_exists(holder)) {
      throw OutputLockError(output_path + " is being written by hsbench process " +
                            std::to_string(holder) + " (lock " + lock_path_ +
                            "); wait for it, or choose another --out");
    }
    // No holder: a run that was killed without cleaning up. Take its place.
    if (unlink(lock_path_.c_str()) != 0 && errno != ENOENT) {
      throw OutputLockError(lock_path_ + ": stale lock cannot be removed: " + std::strerror(errno));
    }
  }
  throw OutputLockError(lock_path_ + ": another process took the lock meanwhile");
}

OutputLock::~OutputLock() {
  // Only our own lock: never remove one a later holder wrote after a stale takeover.
  if (recorded_pid(lock_path_) == getpid()) unlink(lock_path_.c_str());
}

}  // namespace heapscope::harness
