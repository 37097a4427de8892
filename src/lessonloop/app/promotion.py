"""The promotion gate's record, reached by the user: candidates with their trials and
decisions, the active pointer per scope and role, and a rollback by hand (recorded, with its
reason). ``lessonloop promotions ...`` calls these; ``promotion/`` holds the gate itself."""

from __future__ import annotations

from typing import Any

from .. import paths
from ..errors import LessonloopError, NotFoundError, UsageError
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
                {
                    "scope": s,
                    "role": r,
                    **(records.active(conn, s, r) or {}),
                    **({"served_ref": _served_ref(store, s)} if r == "context" else {}),
                }
                for s, r in pointers
            ],
        }


def _served_ref(store: Any, scope: str) -> str:
    """The id of the bundle the scope's competitor is served now, as trials name it (what the
    active bundle became since: dead ends the gate added, entries you edited)."""
    from ..knowledge import entries as knowledge_entries
    from ..loop.reflection import in_context
    from ..loop.trials import served_bundle
    from ..promotion import bundles

    return bundles.bundle_id(served_bundle(in_context(knowledge_entries.active(store, scope))))


def rollback_promotion(name: str, role: str, reason: str) -> dict[str, Any]:
    """Switch the scope's ``role`` back to the one active before, by hand, with ``reason``."""
    from ..promotion import records, switch

    if role not in records.ROLES:
        raise UsageError(f"is one of {', '.join(records.ROLES)}, not {role!r}", field="role")
    if not reason.strip():
        raise UsageError("say why (it is kept with the decision)", field="reason")
    scope = playbook_scope(name)
    with writing(paths.home()) as store, store.transaction():
        pointer = switch.rollback(store, scope, role, "user", reason.strip())
    return {"scope": scope, "role": role, **pointer}


def settle_verdict(store: Any, candidate_id: int, verdict: Any) -> dict[str, Any]:
    """Store the gate's verdict on a candidate and, when it accepted, serve the candidate if
    the charter lets it (on probation), else hold it with the charter's reason (a ``hold``
    decision: it waits for ``promotions approve`` or more trials). In the caller's
    transaction. Whether it was activated, and why it is held (None)."""
    from ..promotion import charter, probation, records, switch

    records.record_verdict(store.conn, candidate_id, verdict)
    if not verdict.accepted:
        return {"activated": False, "held": None}
    held = switch.held(store.conn, candidate_id, verdict, charter.load())
    if held is not None:
        return {"activated": False, "held": held}
    switch.activate(store, candidate_id, "gate", verdict.rationale, probation=probation.GENERATIONS)
    return {"activated": True, "held": None}


def _candidate(conn: Any, candidate_id: int) -> dict[str, Any]:
    from ..promotion import records

    found = records.candidate(conn, candidate_id)
    if found is None:
        raise NotFoundError(
            f"no promotion candidate {candidate_id}", listing="lessonloop promotions"
        )
    return found


def promote_by_hand(candidate_id: int, reason: str) -> dict[str, Any]:
    """Serve a candidate by hand, whatever its trials said (recorded as the user's, with
    ``reason``; not put on probation: the user chose it)."""
    from ..promotion import records, switch

    if not reason.strip():
        raise UsageError("say why (it is kept with the decision)", field="reason")
    with writing(paths.home()) as store, store.transaction():
        found = _candidate(store.conn, candidate_id)
        pointer = records.active(store.conn, found["scope"], found["role"])
        if pointer is not None and pointer["candidate_id"] == candidate_id:
            raise UsageError(f"candidate {candidate_id} is already served")
        done = switch.activate(store, candidate_id, "user", f"promoted by hand: {reason.strip()}")
    return {"scope": found["scope"], "role": found["role"], **done}


def approve_promotion(candidate_id: int) -> dict[str, Any]:
    """Serve a candidate the gate accepted and the charter held for approval (recorded as the
    user's approval; on probation like any activation the gate decided)."""
    from ..promotion import probation, records, switch

    with writing(paths.home()) as store, store.transaction():
        found = _candidate(store.conn, candidate_id)
        if found["status"] != records.ACCEPTED:
            raise UsageError(
                f"candidate {candidate_id} is {found['status']}: only an accepted candidate "
                "waits for approval (`lessonloop promote ID --reason ...` serves any by hand)"
            )
        done = switch.activate(
            store,
            candidate_id,
            "user",
            "approved: accepted by its trials, held by the charter",
            probation=probation.GENERATIONS,
        )
    return {"scope": found["scope"], "role": found["role"], **done}


