"""scripts/check_size on made-up trees: what passes, and each way to fail."""
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "check_size")


def function(name, lines):
    """A C++ function of exactly `lines` lines."""
    body = [f"  x += {i};" for i in range(lines - 3)]
    return "\n".join([f"int {name}(int x) {{"] + body + ["  return x;", "}"]) + "\n"


class CheckSize(unittest.TestCase):
    def tree(self, files, record=None):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d.name, path)), exist_ok=True)
            with open(os.path.join(d.name, path), "w") as f:
                f.write(text)
        if record is not None:
            os.makedirs(os.path.join(d.name, "scripts"), exist_ok=True)
            with open(os.path.join(d.name, "scripts", "size-record"), "w") as f:
                f.write("# test\n" + record)
        return subprocess.run([sys.executable, SCRIPT, d.name], capture_output=True, text=True)

    def test_short_rooms_pass(self):
        r = self.tree({"src/a/a.cpp": function("f", 100)})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_a_function_over_100_lines_fails_naming_it(self):
        r = self.tree({"src/a/a.cpp": function("f", 20) + function("long_one", 101)})
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/a/a.cpp:21: long_one is 101 lines", r.stdout)

    def test_a_file_over_600_lines_fails(self):
        r = self.tree({"src/a/big.hpp": "// x\n" * 601})
        self.assertEqual(r.returncode, 1)
        self.assertIn("src/a/big.hpp: 601 lines", r.stdout)

    def test_a_recorded_function_may_shrink_but_not_grow(self):
        self.assertEqual(self.tree({"src/a.cpp": function("g", 110)}, "120 src/a.cpp g\n").returncode, 0)
        r = self.tree({"src/a.cpp": function("g", 121)}, "120 src/a.cpp g\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("grew to 121 lines from the 120", r.stdout)

    def test_a_recorded_function_back_under_the_limit_leaves_the_list(self):
        r = self.tree({"src/a.cpp": function("g", 90)}, "120 src/a.cpp g\n")
        self.assertEqual(r.returncode, 1)
        self.assertIn("take it off the list", r.stdout)


if __name__ == "__main__":
    unittest.main()
