"""Runs as people and agents inspect them: status, list, show, watch, export.

Apart from ``runs.py`` (which starts runs in child processes) so that ``lessonloop status`` and
``list`` import nothing for starting processes: they are the commands people type most. The
store is opened read-only, so these work on a read-only copy and never block a run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .limits import check_limit

if TYPE_CHECKING:
    from sqlite3 import Row

    from ..store.db import Store

EXPORT_FORMATS = ("json", "training-jsonl")
GATE_FIELDS = (  # of each gate decision, as ``show`` gives them
    "attempt",
    "decision",
    "rationale",
    "mean_delta",
    "wins",
    "losses",
    "holdout_delta",
    "pairs",
    "t_statistic",
    "lower_bound",
    "holdout_pairs",
    "holdout_lower_bound",
)
MATCH_FIELDS = ("attempt", "phase", "side", "seed", "score", "error")  # of each match in ``show``


@contextlib.contextmanager
def _runs_store() -> Iterator[Store | None]:
    """The store, read-only: None while nothing has run here."""
    from ..store import open_store

    try:
        store = open_store(readonly=True)
    except NotFoundError:
        yield None
        return
    with store:
        yield store


@contextlib.contextmanager
def _run_store(run_id: str) -> Iterator[Store]:
    """The store, read-only, for the run ``run_id``: while nothing has run here, that run is
    unknown (NotFoundError)."""
    with _runs_store() as store:
        if store is None:
            raise NotFoundError(f"unknown run id {run_id!r} (no lessonloop database here yet)")
        yield store


def status(run_id: str) -> dict[str, Any]:
    """A run's state and every generation (run-status-v1 plus the generations)."""
    from ..loop.status import load_run, status_document
    from .run_kinds import details

    with _run_store(run_id) as store:
        run, generations = load_run(store, run_id)
        extra = details(store, run)
    return {**status_document(run, generations), **(extra or {})}


def list_runs(limit: int | None = None) -> list[dict[str, Any]]:
    """Runs, newest first (the first ``limit``), each as its run-status-v1 run object."""
    from ..loop.status import run_object
    from ..store import runs as run_store

    check_limit(limit)
    with _runs_store() as store:
        if store is None:
            return []
        return [
            run_object(run, run_store.generations(store, run["run_id"]))
            for run in run_store.list_runs(store)[:limit]
        ]


