#!/usr/bin/env bash
# d) ioacct's resident size must not grow with the length of a run: 4k randread,
#    O_DIRECT, depth 32 on the same file for MEM_SHORT and for MEM_LONG; PASS when
#    the long run's peak RSS is within max(5 %, 256 KiB) of the short run's.
#    Peak RSS is /usr/bin/time -v's "Maximum resident set size" (Debian package
#    `time`); without it, the process's VmHWM sampled from /proc every 100 ms.
#
# Usage: bench/memory.sh [DIR]      (DIR: where the test file goes)
# Environment: BENCH_DIR IOACCT OUT_DIR (see lib.sh), and
#   MEM_SHORT   duration of the short run   (default 10s)
#   MEM_LONG    duration of the long run    (default 60s)
#   DIRECT_MIB  size of the test file, MiB  (default 1024)
#   RSS_METHOD  time or proc                (default: time when /usr/bin/time exists)
# RUNTIME and REPS are not used here.
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MEM_SHORT=${MEM_SHORT:-10s}
MEM_LONG=${MEM_LONG:-60s}
DIRECT_MIB=${DIRECT_MIB:-1024}
if [ -z "${RSS_METHOD:-}" ]; then
  if [ -x /usr/bin/time ]; then RSS_METHOD="time"; else RSS_METHOD="proc"; fi
fi
[[ "$RSS_METHOD" == time || "$RSS_METHOD" == proc ]] || die "RSS_METHOD must be time or proc"
need_ioacct
print_context

# peak_rss_kib OUT.json ARGS... : run ioacct bench --format json ARGS, print its peak RSS in KiB.
peak_rss_kib() {
  local out=$1; shift
  local cmd=("$IOACCT" bench --format json "$@")
  if [ "$RSS_METHOD" = time ]; then
    /usr/bin/time -v -o "$out.time" "${cmd[@]}" >"$out" 2>"$out.err" \
      || { cat "$out.err" "$out.time" >&2; die "ioacct failed: ${cmd[*]}"; }
    awk -F': *' '/Maximum resident set size/ {print $2}' "$out.time"
  else
    "${cmd[@]}" >"$out" 2>"$out.err" &
    local pid=$! hwm=0 v
    while kill -0 "$pid" 2>/dev/null; do
      v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$v" ] && hwm=$v
      sleep 0.1
    done
    wait "$pid" || { cat "$out.err" >&2; die "ioacct failed: ${cmd[*]}"; }
    echo "$hwm"
  fi
}

make_test_file direct "$DIRECT_MIB"
FILE=$TEST_FILE
warm_direct "$FILE"
ARGS=(--direct --rw randread --bs 4k --iodepth 32 "$FILE")
echo
echo "== d) peak RSS vs run length: ioacct bench --format json --runtime {$MEM_SHORT,$MEM_LONG} ${ARGS[*]}"
[ "$RSS_METHOD" = time ] && echo "   measured with /usr/bin/time -v" || echo "   measured by sampling /proc/PID/status VmHWM every 100 ms"
declare -A RSS
for d in "$MEM_SHORT" "$MEM_LONG"; do
  RSS[$d]=$(peak_rss_kib "$OUT_DIR/d.ioacct.$d.json" --runtime "$d" "${ARGS[@]}")
  [[ "${RSS[$d]}" =~ ^[0-9]+$ ]] || die "could not read the peak RSS of the $d run"
  read -r iops _ <<<"$($BL ioacct "$OUT_DIR/d.ioacct.$d.json")"
  ios=$($BL get "$OUT_DIR/d.ioacct.$d.json" results.ios)
  printf '  runtime %-6s peak RSS %8d KiB   (%s IOPS, %s I/Os)\n' "$d" "${RSS[$d]}" "$($BL fmt "$iops" iops)" \
    "$($BL fmt "$ios" iops)"
done
short=${RSS[$MEM_SHORT]} long=${RSS[$MEM_LONG]}
growth=$((long - short))
allowed=$(( short * 5 / 100 > 256 ? short * 5 / 100 : 256 ))
$BL check "d  peak RSS growth $MEM_SHORT -> $MEM_LONG, KiB" "$growth" "<=" "$allowed" \
  "($short KiB -> $long KiB, $($PY -c "print(f'{$long / $short:.3f}')")x; allowed max(5 %, 256 KiB))"
