#!/usr/bin/env python3
"""Helpers for the bench/*.sh scripts: read ioacct and fio JSON, take medians,
print ratios and PASS/FAIL lines. Standard library only.

  benchlib.py ioacct FILE.json        -> "iops cpu_us_per_io p50_us p99_us"
  benchlib.py fio FILE.json           -> the same four figures for fio's job 0
  benchlib.py ioacct-thread FILE.json -> the same, but CPU us/IO counts only the
                                         submitting threads (results.cpu.breakdown.
                                         submitters_s), like fio's RUSAGE_THREAD figure;
                                         "nan" when the build has no breakdown
  benchlib.py ioacct-job FILE.json NAME, benchlib.py fio-job FILE.json NAME
                                      -> the four figures of one job of a run with
                                         several (fio: its reads, writes, trims together)
  benchlib.py breakdown FILE.json     -> "submitters_us sq_threads_us iowq_us other_us",
                                         each CPU us per I/O ("nan" without a breakdown)
  benchlib.py table ROWS.tsv SCENARIO BASE PEER [PEER...]
                                      -> medians per tool and BASE/PEER ratios
  benchlib.py grid ROWS.tsv CELLS.tsv [EXTRA]
                                      -> one table, a row per cell (bench/modes.sh);
                                         CELLS.tsv lines: scenario<TAB>tool<TAB>label;
                                         EXTRA lines: scenario tool rep + `breakdown`
  benchlib.py ratio ROWS.tsv SCENARIO FIELD BASE PEER
                                      -> median(BASE.FIELD) / median(PEER.FIELD)
  benchlib.py median ROWS.tsv SCENARIO TOOL FIELD
  benchlib.py get FILE.json a.b.c     -> one value of a JSON file
  benchlib.py fmt VALUE [iops|ratio]  -> VALUE as the tables print it
  benchlib.py check NAME VALUE OP THRESHOLD [DETAIL]
                                      -> "PASS  NAME: ..." or "FAIL  NAME: ..."
  benchlib.py timed ioacct|fio|sol FILE.json TIME.txt
                                      -> "iops cpu_us_per_io p50_us p99_us" with CPU
                                         from /usr/bin/time -f "%e %U %S" (the whole
                                         process, start-up included) over every I/O
                                         the tool did (bench/sol.sh)
  benchlib.py spread ROWS.tsv SCENARIO BASE TOOL [TOOL...]
                                      -> medians with min-max, and each TOOL's ratio
                                         to BASE for IOPS and CPU us/IO (bench/sol.sh)
  benchlib.py paired ROWS.tsv SCENARIO FIELD A B ratio|delta
                                      -> "median lo hi coverage": A/B (or A - B) taken
                                         round by round, the median of those, and a
                                         distribution-free interval for that median
                                         (order statistics; coverage >= 0.95 where
                                         the rounds allow, else min-max and its own)
  benchlib.py pcheck NAME ROWS.tsv SCENARIO FIELD A B ratio|delta OP THRESHOLD
                                      -> check on the paired median, the interval in
                                         the detail, and a note where the target
                                         lies inside it (more rounds would decide)
  benchlib.py pceiling NAME ROWS.tsv SCENARIO A PEER,PEER,... MIN_IOPS MAX_CPU
                                      -> two checks of A against the ceiling, each PEER
                                         paired with A round by round: A's IOPS over the
                                         best loop's, the PEER A trails most (>= MIN_IOPS),
                                         and A's CPU us/IO over the cheapest PEER whose
                                         IOPS is within MIN_IOPS of the best's (<= MAX_CPU);
                                         with each round's-highest figures, biased, for
                                         the record (bench/sol.sh)
  benchlib.py bestloop ROWS.tsv SCENARIO A PEER,PEER,...
                                      -> pceiling's best loop: the PEER A trails most
  benchlib.py startup RUNTIME_S TIME.txt...
                                      -> "wall_ms cpu_ms wall_min wall_max cpu_min cpu_max":
                                         medians and ranges in ms, wall less RUNTIME_S

ROWS.tsv lines: scenario tool rep iops cpu_us p50_us p99_us ("nan" = not known).
Figures that a tool did not report (fio with --gtod_reduce=1 has no latency)
are "nan" and print as "-".
FIELD is one of iops, cpu_us, p50_us, p99_us, or the derived iops_per_cpu_s
(= 1e6 / cpu_us of each run: I/Os per second of CPU time; its median is taken over
the runs' values, not derived from the median of cpu_us).
"""
import json
import math
import statistics
import sys

