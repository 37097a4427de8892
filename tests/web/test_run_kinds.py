"""The dashboard's run list and run page show evolve runs and missions (their own report page)
without an error, and their event streams serve their events."""

from __future__ import annotations

import pytest

from ..evolve.conftest import kernel_dir  # noqa: F401 (fixtures)
from ..mission.conftest import FIX, VERIFIER, model, repo  # noqa: F401

pytestmark = pytest.mark.usefixtures("home")


def test_the_dashboard_shows_an_evolve_run_and_a_mission(client, cli, kernel_dir, repo, model):  # noqa: F811
    assert cli("evolve", kernel_dir / "spec.yaml", "--generations", 1, "--run-id", "e1").code == 0
    model(lambda request: FIX)
    mission = cli(
        "mission", "fix it", "--verifier", VERIFIER, "--workspace", repo, "--run-id", "m1"
    )
    assert mission.code == 0, mission.err
    runs = client.get("/")
    assert runs.status_code == 200
    assert "evolve:squares" in runs.text and "mission:fix it" in runs.text
    for run_id, words in (("e1", "<h2>Candidates</h2>"), ("m1", "<h2>Steps</h2>")):
        page = client.get(f"/runs/{run_id}")
        assert page.status_code == 200, page.text[:300]
        assert words in page.text and "Usage and cost" in page.text
        events = client.get(f"/api/runs/{run_id}/events")
        assert events.status_code == 200 and "generation_completed" in events.text
