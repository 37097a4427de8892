"""Switching what a scope serves: the active pointer and, for a context bundle, the knowledge
entries the competitor reads (through admission, ``bundles.restore``). Every activation and
rollback that is not a run's own admitted edits goes through here, inside the caller's
transaction (``Store.transaction``), so the pointer and what is served change together."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import bundles, records

if TYPE_CHECKING:
    from ..store.db import Store
    from .charter import Charter
    from .gate import Verdict

CONTEXT = "context"


def _serve(store: Store, scope: str, ref: str | None, reason: str, by_user: bool) -> Any:
    entries = bundles.load(store.conn, ref) if ref else None
    return None if entries is None else bundles.restore(store, scope, entries, reason, by_user)


def activate(
    store: Store,
    candidate_id: int,
    actor: str,
    rationale: str,
    probation: int | None = None,
) -> dict[str, Any]:
    """Activate the candidate (``records.activate``) and serve it; the pointer, with what was
    restored (``entries``: counts, for a bundle) or None."""
    pointer = records.activate(store.conn, candidate_id, actor, rationale, probation)
    found = records.candidate(store.conn, candidate_id) or {}
    restored = None
    if found.get("role") == CONTEXT:
        restored = _serve(store, found["scope"], found["ref"], rationale, actor == "user")
    return {**pointer, "entries": restored}


def rollback(store: Store, scope: str, role: str, actor: str, reason: str) -> dict[str, Any]:
    """Switch back to the rollback target (``records.rollback``) and serve it again: for a
    context bundle, the bundle it returns to, or the one the first promotion was trialled
    against. The pointer then (``records.DEFAULT`` when back to the default), with ``entries``."""
    conn = store.conn
    before = records.active(conn, scope, role)
    pointer = records.rollback(conn, scope, role, actor, reason)
    restored = None
    if role == CONTEXT and before is not None:
        leaving = records.candidate(conn, before["candidate_id"] or 0) or {}
        target = pointer["ref"] if pointer else leaving.get("incumbent_ref")
        restored = _serve(store, scope, target, reason, actor == "user")
    return {**(pointer or records.DEFAULT), "entries": restored}


def held(conn: Any, candidate_id: int, verdict: Verdict, rules: Charter) -> str | None:
    """Why the charter does not let an accepted candidate be served now (recorded as a
    ``hold`` decision: it waits for ``promotions approve`` or more trials), else None."""
    found = records.candidate(conn, candidate_id) or {}
    reason = rules.hold_reason(found.get("scope", ""), len(verdict.trials))
    if verdict.accepted and reason is not None:
        records.decide(
            conn, found["scope"], found["role"], candidate_id, records.HOLD, reason, "gate"
        )
        return reason
    return None
