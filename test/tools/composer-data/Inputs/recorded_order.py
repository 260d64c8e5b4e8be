"""Prints, one per line, the samples one rank reads in a case of
unittests/Runtime/Inputs/streaming-orders.json (orders recorded by running
Streaming's own code):

    recorded_order.py FIXTURE RANK KEY=VALUE...

The case is the first whose keys equal the given values (integers, or
"null")."""
import json
import sys

fixture, rank = sys.argv[1], int(sys.argv[2])
want = {}
for item in sys.argv[3:]:
    key, value = item.split("=", 1)
    want[key] = None if value == "null" else int(value) if value.lstrip("-").isdigit() else value
for case in json.load(open(fixture))["orders"]:
    if all(case.get(k) == v for k, v in want.items()) and len(case["streams"]) == 1:
        for batch in case["ranks"][rank]:
            for sample in batch:
                print(sample)
        sys.exit(0)
sys.exit("no recorded case has " + " ".join(sys.argv[3:]))
