"""What the promotion gate stores: candidates, their trials, every decision, and the active
pointer per scope and role.

Every change here is a few rows in the caller's transaction (``Store.transaction``): a verdict
stores its trials, its decision and the candidate's status together; activation switches the
active pointer and keeps the one it replaces as the rollback target in the same statement, so
a reader sees the old pointer or the new one, never neither. Decisions are never deleted: a
rollback is one more decision, with its reason.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..errors import UsageError
from ..timeutil import utc_now
from .gate import ACCEPT, Trial, Verdict

# a candidate's status
PENDING, ACCEPTED, REJECTED, ACTIVE, ROLLED_BACK = (
    "pending",
    "accepted",
    "rejected",
    "active",
    "rolled back",
)
# what a rollback of the first promotion returns to: what was served before any
DEFAULT = {"ref": None, "candidate_id": None, "previous_ref": None, "previous_candidate_id": None}
CANDIDATE_FIELDS = (
    "id",
    "scope",
    "role",
    "kind",
    "ref",
    "source",
    "run_id",
    "generation_index",
    "status",
    "created_at",
    "incumbent_ref",
)
ROLES = ("context", "competitor")  # what is promoted: a competitor's context, or the competitor
KINDS = ("bundle", "checkpoint")
HOLD = "hold"  # the decision on an accepted candidate the charter does not let serve yet
# who decided: the gate's trials, a user by hand, probation watching the next generations
ACTORS = ("gate", "user", "probation")


def add_candidate(
    conn: sqlite3.Connection,
    scope: str,
    role: str,
    kind: str,
    ref: str,
    source: str,
    run_id: str | None = None,
    generation_index: int | None = None,
    incumbent_ref: str | None = None,
) -> int:
    """A new pending candidate ``ref`` (a bundle id, a checkpoint id) for ``scope``/``role``,
    trialled against ``incumbent_ref``."""
    if role not in ROLES or kind not in KINDS:
        raise ValueError(f"a candidate is a {'/'.join(KINDS)} for {'/'.join(ROLES)}")
    cursor = conn.execute(
        "INSERT INTO promotion_candidates (scope, role, kind, ref, source, run_id, "
        "generation_index, status, created_at, incumbent_ref) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            scope,
            role,
            kind,
            ref,
            source,
            run_id,
            generation_index,
            PENDING,
            utc_now(),
            incumbent_ref,
        ),
    )
    assert cursor.lastrowid is not None
    return cursor.lastrowid


def candidate(conn: sqlite3.Connection, candidate_id: int) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(CANDIDATE_FIELDS)} FROM promotion_candidates WHERE id = ?",
        (candidate_id,),
    ).fetchone()
    return None if row is None else dict(zip(CANDIDATE_FIELDS, tuple(row), strict=True))


def decide(
    conn: sqlite3.Connection,
    scope: str,
    role: str,
    candidate_id: int | None,
    action: str,
    rationale: str,
    actor: str,
    stage: str | None = None,
    statistic: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO promotion_decisions (candidate_id, scope, role, action, stage, statistic, "
        "rationale, actor, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (candidate_id, scope, role, action, stage, statistic, rationale, actor, utc_now()),
    )


def add_trials(conn: sqlite3.Connection, candidate_id: int, played: list[Trial]) -> None:
    conn.executemany(
        "INSERT INTO promotion_trials (candidate_id, stage, seed, candidate_score, "
        "incumbent_score) VALUES (?, ?, ?, ?, ?)",
        [(candidate_id, t.stage, t.seed, t.candidate, t.incumbent) for t in played],
    )


def record_verdict(conn: sqlite3.Connection, candidate_id: int, verdict: Verdict) -> None:
    """Store a verdict: every trial, the decision with its statistic, the candidate's status."""
    found = candidate(conn, candidate_id)
    if found is None:
        raise UsageError(f"no promotion candidate {candidate_id}")
    add_trials(conn, candidate_id, verdict.trials)
    decide(
        conn,
        found["scope"],
        found["role"],
        candidate_id,
        verdict.decision,
        verdict.rationale,
        "gate",
        verdict.stage,
        verdict.statistic,
    )
    status = ACCEPTED if verdict.decision == ACCEPT else REJECTED
    conn.execute("UPDATE promotion_candidates SET status = ? WHERE id = ?", (status, candidate_id))


POINTER_FIELDS = (
    "ref",
    "candidate_id",
    "previous_ref",
    "previous_candidate_id",
    "switched_at",
    "probation_left",
)


def active(conn: sqlite3.Connection, scope: str, role: str) -> dict[str, Any] | None:
    """The active pointer of ``scope``/``role`` (ref, candidate, previous, the generations of
    probation left: None when not on probation), or None."""
    row = conn.execute(
        f"SELECT {', '.join(POINTER_FIELDS)} FROM active_pointers WHERE scope = ? AND role = ?",
        (scope, role),
    ).fetchone()
    return None if row is None else dict(zip(POINTER_FIELDS, tuple(row), strict=True))


