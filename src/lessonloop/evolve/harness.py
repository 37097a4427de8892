"""What runs in the sandbox: the correctness check (the candidate against the reference on
generated inputs, or the spec's test command, after the spec's build) and the measured pairs:
wall times of the entry point (two sources in one process, interleaved, with warm-ups, pinned
to one CPU where the platform allows), or the benchmark command's metric per side
(``driver.py``: wall time, callgrind's instruction count, or the number it prints)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from ..errors import UsageError
from .spec import Loaded

# Standard library only: it runs in the sandbox's own interpreter (``python -I``).
_SCRIPT = r"""
import gc, importlib.util, json, math, os, pickle, sys, time

def load(path, name, function):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return getattr(module, function)

def entry(text, name):
    path, _, function = text.rpartition(":")
    return load(path, name, function)

def same(got, expected, tol):
    if isinstance(expected, float) or isinstance(got, float):
        try:
            return math.isclose(got, expected, rel_tol=tol, abs_tol=tol)
        except TypeError:
            return False
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)):
        return len(got) == len(expected) and all(same(g, e, tol) for g, e in zip(got, expected))
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(same(got[k], expected[k], tol) for k in expected)
    return got == expected

def plain(value):   # JSON-able, the same for both sides (a tuple is a list, an object its repr)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): plain(v) for k, v in value.items()}
    return {"__repr__": repr(value)}

def answers(job):   # in a process of its own: the candidate's answers, nothing else
    candidate = load("candidate.py", "lessonloop_candidate", job["entry"])
    inputs = entry(job["inputs"], "lessonloop_inputs")
    return [plain(candidate(*inputs(seed, **job["args"]))) for seed in job["seeds"]]

