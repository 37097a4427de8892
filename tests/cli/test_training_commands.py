"""``lessonloop train`` and ``lessonloop models ...`` through the real CLI, on real offline runs:
a checkpoint registered, trialled through the promotion gate and served only when accepted;
activation and rollback by hand; errors as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonloop.store import open_store
from lessonloop.training import registry
from tests.conftest import copy_home, isolated_home
from tests.training.homes import with_runs


def _checkpoints(cli) -> list[dict]:
    """The competitor's candidates (the runs' context bundles are candidates too)."""
    listed = cli("promotions", "--json").json()["candidates"]
    return [c for c in listed if c["role"] == "competitor"]


@pytest.fixture
def runs_home(home):
    return with_runs(home)


@pytest.fixture(scope="module")
def trained_once(tmp_path_factory) -> tuple[Path, dict]:
    """The runs' home after ``train grid_ctf --backend surrogate --json`` (the CLI in this
    process), and what it printed: made once for the three tests that start from that
    training (each copies the home); a training and its trials cost seconds."""
    import contextlib
    import io

    from lessonloop.cli import main

    root = tmp_path_factory.mktemp("trained")
    with pytest.MonkeyPatch.context() as patch:
        made = with_runs(isolated_home(patch, root))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["train", "grid_ctf", "--backend", "surrogate", "--json"])
    assert code == 0, err.getvalue()
    return made, json.loads(out.getvalue())


@pytest.fixture
def trained_home(home, trained_once) -> dict:
    """This test's copy of ``trained_once``'s home; what its training printed."""
    copy_home(trained_once[0], home)
    return trained_once[1]


def test_train_registers_trials_and_records_the_decision(trained_home, cli):
    result = trained_home
    ident = result["checkpoint"]["id"]
    assert result["dataset"]["runs"] == 3 and result["dataset"]["matches"] > 500
    promotion = result["promotion"]
    assert promotion["decision"] in ("accept", "reject") and promotion["trials"] >= 6
    assert promotion["incumbent"].startswith("offline:b-")

    listed = cli("models", "list", "--json").json()
    assert [c["id"] for c in listed["checkpoints"]] == [ident]
    [candidate] = _checkpoints(cli)
    assert (candidate["role"], candidate["kind"], candidate["ref"], candidate["source"]) == (
        "competitor",
        "checkpoint",
        ident,
        "train",
    )
    assert sum(candidate["trials"].values()) == promotion["trials"]
    gate_decision = candidate["decisions"][0]
    assert (gate_decision["action"], gate_decision["actor"]) == (promotion["decision"], "gate")
    assert gate_decision["statistic"] == promotion["statistic"]
    shown = cli("models", "show", ident, "--json").json()
    assert shown["active"] is promotion["activated"] is (promotion["decision"] == "accept")
    assert shown["params"]["model"]["weights"] and shown["promotions"][0]["id"] == candidate["id"]
    served = [a["ref"] for a in listed["active"]]
    assert served == ([ident] if promotion["activated"] else [])

    text = cli("train", "grid_ctf")  # the same data: the same checkpoint, trialled again
    assert text.code == 0 and f"checkpoint {ident} (surrogate, already registered)" in text.out
    assert "promotion against " in text.out and "t " in text.out


def test_a_checkpoint_is_trialled_against_the_active_one(trained_home, cli):
    """Once a checkpoint is served, the next one meets it, not the offline agent; the same
    checkpoint (trained again on the same data) is not trialled against itself."""
    ident = trained_home["checkpoint"]["id"]
    assert cli("models", "activate", ident).code == 0
    candidates = len(_checkpoints(cli))
    again = cli("train", "grid_ctf", "--json").json()["promotion"]
    assert (again["incumbent"], again["decision"], again["trials"]) == (ident, "not trialled", 0)
    assert "not trialled against itself" in again["rationale"]
    assert len(_checkpoints(cli)) == candidates, "no candidate for what is served"
    assert cli("models", "list", "--json").json()["active"][0]["ref"] == ident


def test_a_checkpoint_that_wins_its_trials_is_served(runs_home, cli, monkeypatch):
    """Against a weak competitor (one that always proposes a strategy that scores about 0.39
    where the runs' best score above 0.6) the gate accepts and activates the checkpoint."""
    from lessonloop.training import trial

    weak = {"aggression": 0.0, "stealth": 0.0, "defense_radius": 1, "retreat_threshold": 0.0}
    monkeypatch.setattr(trial, "offline_proposer", lambda scenario, entries: lambda seed: weak)
    result = cli("train", "grid_ctf", "--json").json()
    ident, promotion = result["checkpoint"]["id"], result["promotion"]
    assert (promotion["decision"], promotion["stage"], promotion["activated"]) == (
        "accept",
        "holdout",
        True,
    )
    assert result["active"]["ref"] == ident and result["active"]["previous_ref"] is None
    [candidate] = _checkpoints(cli)
    assert [(d["action"], d["actor"]) for d in candidate["decisions"]] == [
        ("accept", "gate"),
        ("activate", "gate"),
    ]
    assert candidate["status"] == "active"


def _register(home, weight: float) -> str:
    params = {"model": {"mean": [0.0], "scale": [1.0], "weights": [weight], "intercept": 0.5}}
    with open_store(home) as store, store.transaction() as conn:
        ident, _ = registry.register(
            conn, "scenario:grid_ctf", "surrogate", "quadratic-ridge", ["competitor"],
            "hash", {"heldout_r2": 0.1, "examples": 10}, params,
        )  # fmt: skip
    return ident


def test_activate_and_rollback_by_hand(home, cli):
    home.mkdir(parents=True, exist_ok=True)
    first, second = _register(home, 0.1), _register(home, 0.2)
    assert cli("models", "activate", first, "--json").json()["previous_ref"] is None
    pointer = cli("models", "activate", second, "--json").json()
    assert (pointer["ref"], pointer["previous_ref"]) == (second, first)
    again = cli("models", "activate", second, "--json")
    assert again.code == 2 and "already the active competitor" in again.error()["error"]
    listed = cli("models", "list").out
    assert f"{second} (active)" in listed and f"{first} (active)" not in listed

    back = cli("models", "rollback", "grid_ctf", "--reason", "worse in my runs", "--json")
    assert back.code == 0 and back.json()["ref"] == first
    assert cli("models", "show", first, "--json").json()["active"] is True
    decisions = [
        (d["action"], d["actor"], d["rationale"])
        for c in cli("promotions", "--json").json()["candidates"]
        for d in c["decisions"]
    ]
    assert ("rollback", "user", "worse in my runs") in decisions
    assert decisions.count(("activate", "user", "activated by hand")) == 2
    # the first promotion rolled back: the default competitor (the offline agent) again
    default = cli("models", "rollback", "grid_ctf", "--reason", "back to the agent")
    assert default.code == 0 and "back to the offline agent (the default)" in default.out
    assert cli("models", "show", first, "--json").json()["active"] is False
    none_left = cli("models", "rollback", "grid_ctf", "--json")
    assert none_left.code == 2 and "nothing to roll back to" in none_left.error()["error"]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (("train", "nope"), 2, "unknown scenario 'nope'"),
        (("train", "grid_ctf", "--backend", "nope"), 2, "--backend is one of surrogate, lora"),
        (("train", "task:fix-bug"), 2, "task training needs the lora backend"),
        (("train", "grid_ctf"), 1, "run it first"),
        (("models", "show", "ckpt-nope"), 1, "no checkpoint 'ckpt-nope'"),
        (("models", "activate", "ckpt-nope"), 1, "no checkpoint 'ckpt-nope'"),
        (("models", "rollback", "nope"), 2, "unknown scenario 'nope'"),
    ],
)
def test_errors_are_one_line(cli, args, code, words):
    done = cli(*args, "--json")
    assert done.code == code and words in done.error()["error"] and done.out == ""
    text = cli(*args)
    assert text.code == code and text.err.startswith("error: ") and words in text.err