FIELDS = ["iops", "cpu_us", "p50_us", "p99_us"]
LABELS = {"iops": "IOPS", "cpu_us": "CPU us/IO", "p50_us": "lat p50 us", "p99_us": "lat p99 us",
          "iops_per_cpu_s": "IOPS/CPU-s"}
TABLE_FIELDS = FIELDS + ["iops_per_cpu_s"]


def num(x):
    return float("nan") if x is None else float(x)


def fmt(v, field=None):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if field == "iops":
        return f"{v:,.0f}"
    if field == "ratio":
        return f"{v:.2f}x"
    if field is None and v.is_integer():
        return f"{int(v):,}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"


def ioacct_figures(path):
    r = json.load(open(path))["results"]
    lat = r.get("latency_ns") or {}
    cpu = r.get("cpu") or {}
    return [num(r.get("iops")), num(cpu.get("per_io_us")),
            num(lat.get("p50")) / 1e3, num(lat.get("p99")) / 1e3]


def ioacct_breakdown(path):
    """CPU us per I/O of each kind of thread, from results.cpu.breakdown (newer builds)."""
    r = json.load(open(path))["results"]
    b = (r.get("cpu") or {}).get("breakdown") or {}
    ios = r.get("ios") or 0
    keys = ["submitters_s", "sq_threads_s", "iowq_s", "other_s"]
    if not ios or not all(isinstance(b.get(k), (int, float)) for k in keys):
        return [float("nan")] * len(keys)
    return [b[k] * 1e6 / ios for k in keys]


def ioacct_thread_figures(path):
    f = ioacct_figures(path)
    f[1] = ioacct_breakdown(path)[0]
    return f


def fio_figures(path):
    text = open(path).read()
    # fio may print notes before the JSON object; start at the first "{".
    job = json.loads(text[text.index("{"):])["jobs"][0]
    rd = job["read"]
    runtime_s = job["job_runtime"] / 1e3
    ios = rd["total_ios"]
    cpu_us = (job["usr_cpu"] + job["sys_cpu"]) / 100 * runtime_s / ios * 1e6 if ios else float("nan")
    pct = (rd.get("clat_ns") or {}).get("percentile") or {}
    p50 = num(pct.get("50.000000")) / 1e3
    p99 = num(pct.get("99.000000")) / 1e3
    return [num(rd["iops"]), cpu_us, p50, p99]


def time_file(path):
    """(wall_s, cpu_s) from /usr/bin/time -f "%e %U %S" -o PATH (its last line)."""
    wall, user, sys_ = (float(x) for x in open(path).read().split()[-3:])
    return wall, user + sys_


def timed_figures(kind, json_path, time_path):
    _, cpu_s = time_file(time_path)
    if kind == "sol":
        j = json.load(open(json_path))
        iops, ios, p50, p99 = j["iops"], j["ios"], float("nan"), float("nan")
    elif kind == "fio":
        text = open(json_path).read()
        rd = json.loads(text[text.index("{"):])["jobs"][0]["read"]
        iops, ios = rd["iops"], rd["total_ios"]
        pct = (rd.get("clat_ns") or {}).get("percentile") or {}
        p50, p99 = num(pct.get("50.000000")) / 1e3, num(pct.get("99.000000")) / 1e3
    else:
        r = json.load(open(json_path))["results"]
        lat = r.get("latency_ns") or {}
        iops, ios = r["iops"], r["ios"]
        p50, p99 = num(lat.get("p50")) / 1e3, num(lat.get("p99")) / 1e3
    cpu_us = cpu_s / ios * 1e6 if ios else float("nan")
    return [num(iops), cpu_us, p50, p99]


