"""Missions and their steps in the database (migration 18). A step is stored in one
transaction once it is done (its change applied or refused, the verifier run), so a resumed
mission continues after the last stored step."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..store.run_kinds import sync_mission
from ..timeutil import utc_now

if TYPE_CHECKING:
    from ..store.db import Store


def mission(store: Store, run_id: str) -> dict | None:
    row = store.query_one("SELECT * FROM missions WHERE run_id = ?", (run_id,))
    if row is None:
        return None
    found = dict(row)
    found["allow"] = json.loads(found.pop("allow_json"))
    return found


def create(
    store: Store,
    run_id: str,
    goal: str,
    verifier: str,
    source_dir: str,
    source_digest: str,
    allow: list[str],
    max_steps: int,
    max_calls: int | None,
) -> None:
    now = utc_now()
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO missions (run_id, goal, verifier, source_dir, source_digest, allow_json, "
            "max_steps, max_calls, status, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)",
            (
                run_id,
                goal,
                verifier,
                source_dir,
                source_digest,
                json.dumps(allow),
                max_steps,
                max_calls,
                now,
                now,
            ),
        )
        sync_mission(conn, run_id, 0)  # its runs row, in the same transaction


def set_initial(store: Store, run_id: str, exit_code: int | None, output: str) -> None:
    with store.transaction() as conn:
        conn.execute(
            "UPDATE missions SET initial_exit = ?, initial_output = ?, updated_at = ? "
            "WHERE run_id = ?",
            (exit_code, output, utc_now(), run_id),
        )


def update(
    store: Store,
    run_id: str,
    status: str,
    stop_reason: str | None,
    max_steps: int | None = None,
    max_calls: int | None = None,
) -> None:
    with store.transaction() as conn:
        conn.execute(
            "UPDATE missions SET status = ?, stop_reason = ?, max_steps = COALESCE(?, max_steps), "
            "max_calls = COALESCE(?, max_calls), updated_at = ? WHERE run_id = ?",
            (status, stop_reason, max_steps, max_calls, utc_now(), run_id),
        )
        sync_mission(conn, run_id, 0)


def steps(store: Store, run_id: str) -> list[dict]:
    rows = store.query(
        "SELECT * FROM mission_steps WHERE run_id = ? ORDER BY step_index", (run_id,)
    )
    found = []
    for row in rows:
        item = dict(row)
        item["applied"] = bool(item["applied"])
        item["refused"] = bool(item["refused"])
        # tried, then undone (it made the verifier's outcome worse): its result is kept
        item["reverted"] = not item["applied"] and item["verifier_output"] is not None
        found.append(item)
    return found


def add_step(
    store: Store,
    run_id: str,
    index: int,
    *,
    kind: str,
    proposal: str,
    applied: bool,
    refused: bool,
    message: str,
    verifier_exit: int | None,
    verifier_output: str | None,
    calls: int,
) -> None:
    """Store a step; what the model proposed and the step's message redacted (the workspace has
    the change itself)."""
    from ..safety.redact import redact

    proposal, message = redact(proposal), redact(message)
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO mission_steps (run_id, step_index, kind, proposal, applied, refused, "
            "message, verifier_exit, verifier_output, calls, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                index,
                kind,
                proposal,
                int(applied),
                int(refused),
                message,
                verifier_exit,
                verifier_output,
                calls,
                utc_now(),
            ),
        )
        conn.execute("UPDATE missions SET updated_at = ? WHERE run_id = ?", (utc_now(), run_id))
        sync_mission(conn, run_id, index)  # the step as a generation of the run
