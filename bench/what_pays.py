#!/usr/bin/python3
"""Which method passes pay on which model family, on this machine.

Run from the repository root after building (about 15 minutes on 2 cores):
    OMP_NUM_THREADS=2 /usr/bin/python3 bench/what_pays.py [--out DIR]
        [--only FAMILY ...] [--warmup-steps 3] [--timed-steps 7] [--bin DIR]

Exports each model family with Debian's python3-torch and -torchvision:
  resnet50      torchvision ResNet-50, scripted, 8 x 3 x 64 x 64
  mobilenet_v2  torchvision MobileNetV2, scripted, 8 x 3 x 64 x 64
  vit_b_16      torchvision ViT-B/16 at 64 x 64 (16 patches), scripted, 4 images
  gpt           the example GPT decoder (examples/gpt_decoder.py), 8 x 128 tokens
  bert          the example BERT-style encoder (examples/bert_classifier.py),
                16 x 64 tokens
then runs `composer-opt --report-costs=json` on each: every method pass
alone that changes the model and every named pipeline, each timed over a
training step (forward, mean of the output, backward) against the model as
given, which is timed first and last; with --emit-pipeline, so that each
family also gets the pipeline composer-opt chooses for it (the passes that
keep accuracy and pay; "chosen" is their row when they were timed
together). Writes DIR/what_pays.json (the reports), DIR/what_pays.md (per
pass and family: the step-time ratio with its noise, half the
interquartile range of the steps, and the FLOP ratio; then each family's
chosen pipeline), DIR/FAMILY.pipeline, and DIR/what_pays.png (the
step-time ratios as a heat map).
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
EXAMPLES = os.path.join(ROOT, "examples")

TORCHVISION = """
import sys, torch, torchvision
torch.manual_seed(0)
name, out = sys.argv[1], sys.argv[2]
kwargs = {"image_size": 64} if name.startswith("vit") else {}
model = getattr(torchvision.models, name)(num_classes=10, **kwargs)
torch.jit.save(torch.jit.script(model.train()), out)
"""

# name: (how to export it to a path, --input-spec)
FAMILIES = {
    "resnet50": (lambda out: [sys.executable, "-c", TORCHVISION, "resnet50",
                              out], "8x3x64x64xf32"),
    "mobilenet_v2": (lambda out: [sys.executable, "-c", TORCHVISION,
                                  "mobilenet_v2", out], "8x3x64x64xf32"),
    "vit_b_16": (lambda out: [sys.executable, "-c", TORCHVISION, "vit_b_16",
                              out], "4x3x64x64xf32"),
    "gpt": (lambda out: [sys.executable,
                         os.path.join(EXAMPLES, "gpt_decoder.py"), out],
            "8x128xi64"),
    "bert": (lambda out: [sys.executable,
                          os.path.join(EXAMPLES, "bert_classifier.py"),
                          "model", out], "16x64xi64,16x64xi64"),
}


def cpu_name():
    """The CPU as /proc/cpuinfo names it, with the threads the reports ran
    on and the vector extensions that decide bf16's speed."""
    name, flags = platform.processor() or "unknown CPU", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    extensions = [flag for flag in ("avx512f", "avx512_bf16", "amx_bf16")
                  if flag in flags]
    return f"{name}, {threads} threads, {' '.join(extensions) or 'no AVX-512'}"


def report(binaries, family, folder, warmup, timed):
    export, spec = FAMILIES[family]
    model = os.path.join(folder, family + ".pt")
    subprocess.run(export(model), check=True)
    out = os.path.join(folder, family + ".json")
    subprocess.run([os.path.join(binaries, "composer-opt"), model,
                    "--report-costs=json", f"--input-spec={spec}",
                    "--emit-pipeline=" + os.path.join(folder,
                                                      family + ".pipeline"),
                    f"--report-warmup-steps={warmup}",
                    f"--report-timed-steps={timed}", "-o", out], check=True)
    with open(out) as f:
        return json.load(f)


def cells(reports):
    """{variant: {family: cell}} with the model's own row left out."""
    table = {}
    for family, result in reports.items():
        model = result["variants"][0]
        for row in result["variants"][1:]:
            # A count that leaves ops of unknown size out compares nothing.
            counted = not (row["uncounted_ops"] or model["uncounted_ops"])
            table.setdefault(row["name"], {})[family] = {
                "time_ratio": row["time_ratio"], "noise": row.get("noise"),
                "flops_ratio": row["flops_ratio"] if counted else None,
                "kind": row["kind"]}
        for name in result["not_applicable"]:
            table.setdefault(name, {})[family] = {"not_applicable": True}
        for failure in result["failed"]:
            table.setdefault(failure["name"], {})[family] = {
                "failed": failure["reason"]}
    # Passes first, then pipelines, each by name.
    def order(name):
        kinds = {cell.get("kind") for cell in table[name].values()}
        return ("pipeline" in kinds, name)
    return {name: table[name] for name in sorted(table, key=order)}


