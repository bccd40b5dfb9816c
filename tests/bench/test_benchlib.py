"""bench/benchlib.py's paired verdicts: what every bench/ target is judged by."""
import contextlib
import io
import math
import os
import shutil
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # nothing of the test's lands in bench/
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import benchlib  # noqa: E402


def rows_file(test, lines):
    """ROWS.tsv as the bench scripts write it, removed after the test."""
    f = tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False)
    test.addCleanup(os.unlink, f.name)
    with f:
        f.write("".join(f"{s} {t} {r} {iops} {cpu} nan nan\n" for s, t, r, iops, cpu in lines))
    return f.name


class MedianInterval(unittest.TestCase):
    def test_five_rounds_give_min_max_at_their_own_coverage(self):
        self.assertEqual(benchlib.median_interval([5, 1, 4, 2, 3]), (3, 1, 5, 1 - 2 / 32))

    def test_more_rounds_narrow_it_at_95_percent_or_more(self):
        med, lo, hi, cov = benchlib.median_interval(list(range(15)))
        # P(Bin(15, 1/2) <= 3) = 0.0176 and <= 4 is 0.059: k = 4.
        self.assertEqual((med, lo, hi), (7, 3, 11))
        self.assertAlmostEqual(cov, 1 - 2 * (1 + 15 + 105 + 455) / 2**15)
        self.assertGreaterEqual(cov, 0.95)

    def test_no_values_no_figure(self):
        self.assertTrue(all(math.isnan(x) for x in benchlib.median_interval([])))


class Paired(unittest.TestCase):
    def test_a_drifting_host_cancels_in_the_pair(self):
        # The host halves every tool's speed in rounds 2 and 3, and A and B
        # each have one odd round: the ratio of the medians says 1.83x (110
        # against 60), each round's pair 1.1x but for the odd rounds.
        lines = []
        for rep, speed in enumerate([1.0, 0.5, 0.5, 1.0, 1.0], 1):
            lines += [("w", "a", rep, 110 * speed * (1.2 if rep == 2 else 1), 1.0),
                      ("w", "b", rep, 100 * speed * (0.6 if rep == 4 else 1), 2.0)]
        rows = benchlib.load_rows(rows_file(self, lines))
        self.assertAlmostEqual(benchlib.paired(rows, "w", "iops", "a", "b", "ratio")[0], 1.1)
        self.assertEqual(benchlib.paired(rows, "w", "cpu_us", "a", "b", "delta")[0], -1.0)

    def test_a_round_without_both_tools_is_no_pair(self):
        rows = benchlib.load_rows(rows_file(self, [("w", "a", 1, 100, 1), ("w", "b", 1, 50, 1), ("w", "a", 2, 1, 1)]))
        self.assertEqual(benchlib.paired(rows, "w", "iops", "a", "b", "ratio"), (2.0, 2.0, 2.0, 0.0))

    def test_the_verdict_says_when_the_target_is_inside_the_interval(self):
        path = rows_file(self, [("w", t, r, v, 1) for r, (x, y) in enumerate([(97, 100), (99, 100), (101, 100)], 1)
                          for t, v in (("a", x), ("b", y))])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchlib.cmd_pcheck("a/b", path, "w", "iops", "a", "b", "ratio", ">=", "0.98")
            benchlib.cmd_pcheck("a/b", path, "w", "iops", "a", "b", "ratio", ">=", "1.02")
        first, second = out.getvalue().splitlines()
        self.assertTrue(first.startswith("PASS  a/b: 0.990"), first)
        self.assertIn("the target is inside it", first)
        self.assertTrue(second.startswith("FAIL  a/b: 0.990"), second)
        self.assertNotIn("inside", second)