def unstarted_runs(known: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs asked for but killed at start-up, before their row (ids not in ``known``), newest
    first: listed so that their ids can be resumed."""
    from ..loop import request

    return request.pending({run["run_id"] for run in known})


def show(run_id: str, generation: int | str = "latest") -> dict[str, Any]:
    """One generation of a run (an index, ``latest`` or ``best``: the incumbent, from the latest
    advance) with its strategy, gate decisions and matches: ``{run, generation,
    runtime_session}`` (run-show-v1)."""
    from ..loop.status import generation_object, load_run, run_object
    from ..promotion import records
    from ..store import runs as run_store
    from .run_kinds import MEANINGS, generation_details

    with _run_store(run_id) as store:
        run, generations = load_run(store, run_id)
        chosen = _select(run_id, generations, generation)
        index = chosen["generation_index"]
        extra = generation_details(store, run, index)  # an evolve candidate, a mission step
        decisions = [
            decision
            for decision in run_store.gate_decisions(store, run_id)
            if decision["generation_index"] == index
        ]
        match_rows = run_store.matches(store, run_id, index)
        promotions = records.listing(store.conn, run_id=run_id, generation_index=index)
    shown = generation_object(chosen, with_strategy=True)
    shown["promotions"] = promotions  # candidates this generation proposed, and their fate
    shown["gate_decisions"] = [
        {name: decision[name] for name in GATE_FIELDS} for decision in decisions
    ]
    shown["matches"] = [{name: match[name] for name in MATCH_FIELDS} for match in match_rows]
    shown.update(extra or {})
    document = {"run": run_object(run, generations), "generation": shown, "runtime_session": None}
    if run["kind"] in MEANINGS:
        document["field_meanings"] = MEANINGS[run["kind"]]
    return document


def _select(run_id: str, generations: list[Row], which: int | str) -> Row:
    from ..store.runs import best_generation

    if not generations:
        raise NotFoundError(f"run {run_id!r} has no completed generation yet")
    if which == "best":
        chosen = best_generation(generations)
        if chosen is None:
            raise NotFoundError(f"run {run_id!r} has no advanced generation yet")
        return chosen
    if which == "latest":
        return generations[-1]
    for row in generations:
        if row["generation_index"] == which:
            return row
    if not isinstance(which, int):
        raise UsageError(
            f"is a generation index, latest or best, not {which!r}", field="generation"
        )
    raise NotFoundError(
        f"run {run_id!r} has no generation {which} (completed: 1..{len(generations)})"
    )


class RunWatch:
    """A run's events as they come (iterate over it) until it is not running; then
    ``unfinished`` tells whether it stopped before it ended (it can be resumed)."""

    def __init__(self, run_id: str, interval: float = 0.25):
        import time

        from ..loop.runlock import is_active
        from ..loop.status import load_run, run_object

        self.run_id = run_id
        self.interval = max(0.01, interval)
        self.last: dict[str, Any] | None = None
        while True:
            try:
                with _run_store(run_id) as store:
                    self.run = run_object(*load_run(store, run_id))
                return
            except NotFoundError:
                # a run just started holds its lock before its row is stored: wait for it
                if not is_active(paths.run_dir(run_id)):
                    raise
                time.sleep(self.interval)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        import time

        from ..loop.events import read_events
        from ..loop.runlock import is_active

        run_dir = paths.run_dir(self.run_id)
        events_path = run_dir / "events.ndjson"
        offset = 0
        while True:
            events, offset = read_events(events_path, offset)
            if not events and not is_active(run_dir):
                events, offset = read_events(events_path, offset)  # written just before unlock
                if not events:
                    return
            for event in events:
                self.last = event
                yield event
            if not events:
                time.sleep(self.interval)

    @property
    def unfinished(self) -> bool:
        """Whether the last event seen leaves the run short of its end."""
        last = self.last
        if last is None:  # no event (an evolve run or mission stored before they had events)
            return self.run["status"] not in ("completed", "succeeded")
        return not last["event"].startswith("run_") or last["event"] in (
            "run_started",
            "run_resumed",
        )


def export(run_id: str, format: str = "json") -> str:
    """A run as text: everything as one JSON document (``json``), or one prompt/completion
    record per generation it kept (``training-jsonl``)."""
    from ..loop.status import load_run
    from ..training.completions import run_records

    if format not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format {format!r}; use json or training-jsonl")
    from .run_kinds import KINDS, details

    with _run_store(run_id) as store:
        run, generations = load_run(store, run_id)
        if format == "json":
            document = _export_document(store, run, generations)
            document.update(details(store, run, with_pairs=True) or {})
            return json.dumps(document, indent=2) + "\n"
        if run["kind"] in KINDS:
            raise UsageError(
                f"run {run_id} is an {run['kind']} run: it keeps no model prompt and answer to "
                "train on (export it with --format json)"
                if run["kind"] == "evolve"
                else f"run {run_id} is a mission: its steps' prompts are not stored, so it has "
                "no training records (export it with --format json)"
            )
        records = run_records(store, run_id, generations)
    return "".join(json.dumps(record, sort_keys=True) + "\n" for record in records)


def _export_document(store: Store, run: Row, generations: list[Row]) -> dict[str, Any]:
    from ..loop.status import generation_object, run_object
    from ..promotion import records
    from ..store import runs as run_store

    decisions = run_store.gate_decisions(store, run["run_id"])
    document: dict[str, Any] = {"run": run_object(run, generations), "generations": []}
    for row in generations:
        index = row["generation_index"]
        exported = generation_object(row, with_strategy=True)
        exported["gate_decisions"] = [
            dict(decision) for decision in decisions if decision["generation_index"] == index
        ]
        exported["matches"] = [
            _match_object(match) for match in run_store.matches(store, run["run_id"], index)
        ]
        exported["role_outputs"] = [
            dict(output) for output in run_store.role_outputs(store, run["run_id"], index)
        ]
        exported["promotions"] = [
            {**candidate, "trial_scores": records.trials(store.conn, candidate["id"])}
            for candidate in records.listing(
                store.conn, run_id=run["run_id"], generation_index=index
            )
        ]
        document["generations"].append(exported)
    return document


def _match_object(row: Row) -> dict[str, Any]:
    match = dict(row)
    match["dimensions"] = json.loads(match.pop("dimensions_json"))
    return match
