"""Evolve runs, candidates and timing pairs in the database (migration 17). A candidate's row
is its receipt: written, with its source's digest, before it is checked or timed."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from ..store.run_kinds import put_provider, sync_evolve
from ..timeutil import utc_now

if TYPE_CHECKING:
    from ..store.db import Store


def run_row(store: Store, run_id: str) -> sqlite3.Row | None:
    return store.query_one("SELECT * FROM evolve_runs WHERE run_id = ?", (run_id,))


def is_scenario_run(store: Store, run_id: str) -> bool:
    return store.query_one("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)) is not None


def create_run(
    store: Store,
    run_id: str,
    name: str,
    spec_path: str,
    spec_digest: str,
    source_digest: str,
    seed: int,
    target: int,
    provider: str = "local",
) -> None:
    now = utc_now()
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO evolve_runs (run_id, name, spec_path, spec_digest, source_digest, seed, "
            "target_generations, status, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
            (run_id, name, spec_path, spec_digest, source_digest, seed, target, now, now),
        )
        sync_evolve(conn, run_id, 0)  # its runs row, in the same transaction
        # who writes its candidates (``local``: the offline tuner), kept for its continuations
        put_provider(conn, run_id, provider)


def update_run(
    store: Store, run_id: str, status: str, stop_reason: str | None, target: int | None = None
) -> None:
    with store.transaction() as conn:
        conn.execute(
            "UPDATE evolve_runs SET status = ?, stop_reason = ?, "
            "target_generations = COALESCE(?, target_generations), updated_at = ? "
            "WHERE run_id = ?",
            (status, stop_reason, target, utc_now(), run_id),
        )
        sync_evolve(conn, run_id, 0)


def candidates(store: Store, run_id: str) -> list[dict]:
    rows = store.query(
        "SELECT * FROM evolve_candidates WHERE run_id = ? ORDER BY candidate_index", (run_id,)
    )
    found = []
    for row in rows:
        item = dict(row)
        item["params"] = json.loads(item.pop("params_json"))
        item["stats"] = json.loads(item.pop("stats_json") or "null")
        found.append(item)
    return found


def add_receipt(
    store: Store,
    run_id: str,
    index: int,
    params: dict,
    source_digest: str,
    spec_digest: str,
    source_path: str,
    rejected: str | None = None,
) -> None:
    """The receipt, before anything runs: what was generated, from which spec. With
    ``rejected`` (the reason a model's answer holds no usable source) the candidate is stored
    rejected in the same statement: a kill can never leave it to be run on resume."""
    now = utc_now()
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO evolve_candidates (run_id, candidate_index, params_json, source_digest, "
            "spec_digest, source_path, status, message, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                index,
                json.dumps(params),
                source_digest,
                spec_digest,
                source_path,
                "received" if rejected is None else "rejected",
                rejected,
                now,
                now,
            ),
        )


def finish(
    store: Store,
    run_id: str,
    index: int,
    *,
    status: str,
    correct: bool | None,
    message: str,
    against: int | None = None,
    speedup: float | None = None,
    bound: float | None = None,
    log_gain: float | None = None,
    champion: bool = False,
    stats: dict | None = None,
    pairs: list[tuple[float, float]] = (),  # type: ignore[assignment]
    phase: str = "gate",
) -> None:
    """A candidate's outcome and its pairs, in one transaction (a kill leaves it unfinished,
    never half-recorded)."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE evolve_candidates SET status = ?, correct = ?, message = ?, against_index = ?, "
            "speedup = ?, speedup_lower_bound = ?, log_gain_vs_baseline = ?, champion = ?, "
            "stats_json = ?, updated_at = ? WHERE run_id = ? AND candidate_index = ?",
            (
                status,
                None if correct is None else int(correct),
                message,
                against,
                speedup,
                bound,
                log_gain,
                int(champion),
                json.dumps(stats) if stats is not None else None,
                utc_now(),
                run_id,
                index,
            ),
        )
        add_pairs(conn, run_id, index, against, phase, pairs)
        sync_evolve(conn, run_id, index)  # the candidate as a generation of the run


def add_pairs(
    conn: sqlite3.Connection,
    run_id: str,
    index: int,
    against: int | None,
    phase: str,
    pairs: list[tuple[float, float]],
) -> None:
    conn.executemany(
        "INSERT INTO evolve_pairs (run_id, candidate_index, against_index, phase, pair_index, "
        "time_a, time_b) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(run_id, index, against, phase, i, a, b) for i, (a, b) in enumerate(pairs)],
    )


def pairs(store: Store, run_id: str, index: int, phase: str) -> list[tuple[float, float]]:
    rows = store.query(
        "SELECT time_a, time_b FROM evolve_pairs WHERE run_id = ? AND candidate_index = ? "
        "AND phase = ? ORDER BY pair_index",
        (run_id, index, phase),
    )
    return [(row["time_a"], row["time_b"]) for row in rows]


def save_confirmation(
    store: Store, run_id: str, index: int, pairs: list[tuple[float, float]]
) -> None:
    with store.transaction() as conn:
        add_pairs(conn, run_id, index, 0, "confirm", pairs)
        sync_evolve(conn, run_id)  # the run's best is now the confirmed speed-up


def shown(candidate: dict, pairs: list[tuple[float, float]] | None = None) -> dict:
    """A candidate as every interface shows it (a generation's line, ``--json``, ``status``,
    ``export``): its values, outcome, gain with its bound and statistics, and its receipt
    (with its timing ``pairs`` when given)."""
    receipt: dict = {
        "source_digest": candidate["source_digest"],
        "spec_digest": candidate["spec_digest"],
        "source": candidate["source_path"],
    }
    if pairs is not None:
        receipt["pairs"] = pairs
    return {
        "generation": candidate["candidate_index"],
        "params": candidate["params"],
        "status": candidate["status"],
        "correct": None if candidate["correct"] is None else bool(candidate["correct"]),
        "message": candidate["message"],
        "against": candidate["against_index"],
        "speedup": candidate["speedup"],
        "speedup_lower_bound": candidate["speedup_lower_bound"],
        "champion": bool(candidate["champion"]),
        "stats": candidate["stats"],  # noise: min, median, spread of each side's measurements
        "receipt": receipt,
    }
