#!/usr/bin/env bash
# Fails when engine code outside src/platform/ calls the OS directly: a raw system call
# wrapper, or an include of a header that exists only to declare them. Every OS call must go
# through platform.h, so a port to another OS replaces src/platform/ and nothing else.
# Usage: only_os_calls.sh <engine source dir>
set -euo pipefail
src=${1:?usage: only_os_calls.sh <engine/src>}

# Calls: the name not preceded by '.', '->', '::' or an identifier character (members,
# os:: wrappers and longer names are fine), then '('.
calls='mmap|munmap|mremap|madvise|mprotect|open|openat|read|write|close|fstat|stat|lseek|readlink|'
calls+='clock_gettime|gettimeofday|getpid|gettid|syscall|sysconf|dl_iterate_phdr|dlopen|dlsym|'
calls+='pthread_[a-z_]+|sched_yield|getrandom|fcntl|ioctl|fork|backtrace|nanosleep|usleep|'
# Win32 (platform_windows.cc, modules_windows.cc)
calls+='Virtual(Alloc|Free|Protect|Query)|CreateFile[AW]?|ReadFile|WriteFile|CloseHandle|'
calls+='Fls(Alloc|SetValue|GetValue)|Tls(Alloc|SetValue|GetValue)|GetProcAddress|LoadLibrary[AW]?|'
calls+='GetModuleHandle[AW]?|BCryptGenRandom|RtlCaptureStackBackTrace|K32[A-Za-z]+|_get_osfhandle'
call_re="(^|[^.>:_A-Za-z0-9])(${calls})[[:space:]]*\\("
header_re='#[[:space:]]*include[[:space:]]*<(sys/[a-z_]+\.h|unistd\.h|fcntl\.h|link\.h|pthread\.h|dlfcn\.h|sched\.h|time\.h|windows\.h|psapi\.h|bcrypt\.h|io\.h)>'

# The override shims replace libc's own entry points (pthread_create is interposed there and
# forwards with dlsym), so they are the OS boundary by definition.
allowed='^[^:]*/override_thread\.cc:'

found=$(grep -rnE --include='*.cc' --include='*.h' "${call_re}|${header_re}" "${src}" |
  grep -v "^${src%/}/platform/" | grep -vE ':[0-9]+:[[:space:]]*//' | grep -vE "${allowed}" || true)
if [[ -n ${found} ]]; then
  echo "raw OS calls outside ${src}/platform/ (add a function to platform.h instead):"
  echo "${found}"
  exit 1
fi
echo "no raw OS call outside ${src}/platform/"
