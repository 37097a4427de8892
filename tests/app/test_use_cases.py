"""The use cases called directly, as any adapter would: their answers, and errors that name
the argument at fault and the listing to look in by the use case's names, so that each adapter
can word them its own way."""

from __future__ import annotations

import pytest

from lessonloop.app import inspection, memory, usage
from lessonloop.cli.output import error_text
from lessonloop.errors import NotFoundError, UsageError

from ..conftest import copy_home, home_made_once


@pytest.fixture(scope="module")
def made_r1(tmp_path_factory):
    return home_made_once(
        tmp_path_factory, ["run", "grid_ctf", "--iterations", 2, "--run-id", "r1"]
    )


@pytest.fixture
def one_run(home, made_r1):
    """A finished 2-generation run ``r1`` (made once; each test has its copy)."""
    copy_home(made_r1, home)
    return "r1"


def test_an_unknown_run_points_to_the_listing_by_its_use_case_name(one_run):
    with pytest.raises(NotFoundError) as caught:
        inspection.status("nope")
    error = caught.value
    assert error.listing == "list_runs"
    assert str(error) == "unknown run id 'nope' (see list_runs)"
    assert error_text(error) == "unknown run id 'nope' (see `lessonloop list`)"
    assert error.named(str, lambda use_case: f"the {use_case} tool").endswith(
        "(see the list_runs tool)"
    )


def test_status_list_show_and_export_answer_the_same_run(one_run):
    document = inspection.status(one_run)
    assert document["run"]["run_id"] == one_run
    assert [g["generation_index"] for g in document["generations"]] == [1, 2]
    assert [run["run_id"] for run in inspection.list_runs()] == [one_run]
    assert inspection.list_runs(limit=1) == inspection.list_runs()
    latest = inspection.show(one_run)
    assert latest["generation"]["generation_index"] == 2 and latest["runtime_session"] is None
    assert inspection.show(one_run, 1)["generation"]["generation_index"] == 1
    assert set(latest["generation"]) >= {"strategy", "gate_decisions", "matches"}
    assert '"run_id": "r1"' in inspection.export(one_run)


def test_show_refuses_what_is_not_a_generation(one_run):
    with pytest.raises(NotFoundError, match="has no generation 9"):
        inspection.show(one_run, 9)
    with pytest.raises(UsageError) as caught:
        inspection.show(one_run, "first")
    assert caught.value.field == "generation"


def test_a_listing_limit_is_checked_with_its_field(home):
    with pytest.raises(UsageError) as caught:
        inspection.list_runs(limit=0)
    assert caught.value.field == "limit"
    assert error_text(caught.value) == "--limit must be between 1 and 500"
    assert inspection.list_runs() == []  # nothing has run here yet


def test_memories_are_stored_found_and_forgotten(home):
    stored = memory.store_memory(
        "preference", "tests run with pytest -n 2", tags=memory.split_tags(" a, ,b ")
    )
    assert stored["action"] == "added" and stored["tags"] == ["a", "b"]
    found = memory.search_memories("pytest", "project")
    assert [item["id"] for item in found] == [stored["id"]]
    assert memory.forget_memory(stored["id"])["summary"] == "tests run with pytest -n 2"
    assert memory.search_memories("pytest") == []


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: memory.store_memory("rumour", "x"), "type"),
        (lambda: memory.useful_memories("everyone"), "scope"),
        (lambda: memory.search_memories("x", limit=101), "limit"),
        (lambda: memory.prune_memories("all", -1, 10), "older_than"),
        (lambda: memory.prune_memories("all", None, -1), "keep"),
    ],
)
def test_memory_errors_name_their_field(home, call, field):
    with pytest.raises(UsageError) as caught:
        call()
    assert caught.value.field == field


def test_an_unknown_memory_points_to_the_memory_listing(home):
    memory.store_memory("preference", "something")
    with pytest.raises(NotFoundError) as caught:
        memory.memory_history(99)
    assert error_text(caught.value) == "no project memory with id 99 (see `lessonloop memory list`)"


def test_usage_totals_one_run(one_run):
    report = usage.usage(one_run)
    assert report["calls"] == sum(part["calls"] for part in report["by_role"].values())
    with pytest.raises(NotFoundError):
        usage.usage("nope")
