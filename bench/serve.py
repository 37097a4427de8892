"""``lessonloop serve``: how soon it answers, how fast the run page's API answer is for a
300-generation run, and what an idle server costs.

Targets (issue 21), medians of 5: ``serve`` answers its first request ≤ 1 s after it is
started; ``GET /api/runs/{id}`` for a 300-generation run ≤ 100 ms; an idle server (a finished
run's page loaded, its event stream ended) uses no measurable CPU; with the pages' streams
held open (a run page's ``follow=1`` stream, the runs page's ``/api/runs-live``: a ``stat`` or
a folder listing a second each) what that costs is printed beside it. Side by side, in the same
rounds: the process ``lessonloop status RUN`` (the CLI's start-up and the same store), and the
use case ``app.inspection.status`` called in this process (the floor of the API answer).

The 300-generation run is the one ``bench/report.py`` makes, in the same home (made here once
when missing; ``--home DIR`` to choose it). Only 127.0.0.1 is spoken to. Run from a worktree
with ``PYTHONPATH=src`` to time that worktree's source. Usage: python bench/serve.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from common import lessonloop_command, machine_speed, timed_process, verdict
from report import GENERATIONS, RUN_ID, prepared

START_TARGET_S = 1.0
ANSWER_TARGET_S = 0.1
IDLE_SECONDS = 5.0


def start_server(env: dict) -> tuple[subprocess.Popen, str, float]:
    """``lessonloop serve --port 0``; returns the process, its address and the seconds from
    the start of the process to its first answer (GET /api/runs)."""
    started = time.perf_counter()
    process = subprocess.Popen(
        lessonloop_command() + ["serve", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    url = process.stdout.readline().split()[-1].rstrip("/")
    process.stdout.readline()  # the token
    with urllib.request.urlopen(f"{url}/api/runs", timeout=30) as answer:
        answer.read()
    return process, url, time.perf_counter() - started


def stop(process: subprocess.Popen) -> None:
    process.send_signal(2)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def fetch_seconds(url: str) -> tuple[float, int]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=30) as answer:
        size = len(answer.read())
    return time.perf_counter() - started, size


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def idle_cpu_seconds(pid: int) -> float:
    """The CPU the server uses in ``IDLE_SECONDS`` while nothing new happens."""
    before = cpu_seconds(pid)
    time.sleep(IDLE_SECONDS)
    return cpu_seconds(pid) - before


def open_stream(url: str):
    """An event stream held open as an open page holds it (its answer read as it comes, in
    a thread), until ``close``."""
    answer = urllib.request.urlopen(url, timeout=60)
    threading.Thread(target=_drain, args=(answer,), daemon=True).start()
    return answer


def _drain(answer) -> None:
    try:
        while answer.read1(4096):
            pass
    except (OSError, ValueError, AttributeError):  # closed by the bench
        pass


def status_in_process(home: Path) -> float:
    os.environ["LESSONLOOP_HOME"] = str(home)
    from lessonloop.app.inspection import status

    started = time.perf_counter()
    status(RUN_ID)
    return time.perf_counter() - started


def median_ms(values: list[float]) -> str:
    return (
        f"{statistics.median(values) * 1000:.0f} ms "
        f"(min {min(values) * 1000:.0f}, max {max(values) * 1000:.0f})"
    )


def main() -> None:
    rounds, home, env = prepared(__doc__.splitlines()[0])
    print(machine_speed("before"))
    status_in_process(home)  # imports and the page cache warm
    starts, status_process, answers, floors, pages = [], [], [], [], []
    size = page_size = 0
    idle_cpu = open_cpu = 0.0
    for round_index in range(rounds):
        process, url, elapsed = start_server(env)
        try:
            starts.append(elapsed)
            fetch_seconds(f"{url}/api/runs/{RUN_ID}")  # the server's imports warm
            elapsed, size = fetch_seconds(f"{url}/api/runs/{RUN_ID}")
            answers.append(elapsed)
            elapsed, page_size = fetch_seconds(f"{url}/runs/{RUN_ID}")
            pages.append(elapsed)
            if round_index == 0:  # the finished run's events: the stream ends by itself
                with urllib.request.urlopen(f"{url}/api/runs/{RUN_ID}/events", timeout=60) as sse:
                    events = sse.read().decode().count("\nevent: ")
                idle_cpu = idle_cpu_seconds(process.pid)
                streams = [
                    open_stream(f"{url}/api/runs/{RUN_ID}/events?follow=1&from=end"),
                    open_stream(f"{url}/api/runs-live"),
                ]
                time.sleep(1.0)  # the streams' first looks (the runs list, read once)
                open_cpu = idle_cpu_seconds(process.pid)
                for stream in streams:
                    stream.close()
        finally:
            stop(process)
        floors.append(status_in_process(home))
        elapsed, _, code = timed_process(lessonloop_command() + ["status", RUN_ID], env)
        if code != 0:
            raise SystemExit("lessonloop status failed")
        status_process.append(elapsed)
    start_median = statistics.median(starts)
    answer_median = statistics.median(answers)
    print(f"lessonloop serve, {rounds} rounds, a {GENERATIONS}-generation run:")
    print(
        f"  start to first answer: {median_ms(starts)}; target ≤ {START_TARGET_S * 1000:.0f} ms: "
        f"{verdict(start_median, START_TARGET_S)}"
    )
    print(
        f"  process `lessonloop status {RUN_ID}` (the CLI's start-up): {median_ms(status_process)}"
    )
    print(
        f"  GET /api/runs/{RUN_ID} ({size / 1e3:.0f} kB): {median_ms(answers)}; target ≤ "
        f"{ANSWER_TARGET_S * 1000:.0f} ms: {verdict(answer_median, ANSWER_TARGET_S)}"
    )
    print(f"  app.inspection.status in process (the floor): {median_ms(floors)}")
    print(f"  GET /runs/{RUN_ID}, the page ({page_size / 1e3:.0f} kB): {median_ms(pages)}")
    print(
        f"  idle for {IDLE_SECONDS:.0f} s after the run's event stream ({events} events) ended: "
        f"{idle_cpu * 1000:.0f} ms of CPU"
    )
    print(
        f"  idle for {IDLE_SECONDS:.0f} s with a finished run's page and the runs page open "
        f"(their streams: follow=1, /api/runs-live): {open_cpu * 1000:.0f} ms of CPU"
    )
    print(machine_speed("after"))


if __name__ == "__main__":
    sys.exit(main())
