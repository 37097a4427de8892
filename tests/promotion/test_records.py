"""Bundles by content, and what the gate stores: trials, decisions, the active pointer with its
rollback target."""

from __future__ import annotations

import pytest

from lessonloop.errors import UsageError
from lessonloop.promotion import bundles, gate, records
from lessonloop.store import open_store

TARGET = {"kind": "bullet", "summary": "Aim low", "content": "", "tags": ["target:x=0.2"]}
DEAD_END = {"kind": "dead_end", "summary": "x above 0.9 loses", "tags": ["avoid:x>0.9"]}


def test_a_bundle_is_addressed_by_its_entries_not_their_order_nor_their_evidence():
    first = bundles.bundle_id([TARGET, DEAD_END])
    assert first == bundles.bundle_id([DEAD_END, {**TARGET, "helpful": 7, "harmful": 1}])
    assert first != bundles.bundle_id([TARGET])
    assert first != bundles.bundle_id([{**TARGET, "tags": ["target:x=0.3"]}, DEAD_END])
    assert bundles.bundle_id([]) == bundles.bundle_id([])


def test_a_bundle_is_stored_once_and_read_back(home):
    with open_store(home) as store, store.transaction() as conn:
        identity = bundles.save(conn, "grid_ctf", [TARGET, DEAD_END])
        assert bundles.save(conn, "grid_ctf", [DEAD_END, TARGET]) == identity
        assert conn.execute("SELECT COUNT(*) FROM context_bundles").fetchone()[0] == 1
        entries = bundles.load(conn, identity)
        assert entries is not None and bundles.bundle_id(entries) == identity
        assert {e["summary"] for e in entries} == {"Aim low", "x above 0.9 loses"}
        assert bundles.load(conn, "b-missing") is None


def _judged(conn, gain: float, key: str) -> int:
    candidate = records.add_candidate(conn, "grid_ctf", "context", "bundle", key, "coach")
    verdict = gate.judge(
        lambda side, seed: (seed % 97) / 97 + (gain if side == gate.CANDIDATE else 0), key
    )
    records.record_verdict(conn, candidate, verdict)
    return candidate


def test_a_verdict_stores_its_trials_decision_and_status(home):
    with open_store(home) as store, store.transaction() as conn:
        good, same = _judged(conn, 0.1, "b-good"), _judged(conn, 0.0, "b-same")
        listed = {item["id"]: item for item in records.listing(conn, "grid_ctf")}
    assert listed[good]["status"] == records.ACCEPTED
    assert listed[good]["trials"] == {"screen": 6, "confirm": 16, "holdout": 16}
    [decision] = listed[good]["decisions"]
    assert decision["action"] == gate.ACCEPT and decision["actor"] == "gate"
    assert "lower bound" in decision["statistic"] and decision["stage"] == gate.HOLDOUT
    assert listed[same]["status"] == records.REJECTED
    assert listed[same]["trials"] == {"screen": 6}


def test_activation_keeps_the_previous_one_and_rollback_restores_it_with_its_reason(home):
    with open_store(home) as store, store.transaction() as conn:
        first, second = _judged(conn, 0.1, "b-first"), _judged(conn, 0.2, "b-second")
        rejected = _judged(conn, 0.0, "b-rejected")
        with pytest.raises(UsageError, match="not accepted"):
            records.activate(conn, rejected, "gate", "won its trials")
        assert records.active(conn, "grid_ctf", "context") is None
        records.activate(conn, first, "gate", "won its trials")
        pointer = records.activate(conn, second, "gate", "won its trials")
        assert (pointer["ref"], pointer["previous_ref"]) == ("b-second", "b-first")
        restored = records.rollback(conn, "grid_ctf", "context", "probation", "worse by 0.04")
        assert (restored["ref"], restored["previous_ref"]) == ("b-first", None)
        assert records.candidate(conn, second)["status"] == records.ROLLED_BACK
        assert records.candidate(conn, first)["status"] == records.ACTIVE
        # the first promotion rolled back: what was served before any (no pointer)
        assert records.rollback(conn, "grid_ctf", "context", "user", "again") is None
        assert records.active(conn, "grid_ctf", "context") is None
        assert records.candidate(conn, first)["status"] == records.ROLLED_BACK
        with pytest.raises(UsageError, match="nothing to roll back to"):
            records.rollback(conn, "grid_ctf", "context", "user", "once more")
        # a user may activate by hand what the gate did not accept: recorded as theirs
        records.activate(conn, rejected, "user", "by hand")
        actions = [(d["action"], d["actor"]) for d in records.listing(conn)[0]["decisions"]]
        assert actions == [("reject", "gate"), ("activate", "user")]
        history = conn.execute(
            "SELECT action, actor, rationale FROM promotion_decisions ORDER BY id"
        ).fetchall()
    assert ("rollback", "probation", "worse by 0.04") in [tuple(row) for row in history]
    assert ("rollback", "user", "again") in [tuple(row) for row in history]


def test_unknown_candidates_and_kinds_are_refused(home):
    with open_store(home) as store, store.transaction() as conn:
        with pytest.raises(UsageError, match="no promotion candidate 99"):
            records.activate(conn, 99, "user", "by hand")
        with pytest.raises(ValueError):
            records.add_candidate(conn, "grid_ctf", "judge", "bundle", "b-x", "coach")


def test_restoring_a_bundle_retires_what_it_lacks_and_brings_back_what_it_holds(home):
    from lessonloop.knowledge import admission
    from lessonloop.knowledge import entries as knowledge_entries

    scope = "scenario:grid_ctf"

    def bullet(summary: str, tag: str) -> admission.Proposal:
        return admission.Proposal(
            kind="bullet", scope=scope, summary=summary, tags=[tag], approved_by="accept"
        )

    def served(store) -> set[str]:
        return {e.summary for e in knowledge_entries.active(store, scope) if e.kind == "bullet"}

    with open_store(home) as store:
        admission.admit(store, [bullet("Aim low on x", "target:x=0.2")])
        old = [e.to_dict() for e in knowledge_entries.active(store, scope)]
        [first] = [e.id for e in knowledge_entries.active(store, scope)]
        admission.retire(store, first, "an edit replaced it", by_user=True)
        admission.admit(store, [bullet("Aim high on y", "target:y=0.9")])
        assert served(store) == {"Aim high on y"}
        counts = bundles.restore(store, scope, old, "rolled back", by_user=True)
        assert counts == {"retired": 1, "restored": 1, "admitted": 0}
        assert served(store) == {"Aim low on x"}
        counts = bundles.restore(
            store, scope, [{**old[0], "summary": "Aim lower on x"}], "again", by_user=True
        )
        assert counts == {"retired": 1, "restored": 0, "admitted": 1}
        assert served(store) == {"Aim lower on x"}
