"""The python case: dict- and str-heavy work over a generated corpus (gen_text.py), run with
PYTHONMALLOC=malloc so every object allocation reaches the allocator under test.

Word counts and per-word position lists in dicts, bigram keys built as strings, a dict of
dicts (word -> following word -> count), an inverted index of line numbers, f-string records
sorted by count, and a JSON round trip of part of it. Prints counts and a checksum."""
import json
import sys


def main():
    counts, positions, follows, index = {}, {}, {}, {}
    nwords = 0
    with open(sys.argv[1], encoding="ascii") as f:
        for lineno, line in enumerate(f):
            prev = None
            for w in line.split():
                nwords += 1
                counts[w] = counts.get(w, 0) + 1
                positions.setdefault(w, []).append(nwords)
                index.setdefault(w, set()).add(lineno)
                if prev is not None:
                    nxt = follows.setdefault(prev, {})
                    nxt[w] = nxt.get(w, 0) + 1
                prev = w
    records = sorted((f"{w}:{c}:{len(positions[w])}" for w, c in counts.items()),
                     key=lambda r: (-int(r.split(":")[1]), r))
    checksum = 0
    for i, r in enumerate(records):
        checksum = (checksum + len(r) * (i + 1)) % 1000000007
    for w, nxt in follows.items():
        best = max(nxt.items(), key=lambda kv: (kv[1], kv[0]))
        checksum = (checksum + len(w + best[0]) * best[1]) % 1000000007
    blob = json.dumps({w: sorted(index[w])[:8] for w in list(counts)[:5000]})
    back = json.loads(blob)
    checksum = (checksum + sum(len(v) for v in back.values())) % 1000000007
    print(f"words {nwords} distinct {len(counts)} top {records[0].split(':')[0]} "
          f"checksum {checksum}")


if __name__ == "__main__":
    main()
