"""The promotions page and ``GET /api/promotions`` (issue 23, point 5) on a home whose
candidates come from the real thing: a run with ``--context-trials full`` (the coach's bundles,
one accepted and served) and ``lessonloop train`` (a checkpoint the gate tried)."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from lessonloop.promotion import gate, records
from lessonloop.store import open_store
from tests.report.page_parts import Page

pytestmark = pytest.mark.usefixtures("home")

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token's shape
SCRIPT = "<script>alert('x')</script>"


def served_cells(html: str) -> list[dict[str, str]]:
    """Each row of the served table as its cells' text by their labels."""
    return [
        {
            label: unescape(re.sub(r"<[^>]+>", "", cell))
            for label, cell in re.findall(r'<td[^>]*data-label="([^"]+)">(.*?)</td>', row)
        }
        for row in re.findall(r'<tr class="served".*?</tr>', html)
    ]


def listed(cli, *scope: str) -> dict:
    done = cli("promotions", *(("--scope", *scope) if scope else ()), "--json")
    assert done.code == 0, done.err
    return done.json()


def test_the_home_holds_what_the_page_is_for(promoted, cli):
    """The runs made what the page shows: context bundles from the coach (one served, one
    with every stage played), and a checkpoint from train."""
    found = listed(cli)
    kinds = {(c["kind"], c["source"]) for c in found["candidates"]}
    assert kinds == {("bundle", "coach"), ("checkpoint", "train")}
    assert [(p["role"], p["previous_ref"]) for p in found["active"]] == [("context", None)]
    assert any(sum(c["trials"].values()) > 30 for c in found["candidates"])


def test_the_api_answers_what_promotions_json_prints_with_every_trial(promoted, client, cli):
    expected = listed(cli)
    answer = client.get("/api/promotions")
    assert answer.status_code == 200
    got = answer.json()
    assert got["total"] == len(expected["candidates"]) > 0
    assert got["active"] == expected["active"]
    with open_store(readonly=True) as store:
        for mine, theirs in zip(got["candidates"], expected["candidates"], strict=True):
            played = mine.pop("trial_scores")
            assert mine == theirs
            assert [
                {k: t[k] for k in ("stage", "seed", "candidate", "incumbent")} for t in played
            ] == (records.trials(store.conn, mine["id"]))
            assert len(played) == sum(mine["trials"].values())
            for trial in played:
                assert trial["delta"] == pytest.approx(trial["candidate"] - trial["incumbent"])
    # a scope as promotions --scope takes it: bare, prefixed; a scope with none: empty lists
    assert client.get("/api/promotions?scope=grid_ctf").json()["total"] == got["total"]
    assert client.get("/api/promotions?scope=scenario:grid_ctf").json()["active"] == got["active"]
    assert client.get("/api/promotions", params={"scope": "task:none"}).json() == {
        "active": [],
        "candidates": [],
        "total": 0,
    }


