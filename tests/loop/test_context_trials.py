"""Context trials in runs (issue 23, point 2): with ``--context-trials``, the coach's accepted
edits are served only after their bundle wins matched trials against the served one."""

from __future__ import annotations

import json

import pytest

from lessonloop.loop.runner import Runner, RunStopped, create_or_reuse
from lessonloop.promotion import gate as promotion
from lessonloop.promotion import probation
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..promotion.steering import BAD, GOOD
from ..promotion.steering import targets as _targets


def _run(iterations: int, run_id: str = "trials", **options) -> str:
    with open_store() as store:
        create_or_reuse(store, "grid_ctf", iterations, options, run_id=run_id)
        Runner(store, run_id).execute()
    return run_id


def _bullets(marker: str) -> list:
    with open_store(readonly=True) as store:
        return store.query(
            "SELECT id, status FROM knowledge WHERE kind = 'bullet' AND summary LIKE ?",
            (marker + "%",),
        )


def _served(run_id: str) -> list[set[int]]:
    with open_store(readonly=True) as store:
        return [
            set(json.loads(g["context_json"])["knowledge"]["playbook"])
            for g in run_store.generations(store, run_id)
        ]


def _promotions() -> dict:
    with open_store(readonly=True) as store:
        return {
            "candidates": store.query(
                "SELECT id, generation_index, status, ref FROM promotion_candidates ORDER BY id"
            ),
            "trials": store.query(
                "SELECT candidate_id, stage, seed, candidate_score, incumbent_score "
                "FROM promotion_trials ORDER BY id"
            ),
            "decisions": store.query(
                "SELECT candidate_id, action, stage, statistic, actor FROM promotion_decisions "
                "ORDER BY id"
            ),
            "trial_plays": store.query_one("SELECT COUNT(*) FROM matches WHERE phase = 'trial'")[0],
        }


def test_by_default_the_offline_agents_edits_are_trialled(home, coach_once):
    coach_once(_targets(BAD, "Bad"))
    run_id = _run(2)
    with open_store(readonly=True) as store:
        config = json.loads(run_store.get_run(store, run_id)["config_json"])
    assert config["context_trials"] == "screen"
    assert _bullets("Bad") == [] and _promotions()["candidates"][0]["status"] == "rejected"


def test_with_trials_off_the_coachs_edits_are_admitted_directly(home, coach_once):
    coach_once(_targets(BAD, "Bad"))
    run_id = _run(3, context_trials="off")
    admitted = _bullets("Bad")
    assert len(admitted) == 4 and all(row["status"] == "active" for row in admitted)
    assert _served(run_id)[1] == {row["id"] for row in admitted}, "served in generation 2"
    found = _promotions()
    assert found["candidates"] == [] and found["trials"] == [] and found["trial_plays"] == 0
    assert "## Promotion trials" not in (home / "runs" / run_id / "report.md").read_text()


@pytest.mark.parametrize("mode", ["screen", "full"])
def test_a_harmful_coach_edit_is_rejected_and_never_served(home, coach_once, mode):
    coach_once(_targets(BAD, "Bad"))
    run_id = _run(3, context_trials=mode)
    assert _bullets("Bad") == [], "never admitted"
    assert all(not ids for ids in _served(run_id)), "never in any generation's context"
    found = _promotions()
    (candidate,) = found["candidates"]
    assert candidate["generation_index"] == 1 and candidate["status"] == "rejected"
    assert [d["action"] for d in found["decisions"]] == ["reject"]
    trials = found["trials"]
    assert len(trials) == promotion.SCREEN_PAIRS and {t["stage"] for t in trials} == {"screen"}
    assert sum(t["candidate_score"] - t["incumbent_score"] for t in trials) < 0
    assert found["trial_plays"] > 0


@pytest.mark.parametrize("mode", ["screen", "full"])
def test_a_helpful_coach_edit_is_accepted_and_served_next_generation(home, coach_once, mode):
    coach_once(_targets(GOOD, "Good"))
    run_id = _run(3, context_trials=mode)
    admitted = _bullets("Good")
    assert len(admitted) == 4 and all(row["status"] == "active" for row in admitted)
    served = _served(run_id)
    assert not served[0] and served[1] == {row["id"] for row in admitted}
    found = _promotions()
    (candidate,) = found["candidates"]
    assert candidate["status"] == "active"
    assert [d["action"] for d in found["decisions"]] == ["accept", "activate"]
    judged = [t for t in found["trials"] if t["stage"] != probation.STAGE]
    stages = {t["stage"] for t in judged}
    if mode == "full":
        assert stages == {"screen", "confirm", "holdout"}
        assert len(judged) >= promotion.SCREEN_PAIRS + promotion.CONFIRM_PAIRS + (
            promotion.HOLDOUT_PAIRS
        )
    else:
        assert stages == {"screen"} and len(judged) == promotion.SCREEN_PAIRS
    # activated after generation 1: generations 2 and 3 watched it on probation
    watched = [t for t in found["trials"] if t["stage"] == probation.STAGE]
    assert len(watched) == 2 * probation.PAIRS
    with open_store(readonly=True) as store:
        pointer = store.query_one(
            "SELECT ref, candidate_id FROM active_pointers WHERE scope = 'scenario:grid_ctf' "
            "AND role = 'context'"
        )
    assert tuple(pointer) == (candidate["ref"], candidate["id"])


