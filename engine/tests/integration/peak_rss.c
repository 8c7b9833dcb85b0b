// Runs PROGRAM with LD_PRELOAD=PRELOAD (none when PRELOAD is empty) and prints its peak
// resident set in KiB: VmHWM read from /proc at the child's exit stop (ptrace), or wait4's
// ru_maxrss where the child cannot be traced. Not ru_maxrss first: Linux 6.2 and later fill
// it from per-CPU RSS counters without summing them, some hundred KiB short of /proc's sums
// and by a different amount each run. And a child's ru_maxrss starts from its parent's
// resident set at fork, so the measuring parent must be this small (statically linked,
// nothing preloaded) rather than the Python driver (resident_floor.py).
// usage: peak_rss PRELOAD PROGRAM [ARGS...]
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// VmHWM of `pid` in KiB, or -1.
static long vm_hwm_kib(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE* f = fopen(path, "r");
  if (f == NULL) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "VmHWM:", 6) == 0) kib = atol(line + 6);
  }
  fclose(f);
  return kib;
}

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
    ptrace(PTRACE_TRACEME, 0, NULL, NULL);  // may be refused: then untraced
    execv(argv[2], argv + 2);
    _exit(127);
  }
  if (pid < 0) return 1;
  int status = 0;
  struct rusage usage;
  long hwm = -1;
  int exec_stop_seen = 0;
  for (;;) {
    if (wait4(pid, &status, 0, &usage) != pid) return 1;
    if (!WIFSTOPPED(status)) break;
    int sig = WSTOPSIG(status);
    if (sig == SIGTRAP && (status >> 16) == PTRACE_EVENT_EXIT) {
      hwm = vm_hwm_kib(pid);
      sig = 0;
    } else if (sig == SIGTRAP && !exec_stop_seen) {  // the stop at exec: ask for the exit stop
      ptrace(PTRACE_SETOPTIONS, pid, NULL, (void*)(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL));
      exec_stop_seen = 1;
      sig = 0;
    }
    ptrace(PTRACE_CONT, pid, NULL, (void*)(long)sig);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "peak_rss: %s exited with status %#x\n", argv[2], (unsigned)status);
    return 1;
  }
  printf("%ld\n", hwm > 0 ? hwm : usage.ru_maxrss);
  return 0;
}