def activate(
    conn: sqlite3.Connection,
    candidate_id: int,
    actor: str,
    rationale: str,
    probation: int | None = None,
) -> dict[str, Any]:
    """Make the candidate the active one of its scope and role, keeping the one it replaces as
    the rollback target, on probation for ``probation`` generations (None: not watched); only
    an accepted candidate, unless a user does it by hand."""
    found = candidate(conn, candidate_id)
    if found is None:
        raise UsageError(f"no promotion candidate {candidate_id}")
    if found["status"] != ACCEPTED and actor != "user":
        raise UsageError(f"candidate {candidate_id} is {found['status']}, not accepted")
    scope, role = found["scope"], found["role"]
    conn.execute(
        "INSERT INTO active_pointers (scope, role, ref, candidate_id, previous_ref, "
        "previous_candidate_id, switched_at, probation_left) VALUES (?, ?, ?, ?, NULL, NULL, ?, ?) "
        "ON CONFLICT (scope, role) DO UPDATE SET previous_ref = active_pointers.ref, "
        "previous_candidate_id = active_pointers.candidate_id, ref = excluded.ref, "
        "candidate_id = excluded.candidate_id, switched_at = excluded.switched_at, "
        "probation_left = excluded.probation_left",
        (scope, role, found["ref"], candidate_id, utc_now(), probation),
    )
    conn.execute(
        "UPDATE promotion_candidates SET status = ? WHERE scope = ? AND role = ? AND status = ?",
        (ACCEPTED, scope, role, ACTIVE),
    )
    conn.execute("UPDATE promotion_candidates SET status = ? WHERE id = ?", (ACTIVE, candidate_id))
    decide(conn, scope, role, candidate_id, "activate", rationale, actor)
    pointer = active(conn, scope, role)
    assert pointer is not None
    return pointer


def rollback(
    conn: sqlite3.Connection, scope: str, role: str, actor: str, reason: str
) -> dict[str, Any] | None:
    """Switch ``scope``/``role`` back to its rollback target, recorded with ``reason``; the
    pointer then (None: back to the default, what was served before any promotion)."""
    pointer = active(conn, scope, role)
    if pointer is None:
        raise UsageError(f"{scope} ({role}) has nothing to roll back to")
    if pointer["previous_ref"] is None:  # the first promotion: back to the default
        conn.execute("DELETE FROM active_pointers WHERE scope = ? AND role = ?", (scope, role))
    else:
        conn.execute(
            "UPDATE active_pointers SET ref = previous_ref, "
            "candidate_id = previous_candidate_id, previous_ref = NULL, "
            "previous_candidate_id = NULL, switched_at = ?, probation_left = NULL "
            "WHERE scope = ? AND role = ?",
            (utc_now(), scope, role),
        )
    if pointer["candidate_id"] is not None:
        conn.execute(
            "UPDATE promotion_candidates SET status = ? WHERE id = ?",
            (ROLLED_BACK, pointer["candidate_id"]),
        )
    if pointer["previous_candidate_id"] is not None:
        conn.execute(
            "UPDATE promotion_candidates SET status = ? WHERE id = ?",
            (ACTIVE, pointer["previous_candidate_id"]),
        )
    decide(conn, scope, role, pointer["candidate_id"], "rollback", reason, actor)
    return active(conn, scope, role)


def listing(
    conn: sqlite3.Connection,
    scope: str | None = None,
    run_id: str | None = None,
    generation_index: int | None = None,
) -> list[dict[str, Any]]:
    """Candidates (newest first) with their trial counts and decisions: of a scope, or those a
    run (one of its generations) proposed, or all."""
    filters = [
        (column, value)
        for column, value in (
            ("scope", scope),
            ("run_id", run_id),
            ("generation_index", generation_index),
        )
        if value is not None
    ]
    where = " AND ".join(f"{column} = ?" for column, _ in filters)
    rows = conn.execute(
        "SELECT id FROM promotion_candidates "
        + (f"WHERE {where} " if where else "")
        + "ORDER BY id DESC",
        [value for _, value in filters],
    ).fetchall()
    result = []
    for (candidate_id,) in rows:
        item = candidate(conn, candidate_id)
        assert item is not None
        item["trials"] = dict(
            conn.execute(
                "SELECT stage, COUNT(*) FROM promotion_trials WHERE candidate_id = ? "
                "GROUP BY stage",
                (candidate_id,),
            ).fetchall()
        )
        item["decisions"] = [
            dict(zip(("action", "stage", "statistic", "rationale", "actor", "at"), d, strict=True))
            for d in conn.execute(
                "SELECT action, stage, statistic, rationale, actor, at FROM promotion_decisions "
                "WHERE candidate_id = ? ORDER BY id",
                (candidate_id,),
            ).fetchall()
        ]
        result.append(item)
    return result


def trials(
    conn: sqlite3.Connection, candidate_id: int, stage: str | None = None
) -> list[dict[str, Any]]:
    """Every trial of a candidate (of one ``stage``, or all), in the order played."""
    where, params = ("AND stage = ? ", (candidate_id, stage)) if stage else ("", (candidate_id,))
    return [
        dict(zip(("stage", "seed", "candidate", "incumbent"), row, strict=True))
        for row in conn.execute(
            "SELECT stage, seed, candidate_score, incumbent_score FROM promotion_trials "
            "WHERE candidate_id = ? " + where + "ORDER BY id",
            params,
        ).fetchall()
    ]


def set_probation(conn: sqlite3.Connection, scope: str, role: str, left: int | None) -> None:
    conn.execute(
        "UPDATE active_pointers SET probation_left = ? WHERE scope = ? AND role = ?",
        (left, scope, role),
    )


def on_probation(conn: sqlite3.Connection, scope: str) -> list[dict[str, Any]]:
    """The scope's active pointers still on probation, each with its role."""
    return [
        {"role": role, **pointer}
        for role in ROLES
        if (pointer := active(conn, scope, role)) is not None and pointer["probation_left"]
    ]
