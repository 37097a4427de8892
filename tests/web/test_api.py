"""Every endpoint of the JSON API: its answer (the same as the CLI's ``--json`` for the same
question) and its errors (``{"error": ...}``, 400 for a bad request, 404 for an unknown id)."""

from __future__ import annotations

import pytest

from .conftest import TOKEN, wait_for

pytestmark = pytest.mark.usefixtures("home")
WRITE = {"X-Lessonloop-Token": TOKEN}


def error_of(response, status: int) -> str:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and body["error"], body
    assert "Traceback" not in body["error"]
    return body["error"]


def test_runs_and_a_run_answer_what_list_and_status_print(client, cli, finished_run):
    listed = client.get("/api/runs")
    assert listed.status_code == 200
    assert listed.json() == cli("list", "--json").json()
    assert [run["run_id"] for run in client.get("/api/runs?limit=1").json()] == ["r3"]

    status = client.get("/api/runs/r3")
    assert status.status_code == 200
    assert status.json() == cli("status", "r3", "--json").json()
    assert len(status.json()["generations"]) == 3


def test_runs_errors(client, finished_run):
    assert "unknown run id 'nope'" in error_of(client.get("/api/runs/nope"), 404)
    assert "GET /api/runs" in error_of(client.get("/api/runs/nope"), 404)
    assert error_of(client.get("/api/runs?limit=abc"), 400).startswith("limit must be an integer")
    assert error_of(client.get("/api/runs?limit=0"), 400).startswith("limit must be between")


def test_no_runs_yet_is_an_empty_list(client):
    assert client.get("/api/runs").json() == []


def test_scenarios_answer_what_scenarios_prints(client, cli):
    answer = client.get("/api/scenarios")
    assert answer.status_code == 200
    assert answer.json() == cli("scenarios", "--json").json()


def test_knowledge_of_a_scope_lists_its_playbook_with_evidence(client, finished_run):
    scopes = client.get("/api/knowledge").json()
    assert [scope["scope"] for scope in scopes] == ["scenario:grid_ctf"]
    assert scopes[0]["playbook"] >= 1
    by_name = client.get("/api/knowledge/grid_ctf").json()
    assert by_name == client.get("/api/knowledge/scenario:grid_ctf").json()
    assert by_name["scope"] == "scenario:grid_ctf"
    assert len(by_name["playbook"]) == scopes[0]["playbook"]
    first = by_name["playbook"][0]
    assert {"id", "summary", "helpful", "harmful", "seen", "tags"} <= set(first)


def test_knowledge_errors(client):
    assert client.get("/api/knowledge/grid_ctf").json()["playbook"] == []  # a scenario: empty
    assert "no knowledge in scope 'task:nothing'" in error_of(
        client.get("/api/knowledge/task:nothing"), 404
    )
    assert error_of(client.get("/api/knowledge/" + "x" * 300), 400).startswith("scope is")


def without_evidence(items: list[dict]) -> list[dict]:
    """The memories as the CLI prints them: the API adds each one's evidence (checked by
    tests/web/test_memory_page.py)."""
    from lessonloop.app.dashboard import MEMORY_EVIDENCE

    assert all(set(MEMORY_EVIDENCE) <= set(item) for item in items)
    return [{k: v for k, v in item.items() if k not in MEMORY_EVIDENCE} for item in items]


def test_memories_search_list_why_and_forget(client, cli):
    added = cli(
        "memory",
        "add",
        "--type",
        "preference",
        "--summary",
        "Indent YAML with two spaces",
        "--json",
    ).json()
    cli("memory", "add", "--type", "decision", "--summary", "Use SQLite for the store")
    assert (
        without_evidence(client.get("/api/memories").json())
        == cli("memory", "list", "--json").json()
    )
    found = client.get("/api/memories", params={"q": "YAML indent"}).json()
    assert without_evidence(found) == cli("memory", "search", "YAML indent", "--json").json()
    assert [item["id"] for item in found] == [added["id"]]

    why = client.get(f"/api/memories/{added['id']}")
    assert why.status_code == 200
    assert why.json() == cli("memory", "why", added["id"], "--json").json()

    gone = client.delete(f"/api/memories/{added['id']}", headers=WRITE)
    assert gone.status_code == 200
    assert gone.json() == {
        "forgotten": added["id"],
        "scope": "project",
        "summary": "Indent YAML with two spaces",
    }
    listed = [item["summary"] for item in cli("memory", "list", "--json").json()]
    assert listed == ["Use SQLite for the store"]


def test_memories_errors(client, cli):
    cli("memory", "add", "--type", "decision", "--summary", "Use SQLite for the store")
    assert "no project memory with id 99" in error_of(
        client.delete("/api/memories/99", headers=WRITE), 404
    )
    assert "no project memory with id 99" in error_of(client.get("/api/memories/99"), 404)
    assert error_of(client.delete("/api/memories/x", headers=WRITE), 400).startswith(
        "memory_id must be an integer"
    )
    assert error_of(client.get("/api/memories?scope=nowhere"), 400).startswith("scope is")
    assert error_of(client.get("/api/memories?q=a&limit=1000"), 400).startswith("limit must be")
    assert error_of(client.delete("/api/memories/1?scope=all", headers=WRITE), 400).startswith(
        "scope is project or user"
    )


