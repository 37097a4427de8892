"""``lessonloop compare``: real offline runs, their best strategies played again on shared
fresh seeds, and the paired statistics checked against the scores it reports."""

from __future__ import annotations

import pytest

from lessonloop.report.stats import paired

from ..conftest import copy_home, home_made_once
from .page_parts import Page


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return home_made_once(
        tmp_path_factory,
        *(
            ["run", "grid_ctf", "-n", 4, "--matches", matches, "--seed", seed,
             "--no-incumbent", "--run-id", run_id, "--json"]
            for run_id, seed, matches in (("base", 0, 3), ("other", 5, 4))
        ),
    )  # fmt: skip


@pytest.fixture
def two_runs(home, made):
    """Two real runs that differ in their settings and each advance their own strategies
    (made once; each test has its copy)."""
    copy_home(made, home)
    return "base", "other"


def test_compare_replays_both_best_strategies_on_the_same_fresh_seeds(cli, two_runs, home):
    from lessonloop.app.scenarios import evaluate
    from lessonloop.store import open_store

    result = cli("compare", *two_runs, "--matches", 12, "--json")
    assert result.code == 0, result.err
    compared = result.json()
    differing = {row["key"] for row in compared["settings"] if row["differs"]}
    assert {"seed", "matches"} <= differing and "scenario" not in differing
    rescore = compared["rescore"]
    seeds = rescore["seeds"]
    assert len(seeds) == len(set(seeds)) == 12
    with open_store(readonly=True) as store:
        played = {
            r[0] for r in store.query("SELECT seed FROM matches WHERE run_id IN ('base', 'other')")
        }
    assert not played & set(seeds), "fresh: no seed either run played"
    assert all(2**31 + 2**30 <= seed < 2**32 for seed in seeds)
    strategies = [run["best_strategy"] for run in compared["runs"]]
    assert strategies[0] != strategies[1]
    again = evaluate("grid_ctf", strategies, seeds)  # the same play code as `evaluate`
    assert [r["scores"] for r in rescore["runs"]] == [e["scores"] for e in again]
    comparison = rescore["comparisons"][0]
    expected = paired(again[0]["scores"], again[1]["scores"])
    assert comparison["pairs"] == 12
    assert comparison["mean"] == pytest.approx(expected.mean)
    assert (comparison["low"], comparison["high"]) == pytest.approx((expected.low, expected.high))
    assert compared["verdict"] == comparison["sentence"]
    assert any(word in compared["verdict"] for word in ("is better than", "not significant"))
    assert [run["plays"] for run in compared["runs"]] > [0, 0]
    assert all(run["calls"] > 0 for run in compared["runs"])
    repeat = cli("compare", *two_runs, "--matches", 12, "--json").json()
    assert repeat["rescore"]["seeds"] == seeds, "the same --seed, the same seeds"
    other = cli("compare", *two_runs, "--matches", 12, "--seed", 1, "--json").json()
    assert other["rescore"]["seeds"] != seeds


def test_compare_writes_a_page_with_the_curves_overlaid(cli, two_runs, tmp_path):
    target = tmp_path / "out" / "compare.html"
    result = cli("compare", *two_runs, "--matches", 6, "--html", target)
    assert result.code == 0, result.err
    assert f"page: {target}" in result.out and "settings that differ:" in result.out
    page = Page(target.read_text(encoding="utf-8"))
    lines = page.find("polyline", inside="compare-chart")
    assert [line.attributes["data-series"] for line in lines] == list(two_runs)
    assert len({line.attributes.get("stroke-dasharray", "") for line in lines}) == 2
    assert not page.find("script")
    differs = [row for row in page.find("tr") if "differs" in row.attributes.get("class", "")]
    assert differs, "the differing settings are marked"


@pytest.mark.parametrize(
    ("arguments", "code", "words"),
    [
        (("base",), 2, "at least two run ids"),
        (("base", "base"), 2, "names a run twice"),
        (("base", "nope"), 1, "unknown run id 'base' (no lessonloop database here yet)"),
        (("base", "other", "--matches", "1"), 2, "--matches must be between 2 and"),
    ],
)
def test_compare_errors_are_one_line(cli, arguments, code, words):
    result = cli("compare", *arguments)
    assert result.code == code and result.out == ""
    assert result.err.count("\n") == 1 and words in result.err


def test_an_unknown_run_among_known_ones_is_named(cli, two_runs):
    result = cli("compare", "base", "nope", "--json")
    assert result.code == 1 and "unknown run id 'nope'" in result.error()["error"]


def test_compare_refuses_to_write_through_a_directory(cli, two_runs, tmp_path):
    result = cli("compare", *two_runs, "--matches", 4, "--html", tmp_path)
    assert result.code == 2 and "is not a regular file" in result.err


def test_runs_of_different_scenarios_are_compared_without_replaying(cli, two_runs):
    from ..conftest import PLUGIN

    assert cli("run", PLUGIN, "-n", 2, "--run-id", "archery").code == 0
    compared = cli("compare", "base", "archery", "--json").json()
    assert compared["rescore"] is None
    assert "different scenarios" in compared["verdict"]
    assert next(r for r in compared["settings"] if r["key"] == "scenario")["differs"]


def test_a_task_run_the_judge_never_scored_draws_no_curve(cli, tmp_path):
    """Its rounds hold 0 for the column's sake (judge_failed): the overlay draws only the run
    that has scores, not a line at 0 for the other."""
    from ..cli.test_task_commands import (
        BAD_SQL,
        EXAMPLES,
        GARBLED,
        GOOD_SQL,
        REPLY,
        RUBRIC_TASK,
        fenced,
        script,
    )

    task = tmp_path / "reply.yaml"
    task.write_text(RUBRIC_TASK)
    unjudged = script(
        tmp_path, "judge.json", competitor=[REPLY, REPLY + " Again."], judge=[GARBLED]
    )
    assert cli("improve", task, "--provider", unjudged, "--run-id", "jf").code == 1
    scored = script(tmp_path, "sql.json", competitor=[fenced(BAD_SQL), fenced(GOOD_SQL)])
    sql = EXAMPLES / "sql-top-customers.yaml"
    assert cli("improve", sql, "--provider", scored, "--run-id", "sql").code == 0
    target = tmp_path / "compare.html"
    assert cli("compare", "jf", "sql", "--html", target).code == 0
    page = Page(target.read_text(encoding="utf-8"))
    for chart in ("compare-chart", "compare-chart-narrow"):
        lines = page.find("polyline", inside=chart)
        assert [line.attributes["data-series"] for line in lines] == ["sql"]
