"""``lessonloop evolve`` on the command line: progress lines, JSON, and one-line errors."""

from __future__ import annotations

import json


def test_evolve_prints_each_generation_and_the_artifacts(run_cli, home, kernel_dir):
    result = run_cli("evolve", kernel_dir / "spec.yaml", "--generations", "2", "--run-id", "e1")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("gen 1: {") and lines[1].startswith("gen 2: {")
    assert "run e1 completed: 2 generations done" in result.out
    assert f"history: {home / 'runs' / 'e1' / 'history.json'}" in result.out
    history = json.loads((home / "runs" / "e1" / "history.json").read_text())
    assert [c["generation"] for c in history["candidates"]] == [0, 1, 2]


def test_evolve_json_summary(run_cli, home, kernel_dir):
    result = run_cli("evolve", kernel_dir / "spec.yaml", "--generations", "1", "--json")
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["run_id"].startswith("evolve-") and summary["generations"] == 1
    assert summary["candidates"][0]["status"] == "baseline"


def test_evolve_errors_are_one_line(run_cli, kernel_dir):
    missing = run_cli("evolve", kernel_dir / "nope.yaml", "--json")
    assert missing.code in (1, 2) and "nope.yaml" in missing.error()["error"]
    (kernel_dir / "bad.yaml").write_text("name: x\nsource: kernel.py\nentry: total\n")
    bad = run_cli("evolve", kernel_dir / "bad.yaml")
    assert bad.code == 2 and "Traceback" not in bad.err
    assert bad.err.startswith("error: ") and "field 'correctness': Field required" in bad.err
    assert len(bad.err.strip().splitlines()) == 1
    zero = run_cli("evolve", kernel_dir / "spec.yaml", "--generations", "0", "--json")
    assert zero.code == 2 and "--generations must be between 1" in zero.error()["error"]
    wrong_base = kernel_dir / "kernel.py"
    wrong_base.write_text(wrong_base.read_text().replace("SLOPPY = False", "SLOPPY = True"))
    failed = run_cli("evolve", kernel_dir / "spec.yaml", "--generations", "1")
    assert failed.code == 1 and "the baseline source is not correct" in failed.err
    assert len(failed.err.strip().splitlines()) == 1


def test_evolve_killed_resumes_with_the_same_command(home, kernel_dir):
    """SIGKILL after the first generation's line; the same command continues the run: the
    finished generation is neither checked nor timed again, and the run completes."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys

    from ..conftest import subprocess_env

    args = [sys.executable, "-m", "lessonloop", "evolve", str(kernel_dir / "spec.yaml")]
    args += ["--generations", "3", "--run-id", "k"]
    proc = subprocess.Popen(
        args, env=subprocess_env(home), stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert first.startswith("gen 1: "), first

    def gate_pairs() -> dict:
        with sqlite3.connect(home / "lessonloop.db") as conn:
            rows = conn.execute(
                "SELECT candidate_index, COUNT(*) FROM evolve_pairs WHERE run_id = 'k' "
                "AND phase = 'gate' GROUP BY candidate_index"
            ).fetchall()
        return dict(rows)

    before = gate_pairs()
    done = subprocess.run(args, env=subprocess_env(home), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "gen 1: " not in done.stdout  # already finished: not run again
    assert "run k completed: 3 generations done" in done.stdout
    after = gate_pairs()
    assert all(after.get(index) == count for index, count in before.items())


def test_evolve_sigterm_stops_it_resumably(home, kernel_dir):
    import signal
    import subprocess
    import sys

    from ..conftest import subprocess_env

    args = [sys.executable, "-m", "lessonloop", "evolve", str(kernel_dir / "spec.yaml")]
    args += ["--generations", "20", "--run-id", "t"]  # (7 untried values: seconds of work)
    proc = subprocess.Popen(
        args, env=subprocess_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith("gen 1: ")
    proc.send_signal(signal.SIGTERM)
    err = proc.stderr.read()
    assert proc.wait() == 1
    assert err.startswith("stopped: run t interrupted; continue it with the same command")


def test_a_run_continued_keeps_its_seed(cli, kernel_dir):
    spec = kernel_dir / "spec.yaml"
    assert cli("evolve", spec, "--generations", "1", "--seed", "3", "--run-id", "s").code == 0
    other = cli("evolve", spec, "--generations", "2", "--seed", "9", "--run-id", "s")
    assert other.code == 2 and "was started with --seed 3" in other.err
    same = cli("evolve", spec, "--generations", "2", "--run-id", "s", "--json")
    assert same.code == 0, same.err
    assert cli("status", "s", "--json").json()["run"]["seed"] == 3
