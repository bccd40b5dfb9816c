#!/usr/bin/env bash
# Runs every benchmark (compare_fio.sh, nop.sh, memory.sh) one after the other,
# then repeats their PASS/FAIL lines as a summary.
#
# Usage: bench/run_all.sh [DIR]      (DIR: where the test files go)
# Environment: passed through to each script (RUNTIME, REPS, BENCH_DIR, MEM_SHORT,
# MEM_LONG, ...; see the top of each script). Quick run:
#   RUNTIME=2s REPS=1 MEM_SHORT=2s MEM_LONG=6s bench/run_all.sh
#   IOACCT_SNAPSHOT=0  run the binary in place instead of a copy taken at the start
# Exit status: 0 when every script ran (whatever PASS/FAIL says), 2 when one failed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/ioacct-bench-log.XXXXXX")
trap 'rm -f -- "$log"' EXIT
trap 'exit 130' INT TERM

# The binary may be rebuilt while this runs (src/ is being worked on): run every
# script on one copy of it, taken now. IOACCT_SNAPSHOT=0 runs it in place.
if [ "${IOACCT_SNAPSHOT:-1}" = 1 ]; then
  src_bin=${IOACCT:-$here/../build/release/ioacct}
  [ -x "$src_bin" ] || { echo "run_all.sh: error: $src_bin not found; build it with: cmake --build --preset release --target ioacct" >&2; exit 2; }
  snap=$(mktemp -d "${TMPDIR:-/tmp}/ioacct-bench-bin.XXXXXX")
  trap 'rm -f -- "$log"; rm -rf -- "$snap"' EXIT
  cp -p -- "$src_bin" "$snap/ioacct"
  export IOACCT=$snap/ioacct
  echo "# running a copy of $src_bin taken at $(date -u '+%H:%M:%S UTC')"
fi

failed=()
start=$(date +%s)
for s in compare_fio.sh nop.sh memory.sh; do
  echo "######## bench/$s"
  "$here/$s" "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || failed+=("$s (exit $rc)")
  echo
done

echo "######## summary ($(( $(date +%s) - start )) s)"
grep -E '^(PASS|FAIL)  ' "$log" || true
if [ ${#failed[@]} -gt 0 ]; then
  echo "did not run to the end: ${failed[*]}" >&2
  exit 2
fi