def test_post_runs_starts_a_run_in_the_background(client):
    started = client.post(
        "/api/runs",
        json={"scenario": "grid_ctf", "iterations": 2, "matches": 2, "run_id": "bg"},
        headers=WRITE,
    )
    assert started.status_code == 202, started.text
    assert started.json()["run_id"] == "bg" and started.json()["started"] is True

    def finished():
        status = client.get("/api/runs/bg").json()["run"]["status"]
        return status if status in ("completed", "failed", "stopped") else None

    assert wait_for(finished, "the background run to end") == "completed"
    again = client.post(
        "/api/runs", json={"scenario": "grid_ctf", "iterations": 2, "run_id": "bg"}, headers=WRITE
    )
    assert again.status_code == 200 and again.json()["started"] is False


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"not json", "the body is not JSON"),
        (b"[1, 2]", "the body must be a JSON object"),
        (b'{"iterations": 2}', "scenario is required"),
        (b'{"scenario": "grid_ctf", "iterations": "2"}', "iterations must be an integer"),
        (b'{"scenario": "grid_ctf", "iterations": true}', "iterations must be an integer"),
        (b'{"scenario": "grid_ctf", "iterations": NaN}', "the body is not JSON"),
        (b'{"scenario": "grid_ctf", "colour": "red"}', "unknown field 'colour'"),
        (b'{"scenario": "grid_ctf", "iterations": 0}', "iterations must be between"),
        (b'{"scenario": "grid_ctf", "matches": 0}', "matches"),
        (b'{"scenario": "grid_ctf", "run_id": "../x"}', "run id"),
    ],
)
def test_post_runs_errors(client, body, words):
    answer = client.post(
        "/api/runs", content=body, headers={**WRITE, "Content-Type": "application/json"}
    )
    assert words in error_of(answer, 400)


def test_a_scenario_that_does_not_exist_is_a_404_like_an_unknown_run(client):
    """A request the document allows (any non-empty name) is not a bad request: the name is
    not there, as an unknown run id is not (schemathesis' positive-data check)."""
    for name, words in (
        ("no_such_game", "unknown scenario 'no_such_game'"),
        ("0", "unknown scenario '0'"),
        ("", "unknown scenario ''"),
        ("gone/file.py:Game", "scenario file not found: gone/file.py"),
    ):
        answer = client.post("/api/runs", json={"scenario": name}, headers=WRITE)
        assert words in error_of(answer, 404)
        assert error_of(answer, 404).endswith("(see GET /api/scenarios)")
    answer = client.post("/api/runs", json={"scenario": "nope", "iterations": 3.0}, headers=WRITE)
    assert answer.status_code == 404, "3.0 is the integer 3 in JSON"


def test_the_memories_limit_is_checked_with_or_without_words(client):
    for query in ("limit=101", "limit=0", "q=a&limit=101"):
        assert error_of(client.get(f"/api/memories?{query}"), 400).startswith(
            "limit must be between 1 and 100"
        )
    assert client.get("/api/memories?limit=100").status_code == 200


def test_a_scope_with_control_characters_or_a_slash_is_refused(client):
    assert "no control characters" in error_of(client.get("/api/knowledge/a%01b"), 400)
    assert client.get("/api/knowledge/a%2Fb").status_code == 404  # two segments: no route


def test_an_empty_event_offset_is_refused(client, finished_run):
    assert error_of(client.get("/api/runs/r3/events?from="), 400).startswith("from is a byte")


def test_unknown_paths_and_methods_are_json_errors(client):
    assert error_of(client.get("/api/nothing"), 404) == "no such path '/api/nothing'"
    answer = client.put("/api/runs", headers=WRITE)
    assert error_of(answer, 405) == "PUT is not allowed here"
    assert answer.headers["allow"] == "GET, HEAD, POST", "every method of the path (RFC 9110)"
    answer = client.request("TRACE", "/api/memories/1", headers=WRITE)
    assert error_of(answer, 405) == "TRACE is not allowed here"
    assert answer.headers["allow"] == "DELETE, GET, HEAD"


def test_the_openapi_document_names_every_route(client):
    document = client.get("/api/openapi.json").json()
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == {
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/events",
        "/api/scenarios",
        "/api/knowledge",
        "/api/knowledge/{scope}",
        "/api/promotions",
        "/api/memories",
        "/api/memories/{memory_id}",
    }
    assert set(document["paths"]["/api/runs"]) == {"get", "post"}
    assert set(document["paths"]["/api/memories/{memory_id}"]) == {"get", "delete"}


def test_the_documents_run_bounds_are_the_ones_run_checks():
    """A second outside rehearsal's schemathesis run: iterations 87744108 fit the document
    (minimum only) but `run` refuses them; every bound `run` checks is now in the document."""
    import re

    from lessonloop.errors import UsageError
    from lessonloop.loop.options import MAX_ITERATIONS, MAX_MATCHES, RunOptions
    from lessonloop.loop.request import check_run_id
    from lessonloop.web.openapi import START_BODY

    fields = START_BODY["properties"]
    assert fields["iterations"]["maximum"] == MAX_ITERATIONS
    assert fields["matches"]["maximum"] == MAX_MATCHES
    assert fields["seed"]["maximum"] == 2**63 - 1
    with pytest.raises(UsageError):
        RunOptions(seed=2**63).check()
    pattern = fields["run_id"]["pattern"]
    for run_id in ("ok-1", "a" * 64, "a" * 65, "-x", "x y"):
        fits = re.search(pattern, run_id) is not None
        try:
            check_run_id(run_id)
            accepted = True
        except UsageError:
            accepted = False
        assert fits == accepted, run_id