def cell_text(cell):
    if cell is None:
        return ""
    if cell.get("not_applicable"):
        return "n/a"
    if "failed" in cell:
        return "failed"
    flops = (f"F {cell['flops_ratio']:.2f}"
             if cell["flops_ratio"] is not None else "F -")
    if cell["time_ratio"] is None:
        return f"- / {flops}"
    return (f"{cell['time_ratio']:.2f} ±{cell['noise'] * 100:.0f}% / "
            f"{flops}")


def markdown(table, families, cpu, reports):
    lines = [f"Step time against the model as given (± noise) / FLOP ratio; "
             f"{cpu}; n/a: the pass changes nothing on that model; F -: "
             f"FLOPs not compared, the count leaves ops of unknown size "
             f"out.", "",
             "| pass | " + " | ".join(families) + " |",
             "| --- |" + " --- |" * len(families)]
    for name, row in table.items():
        lines.append(f"| {name} | " +
                     " | ".join(cell_text(row.get(family))
                                for family in families) + " |")
    lines += ["", "| family | chosen pipeline (`--emit-pipeline`) |",
              "| --- | --- |"]
    for family in families:
        choice = reports[family]["pipeline_choice"]
        lines.append(f"| {family} | `{choice['pipeline']}` |")
    return "\n".join(lines) + "\n"


def heat_map(table, families, cpu, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy

    names = list(table)
    values = numpy.full((len(names), len(families)), numpy.nan)
    for i, name in enumerate(names):
        for j, family in enumerate(families):
            cell = table[name].get(family)
            if cell and cell.get("time_ratio"):
                values[i, j] = math.log2(cell["time_ratio"])
    fig, ax = plt.subplots(figsize=(1.6 * len(families) + 4,
                                    0.38 * len(names) + 1.6))
    cmap = matplotlib.colormaps["RdYlGn_r"].copy()
    cmap.set_bad("#dddddd")
    image = ax.imshow(numpy.ma.masked_invalid(values), cmap=cmap, vmin=-1,
                      vmax=1, aspect="auto")
    for i, name in enumerate(names):
        for j, family in enumerate(families):
            cell = table[name].get(family)
            text = ""  # A set of passes timed together on another family.
            if cell and cell.get("not_applicable"):
                text = "n/a"
            elif cell and cell.get("time_ratio"):
                text = f"{cell['time_ratio']:.2f}±{cell['noise'] * 100:.0f}%"
            elif cell and "failed" in cell:
                text = "failed"
            ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(families)), families)
    ax.set_yticks(range(len(names)), names)
    ax.set_title(f"Training-step time against the model as given\n{cpu}",
                 fontsize=10)
    bar = fig.colorbar(image, ax=ax, ticks=[-1, -0.5, 0, 0.5, 1])
    bar.ax.set_yticklabels(["0.5x", "0.71x", "1x", "1.41x", "2x"])
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=os.path.join(ROOT, "build",
                                                      "what_pays"))
    parser.add_argument("--only", action="append", choices=list(FAMILIES),
                        help="just this family (repeatable)")
    parser.add_argument("--warmup-steps", type=int, default=3)
    parser.add_argument("--timed-steps", type=int, default=7)
    parser.add_argument("--bin", default=BIN,
                        help="where composer-opt is")
    parser.add_argument("--from-json", metavar="WHAT_PAYS_JSON",
                        help="write the table and picture of a saved run "
                        "instead of measuring")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        cpu, reports = saved["cpu"], saved["reports"]
        families = list(reports)
    else:
        families = args.only or list(FAMILIES)
        cpu = cpu_name()
        reports = {}
        for family in families:
            print(f"# {family}", flush=True)
            reports[family] = report(args.bin, family, args.out,
                                     args.warmup_steps, args.timed_steps)
    table = cells(reports)
    text = markdown(table, families, cpu, reports)
    print(text)
    with open(os.path.join(args.out, "what_pays.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "what_pays.json"), "w") as f:
        json.dump({"cpu": cpu, "reports": reports}, f, indent=1)
    heat_map(table, families, cpu, os.path.join(args.out, "what_pays.png"))
    print(f"wrote {args.out}/what_pays.md, what_pays.json and what_pays.png")


if __name__ == "__main__":
    main()
