"""Runs and everything a generation leaves behind: reads, and the one write per generation."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, replace
from typing import Any

from .. import canonical
from ..errors import LessonloopError, NotFoundError
from ..timeutil import utc_now
from .db import Store

# the decisions that make a generation's strategy the run's best: a scenario or task run's
# advance, an evolve run's new champion, a mission's step after which the verifier passed
ADVANCED = ("advance", "champion", "verified")


class RunExists(LessonloopError):
    """A run with this id was created by another process between our look and our insert."""


@dataclass
class GenerationRecord:
    """Everything one generation persists, written in a single transaction."""

    run_id: str
    generation_index: int
    attempts: int
    strategy: dict | None
    mean_score: float
    incumbent_score: float | None
    mean_delta: float | None
    best_score: float
    elo: float
    wins: int
    losses: int
    ties: int
    quarantined: int
    gate_decision: str
    evaluator_epoch: str
    dimensions: dict
    context: dict
    analysis: str
    duration_seconds: float
    created_at: str
    matches: list[dict] = field(default_factory=list)
    role_calls: list[dict] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    validated_score: float | None = None  # the incumbent's mean on the validation seeds
    screenings: list[dict] = field(default_factory=list)  # candidates screened before the gate


def create_run(
    store: Store,
    *,
    run_id: str,
    scenario: str,
    scenario_ref: str,
    target_generations: int,
    provider: str,
    seed: int,
    config: dict,
    kind: str = "scenario",
) -> None:
    """Insert the run's row (``kind``: "scenario", or "task" for an agent task's rounds;
    evolve runs and missions get theirs from ``run_kinds``). The check and the insert share one write transaction (BEGIN
    IMMEDIATE), so of two processes starting the same id at once exactly one creates it and
    the other is told so in one line."""
    now = utc_now()
    with store.transaction() as conn:
        if conn.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone():
            raise RunExists(
                f"run {run_id!r} was just created by another process (the same id "
                f"started twice at once); follow it with `lessonloop watch {run_id}`"
            )
        conn.execute(
            "INSERT INTO runs (run_id, scenario, scenario_ref, target_generations, status, "
            "provider, seed, config_json, created_at, updated_at, kind) "
            "VALUES (?, ?, ?, ?, 'created', ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                scenario,
                scenario_ref,
                target_generations,
                provider,
                seed,
                canonical.dumps(config),
                now,
                now,
                kind,
            ),
        )


def find_run(store: Store, run_id: str) -> sqlite3.Row | None:
    return store.query_one("SELECT * FROM runs WHERE run_id = ?", (run_id,))


def get_run(store: Store, run_id: str) -> sqlite3.Row:
    row = find_run(store, run_id)
    if row is None:
        raise NotFoundError(f"unknown run id {run_id!r}", listing="list_runs")
    return row


def list_runs(store: Store) -> list[sqlite3.Row]:
    return store.query("SELECT * FROM runs ORDER BY created_at DESC, run_id DESC")


def set_status(
    store: Store,
    run_id: str,
    status: str,
    reason: str | None = None,
    target_generations: int | None = None,
) -> None:
    from ..safety.redact import redact  # writes only: compiling its patterns costs reads time

    reason = redact(reason) if reason else reason
    with store.transaction() as conn:
        conn.execute(
            "UPDATE runs SET status = ?, stop_reason = ?, updated_at = ?, "
            "target_generations = COALESCE(?, target_generations) WHERE run_id = ?",
            (status, reason, utc_now(), target_generations, run_id),
        )


def generations(store: Store, run_id: str) -> list[sqlite3.Row]:
    return store.query(
        "SELECT * FROM generations WHERE run_id = ? ORDER BY generation_index", (run_id,)
    )


def get_generation(store: Store, run_id: str, generation_index: int) -> sqlite3.Row | None:
    return store.query_one(
        "SELECT * FROM generations WHERE run_id = ? AND generation_index = ?",
        (run_id, generation_index),
    )


def validated(generations: list) -> bool:
    """True for a run whose generations carry validated scores (scenario runs since
    migration 8); task runs and older runs have only tournament means."""
    return bool(generations) and _get(generations[-1], "validated_score") is not None


def best_generation(generations: list) -> sqlite3.Row | None:
    """The generation whose strategy is the run's best.

    With validated scores: the latest advanced generation, whose strategy is the incumbent
    (it beat every strategy before it through the gate); choosing by validated score would
    use the validation seeds to choose, and flatter. Otherwise: the advanced generation with
    the highest mean score (the earliest on ties)."""
    advanced = [g for g in generations if g["gate_decision"] in ADVANCED]
    if validated(generations):
        return advanced[-1] if advanced else None
    return max(advanced, key=lambda g: (g["mean_score"], -g["generation_index"]), default=None)


def best_score(generations: list) -> float:
    """The validated score of the run's best strategy (its tournament mean for runs without
    validated scores)."""
    if validated(generations):
        return generations[-1]["best_score"]
    best = best_generation(generations)
    return best["mean_score"] if best is not None else 0.0


def tournament_score(generations: list) -> float | None:
    """The tournament mean of the best strategy when it advanced (None: carried over)."""
    best = best_generation(generations)
    return best["mean_score"] if best is not None else None


def validation_matches(store: Store, run_id: str) -> list[sqlite3.Row]:
    """Every validation match of a run, in the order played."""
    return store.query(
        "SELECT * FROM matches WHERE run_id = ? AND phase = 'validation' ORDER BY id", (run_id,)
    )


def _get(row, key: str):
    try:
        return row[key]
    except (IndexError, KeyError):
        return None


def current_elo(generations: list) -> float | None:
    return generations[-1]["elo"] if generations else None


def matches(store: Store, run_id: str, generation_index: int) -> list[sqlite3.Row]:
    return store.query(
        "SELECT * FROM matches WHERE run_id = ? AND generation_index = ? ORDER BY id",
        (run_id, generation_index),
    )


def gate_decisions(store: Store, run_id: str) -> list[sqlite3.Row]:
    return store.query(
        "SELECT * FROM gate_decisions WHERE run_id = ? ORDER BY generation_index, attempt, id",
        (run_id,),
    )


def screenings(store: Store, run_id: str, generation_index: int | None = None) -> list[sqlite3.Row]:
    """Screened candidates in the order played (a run's, or one generation's)."""
    if generation_index is None:
        return store.query(
            "SELECT * FROM screenings WHERE run_id = ? ORDER BY generation_index, attempt, id",
            (run_id,),
        )
    return store.query(
        "SELECT * FROM screenings WHERE run_id = ? AND generation_index = ? ORDER BY attempt, id",
        (run_id, generation_index),
    )


def role_outputs(
    store: Store, run_id: str, generation_index: int | None = None
) -> list[sqlite3.Row]:
    if generation_index is None:
        return store.query("SELECT * FROM role_outputs WHERE run_id = ? ORDER BY id", (run_id,))
    return store.query(
        "SELECT * FROM role_outputs WHERE run_id = ? AND generation_index = ? ORDER BY id",
        (run_id, generation_index),
    )


def provider_calls(store: Store, run_id: str) -> list[sqlite3.Row]:
    return store.query("SELECT * FROM provider_calls WHERE run_id = ? ORDER BY id", (run_id,))


def record_call(
    store: Store,
    run_id: str | None,
    generation_index: int | None,
    attempt: int | None,
    role: str,
    provider: str,
    completion,
    session_id: str | None = None,
) -> None:
    """Put one answered call in the usage ledger now, so a crash cannot hide what it cost. A
    call outside a run (session-end memorize) has no run and names its ``session_id``."""
    record_calls(
        store,
        [(run_id, generation_index, attempt, role, provider, completion)],
        session_id=session_id,
    )


def record_calls(store: Store, calls: list[tuple], session_id: str | None = None) -> None:
    """Put answered calls, each ``record_call``'s arguments after the store, in the ledger in
    one transaction (all of them for ``session_id`` when one is given)."""
    now = utc_now()
    with store.transaction() as conn:
        conn.executemany(
            "INSERT INTO provider_calls (run_id, generation_index, attempt, role, provider, model, "
            "input_tokens, output_tokens, calls, retries, latency_ms, cost, created_at, "
            "session_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    run_id,
                    generation_index,
                    attempt,
                    role,
                    provider,
                    c.model,
                    c.input_tokens,
                    c.output_tokens,
                    c.calls,
                    c.retries,
                    round(c.latency_ms, 3),
                    c.cost,
                    now,
                    session_id,
                )
                for run_id, generation_index, attempt, role, provider, c in calls
            ],
        )


def usage_totals(store: Store, run_id: str) -> dict[str, int]:
    """Calls and tokens a run has spent so far, for its budget."""
    row = store.query_aggregate(
        "SELECT COALESCE(SUM(calls), 0) AS calls, "
        "COALESCE(SUM(COALESCE(input_tokens, 0) + COALESCE(output_tokens, 0)), 0) AS tokens "
        "FROM provider_calls WHERE run_id = ?",
        (run_id,),
    )
    return {"calls": row["calls"], "tokens": row["tokens"]}


def update_config(store: Store, run_id: str, config: dict) -> None:
    with store.transaction() as conn:
        conn.execute(
            "UPDATE runs SET config_json = ?, updated_at = ? WHERE run_id = ?",
            (canonical.dumps(config), utc_now(), run_id),
        )


def save_generation(store: Store, record: GenerationRecord) -> None:
    """Write a generation with its matches, role prompts and outputs and gate decisions
    atomically (the calls' usage is already in the ledger).

    Everything is redacted first: role prompts and outputs, analyses and match errors are
    free text that may quote a secret.
    """
    now = utc_now()
    redacted = _redacted(record)
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO generations (run_id, generation_index, status, attempts, strategy_json, "
            "mean_score, incumbent_score, mean_delta, best_score, elo, wins, losses, ties, "
            "quarantined, gate_decision, evaluator_epoch, dimensions_json, context_json, analysis, "
            "duration_seconds, created_at, updated_at, validated_score) "
            "VALUES (?, ?, 'completed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                redacted.run_id,
                redacted.generation_index,
                redacted.attempts,
                _dump(redacted.strategy),
                redacted.mean_score,
                redacted.incumbent_score,
                redacted.mean_delta,
                redacted.best_score,
                redacted.elo,
                redacted.wins,
                redacted.losses,
                redacted.ties,
                redacted.quarantined,
                redacted.gate_decision,
                redacted.evaluator_epoch,
                _dump(redacted.dimensions),
                _dump(redacted.context),
                redacted.analysis,
                redacted.duration_seconds,
                redacted.created_at,
                now,
                redacted.validated_score,
            ),
        )
        conn.executemany(
            "INSERT INTO matches (run_id, generation_index, attempt, phase, side, seed, score, "
            "dimensions_json, summary, error, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    redacted.run_id,
                    redacted.generation_index,
                    m["attempt"],
                    m["phase"],
                    m["side"],
                    m["seed"],
                    m["score"],
                    _dump(m["dimensions"]),
                    m.get("summary"),
                    m.get("error"),
                    m["duration_ms"],
                )
                for m in redacted.matches
            ],
        )
        conn.executemany(
            "INSERT INTO role_outputs (run_id, generation_index, attempt, role, prompt, output, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    redacted.run_id,
                    redacted.generation_index,
                    c["attempt"],
                    c["role"],
                    c["prompt"],
                    c["output"],
                    c["created_at"],
                )
                for c in redacted.role_calls
            ],
        )
        conn.executemany(
            "INSERT INTO gate_decisions (run_id, generation_index, attempt, decision, rationale, "
            "mean_delta, wins, losses, holdout_delta, created_at, pairs, t_statistic, "
            "lower_bound, holdout_pairs, holdout_lower_bound, strategy_json) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    redacted.run_id,
                    redacted.generation_index,
                    d["attempt"],
                    d["decision"],
                    d["rationale"],
                    d.get("mean_delta"),
                    d.get("wins", 0),
                    d.get("losses", 0),
                    d.get("holdout_delta"),
                    d["created_at"],
                    d.get("pairs"),
                    _finite(d.get("t_statistic")),
                    _finite(d.get("lower_bound")),
                    d.get("holdout_pairs"),
                    _finite(d.get("holdout_lower_bound")),
                    _dump(d.get("strategy")),
                )
                for d in redacted.decisions
            ],
        )
        conn.executemany(
            "INSERT INTO screenings (run_id, generation_index, attempt, candidate, strategy_json, "
            "mean_delta, pairs, chosen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    redacted.run_id,
                    redacted.generation_index,
                    c["attempt"],
                    c["candidate"],
                    _dump(c["strategy"]),
                    _finite(c.get("mean_delta")),
                    c["pairs"],
                    int(bool(c.get("chosen"))),
                )
                for c in redacted.screenings
            ],
        )
        conn.execute(
            "UPDATE runs SET status = 'running', updated_at = ? WHERE run_id = ?",
            (now, redacted.run_id),
        )


def _redacted(record: GenerationRecord) -> GenerationRecord:
    """A copy whose free text (prompts, outputs, analysis, errors, rationales) is redacted.

    A text that occurs more than once (the analysis is also the analyst's output; matches
    repeat summaries) is redacted once."""
    from ..safety.redact import redact, redact_obj  # writes only, as in set_status

    done: dict[str, str] = {}

    def clean(text):
        if not isinstance(text, str):
            return text
        if text not in done:
            done[text] = redact(text)
        return done[text]

    return replace(
        record,
        strategy=redact_obj(record.strategy),
        analysis=clean(record.analysis),
        matches=[
            {**m, "summary": clean(m.get("summary")), "error": clean(m.get("error"))}
            for m in record.matches
        ],
        role_calls=[
            {**c, "prompt": clean(c["prompt"]), "output": clean(c["output"])}
            for c in record.role_calls
        ],
        decisions=[
            {**d, "rationale": clean(d["rationale"]), "strategy": redact_obj(d.get("strategy"))}
            for d in record.decisions
        ],
        screenings=[{**c, "strategy": redact_obj(c["strategy"])} for c in record.screenings],
    )


def _finite(value: float | None) -> float | None:
    """A statistic as stored: an infinite or undefined one is NULL (JSON has no infinity)."""
    import math

    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _dump(value: Any) -> str | None:
    return None if value is None else canonical.dumps(value)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
