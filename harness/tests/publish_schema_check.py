#!/usr/bin/env python3
"""Publishes a fixture campaign and validates every JSON document of the site against
site/schemas with python3-jsonschema (Draft 7), independently of the valijson checks inside
hsbench. Also checks that each schema rejects a mutated document (the check can fail)."""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed")
    sys.exit(77)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hsbench", required=True)
    ap.add_argument("--fixture", required=True)
    ap.add_argument("--schemas", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    raw = os.path.join(args.work, "raw.json")
    site = os.path.join(args.work, "site")
    subprocess.run([args.fixture, "--out", raw, "--allocators", "4", "--workloads", "3",
                    "--threads", "1,2,4", "--blocks", "6"], check=True)
    subprocess.run([args.hsbench, "publish", raw, "--out", site], check=True,
                   stdout=subprocess.DEVNULL)

    def validator(name):
        with open(os.path.join(args.schemas, name + ".schema.json")) as f:
            schema = json.load(f)
        jsonschema.Draft7Validator.check_schema(schema)
        return jsonschema.Draft7Validator(schema)

    def load(path):
        with open(os.path.join(site, path)) as f:
            return json.load(f)

    latest = load("latest.json")
    documents = [("latest", latest, "latest.json"), ("manifest", load("manifest.json"), "manifest.json")]
    for run in latest["runs"]:
        documents.append(("summary", run["summary"], "summary of " + run["run_id"]))
        documents.append(("raw-run", load(run["raw"]["copy"]), run["raw"]["copy"]))
    with open(os.path.join(site, "history.jsonl")) as f:
        for n, line in enumerate(f, 1):
            documents.append(("history-row", json.loads(line), "history.jsonl:%d" % n))
    failures = 0
    for schema, doc, what in documents:
        errors = list(validator(schema).iter_errors(doc))
        for e in errors[:3]:
            print("FAIL %s vs %s.schema.json: %s at %s" % (what, schema, e.message, list(e.path)))
        failures += bool(errors)
        # Positive control: an unknown top-level field must be rejected by every schema.
        mutated = copy.deepcopy(doc)
        mutated["unexpected_field"] = 1
        if validator(schema).is_valid(mutated):
            print("FAIL %s.schema.json accepts an unknown top-level field" % schema)
            failures += 1
    print("checked %d documents against site/schemas with jsonschema %s: %d failures"
          % (len(documents), jsonschema.__version__, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
