"""An evolve run is a run like any other: ``list``, ``status``, ``show``, ``watch``, ``export``,
``report`` and ``resume`` know it (the dashboard: tests/web/test_run_kinds.py), its candidates are its generations, and the
rows they read are derived from evolve's own tables (migration 19 for runs stored before)."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest

from ..conftest import contract_validator, copy_home, home_made_once
from .conftest import KERNEL, REFERENCE, SPEC

DECISIONS = {"champion", "rejected", "wrong", "crashed", "refused"}


@pytest.fixture(scope="module")
def made_e1(tmp_path_factory):
    kernel = tmp_path_factory.mktemp("kernel")
    for name, text in (("kernel.py", KERNEL), ("reference.py", REFERENCE), ("spec.yaml", SPEC)):
        (kernel / name).write_text(text)
    return home_made_once(
        tmp_path_factory, ["evolve", kernel / "spec.yaml", "--generations", "2", "--run-id", "e1"]
    )


@pytest.fixture
def evolved(home, made_e1):
    """A finished 2-generation evolve run ``e1`` of the tiny kernel (made once; each test has
    its copy)."""
    copy_home(made_e1, home)
    return "e1"


def test_status_show_and_list_know_an_evolve_run(cli, evolved):
    listed = cli("list", "--json").json()
    assert [(r["run_id"], r["kind"], r["scenario"]) for r in listed] == [
        ("e1", "evolve", "evolve:squares")
    ]
    assert "evolve  evolve:squares  completed  2/2" in cli("list").out
    status = cli("status", "e1", "--json").json()
    contract_validator("run-status-v1.schema.json").validate(status)
    gens = status["generations"]
    assert [g["generation_index"] for g in gens] == [1, 2]  # the baseline is not a generation
    assert {g["gate_decision"] for g in gens} <= DECISIONS
    candidates = status["evolve"]["candidates"]
    assert [c["generation"] for c in candidates] == [0, 1, 2]
    assert all(c["receipt"]["source_digest"].startswith("sha256:") for c in candidates)
    assert "speed-up" in status["field_meanings"]["mean_score"]
    for gen, candidate in zip(gens, candidates[1:]):
        # a wrong candidate scores 0; a timed one its speed-up over the baseline, > 0
        assert (gen["mean_score"] == 0) == (candidate["speedup"] is None)
        assert (gen["gate_decision"] == "wrong") == (candidate["correct"] is False)
        if candidate["speedup"] is not None:
            assert gen["dimensions"]["speedup_vs_champion"] == candidate["speedup"]
            assert gen["mean_delta"] == pytest.approx(math.log(candidate["speedup"]))
            recheck = candidate["stats"]["recheck"]
            assert gen["wins"] + gen["losses"] + gen["ties"] == candidate["stats"]["pairs"] + (
                recheck["pairs"] if recheck else 0
            )
    champions = [g for g in gens if g["gate_decision"] == "champion"]
    best = status["run"]["best_score"]
    if champions:  # the run's best is its champion measured again on fresh pairs
        confirmation = status["evolve"]["champion"]["confirmation"]
        assert best == pytest.approx(confirmation["speedup"])
        assert gens[-1]["validated_score"] == pytest.approx(confirmation["speedup"])
    else:
        assert best == 1.0  # the baseline
    shown = cli("show", "e1", "--generation", "1", "--json").json()
    contract_validator("run-show-v1.schema.json").validate(shown)
    assert shown["generation"]["candidate"]["params"] == candidates[1]["params"]
    assert "pairs" in shown["generation"]["candidate"]["receipt"]
    assert shown["field_meanings"]["gate_decision"].startswith("champion")
    best_shown = cli("show", "e1", "--best", "--json")
    if champions:
        contract_validator("run-show-v1.schema.json").validate(best_shown.json())
        assert (
            best_shown.json()["generation"]["generation_index"] == champions[-1]["generation_index"]
        )
    else:
        assert best_shown.code == 1 and "no advanced generation" in best_shown.err
    text = cli("status", "e1").out
    assert "candidates 2/2" in text and "speed-up over the baseline" in text


def test_watch_export_and_report_of_an_evolve_run(cli, home, evolved):
    events = [json.loads(line) for line in cli("watch", "e1", "--ndjson").out.splitlines()]
    assert [e["event"] for e in events] == [
        "run_started",
        "generation_completed",
        "generation_completed",
        "run_completed",
    ]
    assert events[1]["payload"]["gate_decision"] in DECISIONS
    watched = cli("watch", "e1").out
    assert "gen 2/2" in watched and "run completed" in watched and "resume" not in watched
    exported = json.loads(cli("export", "e1").out)
    assert [g["generation_index"] for g in exported["generations"]] == [1, 2]
    timed = [c for c in exported["evolve"]["candidates"] if c["speedup"] is not None]
    for candidate in timed:  # each timed candidate's receipt carries its measured pairs
        assert len(candidate["receipt"]["pairs"]) >= candidate["stats"]["pairs"]
    refused = cli("export", "e1", "--format", "training-jsonl")
    assert refused.code == 2 and refused.out == ""
    assert len(refused.err.strip().splitlines()) == 1 and "evolve run" in refused.err
    report = cli("report", "e1")
    assert report.code == 0, report.err
    html = (home / "runs" / "e1" / "report.html").read_text()
    assert "<h2>Champion</h2>" in html and "<h2>Candidates</h2>" in html
    assert "lower bound" in html and "median" in html


def test_resume_continues_a_stopped_evolve_run(cli, home, kernel_dir):
    assert cli("evolve", kernel_dir / "spec.yaml", "--generations", "1", "--run-id", "r").code == 0
    db = sqlite3.connect(home / "lessonloop.db")  # stopped before its target, as a Ctrl-C leaves it
    db.execute("UPDATE evolve_runs SET status = 'stopped', target_generations = 2")
    db.commit()
    db.close()
    result = cli("resume", "r")
    assert result.code == 0, result.err
    assert result.out.startswith("gen 2: ") and "run r completed" in result.out
    status = cli("status", "r", "--json").json()
    assert status["run"]["status"] == "completed" and status["run"]["generations_completed"] == 2
    budget = cli("resume", "r", "--max-calls", "3")
    assert budget.code == 2 and "no model route is set" in budget.err  # the tuner makes no calls


def test_migration_19_derives_the_rows_of_runs_stored_before(cli, home, evolved):
    from lessonloop.store import open_store

    before = cli("status", "e1", "--json").json()
    db = sqlite3.connect(home / "lessonloop.db")
    for table in ("gate_decisions", "generations", "runs"):
        db.execute(f"DELETE FROM {table}")
    db.execute("DELETE FROM schema_migrations WHERE version = 19")
    db.commit()
    db.close()
    with open_store():
        pass
    after = cli("status", "e1", "--json").json()
    assert after["generations"] == before["generations"]
    assert after["run"]["best_score"] == before["run"]["best_score"]
    (home / "runs" / "e1" / "events.ndjson").unlink()  # as a run from before events had none
    watched = cli("watch", "e1")
    assert watched.code == 0 and "resume" not in watched.out


def test_an_evolve_run_id_is_not_taken_from_another_kind_of_run(cli, kernel_dir):
    assert cli("run", "grid_ctf", "-n", "1", "--run-id", "g", "--matches", "2").code == 0
    taken = cli("evolve", kernel_dir / "spec.yaml", "--generations", "1", "--run-id", "g")
    assert taken.code == 2 and "taken by another kind of run" in taken.err
    assert cli("status", "g", "--json").json()["run"]["kind"] == "scenario"


def test_watch_follows_a_running_evolve_run_until_it_ends(cli, home, kernel_dir):
    import subprocess
    import sys
    import time

    from ..conftest import subprocess_env

    args = [sys.executable, "-m", "lessonloop", "evolve", str(kernel_dir / "spec.yaml")]
    proc = subprocess.Popen(
        [*args, "--generations", "3", "--run-id", "w"],
        env=subprocess_env(home),
        stdout=subprocess.DEVNULL,
    )
    log = home / "runs" / "w" / "events.ndjson"
    deadline = time.monotonic() + 30
    while not (log.is_file() and log.read_text().count("\n")) and time.monotonic() < deadline:
        time.sleep(0.02)
    watched = cli("watch", "w", "--interval", "0.05")
    assert proc.wait(timeout=60) == 0
    lines = watched.out.splitlines()
    assert lines[0].startswith("run started: evolve:squares (0/3 done)")
    assert [line.split()[1] for line in lines[1:4]] == ["1/3", "2/3", "3/3"]
    assert lines[-1].startswith("run completed (3 generations done)")
