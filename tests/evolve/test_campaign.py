"""Evolve runs end to end on a tiny kernel, in the real sandbox: a wrong candidate is never
champion, the baseline never beats itself, receipts refuse a changed source, and a killed run
resumes without timing a finished candidate again."""

from __future__ import annotations

import shutil

import pytest

from lessonloop import paths
from lessonloop.errors import LessonloopError, Stopped
from lessonloop.evolve import campaign, harness, measure, spec
from lessonloop.evolve import store as rows
from lessonloop.store import open_store


def _run(kernel_dir, run_id, generations, on_generation=lambda event: None, seed=None):
    loaded = spec.read(kernel_dir / "spec.yaml")
    paths.ensure_home()
    with open_store() as store:
        return campaign.run(
            loaded, store, run_id, paths.run_dir(run_id), seed, generations, on_generation
        )


def _pairs_of(run_id):
    with open_store(readonly=True) as store:
        rows = store.query(
            "SELECT candidate_index, COUNT(*) AS n FROM evolve_pairs WHERE run_id = ? "
            "AND phase = 'gate' GROUP BY candidate_index",
            (run_id,),
        )
    return {row["candidate_index"]: row["n"] for row in rows}


def test_a_wrong_fast_candidate_is_never_champion_and_a_faster_one_is(home, kernel_dir):
    events = []
    summary = _run(kernel_dir, "wrong", 7, events.append)
    sloppy = [c for c in summary["candidates"] if c["params"]["SLOPPY"]]
    assert sloppy and all(c["status"] == "incorrect" and not c["champion"] for c in sloppy)
    assert all(c["correct"] is False for c in sloppy)
    assert not summary["champion"]["params"]["SLOPPY"]
    # WORK=1 does a quarter of the baseline's work: found and confirmed within 7 generations
    assert summary["champion"]["params"]["WORK"] < 4
    assert summary["champion"]["speedup_lower_bound"] > 1.03
    assert summary["champion"]["confirmed"] is True
    # every candidate has its receipt, and the artifacts are written
    assert [e["generation"] for e in events] == list(range(1, 8))
    assert all(c["receipt"]["source_digest"].startswith("sha256:") for c in summary["candidates"])
    timed = [c for c in summary["candidates"] if c["speedup"] is not None]
    assert timed and all(len(c["receipt"]["pairs"]) >= 6 for c in timed)
    folder = paths.run_dir("wrong")
    assert (
        "WORK = 1" in (folder / "champion.py").read_text()
        or "WORK = 2" in (folder / "champion.py").read_text()
    )
    assert "Champion: generation" in (folder / "report.md").read_text()


def test_the_baseline_is_never_faster_than_itself(home, kernel_dir):
    loaded = spec.read(kernel_dir / "spec.yaml")
    bench = loaded.spec.benchmark
    for _ in range(3):
        comparison = measure.decide(
            lambda count: harness.time_pairs(loaded, loaded.source, loaded.source, count),
            bench.pairs,
            bench.max_pairs,
            bench.min_log_gain,
        )
        assert not comparison.faster, comparison.to_dict()
        assert comparison.to_dict()["champion_noise"]["min"] > 0


def test_a_source_changed_after_its_receipt_is_refused(home, kernel_dir, monkeypatch):
    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    real = harness.check
    monkeypatch.setattr(harness, "check", killed)  # killed after the receipt, before checking
    with pytest.raises(Stopped):
        _run(kernel_dir, "tampered", 1)
    monkeypatch.setattr(harness, "check", real)
    candidate = paths.run_dir("tampered") / "candidates" / "0.py"
    candidate.write_text(candidate.read_text().replace("WORK = 4", "WORK = 1"))
    with pytest.raises(Exception, match="baseline was refused: candidate source changed"):
        _run(kernel_dir, "tampered", 1)


def test_a_changed_candidate_is_refused_not_timed(home, kernel_dir):
    _run(kernel_dir, "refuse", 1)
    with open_store() as store:
        loaded = spec.read(kernel_dir / "spec.yaml")
        run = campaign.Campaign(loaded, store, "refuse", paths.run_dir("refuse"), 0)
        run.receive(2, {"SLOPPY": False, "WORK": 1})
        (paths.run_dir("refuse") / "candidates" / "2.py").write_text("WORK = 1\n")
    summary = _run(kernel_dir, "refuse", 2)
    refused = summary["candidates"][2]
    assert refused["status"] == "refused" and not refused["champion"]
    assert "changed after its receipt" in refused["message"]
    assert 2 not in _pairs_of("refuse")


