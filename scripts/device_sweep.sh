#!/usr/bin/env bash
# One call on the GPU machine (after `source .device/bootstrap.sh`): doctor, correctness of every
# kernel on the test cases, peaks, then the bench sweep. Run files and logs are copied to $OUT.
#   OPS="vector_add grayscale" bash scripts/device_sweep.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
ops=(); for o in ${OPS:-}; do ops+=(--op "$o"); done
py() { python3 -m suite.cli "$@"; }
py doctor
py run --size test --check-only --no-save "${ops[@]}" --csv "$OUT/check.csv" > "$OUT/check.log" 2>&1
echo "check exit $?: $(grep -c ',ok,' "$OUT/check.csv") ok"
grep -E ',(failed|error|timeout),' "$OUT/check.csv" | cut -d, -f4-13 | head -40
[ "${PEAKS:-1}" = 1 ] && py peaks
py run --size bench "${ops[@]}" --csv "$OUT/bench.csv" ${RUN_ARGS:-}
for d in results/*/; do
  [ -n "$(find "$d" -newer "$OUT/check.log" -name '*.json')" ] || continue
  mkdir -p "$OUT/$(basename "$d")"
  find "$d" -newer "$OUT/check.log" -name '*.json' -exec cp {} "$OUT/$(basename "$d")/" \;
done
ls -R "$OUT"
