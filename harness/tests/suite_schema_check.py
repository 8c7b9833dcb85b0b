#!/usr/bin/python3
"""Checks every built-in suite (harness/suites/*/*.suite.json) against suite.schema.json, and
that the schema rejects planted mistakes (its positive control): an unknown case field, a
throughput metric without its regex, an input path leaving the work directory."""
import copy
import glob
import json
import os
import sys

import jsonschema


def main():
    root = sys.argv[1]
    schema = json.load(open(os.path.join(root, "suite.schema.json")))
    jsonschema.Draft7Validator.check_schema(schema)
    suites = sorted(glob.glob(os.path.join(root, "*", "*.suite.json")))
    if not suites:
        sys.exit("no built-in suite found under " + root)
    for path in suites:
        jsonschema.validate(json.load(open(path)), schema)
        print("valid:", path)
    base = json.load(open(suites[0]))
    planted = []
    bad = copy.deepcopy(base)
    bad["cases"][0]["colour"] = "red"
    planted.append(("unknown field", bad))
    bad = copy.deepcopy(base)
    bad["cases"][0]["metric"] = {"kind": "throughput", "unit": "ops/s"}
    planted.append(("throughput without regex", bad))
    bad = copy.deepcopy(base)
    bad["cases"][0]["inputs"] = [{"file": "../escape", "generator": ["true"]}]
    planted.append(("input outside the work directory", bad))
    for what, doc in planted:
        try:
            jsonschema.validate(doc, schema)
        except jsonschema.ValidationError:
            print("rejected as it must be:", what)
            continue
        sys.exit("the schema accepted a planted mistake: " + what)


if __name__ == "__main__":
    main()
