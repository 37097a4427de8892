"""``evaluate`` reports failed matches the same way in text and JSON: the mean over the same
(completed) seeds in both, and an error naming every failed seed."""

from __future__ import annotations

import re

from ..conftest import FIXTURES

CRASHER = f"{FIXTURES / 'misbehaving_scenario.py'}:Crasher"  # odd seeds raise, seed 6 lies


def test_text_and_json_agree_on_the_mean_and_name_every_failed_seed(cli):
    args = ("evaluate", CRASHER, "--strategy", '{"x": 0.5}', "--seeds", "1..3")
    text, as_json = cli(*args), cli(*args, "--json")
    assert text.code == as_json.code == 1
    report = as_json.json()
    assert report["scores"] == [None, 0.5, None] and report["failed_seeds"] == [1, 3]
    completed = [s for s in report["scores"] if s is not None]
    assert report["mean_score"] == sum(completed) / len(completed)
    mean = re.search(r"mean (\S+) over (\d+) of (\d+) seeds \((\d+) failed\)", text.out)
    assert mean, text.out
    assert float(mean.group(1)) == report["mean_score"]
    assert (int(mean.group(2)), int(mean.group(3)), int(mean.group(4))) == (1, 3, 2)
    error = as_json.error()["error"]
    assert text.err == f"error: {error}\n", "the same words in both"
    assert error.startswith("2 of 3 matches failed (seeds 1,3), left out of the mean")
    assert "scored 0" not in error


def test_every_failed_seed_of_every_strategy_is_named(cli, tmp_path):
    lines = tmp_path / "two.jsonl"
    lines.write_text('{"x": 0.5}\n{"x": 0.25}\n')
    result = cli("evaluate", CRASHER, "--strategies", lines, "--seeds", "1..3", "--json")
    error = result.error()["error"]
    assert result.code == 1
    assert "4 of 6 matches failed (strategy 1: seeds 1,3; strategy 2: seeds 1,3)" in error
    wide = cli("evaluate", CRASHER, "--strategy", '{"x": 0.5}', "--seeds", "5..9", "--json")
    assert wide.code == 1
    assert wide.error()["error"].startswith("4 of 5 matches failed (seeds 5..7,9)")
    assert wide.json()["failed_seeds"] == [5, 6, 7, 9]
