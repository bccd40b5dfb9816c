# shellcheck shell=bash
# Sourced by bench/*.sh: settings, tool checks, the shared test file, helpers.
#
# Settings (environment):
#   IOACCT     ioacct binary            (default: build/release/ioacct of this checkout)
#   FIO        fio binary               (default: fio)
#   BENCH_DIR  where test files go      (default: /var/tmp/ioacct-bench; a first argument overrides it)
#   RUNTIME    measured time per run    (default: 5s; a duration with a unit, passed to both tools)
#   REPS       interleaved repetitions  (default: 3)
#   OUT_DIR    keep every run's JSON here (default: a temporary folder, removed at exit)

BENCH_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_SRC/.." && pwd)
IOACCT=${IOACCT:-$REPO/build/release/ioacct}
FIO=${FIO:-fio}
BENCH_DIR=${1:-${BENCH_DIR:-/var/tmp/ioacct-bench}}
RUNTIME=${RUNTIME:-5s}
REPS=${REPS:-3}
PY=${PYTHON:-python3}
BL="$PY $BENCH_SRC/benchlib.py"

die() { echo "$(basename "$0"): error: $*" >&2; exit 2; }

need_ioacct() {
  [ -x "$IOACCT" ] || die "$IOACCT not found; build it with: (cd $REPO && cmake --preset release && cmake --build --preset release --target ioacct), or set IOACCT="
}
need_fio() {
  command -v "$FIO" >/dev/null || die "fio not found (apt-get install fio), or set FIO="
}
command -v "$PY" >/dev/null || die "python3 not found"
[[ "$REPS" =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive integer, not '$REPS'"
[[ "$RUNTIME" =~ ^[0-9]+(ms|s|m)$ ]] || die "RUNTIME must be a duration like 5s, 500ms or 1m, not '$RUNTIME'"

# Everything this script creates, removed by the EXIT trap.
_CLEANUP_FILES=()
_MADE_BENCH_DIR=0
_TMP_OUT=""
_cleanup() {
  local f
  for f in "${_CLEANUP_FILES[@]}"; do rm -f -- "$f"; done
  [ "$_MADE_BENCH_DIR" = 1 ] && rmdir -- "$BENCH_DIR" 2>/dev/null
  [ -n "$_TMP_OUT" ] && rm -rf -- "$_TMP_OUT"
  return 0
}
trap _cleanup EXIT
trap 'exit 130' INT TERM

if [ -n "${OUT_DIR:-}" ]; then
  mkdir -p -- "$OUT_DIR" || die "cannot create OUT_DIR $OUT_DIR"
else
  _TMP_OUT=$(mktemp -d "${TMPDIR:-/tmp}/ioacct-bench-out.XXXXXX")
  OUT_DIR=$_TMP_OUT
fi

# make_test_file NAME SIZE_MIB : sets TEST_FILE to a new file of random data,
# synced to disk, removed at exit.
# With BENCH_SHARED_TAG set (run_all.sh sets it), the file is $BENCH_DIR/NAME-SIZE_MIB.TAG
# instead: a later script reuses it, and whoever set the tag removes it.
make_test_file() {
  local name=$1 mib=$2 path
  if [ ! -d "$BENCH_DIR" ]; then
    mkdir -p -- "$BENCH_DIR" || die "cannot create $BENCH_DIR"
    _MADE_BENCH_DIR=1
  fi
  if [ -n "${BENCH_SHARED_TAG:-}" ]; then
    path=$BENCH_DIR/$name-$mib.$BENCH_SHARED_TAG
    if [ -f "$path" ] && [ "$(stat -c %s -- "$path")" = $((mib * 1048576)) ]; then
      echo "# reusing $path ($mib MiB, made by an earlier script of this run)"
      TEST_FILE=$path
      return 0
    fi
    echo "# creating $path ($mib MiB of random data; kept for the next scripts of this run)"
    dd if=/dev/urandom of="$path" bs=1M count="$mib" iflag=fullblock conv=fsync status=none \
      || { rm -f -- "$path"; die "cannot write $path"; }
    _MADE_BENCH_DIR=0   # run_all.sh removes the directory
    TEST_FILE=$path
    return 0
  fi
  path=$BENCH_DIR/$name.$$
  _CLEANUP_FILES+=("$path")
  echo "# creating $path ($mib MiB of random data)"
  dd if=/dev/urandom of="$path" bs=1M count="$mib" iflag=fullblock conv=fsync status=none \
    || die "cannot write $path"
  # shellcheck disable=SC2034  # used by the scripts that source this file
  TEST_FILE=$path
}

# Read the file once with O_DIRECT so the host cache behind the VM's disk is warm.
warm_direct() { dd if="$1" of=/dev/null bs=1M iflag=direct status=none || die "cannot read $1 with O_DIRECT"; }
# Read the file once through the page cache so buffered runs are page-cache hot.
warm_cached() { cat -- "$1" >/dev/null || die "cannot read $1"; }

# run_ioacct OUT.json ARGS... : ioacct bench --format json ARGS, stderr kept beside OUT.
run_ioacct() {
  local out=$1; shift
  echo "+ $(basename "$IOACCT") bench --format json $*" >"$out.cmd"
  if ! "$IOACCT" bench --format json "$@" >"$out" 2>"$out.err"; then
    cat "$out.err" >&2
    die "ioacct failed: $IOACCT bench --format json $*"
  fi
}

# run_fio OUT.json ARGS... : fio --output-format=json ARGS.
run_fio() {
  local out=$1; shift
  echo "+ fio --output-format=json $*" >"$out.cmd"
  if ! "$FIO" --output-format=json "$@" >"$out" 2>"$out.err"; then
    cat "$out.err" "$out" >&2
    die "fio failed: $FIO --output-format=json $*"
  fi
}

# add_row ROWS SCENARIO TOOL REP ioacct|fio OUT.json : append the run's figures
# to ROWS and print them as one line.
add_row() {
  local rows=$1 scen=$2 tool=$3 rep=$4 kind=$5 json=$6 figs iops cpu p50 p99
  figs=$($BL "$kind" "$json") || die "cannot read $kind JSON $json"
  echo "$scen $tool $rep $figs" >>"$rows"
  read -r iops cpu p50 p99 <<<"$figs"
  printf '  rep %d  %-16s %12s IOPS  %7s us CPU/IO  p50 %7s us  p99 %7s us\n' "$rep" "$tool" \
    "$($BL fmt "$iops" iops)" "$($BL fmt "$cpu")" "$($BL fmt "$p50")" "$($BL fmt "$p99")"
}

# start_empty TRACEPOINT... : an empty BPF program (ioacct_empty) on the
# tracepoints, held until stop_empty. With bpf_stats on, its run time per run
# is what bpf_stats itself adds to a program's (two clock reads and the
# call), to be taken off the figure of programs on the same tracepoints
# (prog_runs name:ioacct_empty reads it).
# Plain python, ctypes.
EMPTY_PID=""
start_empty() {
  $PY - "$@" <<'PYEOF' &
import ctypes, os, signal, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_bpf = 321 if os.uname().machine == "x86_64" else 280
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(SYS_bpf, cmd, buf, 128)
    if r < 0: sys.exit(f"bpf({cmd}): {os.strerror(ctypes.get_errno())}")
    return r
insns = struct.pack("<BBhiBBhi", 0xb7, 0, 0, 0, 0x95, 0, 0, 0)  # r0 = 0; exit
ibuf, lic = ctypes.create_string_buffer(insns), ctypes.create_string_buffer(b"GPL")
attr = struct.pack("<IIQQIIQII16s", 17, 2, ctypes.addressof(ibuf), ctypes.addressof(lic), 0, 0, 0, 0, 0, b"ioacct_empty")
prog = bpf(5, attr)  # BPF_PROG_LOAD, BPF_PROG_TYPE_RAW_TRACEPOINT
names = [ctypes.create_string_buffer(n.encode()) for n in sys.argv[1:]]
links = [bpf(17, struct.pack("<QI", ctypes.addressof(n), prog)) for n in names]  # BPF_RAW_TRACEPOINT_OPEN
signal.sigwait([signal.SIGTERM, signal.SIGINT])
PYEOF
  EMPTY_PID=$!
  for _ in $(seq 100); do [ -n "$(bpftool prog show name ioacct_empty 2>/dev/null)" ] && break; sleep 0.05; done
}
stop_empty() {
  [ -n "$EMPTY_PID" ] || return 0
  kill "$EMPTY_PID" 2>/dev/null
  wait "$EMPTY_PID" 2>/dev/null || true
  EMPTY_PID=""
}

# prog_runs PID|name:NAME : "run_time_ns run_cnt" summed over a process's
# programs, or over the programs called NAME.
prog_runs() {
  local ids
  case $1 in
    name:*) ids=$(bpftool prog show name "${1#name:}" 2>/dev/null | awk -F: '/^[0-9]+:/ {print $1}' || true) ;;
    *) ids=$( (cat /proc/"$1"/fdinfo/* 2>/dev/null || true) | awk '/^prog_id:/ {print $2}' | sort -u) ;;
  esac
  local t=0 c=0 id line
  for id in $ids; do
    line=$(bpftool prog show id "$id" 2>/dev/null | sed -n 1p)
    t=$((t + $(awk '{for (i = 1; i < NF; i++) if ($i == "run_time_ns") print $(i+1)}' <<<"$line" | grep . || echo 0)))
    c=$((c + $(awk '{for (i = 1; i < NF; i++) if ($i == "run_cnt") print $(i+1)}' <<<"$line" | grep . || echo 0)))
  done
  echo "$t $c"
}

print_context() {
  echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC')  host $(uname -n)  $(uname -sr)  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# ioacct: $IOACCT ($("$IOACCT" --version 2>/dev/null | head -1 || true); sha256 $(sha256sum <"$IOACCT" | cut -c1-12), built $(date -u -r "$IOACCT" '+%Y-%m-%d %H:%M:%S UTC'))"
  command -v "$FIO" >/dev/null && echo "# fio: $("$FIO" --version)"
  echo "# RUNTIME=$RUNTIME REPS=$REPS BENCH_DIR=$BENCH_DIR OUT_DIR=${OUT_DIR}${_TMP_OUT:+ (temporary)}"
}
