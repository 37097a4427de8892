"""Probation (issue 23, point 1): after the gate activates a candidate, the next generations
play it against the one it replaced and roll it back, recorded with the reason, when it does
worse; one that holds up ends its probation and stays served."""

from __future__ import annotations

import json

from lessonloop.loop.runner import Runner, create_or_reuse
from lessonloop.promotion import bundles, gate, probation, records, switch
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from .steering import BAD, GOOD, bundle

SCOPE = "scenario:grid_ctf"


def _run(iterations: int, run_id: str, **options) -> str:
    with open_store() as store:
        create_or_reuse(store, "grid_ctf", iterations, options, run_id=run_id)
        Runner(store, run_id).execute()
    return run_id


def _slipped_through(entries: list[dict]) -> int:
    """A bundle the gate accepted (as one in 200 harmful ones may: the gate's stated error
    rate) and activated on probation, against the empty bundle a fresh scope serves."""
    with open_store() as store, store.transaction() as conn:
        served = bundles.save(conn, SCOPE, [])
        ref = bundles.save(conn, SCOPE, entries)
        candidate = records.add_candidate(
            conn, SCOPE, "context", "bundle", ref, "coach", incumbent_ref=served
        )
        accepted = gate.Verdict(gate.ACCEPT, gate.SCREEN, "t +9.99", "slipped through")
        records.record_verdict(conn, candidate, accepted)
        switch.activate(store, candidate, "gate", "slipped through", probation.GENERATIONS)
    return candidate


def _bullets(marker: str) -> dict[str, str]:
    with open_store(readonly=True) as store:
        rows = store.query(
            "SELECT summary, status FROM knowledge WHERE kind = 'bullet' AND summary LIKE ?",
            (marker + "%",),
        )
    return {row["summary"]: row["status"] for row in rows}


def _served(run_id: str) -> list[int]:
    """How many playbook bullets each generation's context held."""
    with open_store(readonly=True) as store:
        return [
            len(json.loads(g["context_json"])["knowledge"]["playbook"])
            for g in run_store.generations(store, run_id)
        ]


def _decisions(candidate: int) -> list[tuple[str, str]]:
    with open_store(readonly=True) as store:
        return [
            (row["action"], row["actor"])
            for row in store.query(
                "SELECT action, actor FROM promotion_decisions WHERE candidate_id = ? ORDER BY id",
                (candidate,),
            )
        ]


def test_a_harmful_bundle_that_slipped_through_is_rolled_back_by_probation(home, coach_once):
    coach_once([])  # no new candidates: only probation plays
    candidate = _slipped_through(bundle(BAD, "Bad"))
    assert set(_bullets("Bad").values()) == {"active"}, "served on activation"
    run_id = _run(probation.GENERATIONS + 2, "watched", context_trials="screen")
    assert _decisions(candidate)[-1] == ("rollback", "probation")
    with open_store(readonly=True) as store:
        assert records.active(store.conn, SCOPE, "context") is None, "back to the default"
        found = records.candidate(store.conn, candidate)
        watched = records.trials(store.conn, candidate, probation.STAGE)
        reason = store.query_one(
            "SELECT rationale FROM promotion_decisions WHERE action = 'rollback'"
        )[0]
    assert found is not None and found["status"] == records.ROLLED_BACK
    assert len(watched) == probation.GENERATIONS * probation.PAIRS
    assert sum(t["candidate"] - t["incumbent"] for t in watched) < 0
    assert "did worse" in reason and "upper bound" in reason
    assert set(_bullets("Bad").values()) == {"retired"}, "no longer served"
    served = _served(run_id)
    assert served[: probation.GENERATIONS] == [4] * probation.GENERATIONS
    assert served[probation.GENERATIONS :] == [0, 0], "the generations after the rollback"


def test_a_helpful_bundle_passes_probation_and_stays_served(home, coach_once):
    coach_once([])
    candidate = _slipped_through(bundle(GOOD, "Good"))
    _run(probation.GENERATIONS + 1, "watched", context_trials="screen")
    assert _decisions(candidate)[-1] == ("confirm", "probation")
    with open_store(readonly=True) as store:
        pointer = records.active(store.conn, SCOPE, "context")
        watched = records.trials(store.conn, candidate, probation.STAGE)
    assert pointer is not None and pointer["candidate_id"] == candidate
    assert pointer["probation_left"] is None, "probation is over"
    assert len(watched) == probation.GENERATIONS * probation.PAIRS, "not watched after it ended"
    assert set(_bullets("Good").values()) == {"active"}


def test_a_run_without_context_trials_does_not_watch(home, coach_once):
    coach_once([])
    candidate = _slipped_through(bundle(BAD, "Bad"))
    _run(2, "unwatched", context_trials="off")
    with open_store(readonly=True) as store:
        pointer = records.active(store.conn, SCOPE, "context")
        assert records.trials(store.conn, candidate, probation.STAGE) == []
    assert pointer is not None and pointer["probation_left"] == probation.GENERATIONS


def test_the_last_look_decides_on_the_whole_window(home):
    """Only the window's last generation decides, on all of the window's pairs: a loss in the
    first generation alone rolls nothing back."""
    candidate = _slipped_through(bundle(BAD, "Bad"))
    lost = [gate.Trial(probation.STAGE, s, 0.0, 1.0) for s in range(probation.PAIRS)]
    even = [gate.Trial(probation.STAGE, s, 0.5, 0.5 + (s % 2 - 0.5) / 10) for s in range(3)]
    for played in [lost] + [even] * (probation.GENERATIONS - 2):
        with open_store() as store, store.transaction():
            (watch,) = probation.watching(store.conn, SCOPE)
            assert probation.step(store, watch, played) is None
    with open_store() as store, store.transaction():
        (watch,) = probation.watching(store.conn, SCOPE)
        assert watch.left == 1
        outcome = probation.step(store, watch, even)
    assert outcome is not None and outcome["action"] == probation.CONFIRM, (
        "one bad generation among five even ones is not evidence of worse"
    )
    assert _decisions(candidate)[-1] == ("confirm", "probation")


def test_an_activation_by_hand_is_not_on_probation(home):
    with open_store() as store, store.transaction() as conn:
        ref = bundles.save(conn, SCOPE, bundle(BAD, "Bad"))
        candidate = records.add_candidate(conn, SCOPE, "context", "bundle", ref, "user")
        pointer = switch.activate(store, candidate, "user", "by hand")
        assert probation.watching(conn, SCOPE) == []
    assert pointer["probation_left"] is None
