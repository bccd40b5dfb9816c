#!/usr/bin/env bash
# Builds prog_cost and runs fio (4k random reads, O_DIRECT, io_uring, depth DEPTH (32))
# for 8 s on a loop device over tmpfs while it is attached, with
# kernel.bpf_stats_enabled on for the run; prints each program's ns per run.
# As root; needs clang, bpftool, libbpf-dev, fio.
set -euo pipefail
cd "$(dirname "$0")"
B=$(mktemp -d)
S=$(mktemp -d /dev/shm/ioacct-prog-cost.XXXXXX)
OLD=$(sysctl -n kernel.bpf_stats_enabled)
L=""
trap 'sysctl -qw kernel.bpf_stats_enabled="$OLD"; [ -n "$L" ] && losetup -d "$L"; rm -rf "$B" "$S"' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$B/vmlinux.h"
clang -O2 -g -mcpu=v3 -target bpf -D__TARGET_ARCH_x86 -I"$B" -c prog_cost.bpf.c -o "$B/prog_cost.bpf.o"
bpftool gen skeleton "$B/prog_cost.bpf.o" >"$B/prog_cost.skel.h"
cc -O2 -I"$B" prog_cost.c -o "$B/prog_cost" -lbpf
truncate -s 1G "$S/backing"
L=$(losetup -f --show "$S/backing")
dd if=/dev/zero of="$L" bs=1M count=1024 oflag=direct status=none
sysctl -qw kernel.bpf_stats_enabled=1
"$B/prog_cost" 12 "${L#/dev/loop}" &
sleep 1
fio --name=x --filename="$L" --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth="${DEPTH:-32}" \
  --time_based --runtime=8s --output-format=terse >/dev/null
for n in $(bpftool prog show | awk '/name (s|d)[0-9]_/ {for (i = 1; i < NF; i++) if ($i == "name") print $(i+1)}' | sort); do
  bpftool prog show name "$n" | sed -n 1p |
    awk -v n="$n" '{for (i = 1; i < NF; i++) { if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) } printf "%-12s %6.0f ns per run\n", n, c ? t / c : 0}'
done
wait