def cmd_spread(rows_path, scenario, base, *tools):
    rows = load_rows(rows_path)

    def cell(tool, field):
        v = values_of(rows, scenario, tool, field)
        if not v:
            return "-"
        kind = "iops" if field == "iops" else None
        return f"{fmt(statistics.median(v), kind)} ({fmt(min(v), kind)}-{fmt(max(v), kind)})"

    n = len(values_of(rows, scenario, base, "iops"))
    W = max(len(t) for t in (base,) + tools)
    print(f"  medians (min-max) over {n} round(s); CPU is the whole process, start-up included, per I/O done")
    print(f"  {'':<{W}}  {'IOPS':>28}  {'CPU us/IO':>24}  {'IOPS ratio':>10}  {'CPU ratio':>9}")
    for tool in (base,) + tools:
        ri = ratio(median_of(rows, scenario, tool, "iops"), median_of(rows, scenario, base, "iops"))
        rc = ratio(median_of(rows, scenario, tool, "cpu_us"), median_of(rows, scenario, base, "cpu_us"))
        print(f"  {tool:<{W}}  {cell(tool, 'iops'):>28}  {cell(tool, 'cpu_us'):>24}  "
              f"{fmt(ri, 'ratio') if tool != base else '':>10}  {fmt(rc, 'ratio') if tool != base else '':>9}")
    print(f"  the same ratios pair by pair (each round's run against {base}'s of that round): median (interval)")
    for tool in tools:
        cells = []
        for field in ("iops", "cpu_us"):
            med, lo, hi, cov = paired(rows, scenario, field, tool, base, "ratio")
            cells.append(f"{fmt(med, 'ratio')} ({fmt(lo, 'ratio')}-{fmt(hi, 'ratio')}, {cov:.0%})")
        print(f"  {tool:<{W}}  {'IOPS ' + cells[0]:>30}  {'CPU ' + cells[1]:>30}")


def window_cpu_s(time_path):
    """The process's CPU inside the measured window (the JSON beside the .time
    file: results.cpu.breakdown.total_s, every thread's), or 0 without it."""
    try:
        r = json.load(open(time_path[: -len(".time")]))["results"]
        return float(r["cpu"]["breakdown"]["total_s"] or 0)
    except (OSError, ValueError, KeyError, TypeError):
        return 0.0


def cmd_startup(runtime_s, *paths):
    """Start-up of runs of `runtime_s`: wall less the runtime, and CPU less the
    CPU spent inside the window (the I/O's own, which a faster device makes
    larger), as medians and ranges; then the whole process's CPU (median).
    /usr/bin/time counts CPU in 10 ms steps and the window's CPU is exact, so
    a start-up under a step can come out below 0: it reads 0 then (the
    check is an upper bound, and 0 is its honest floor)."""
    runs = [time_file(p) for p in paths]
    walls = [(w - float(runtime_s)) * 1e3 for w, _ in runs]
    totals = [c * 1e3 for _, c in runs]
    cpus = [max(0.0, t - window_cpu_s(p) * 1e3) for t, p in zip(totals, paths)]
    print(f"{statistics.median(walls)!r} {statistics.median(cpus)!r} {min(walls)!r} {max(walls)!r} {min(cpus)!r} {max(cpus)!r} "
          f"{statistics.median(totals)!r}")


def ioacct_job_figures(path, name):
    """One job of a run with several (--job, --fio): jobs[].results."""
    for job in json.load(open(path)).get("jobs") or []:
        if job["name"] == name:
            r = job["results"]
            lat = r.get("latency_ns") or {}
            cpu = r.get("cpu") or {}
            return [num(r.get("iops")), num(cpu.get("per_io_us")),
                    num(lat.get("p50")) / 1e3, num(lat.get("p99")) / 1e3]
    sys.exit(f"benchlib.py: no job {name!r} in {path}")


