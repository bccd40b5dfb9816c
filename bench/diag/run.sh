#!/bin/bash
# one diagnostic run: stat (debug build) + trace + bench; dumps the debug map
set -u
B=${IOACCT:-build/release/ioacct}
O=${1:-/tmp/sdbg/out}; RATE=${2:-500}; ACCT=${3:-full}
mkdir -p $O
[ -f /var/tmp/sdbg.img ] || dd if=/dev/urandom of=/var/tmp/sdbg.img bs=1M count=256 status=none
LO=$(losetup -f --show /var/tmp/sdbg.img); losetup --direct-io=on $LO
N=$(basename $LO); MAJ=$((0x$(stat -c %t $LO))); MIN=$((0x$(stat -c %T $LO)))
T=/sys/kernel/tracing/instances/sdbg; rmdir $T 2>/dev/null; mkdir $T
echo mono > $T/trace_clock; echo 32768 > $T/buffer_size_kb
for e in block_io_start block_io_done; do echo "dev == $(( (MAJ<<20)|MIN ))" > $T/events/block/$e/filter; echo 1 > $T/events/block/$e/enable; done
$B stat --format json -y 6 1 $N > $O/stat.json 2>$O/stat.err &
SP=$!
sleep 1.5; echo 1 > $T/tracing_on
$B bench --rate-iops $RATE --iodepth 1 --runtime 3s --acct $ACCT $LO > $O/bench.out 2>&1
sleep 0.5
bpftool prog show > $O/progs.txt; bpftool -j map dump name dbg > $O/dbg.json; bpftool -j map dump name dbg2 > $O/dbg2.json
wait $SP
echo 0 > $T/tracing_on; cat $T/trace > $O/trace.txt; rmdir $T
grep steal /proc/stat >/dev/null; losetup -d $LO
echo done $O
