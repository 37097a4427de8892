"""A scenario whose ``validate()`` is broken fails the run and ``evaluate`` with one line naming
the method (as a ``play()`` failing on every match does), never "completed, best score 0";
README's scenario example runs as written."""

from __future__ import annotations

import re

import pytest

from lessonloop.scenarios import code, registry

from ..conftest import FIXTURES, ROOT

MISBEHAVING = FIXTURES / "misbehaving_scenario.py"


@pytest.mark.parametrize(
    "name, words",
    [
        (
            "ValidateReturnsNone",
            "ValidateReturnsNone.validate() returned NoneType, expected a list",
        ),
        ("ValidateRaises", "ValidateRaises.validate() raised KeyError: 'speed'"),
    ],
)
def test_a_broken_validate_fails_run_and_evaluate_naming_the_method(cli, name, words):
    scenario = f"{MISBEHAVING}:{name}"
    for iterations in (1, 3):
        run = cli("run", scenario, "--iterations", iterations, "--json")
        assert run.code == 1, run.out
        assert words in run.error()["error"] and "is broken" in run.error()["error"]
        assert "doctor" not in run.error()["error"], "not the competitor's fault"
    listed = cli("list", "--json").json()
    assert {r["status"] for r in listed} == {"failed"}
    text = cli("run", scenario, "--iterations", 2)
    assert text.code == 1 and text.out.count("\n") == 1 and text.out.startswith("run run-"), (
        "only the run's id, printed first"
    )
    assert text.err.count("\n") == 1 and words in text.err
    evaluated = cli("evaluate", scenario, "--strategy", '{"x": 0.5}', "--seeds", "1..3", "--json")
    assert evaluated.code == 1 and words in evaluated.error()["error"]


def test_validate_raising_on_a_strategy_off_the_schema_only_rejects_that_strategy():
    scenario = registry.load(f"{MISBEHAVING}:ValidateTrustsTheSchema")
    assert code.problems(scenario, {"x": 0.5}) == []
    assert code.problems(scenario, {"x": 1.5}) == ["x must be in [0, 1]"], "its own words"
    found = code.problems(scenario, {"x": "high"})  # a model's slip, not a broken scenario
    assert found and "'high' is not of type 'number'" in found[0]
    with pytest.raises(code.ScenarioBroken, match=r"ValidateRaises\.validate\(\) raised"):
        code.problems(registry.load(f"{MISBEHAVING}:ValidateRaises"), {"x": 0.5})


def test_readme_scenario_example_runs_as_written(cli, tmp_path):
    readme = (ROOT / "README.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "class Archery" in b]
    assert len(blocks) == 1, "README shows one scenario example"
    path = tmp_path / "archery.py"
    path.write_text(blocks[0])
    command = re.search(r"lessonloop (run path/to/archery\.py:Archery[^\n]*)", readme).group(1)
    args = command.replace("path/to/archery.py", str(path)).split()
    args[args.index("--iterations") + 1] = "3"  # the flags as written, fewer generations
    result = cli(*args, "--json")
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["status"] == "completed" and summary["generations_executed"] == 3
    assert summary["best_score"] > 0.5
