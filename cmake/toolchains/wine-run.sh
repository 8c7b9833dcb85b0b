#!/usr/bin/env bash
# Runs a Windows program under Wine for CTest (the MinGW toolchain's emulator): headless
# (no display needed), quiet (WINEDEBUG=-all), in the prefix named by WINEPREFIX, which
# ci/cross-test.sh creates inside the build folder before the tests run (a prefix being created
# by several tests at once would race). No Mono or Gecko: nothing here needs them, and their
# installers would ask for a window.
set -euo pipefail
: "${WINEPREFIX:?wine-run.sh: set WINEPREFIX (ci/cross-test.sh windows does)}"
export WINEPREFIX
export WINEDEBUG=${WINEDEBUG:--all}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
unset DISPLAY
exec wine "$@"
