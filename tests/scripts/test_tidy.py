"""scripts/tidy's key: what makes a unit 'the same' as one in scripts/tidy-clean.

A fresh machine must match the record wherever this checkout's text is what
was checked, whatever its system headers' point release or its CPU; and any
change to the checkout's own text, or to which headers it includes, must miss.
"""
import importlib.machinery
import importlib.util
import os
import sys
import unittest

sys.dont_write_bytecode = True  # nothing of the test's lands in scripts/
_path = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "tidy")
_loader = importlib.machinery.SourceFileLoader("tidy", _path)
_spec = importlib.util.spec_from_loader("tidy", _loader)
tidy = importlib.util.module_from_spec(_spec)
_loader.exec_module(tidy)

ROOT = "/work/checkout"


def unit(system_text=b"int __glibc_internal(void);", project_line=b"int f() { return 1; }",
         header=b"/usr/include/errno.h"):
    """Preprocessed text as `g++ -E -C` writes it: line markers, then lines."""
    return b"\n".join([
        b'# 0 "' + ROOT.encode() + b'/src/a.cpp"',
        b'# 0 "<built-in>"',
        b'# 0 "<command-line>"',
        b'# 1 "/usr/include/stdc-predef.h" 1 3 4',
        b"/* predefined */",
        b'# 0 "<command-line>" 2',
        b'# 1 "' + ROOT.encode() + b'/src/a.cpp"',
        b"// a comment of ours",
        b'# 1 "' + header + b'" 1 3 4',
        system_text,
        b'# 1 "/usr/include/bits/nested.h" 1 3 4',
        b"typedef int __nested_t;",
        b'# 2 "' + header + b'" 2 3 4',
        b'# 3 "' + ROOT.encode() + b'/src/a.cpp" 2',
        b'# 1 "' + ROOT.encode() + b'/src/a.hpp" 1',
        b"struct Ours {};",
        b'# 4 "' + ROOT.encode() + b'/src/a.cpp" 2',
        project_line,
    ])


class ProjectText(unittest.TestCase):
    def key(self, pre):
        return tidy.project_text(pre, ROOT)

    def test_a_system_headers_own_text_is_not_in_it(self):
        self.assertEqual(self.key(unit()), self.key(unit(system_text=b"int __glibc_internal(long);")))

    def test_the_checkouts_lines_are(self):
        self.assertNotEqual(self.key(unit()), self.key(unit(project_line=b"int f() { return 2; }")))
        text = self.key(unit())
        self.assertIn(b"struct Ours {};", text)
        self.assertIn(b"// a comment of ours", text)
        self.assertNotIn(b"__glibc_internal", text)
        self.assertNotIn(b"__nested_t", text)

    def test_which_system_header_it_includes_is(self):
        self.assertNotEqual(self.key(unit()), self.key(unit(header=b"/usr/include/time.h")))
        self.assertIn(b"#include </usr/include/errno.h>", self.key(unit()))
        self.assertNotIn(b"bits/nested.h", self.key(unit()), "a header a system header includes is its business")


class VersionLine(unittest.TestCase):
    def test_the_host_cpu_is_not_in_it(self):
        text = ("Debian LLVM version 14.0.6\n  Optimized build.\n  Default target: x86_64-pc-linux-gnu\n"
                "  Host CPU: {}\n")
        self.assertEqual(tidy.version_line(text.format("icelake-client")), "Debian LLVM version 14.0.6")
        self.assertEqual(tidy.version_line(text.format("icelake-client")),
                         tidy.version_line(text.format("znver3")))


if __name__ == "__main__":
    unittest.main()
