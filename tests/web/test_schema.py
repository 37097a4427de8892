"""Property-based, against the OpenAPI document: schemathesis reads ``/api/openapi.json`` from
the app (in-process, ASGI) and generates requests for every operation it describes, with the
launch token, valid and invalid ones; with every check schemathesis has (``--checks all``): no
answer may be a server error, every answer must match what the document declares for it
(status, content type, JSON schema, each server-sent event), a request the document rules out
must be refused and one it allows must not be. A deterministic pass then checks the
answers for real ids (a run, a scope, a memory), which random ids never find."""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
pytest.importorskip("starlette")

import schemathesis.specs.openapi.checks  # noqa: E402, F401 (registers the OpenAPI checks)
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis.checks import CHECKS  # noqa: E402

from lessonloop.web.routes import build  # noqa: E402

from .conftest import HOST, PORT, TOKEN  # noqa: E402

HEADERS = {"Host": f"{HOST}:{PORT}", "X-Lessonloop-Token": TOKEN}
# every check schemathesis has (`schemathesis run --checks all`): the server errors and the
# conformance of each answer, a schema-violating request accepted, a schema-valid one refused,
# a 405 without its Allow header, a missing token let through, ...
CHECKS = CHECKS.get_all()
assert len(CHECKS) > 10, [check.__name__ for check in CHECKS]  # all of them, not only the first
APP = build(HOST, PORT, TOKEN)
schema = schemathesis.openapi.from_asgi("/api/openapi.json", APP, headers=HEADERS)


@pytest.fixture(scope="module")
def lived_in(tmp_path_factory):
    """A home with a finished run, run knowledge, two memories and a trained checkpoint the
    promotion gate tried, for the whole module (one run for every operation's examples)."""
    root = tmp_path_factory.mktemp("schema")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LESSONLOOP_HOME", str(root / "home"))
        patch.setenv("LESSONLOOP_USER_HOME", str(root / "user-home"))
        patch.setenv("XDG_CACHE_HOME", str(root / "cache"))
        patch.delenv("CLAUDE_PROJECT_DIR", raising=False)
        from lessonloop.cli import main

        assert main(["run", "grid_ctf", "-n", "2", "--matches", "2", "--run-id", "s2"]) == 0
        assert main(["train", "grid_ctf"]) == 0
        for summary in ("Indent YAML with two spaces", "Use SQLite for the store"):
            assert main(["memory", "add", "--type", "decision", "--summary", summary]) == 0
        yield root


def harmless(case) -> None:
    """No generated request may start a real run (a detached process): a body naming a real
    scenario names none instead."""
    from lessonloop.scenarios import registry

    body = case.body if isinstance(case.body, dict) else None
    if body is not None and body.get("scenario") in registry.available_names():
        body["scenario"] = "no-such-scenario"


REAL = [
    ("/api/runs", {}),
    ("/api/runs/{run_id}", {"run_id": "s2"}),
    ("/api/scenarios", {}),
    ("/api/knowledge", {}),
    ("/api/knowledge/{scope}", {"scope": "grid_ctf"}),
    ("/api/promotions", {}),
    ("/api/memories", {}),
    ("/api/memories/{memory_id}", {"memory_id": 1}),
]


@pytest.mark.parametrize(("path", "parameters"), REAL, ids=[path for path, _ in REAL])
def test_real_answers_match_the_document(lived_in, path, parameters):
    operation = schema[path]["GET"]
    case = operation.Case(path_parameters=parameters)
    answer = case.call_and_validate(headers=HEADERS, checks=CHECKS)
    assert answer.status_code == 200
    if path == "/api/memories":
        searched = operation.Case(query={"q": "SQLite", "scope": "all"})
        assert searched.call_and_validate(headers=HEADERS, checks=CHECKS).json()[0]["score"] > 0
    if path == "/api/promotions":
        everything = answer.json()["candidates"]
        assert everything[0]["trial_scores"]
        scoped = operation.Case(query={"scope": "grid_ctf"})
        total = scoped.call_and_validate(headers=HEADERS, checks=CHECKS).json()["total"]
        assert total == sum(c["scope"] == "scenario:grid_ctf" for c in everything) > 0


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_operation_answers_a_server_error_or_off_its_schema(lived_in, case):
    harmless(case)
    case.call_and_validate(headers=HEADERS, checks=CHECKS)
