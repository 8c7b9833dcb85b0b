"""Writes the g++ case's translation unit: many generated functions and class templates.

Usage: gen_cxx.py SEED FUNCTIONS. Each function instantiates a few templates over generated
structs, uses std::map, std::string and std::vector, and has a body of seeded arithmetic, so the
compiler builds large trees, symbol tables and template instantiations (cc1plus allocates
through malloc and its own collector, whose pages come from mmap)."""
import random
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_cxx.py SEED FUNCTIONS")
    rng = random.Random(int(sys.argv[1]))
    n = int(sys.argv[2])
    out = ["#include <map>", "#include <string>", "#include <vector>", "#include <algorithm>",
           "template <typename T, int N> struct Box { T v[N]; T sum() const { T s{}; "
           "for (int i = 0; i < N; ++i) s += v[i]; return s; } };",
           "template <typename K, typename V> V pick(const std::map<K, V>& m, const K& k) { "
           "auto it = m.find(k); return it == m.end() ? V{} : it->second; }"]
    for i in range(n):
        fields = rng.randint(2, 6)
        out.append(f"struct S{i} {{ " + " ".join(f"long f{j} = {rng.randint(0, 99)};"
                                                  for j in range(fields)) + " };")
        ops = []
        for k in range(rng.randint(4, 12)):
            op = rng.choice(["+", "-", "*", "^", "|"])
            ops.append(f"acc = acc {op} (s.f{rng.randrange(fields)} + {rng.randint(1, 1000)});")
        out.append(
            f"long suite_fn_{i}(int x) {{ S{i} s; long acc = x; "
            f"Box<long, {rng.randint(2, 9)}> b{{}}; b.v[0] = x; "
            f"std::map<std::string, long> m{{{{\"k{i}\", {rng.randint(0, 9)}}}}}; "
            f"std::vector<long> v(b.v, b.v + 2); std::sort(v.begin(), v.end()); "
            + " ".join(ops) +
            f" return acc + b.sum() + pick(m, std::string(\"k{i}\")) + v.back(); }}")
    out.append("long suite_all(int x) { long t = 0;")
    out += [f"  t += suite_fn_{i}(x);" for i in range(n)]
    out.append("  return t; }")
    print("\n".join(out))


if __name__ == "__main__":
    main()
