"""Code strategies: Python source that picks a scenario's parameters, run only in the sandbox,
per match, and stopped (with everything it started) when it misbehaves."""

from __future__ import annotations

import os
import time

import pytest

from lessonloop.safety import sandbox
from lessonloop.scenarios import code, registry

GRID = registry.load("grid_ctf")
PARAMS = {"aggression": 0.6, "stealth": 0.5, "defense_radius": 3, "retreat_threshold": 0.3}
LIMITS = sandbox.Limits(timeout=2.0, memory_mb=256, max_processes=8, file_mb=8)
# ``leftovers`` looks for the runner's command line in every process on the machine: no other
# test file runs code strategies, and xdist runs a file on one worker (--dist loadfile).


def source(body: str) -> dict:
    return {code.FIELD: body}


def leftovers(marker: str) -> list[int]:
    """Processes whose command line still mentions ``marker`` (none may survive a run)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


def test_the_code_chooses_parameters_per_match_from_its_context():
    strategy = source(
        "def strategy(ctx):\n"
        f"    params = {PARAMS!r}\n"
        "    params['defense_radius'] = 2 + ctx['seed'] % 2\n"
        "    return params\n"
    )
    assert code.problems(GRID, strategy) == []
    assert code.parameters(GRID, strategy, 4)["defense_radius"] == 2
    assert code.parameters(GRID, strategy, 5)["defense_radius"] == 3
    assert code.parameters(GRID, source(f"STRATEGY = {PARAMS!r}"), 1) == PARAMS


def test_code_is_refused_where_the_scenario_does_not_accept_it():
    from ..conftest import PLUGIN

    archery = registry.load(PLUGIN)
    assert "does not accept code strategies" in code.problems(archery, source("STRATEGY = {}"))[0]
    assert "nothing else" in code.problems(GRID, {code.FIELD: "x = 1", "aggression": 1})[0]


@pytest.mark.parametrize(
    "body, words",
    [
        ("STRATEGY = {'aggression': 7}", "invalid parameters"),
        ("raise SystemExit('no idea')", "no idea"),
        (
            "import os\nprint(os.environ.get('LESSONLOOP_API_KEY', 'absent'))\nSTRATEGY = 3",
            "STRATEGY dict",
        ),
    ],
)
def test_code_that_fails_is_a_clear_match_error(body, words):
    with pytest.raises(code.CodeStrategyError, match=words):
        code.parameters(GRID, source(body), 1, LIMITS)


@pytest.mark.parametrize(
    "name, body",
    [
        ("loop", "while True:\n    pass"),
        (
            "fork",
            "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        ),
        ("memory", "chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 2**20))"),
        ("write", "with open('big', 'wb') as f:\n    while True:\n        f.write(b'0' * 2**20)"),
    ],
)
def test_hostile_code_is_stopped_within_the_deadline_and_leaves_nothing(name, body):
    started = time.monotonic()
    with pytest.raises(code.CodeStrategyError, match="stopped"):
        code.parameters(GRID, source(body), 1, LIMITS)
    # Uncontained, each would run forever; the margin is for a loaded machine, not for the code.
    assert time.monotonic() - started < LIMITS.timeout + 3.0
    assert leftovers('runpy.run_path("strategy.py"') == [], "a process of the code survived"


def test_evaluate_scores_a_code_strategy_like_its_parameters(cli):
    import json

    as_code = json.dumps(source(f"STRATEGY = {PARAMS!r}"))
    coded = cli("evaluate", "grid_ctf", "--strategy", as_code, "--seeds", "1..3", "--json").json()
    plain = cli(
        "evaluate", "grid_ctf", "--strategy", json.dumps(PARAMS), "--seeds", "1..3", "--json"
    ).json()
    assert coded["scores"] == plain["scores"] and coded["valid"]
