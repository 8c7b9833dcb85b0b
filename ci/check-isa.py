#!/usr/bin/env python3
"""ISA gate: the shipped shared libraries must run on any x86-64 CPU.

The engine is preloaded into arbitrary programs on arbitrary machines, so its code may use only
the x86-64 baseline (SSE2 and older) unless it dispatches at run time, which it does not. The
gate disassembles every executable section with objdump and fails on any instruction of a later
extension: anything touching %ymm/%zmm/%k registers, VEX/EVEX encodings, and the scalar and
SSE3..SSE4.2/AES/SHA/BMI/ADX/... mnemonics listed below.

Allowed although newer mnemonics: `tzcnt` (F3 0F BC decodes as `bsf` on CPUs without BMI1 and
gives the same result for a non-zero input, which is how compilers use it), `endbr64`/`endbr32`
(no-ops before CET), `pause` (a `rep nop`).

Usage:
  check-isa.py LIB...      check libraries; exit 1 naming the first offending instructions
  check-isa.py --self-test build a library with -mavx2 (and one with -mbmi2 -mpopcnt) that the
                           gate must reject, and a baseline one it must accept
"""
import os
import re
import subprocess
import sys
import tempfile

# Mnemonics of extensions beyond the x86-64 baseline (SSE3, SSSE3, SSE4.1, SSE4.2, POPCNT,
# LZCNT, BMI1/2, ADX, MOVBE, AES, PCLMUL, SHA, RDRAND/RDSEED, F16C, FMA4/XOP, CLFLUSHOPT/CLWB,
# RDPID, TSX, MPX, ...). Compared after stripping an objdump size suffix where it is ambiguous.
LATER_EXTENSIONS = set("""
addsubpd addsubps haddpd haddps hsubpd hsubps lddqu movddup movshdup movsldup monitor mwait
fisttp fisttps fisttpl fisttpll
pabsb pabsd pabsw palignr phaddd phaddsw phaddw phsubd phsubsw phsubw pmaddubsw pmulhrsw pshufb
psignb psignd psignw
blendpd blendps blendvpd blendvps dppd dpps extractps insertps movntdqa mpsadbw packusdw
pblendvb pblendw pcmpeqq pextrb pextrd pextrq pinsrb pinsrd pinsrq pmaxsb pmaxsd pmaxud pmaxuw
pminsb pminsd pminud pminuw pmovsxbd pmovsxbq pmovsxbw pmovsxdq pmovsxwd pmovsxwq pmovzxbd
pmovzxbq pmovzxbw pmovzxdq pmovzxwd pmovzxwq pmuldq pmulld ptest roundpd roundps roundsd roundss
phminposuw
crc32 crc32b crc32w crc32l crc32q pcmpestri pcmpestrm pcmpistri pcmpistrm pcmpgtq
popcnt lzcnt andn bextr blsi blsmsk blsr bzhi mulx pdep pext rorx sarx shlx shrx adcx adox movbe
aesdec aesdeclast aesenc aesenclast aesimc aeskeygenassist pclmulqdq pclmullqlqdq pclmulhqlqdq
pclmullqhqdq pclmulhqhqdq sha1msg1 sha1msg2 sha1nexte sha1rnds4 sha256msg1 sha256msg2
sha256rnds2 rdrand rdseed rdpid rdtscp clflushopt clwb xbegin xend xabort xtest
xsaveopt xsavec xsaves xrstors wrfsbase wrgsbase rdfsbase rdgsbase
""".split())

ALLOWED_V_MNEMONICS = {"verr", "verw"}  # 286-era segment checks, not VEX
WIDE_REGISTER = re.compile(r"%(ymm|zmm)\d+|%k[0-7]\b")
INSTRUCTION = re.compile(r"^\s*[0-9a-f]+:\s+(?:(?:lock|rep[nz]*|notrack|bnd|data16|addr32)\s+)*"
                         r"([a-z][a-z0-9.]*)\s*(.*)$")


def offenders(path):
    """(address line, mnemonic) of every non-baseline instruction in the file's code."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], capture_output=True,
                         text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        m = INSTRUCTION.match(line)
        if not m:
            continue
        mnemonic, operands = m.group(1), m.group(2)
        bare = mnemonic.split(".")[0]
        vex = bare.startswith("v") and bare not in ALLOWED_V_MNEMONICS
        if vex or bare in LATER_EXTENSIONS or WIDE_REGISTER.search(operands):
            found.append((line.strip(), bare))
    return found


def check(paths):
    status = 0
    for path in paths:
        if not os.path.isfile(path):
            print(f"check-isa: {path}: no such file", file=sys.stderr)
            status = 1
            continue
        bad = offenders(path)
        if bad:
            kinds = sorted({b for _, b in bad})
            print(f"check-isa: {path}: {len(bad)} instruction(s) beyond the x86-64 baseline "
                  f"({', '.join(kinds)}), e.g.:", file=sys.stderr)
            for line, _ in bad[:5]:
                print(f"  {line}", file=sys.stderr)
            status = 1
        else:
            print(f"check-isa: {path}: x86-64 baseline only")
    return status


# A loop compilers vectorize, and bit tricks that become BMI2/POPCNT instructions when allowed.
CONTROL_SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
void add_arrays(int32_t* restrict a, const int32_t* restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = a[i] * 3 + b[i];
}
uint64_t bits(uint64_t x, unsigned s) { return (x >> s) + (uint64_t)__builtin_popcountll(x); }
"""


def self_test():
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "control.c")
        with open(source, "w") as f:
            f.write(CONTROL_SOURCE)
        cases = [("-mavx2", True), ("-mbmi2 -mpopcnt", True), ("", False)]
        failures = 0
        for flags, must_fail in cases:
            lib = os.path.join(tmp, f"control{len(flags)}.so")
            subprocess.run([cc, "-O3", "-shared", "-fPIC", *flags.split(), source, "-o", lib],
                           check=True)
            rejected = bool(offenders(lib))
            verdict = "rejected" if rejected else "accepted"
            expected = "rejected" if must_fail else "accepted"
            ok = rejected == must_fail
            print(f"check-isa self-test: built with '{flags or 'baseline'}': {verdict} "
                  f"({'ok' if ok else 'expected ' + expected})")
            failures += 0 if ok else 1
        return 1 if failures else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not argv or any(a.startswith("-") for a in argv):
        print(__doc__, file=sys.stderr)
        return 2
    return check(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
