"""Start-up of the inspection commands, side by side with ``--help`` and a bare interpreter.

Target (issue 20 point 3): each of ``status``, ``show``, ``list``, ``scenarios``, ``usage``,
``memory list``, ``memory search`` and ``doctor`` takes ≤ 150 ms median wall, like ``--help``.
Shared machines drift, so every command runs once per round, in turn, and the medians come from
the same rounds: the ratio to ``--help`` and to ``python -S -c pass`` is the stable number.

The home is made once (a 3-generation offline run and two memories) in a temporary folder.
Run from a worktree with ``PYTHONPATH=src`` to time that worktree's source through the installed
entry point. Usage: python bench/startup.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import lessonloop_command, machine_speed, verdict

TARGET_MS = 150


def _prepare(home: Path, env: dict) -> str:
    """A home with one finished run and two memories; returns the run id."""
    run_id = "run-bench-startup"
    command = lessonloop_command()
    subprocess.run(
        command + ["run", "grid_ctf", "--iterations", "3", "--run-id", run_id],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for summary in ("use uv for installs", "tests run with pytest -n 2"):
        subprocess.run(
            command + ["memory", "add", "--type", "preference", "--summary", summary],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return run_id


def _time(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    # doctor exits 1 when an endpoint or store is unhealthy: its time still counts
    subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    print(machine_speed("before"))
    with tempfile.TemporaryDirectory(prefix="lessonloop-startup-") as tmp:
        env = dict(
            os.environ,
            LESSONLOOP_HOME=str(Path(tmp) / "home"),
            LESSONLOOP_USER_HOME=str(Path(tmp) / "user"),
            XDG_CACHE_HOME=str(Path(tmp) / "cache"),
        )
        run_id = _prepare(Path(tmp), env)
        ll = lessonloop_command()
        commands = {
            "python -S -c pass": [sys.executable, "-S", "-c", "pass"],
            "--help": ll + ["--help"],
            "status": ll + ["status", run_id],
            "status --json": ll + ["status", run_id, "--json"],
            "show": ll + ["show", run_id],
            "list": ll + ["list"],
            "scenarios": ll + ["scenarios"],
            "usage": ll + ["usage"],
            "memory list": ll + ["memory", "list"],
            "memory search": ll + ["memory", "search", "pytest"],
            "doctor": ll + ["doctor"],
        }
        for command in commands.values():  # warm the file cache, .pyc files and the help cache
            _time(command, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name, command in commands.items():
                times[name].append(_time(command, env))
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    bare, help_ms = medians["python -S -c pass"], medians["--help"]
    print(
        f"{'command':<18} {'median ms':>9} {'min':>5} {'max':>5} {'x --help':>8} "
        f"{'x python -S':>11}  target ≤ {TARGET_MS} ms"
    )
    for name, values in times.items():
        ms = medians[name]
        check = "" if name == "python -S -c pass" else verdict(ms, TARGET_MS)
        print(
            f"{name:<18} {ms:>9.0f} {min(values) * 1000:>5.0f} {max(values) * 1000:>5.0f} "
            f"{ms / help_ms:>8.2f} {ms / bare:>11.1f}  {check}"
        )
    print(f"{rounds} rounds, each command once per round in turn")
    print(machine_speed("after"))


if __name__ == "__main__":
    main()
