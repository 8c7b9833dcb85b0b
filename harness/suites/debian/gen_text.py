"""Writes a text corpus of pseudo-words (the lua and python cases' input) from a seed.

Usage: gen_text.py SEED LINES. Same seed and line count, same bytes (Python's random.Random is
a documented, versioned generator), so inputs are never downloaded and always reproducible.
"""
import random
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen_text.py SEED LINES")
    rng = random.Random(int(sys.argv[1]))
    lines = int(sys.argv[2])
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "qua", "bri", "dor", "fen"]
    # A Zipf-like vocabulary: a few words very common, a long tail of rare ones.
    vocab = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(20000)]
    cumulative, total = [], 0.0
    for i in range(len(vocab)):
        total += 1.0 / (i + 1)
        cumulative.append(total)
    out = sys.stdout
    for _ in range(lines):
        n = rng.randint(4, 16)
        out.write(" ".join(rng.choices(vocab, cum_weights=cumulative, k=n)))
        out.write("\n")


if __name__ == "__main__":
    main()
