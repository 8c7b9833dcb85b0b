"""Allocation-heavy, deterministic Python workload for the LD_PRELOAD tests.

Run with PYTHONMALLOC=malloc so every object goes through the C allocator. Prints digests that
must be identical with and without the preloaded allocator.
"""
import hashlib
import json
import random

rng = random.Random(20240601)
digest = hashlib.sha256()

# Many small objects: dicts of strings and tuples, grown and dropped in waves.
for wave in range(4):
    table = {}
    for i in range(30000):
        key = f"k{wave}-{i}-{rng.randrange(1 << 30):x}"
        table[key] = (i, key * (i % 5), [rng.random() for _ in range(i % 7)])
    keys = sorted(table)
    digest.update("".join(keys[::97]).encode())
    for k in keys[::2]:
        del table[k]
    digest.update(str(len(table)).encode())

# Large buffers: bytearrays that grow by realloc, and big joined strings.
buf = bytearray()
for i in range(2000):
    buf += bytes([i % 251]) * (i % 1500)
digest.update(hashlib.sha256(buf).digest())
big = "-".join(str(rng.randrange(10**9)) for _ in range(200000))
digest.update(big[-1000:].encode())

# JSON round trips of nested structures.
doc = {"items": [{"id": i, "tags": [f"t{j}" for j in range(i % 9)], "v": i * 0.5} for i in range(30000)]}
text = json.dumps(doc, sort_keys=True)
back = json.loads(text)
digest.update(text[:5000].encode())
print("items", len(back["items"]), "text", len(text))
print("digest", digest.hexdigest())
