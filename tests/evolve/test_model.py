"""A model route writing whole candidates (``evolve SPEC --provider ...``), against a loopback
OpenAI-compatible server: what it is shown, answers parsed into one fenced code block, the
receipt stored before the check, garbage rejected with the reason, the call budget, a failing
endpoint stopping the run resumably; and once against the real local model when one is set."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lessonloop import paths
from lessonloop.store import open_store

from ..providers.fake_servers import (
    FakeServer,
    Reply,
    openai_completion,
    openai_error,
    route_every_role,
)
from .conftest import KERNEL

FASTER = KERNEL.replace("WORK = 4", "WORK = 1")
WRONG = KERNEL.replace("SLOPPY = False", "SLOPPY = True")
SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def fenced(source: str) -> str:
    return f"I set WORK to 1: the loop ran four times for nothing.\n```python\n{source}```\n"


@pytest.fixture
def model(home, monkeypatch) -> Iterator[Callable[..., FakeServer]]:
    """``model(*answers)``: the competitor routed to a loopback server answering these in
    turn (a str is a completion, a Reply is sent as it is)."""
    servers: list[FakeServer] = []

    def start(*answers: str | Reply) -> FakeServer:
        server = FakeServer()
        server.queue(
            *(a if isinstance(a, Reply) else Reply(body=openai_completion(a)) for a in answers)
        )
        servers.append(server)
        route_every_role(monkeypatch, server)
        return server

    yield start
    for server in servers:
        server.close()


def prompts(server: FakeServer) -> list[str]:
    found = []
    for received in server.received:
        if received.path.endswith("/chat/completions"):
            body = received.body
            found.append(body["messages"][-1]["content"])
    return found


def test_a_model_writes_candidates_and_garbage_is_rejected_with_a_reason(cli, kernel_dir, model):
    server = model(
        fenced(FASTER),
        "I would rather not write code today.",
        f"```python\n{WRONG}```",
        "```python\ndef total(values:\n    return 0\n```",
    )
    result = cli(
        "evolve", kernel_dir / "spec.yaml", "--generations", "4", "--run-id", "m", "--json"
    )
    assert result.code == 0, result.err
    summary = result.json()
    got = [(c["status"], c["message"]) for c in summary["candidates"][1:]]
    assert got[0][0] == "champion"
    assert got[1] == ("rejected", "the answer holds no fenced code block")
    assert got[2][0] == "incorrect" and "differs from the reference" in got[2][1]
    assert got[3][0] == "rejected" and got[3][1].startswith("not valid Python")
    assert summary["champion"]["generation"] == 1 and summary["champion"]["confirmed"] is True
    assert all(c["params"] == {"written_by": "openai"} for c in summary["candidates"][1:])
    status = cli("status", "m", "--json")
    assert status.json()["run"]["agent_provider"] == "openai"  # the route that wrote them
    # the receipt: the written source, its digest, kept with the model's answer
    first = summary["candidates"][1]
    assert Path(first["receipt"]["source"]).read_text() == FASTER
    answer = paths.run_dir("m") / "candidates" / "1.answer.md"
    assert "I set WORK to 1" in answer.read_text()
    assert Path(summary["artifacts"]["champion_source"]).read_text() == FASTER
    # what the model is shown: the entry point, the champion's source, earlier outcomes
    shown = prompts(server)
    assert len(shown) == 4
    assert "`total`" in shown[0] and "WORK = 4" in shown[0] and "Recent candidates" not in shown[0]
    assert "Declared tunables: SLOPPY one of False, True; WORK int 1..4" in shown[0]
    assert "WORK = 1" in shown[1] and "generation 1 (model-written): champion" in shown[1]
    assert "generation 2 (model-written): rejected — the answer holds no fenced" in shown[2]
    # the lessons: the champion's change as a diff, and the dead ends, through admission
    with open_store(readonly=True) as store:
        rows = store.query("SELECT kind, summary, content FROM knowledge WHERE scope = ?",
                           ("evolve:squares",))  # fmt: skip
    kinds = sorted(row["kind"] for row in rows)
    assert kinds.count("bullet") == 1 and kinds.count("dead_end") == 3
    bullet = next(row for row in rows if row["kind"] == "bullet")
    assert "-WORK = 4" in bullet["content"] and "+WORK = 1" in bullet["content"]
    listed = cli("playbook", "list", "evolve:squares")
    assert listed.code == 0 and "the model-written source of generation 1" in listed.out


def test_lessons_and_outcomes_shown_to_the_model_are_redacted(cli, kernel_dir, model):
    # a checked candidate whose failure prints a secret: the next prompt must not carry it
    leaky = KERNEL.replace("    return result\n", f"    print('{SECRET}')\n    return -1\n")
    server = model(f"```python\n{leaky}```", f"```python\n{leaky}```")
    assert cli("evolve", kernel_dir / "spec.yaml", "--generations", "1", "--run-id", "a").code == 0
    assert cli("evolve", kernel_dir / "spec.yaml", "--generations", "1", "--run-id", "b").code == 0
    second = prompts(server)[1]
    assert "Lessons from earlier runs" in second and SECRET not in second


def test_max_calls_stops_the_run_cleanly(cli, kernel_dir, model):
    server = model(fenced(FASTER), "no code", "no code either")
    result = cli(
        "evolve", kernel_dir / "spec.yaml", "--generations", "5", "--max-calls", "2",
        "--run-id", "budget",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert len(prompts(server)) == 2
    assert "run budget stopped:" in result.out and "--max-calls" in result.out  # as `run` does
    assert "gen 1: " in result.out and "gen 3: " not in result.out
    usage = cli("usage", "--run", "budget", "--json")
    assert usage.code == 0, usage.err
    assert "competitor" in usage.out and '"calls": 2' in usage.out  # on the ledger, each call


def test_max_calls_without_a_model_is_refused(cli, kernel_dir):
    result = cli("evolve", kernel_dir / "spec.yaml", "--max-calls", "3")
    assert result.code == 2 and "no model route is set" in result.err
    assert len(result.err.strip().splitlines()) == 1


def test_a_failing_endpoint_stops_the_run_resumably(cli, kernel_dir, model):
    model(fenced(FASTER), openai_error(400, "the model is not loaded"))
    result = cli("evolve", kernel_dir / "spec.yaml", "--generations", "3", "--run-id", "f")
    assert result.code == 1
    assert "the model is not loaded" in result.err and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    with open_store(readonly=True) as store:
        row = store.query_one("SELECT status FROM evolve_runs WHERE run_id = 'f'")
    assert row["status"] == "failed"
    # the endpoint is back: the run continues from its stored candidates
    server = model("```python\n" + KERNEL.replace("WORK = 4", "WORK = 2") + "```", "nothing")
    resumed = cli("evolve", kernel_dir / "spec.yaml", "--generations", "3", "--run-id", "f",
                  "--json")  # fmt: skip
    assert resumed.code == 0, resumed.err
    summary = resumed.json()
    assert summary["generations"] == 3 and summary["candidates"][1]["status"] == "champion"
    assert len(prompts(server)) == 2


def test_an_offline_run_continues_offline_whatever_is_configured_since(cli, kernel_dir, model):
    offline = cli("evolve", kernel_dir / "spec.yaml", "--generations", "1", "--run-id", "o")
    assert offline.code == 0, offline.err
    server = model("```python\n" + KERNEL + "```")  # a model configured afterwards
    more = cli("evolve", kernel_dir / "spec.yaml", "--generations", "2", "--run-id", "o")
    assert more.code == 0, more.err
    assert (
        prompts(server) == []
        and cli("status", "o", "--json").json()["run"]["agent_provider"] == "local"
    )


def test_resume_goes_on_with_the_provider_that_wrote_the_candidates(
    cli, kernel_dir, model, monkeypatch
):
    model(fenced(FASTER), openai_error(400, "the model is not loaded"))
    assert cli("evolve", kernel_dir / "spec.yaml", "--generations", "3", "--run-id", "r").code == 1
    server = model("```python\n" + KERNEL.replace("WORK = 4", "WORK = 2") + "```", "nothing")
    monkeypatch.delenv("LESSONLOOP_PROVIDER")  # not configured: the run's own provider is used
    resumed = cli("resume", "r", "--max-calls", "5", "--json")
    assert resumed.code == 0, resumed.err
    assert len(prompts(server)) == 2  # a model wrote the rest, not the offline tuner
    assert all(c["params"] == {"written_by": "openai"} for c in resumed.json()["candidates"][1:])


@pytest.mark.real_model
def test_the_real_local_model_writes_a_candidate_or_is_rejected_with_a_reason(
    cli, kernel_dir, monkeypatch, real_model
):
    for name, value in real_model.env(LESSONLOOP_TIMEOUT="300").items():
        monkeypatch.setenv(name, value)
    result = cli(
        "evolve", kernel_dir / "spec.yaml", "--generations", "2", "--max-calls", "2",
        "--run-id", "real", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    summary = result.json()
    assert summary["generations"] == 2
    for c in summary["candidates"][1:]:
        assert c["params"]["written_by"] == "openai"
        assert c["status"] in ("champion", "not faster", "incorrect", "crashed", "rejected")
        assert c["message"]  # a reason either way
    # a wrong candidate is never champion
    assert all(c["correct"] is not False for c in summary["candidates"] if c["champion"])
