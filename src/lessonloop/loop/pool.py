"""Matches run in worker processes; a match that overruns its time limit kills its worker.

Each worker leads its own process group, so whatever a scenario spawns dies with it, and
terminal Ctrl-C reaches only the parent, which shuts the workers down cleanly. Workers exit
when the parent disappears (their pipe reaches EOF, and on Linux a parent-death signal).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

from ..errors import LessonloopError
from ..scenarios import code, registry
from ..scenarios.base import check_result


@dataclass
class MatchResult:
    seed: int
    score: float
    dimensions: dict = field(default_factory=dict)
    summary: str | None = None
    error: str | None = None
    duration_ms: float = 0.0


def mean_dimensions(results: list[MatchResult]) -> dict[str, float]:
    """Per-dimension means over the matches that completed."""
    totals: dict[str, list[float]] = {}
    for result in results:
        if result.error is None:
            for key, value in result.dimensions.items():
                totals.setdefault(key, []).append(value)
    return {key: sum(values) / len(values) for key, values in totals.items()}


def mean_score(results: list[MatchResult]) -> float:
    """Mean score over the matches that completed (0 when none did)."""
    scores = [r.score for r in results if r.error is None]
    return sum(scores) / len(scores) if scores else 0.0


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _worker_main(conn: Connection, scenario_ref: str) -> None:
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    scenario = registry.load(scenario_ref)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        job_id, strategy, seed = job
        started = time.perf_counter()
        try:
            if code.is_code(strategy):  # the source runs in the sandbox, never in this worker
                strategy = code.parameters(scenario, strategy, seed)
            outcome: tuple[str, object] = ("ok", check_result(scenario.play(strategy, seed)))
        except Exception as exc:
            outcome = ("error", f"{exc.__class__.__name__}: {exc}")
        try:
            conn.send((job_id, outcome, (time.perf_counter() - started) * 1000))
        except (OSError, ValueError):
            return


class _Worker:
    def __init__(self, context, scenario_ref: str):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, scenario_ref), daemon=True)
        self.process.start()
        child.close()
        self.job: tuple[int, int] | None = None  # (job id, seed) while it plays one
        self.deadline = 0.0

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.process.kill()
        except (OSError, ValueError):
            pass
        self.process.join(timeout=2)
        self.conn.close()


class MatchPool:
    """A small pool of scenario workers with per-match deadlines."""

    def __init__(self, scenario_ref: str, workers: int = 0, timeout: float = 10.0):
        methods = multiprocessing.get_all_start_methods()
        self.context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.scenario_ref = scenario_ref
        self.size = workers or max(1, min(2, os.cpu_count() or 1))
        self.timeout = timeout
        self.workers: list[_Worker] = []

    def _ensure_workers(self, wanted: int) -> None:
        while len(self.workers) < min(self.size, wanted):
            self.workers.append(_Worker(self.context, self.scenario_ref))

    def play(
        self, jobs: list[tuple[dict, int]], while_waiting: Callable[[], bool] | None = None
    ) -> list[MatchResult]:
        """Play (strategy, seed) jobs; results come back in job order.

        While every worker is busy and no result is back, ``while_waiting`` does one unit of
        the caller's own work (returning whether more remains), so that work overlaps the
        matches instead of competing with them for the interpreter.
        """
        results: list[MatchResult | None] = [None] * len(jobs)
        pending = list(enumerate(jobs))
        pending.reverse()
        self._ensure_workers(len(jobs))
        while pending or any(w.job for w in self.workers):
            for index, worker in enumerate(self.workers):
                if worker.job is None and pending:
                    job_id, (strategy, seed) = pending.pop()
                    self._dispatch(index, job_id, strategy, seed)
            if while_waiting is not None and not wait(
                [w.conn for w in self.workers if w.job], timeout=0
            ):
                if not while_waiting():
                    while_waiting = None
                continue
            busy = [w for w in self.workers if w.job is not None]
            remaining = max(0.0, min(w.deadline for w in busy) - time.monotonic())
            ready = wait([w.conn for w in busy], timeout=remaining)
            for worker in busy:
                if worker.conn in ready:
                    self._collect(worker, results)
                elif time.monotonic() >= worker.deadline:
                    assert worker.job is not None  # busy
                    job_id, seed = worker.job
                    results[job_id] = MatchResult(
                        seed,
                        0.0,
                        error=f"timed out after {self.timeout:g}s; worker killed",
                        duration_ms=self.timeout * 1000,
                    )
                    self._replace(worker)
        return results  # type: ignore[return-value]

    def _dispatch(self, index: int, job_id: int, strategy: dict, seed: int) -> None:
        """Send a job; a worker that died while idle is replaced and the job sent again."""
        for _ in range(2):
            worker = self.workers[index]
            try:
                worker.conn.send((job_id, strategy, seed))
            except (OSError, ValueError):
                self._replace(worker)
                continue
            worker.job = (job_id, seed)
            worker.deadline = time.monotonic() + self.timeout
            return
        raise LessonloopError("match workers keep dying before they can start a match")

    def _collect(self, worker: _Worker, results: list[MatchResult | None]) -> None:
        assert worker.job is not None  # only a busy worker has a result to collect
        job_id, seed = worker.job
        try:
            _, outcome, duration = worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(timeout=1)
            code = worker.process.exitcode
            results[job_id] = MatchResult(seed, 0.0, error=f"worker died (exit code {code})")
            self._replace(worker)
            return
        worker.job = None
        status, payload = outcome
        if status == "ok":
            results[job_id] = MatchResult(
                seed,
                payload["score"],
                payload["dimensions"],
                payload["summary"],
                duration_ms=duration,
            )
        else:
            results[job_id] = MatchResult(seed, 0.0, error=payload, duration_ms=duration)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        index = self.workers.index(worker)
        self.workers[index] = _Worker(self.context, self.scenario_ref)

    def close(self) -> None:
        for worker in self.workers:
            try:
                worker.conn.send(None)
            except (OSError, ValueError):
                pass
        for worker in self.workers:
            worker.process.join(timeout=1)
            if worker.process.is_alive():
                worker.kill()
            else:
                worker.conn.close()
        self.workers = []

    def __enter__(self) -> MatchPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
