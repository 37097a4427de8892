"""One run's life, the same for every kind of run (a scenario's generations, a task's rounds).

A run holds its lock for as long as it runs (SIGTERM counts as Ctrl-C), reads what earlier
sessions stored, repairs the files and events a crash left unwritten, says ``run_started`` or
``run_resumed``, then plays its steps. Every provider call goes through the run's budget
(``--max-calls``/``--max-tokens``, counted from the run's whole ledger, so a resumed run keeps
what earlier sessions spent) and onto the ledger: a call that reached an endpoint at once, a
free in-process one with its step's transaction. However the steps end, the run ends the same
way: Ctrl-C leaves it ``stopped`` and resumable, a spent budget or an endpoint that is down
stops it cleanly (resumable), anything else fails it; then ``report.md`` and the
``run_<status>`` event are written.

Each kind fills in the steps (``RunLifecycle`` subclasses: ``loop/runner.Runner``,
``tasks/improve.TaskRun``); this module holds no knowledge of either.
"""

from __future__ import annotations

import fcntl
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from .. import paths
from ..errors import EndpointUnavailable, LessonloopError, Stopped, unwritable
from ..providers.base import Completion
from ..report import write_run_report
from ..store import runs as run_store
from ..store.db import Store
from . import artifacts
from .budget import Budget, BudgetSpent, Metered
from .events import EventLog, read_events

LOCK_WAIT_SECONDS = 0.5
_HELD_LOCKS: set = set()  # this process's run locks, closed in every child it forks


def _close_inherited_locks() -> None:
    """In a child forked without exec (a match worker): close its copies of the run locks (a
    child that execs never has them: Python opens files non-inheritable). The lock stays the
    parent's (flock belongs to the open file, and the parent keeps it open), but when the
    parent dies the lock goes with it: orphaned workers no longer keep a crashed run looking
    ``running`` to ``status`` and ``watch`` until they exit."""
    for handle in list(_HELD_LOCKS):
        with suppress(OSError):
            handle.close()  # the child's descriptor only (the pid was flushed before)
    _HELD_LOCKS.clear()


os.register_at_fork(after_in_child=_close_inherited_locks)


