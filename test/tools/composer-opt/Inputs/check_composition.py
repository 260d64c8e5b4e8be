"""Prints each pipeline's passes and whether its passes_time_ratio_product
is the product of those passes' own time ratios in the report (1 for a pass
with no row: it changed nothing)."""
import json
import math
import sys

report = json.load(open(sys.argv[1]))
ratios = {v["name"]: v["time_ratio"] for v in report["variants"]
          if v["kind"] == "pass"}
for v in report["variants"]:
    if v["kind"] != "pipeline":
        continue
    expected = math.prod(ratios.get(p, 1.0) for p in v["passes"])
    got = v["passes_time_ratio_product"]
    print(v["name"], v["passes"],
          "product matches" if math.isclose(got, expected) else
          f"product {got} != {expected}")
