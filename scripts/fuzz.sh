#!/usr/bin/env bash
# Runs the libFuzzer targets of the sanitizer build (scripts/sanitize.sh
# builds them) from seed corpora: the lit tests' .mlir cases, and small
# models exported with Debian's PyTorch.
#
# Usage: scripts/fuzz.sh [--runs=N | --time=SECONDS] [mlir|torchscript]...
#   Default: both targets, 10 minutes each. --runs=N stops each after N
#   inputs with a fixed seed (CI). A corpus grows in
#   build-san/fuzz/TARGET/corpus across runs; a crashing input is written to
#   build-san/fuzz/TARGET/crash-* and the script fails (docs/fuzzing.md says
#   what to do with it).
set -euo pipefail
cd "$(dirname "$0")/.."

limit=(-max_total_time=600)
targets=()
for arg in "$@"; do
  case "$arg" in
    --runs=*) limit=(-runs="${arg#--runs=}" -seed=1) ;;
    --time=*) limit=(-max_total_time="${arg#--time=}") ;;
    mlir|torchscript) targets+=("$arg") ;;
    *) echo "usage: scripts/fuzz.sh [--runs=N | --time=SECONDS] [mlir|torchscript]..." >&2
       exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(mlir torchscript)

seed_mlir() { # One file per split of each lit case.
  /usr/bin/python3 - "$1" test/Dialect/*.mlir test/passes/*.mlir <<'PY'
import os, re, sys
out = sys.argv[1]
for path in sys.argv[2:]:
    text = open(path).read()
    for i, case in enumerate(re.split(r"^// -----$", text, flags=re.M)):
        name = f"{os.path.basename(path)}.{i}"
        with open(os.path.join(out, name), "w") as f:
            f.write(case)
PY
}

seed_torchscript() { # The importer's small models, scripted and traced.
  for model in conv_block control_flow twin_blocks casts named_tuple no_grad; do
    for form in script trace; do
      [ "$model/$form" = control_flow/trace ] && continue
      /usr/bin/python3 test/TorchScript/Inputs/small_models.py "$model" "$form" \
        "$1/$model-$form.pt" 2>/dev/null || true
      rm -f "$1/$model-$form.pt.input.pt"
    done
  done
}

# As in scripts/sanitize.sh: Debian's libMLIR is not instrumented.
export ASAN_OPTIONS="allow_user_poisoning=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
for target in "${targets[@]}"; do
  fuzzer="build-san/bin/composer-$target-fuzzer"
  [ -x "$fuzzer" ] || { echo "fuzz.sh: $fuzzer missing: run scripts/sanitize.sh" >&2; exit 1; }
  dir="build-san/fuzz/$target"
  mkdir -p "$dir/corpus"
  [ -n "$(ls -A "$dir/corpus")" ] || "seed_$target" "$dir/corpus"
  echo "== $target: $(ls "$dir/corpus" | wc -l) inputs in $dir/corpus"
  # LibTorch keeps caches for the process's life: no leak check after each
  # input there, and its own leaks suppressed in the check at exit.
  leaks=1 lsan=""
  [ "$target" = torchscript ] && leaks=0 lsan="suppressions=$PWD/scripts/lsan-libtorch.supp"
  LSAN_OPTIONS="$lsan:${LSAN_OPTIONS:-}" \
  "$fuzzer" "${limit[@]}" -detect_leaks=$leaks -max_len=65536 \
    -artifact_prefix="$dir/" -print_final_stats=1 "$dir/corpus" 2>"$dir/log" ||
    { tail -n 60 "$dir/log"; echo "fuzz.sh: $target found a crash: $dir/crash-*" >&2; exit 1; }
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$dir/log"
done
