"""Ambient promotion under the charter (issue 23, point 4): ``[promotion]`` in config.toml says
what may be served without a person; ``promotions approve ID`` serves what waits for approval;
``promote`` trials what passed only screening through every stage; ``promote ID --reason``
serves a candidate by hand. Real runs make the candidates (the offline coach steered)."""

from __future__ import annotations

from lessonloop.promotion import gate, probation
from lessonloop.store import open_store

from ..promotion.steering import BAD, GOOD, targets

FULL_TRIAL = gate.SCREEN_PAIRS + gate.CONFIRM_PAIRS + gate.HOLDOUT_PAIRS


def _charter(home, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[promotion]\n" + text + "\n")


def _bullets(marker: str) -> set[str]:
    with open_store(readonly=True) as store:
        return {
            row["status"]
            for row in store.query(
                "SELECT status FROM knowledge WHERE kind = 'bullet' AND summary LIKE ?",
                (marker + "%",),
            )
        }


def _served_now() -> str:
    """The id of the bundle the competitor's context holds now, built the way a trial builds
    it (every active entry of the scope: the run's few fit the context's caps)."""
    from lessonloop.knowledge.entries import active
    from lessonloop.promotion import bundles

    with open_store(readonly=True) as store:
        return bundles.bundle_id([e.to_dict() for e in active(store, "scenario:grid_ctf")])


def _run(cli, iterations: int = 2) -> None:
    done = cli("run", "grid_ctf", "-n", str(iterations), "--context-trials", "screen", "--json")
    assert done.code == 0, done.err


def test_with_manual_approval_an_accepted_bundle_waits_until_approved(home, cli, coach_once):
    _charter(home, 'approve = "manual"')
    coach_once(targets(GOOD, "Good"))
    _run(cli)
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["status"] == "accepted", "the gate accepted it"
    assert [d["action"] for d in candidate["decisions"]] == ["accept", "hold"]
    assert "approval" in candidate["decisions"][-1]["rationale"]
    assert _bullets("Good") == set(), "not served while it waits"
    assert cli("promotions", "--json").json()["active"] == []

    done = cli("promotions", "approve", str(candidate["id"]), "--json")
    assert done.code == 0, done.err
    pointer = done.json()
    assert pointer["ref"] == candidate["ref"] and pointer["probation_left"] == probation.GENERATIONS
    assert _bullets("Good") == {"active"}, "served through admission"
    [active] = cli("promotions", "--json").json()["active"]
    assert active["served_ref"] == _served_now(), "what the competitor's context holds now"
    after = cli("promotions", "--json").json()["candidates"][0]
    assert after["status"] == "active" and after["decisions"][-1]["actor"] == "user"

    again = cli("promotions", "approve", str(candidate["id"]), "--json")
    assert again.code == 2 and "is active" in again.error()["error"]
    unknown = cli("promotions", "approve", "999")
    assert unknown.code == 1 and "no promotion candidate 999" in unknown.err


def test_a_scope_the_charter_does_not_list_is_held(home, cli, coach_once):
    _charter(home, 'auto_activate = ["task:*"]')
    coach_once(targets(GOOD, "Good"))
    _run(cli)
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["decisions"][-1]["action"] == "hold"
    assert "does not let scenario:grid_ctf auto-activate" in candidate["decisions"][-1]["rationale"]
    assert _bullets("Good") == set()


def test_promote_trials_a_screened_bundle_through_every_stage(home, cli, coach_once):
    _charter(home, f"min_trials = {FULL_TRIAL}")
    coach_once(targets(GOOD, "Good"))
    _run(cli)
    [screened] = cli("promotions", "--json").json()["candidates"]
    assert screened["status"] == "accepted" and screened["trials"] == {"screen": 6}
    assert "asks for 38" in screened["decisions"][-1]["rationale"]
    assert _bullets("Good") == set()

    done = cli("promote", "--scope", "grid_ctf", "--json")
    assert done.code == 0, done.err
    [outcome] = done.json()["outcomes"]
    assert outcome["candidate_id"] == screened["id"] and outcome["action"] == "activated"
    assert outcome["trials"] >= FULL_TRIAL and outcome["plays"] > 0
    assert outcome["active"]["probation_left"] == probation.GENERATIONS
    [after] = cli("promotions", "--json").json()["candidates"]
    assert set(after["trials"]) == {"screen", "confirm", "holdout"}
    assert [d["action"] for d in after["decisions"]][-2:] == ["accept", "activate"]
    assert _bullets("Good") == {"active"}
    assert "nothing waits for a trial" in cli("promote").out, "decided: not trialled again"


def test_promote_rejects_a_screened_bundle_that_does_not_hold_up(home, cli, coach_once):
    """The screen is a weak check; the full trial is the gate's. A bundle as good as what is
    served passes neither; one that loses is rejected and nothing changes."""
    _charter(home, f"min_trials = {FULL_TRIAL}")
    coach_once(targets(BAD, "Bad"))
    _run(cli)
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["status"] == "rejected", "a harmful bundle does not pass even the screen"
    assert "nothing waits for a trial" in cli("promote").out
    assert _bullets("Bad") == set()


def test_promote_by_hand_serves_a_rejected_candidate_and_says_who(home, cli, coach_once):
    coach_once(targets(BAD, "Bad"))
    _run(cli)
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["status"] == "rejected"
    refused = cli("promote", str(candidate["id"]), "--json")
    assert refused.code == 2 and "say why" in refused.error()["error"]
    done = cli("promote", str(candidate["id"]), "--reason", "try it in my runs", "--json")
    assert done.code == 0, done.err
    assert done.json()["probation_left"] is None, "a user's choice is not on probation"
    assert _bullets("Bad") == {"active"}
    [after] = cli("promotions", "--json").json()["candidates"]
    assert after["status"] == "active"
    assert after["decisions"][-1]["actor"] == "user"
    assert "try it in my runs" in after["decisions"][-1]["rationale"]
    back = cli("promotions", "rollback", "grid_ctf", "--reason", "it was bad", "--json")
    assert back.code == 0 and _bullets("Bad") == {"retired"}


def test_a_broken_charter_is_one_line_naming_it(home, cli):
    _charter(home, 'approve = "sometimes"')
    for args in (("promote",), ("run", "grid_ctf", "-n", "1")):
        done = cli(*args, "--json")
        assert done.code == 2
        assert "[promotion] approve must be" in done.error()["error"]
    _charter(home, "min_trials = 40")
    done = cli("promote")
    assert done.code == 2 and "min_trials must be an integer from 0 to 38" in done.err
    _charter(home, "min_trial = 3")
    done = cli("promote")
    assert done.code == 2 and "[promotion] has no 'min_trial'" in done.err
    assert "Traceback" not in done.err
