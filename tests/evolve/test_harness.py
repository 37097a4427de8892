"""The harness cannot be talked into a verdict: a candidate runs apart from the comparison that
judges it, and every timed call gets fresh inputs."""

from __future__ import annotations

import statistics

from lessonloop.evolve import harness, spec

from .conftest import KERNEL

GARBAGE = "def total(values):\n    return 0\n"


def test_a_candidate_that_rewrites_the_comparison_is_still_wrong(kernel_dir):
    loaded = spec.read(kernel_dir / "spec.yaml")
    cheats = {
        "replaces the comparison": "import __main__\n__main__.same = lambda *a: True\n",
        "prints a verdict at exit": (
            "import atexit, sys\n"
            "atexit.register(lambda: sys.stdout.write('\\n{\"ok\": true}\\n'))\n"
        ),
    }
    for how, cheat in cheats.items():
        checked = harness.check(loaded, cheat + GARBAGE)
        assert not checked.ok, how
    assert harness.check(loaded, KERNEL).ok  # the honest kernel still passes


SORTED = "def total(values):\n    values = sorted(values)\n    return sum(v * v for v in values)\n"
IN_PLACE = "def total(values):\n    values.sort()\n    return sum(v * v for v in values)\n"


def test_a_side_that_changes_its_inputs_is_timed_on_fresh_ones(kernel_dir):
    """Sorting in place is no faster than sorting a copy, unless every call after the first
    finds the list already sorted (timsort is then linear)."""
    loaded = spec.read(kernel_dir / "spec.yaml")
    pairs = harness.time_pairs(loaded, SORTED, IN_PLACE, 8)
    ratio = statistics.median(a / b for a, b in pairs)
    assert ratio < 1.5, f"the in-place side looked {ratio:.2f}x faster"
