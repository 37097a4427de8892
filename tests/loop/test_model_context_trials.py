"""Context trials with a model competitor (issue 23, point 2: "budgeted with --max-calls for
models"): each side's proposal for a trial seed is one competitor call whose prompt holds that
side's bundle; the trial runs only with a call budget and is not played when the budget left
cannot pay for it. The endpoint is a loopback OpenAI-compatible server whose competitor
follows the playbook it is shown (the wire behaviour; the real-model path is bench/real_model)."""

from __future__ import annotations

import json
import random

import pytest

from lessonloop.promotion import gate
from lessonloop.store import open_store

from ..promotion.steering import BAD, GOOD, targets
from ..providers.fake_servers import FakeServer, Received, Reply, openai_completion

MARKER = "Good aggression"  # the first of the coach's bullets (steering.targets(GOOD, "Good"))


def _competitor(received: Received) -> Reply:
    """A competitor that plays near GOOD when its prompt's playbook holds the coach's bullets,
    else near BAD; the seed of the request draws the jitter."""
    rng = random.Random(json.dumps(received.body.get("seed")))
    base = GOOD if MARKER in received.text else BAD
    value = {
        **base,
        "aggression": round(min(1.0, max(0.0, base["aggression"] + rng.uniform(-0.05, 0.05))), 3),
    }
    return Reply(body=openai_completion(json.dumps(value), prompt_tokens=90, completion_tokens=20))


@pytest.fixture
def model_competitor(monkeypatch):
    with FakeServer(responder=_competitor) as server:
        monkeypatch.setenv("LESSONLOOP_COMPETITOR_PROVIDER", "openai")
        monkeypatch.setenv("LESSONLOOP_COMPETITOR_MODEL", "small")
        monkeypatch.setenv("LESSONLOOP_COMPETITOR_BASE_URL", server.base_url + "/v1")
        yield server


def _bullets() -> set[str]:
    with open_store(readonly=True) as store:
        return {
            row["status"]
            for row in store.query(
                "SELECT status FROM knowledge WHERE kind = 'bullet' AND summary LIKE 'Good%'"
            )
        }


def _chats(server) -> list[Received]:
    return [r for r in server.received if r.path.endswith("/chat/completions")]


def test_a_model_competitor_trials_the_bundle_with_two_calls_a_pair(
    cli, coach_once, model_competitor
):
    coach_once(targets(GOOD, "Good"))
    done = cli(
        "run", "grid_ctf", "-n", "2", "--context-trials", "screen", "--max-calls", "60", "--json"
    )
    assert done.code == 0, done.err
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["status"] == "active" and candidate["trials"]["screen"] == gate.SCREEN_PAIRS
    assert _bullets() == {"active"}, "served once it won"
    asked = [r for r in _chats(model_competitor) if "seed" in r.body]
    trial_seeds = {r.body["seed"] for r in asked} - {None}
    with_bullets = [r for r in asked if MARKER in r.text]
    # generation 1's trial: 6 pairs, one call a side (the candidate's prompts hold the bullets);
    # generation 2 is served the bullets and watches them on probation (3 pairs, two calls each)
    assert len(with_bullets) >= gate.SCREEN_PAIRS and len(trial_seeds) >= gate.SCREEN_PAIRS
    with open_store(readonly=True) as store:
        ledger = store.query_one(
            "SELECT SUM(calls) FROM provider_calls WHERE role = 'competitor' AND provider = ?",
            ("openai",),
        )[0]
    assert ledger == len(_chats(model_competitor)), "every trial call on the ledger"


def test_without_a_call_budget_a_model_run_goes_without_trials(cli, coach_once, model_competitor):
    coach_once(targets(GOOD, "Good"))
    done = cli("run", "grid_ctf", "-n", "2", "--context-trials", "screen", "--json")
    assert done.code == 0, done.err
    assert "give the run a --max-calls budget" in done.err
    assert cli("promotions", "--json").json()["candidates"] == []
    assert _bullets() == {"active"}, "admitted as the curator accepted them, as before"


def test_a_trial_the_budget_cannot_pay_is_not_played(cli, coach_once, model_competitor):
    coach_once(targets(GOOD, "Good"))
    done = cli(
        "run", "grid_ctf", "-n", "1", "--context-trials", "screen", "--max-calls", "5", "--json"
    )
    assert done.code == 0, done.err
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["status"] == "rejected" and candidate["trials"] == {}
    assert "not trialled" in candidate["decisions"][0]["rationale"]
    assert _bullets() == set()
