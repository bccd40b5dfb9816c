#!/usr/bin/env bash
# h) What a scrape of `ioacct export` costs: the exporter is started as a
#    fleet runs it (default devices, the exact busy tracker attached, every
#    scrape a fresh walk) and scraped SCRAPES times back to back with curl.
#    Per scrape: the walk's own time (ioacct_scrape_duration_seconds: the
#    tracker's maps, /proc/diskstats, the /proc/*/fd walk), the exporter's
#    CPU (utime+stime from /proc/PID/stat over all scrapes), the response
#    size, and the exporter's RSS after the scrapes. At a 1 s scrape interval
#    the CPU per scrape is the share of one CPU export costs.
#    The walk grows with the number of processes and fds on the machine
#    (printed), so compare runs on the same machine only.
#
# Usage: bench/export_cost.sh            (as root, for the tracker)
# Environment: SCRAPES (200) IOACCT OUT_DIR (see lib.sh); EXPORT_ARGS: more flags for ioacct export,
#   e.g. EXPORT_ARGS=--per-process or EXPORT_ARGS=--no-bpf
# Exit status: 0 when everything ran, 2 when something failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SCRAPES=${SCRAPES:-200}
[[ "$SCRAPES" =~ ^[1-9][0-9]*$ ]] || die "SCRAPES must be a positive integer, not '$SCRAPES'"
need_ioacct
command -v curl >/dev/null || die "curl not found (apt-get install curl)"
print_context
echo "# SCRAPES=$SCRAPES EXPORT_ARGS=${EXPORT_ARGS:-}  processes $(ls -d /proc/[0-9]* 2>/dev/null | wc -l)  open fds $(awk '{print $1}' /proc/sys/fs/file-nr)"

EXPORT_PID=""
finish() {
  [ -n "$EXPORT_PID" ] && kill "$EXPORT_PID" 2>/dev/null && wait "$EXPORT_PID" 2>/dev/null
  _cleanup
}
trap finish EXIT
# shellcheck disable=SC2086  # EXPORT_ARGS is a list of flags
"$IOACCT" export --listen 127.0.0.1:0 ${EXPORT_ARGS:-} 2>"$OUT_DIR/export.err" &
EXPORT_PID=$!
for _ in $(seq 100); do grep -q 'serving' "$OUT_DIR/export.err" && break; sleep 0.1; done
PORT=$(sed -n 's/.*serving https\{0,1\}:\/\/[^ ]*:\([0-9]*\)\/metrics.*/\1/p' "$OUT_DIR/export.err")
[ -n "$PORT" ] || die "export did not start: $(cat "$OUT_DIR/export.err")"
sed 's/^/# /' "$OUT_DIR/export.err"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$EXPORT_PID/stat"; }
curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics"  # the first walk's allocations
t0=$(cpu_ticks)
: >"$OUT_DIR/walks"
for _ in $(seq "$SCRAPES"); do
  curl -s "http://127.0.0.1:$PORT/metrics" >"$OUT_DIR/scrape.txt"
  sed -n 's/^ioacct_scrape_duration_seconds //p' "$OUT_DIR/scrape.txt" >>"$OUT_DIR/walks"
done
t1=$(cpu_ticks)
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$EXPORT_PID/status")
bytes=$(wc -c <"$OUT_DIR/scrape.txt")
series=$(grep -vc '^#' "$OUT_DIR/scrape.txt")

$PY - "$OUT_DIR/walks" "$t0" "$t1" "$(getconf CLK_TCK)" "$SCRAPES" "$rss" "$bytes" "$series" <<'EOF'
import statistics, sys
walks = sorted(float(x) for x in open(sys.argv[1]) if x.strip())
t0, t1, hz, n, rss, size, series = (float(a) for a in sys.argv[2:])
q = lambda p: walks[min(len(walks) - 1, int(p * len(walks)))]
print("| figure | value |")
print("|---|---|")
print(f"| walk per scrape (ioacct_scrape_duration_seconds), median / p90 / max | {statistics.median(walks)*1e3:.2f} / {q(0.9)*1e3:.2f} / {walks[-1]*1e3:.2f} ms |")
print(f"| exporter CPU per scrape (utime+stime over {int(n)} scrapes) | {(t1 - t0) / hz / n * 1e3:.2f} ms |")
print(f"| at one scrape a second: share of one CPU | {(t1 - t0) / hz / n * 100:.2f}% |")
print(f"| response | {int(size)} bytes, {int(series)} samples |")
print(f"| exporter RSS after the scrapes | {rss / 1024:.1f} MiB |")
EOF
