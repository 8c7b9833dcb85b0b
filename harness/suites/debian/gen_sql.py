"""Writes the sqlite case's workload, or (with --expected) the output it must print.

Usage: gen_sql.py SEED ROWS [--expected]. The workload creates two tables, inserts ROWS rows of
random names and payload strings in one transaction, indexes them, updates and deletes a seeded
share of them, runs a join, grouped aggregates and a sort, and prints a handful of numbers.
The expected output is computed here from the same rows, independently of sqlite, so the check
proves the program did the work."""
import random
import sys


def main():
    if len(sys.argv) not in (3, 4) or (len(sys.argv) == 4 and sys.argv[3] != "--expected"):
        sys.exit("usage: gen_sql.py SEED ROWS [--expected]")
    rng = random.Random(int(sys.argv[1]))
    rows = int(sys.argv[2])
    letters = "abcdefghijklmnopqrstuvwxyz"
    people = []
    for i in range(rows):
        name = "".join(rng.choice(letters) for _ in range(rng.randint(3, 10)))
        group = rng.randrange(200)
        payload = "".join(rng.choice(letters) for _ in range(rng.randint(20, 200)))
        people.append([i, name, group, payload, rng.randrange(1000)])
    groups = [(g, f"group-{g}-" + "".join(rng.choice(letters) for _ in range(8)))
              for g in range(200)]
    bump = rng.randrange(50)
    if len(sys.argv) == 4:
        alive = [p for p in people if p[0] % 7 != 3]
        for p in alive:
            if p[2] % 5 == 0:
                p[4] += bump
        total = sum(p[4] for p in alive)
        by_group = {}
        for p in alive:
            by_group[p[2]] = by_group.get(p[2], 0) + 1
        big = sum(1 for c in by_group.values() if c > rows // 250)
        longest = max(len(p[3]) for p in alive)
        first = sorted(alive, key=lambda p: (p[1], p[0]))[0][1]
        print(f"{len(alive)}|{total}|{big}|{longest}|{first}")
        return
    out = ["BEGIN;",
           "CREATE TABLE g(id INTEGER PRIMARY KEY, label TEXT);",
           "CREATE TABLE p(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, payload TEXT, "
           "score INTEGER);"]
    out += [f"INSERT INTO g VALUES({g},'{label}');" for g, label in groups]
    out += [f"INSERT INTO p VALUES({i},'{n}',{g},'{pl}',{s});" for i, n, g, pl, s in people]
    out += ["COMMIT;", "CREATE INDEX p_name ON p(name);", "CREATE INDEX p_grp ON p(grp);",
            f"UPDATE p SET score = score + {bump} WHERE grp % 5 = 0;",
            "DELETE FROM p WHERE id % 7 = 3;",
            "CREATE TEMP TABLE j AS SELECT p.name || '/' || g.label AS k, length(p.payload) AS n "
            "FROM p JOIN g ON p.grp = g.id;",
            "SELECT (SELECT count(*) FROM p), (SELECT sum(score) FROM p), "
            f"(SELECT count(*) FROM (SELECT grp FROM p GROUP BY grp HAVING count(*) > {rows // 250})), "
            "(SELECT max(n) FROM j), (SELECT name FROM p ORDER BY name, id LIMIT 1);"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