def test_a_killed_run_resumes_without_timing_a_finished_candidate_again(
    home, kernel_dir, monkeypatch
):
    real = harness.time_pairs
    calls = {"n": 0}

    def killed_in_the_second_timing(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(harness, "time_pairs", killed_in_the_second_timing)
    with pytest.raises(Stopped, match="--run-id resumed"):
        _run(kernel_dir, "resumed", 4, seed=5)
    monkeypatch.setattr(harness, "time_pairs", real)
    before = _pairs_of("resumed")
    with open_store(readonly=True) as store:
        stored = campaign.rows.candidates(store, "resumed")
    finished = [c["candidate_index"] for c in stored if c["status"] != "received"]
    assert stored[-1]["status"] == "received"  # its receipt was stored before the kill

    summary = _run(kernel_dir, "resumed", 4)
    after = _pairs_of("resumed")
    for index in finished:  # a finished candidate's pairs are the same, not measured again
        assert after.get(index) == before.get(index)
    assert summary["generations"] == 4 and summary["status"] == "completed"
    assert [c["generation"] for c in summary["candidates"]] == [0, 1, 2, 3, 4]
    assert all(c["status"] != "received" for c in summary["candidates"])
    # the proposer is rebuilt from the store: the same parameters an uninterrupted run tries
    # (under another name: the first run's lessons would seed a run of the same spec)
    other = kernel_dir.parent / "straight"
    shutil.copytree(kernel_dir, other)
    text = (other / "spec.yaml").read_text()
    (other / "spec.yaml").write_text(text.replace("name: squares", "name: squares-straight"))
    uninterrupted = _run(other, "straight", 4, seed=5)
    assert [c["params"] for c in summary["candidates"]][: len(finished) + 1] == [
        c["params"] for c in uninterrupted["candidates"]
    ][: len(finished) + 1]


def test_a_test_command_checks_correctness(home, kernel_dir):
    (kernel_dir / "test_kernel.py").write_text(
        "import kernel\nassert kernel.total([1, 2, 3]) == 14, kernel.total([1, 2, 3])\n"
    )
    text = (kernel_dir / "spec.yaml").read_text()
    text = text.replace(
        "  reference: reference.py:total\n  inputs: reference.py:inputs\n  seeds: [1, 2]\n",
        '  command: "{python} test_kernel.py"\n  files: [test_kernel.py]\n',
    )
    (kernel_dir / "spec.yaml").write_text(text)
    summary = _run(kernel_dir, "command", 3)
    sloppy = [c for c in summary["candidates"] if c["params"]["SLOPPY"]]
    assert sloppy and all(c["status"] == "incorrect" for c in sloppy)
    assert "AssertionError" in sloppy[0]["message"]
    assert summary["candidates"][0]["message"] == "the test command passed"


def test_a_run_refuses_to_continue_under_a_changed_reference(home, kernel_dir):
    _run(kernel_dir, "changed", 1)
    reference = kernel_dir / "reference.py"
    reference.write_text(reference.read_text().replace("v * v", "v * v + 0"))
    with pytest.raises(Exception, match="started from a different spec"):
        _run(kernel_dir, "changed", 2)


def test_a_changed_champion_stops_the_run_and_blames_no_candidate(home, kernel_dir):
    summary = _run(kernel_dir, "champ", 3)
    index = summary["champion"]["generation"]
    assert index > 0, "the tiny kernel's tuner finds a faster WORK within 3 generations"
    source = paths.run_dir("champ") / "candidates" / f"{index}.py"
    source.write_text(source.read_text() + "\n# edited by hand\n")
    with pytest.raises(LessonloopError, match=f"the champion \\(generation {index}, .*{index}.py"):
        _run(kernel_dir, "champ", 5)
    with open_store(readonly=True) as store:
        row = store.query_one("SELECT status FROM evolve_runs WHERE run_id = 'champ'")
        statuses = [c["status"] for c in rows.candidates(store, "champ")]
    assert row["status"] == "failed"
    assert "refused" not in statuses  # the new candidates are not blamed for it
