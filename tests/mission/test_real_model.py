"""A mission on examples/mission-repo against a real model server (LESSONLOOP_TEST_MODEL_URL,
such as the local model kit; skipped without one). The target: it succeeds by the verifier
within 10 steps, or fails with the verifier's last output as the reason, and the folder is
untouched either way until ``mission apply``."""

from __future__ import annotations

import subprocess

import pytest

from .conftest import VERIFIER

pytestmark = pytest.mark.real_model

GOAL = "fix the off-by-one bug in calc.total so that test_calc.py passes"


def test_a_small_model_mission_succeeds_or_says_why(cli, repo, monkeypatch, real_model):
    for name, value in {
        "LESSONLOOP_PROVIDER": "openai",
        "LESSONLOOP_BASE_URL": real_model.url,
        "LESSONLOOP_MODEL": real_model.model,
        "LESSONLOOP_TIMEOUT": "300",
    }.items():
        monkeypatch.setenv(name, value)
    before = (repo / "calc.py").read_text()
    result = cli(
        "mission", GOAL, "--verifier", VERIFIER, "--workspace", repo, "--run-id", "real", "--json"
    )
    summary = result.json()
    assert len(summary["steps"]) <= 10 and summary["calls"] == len(summary["steps"])
    assert (repo / "calc.py").read_text() == before
    if summary["status"] == "succeeded":
        assert result.code == 0 and summary["steps"][-1]["verifier_exit"] == 0
        assert cli("mission", "apply", "real").code == 0
        fixed = subprocess.run(["python3", "test_calc.py"], cwd=repo, capture_output=True)
        assert fixed.returncode == 0, fixed.stderr
    else:
        assert result.code == 1 and summary["status"] == "failed"
        assert "the verifier still fails; its last output:" in summary["stop_reason"]
