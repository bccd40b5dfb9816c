#!/usr/bin/env bash
# m) `ioacct merge` at fleet scale: HOSTS (1000) hosts' results, made from
#    REAL (20) real bench runs (RUNTIME each, 2 threads, a time series every
#    100 ms, on a file in BENCH_DIR), each run's JSON taken by HOSTS/REAL
#    hosts under names of their own (host name, host tag, boot id), then
#    merged REPS (3) times with /usr/bin/time: the wall time and the peak
#    RSS. Targets: m1 wall ≤ 2 s, m2 peak RSS ≤ 300 MB (the medians). The
#    merged result is checked too: HOSTS hosts, its I/Os the inputs' sum.
#
# Usage: bench/merge_scale.sh [BENCH_DIR]
# Environment: HOSTS (1000) REAL (20) RUNTIME (2s) REPS (3) IOACCT OUT_DIR (see lib.sh)
# Exit status: 0 when everything ran (PASS or FAIL), 2 when something failed.
set -euo pipefail
RUNTIME=${RUNTIME:-2s}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HOSTS=${HOSTS:-1000}
REAL=${REAL:-20}
[[ "$HOSTS" =~ ^[1-9][0-9]*$ ]] || die "HOSTS must be a positive integer, not '$HOSTS'"
[[ "$REAL" =~ ^[1-9][0-9]*$ ]] || die "REAL must be a positive integer, not '$REAL'"
need_ioacct
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
trap _cleanup EXIT
print_context
echo "# HOSTS=$HOSTS REAL=$REAL"

mkdir -p -- "$BENCH_DIR" "$OUT_DIR/real" "$OUT_DIR/hosts"
FILE="$BENCH_DIR/merge-scale.$$"
_CLEANUP_FILES+=("$FILE")
dd if=/dev/urandom of="$FILE" bs=1M count=64 status=none || die "cannot write $FILE"
for i in $(seq 0 $((REAL - 1))); do
  "$IOACCT" bench "$FILE" --size 64m --runtime "$RUNTIME" --threads 2 --log-interval 100ms --tag "run=$i" \
    --format json -o "$OUT_DIR/real/$i.json" 2>"$OUT_DIR/bench.err" || die "bench failed: $(cat "$OUT_DIR/bench.err")"
done

# Each host is a real run's JSON under a host name, tag and boot id of its
# own, so that merge takes them for HOSTS machines; its wall-clock stamps
# shifted as if every run had been given one --start-at (the first run's).
$PY - "$OUT_DIR" "$HOSTS" "$REAL" <<'PYEOF'
import json, sys, uuid
out, hosts, real = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
runs = [json.load(open(f"{out}/real/{i}.json")) for i in range(real)]
start = runs[0]["results"]["window_start_unix_ns"]
for d in runs:
    r = d["results"]
    shift = start - r["window_start_unix_ns"]
    r["window_start_unix_ns"] += shift
    r["window_end_unix_ns"] += shift
    for s in (r.get("series") or {}).get("samples", []):
        s["end_unix_ns"] += shift
for h in range(hosts):
    d = runs[h % real]
    d["context"]["host"] = f"client-{h:04d}"
    d["context"]["tags"]["host"] = f"client-{h:04d}"
    d["context"]["boot_id"] = str(uuid.UUID(int=h + 1))
    with open(f"{out}/hosts/client-{h:04d}.json", "w") as f:
        json.dump(d, f, indent=2)
PYEOF
echo "# inputs: $(find "$OUT_DIR/hosts" -name "*.json" | wc -l) files, $(du -sk "$OUT_DIR/hosts" | cut -f1) KiB; one is $(stat -c %s "$OUT_DIR/hosts/client-0000.json") bytes"

walls=(); rss=()
for r in $(seq 1 "$REPS"); do
  /usr/bin/time -f '%e %M' -o "$OUT_DIR/time.$r" "$IOACCT" merge --format json -o "$OUT_DIR/merged.json" \
    "$OUT_DIR/hosts" 2>"$OUT_DIR/merge.err" || die "merge failed: $(cat "$OUT_DIR/merge.err")"
  read -r wall kib <"$OUT_DIR/time.$r"
  walls+=("$wall"); rss+=("$kib")
  echo "run $r: wall ${wall} s, peak RSS $((kib / 1024)) MiB"
done
sed 's/^/# /' "$OUT_DIR/merge.err"

$PY - "$OUT_DIR" "$HOSTS" "${walls[*]}" "${rss[*]}" <<'PYEOF'
import glob, json, statistics, sys
out, hosts = sys.argv[1], int(sys.argv[2])
walls = [float(x) for x in sys.argv[3].split()]
rss = [int(x) / 1024 for x in sys.argv[4].split()]
m = json.load(open(f"{out}/merged.json"))
ios = sum(json.load(open(f))["results"]["ios"] for f in glob.glob(f"{out}/hosts/*.json"))
if len(m["merge"]["hosts"]) != hosts or m["results"]["ios"] != ios:
    sys.exit(f"merge_scale: the merged result holds {len(m['merge']['hosts'])} hosts and {m['results']['ios']} I/Os, "
             f"not {hosts} and {ios}")
w, r = statistics.median(walls), statistics.median(rss)
print(f"merged {hosts} hosts, {ios} I/Os, p99 {m['results']['latency_ns']['p99']} ns")
print(f"m1 wall {w:.2f} s (median of {len(walls)}) <= 2 s: {'PASS' if w <= 2 else 'FAIL'}")
print(f"m2 peak RSS {r:.0f} MiB (median) <= 300 MB (286 MiB): {'PASS' if r * 1048576 <= 300e6 else 'FAIL'}")
PYEOF
