"""``lessonloop promotions``: what the gate tried, decided and made active, and a rollback by
hand with its reason (the gate's own trials: promotion/gate.py, with a real store)."""

from __future__ import annotations

from lessonloop.promotion import gate, records
from lessonloop.store import open_store


def _accepted(conn, ref: str, gain: float) -> int:
    candidate = records.add_candidate(
        conn, "scenario:grid_ctf", "context", "bundle", ref, "coach", "r1", 3
    )
    verdict = gate.judge(
        lambda side, seed: (seed % 89) / 89 + (gain if side == gate.CANDIDATE else 0), ref
    )
    records.record_verdict(conn, candidate, verdict)
    return candidate


def test_an_empty_home_lists_nothing(cli):
    done = cli("promotions", "--json")
    assert done.code == 0 and done.json() == {"candidates": [], "active": []}
    assert "no promotion candidates" in cli("promotions").out


def test_candidates_trials_decisions_and_a_rollback_by_hand(home, cli):
    with open_store(home) as store, store.transaction() as conn:
        first, second = _accepted(conn, "b-first", 0.1), _accepted(conn, "b-second", 0.2)
        _accepted(conn, "b-same", 0.0)
        records.activate(conn, first, "gate", "won its trials")
        records.activate(conn, second, "gate", "won its trials")
    listed = cli("promotions", "--scope", "grid_ctf", "--json").json()
    assert [c["ref"] for c in listed["candidates"]] == ["b-same", "b-second", "b-first"]
    same, newest = listed["candidates"][0], listed["candidates"][1]
    assert same["status"] == "rejected" and same["trials"] == {"screen": 6}
    assert newest["status"] == "active" and sum(newest["trials"].values()) == 38
    assert [d["action"] for d in newest["decisions"]] == ["accept", "activate"]
    [pointer] = listed["active"]
    assert (pointer["ref"], pointer["previous_ref"]) == ("b-second", "b-first")
    text = cli("promotions").out
    assert (
        "active: scenario:grid_ctf context = b-second" in text
        and "rollback target: b-first" in text
    )
    assert "(run r1, generation 3): rejected, 6 trials  reject by gate: screen:" in text

    back = cli("promotions", "rollback", "grid_ctf", "--reason", "worse in my runs", "--json")
    assert back.code == 0 and back.json()["ref"] == "b-first"
    after = cli("promotions", "--json").json()
    assert after["active"][0]["ref"] == "b-first" and after["active"][0]["previous_ref"] is None
    rolled = [c for c in after["candidates"] if c["ref"] == "b-second"][0]
    assert rolled["status"] == "rolled back"
    assert rolled["decisions"][-1] == {
        **rolled["decisions"][-1],
        "action": "rollback",
        "actor": "user",
        "rationale": "worse in my runs",
    }


def test_a_rollback_that_cannot_be_done_says_why_in_one_line(cli):
    for args, message in (
        (("grid_ctf", "--reason", "x"), "nothing to roll back to"),
        (("grid_ctf", "--reason", "x", "--role", "judge"), "is one of context, competitor"),
        (("grid_ctf", "--reason", "  "), "say why"),
        (("project", "--reason", "x"), "holds memories, not a playbook"),
    ):
        done = cli("promotions", "rollback", *args, "--json")
        assert done.code in (1, 2) and message in done.error()["error"], (args, done)
        assert "Traceback" not in done.err


def test_a_runs_candidates_show_in_show_and_export(home, cli):
    run = ("run", "grid_ctf", "--iterations", 2, "--run-id", "r1", "--context-trials", "off")
    assert cli(*run).code == 0
    with open_store(home) as store, store.transaction() as conn:
        _accepted(conn, "b-in-run", 0.1)  # (run r1, generation 3: not a generation it has)
        candidate = records.add_candidate(
            conn, "scenario:grid_ctf", "context", "bundle", "b-gen2", "coach", "r1", 2
        )
        records.record_verdict(
            conn, candidate, gate.judge(lambda side, seed: (seed % 7) / 7, "b-gen2")
        )
    shown = cli("show", "r1", "--generation", "2", "--json").json()
    [promoted] = shown["generation"]["promotions"]
    assert (promoted["ref"], promoted["status"]) == ("b-gen2", "rejected")
    assert promoted["decisions"][0]["stage"] == "screen"
    assert cli("show", "r1", "--generation", "1", "--json").json()["generation"]["promotions"] == []
    exported = cli("export", "r1").json()
    by_generation = {g["generation_index"]: g["promotions"] for g in exported["generations"]}
    assert by_generation[1] == [] and by_generation[2][0]["ref"] == "b-gen2"
    scores = by_generation[2][0]["trial_scores"]
    assert len(scores) == 6 and all(s["candidate"] == s["incumbent"] for s in scores)
