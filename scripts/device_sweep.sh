#!/usr/bin/env bash
# One call on the GPU machine (after `source .device/bootstrap.sh`). Steps run in order and each
# writes its run file at once into $OUT/results (SOLBENCH_RESULTS), so a call cut short keeps
# what it finished. STEPS is a list of "op:dtype[,dtype]" (bench) or "check:op" (test sizes).
#   STEPS="peaks vector_add:fp32 grayscale:u8 check:scan scan:fp32,i32" bash scripts/device_sweep.sh
set -uo pipefail
OUT=${OUT:-/tmp/out}
export SOLBENCH_RESULTS="$OUT/results"
# only the measured peaks travel (SOL %); the committed run files stay home
for f in results/*/peaks.json; do mkdir -p "$SOLBENCH_RESULTS/$(basename "$(dirname "$f")")"; cp "$f" "$SOLBENCH_RESULTS/${f#results/}"; done
py() { python3 -m suite.cli "$@"; }
for step in ${STEPS:-doctor peaks vector_add:fp32 grayscale:u8}; do
  echo "=== $step  $(date +%T)"
  case $step in
    doctor|peaks) py "$step" ;;
    check:*) op=${step#check:}
      py run --size test --check-only --no-save --op "$op" --csv "$OUT/check-$op.csv" > /dev/null 2>&1
      echo "check $op: $(grep -c ',ok,' "$OUT/check-$op.csv") ok"
      grep -E ',(failed|error|timeout),' "$OUT/check-$op.csv" | cut -d, -f5-13 | head -20 ;;
    *:*) op=${step%%:*}; dts=(); for d in ${step#*:}; do :; done
      IFS=, read -ra dl <<< "${step#*:}"; for d in "${dl[@]}"; do dts+=(--dtype "$d"); done
      py run --size bench --op "$op" "${dts[@]}" ${RUN_ARGS:-} 2>&1 | grep -v '^$' | cut -c1-150 ;;
  esac
done
echo "=== done $(date +%T)"