def fio_job_figures(path, name):
    """One job of a fio run by its name: its reads, writes and trims together,
    and its numjobs clones together (fio lists each clone apart, under the
    job's name; ioacct reports the job). Percentiles are the first clone's
    first direction's."""
    text = open(path).read()
    clones = [j for j in json.loads(text[text.index("{"):])["jobs"] if j["jobname"] == name]
    if not clones:
        sys.exit(f"benchlib.py: no job {name!r} in {path}")
    iops = ios = cpu_s = 0.0
    for job in clones:
        dirs = [job[d] for d in ("read", "write", "trim") if job[d]["total_ios"]]
        iops += sum(d["iops"] for d in dirs)
        ios += sum(d["total_ios"] for d in dirs)
        cpu_s += (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1e3
    first = [clones[0][d] for d in ("read", "write", "trim") if clones[0][d]["total_ios"]]
    pct = ((first[0] if first else {}).get("clat_ns") or {}).get("percentile") or {}
    return [iops, cpu_s / ios * 1e6 if ios else float("nan"),
            num(pct.get("50.000000")) / 1e3, num(pct.get("99.000000")) / 1e3]


def load_rows(path):
    rows = []
    with open(path) as f:
        lines = f.readlines()
    for line in lines:
        parts = line.split()
        if len(parts) != 3 + len(FIELDS):
            continue
        rows.append((parts[0], parts[1], int(parts[2]), [float(x) for x in parts[3:]]))
    return rows


def values_of(rows, scenario, tool, field):
    if field == "iops_per_cpu_s":
        i = FIELDS.index("cpu_us")
        vals = [1e6 / f[i] for s, t, _, f in rows if s == scenario and t == tool and f[i] > 0]
    else:
        i = FIELDS.index(field)
        vals = [f[i] for s, t, _, f in rows if s == scenario and t == tool]
    return [v for v in vals if not math.isnan(v)]


def median_of(rows, scenario, tool, field):
    vals = values_of(rows, scenario, tool, field)
    return statistics.median(vals) if vals else float("nan")


def ratio(a, b):
    if math.isnan(a) or math.isnan(b) or b == 0:
        return float("nan")
    return a / b


def cmd_table(rows_path, scenario, base, *peers):
    rows = load_rows(rows_path)
    n = len({r for s, t, r, _ in rows if s == scenario and t == base})
    print(f"  medians over {n} repetition(s):")
    W = max(len(t) for t in (base,) + peers) + len(base) + 1
    header = f"  {'':<{W}}" + "".join(f"{LABELS[f]:>14}" for f in TABLE_FIELDS)
    print(header)
    for tool in (base,) + peers:
        print(f"  {tool:<{W}}" + "".join(f"{fmt(median_of(rows, scenario, tool, f), 'iops' if f == 'iops_per_cpu_s' else f):>14}"
                                         for f in TABLE_FIELDS))
    for peer in peers:
        cells = [fmt(ratio(median_of(rows, scenario, base, f), median_of(rows, scenario, peer, f)), "ratio")
                 for f in TABLE_FIELDS]
        print(f"  {base + '/' + peer:<{W}}" + "".join(f"{c:>14}" for c in cells))


def cmd_grid(rows_path, cells_path, extra_path=None):
    """One table for bench/modes.sh: a row per cell, in the order of CELLS.tsv.
    EXTRA (optional) lines: scenario tool rep submitters_us sq_threads_us iowq_us other_us;
    when given, two more columns show how much of CPU us/IO was the SQ thread and
    the rest of the process besides the submitting thread (main thread, io-wq)."""
    rows = load_rows(rows_path)
    cells = [line.rstrip("\n").split("\t") for line in open(cells_path) if line.strip()]
    extra = []
    if extra_path:
        for line in open(extra_path):
            p = line.split()
            if len(p) == 7:
                extra.append((p[0], p[1], [float(x) for x in p[3:]]))

    def emed(s, t, i):
        vals = [f[i] for es, et, f in extra if es == s and et == t and not math.isnan(f[i])]
        return statistics.median(vals) if vals else float("nan")

    show_extra = any(not math.isnan(f[0]) for _, _, f in extra)
    n = max((len(values_of(rows, s, t, "iops")) for s, t, _ in cells), default=0)
    print(f"  medians over {n} repetition(s); IOPS range = lowest-highest single run")
    LW = max(len(label) for _, _, label in cells)
    cols = [("IOPS", 12), ("IOPS range", 23), ("CPU us/IO", 11), ("p99 us", 10)]
    if show_extra:
        cols += [("SQ thr us/IO", 14), ("other us/IO", 13)]
    print(f"  {'':<{LW}}" + "".join(f"{c:>{w}}" for c, w in cols))
    for s, t, label in cells:
        iops = values_of(rows, s, t, "iops")
        rng = f"{fmt(min(iops), 'iops')}-{fmt(max(iops), 'iops')}" if iops else "-"
        vals = [fmt(median_of(rows, s, t, "iops"), "iops"), rng,
                fmt(median_of(rows, s, t, "cpu_us")), fmt(median_of(rows, s, t, "p99_us"))]
        if show_extra:
            sq = emed(s, t, 1)
            vals += [fmt(sq) if sq > 0 else "-", fmt(emed(s, t, 2) + emed(s, t, 3))]
        print(f"  {label:<{LW}}" + "".join(f"{v:>{w}}" for v, (_, w) in zip(vals, cols)))


def median_interval(vals, level=0.95):
    """The median of vals and the widest-k order-statistic interval
    [x(k), x(n-k+1)] whose coverage of the true median, 1 - 2 P(Bin(n, 1/2) < k),
    is at least `level`; with too few values, min-max and its coverage."""
    v = sorted(vals)
    n = len(v)
    if n == 0:
        return float("nan"), float("nan"), float("nan"), float("nan")

    def coverage(k):
        return 1 - 2 * sum(math.comb(n, i) for i in range(k)) / 2 ** n

    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(k + 1) >= level:
        k += 1
    return statistics.median(v), v[k - 1], v[n - k], coverage(k)


def paired(rows, scenario, field, a, b, kind):
    """A against B round by round. The tools of one round ran next to each
    other in time, so what the host does to a whole round (this VM's rounds
    of one tool move by 30% and more) cancels in the pair, not in the ratio
    of two medians."""
    i = FIELDS.index(field)
    by_rep = {}
    for s, t, r, f in rows:
        if s == scenario and t in (a, b) and not math.isnan(f[i]):
            by_rep.setdefault(r, {})[t] = f[i]
    vals = []
    for pair in by_rep.values():
        if a in pair and b in pair:
            if kind == "delta":
                vals.append(pair[a] - pair[b])
            elif pair[b] != 0:
                vals.append(pair[a] / pair[b])
    return median_interval(vals)


def paired_detail(lo, hi, cov, target):
    """A paired check's detail: its interval, and whether the target is in it."""
    d = f"pair by pair; {cov:.0%} interval {fmt(lo)} to {fmt(hi)}"
    return d + (": the target is inside it, more rounds (REPS) would decide" if lo <= float(target) <= hi else "")


def cmd_pcheck(name, rows_path, scenario, field, a, b, kind, op, threshold):
    med, lo, hi, cov = paired(load_rows(rows_path), scenario, field, a, b, kind)
    cmd_check(name, med, op, threshold, paired_detail(lo, hi, cov, threshold) if not math.isnan(med) else "")


def ceiling(rows, scenario, a, peers, min_iops):
    """A against the ceiling, each loop apart and pair by pair. The best loop
    is the PEER that A trails most (the lowest median of A/PEER round by
    round); A's IOPS check is that median. The loops at the ceiling are the
    PEERs whose own paired median against the best is within MIN_IOPS of it;
    A's CPU check is the highest median of A's CPU us/IO over one of theirs
    (the cheapest of them, pair by pair).

    Not each round's highest IOPS: on this VM one tool's rounds move by 2x
    within a minute, and the highest of four noisy runs sits above every
    loop's own level (the winner's curse), so that rule fails a loop equal to
    the best, and it fails the best loop itself. `biased` says by how much:
    the best loop, then A, each over the round's highest of the others."""
    iops_i, cpu_i = FIELDS.index("iops"), FIELDS.index("cpu_us")
    by_rep = {}
    for s, t, r, f in rows:
        if s == scenario and (t == a or t in peers):
            by_rep.setdefault(r, {})[t] = f

    def pair(x, y, i):
        vals = [got[x][i] / got[y][i] for got in by_rep.values()
                if x in got and y in got and not math.isnan(got[x][i]) and not math.isnan(got[y][i])
                and got[y][i] > 0]
        return median_interval(vals)

    def over_max(x, others):
        vals = []
        for got in by_rep.values():
            top = [got[o][iops_i] for o in others if o in got and not math.isnan(got[o][iops_i])]
            if x in got and top and max(top) > 0:
                vals.append(got[x][iops_i] / max(top))
        return statistics.median(vals) if vals else float("nan")

    present = [p for p in peers if any(p in got and a in got for got in by_rep.values())]
    if not present:
        nan = (float("nan"),) * 4
        return nan, nan, None, [], {}
    iops = {p: pair(a, p, iops_i) for p in present}
    best = min(present, key=lambda p: iops[p][0])
    at_ceiling = [p for p in present if p == best or pair(p, best, iops_i)[0] >= min_iops]
    cpu = {p: pair(a, p, cpu_i) for p in at_ceiling}
    cheap = max(at_ceiling, key=lambda p: cpu[p][0] if not math.isnan(cpu[p][0]) else -1)
    biased = {"best": over_max(best, [p for p in present if p != best] + [a]), "a": over_max(a, present)}
    return iops[best], cpu[cheap], best, [(p, iops[p][0]) for p in present], {"cheap": cheap, **biased}


def cmd_bestloop(rows_path, scenario, a, peers):
    """The PEER that A trails most, pair by pair (ceiling()'s best loop)."""
    best = ceiling(load_rows(rows_path), scenario, a, [p for p in peers.split(",") if p], 0.97)[2]
    if best is None:
        sys.exit(f"benchlib.py bestloop: no round of {scenario} has {a} and a peer")
    print(best)


def cmd_pceiling(name, rows_path, scenario, a, peers, min_iops, max_cpu):
    peers = [p for p in peers.split(",") if p]
    (im, ilo, ihi, icov), (cm, clo, chi, ccov), best, each, extra = ceiling(
        load_rows(rows_path), scenario, a, peers, float(min_iops))

    if best is None:
        cmd_check(f"{name} IOPS / the best loop", float("nan"), ">=", min_iops)
        return
    against = ", ".join(f"{p} {fmt(m)}" for p, m in each)
    cmd_check(f"{name} IOPS / the best loop ({best}, of {'+'.join(peers)})", im, ">=", min_iops,
              paired_detail(ilo, ihi, icov, min_iops) + f"; {a} against each: {against}"
              + f"; by each round's highest (biased by noise): {a} {fmt(extra['a'])}, {best} itself {fmt(extra['best'])}")
    cmd_check(f"{name} CPU per I/O / the cheapest loop at the ceiling ({extra['cheap']})", cm, "<=", max_cpu,
              paired_detail(clo, chi, ccov, max_cpu) if not math.isnan(cm) else "")


def cmd_check(name, value, op, threshold, detail=""):
    v, t = float(value), float(threshold)
    ok = (not math.isnan(v)) and (v >= t if op == ">=" else v <= t)
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {fmt(v)} (target {op} {fmt(t)}){'  ' + detail if detail else ''}")


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "ioacct":
        print(" ".join(repr(x) for x in ioacct_figures(args[0])))
    elif cmd == "ioacct-thread":
        print(" ".join(repr(x) for x in ioacct_thread_figures(args[0])))
    elif cmd == "breakdown":
        print(" ".join(repr(x) for x in ioacct_breakdown(args[0])))
    elif cmd == "fio":
        print(" ".join(repr(x) for x in fio_figures(args[0])))
    elif cmd == "timed":
        print(" ".join(repr(x) for x in timed_figures(*args)))
    elif cmd == "spread":
        cmd_spread(*args)
    elif cmd == "paired":
        rows = load_rows(args[0])
        print(" ".join(repr(x) for x in paired(rows, *args[1:6])))
    elif cmd == "pcheck":
        cmd_pcheck(*args)
    elif cmd == "bestloop":
        cmd_bestloop(*args)
    elif cmd == "pceiling":
        cmd_pceiling(*args)
    elif cmd == "startup":
        cmd_startup(*args)
    elif cmd in ("ioacct-job", "fio-job"):
        f = ioacct_job_figures if cmd == "ioacct-job" else fio_job_figures
        print(" ".join(repr(x) for x in f(args[0], args[1])))
    elif cmd == "table":
        cmd_table(*args)
    elif cmd == "grid":
        cmd_grid(*args)
    elif cmd == "ratio":
        rows = load_rows(args[0])
        print(repr(ratio(median_of(rows, args[1], args[3], args[2]), median_of(rows, args[1], args[4], args[2]))))
    elif cmd == "median":
        print(repr(median_of(load_rows(args[0]), args[1], args[2], args[3])))
    elif cmd == "check":
        cmd_check(*args)
    elif cmd == "get":
        v = json.load(open(args[0]))
        for k in args[1].split("."):
            v = v[int(k)] if isinstance(v, list) else v[k]
        print(v)
    elif cmd == "fmt":
        print(fmt(float(args[0]), args[1] if len(args) > 1 else None))
    else:
        sys.exit(f"benchlib.py: unknown command {cmd!r}\n{__doc__}")


if __name__ == "__main__":
    main(sys.argv)
