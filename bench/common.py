"""Shared timing helpers for the benchmarks: medians of whole-process runs."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lessonloop_command() -> list[str]:
    """The installed console script when present, else ``python -m lessonloop``."""
    script = shutil.which("lessonloop", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "lessonloop"]


def hook_command(event: str) -> list[str]:
    """The hook command ``lessonloop install claude-code`` writes for ``event`` (what Claude
    Code runs), for this interpreter."""
    import shlex

    from lessonloop.integrations.claude_code import hook_command as installed

    return shlex.split(installed(event))


def settle(home: str | Path) -> float:
    """Wait until the captures the hooks deferred under ``home`` are written (a hook answers,
    exits, then captures in the background: memory/deferred.py); the milliseconds waited."""
    from lessonloop.memory import deferred

    started = time.perf_counter()
    sessions = Path(home) / "sessions"
    for folder in sorted(sessions.glob("*")) if sessions.is_dir() else ():
        if not deferred.settled(folder):
            raise SystemExit(f"captures under {folder} still running after 10 s")
    return (time.perf_counter() - started) * 1000


def timed_process(
    command: list[str], env: dict | None = None, cwd: str | None = None
) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB (largest process in the tree) and exit code of one run."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.read().decode(errors="replace"))
    proc.stderr.close()
    return elapsed, usage.ru_maxrss / 1024, proc.returncode


def median_runs(
    command: list[str],
    runs: int,
    fresh_home: bool = False,
    extra_env: dict | None = None,
    empty_cwd: bool = False,
) -> dict:
    times, peaks = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="lessonloop-bench-") as tmp:
            env = dict(os.environ, **(extra_env or {}))
            if fresh_home:
                env["LESSONLOOP_HOME"] = str(Path(tmp) / "home")
            elapsed, peak, code = timed_process(command, env, cwd=tmp if empty_cwd else None)
            if code != 0:
                raise SystemExit(f"benchmark command failed ({code}): {' '.join(command)}")
            times.append(elapsed)
            peaks.append(peak)
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "peak_mb": statistics.median(peaks),
        "runs": runs,
    }


def verdict(value: float, target: float) -> str:
    return "OK" if value <= target else "OVER TARGET"


QUIET_LOOP_MS = 68  # the loop below on the development VM when it is quiet


def machine_speed(when: str = "before") -> str:
    """One line on how fast this machine runs Python right now. Shared VMs drift (this
    project's ran the same code up to twice as slowly within an hour), and every timing
    moves with it: compare runs, and targets, by this line (printed before and after)."""

    def loop() -> int:
        total = 0
        for i in range(1_000_000):
            total += i * i % 7
        return total

    times = []
    for _ in range(5):
        started = time.process_time()
        loop()
        times.append(time.process_time() - started)
    ms = statistics.median(times) * 1000
    return (
        f"machine speed {when}: a fixed Python loop took {ms:.0f} ms (median of 5); about "
        f"{QUIET_LOOP_MS} ms on the quiet development VM, so timings here run "
        f"x{ms / QUIET_LOOP_MS:.2f} of that"
    )
