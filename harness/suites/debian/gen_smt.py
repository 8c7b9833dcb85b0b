"""Writes the z3 case's problem: SMT-LIB 2 integer queries, each with a planted solution.

Usage: gen_smt.py SEED QUERIES. Each query is pushed, checked and popped: a dozen bounded
integer variables under linear inequalities over three of them and disjunctions of two, all
true at the planted assignment, so every answer is `sat` and the run time is predictable
(one large random problem can take seconds or hours). z3 builds and frees terms, the
arithmetic solver's rows and the clause database for every query: heap traffic throughout."""
import random
import sys


def query(rng, out):
    nvars, ncons = 12, 30
    planted = [rng.randint(0, 50) for _ in range(nvars)]

    def inequality():
        idx = rng.sample(range(nvars), 3)
        coef = [rng.choice([-7, -5, -3, -2, -1, 1, 2, 3, 5, 7]) for _ in idx]
        bound = sum(c * planted[i] for c, i in zip(coef, idx)) + rng.randint(0, 2)
        terms = " ".join(f"(* {c} x{i})" for c, i in zip(coef, idx))
        return f"(<= (+ {terms}) {bound})"

    out.append("(push 1)")
    for i in range(nvars):
        out.append(f"(declare-fun x{i} () Int)")
        out.append(f"(assert (and (>= x{i} 0) (<= x{i} 50)))")
    for _ in range(ncons):
        if rng.random() < 0.3:
            other = f"(= x{rng.randrange(nvars)} {rng.randint(0, 50)})"
            out.append(f"(assert (or {other} {inequality()}))")
        else:
            out.append(f"(assert {inequality()})")
    out.append("(check-sat)")
    out.append("(pop 1)")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_smt.py SEED QUERIES")
    rng = random.Random(int(sys.argv[1]))
    out = ["(set-logic QF_LIA)"]
    for _ in range(int(sys.argv[2])):
        query(rng, out)
    print("\n".join(out))


if __name__ == "__main__":
    main()