class Ceiling(unittest.TestCase):
    def test_each_loop_is_paired_and_the_best_is_the_one_trailed_most(self):
        rows = benchlib.load_rows(rows_file(self, [
            ("w", "ioacct", 1, 150, 3.3), ("w", "each", 1, 155, 3.0), ("w", "sol", 1, 118, 2.2),
            ("w", "ioacct", 2, 99, 2.4), ("w", "each", 2, 100, 3.1), ("w", "sol", 2, 98, 2.2)]))
        (im, _, _, _), (cm, _, _, _), best, each, extra = benchlib.ceiling(rows, "w", "ioacct", ["each", "sol"], 0.97)
        self.assertEqual(best, "each")
        self.assertAlmostEqual(im, (150 / 155 + 99 / 100) / 2)
        self.assertEqual([p for p, _ in each], ["each", "sol"])
        self.assertAlmostEqual(dict(each)["sol"], (150 / 118 + 99 / 98) / 2)
        # sol's own paired median against each is (118/155 + 98/100)/2 = 0.87:
        # not at the ceiling, so the CPU is held to each's.
        self.assertEqual(extra["cheap"], "each")
        self.assertAlmostEqual(cm, (3.3 / 3.0 + 2.4 / 3.1) / 2)

    def test_each_rounds_highest_is_biased_and_says_so(self):
        # Two loops at one level whose runs trade places by 10%, the tool in
        # between: paired, the tool is level with either (1.002); against
        # each round's highest it reads 0.955, and so would the loops.
        rows = benchlib.load_rows(rows_file(self, [
            ("w", "a", 1, 105, 1), ("w", "p1", 1, 100, 1), ("w", "p2", 1, 110, 1),
            ("w", "a", 2, 105, 1), ("w", "p1", 2, 110, 1), ("w", "p2", 2, 100, 1)]))
        (im, _, _, _), _, best, _, extra = benchlib.ceiling(rows, "w", "a", ["p1", "p2"], 0.97)
        self.assertEqual(best, "p1")
        self.assertAlmostEqual(im, (105 / 100 + 105 / 110) / 2)
        self.assertAlmostEqual(extra["a"], 105 / 110)
        self.assertAlmostEqual(extra["best"], (100 / 110 + 110 / 105) / 2)

    def test_no_round_with_the_tool_and_a_peer_has_no_best(self):
        rows = benchlib.load_rows(rows_file(self, [("w", "ioacct", 1, 100, 1), ("w", "each", 2, 100, 1)]))
        (im, _, _, _), _, best, each, _ = benchlib.ceiling(rows, "w", "ioacct", ["each"], 0.97)
        self.assertTrue(math.isnan(im))
        self.assertIsNone(best)
        self.assertEqual(each, [])

    def test_the_verdict_lines(self):
        path = rows_file(self, [("w", "a", 1, 90, 2.0), ("w", "b", 1, 100, 1.0)])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchlib.cmd_pceiling("w", path, "w", "a", "b", "0.97", "1.10")
            benchlib.cmd_bestloop(path, "w", "a", "b")
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("FAIL  w IOPS / the best loop (b, of b): 0.900"), lines)
        self.assertIn("by each round's highest (biased by noise): a 0.900, b itself 1.111", lines[0])
        self.assertTrue(lines[1].startswith("FAIL  w CPU per I/O / the cheapest loop at the ceiling (b): 2 (target"), lines)
        self.assertEqual(lines[2], "b")



class Startup(unittest.TestCase):
    def run_of(self, wall, user, sys_, window_cpu_s):
        """A run's .time file and the JSON beside it, removed after the test."""
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, "startup.json")
        with open(path, "w") as f:
            f.write('{"results": {"cpu": {"breakdown": {"total_s": %r}}}}' % window_cpu_s)
        with open(path + ".time", "w") as f:
            f.write(f"{wall} {user} {sys_}\n")
        return path + ".time"

    def test_cpu_under_times_step_reads_zero_never_below(self):
        # /usr/bin/time said 0.01 s in all; the window alone took 0.013 s.
        runs = [self.run_of(0.15, 0.01, 0.00, 0.013), self.run_of(0.16, 0.02, 0.01, 0.012),
                self.run_of(0.14, 0.00, 0.01, 0.011)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            benchlib.cmd_startup("0.1", *runs)
        wall, cpu, wmin, wmax, cmin, cmax, total = (float(x) for x in out.getvalue().split())
        self.assertAlmostEqual(wall, 50.0)
        self.assertEqual(cmin, 0.0)
        self.assertAlmostEqual(cmax, 18.0)
        self.assertEqual(cpu, 0.0)
        self.assertAlmostEqual(total, 10.0)

if __name__ == "__main__":
    unittest.main()
