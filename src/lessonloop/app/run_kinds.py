"""Evolve runs and missions among the runs: the events ``watch`` and the dashboard follow, what
``status``/``show``/``export`` add to the run-status documents for them, and how ``resume``
continues them. Their rows in ``runs``/``generations`` come from ``store/run_kinds.py``."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import UsageError
from ..store.run_kinds import EVOLVE, KINDS, MEANINGS, MISSION

if TYPE_CHECKING:
    from sqlite3 import Row

    from ..loop.events import EventLog
    from ..store.db import Store

__all__ = ["EVOLVE", "KINDS", "MEANINGS", "MISSION", "RunEvents", "details", "generation_details"]

# how each way a run of these kinds ends is told in its event log (as a scenario run's)
END_EVENTS = {
    "completed": "run_completed",
    "succeeded": "run_completed",
    "failed": "run_failed",
    "blocked": "run_failed",
    "stopped": "run_stopped",
}


class RunEvents:
    """The run's ``events.ndjson`` while an evolve run or a mission plays: started or resumed,
    each generation (candidate or step) as it is stored, and how it ended."""

    def __init__(self, store: Store, run_id: str, scenario: str):
        from ..loop.events import EventLog

        self.store, self.run_id, self.scenario = store, run_id, scenario
        folder = paths.run_dir(run_id)
        folder.mkdir(parents=True, exist_ok=True)
        self.log: EventLog = EventLog(folder / "events.ndjson")

    def start(self, target: int | None, new_target: int | None) -> None:
        """``target``: the generations asked for (None: the run's own, or ``new_target`` for
        a new run)."""
        from ..store import runs as run_store

        run = run_store.find_run(self.store, self.run_id)
        done = len(run_store.generations(self.store, self.run_id)) if run else 0
        self.log.emit(
            "run_resumed" if run is not None else "run_started",
            scenario=run["scenario"] if run is not None else self.scenario,
            completed_generations=done,
            target_generations=target or (run["target_generations"] if run else new_target),
        )

    def generation(self, index: int) -> None:
        from ..loop.lifecycle import completed_payload
        from ..store import runs as run_store

        row = run_store.get_generation(self.store, self.run_id, index)
        if row is None:
            return
        decisions = [
            d
            for d in run_store.gate_decisions(self.store, self.run_id)
            if d["generation_index"] == index
        ]
        self.log.emit(
            "generation_completed",
            **completed_payload(row),
            rationale=decisions[-1]["rationale"] if decisions else None,
        )

    def relay(
        self, show: Callable[[dict[str, Any]], None], key: str
    ) -> Callable[[dict[str, Any]], None]:
        """``show`` (the command's own line) followed by the generation's event; ``key`` names
        the index in what is shown (``generation``, ``step_index``)."""

        def both(event: dict[str, Any]) -> None:
            show(event)
            self.generation(int(event[key]))

        return both

    def end(self, error: BaseException | None) -> None:
        """The end event from the run's row (or the error, when it never had one)."""
        from ..loop.lifecycle import run_summary
        from ..store import runs as run_store

        run = run_store.find_run(self.store, self.run_id)
        if run is None:
            self.log.emit("run_failed", reason=str(error) or type(error).__name__)
            return
        status = run["status"]
        name = END_EVENTS.get(status, "run_failed" if error is not None else "run_completed")
        reason = run["stop_reason"] or (str(error) if error is not None else None)
        self.log.emit(name, reason=reason, **run_summary(self.store, self.run_id))


def play(
    store: Store,
    run_id: str,
    scenario: str,
    target: tuple[int | None, int | None],
    body: Callable[[RunEvents], Any],
) -> Any:
    """``body(events)`` between the start and end events of the run's log (``target``: the
    generations asked for and a new run's default, as ``RunEvents.start`` takes them)."""
    events = RunEvents(store, run_id, scenario)
    events.start(*target)
    try:
        result = body(events)
    except BaseException as exc:
        events.end(exc)
        raise
    events.end(None)
    return result


# what the inspection documents add ---------------------------------------------------------------
def _evolve_candidate(
    store: Store, run_id: str, candidate: dict[str, Any], with_pairs: bool
) -> dict[str, Any]:
    from ..evolve import store as rows

    pairs = rows.pairs(store, run_id, candidate["candidate_index"], "gate") if with_pairs else None
    return rows.shown(candidate, pairs)


def evolve_details(store: Store, run_id: str, with_pairs: bool = False) -> dict[str, Any]:
    """The baseline, the champion with its confirmation against the baseline (fresh pairs,
    once the run ended), and each candidate with its receipt (and its pairs)."""
    from ..evolve import store as rows
    from ..report.kind_page import details as kind_details
    from ..report.kind_page import evolve_artifacts

    read = kind_details(store, run_id, EVOLVE) or {}
    found, champion = read["candidates"], read["champion"]
    confirmation = read["confirmation"]
    if confirmation is not None and with_pairs:
        index = champion["candidate_index"]
        confirmation["pairs_measured"] = rows.pairs(store, run_id, index, "confirm")
    artifacts = {name: str(path) for name, path in evolve_artifacts(paths.run_dir(run_id)).items()}
    chained = math.exp(champion["log_gain_vs_baseline"] or 0.0) if champion else None
    return {
        "baseline": {"params": found[0]["params"]} if found else None,
        "champion": None
        if champion is None
        else {
            "generation": champion["candidate_index"],
            "params": champion["params"],
            # the gate's pairs chained from the baseline; the confirmation measures it again
            "estimated_speedup_vs_baseline": chained,
            "confirmation": confirmation,
        },
        "candidates": [_evolve_candidate(store, run_id, c, with_pairs) for c in found],
        "artifacts": artifacts,
    }


def mission_details(store: Store, run_id: str) -> dict[str, Any]:
    """The mission as ``mission show`` gives it: goal, verifier, every step, the diff's path."""
    from ..mission import runner
    from ..mission import store as mission_store

    if mission_store.mission(store, run_id) is None:
        return {}
    return runner.Mission(store, run_id, paths.run_dir(run_id)).summary()


def details(store: Store, run: Row, with_pairs: bool = False) -> dict[str, Any] | None:
    """What an evolve run or mission adds to its documents, under its kind's name, with what
    its generations' fields mean (None for other runs)."""
    kind = run["kind"]
    if kind == EVOLVE:
        found = evolve_details(store, run["run_id"], with_pairs)
    elif kind == MISSION:
        found = mission_details(store, run["run_id"])
    else:
        return None
    return {kind: found, "field_meanings": MEANINGS[kind]}


def generation_details(store: Store, run: Row, index: int) -> dict[str, Any] | None:
    """What ``show`` adds to one generation: the candidate with its receipt and pairs, or the
    step as stored (its proposal, message and the verifier's output)."""
    kind, run_id = run["kind"], run["run_id"]
    if kind == EVOLVE:
        from ..evolve import store as rows

        for candidate in rows.candidates(store, run_id):
            if candidate["candidate_index"] == index:
                return {"candidate": _evolve_candidate(store, run_id, candidate, True)}
        return None
    if kind == MISSION:
        from ..mission import store as mission_store

        for step in mission_store.steps(store, run_id):
            if step["step_index"] == index:
                return {"step": step}
    return None


# resume ------------------------------------------------------------------------------------
def stored_provider(run_id: str | None, kinds: tuple[str, ...] = KINDS) -> str | None:
    """The provider an existing evolve run or mission of ``run_id`` was asked of (``local``:
    the offline tuner), so continuing it without ``--provider`` goes on as it began rather than
    with whatever is configured now; None for a new run."""
    if run_id is None:
        return None
    from ..store import open_store
    from ..store import runs as run_store

    with open_store() as store:
        run = run_store.find_run(store, run_id)
    return str(run["provider"]) if run is not None and run["kind"] in kinds else None


def resume(
    run: Row,
    budgets: dict[str, Any],
    shows: dict[str, Callable[[dict[str, Any]], None]],
) -> dict[str, Any]:
    """Continue an evolve run (its spec file, as ``evolve SPEC --run-id ID``) or a mission (as
    ``mission --run-id ID``, ``--max-calls`` its new budget): with the provider it began with
    (``stored_provider``) and the configured model."""
    kind, run_id = run["kind"], run["run_id"]
    noop: Callable[[dict[str, Any]], None] = lambda event: None  # noqa: E731
    if "max_tokens" in budgets:
        raise UsageError(
            f"run {run_id} ({kind}) has a call budget (--max-calls), not a token budget"
        )
    if kind == EVOLVE:  # --max-calls bounds a model's calls (the offline tuner refuses it)
        from .evolve import evolve

        return evolve(
            Path(run["scenario_ref"]),
            run_id=run_id,
            on_generation=shows.get(kind, noop),
            max_calls=budgets.get("max_calls"),
        )
    from .mission import mission

    return mission(
        None,
        None,
        run_id=run_id,
        max_calls=budgets.get("max_calls"),
        on_step=shows.get(kind, noop),
    )
