"""Scenario runs against a real model server (LESSONLOOP_TEST_MODEL_URL; skipped without one).

The kit in shared/tools/local-model serves a real small instruction model on 127.0.0.1; these
tests check what fake servers cannot: that a small model, given lessonloop's prompts and
schemas, proposes strategies the scenario accepts, and that usage counts every answer.
"""

from __future__ import annotations

import sqlite3

import pytest

from lessonloop.config import ROLES

pytestmark = pytest.mark.real_model


def _route(monkeypatch, real_model, roles) -> None:
    for role in roles:
        for field, value in (
            ("PROVIDER", "openai"),
            ("BASE_URL", real_model.url),
            ("MODEL", real_model.model),
        ):
            monkeypatch.setenv(f"LESSONLOOP_{role.upper()}_{field}", value)


def _attempts(home, run_id: str) -> tuple[int, int]:
    """(competitor attempts, attempts whose strategy was played)."""
    with sqlite3.connect(home / "lessonloop.db") as db:
        total = db.execute(
            "SELECT COUNT(*) FROM gate_decisions WHERE run_id = ?", (run_id,)
        ).fetchone()[0]
        played = db.execute(
            "SELECT COUNT(DISTINCT generation_index || ':' || attempt) FROM "
            "matches WHERE run_id = ? AND side = 'challenger'",
            (run_id,),
        ).fetchone()[0]
    return total, played


@pytest.mark.parametrize("roles", [ROLES, ("competitor",)], ids=["every-role", "competitor-only"])
def test_a_small_model_proposes_strategies_the_game_accepts(
    cli, home, monkeypatch, real_model, roles
):
    _route(monkeypatch, real_model, roles)
    result = cli("run", "grid_ctf", "--iterations", "2", "--run-id", "real", "--json")
    assert result.code == 0, result.err
    assert result.json()["status"] == "completed"
    total, played = _attempts(home, "real")
    assert played >= 2 and played / total >= 0.6, f"{played} of {total} attempts were played"
    usage = cli("usage", "--run", "real", "--json").json()
    assert usage["by_role"]["competitor"]["calls"] >= total
    assert usage["cost"] == 0.0
    if roles == ROLES:
        assert {"analyst", "coach"} <= set(usage["by_role"])


def test_a_small_model_trials_the_coachs_bundle_within_its_call_budget(
    cli, home, monkeypatch, real_model, coach_once
):
    """Context trials with a real model competitor: each side's proposal for a trial seed is a
    real call whose prompt holds its bundle; every call is on the ledger within --max-calls."""
    from ..promotion.steering import GOOD, targets

    _route(monkeypatch, real_model, ("competitor",))
    coach_once(targets(GOOD, "Good"))
    run = ("run", "grid_ctf", "-n", "1", "--context-trials", "screen", "--max-calls", "40")
    result = cli(*run, "--run-id", "trialled", "--json")
    assert result.code == 0, result.err
    [candidate] = cli("promotions", "--json").json()["candidates"]
    assert candidate["trials"] == {"screen": 6} and candidate["status"] in ("active", "rejected")
    with sqlite3.connect(home / "lessonloop.db") as db:
        calls = db.execute(
            "SELECT SUM(calls) FROM provider_calls WHERE run_id = 'trialled' AND "
            "role = 'competitor'"
        ).fetchone()[0]
    assert 12 < calls <= 40, "the generation's own call(s) and two a trial pair"
