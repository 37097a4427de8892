"""``report.html`` of a 300-generation offline run: time to write it and its size.

Target (issue 21): written in ≤ 0.5 s and ≤ 1 MB, median of 5. Side by side, in the same
rounds (shared machines drift): the floor — opening the store and reading the rows the page is
made of (run, generations, gate decisions) without rendering anything — and, as whole
processes, ``lessonloop report RUN`` beside ``lessonloop status RUN`` (the same start-up and
store, no page).

The 300-generation run takes a few minutes offline, so it is made once in a home kept under
the system's temporary folder and reused (``--home DIR`` to choose it). Run from a worktree
with ``PYTHONPATH=src`` to time that worktree's source. Usage: python bench/report.py [ROUNDS]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import lessonloop_command, machine_speed, timed_process, verdict

TARGET_S = 0.5
TARGET_BYTES = 1_000_000
GENERATIONS = 300
RUN_ID = "run-bench-report-300"


def ensure_run(home: Path, env: dict) -> None:
    """Make the 300-generation run once; a home that has it is reused as it is."""
    os.environ["LESSONLOOP_HOME"] = str(home)
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    if (home / "lessonloop.db").exists():
        with open_store(home, readonly=True) as store:
            run = run_store.find_run(store, RUN_ID)
            done = len(run_store.generations(store, RUN_ID)) if run else 0
        if run is not None and done == GENERATIONS and run["status"] == "completed":
            return
    print(f"making the {GENERATIONS}-generation offline run once in {home} (a few minutes)")
    command = lessonloop_command() + [
        "run", "grid_ctf", "--iterations", str(GENERATIONS), "--run-id", RUN_ID, "--json",
    ]  # fmt: skip
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)


def _read_rows(home: Path) -> None:
    """The floor: the store opened and the rows of the page read, nothing rendered."""
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    with open_store(home, readonly=True) as store:
        run_store.get_run(store, RUN_ID)
        run_store.generations(store, RUN_ID)
        run_store.gate_decisions(store, RUN_ID)


def _write_report(home: Path) -> int:
    """The work ``lessonloop report`` does after start-up; returns the page's size in bytes."""
    from lessonloop.report import write_run_report
    from lessonloop.store import open_store

    with open_store(home, readonly=True) as store:
        return write_run_report(store, RUN_ID).stat().st_size


def _median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"


def prepared(description: str) -> tuple[int, Path, dict]:
    """The command line (rounds, --home) of this bench and of bench/serve.py, with the
    300-generation run made once in that home: (rounds, home, environment)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("rounds", nargs="?", type=int, default=5)
    parser.add_argument(
        "--home",
        type=Path,
        default=Path(tempfile.gettempdir()) / "lessonloop-bench-report",
        help="where the 300-generation run is kept between benchmark runs",
    )
    arguments = parser.parse_args()
    home = arguments.home.resolve()
    env = dict(os.environ, LESSONLOOP_HOME=str(home))
    ensure_run(home, env)
    return arguments.rounds, home, env


def main() -> None:
    rounds, home, env = prepared(__doc__.splitlines()[0])
    print(machine_speed("before"))
    _write_report(home)  # imports and the page cache warm, as in every later round
    floor, work, report_process, status_process = [], [], [], []
    size = 0
    command = lessonloop_command()
    for _ in range(rounds):
        started = time.perf_counter()
        _read_rows(home)
        floor.append(time.perf_counter() - started)
        started = time.perf_counter()
        size = _write_report(home)
        work.append(time.perf_counter() - started)
        elapsed, _, code = timed_process(command + ["report", RUN_ID], env)
        if code != 0:
            raise SystemExit("lessonloop report failed")
        report_process.append(elapsed)
        elapsed, _, code = timed_process(command + ["status", RUN_ID], env)
        status_process.append(elapsed)
    median_work = statistics.median(work)
    print(f"report.html of a {GENERATIONS}-generation run, {rounds} rounds:")
    print(f"  floor (open the store, read run + generations + gate decisions): {_median_ms(floor)}")
    print(
        f"  write_run_report (read, render, write): {_median_ms(work)}; target ≤ {TARGET_S * 1000:.0f} ms: {verdict(median_work, TARGET_S)}"
    )
    print(
        f"  size {size / 1e6:.3f} MB; target ≤ {TARGET_BYTES / 1e6:.0f} MB: {verdict(size, TARGET_BYTES)}"
    )
    print(f"  process `lessonloop report {RUN_ID}`: {_median_ms(report_process)}")
    print(
        f"  process `lessonloop status {RUN_ID}` (start-up and store, no page): {_median_ms(status_process)}"
    )
    print(machine_speed("after"))


if __name__ == "__main__":
    sys.exit(main())