def test_every_trial_is_stored_with_its_plays(home):
    """An unscripted run: every candidate has its verdict and its pairs; every trial play is a
    match of a generation that made a candidate, and the paired scores are the plays' means."""
    run_id = _run(8, context_trials="screen")
    found = _promotions()
    assert found["candidates"], "the offline coach proposes edits"
    by_candidate: dict[int, list] = {}
    for trial in found["trials"]:
        by_candidate.setdefault(trial["candidate_id"], []).append(trial)
    watching: set[int] = set()  # generations that watched an activated candidate on probation
    unplayed = {
        d["candidate_id"] for d in found["decisions"] if d["statistic"] == promotion.NOT_PLAYED
    }
    assert unplayed and unplayed != {c["id"] for c in found["candidates"]}
    for candidate in found["candidates"]:
        judged = [t for t in by_candidate.get(candidate["id"], []) if t["stage"] != probation.STAGE]
        watched = len(by_candidate.get(candidate["id"], [])) - len(judged)
        if candidate["id"] in unplayed:  # alike under both bundles on every screen seed
            assert candidate["status"] == "rejected" and judged == [] and watched == 0
            continue
        assert len(judged) == promotion.SCREEN_PAIRS
        assert candidate["status"] in ("rejected", "accepted", "active")
        assert watched % probation.PAIRS == 0
        assert watched == 0 or candidate["status"] in ("accepted", "active")
        after = candidate["generation_index"] + 1
        watching |= set(range(after, after + watched // probation.PAIRS))
    with open_store(readonly=True) as store:
        played = store.query(
            "SELECT generation_index, side, score FROM matches WHERE run_id = ? AND "
            "phase = 'trial' ORDER BY id",
            (run_id,),
        )
    generations = {c["generation_index"] for c in found["candidates"] if c["id"] not in unplayed}
    assert watching, "an accepted candidate is watched on probation"
    assert {m["generation_index"] for m in played} == generations | watching
    assert {m["side"] for m in played} <= {"candidate", "incumbent"}
    for index in generations | watching:  # 3 games a side and pair; one strategy played once
        count = sum(1 for m in played if m["generation_index"] == index)
        pairs = promotion.SCREEN_PAIRS * (index in generations) + probation.PAIRS * (
            index in watching
        )
        assert pairs * 3 <= count <= pairs * 2 * 3
    report = (home / "runs" / run_id / "report.md").read_text()
    section = report.split("## Promotion trials", 1)[1].strip().splitlines()
    assert len(section) == len(found["candidates"])  # one line per candidate, with its decision
    for line, candidate in zip(section, sorted(found["candidates"], key=lambda c: c["id"])):
        assert f"gen {candidate['generation_index']}: bundle" in line
        assert f"**{candidate['status']}**" in line
        # the last decision's rationale: the screen's, or probation's on an activated one
        assert "screen only:" in line or "screen:" in line or "probation passed" in line
    page = (home / "runs" / run_id / "report.html").read_text()
    assert "<h2>Promotion trials</h2>" in page
    for candidate in found["candidates"]:
        assert f"<code>{candidate['ref']}</code>" in page


@pytest.mark.parametrize("mode", ["screen", "full"])
def test_an_edit_that_changes_no_proposal_is_rejected_without_a_play(home, coach_once, mode):
    """A bullet without targets or directions changes nothing the offline competitor proposes:
    its bundle is rejected at the screen without a trial play (every pair would tie), never
    served; the verdict says so."""
    coach_once(
        [
            {
                "op": "add_bullet",
                "text": "Quiet note: keep the defenders close to the flag",
                "tags": ["param:defense_radius"],
            }
        ]
    )
    run_id = _run(2, context_trials=mode)
    assert _bullets("Quiet note") == [], "never admitted"
    assert all(not ids for ids in _served(run_id))
    found = _promotions()
    (candidate,) = found["candidates"]
    assert candidate["generation_index"] == 1 and candidate["status"] == "rejected"
    (decision,) = found["decisions"]
    assert (decision["action"], decision["stage"], decision["statistic"]) == (
        "reject",
        "screen",
        promotion.NOT_PLAYED,
    )
    assert found["trials"] == [] and found["trial_plays"] == 0


def test_a_run_killed_mid_trial_resumes_to_the_same_end(home, monkeypatch, tmp_path):
    """A failure inside the generation's transaction, after the candidate and its trials were
    written, leaves nothing of them; the resumed run redoes the trial first and ends exactly as
    an uninterrupted one."""
    uninterrupted = tmp_path / "other-home"
    monkeypatch.setenv("LESSONLOOP_HOME", str(uninterrupted))
    _run(10, context_trials="screen", seed=5)
    expected = _everything()
    assert 4 in {c[1] for c in expected["candidates"]}, "generation 4 trials a candidate"
    monkeypatch.setenv("LESSONLOOP_HOME", str(home))

    real = Runner._learn
    failed = []

    def crash(self, index, *args):
        real(self, index, *args)
        if index == 4 and not failed:
            failed.append(index)
            raise KeyboardInterrupt  # as a kill would: inside the transaction, after the writes

    monkeypatch.setattr(Runner, "_learn", crash)
    with pytest.raises(RunStopped):
        _run(10, context_trials="screen", seed=5)
    assert failed == [4]
    with open_store(readonly=True) as store:
        assert store.query_one("SELECT MAX(generation_index) FROM generations")[0] == 3
        assert (
            store.query_one(
                "SELECT COUNT(*) FROM promotion_candidates WHERE generation_index >= 4"
            )[0]
            == 0
        ), "the candidate of the failed generation went with it"
    _run(10, context_trials="screen", seed=5)  # resume: the same run id
    assert _everything() == expected
    assert _promotions()["candidates"], "the run trialled candidates"


def _everything() -> dict:
    with open_store(readonly=True) as store:
        return {
            "generations": [
                (g["generation_index"], g["strategy_json"], g["mean_score"], g["best_score"])
                + (g["validated_score"], g["gate_decision"], g["context_json"])
                for g in run_store.generations(store, "trials")
            ],
            "knowledge": [
                tuple(r)
                for r in store.query(
                    "SELECT id, kind, summary, tags_json, helpful, harmful, seen, status "
                    "FROM knowledge ORDER BY id"
                )
            ],
            "candidates": [
                tuple(r)
                for r in store.query(
                    "SELECT id, generation_index, status, ref FROM promotion_candidates"
                )
            ],
            "trials": [tuple(r) for r in _promotions()["trials"]],
            "decisions": [tuple(r) for r in _promotions()["decisions"]],
        }


def test_the_option_is_checked_and_kept_on_resume(home, cli):
    bad = cli("run", "grid_ctf", "-n", "1", "--context-trials", "sometimes", "--json")
    assert bad.code != 0 and "context" in bad.err and "Traceback" not in bad.err
    first = cli("run", "grid_ctf", "-n", "1", "--context-trials", "screen", "--run-id", "kept")
    assert first.code == 0, first.err
    with open_store(readonly=True) as store:
        config = json.loads(run_store.get_run(store, "kept")["config_json"])
    assert config["context_trials"] == "screen"
    other = cli("run", "grid_ctf", "-n", "2", "--context-trials", "full", "--run-id", "kept")
    assert other.code != 0 and "--context-trials" in other.err
    more = cli("run", "grid_ctf", "-n", "2", "--run-id", "kept", "--json")
    assert more.code == 0, more.err


def test_a_model_route_without_a_call_budget_runs_without_trials_and_says_so(home, cli, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "competitor": [
                    '{"aggression": 0.8, "stealth": 0.6, "defense_radius": 2, '
                    '"retreat_threshold": 0.8}'
                ],
                "coach": [json.dumps({"edits": _targets(BAD, "Bad")})],
                "curator": ['{"decisions": [{"index": 0, "decision": "accept"}]}'],
                "*": ["ok"],
                "on_exhausted": "repeat_last",
            }
        )
    )
    done = cli(
        "run",
        "grid_ctf",
        "-n",
        "2",
        "--provider",
        f"scripted:{script}",
        "--context-trials",
        "screen",
        "--json",
    )
    assert done.code == 0, done.err
    assert "with a model competitor cost two calls a pair" in done.err
    assert "give the run a --max-calls budget" in done.err
    assert _promotions()["candidates"] == []
    assert len(_bullets("Bad")) == 1, "the edit was admitted as with trials off"


def _served_summaries() -> set[str]:
    with open_store(readonly=True) as store:
        return {
            row["summary"]
            for row in store.query(
                "SELECT summary FROM knowledge WHERE scope = 'scenario:grid_ctf' AND "
                "kind IN ('bullet', 'hint') AND status = 'active'"
            )
        }


def test_a_rollback_by_hand_serves_again_the_bundle_it_returns_to(home, coach_once, cli):
    """The helpful edit was accepted and served; rolled back, its bullets are retired (kept for
    the audit) and the scope serves what it served before the candidate."""
    coach_once(_targets(GOOD, "Good"))
    _run(3, context_trials="full")
    assert {row["status"] for row in _bullets("Good")} == {"active"}
    before = {summary for summary in _served_summaries() if not summary.startswith("Good")}
    done = cli("promotions", "rollback", "grid_ctf", "--reason", "worse in my runs", "--json")
    assert done.code == 0, done.err
    back = done.json()
    assert back["ref"] is None and back["entries"]["retired"] == 4
    assert {row["status"] for row in _bullets("Good")} == {"retired"}
    assert _served_summaries() == before
    assert "Good" not in (home / "knowledge" / "grid_ctf" / "playbook.md").read_text()
