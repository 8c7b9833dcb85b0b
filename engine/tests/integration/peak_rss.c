// Runs PROGRAM with LD_PRELOAD=PRELOAD (none when PRELOAD is empty) and prints its peak
// resident set in KiB (wait4's ru_maxrss). A child's ru_maxrss starts from its parent's
// resident set at fork, so the measuring parent must be this small (statically linked,
// nothing preloaded) rather than the Python driver (resident_floor.py).
// usage: peak_rss PRELOAD PROGRAM [ARGS...]
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: peak_rss PRELOAD PROGRAM [ARGS...]\n");
    return 2;
  }
  pid_t pid = fork();
  if (pid == 0) {
    if (argv[1][0] != '\0') {
      setenv("LD_PRELOAD", argv[1], 1);
    } else {
      unsetenv("LD_PRELOAD");
    }
    execv(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return 1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "peak_rss: %s exited with status %#x\n", argv[2], (unsigned)status);
    return 1;
  }
  printf("%ld\n", usage.ru_maxrss);
  return 0;
}
