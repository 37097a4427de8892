"""The dashboard under test: in-process through Starlette's TestClient, or as the real
``lessonloop serve`` process on a free port (for the browser)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import copy_home, home_made_once, subprocess_env

HOST, PORT = "127.0.0.1", 8765
TOKEN = "test-token-0123456789"
BASE = f"http://{HOST}:{PORT}"
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"


@pytest.fixture
def client(home):
    """The app as ``serve`` builds it for 127.0.0.1:8765, spoken to with that Host."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from lessonloop.web.routes import build

    with TestClient(build(HOST, PORT, TOKEN), base_url=BASE, raise_server_exceptions=False) as tc:
        yield tc


@pytest.fixture(scope="module")
def made_r3(tmp_path_factory):
    return home_made_once(
        tmp_path_factory,
        ["run", "grid_ctf", "-n", 3, "--matches", 2, "--run-id", "r3", "--context-trials", "off"],
    )


@pytest.fixture
def finished_run(home, made_r3):
    """A completed 3-generation run ``r3`` of grid_ctf (without context trials: no promotion
    candidates; tests/web/test_promotions.py makes its own), made once for a module and copied
    into each test's home."""
    copy_home(made_r3, home)
    return "r3"


@dataclass
class Served:
    url: str
    token: str
    process: subprocess.Popen


@pytest.fixture
def served(home):
    """``lessonloop serve --port 0`` as a process: its address and token, read from what it
    printed; stopped with SIGINT (Ctrl-C) at the end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "lessonloop", "serve", "--port", "0"],
        env=subprocess_env(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        first, second = process.stdout.readline(), process.stdout.readline()
        assert first.startswith("lessonloop dashboard: http://127.0.0.1:"), (
            first + process.stderr.read()
        )
        yield Served(first.split()[-1].rstrip("/"), second.split()[-1], process)
    finally:
        process.send_signal(2)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(predicate, what: str, limit: float = 60.0, step: float = 0.05):
    """Poll ``predicate`` until it is true (a bound, not a timed assertion: a stuck run fails
    the test instead of hanging it)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"gave up waiting for {what}")


def paced_reference(tmp_path: Path) -> str:
    """The paced scenario copied next to its hold file in ``tmp_path``."""
    target = tmp_path / "paced.py"
    shutil.copy(Path(__file__).with_name("paced_scenario.py"), target)
    return f"{target}:Paced"


@pytest.fixture(scope="session")
def promoted_source(tmp_path_factory):
    """A home made once: ``run grid_ctf -n 3 --context-trials full --run-id ct`` then
    ``train grid_ctf``, as separate processes."""
    root = tmp_path_factory.mktemp("promoted") / "home"
    for command in (
        ["run", "grid_ctf", "-n", "3", "--context-trials", "full", "--run-id", "ct"],
        ["train", "grid_ctf"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "lessonloop", *command],
            env=subprocess_env(
                root,
                LESSONLOOP_USER_HOME=str(root.parent / "user-home"),
                XDG_CACHE_HOME=str(root.parent / "cache"),
            ),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 0, done.stderr
    return root


@pytest.fixture
def promoted(home, promoted_source):
    """This test's home: a copy of ``promoted_source``."""
    shutil.copytree(promoted_source, home, dirs_exist_ok=True)
    return home