def ambient_pass(name: str | None = None) -> list[dict[str, Any]]:
    """One pass of ambient promotion over a scope (or every scope): each scope and role's
    newest candidate that passed screening but was not trialled through every stage, or a
    checkpoint never trialled, is trialled now against what is served (the gate's stages
    through the held-out seeds) and settled under the charter (``settle_verdict``). What was
    done for each, in order."""
    from ..promotion import charter

    charter.load()  # a broken charter is said before anything is trialled
    scope = playbook_scope(name) if name else None
    with reading(paths.home()) as store:
        if store is None:
            return []
        waiting = _waiting(store.conn, scope)
    return [_trial_waiting(found) for found in waiting]


def _waiting(conn: Any, scope: str | None) -> list[dict[str, Any]]:
    """Per scope and role, the newest candidate worth a full trial: one the gate accepted on
    the screen alone that the charter held (its last decision ``hold``), or a checkpoint never
    judged (pending). One that was served and replaced since is not waiting."""
    from ..promotion import gate, records

    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for item in records.listing(conn, scope):  # newest first
        key = (item["scope"], item["role"])
        if key in chosen:
            continue
        judged = [d["stage"] for d in item["decisions"] if d["actor"] == "gate" and d["stage"]]
        last = item["decisions"][-1]["action"] if item["decisions"] else None
        held = item["status"] == records.ACCEPTED and last == records.HOLD
        if (held and judged and set(judged) == {gate.SCREEN}) or (
            item["status"] == records.PENDING and item["kind"] == "checkpoint"
        ):
            chosen[key] = item
    return list(chosen.values())


def _trial_waiting(found: dict[str, Any]) -> dict[str, Any]:
    """Trial one waiting candidate through every stage and settle it; what happened."""
    from ..knowledge import entries as knowledge_entries
    from ..promotion import bundles, records
    from ..training import registry, trial
    from .scenarios import scenario_named

    outcome = {"candidate_id": found["id"], "scope": found["scope"], "role": found["role"]}
    if not found["scope"].startswith("scenario:"):
        return {**outcome, "action": "skipped", "reason": "only scenarios can be trialled"}
    try:
        scenario = scenario_named(found["scope"])
    except LessonloopError as exc:
        return {**outcome, "action": "skipped", "reason": str(exc)}
    with reading(paths.home()) as store:
        assert store is not None
        if found["kind"] == "checkpoint":
            checkpoint = registry.get(store.conn, found["ref"])
            knowledge = knowledge_entries.active(store, found["scope"])
            proposer = (
                trial.checkpoint_proposer(checkpoint, scenario, knowledge) if checkpoint else None
            )
            incumbent_ref, incumbent = trial.current_competitor(store, scenario, found["scope"])
        else:
            entries = bundles.load(store.conn, found["ref"])
            proposer = trial.offline_proposer(scenario, entries) if entries is not None else None
            served = [e.to_dict() for e in knowledge_entries.active(store, found["scope"])]
            incumbent_ref, incumbent = (
                bundles.bundle_id(served),
                trial.offline_proposer(scenario, served),
            )
    if proposer is None:
        return {**outcome, "action": "skipped", "reason": f"{found['ref']} is not stored"}
    verdict, sides = trial.judge(
        scenario, found["ref"], proposer, incumbent_ref, incumbent, prefix="promote"
    )
    verdict.rationale = f"{found['ref']} against {incumbent_ref}: {verdict.rationale}"
    with writing(paths.home()) as store, store.transaction() as conn:
        if _candidate(conn, found["id"])["status"] != found["status"]:
            return {**outcome, "action": "skipped", "reason": "decided meanwhile"}
        conn.execute(
            "UPDATE promotion_candidates SET incumbent_ref = ? WHERE id = ?",
            (incumbent_ref, found["id"]),
        )
        settled = settle_verdict(store, found["id"], verdict)
        pointer = records.active(conn, found["scope"], found["role"])
    return {
        **outcome,
        "action": "activated" if settled["activated"] else verdict.decision,
        "reason": settled["held"] or verdict.rationale,
        "incumbent": incumbent_ref,
        "trials": len(verdict.trials),
        "plays": sides.plays,
        "active": pointer,
    }