class RunStopped(Stopped):
    """The user interrupted the run; it is marked ``stopped`` and can be resumed."""


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run's lock file; the OS releases it if this process dies.

    A brief wait covers ``watch`` or ``status`` probing the lock at the same instant.
    """
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        handle = open(run_dir / "run.lock", "a+")
    except OSError as exc:
        raise unwritable(run_dir / "run.lock", exc) from None
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.close()
                raise LessonloopError(
                    f"run {run_dir.name} is already running in another process"
                ) from None
            time.sleep(0.02)
    try:
        with suppress(OSError):  # the pid is for people; the lock works without it (full disk)
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
        _HELD_LOCKS.add(handle)
        yield
    finally:
        _HELD_LOCKS.discard(handle)
        handle.close()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (a service manager, ``kill``) stops the run as Ctrl-C does: resumable."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_summary(store: Store, run_id: str) -> dict:
    """The ``run --json`` shape: ``best_score`` is the best strategy's validated score, and
    ``tournament_score`` its mean in the tournament where it advanced."""
    run = run_store.get_run(store, run_id)
    done = run_store.generations(store, run_id)
    return {
        "run_id": run_id,
        "scenario": run["scenario"],
        "generations_executed": len(done),
        "best_score": run_store.best_score(done),
        "tournament_score": run_store.tournament_score(done),
        "current_elo": run_store.current_elo(done),
        "status": run["status"],
    }


def completed_payload(generation: Any) -> dict:
    """The ``generation_completed`` event, built from the stored row."""
    return {
        "generation": generation["generation_index"],
        "mean_score": generation["mean_score"],
        "incumbent_score": generation["incumbent_score"],
        "mean_delta": generation["mean_delta"],
        "gate_decision": generation["gate_decision"],
        "elo": generation["elo"],
        "best_score": generation["best_score"],
        "validated_score": generation["validated_score"],
        "attempts": generation["attempts"],
        "quarantined": generation["quarantined"],
    }


class RunLifecycle:
    """What every run does around its steps; a kind of run fills in the hooks below.

    Hooks: ``prepare(done)`` (read the run's settings and build its providers, through
    ``meter``), ``restore(done)`` (rebuild the state from the stored steps), ``start_payload``,
    ``play()`` (the steps; each ends with one transaction that calls ``record_calls``),
    ``outcome()`` (the status and reason once ``play`` returned), ``summary(reason)``,
    ``resume_hint(flag)`` (how to continue once a budget is spent), ``release()``.
    ``max_calls``/``max_tokens`` are the run's budgets; ``defers_writes``: derived files and
    events wait for the next matches (``write_one`` while waiting), else they are written at once.
    """

    defers_writes = False
    max_calls: int | None = None
    max_tokens: int | None = None

    def __init__(self, store: Store, run_id: str, observer: Callable[[dict], None] | None = None):
        self.store = store
        self.run_id = run_id
        self.run = run_store.get_run(store, run_id)
        self.run_dir = paths.run_dir(run_id)
        self.observer: Callable[[dict], None] = observer or (lambda event: None)
        # derived files and events waiting to be written while the next matches play
        self.deferred: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self.deferring = False
        self.unrecorded: list[tuple[Any, ...]] = []  # in-process calls, not yet in the ledger
        self.position: tuple[int | None, int | None] = (None, None)  # (step, attempt) of calls

    # the hooks -------------------------------------------------------------------------------
    def prepare(self, done: list) -> None:
        """Read the run's settings and build its providers (``meter`` them)."""

    def restore(self, done: list) -> None:
        """Rebuild the state the next step starts from out of the stored steps."""

    def start_payload(self, done: list) -> dict:
        raise NotImplementedError

    def play(self) -> None:
        raise NotImplementedError

    def outcome(self) -> tuple[str, str | None]:
        return "completed", None

    def summary(self, reason: str | None = None) -> dict:
        return run_summary(self.store, self.run_id)

    def resume_hint(self, flag: str) -> str:
        return f"continue with `lessonloop resume {self.run_id} {flag} N`"

    def release(self) -> None:
        """Free what ``prepare`` or ``play`` holds (a match pool), however the run ends."""

    def repaired(self, generation: Any) -> None:
        """Rewrite what a step's files lost in a crash after its commit (its artifacts)."""
        index = generation["generation_index"]
        if not artifacts.has_generation_artifacts(self.run_dir, index):
            artifacts.write_generation(
                self.run_dir, generation, run_store.matches(self.store, self.run_id, index)
            )

    # the life --------------------------------------------------------------------------------
    def execute(self) -> dict:
        """Run the remaining steps and return the summary (a spent budget included); Ctrl-C
        raises ``RunStopped``, anything else that went wrong is raised after the run is marked."""
        with run_lock(self.run_dir), sigterm_as_interrupt():
            self.events = EventLog(self.run_dir / "events.ndjson")
            done = run_store.generations(self.store, self.run_id)
            self.budget = Budget(
                self.max_calls,
                self.max_tokens,
                spent=run_store.usage_totals(self.store, self.run_id),
                hint=self.resume_hint,
            )
            self.prepare(done)
            done = run_store.generations(self.store, self.run_id)
            self._repair(done)
            self.restore(done)
            self._emit(
                "run_resumed" if done or self.run["status"] != "created" else "run_started",
                **self.start_payload(done),
            )
            run_store.set_status(self.store, self.run_id, "running")
            self.deferring = self.defers_writes
            try:
                self.play()
                self.close_files(raise_errors=True)
            except KeyboardInterrupt:
                self.close_files(raise_errors=False)
                self._finish("stopped", "interrupted by the user")
                raise RunStopped(
                    f"run {self.run_id} interrupted; continue with `lessonloop resume {self.run_id}`"
                ) from None
            except BudgetSpent as exc:  # a limit the user set: a clean stop, not a failure
                self.close_files(raise_errors=True)
                self._finish("stopped", exc.message)
                return self.summary(exc.message)
            except EndpointUnavailable as exc:  # a server that is down: nothing is wrong here
                self.close_files(raise_errors=False)
                down = f"{exc.message}: `lessonloop resume {self.run_id}`"
                self._finish("stopped", down)
                raise EndpointUnavailable(down) from None
            except LessonloopError as exc:
                self.close_files(raise_errors=False)
                self._finish("failed", exc.message)
                raise
            except Exception as exc:
                self.close_files(raise_errors=False)
                self._finish("failed", f"{exc.__class__.__name__}: {exc}")
                raise
            finally:
                self.release()
                self.close_files(raise_errors=False)
            status, reason = self.outcome()
            self._finish(status, reason)
        return self.summary(reason)

    def _repair(self, done: list) -> None:
        """After a crash between a step's commit and its files, write what is missing."""
        events, _ = read_events(self.events.path)
        logged = {
            e["payload"].get("generation") for e in events if e["event"] == "generation_completed"
        }
        for generation in done:
            self.repaired(generation)
            if generation["generation_index"] not in logged:
                self._emit("generation_completed", **completed_payload(generation), recovered=True)

    def _finish(self, status: str, reason: str | None) -> None:
        self.record_calls()
        run_store.set_status(self.store, self.run_id, status, reason)
        self.run = run_store.get_run(self.store, self.run_id)
        from ..promotion import records

        artifacts.write_report(
            self.run_dir,
            self.run,
            run_store.generations(self.store, self.run_id),
            run_store.gate_decisions(self.store, self.run_id),
            records.listing(self.store.conn, run_id=self.run_id),
        )
        write_run_report(self.store, self.run_id, self.run_dir)
        self._emit(f"run_{status}", reason=reason, **run_summary(self.store, self.run_id))

    # events ----------------------------------------------------------------------------------
    def _emit(self, event: str, **payload: object) -> None:
        """Append an event. While steps run with deferred writes, events share their queue, so
        each step's event lands after its artifacts and events keep their order."""
        if self.deferring:
            self.write_later(self._emit_now, event, payload)
        else:
            self._emit_now(event, payload)

    def _emit_now(self, event: str, payload: dict) -> None:
        self.observer(self.events.emit(event, **payload))

    # the budget and the ledger -----------------------------------------------------------------
    def meter(self, providers: dict) -> dict[str, Metered]:
        """Each provider behind the run's budget, every answered call put on the ledger."""
        return {
            role: Metered(provider, self.budget, self._recorder(role, provider))
            for role, provider in providers.items()
        }

    def _recorder(self, role: str, provider: Any) -> Callable[[Completion], None]:
        def record(completion: Completion) -> None:
            self._answered(role, provider, completion)

        return record

    def _answered(self, role: str, provider: Any, completion: Completion) -> None:
        step, attempt = self.position
        call = (self.run_id, step, attempt, role, provider.name, completion)
        if getattr(provider, "remote", False):  # it may have cost money: on record at once
            run_store.record_call(self.store, *call)
        else:  # free and in-process: recorded with its step (or when the run stops)
            self.unrecorded.append(call)

    def record_calls(self) -> None:
        """Put the in-process calls on the ledger (inside the step's transaction)."""
        if self.unrecorded:
            run_store.record_calls(self.store, self.unrecorded)
        self.unrecorded = []

    # derived writes ----------------------------------------------------------------------------
    def write_later(self, write: Callable[..., Any], *args: Any) -> None:
        """Queue a derived-file write or event for the next wait on matches."""
        self.deferred.append((write, args))

    def write_one(self) -> bool:
        """Do the oldest queued write; True while more remain."""
        if self.deferred:
            write, args = self.deferred.popleft()
            write(*args)
        return bool(self.deferred)

    def write_all(self) -> None:
        while self.write_one():
            pass

    def close_files(self, raise_errors: bool) -> None:
        """Write what is still queued, so what follows is written directly.

        After a successful run a failed write is an error; on the way out after another error
        it matters less than the one being reported, and the other writes are still tried.
        """
        self.deferring = False
        if raise_errors:
            self.write_all()
        while self.deferred:
            with suppress(Exception):
                self.write_one()
