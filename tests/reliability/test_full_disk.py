"""A full disk (ENOSPC) in ``run``, ``memory add`` and ``memory consent``: one line naming the
path and what to do, exit 1, nothing stored before lost; a run that fills the disk resumes to
the end, every generation once. On a real small tmpfs (skipped where it cannot be mounted)."""

from __future__ import annotations

import json
import subprocess

import pytest

from lessonloop.store import open_store
from lessonloop.store import runs as run_store

from ..conftest import copy_home, home_made_once, subprocess_env

pytestmark = pytest.mark.reliability

HINT = "free some space (or point LESSONLOOP_HOME at a disk with room)"


@pytest.fixture
def small_disk(tmp_path):
    """Mount a tmpfs of the size asked (``small_disk("4m")``); unmounted afterwards."""
    mounted = []

    def mount(size: str):
        folder = tmp_path / "disk"
        folder.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def on_disk(home, run_cli):
    """A lessonloop home on the given disk, and the CLI (a separate process) using it."""

    def use(disk):
        root = disk / "home"
        env = subprocess_env(root, LESSONLOOP_USER_HOME=str(home.parent / "user-home"))
        return root, lambda *args: run_cli(*args, env=env)

    return use


def _fill(disk, leave: int = 0):
    """Fill the disk, leaving about ``leave`` bytes; returns the filler to remove later."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 4096)
        except OSError:
            pass
    if leave:
        size = filler.stat().st_size
        with open(filler, "r+b") as handle:
            handle.truncate(max(0, size - leave))
    return filler


def _one_line(result, path):
    error = result.error()["error"]  # exactly one line on stderr
    assert result.code == 1, result
    assert error.startswith(f"no space left on the device holding {path}"), error
    assert HINT in error and "internal error" not in error


@pytest.fixture(scope="module")
def stored_before(tmp_path_factory):
    """What is stored before the disk fills: a memory, a run and a consent (each command must
    exit 0), made once for the three commands; each test copies it onto its small disk."""
    return home_made_once(
        tmp_path_factory,
        ["memory", "add", "--type", "pattern", "--summary", "Run the tests with pytest -q"],
        ["run", "grid_ctf", "--iterations", 1, "--run-id", "before"],
        ["memory", "consent", "no"],
    )


@pytest.mark.parametrize(
    "command",
    [
        ("run", "grid_ctf", "--iterations", 2, "--run-id", "later"),
        (
            "memory",
            "add",
            "--type",
            "pattern",
            "--summary",
            "Search the code with ripgrep, not grep",
        ),
        ("memory", "consent", "yes"),
    ],
)
def test_a_full_disk_gives_one_line_and_loses_nothing(small_disk, on_disk, stored_before, command):
    disk = small_disk("2m")
    home, run_cli = on_disk(disk)
    copy_home(stored_before, home)
    filler = _fill(disk)
    _one_line(run_cli(*command, "--json"), home)
    filler.unlink()
    assert [r["run_id"] for r in run_cli("list", "--json").json()] == ["before"]
    assert run_cli("status", "before", "--json").json()["run"]["status"] == "completed"
    memories = run_cli("memory", "list", "--json").json()
    assert [m["summary"] for m in memories] == ["Run the tests with pytest -q"]
    assert json.loads((home / "automem-consent.json").read_text())["consented"] is False
    assert not list(home.glob(".automem-consent*")), "no temporary file left behind"
    assert run_cli(*command).code == 0, "the same command works once there is room"


def test_a_run_that_fills_the_disk_stops_in_one_line_and_resumes_every_generation_once(
    small_disk, on_disk
):
    disk = small_disk("4m")
    home, run_cli = on_disk(disk)
    assert run_cli("memory", "consent", "yes").code == 0
    open_store(home).close()  # the store and its schema first: the disk is for the run
    filler = _fill(disk, leave=400_000)  # room for a generation or two, not for eight
    stopped = run_cli("run", "grid_ctf", "--iterations", 8, "--run-id", "mid", "--json")
    _one_line(stopped, home)
    filler.unlink()
    resumed = run_cli("resume", "mid", "--json")
    assert resumed.code == 0, resumed.err
    assert resumed.json()["status"] == "completed"
    with open_store(home, readonly=True) as store:
        indexes = [g["generation_index"] for g in run_store.generations(store, "mid")]
    assert indexes == list(range(1, 9))
    events = [
        json.loads(line)
        for line in (home / "runs" / "mid" / "events.ndjson").read_text().splitlines()
    ]
    completed = [e["payload"]["generation"] for e in events if e["event"] == "generation_completed"]
    assert sorted(completed) == list(range(1, 9)), "each generation's event exactly once"
    for index in indexes:
        assert (home / "runs" / "mid" / "generations" / str(index) / "score.json").exists()


def test_a_disk_that_fills_while_the_schema_is_created_gives_its_one_line(small_disk, on_disk):
    """SQLite rolls a migration back itself when the disk is full: the error shown is the full
    disk, not the failed ROLLBACK that followed it."""
    disk = small_disk("2m")
    home, run_cli = on_disk(disk)
    home.mkdir()
    filler = _fill(disk, leave=60_000)  # room to start the store, not for its whole schema
    result = run_cli("memory", "add", "--type", "pattern", "--summary", "Use ripgrep", "--json")
    _one_line(result, home)
    filler.unlink()
    assert run_cli("memory", "add", "--type", "pattern", "--summary", "Use ripgrep").code == 0
    assert [m["summary"] for m in run_cli("memory", "list", "--json").json()] == ["Use ripgrep"]


def test_a_mission_whose_step_fills_the_disk_stops_in_one_line_and_resumes(
    small_disk, run_cli, tmp_path
):
    """A step's command leaves a big (sparse) file; copying the workspace aside for the next
    step fills the disk: the mission is ``stopped`` with the reason (not left ``running``),
    and once there is room it resumes to the end."""
    import shutil

    from ..conftest import ROOT
    from ..mission.conftest import FIX, VERIFIER
    from ..providers.fake_servers import FakeServer, Reply, openai_completion

    answers = iter(['{"command": "truncate -s 3M big"}', FIX, FIX])  # step 2 asked twice
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "mission-repo", repo)
    home = small_disk("3m") / "home"
    with FakeServer(responder=lambda r: Reply(body=openai_completion(next(answers)))) as server:
        env = subprocess_env(
            home,
            LESSONLOOP_PROVIDER="openai",
            LESSONLOOP_MODEL="small",
            LESSONLOOP_BASE_URL=server.base_url + "/v1",
            LESSONLOOP_MAX_RETRIES="0",
        )
        stopped = run_cli(
            "mission", "fix calc.total", "--verifier", VERIFIER, "--workspace", repo,
            "--allow", "truncate", "--run-id", "full", "--json", env=env,
        )  # fmt: skip
        _one_line(stopped, home / "runs" / "full")
        shown = run_cli("mission", "show", "full", "--json", env=env).json()
        assert shown["status"] == "stopped" and len(shown["steps"]) == 1
        assert "lessonloop mission --run-id full" in shown["stop_reason"]
        (home / "runs" / "full" / "workspace" / "big").unlink()  # room again
        resumed = run_cli("mission", "--run-id", "full", "--json", env=env)
        assert resumed.code == 0, resumed.err
        assert resumed.json()["status"] == "succeeded"
        assert [s["kind"] for s in resumed.json()["steps"]] == ["command", "patch"]
