#include "harness/app/process_tree_rss.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "harness/process/proc_status.h"

namespace heapscope::harness {
namespace {

// Reads a small /proc file into buf (NUL-terminated); returns its length, or -1.
// Plain open/read: this runs every few ms while a sample is measured.
ssize_t read_small(const char* path, char* buf, std::size_t cap) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, buf, cap - 1);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

// Appends the children of every thread of `pid` to `out`.
void children_of(pid_t pid, std::vector<pid_t>* out) {
  char dir_path[64];
  std::snprintf(dir_path, sizeof dir_path, "/proc/%d/task", static_cast<int>(pid));
  DIR* dir = opendir(dir_path);
  if (dir == nullptr) return;
  char path[sizeof dir_path + sizeof(dirent::d_name) + 16];
  char buf[4096];
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::snprintf(path, sizeof path, "%s/%s/children", dir_path, e->d_name);
    if (read_small(path, buf, sizeof buf) <= 0) continue;
    char* p = buf;
    while (*p != '\0') {
      char* end = nullptr;
      const long child = std::strtol(p, &end, 10);
      if (end == p) break;
      out->push_back(static_cast<pid_t>(child));
      p = end;
    }
  }
  closedir(dir);
}

}  // namespace

std::vector<pid_t> descendants_of(pid_t root, const std::vector<pid_t>& skip) {
  std::vector<pid_t> found;
  const auto skipped = [&](pid_t p) {
    return std::find(skip.begin(), skip.end(), p) != skip.end();
  };
  children_of(root, &found);
  std::erase_if(found, skipped);
  for (std::size_t i = 0; i < found.size(); ++i) {
    const std::size_t before = found.size();
    children_of(found[i], &found);
    found.erase(
        std::remove_if(found.begin() + static_cast<std::ptrdiff_t>(before), found.end(), skipped),
        found.end());
  }
  return found;
}

std::uint64_t descendants_rss_bytes(const std::vector<pid_t>& skip, pid_t uncounted) {
  std::uint64_t total = 0;
  char path[64];
  char buf[4096];
  for (const pid_t pid : descendants_of(getpid(), skip)) {
    if (pid == uncounted) continue;
    std::snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    if (read_small(path, buf, sizeof buf) <= 0) continue;
    total += proc_status_bytes(buf, "VmRSS").value_or(0);
  }
  return total;
}

}  // namespace heapscope::harness
