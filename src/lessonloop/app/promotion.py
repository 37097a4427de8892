"""The promotion gate's record, reached by the user: candidates with their trials and
decisions, the active pointer per scope and role, and a rollback by hand (recorded, with its
reason). ``lessonloop promotions ...`` calls these; ``promotion/`` holds the gate itself."""

from __future__ import annotations

from typing import Any

from .. import paths
from ..errors import UsageError
from .playbook import playbook_scope
from .stores import reading, writing


def list_promotions(name: str | None = None) -> dict[str, Any]:
    """Candidates (newest first) with their trial counts and decisions, and the active
    pointers, of one scope (a scenario name, ``scenario:NAME`` or ``task:NAME``) or of all."""
    from ..promotion import records

    scope = playbook_scope(name) if name else None
    with reading(paths.home()) as store:
        if store is None:
            return {"candidates": [], "active": []}
        conn = store.conn
        where, params = ("WHERE scope = ?", (scope,)) if scope else ("", ())
        pointers = conn.execute(
            "SELECT scope, role FROM active_pointers " + where + " ORDER BY scope, role", params
        ).fetchall()
        return {
            "candidates": records.listing(conn, scope),
            "active": [
                {"scope": s, "role": r, **(records.active(conn, s, r) or {})} for s, r in pointers
            ],
        }


def rollback_promotion(name: str, role: str, reason: str) -> dict[str, Any]:
    """Switch the scope's ``role`` back to the one active before, by hand, with ``reason``."""
    from ..promotion import bundles, records

    if role not in records.ROLES:
        raise UsageError(f"is one of {', '.join(records.ROLES)}, not {role!r}", field="role")
    if not reason.strip():
        raise UsageError("say why (it is kept with the decision)", field="reason")
    scope = playbook_scope(name)
    restored = None
    with writing(paths.home()) as store, store.transaction() as conn:
        before = records.active(conn, scope, role)
        pointer = records.rollback(conn, scope, role, "user", reason.strip())  # (raises: none)
        if role == "context" and before is not None:  # serve the bundle it returns to
            leaving = records.candidate(conn, before["candidate_id"] or 0)
            target = pointer["ref"] if pointer else (leaving or {}).get("incumbent_ref")
            entries = bundles.load(conn, target) if target else None
            if entries is not None:
                restored = bundles.restore(store, scope, entries, reason.strip(), by_user=True)
    return {"scope": scope, "role": role, **(pointer or records.DEFAULT), "entries": restored}
