"""A tiny kernel for evolve's tests: fast to check and time, with a wrong fast shortcut."""

from __future__ import annotations

from pathlib import Path

import pytest

KERNEL = '''\
SLOPPY = False  # lessonloop: param SLOPPY bool
# lessonloop: param WORK int 1..4
WORK = 4


def total(values):
    """The sum of the squares; SLOPPY skips every other value (faster, wrong); WORK repeats
    the work (1 is fastest)."""
    step = 2 if SLOPPY else 1
    result = 0
    for _ in range(WORK):
        result = sum(v * v for v in values[::step])
    return result
'''
REFERENCE = """\
import random


def total(values):
    return sum(v * v for v in values)


def inputs(seed, n=10):
    rng = random.Random(seed)
    return [[rng.randint(-9, 9) for _ in range(n)]]
"""
SPEC = """\
name: squares
source: kernel.py
entry: total
correctness:
  reference: reference.py:total
  inputs: reference.py:inputs
  seeds: [1, 2]
benchmark:
  inputs: reference.py:inputs
  args: {n: 3000}
  pairs: 6
  max_pairs: 12
  warmups: 1
limits: {time: 30}
budget: {generations: 3}
"""


@pytest.fixture
def kernel_dir(tmp_path) -> Path:
    folder = tmp_path / "kernel"
    folder.mkdir()
    (folder / "kernel.py").write_text(KERNEL)
    (folder / "reference.py").write_text(REFERENCE)
    (folder / "spec.yaml").write_text(SPEC)
    return folder
