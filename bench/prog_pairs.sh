#!/usr/bin/env bash
# Two builds' eBPF programs, side by side: `ioacct stat --by BY` of each build
# attached at once to one loop device over tmpfs while fio does 4k random
# reads (O_DIRECT, io_uring) at each depth; each program's bpf_stats run time
# per run, per build, from the same I/O. Separate runs of stat_cost.sh (g3)
# differ by more than a clock read from round to round on this VM; two
# builds watching the same requests do not. The first program attached to a
# tracepoint runs first and pays the cache misses (~100 ns a run more at
# depth 1), so the order alternates per round and the verdict is the mean
# over rounds; a program whose code is the same in both builds is the
# control.
#
# Usage: OLD=/path/to/old/ioacct bench/prog_pairs.sh     (as root)
# Environment: OLD (required), IOACCT (the new build; lib.sh's default),
#   BY (process: every attribution program; cgroup), DEPTHS ("1 32"),
#   RUNTIME (4s), REPS (6), LOOP_MIB (512), FIO.
# Exit status: 0 when every round ran, 2 when a step failed.
set -euo pipefail
RUNTIME=${RUNTIME:-4s}
REPS=${REPS:-6}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OLD=${OLD:-}
BY=${BY:-process}
DEPTHS=${DEPTHS:-1 32}
LOOP_MIB=${LOOP_MIB:-512}
need_ioacct
need_fio
[ -x "$OLD" ] || die "OLD must name the other build's ioacct binary (OLD=/path/to/ioacct)"
[ "$(id -u)" = 0 ] || die "needs root (a loop device, BPF programs)"
command -v bpftool >/dev/null || die "bpftool not found (apt-get install bpftool)"
case $BY in process | cgroup) ;; *) die "BY must be process or cgroup, not '$BY'" ;; esac
print_context
echo "# OLD: $OLD (sha256 $(sha256sum <"$OLD" | cut -c1-12))  BY=$BY DEPTHS=$DEPTHS"

SHM=$(mktemp -d /dev/shm/ioacct-prog-pairs.XXXXXX)
LOOP=""
PIDS=()
STATS_WERE=$(cat /proc/sys/kernel/bpf_stats_enabled)
finish() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  echo "$STATS_WERE" >/proc/sys/kernel/bpf_stats_enabled
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf -- "$SHM"
  _cleanup
}
trap finish EXIT

truncate -s "${LOOP_MIB}M" "$SHM/dev.img"
LOOP=$(losetup --find --show -- "$SHM/dev.img") || die "losetup failed"
dd if=/dev/zero of="$LOOP" bs=1M count="$LOOP_MIB" oflag=direct status=none
echo 1 >/proc/sys/kernel/bpf_stats_enabled

# snap PID... : "pid name run_time_ns run_cnt" for each program the
# processes hold (by their descriptors' prog_id).
snap() {
  bpftool -j prog show | "$PY" -c '
import glob, json, sys
owner = {}
for pid in sys.argv[1:]:
    for f in glob.glob("/proc/%s/fdinfo/*" % pid):
        try:
            for line in open(f):
                if line.startswith("prog_id:"):
                    owner[int(line.split()[1])] = pid
        except OSError:
            pass
for p in json.load(sys.stdin):
    if p["id"] in owner:
        print(owner[p["id"]], p.get("name", "?"), p.get("run_time_ns", 0), p.get("run_cnt", 0))' "$@"
}

ROWS=$SHM/rows
secs=${RUNTIME%s}
[[ "$RUNTIME" == *s && "$secs" =~ ^[0-9]+$ ]] || die "RUNTIME must be whole seconds here (4s), not '$RUNTIME'"
for rep in $(seq 1 "$REPS"); do
  for depth in $DEPTHS; do
    if ((rep % 2)); then order=("$OLD" "$IOACCT") names=(old new); else order=("$IOACCT" "$OLD") names=(new old); fi
    PIDS=()
    for b in "${order[@]}"; do
      "$b" stat -y --by "$BY" 1 "${LOOP#/dev/}" >/dev/null 2>"$SHM/stat.err" &
      PIDS+=($!)
      sleep 0.7
    done
    sleep 1
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null || die "a stat run ended early: $(cat "$SHM/stat.err")"; done
    snap "${PIDS[@]}" >"$SHM/a"
    "$FIO" --name=pairs --filename="$LOOP" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
      --iodepth="$depth" --time_based --runtime="$secs" --output=/dev/null || die "fio failed"
    snap "${PIDS[@]}" >"$SHM/b"
    started=("${PIDS[@]}")
    kill -INT "${PIDS[@]}"
    wait "${PIDS[@]}" 2>/dev/null || true
    PIDS=()
    "$PY" - "$SHM/a" "$SHM/b" "$rep" "$depth" "${started[0]}" "${names[0]}" "${started[1]}" "${names[1]}" >>"$ROWS" <<'PY'
import sys
a, b, rep, depth, pid1, first, pid2, second = sys.argv[1:]
def load(f):
    return {(r[0], r[1]): (int(r[2]), int(r[3])) for r in (l.split() for l in open(f))}
sa, sb = load(a), load(b)
for pid, build in ((pid1, first), (pid2, second)):
    for (p, name), (t, c) in sb.items():
        if p != pid or (p, name) not in sa:
            continue
        dt, dc = t - sa[(p, name)][0], c - sa[(p, name)][1]
        if dc > 0:
            print(rep, depth, build, name, dt, dc, first)
PY
    tail -n 20 "$ROWS" | awk -v r="$rep" -v d="$depth" '$1 == r && $2 == d && $6 > 10000 {printf "  rep %s depth %-3s %s %-15s %7.1f ns a run (%d runs; %s attached first)\n", r, d, $3, $4, $5 / $6, $6, $7}'
  done
done

echo
echo "== the mean over rounds of each program's ns per run (the order alternates per round)"
"$PY" - "$ROWS" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    rep, depth, build, name, t, c, _ = line.split()
    if int(c) > 10000:  # per-I/O programs; the reader's sweeps run ~10 times a second
        runs[(int(depth), name, build)].append(int(t) / int(c))
print("| depth | program | old ns a run | new ns a run | new - old | rounds |")
print("|---|---|---|---|---|---|")
for depth, name in sorted({(d, n) for d, n, _ in runs}):
    o, n = runs.get((depth, name, "old"), []), runs.get((depth, name, "new"), [])
    if o and n:
        print("| %d | %s | %.0f | %.0f | %+.0f | %d |" % (depth, name, statistics.mean(o), statistics.mean(n),
                                                     statistics.mean(n) - statistics.mean(o), min(len(o), len(n))))
PY
