"""improve and judge against a real small model (skipped without LESSONLOOP_TEST_MODEL_URL):
structured output makes every improve output of a JSON-schema task valid, and a judge either
gives a validated verdict or reports that it could not. Few, short calls."""

from __future__ import annotations

import pytest

from lessonloop.scenarios.base import schema_problems
from lessonloop.tasks.spec import read

from ..conftest import ROOT

pytestmark = pytest.mark.real_model
SERVICE = ROOT / "examples" / "tasks" / "service-config.yaml"


@pytest.fixture
def routed(real_model, monkeypatch, home):
    for name, value in real_model.env().items():
        monkeypatch.setenv(name, value)
    return real_model


def test_improve_on_a_real_model_gives_only_schema_valid_outputs(cli, routed):
    import json

    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    result = cli("improve", SERVICE, "--run-id", "real", "--max-calls", 6, "--json")
    assert result.code == 0, result.err
    spec, _ = read(SERVICE)
    with open_store(readonly=True) as store:
        outputs = [
            run_store.loads(g["strategy_json"])["output"]
            for g in run_store.generations(store, "real")
        ]
    assert outputs
    for output in outputs:
        assert schema_problems(json.loads(output), spec.json_schema, "output") == [], output
    usage = cli("usage", "--run", "real", "--json").json()
    assert 1 <= usage["calls"] <= 6


def test_a_real_judge_gives_a_validated_verdict_or_reports_its_failure(cli, routed, tmp_path):
    task = tmp_path / "task.yaml"
    task.write_text(
        "name: real-judge\nprompt: Reply to a customer charged twice for order "
        "A-1.\nrubric:\n  - {name: empathy, weight: 1, description: kind}\n"
        "  - {name: accuracy, weight: 1, description: says the refund comes in "
        "3-5 days}\n"
    )
    output = tmp_path / "reply.txt"
    output.write_text("Sorry for the double charge on A-1: the refund reaches you in 3-5 days.")
    result = cli("judge", task, "--output", output, "--json")
    if result.code == 0:
        verdict = result.json()
        assert set(verdict["dimensions"]) == {"empathy", "accuracy"}
        assert all(0 <= v <= 1 for v in verdict["dimensions"].values())
        assert 0 <= verdict["score"] <= 1
    else:
        assert result.code == 1
        assert "the judge gave no usable verdict" in result.error()["error"]
    assert cli("usage", "--json").json()["by_role"]["judge"]["calls"] >= 1
