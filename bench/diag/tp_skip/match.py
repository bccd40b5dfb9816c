#!/usr/bin/env python3
"""Matches each block_io_done in trace.txt (tracefs) with the BPF program's log
(bpf.txt): same sector, within 2 ms. Prints, per task the event ran on top of
(tracefs's comm-pid column), how many events tracefs saw and how many of them
no BPF program ran for. Run in the folder tp_skip wrote its files to."""
import bisect
import collections
import re

rx = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\] (\S+)\s+(\d+)\.(\d+): block_io_done: \S+ \S+ \d+ \(.*?\) (\d+) \+")
seen = collections.defaultdict(list)
for line in open("bpf.txt"):
    t, sector = map(int, line.split())
    seen[sector].append(t)
for v in seen.values():
    v.sort()
total, missed = collections.Counter(), collections.Counter()
for line in open("trace.txt"):
    m = rx.search(line)
    if not m:
        continue
    t = int(m.group(5)) * 10**9 + int(m.group(6)) * 1000
    task = f"{m.group(1).strip()}/{m.group(2)}"
    v = seen.get(int(m.group(7)), [])
    i = bisect.bisect_left(v, t - 2_000_000)
    total[task] += 1
    if not (i < len(v) and v[i] <= t + 2_000_000):
        missed[task] += 1
print(f"block_io_done seen by tracefs: {sum(total.values())}, by no BPF program: {sum(missed.values())}")
print("on top of task (comm/pid)           seen by tracefs   no BPF program")
for task, n in sorted(total.items(), key=lambda x: (-missed[x[0]], -x[1]))[:15]:
    print(f"  {task:32s} {n:15d} {missed[task]:16d}")
