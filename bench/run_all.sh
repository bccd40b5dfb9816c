#!/usr/bin/env bash
# Runs every benchmark (compare_fio.sh: a b e, nop.sh: c, memory.sh: d, then the
# mode matrix modes.sh) one after the other, then repeats their PASS/FAIL lines and
# the mode matrix as a summary. Defaults take about 8 minutes on 2 vCPUs (464 s).
#
# Usage: bench/run_all.sh [DIR]      (DIR: where the test files go)
# Environment: passed through to each script (RUNTIME, REPS, BENCH_DIR, MEM_SHORT,
# MEM_LONG, MODES_RUNTIME, MODES_REPS, ...; see the top of each script). RUNTIME and
# REPS, when set, also apply to modes.sh unless MODES_RUNTIME / MODES_REPS are set.
# Quick run:
#   RUNTIME=1s REPS=1 MEM_SHORT=2s MEM_LONG=6s bench/run_all.sh
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
  cp -p -- "$src_bin" "$snap/ioacct"
  export IOACCT=$snap/ioacct
  echo "# running a copy of $src_bin taken at $(date -u '+%H:%M:%S UTC')"
fi

# The scripts share their test files (one 512 MiB page-cache file, one 1 GiB O_DIRECT
# file) instead of each writing its own: lib.sh names them *.$BENCH_SHARED_TAG;
# they are removed here at exit, with the directory if this run made it.
bench_dir=${1:-${BENCH_DIR:-/var/tmp/ioacct-bench}}
made_dir=0
[ -d "$bench_dir" ] || made_dir=1
export BENCH_SHARED_TAG="shared.$$"
cleanup() {
  rm -f -- "$log"
  [ -n "${snap:-}" ] && rm -rf -- "$snap"
  rm -f -- "$bench_dir"/*."$BENCH_SHARED_TAG"
  [ "$made_dir" = 1 ] && rmdir -- "$bench_dir" 2>/dev/null
  return 0
}
trap cleanup EXIT

failed=()
start=$(date +%s)
for s in compare_fio.sh nop.sh memory.sh modes.sh; do
  echo "######## bench/$s"
  "$here/$s" "$@" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || failed+=("$s (exit $rc)")
  echo
done

echo "######## summary ($(( $(date +%s) - start )) s)"
grep -E '^(PASS|FAIL)  ' "$log" || true
echo
sed -n '/^== mode matrix: medians/,$p' "$log"
if [ ${#failed[@]} -gt 0 ]; then
  echo "did not run to the end: ${failed[*]}" >&2
  exit 2
fi
