#!/usr/bin/env bash
# The Debian packages installed the way users install them: `apt install ./*.deb` in a fresh,
# minimal Debian 12 root (debootstrap --variant=minbase, so nothing the packages forget to
# depend on is there by accident), then used and removed. Needs root and the Debian mirror;
# not part of the default test run (ctest label `slow`), run by hand or in a labelled job:
#
#   ci/check-debs-in-chroot.sh DIR_WITH_DEBS [ROOT_DIR]
#
# ROOT_DIR (default: a new temporary directory) is reused when it already holds a root, which
# saves the debootstrap on a second run. Exit 0 only when every check passed.
set -euo pipefail

debs_dir=${1:?usage: check-debs-in-chroot.sh DIR_WITH_DEBS [ROOT_DIR]}
root=${2:-$(mktemp -d /tmp/hs-deb-root.XXXXXX)}
mirror=${HS_DEBIAN_MIRROR:-http://deb.debian.org/debian}

fail() { echo "check-debs-in-chroot: FAIL: $*" >&2; exit 1; }
say() { echo "check-debs-in-chroot: $*"; }

[[ $(id -u) == 0 ]] || fail "needs root (debootstrap and chroot)"
command -v debootstrap >/dev/null || fail "debootstrap is not installed (ci/install-deps.sh installs it)"
shopt -s nullglob
debs=("$debs_dir"/*.deb)
((${#debs[@]} == 3)) || fail "expected the three packages in $debs_dir, found ${#debs[@]}"

if [[ ! -x $root/usr/bin/apt-get ]]; then
  say "debootstrap bookworm (minbase) into $root"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
    fail "debootstrap failed (see $root.debootstrap.log)"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
mkdir -p "$root/debs"
rm -f "$root"/debs/*.deb
cp "${debs[@]}" "$root/debs/"

mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

# Nothing of heapscope is in the fresh root.
in_root test ! -e /usr/bin/hsbench || fail "the fresh root already has hsbench"

say "apt install ./debs/*.deb"
in_root apt-get update -qq >/dev/null
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./debs/*.deb' \
  >"$root.install.log" 2>&1 || fail "apt install failed (see $root.install.log)"
in_root dpkg -s libheapscope0 libheapscope-dev heapscope-tools >/dev/null ||
  fail "a package is not installed"

# The runtime library serves a program's malloc through the preload (the probe checks from
# inside the program) and the same check fails without it.
lib=$(in_root sh -c 'ls /usr/lib/x86_64-linux-gnu/libheapscope.so.0')
in_root env LD_PRELOAD="$lib" hs-probe --expect "$lib" >/dev/null ||
  fail "hs-probe under LD_PRELOAD=$lib does not see heapscope"
if in_root hs-probe --expect "$lib" >/dev/null 2>&1; then
  fail "hs-probe without the preload claims heapscope (the check cannot fail)"
fi
# The tools run and name the installed engine; the man page is there.
in_root hsbench --version | grep -q "engine $lib" || fail "hsbench --version does not name $lib"
in_root test -s /usr/share/man/man1/hsbench.1.gz || fail "no hsbench man page"
# The -dev package: the pkg-config file and the CMake package point at the installed files.
in_root test -s /usr/lib/x86_64-linux-gnu/pkgconfig/heapscope.pc || fail "no heapscope.pc"
in_root grep -q '^prefix=/usr$' /usr/lib/x86_64-linux-gnu/pkgconfig/heapscope.pc ||
  fail "heapscope.pc does not say prefix=/usr"
in_root test -s /usr/lib/x86_64-linux-gnu/cmake/heapscope/heapscopeConfig.cmake ||
  fail "no CMake package"

say "apt remove"
in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq heapscope-tools libheapscope-dev libheapscope0' \
  >>"$root.install.log" 2>&1 || fail "apt purge failed (see $root.install.log)"
left=$(in_root sh -c 'ls /usr/bin/hsbench /usr/lib/x86_64-linux-gnu/libheapscope* /usr/include/heapscope 2>/dev/null || true')
[[ -z $left ]] || fail "files left after purge: $left"
say "all checks passed ($root)"
