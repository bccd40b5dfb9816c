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

print_context() {
  echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC')  host $(uname -n)  $(uname -sr)  $(nproc) CPUs  load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# ioacct: $IOACCT ($("$IOACCT" --version 2>/dev/null | head -1 || true); sha256 $(sha256sum <"$IOACCT" | cut -c1-12), built $(date -u -r "$IOACCT" '+%Y-%m-%d %H:%M:%S UTC'))"
  command -v "$FIO" >/dev/null && echo "# fio: $("$FIO" --version)"
  echo "# RUNTIME=$RUNTIME REPS=$REPS BENCH_DIR=$BENCH_DIR OUT_DIR=${OUT_DIR}${_TMP_OUT:+ (temporary)}"
}
