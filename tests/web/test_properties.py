"""Property-based: whatever the path segment, query values or body, no route answers 500
(Hypothesis, by hand: the pages as well as the API, and values the OpenAPI document rules out;
tests/web/test_schema.py generates from the document with schemathesis)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import TOKEN

pytestmark = pytest.mark.usefixtures("home")
WRITE = {"X-Lessonloop-Token": TOKEN}
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/?#%"), max_size=40
)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)


def no_server_error(answer) -> None:
    assert answer.status_code < 500, (answer.status_code, answer.text)
    if answer.headers["content-type"].startswith("application/json") and answer.status_code >= 400:
        assert set(answer.json()) == {"error"}


@SETTINGS
@given(segment=text.filter(bool))
def test_any_path_segment(client, finished_run, segment):
    segment = quote(segment, safe="")  # as a client sends it
    for url in (
        f"/api/runs/{segment}",
        f"/api/knowledge/{segment}",
        f"/api/memories/{segment}",
        f"/runs/{segment}",
        f"/playbooks/{segment}",
        f"/memories/project/{segment}",
    ):
        no_server_error(client.get(url))
    no_server_error(client.delete(f"/api/memories/{segment}", headers=WRITE))


@SETTINGS
@given(q=text, scope=text, limit=text, offset=text)
def test_any_query_values(client, finished_run, q, scope, limit, offset):
    no_server_error(client.get("/api/memories", params={"q": q, "scope": scope, "limit": limit}))
    no_server_error(client.get("/api/runs", params={"limit": limit}))
    no_server_error(client.get("/memories", params={"q": q, "scope": scope, "limit": limit}))
    no_server_error(client.get("/api/runs/nope/events", params={"from": offset}))


@SETTINGS
@given(
    body=st.fixed_dictionaries(
        {},
        optional={
            "scenario": st.sampled_from(["nope", ""]) | text,
            "iterations": json_values,
            "run_id": json_values,
            "provider": json_values,
            "model": json_values,
            "matches": json_values,
            "seed": json_values,
        },
    )
    | json_values
)
def test_any_run_request_body(client, body):
    # scenarios that cannot start (an unknown name), so no run is spawned whatever the rest
    if isinstance(body, dict) and body.get("scenario") in ("grid_ctf", "othello"):
        body["scenario"] = "nope"
    no_server_error(client.post("/api/runs", json=body, headers=WRITE))
