#!/usr/bin/env bash
# Builds tp_skip and runs it for SECONDS (10) on DEVICE (vda) while LOAD runs
# beside it (4 KiB direct writes to a file in /var/tmp and a depth-8 random
# read loop with dd), then prints match.py's table. LOAD=none for a quiet run.
# As root; needs clang, bpftool, libbpf-dev, python3.
set -euo pipefail
cd "$(dirname "$0")"
DEV=${DEVICE:-vda}
SECS=${1:-10}
B=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$B" /var/tmp/ioacct-tp-skip' EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$B/vmlinux.h"
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$B" -c tp_skip.bpf.c -o "$B/tp_skip.bpf.o"
bpftool gen skeleton "$B/tp_skip.bpf.o" >"$B/tp_skip.skel.h"
cc -O2 -I"$B" tp_skip.c -o "$B/tp_skip" -lbpf
if [ "${LOAD:-on}" != none ]; then
  (while :; do dd if=/dev/zero of=/var/tmp/ioacct-tp-skip bs=4k count=20000 oflag=direct status=none; done) &
fi
(cd "$B" && ./tp_skip "$(cat /sys/class/block/"$DEV"/dev)" "$SECS" && python3 "$OLDPWD/match.py")