def check(job):
    import subprocess
    reference = entry(job["reference"], "lessonloop_reference")
    inputs = entry(job["inputs"], "lessonloop_inputs")
    expected_of = [plain(reference(*inputs(seed, **job["args"]))) for seed in job["seeds"]]
    # the candidate runs in a child: it cannot touch the reference, this comparison or the
    # verdict this process prints
    child = subprocess.run([sys.executable, "-I", "harness.py"], capture_output=True,
                           input=json.dumps({**job, "mode": "answers"}), text=True)
    try:
        got_of = json.loads(child.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        got_of = None
    if child.returncode != 0 or not isinstance(got_of, list) or len(got_of) != len(expected_of):
        return {"ok": False, "message": "crashed: " + " ".join(child.stderr.split())[-400:]}
    for seed, got, expected in zip(job["seeds"], got_of, expected_of):
        if not same(got, expected, job["tolerance"]):
            shown = repr(got)
            return {"ok": False, "message": "seed %d: differs from the reference (got %s)"
                    % (seed, shown[:60] + ("..." if len(shown) > 60 else ""))}
    return {"ok": True, "message": "%d inputs match the reference" % len(job["seeds"])}

def pairs(job):
    cpu = None
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    inputs = entry(job["inputs"], "lessonloop_inputs")
    sides = [load(name, "lessonloop_side_" + str(i), job["entry"])
             for i, name in enumerate(("a.py", "b.py"))]
    # every call gets fresh copies of the same inputs: a side that changes its inputs (sorts
    # them in place, say) or keeps answers by object is not timed on work already done
    made = inputs(job["seed"], **job["args"])
    try:
        pristine = pickle.dumps(made)
        fresh = lambda: pickle.loads(pristine)
    except Exception:   # inputs pickle cannot copy: the same objects every call
        fresh = lambda: made
    repeat = job["repeat"]
    for _ in range(job["warmups"]):
        for side in sides:
            side(*fresh())
    def timed(side):   # the fastest of `repeat` calls: a pause hits one call, not all
        given = [fresh() for _ in range(repeat)]
        gc.collect()
        gc.disable()
        try:
            best = math.inf
            for args in given:
                start = time.perf_counter()
                side(*args)
                best = min(best, time.perf_counter() - start)
            return best
        finally:
            gc.enable()
    measured = []
    for i in range(job["count"]):
        if i % 2 == 0:   # alternate who goes first: an order effect cancels over the pairs
            a = timed(sides[0]); b = timed(sides[1])
        else:
            b = timed(sides[1]); a = timed(sides[0])
        measured.append([a, b])
    return {"pairs": measured, "cpu": cpu}

def call(job):   # one side in a process of its own (counted by callgrind): `calls` calls
    side = load(job["file"], "lessonloop_side", job["entry"])
    given = entry(job["inputs"], "lessonloop_inputs")(job["seed"], **job["args"])
    for _ in range(job["calls"]):
        side(*given)
    return {"calls": job["calls"]}

job = json.loads(sys.stdin.read())
result = {"check": check, "answers": answers, "pairs": pairs, "call": call}[job["mode"]](job)
sys.stdout.write("\n" + json.dumps(result) + "\n")
"""


class SandboxFailed(Exception):
    """The harness did not finish: the candidate crashed, timed out or ran out of memory."""


@dataclass
class Checked:
    ok: bool
    message: str


def _files(loaded: Loaded, names: list[str]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name in names:
        if name.startswith("/") or ".." in name.split("/"):
            raise UsageError(f"{loaded.path}: {name!r} must be a path inside the spec's folder")
        files[name] = loaded.read(name).encode("utf-8")
    return files


def _executables(loaded: Loaded, names: list[str]) -> list[str]:
    """The files among ``names`` that are executable in the spec's folder: the sandbox writes
    plain files, so their mode is set again inside it (``./bench.sh`` runs as it does here)."""
    import os

    return [name for name in names if os.access(loaded.folder / name, os.X_OK)]


def _run(loaded: Loaded, job: dict, files: dict[str, bytes], script: str = "harness.py") -> dict:
    from ..safety.sandbox import Limits, run

    limits = Limits(timeout=loaded.spec.limits.time, memory_mb=loaded.spec.limits.memory_mb)
    files["harness.py"] = _SCRIPT.encode("utf-8")
    outcome = run(
        [sys.executable, "-I", script],
        stdin=json.dumps(job).encode("utf-8"),
        files=files,
        limits=limits,
    )
    if not outcome.passed:
        raise SandboxFailed(" ".join(outcome.report().split())[-400:])
    try:
        result = json.loads(outcome.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SandboxFailed("the harness printed no result") from None
    if "error" in result:
        raise SandboxFailed(str(result["error"]))
    return dict(result)


def _entry_files(entries: list[str]) -> list[str]:
    return sorted({entry.rpartition(":")[0] for entry in entries})


def check(loaded: Loaded, source: str) -> Checked:
    """Is ``source`` correct: the reference's answers on every seed, or the command passing."""
    correctness = loaded.spec.correctness
    if correctness.command is not None:
        return _check_command(loaded, source)
    assert correctness.reference is not None and correctness.inputs is not None
    files = _files(loaded, _entry_files([correctness.reference, correctness.inputs]))
    files["candidate.py"] = source.encode("utf-8")
    job = {
        "mode": "check",
        "entry": loaded.spec.entry,
        "reference": correctness.reference,
        "inputs": correctness.inputs,
        "seeds": correctness.seeds,
        "args": correctness.args,
        "tolerance": correctness.tolerance,
    }
    try:
        result = _run(loaded, job, files)
    except SandboxFailed as exc:
        return Checked(False, f"crashed: {exc}")
    return Checked(bool(result.get("ok")), str(result.get("message", "")))


def _check_command(loaded: Loaded, source: str) -> Checked:
    from ..safety.sandbox import Limits, run

    correctness = loaded.spec.correctness
    assert correctness.command is not None
    files = _files(loaded, correctness.files)
    files[loaded.spec.source] = source.encode("utf-8")
    command = correctness.command
    if loaded.spec.build is not None:  # a candidate that does not build is not correct
        command = f"( {loaded.spec.build} ) && ( {command} )"
    executables = _executables(loaded, [*correctness.files, loaded.spec.source])
    if executables:
        import shlex

        command = f"chmod u+x {' '.join(map(shlex.quote, executables))} && {command}"
    command = command.replace("{python}", sys.executable)
    limits = Limits(timeout=loaded.spec.limits.time, memory_mb=loaded.spec.limits.memory_mb)
    outcome = run(command, files=files, limits=limits)
    if outcome.passed:
        return Checked(True, "the test command passed")
    return Checked(False, " ".join(outcome.report().split())[-300:])


INSTRUCTION_PAIRS = 2  # instruction counts barely vary: two pairs (A B, then B A) suffice


def pair_count(loaded: Loaded, count: int) -> int:
    """Pairs to measure when ``count`` are asked for: instruction counts need only two."""
    return INSTRUCTION_PAIRS if loaded.spec.benchmark.metric == "instructions" else count


def time_pairs(
    loaded: Loaded, source_a: str, source_b: str, count: int
) -> list[tuple[float, float]]:
    """``count`` interleaved (A, B) measurements of the benchmark's metric (seconds,
    instructions or the printed number), same inputs and environment for both sides."""
    bench = loaded.spec.benchmark
    if bench.command is None and bench.metric == "wall":
        return _entry_pairs(loaded, source_a, source_b, count)
    return _driven_pairs(loaded, source_a, source_b, pair_count(loaded, count))


def _entry_pairs(
    loaded: Loaded, source_a: str, source_b: str, count: int
) -> list[tuple[float, float]]:
    bench = loaded.spec.benchmark
    assert bench.inputs is not None
    files = _files(loaded, _entry_files([bench.inputs]))
    files["a.py"] = source_a.encode("utf-8")
    files["b.py"] = source_b.encode("utf-8")
    job = {
        "mode": "pairs",
        "entry": loaded.spec.entry,
        "inputs": bench.inputs,
        "seed": bench.seed,
        "args": bench.args,
        "repeat": bench.repeat,
        "warmups": bench.warmups,
        "count": count,
    }
    result = _run(loaded, job, files)
    return [(float(a), float(b)) for a, b in result["pairs"]]


def _driven_pairs(
    loaded: Loaded, source_a: str, source_b: str, count: int
) -> list[tuple[float, float]]:
    """Each side in its folder (``a/``, ``b/``) with the benchmark's files, measured by the
    driver: the command, or (callgrind on Python) the entry point in a process of its own."""
    import shutil

    from . import driver

    bench, spec = loaded.spec.benchmark, loaded.spec
    counted = bench.metric == "instructions"
    names = list(bench.files)
    argv = stdin = overhead = None
    if bench.command is None:  # the entry point, counted by callgrind
        assert bench.inputs is not None
        names += _entry_files([bench.inputs])
        call = {
            "mode": "call", "entry": spec.entry, "file": "side.py", "inputs": bench.inputs,
            "seed": bench.seed, "args": bench.args,
        }  # fmt: skip
        # not -I: it would ignore PYTHONHASHSEED, which the driver fixes for steady counts
        argv = [sys.executable, "-s", "-B", "../harness.py"]
        stdin = json.dumps({**call, "calls": bench.repeat})
        overhead = json.dumps({**call, "calls": 0})
    shared = _files(loaded, sorted(set(names)))
    files: dict[str, bytes] = {}
    for side, source in (("a", source_a), ("b", source_b)):
        files.update({f"{side}/{name}": data for name, data in shared.items()})
        target = "side.py" if bench.command is None else spec.source
        files[f"{side}/{target}"] = source.encode("utf-8")
    files["driver.py"] = driver.SCRIPT.encode("utf-8")
    job = {
        "sides": ["a", "b"],
        "build": spec.build,
        "argv": argv,
        "command": None
        if bench.command is None
        else bench.command.replace("{python}", sys.executable),
        "stdin": stdin,
        "overhead_stdin": overhead,
        "metric": bench.metric,
        "direction": bench.direction,
        "pattern": bench.pattern,
        "valgrind": shutil.which("valgrind") or "valgrind",
        # a count is the same every time: one run per measurement, no warm-up
        "repeat": 1 if counted else bench.repeat,
        "warmups": 0 if counted else bench.warmups,
        "count": count,
        "executables": _executables(loaded, [*names, spec.source]) if bench.command else [],
    }
    result = _run(loaded, job, files, script="driver.py")
    return [(float(a), float(b)) for a, b in result["pairs"]]
