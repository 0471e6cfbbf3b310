#!/usr/bin/env bash
# One call on the GPU machine (after `source .device/bootstrap.sh`): doctor, correctness of every
# kernel on the test cases, peaks, then the bench sweep. Run files and logs are copied to $OUT.
#   OPS="vector_add grayscale" bash scripts/device_sweep.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
ops=(); for o in ${OPS:-}; do ops+=(--op "$o"); done
py() { python3 -m suite.cli "$@"; }
py doctor
export SOLBENCH_RESULTS="$OUT/results"   # run files and peaks land in $OUT directly
mkdir -p "$SOLBENCH_RESULTS"; cp -r results/* "$SOLBENCH_RESULTS/" 2>/dev/null  # earlier peaks
if [ "${CHECK:-1}" = 1 ]; then
  cops=(); for o in ${CHECK_OPS:-${OPS:-}}; do cops+=(--op "$o"); done
  py run --size test --check-only --no-save "${cops[@]}" --csv "$OUT/check.csv" > "$OUT/check.log" 2>&1
  echo "check exit $?: $(grep -c ',ok,' "$OUT/check.csv") ok"
  grep -E ',(failed|error|timeout),' "$OUT/check.csv" | cut -d, -f4-13 | head -40
fi
[ "${PEAKS:-1}" = 1 ] && py peaks
py run --size bench "${ops[@]}" --csv "$OUT/bench.csv" ${RUN_ARGS:-}
find "$OUT" -type f