def test_an_empty_home_lists_no_models_and_no_traceback(run_cli):
    assert run_cli("models", "list", "--json").json() == {"checkpoints": [], "active": []}
    done = run_cli("train", "grid_ctf")
    assert done.code == 1 and "Traceback" not in done.err and "run it first" in done.err


def test_the_active_checkpoint_is_the_scenarios_competitor_until_rolled_back(trained_home, cli):
    """Served only once it is the scope's active competitor; an explicit provider, a fresh run
    or a rollback gives the offline agent again; another scenario refuses it."""

    def provider(*args) -> str:
        done = cli("run", "grid_ctf", "--iterations", 1, *args, "--json")
        assert done.code == 0, done.err
        status = cli("status", done.json()["run_id"], "--json").json()["run"]
        assert status["status"] == "completed"
        return status["agent_provider"]

    ident = trained_home["checkpoint"]["id"]
    if not cli("models", "show", ident, "--json").json()["active"]:
        assert cli("models", "activate", ident).code == 0
    assert provider() == f"trained:{ident}"
    assert provider("--provider", "local") == "local"
    assert provider("--fresh") == "local"
    other = cli("run", "negotiation", "-n", 1, "--provider", f"trained:{ident}", "--json")
    assert other.code == 2 and "was trained for scenario:grid_ctf" in other.error()["error"]
    unknown = cli("run", "grid_ctf", "-n", 1, "--provider", "trained:ck-nope", "--json")
    assert unknown.code == 2 and "unknown checkpoint 'ck-nope'" in unknown.error()["error"]
    assert cli("models", "rollback", "grid_ctf", "--reason", "back to the agent").code == 0
    assert provider() == "local"


def test_a_plugin_scenario_is_named_by_the_name_its_runs_stored(home, cli):
    """``train NAME`` and ``models rollback NAME`` find a plugin scenario by the reference its
    runs stored, as ``promotions --scope NAME`` does."""
    from ..conftest import PLUGIN

    assert cli("run", PLUGIN, "-n", "1", "--json").code == 0
    name = cli("list", "--json").json()[0]["scenario"]
    done = cli("models", "rollback", name, "--json")
    assert done.code == 2 and "nothing to roll back to" in done.error()["error"]
    unknown = cli("models", "rollback", "no-such-scenario", "--json")
    assert unknown.code == 2 and "unknown scenario" in unknown.error()["error"]