def test_the_answer_matches_the_document(promoted, client, cli):
    """The answer with an active pointer, decisions and trials, checked against the schema the
    OpenAPI document gives it (test_schema's home has no served bundle)."""
    from jsonschema import Draft202012Validator

    document = client.get("/api/openapi.json").json()
    operation = document["paths"]["/api/promotions"]["get"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    answer = client.get("/api/promotions").json()
    # every candidate has its trials but one rejected unplayed (alike under both bundles)
    assert answer["active"] and all(
        c["trial_scores"] or c["decisions"][0]["statistic"] == "not played"
        for c in answer["candidates"]
    )
    assert any(c["trial_scores"] for c in answer["candidates"])
    validator.validate(answer)
    assert not validator.is_valid({**answer, "candidates": [{"id": "1"}]}), "it checks"
    served = answer["active"][0]["candidate_id"]
    cli("promotions", "rollback", "grid_ctf", "--reason", "checking")  # a rollback decision
    answer = client.get("/api/promotions").json()
    [rolled] = [c for c in answer["candidates"] if c["id"] == served]
    assert rolled["decisions"][-1]["action"] == "rollback"
    validator.validate(answer)
    pattern = operation["parameters"][0]["schema"]["pattern"]
    assert Draft202012Validator({"type": "string", "pattern": pattern}).is_valid("task:fix-bug")


@pytest.mark.parametrize("scope", ["project", "user", "", " grid_ctf", "other:x", "scenario: x"])
def test_a_scope_promotions_cannot_read_is_a_400_in_the_one_shape(client, scope):
    answer = client.get("/api/promotions", params={"scope": scope})
    assert answer.status_code == 400
    assert list(answer.json()) == ["error"] and answer.json()["error"].startswith("scope ")


def test_a_repeated_scope_is_refused(client):
    answer = client.get("/api/promotions?scope=a&scope=b")
    assert answer.status_code == 400 and "more than once" in answer.json()["error"]


def test_the_page_shows_what_is_served_and_every_candidate_with_its_decisions_and_trials(
    promoted, client, cli
):
    found = listed(cli)
    html = client.get("/promotions").text
    page = Page(html)
    [served] = page.find("tr", css="served")
    pointer = found["active"][0]
    assert served.attributes["data-scope"] == "scenario:grid_ctf"
    [cells] = served_cells(html)
    assert cells == {
        "scope": "scenario:grid_ctf",
        "role": "context",
        "serves": f"{pointer['ref']} (#{pointer['candidate_id']})",
        "since": pointer["switched_at"]
        + (
            f" (on probation: {pointer['probation_left']} more generation"
            + ("s)" if pointer["probation_left"] != 1 else ")")
            if pointer["probation_left"]
            else ""
        ),
        "rollback target": "the default (what was served before any promotion)",
    }
    blocks = page.find("details", css="candidate")
    assert [int(b.attributes["data-id"]) for b in blocks] == [c["id"] for c in found["candidates"]]
    for candidate in found["candidates"]:
        inside = f"candidate-{candidate['id']}"
        trials = page.find("tr", css="trial", inside=inside)
        assert len(trials) == sum(candidate["trials"].values()), inside
        decisions = page.find("tr", css="decision", inside=inside)
        assert len(decisions) == len(candidate["decisions"])
        for field in ("ref", "incumbent_ref", "status", "created_at"):
            assert candidate[field] in page.text
        for decision in candidate["decisions"]:
            assert decision["rationale"] in page.text and decision["at"] in page.text
    assert 'href="/runs/ct"' in html  # the origin of the coach's bundles
    assert "from train" in page.text
    # the trials fold: one line of counts per stage
    longest = max(found["candidates"], key=lambda c: sum(c["trials"].values()))
    counts = ", ".join(f"{stage} {n}" for stage, n in longest["trials"].items())
    assert f"{sum(longest['trials'].values())} trials (" in html
    assert all(f"{stage} {n}" in counts for stage, n in longest["trials"].items())
    assert 'class="trials" id="trials-' in html and '<details class="trials" open' not in html


def test_a_rollback_shows_its_reason_escaped_and_redacted_and_the_target_it_returned_to(
    promoted, client, cli
):
    """A second activation by hand keeps the served bundle as its rollback target; rolling it
    back with a reason holding a script and a secret shows both safely."""
    served = listed(cli)["active"][0]
    with open_store() as store, store.transaction() as conn:
        rejected = next(
            c
            for c in records.listing(conn, "scenario:grid_ctf")
            if c["status"] == records.REJECTED and c["role"] == "context"
        )
        records.activate(conn, rejected["id"], "user", "by hand")
    [cells] = served_cells(client.get("/promotions").text)
    assert cells["serves"] == f"{rejected['ref']} (#{rejected['id']})"
    assert cells["rollback target"] == f"{served['ref']} (#{served['candidate_id']})"

    done = cli("promotions", "rollback", "grid_ctf", "--reason", f"{SCRIPT} leaked {SECRET}")
    assert done.code == 0, done.err
    html = client.get("/promotions?scope=grid_ctf").text
    assert SCRIPT not in html and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert SECRET not in html and "[REDACTED:github-token]" in html
    api = json.dumps(client.get("/api/promotions").json())
    assert SECRET not in api and "[REDACTED:github-token]" in api
    assert "rolled back" in html


def test_a_ref_holding_markup_is_text(promoted, client):
    """A candidate whose ref and rationale hold markup (added through the gate's own record
    functions) is shown as text everywhere on the page."""
    with open_store() as store, store.transaction() as conn:
        number = records.add_candidate(
            conn, "scenario:grid_ctf", "context", "bundle", SCRIPT, f"coach{SCRIPT}",
            incumbent_ref='"><img src=x onerror=alert(1)>',
        )  # fmt: skip
        verdict = gate.judge(lambda side, seed: 0.5, SCRIPT)
        records.record_verdict(conn, number, verdict)
    html = client.get("/promotions").text
    assert "<script>alert" not in html and "<img" not in html
    page = Page(html)
    assert str(number) in [b.attributes["data-id"] for b in page.find("details", css="candidate")]
    assert SCRIPT in page.text and '"><img src=x onerror=alert(1)>' in page.text


def test_nothing_promoted_yet(client, finished_run):
    html = client.get("/promotions").text
    assert "No candidates yet" in html and "Nothing promoted" in html
    assert 'href="/promotions"' in html  # in the navigation
    assert "promotions-link" not in client.get(f"/runs/{finished_run}").text
    assert "promotions-link" not in client.get("/playbooks/grid_ctf").text


def test_the_scope_and_run_pages_link_to_their_promotions(promoted, client, cli):
    total = len(listed(cli)["candidates"])
    for url in ("/playbooks/grid_ctf", "/runs/ct"):
        html = client.get(url).text
        assert (
            f'<a href="/promotions?scope=scenario:grid_ctf">{total} promotion candidates of '
            "scenario:grid_ctf</a>"
        ) in html, url
    filtered = client.get("/promotions?scope=scenario:grid_ctf").text
    assert "<h1>Promotions of scenario:grid_ctf</h1>" in filtered
    assert '<option value="scenario:grid_ctf" selected>' in filtered
    assert client.get("/promotions?scope=project").status_code == 400
