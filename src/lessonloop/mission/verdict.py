"""Whether a step made the verifier's outcome worse, the rule that reverts it.

An outcome is ranked, best first: it passes; its tests run and some fail (fewer is better,
when the output counts them: pytest's ``2 failed``, unittest's ``FAILED (failures=1,
errors=1)``, ...); the code cannot even be loaded (a syntax, indentation or import error,
errors while collecting tests) or the verifier was killed (a timeout, say). A step is worse
when its outcome falls to a lower rank, or, still failing tests, when more of them fail. An
outcome as bad as before is kept when the verifier's output changed (the failure moved: a fix
may take more than one step); an edit is undone when the output is the same but for timings
(it had no effect the verifier can see, so it only adds risk to the final diff). A step after
which fewer tests run than before is undone whatever the verifier says: a suite cut down
is no fix."""

from __future__ import annotations

import re
from dataclasses import dataclass

PASSES, FAILS, BROKEN = 0, 1, 2
_UNITTEST = re.compile(r"FAILED \(((?:\w+=\d+(?:, )?)+)\)")
_PYTEST = re.compile(r"(\d+) (failed|error|errors)\b")
_NOT_LOADED = re.compile(
    r"\b(SyntaxError|IndentationError|TabError|ImportError|ModuleNotFoundError|"
    r"errors? during collection|Cannot find module|cannot find symbol|"
    r"undefined reference|expected expression|unexpected EOF)\b"
)
_LOAD_FAILED = ("during collection", "Failed to import test module", "unittest.loader._FailedTest")
_RAN = re.compile(r"^Ran \d+ tests?|\d+ passed|\d+ failed", re.M)


@dataclass(frozen=True)
class Rank:
    level: int  # PASSES, FAILS or BROKEN
    failures: int | None  # failing tests, when the output counts them

    def describe(self) -> str:
        if self.level == PASSES:
            return "it passes"
        if self.level == BROKEN:
            return "the code no longer loads or the verifier was killed"
        return "tests fail" if self.failures is None else f"{self.failures} failing"


def _count(output: str) -> int | None:
    unit = _UNITTEST.findall(output)
    if unit:
        pairs = [p.split("=") for p in unit[-1].split(", ")]
        return sum(int(n) for key, n in pairs if key in ("failures", "errors"))
    found = _PYTEST.findall(output)
    return sum(int(n) for n, _ in found) if found else None


def rank(exit_code: int | None, output: str) -> Rank:
    if exit_code == 0:
        return Rank(PASSES, 0)
    if exit_code is None or output.lstrip().startswith("killed"):
        return Rank(BROKEN, None)
    if any(sign in output for sign in _LOAD_FAILED) or (
        _NOT_LOADED.search(output) and not _RAN.search(output)
    ):
        return Rank(BROKEN, None)
    return Rank(FAILS, _count(output))


_NOISE = re.compile(
    r"\d+(?:\.\d+)?\s*(?:s|ms|sec|seconds)\b|0x[0-9a-f]+|\bline \d+|(?<=\.\w\w):\d+(?::\d+)?"
)


def unchanged(before: str, after: str) -> bool:
    """Whether two outputs of the verifier say the same thing, timings, addresses and line
    numbers aside (a blank line added moves every line number after it)."""
    return _NOISE.sub("#", before).strip() == _NOISE.sub("#", after).strip()


def tests_run(output: str) -> int | None:
    """How many tests the output says ran (unittest's ``Ran 3 tests``, pytest's counts)."""
    ran = re.findall(r"^Ran (\d+) tests?", output, re.M)
    if ran:
        return int(ran[-1])
    counted = re.findall(r"(\d+) (passed|failed|errors?)\b", output)
    return sum(int(n) for n, _ in counted) if counted else None


def undo(
    before: tuple[int | None, str], after: tuple[int | None, str], edit: bool = True
) -> str | None:
    """Why a step whose verifier result went from ``before`` to ``after`` (exit code,
    output) is undone; None: it is kept. A command (not an ``edit``) without a visible
    effect is kept: it may prepare the next step (a file made, a package installed)."""
    old, new = rank(*before), rank(*after)
    if worse(old, new):
        return f"the verifier's outcome got worse ({old.describe()} before, {new.describe()} after)"
    ran, running = tests_run(before[1]), tests_run(after[1])
    if ran and (running or 0) < ran and old.level != BROKEN:  # a suite cut down is no fix
        return f"fewer tests ran ({ran} before, {running or 'none counted'} after)"
    if edit and new.level != PASSES and unchanged(before[1], after[1]):
        return "the verifier's output did not change: the change had no visible effect"
    return None


def worse(before: Rank, after: Rank) -> bool:
    """Whether ``after`` is a worse outcome than ``before``."""
    if after.level != before.level:
        return after.level > before.level
    if after.level == FAILS and None not in (before.failures, after.failures):
        return (after.failures or 0) > (before.failures or 0)
    return False
