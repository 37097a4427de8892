"""Runs with every role routed to a loopback model server, ``usage``, ``doctor`` and budgets."""

from __future__ import annotations

import json
import random
import re
import threading

import pytest

from lessonloop.config import ROLES

from ..conftest import PLUGIN
from ..providers.fake_servers import (
    FakeServer,
    Received,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_completion,
    openai_error,
)

# how each role's prompt (lessonloop/loop/prompts.py) states its task
TASKS = {
    "competitor": "Task: propose one new strategy",
    "translator": "Task: the text below describes a strategy",
    "analyst": "Task: explain what changed",
    "coach": "Task: propose at most 3 lessons",
    "curator": "Task: decide for each proposed playbook edit",
}


class ModelServer:
    """Answers each role sensibly, with a 429 on two of the requests, and counts the
    completions it answered successfully. The 429 asks for 50 ms (``retry-after-ms``, as both
    vendors send it; a wait of whole seconds is test_hosted's to time), not a second of sleep."""

    def __init__(self, kind: str, rate_limited=(2, 7)):
        self.kind, self.rate_limited = kind, set(rate_limited)
        self.rng = random.Random(5)
        self.requests = self.answered = 0
        self.roles: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, received: Received) -> Reply:
        with self.lock:
            self.requests += 1
            if self.requests in self.rate_limited:
                limited = anthropic_error if self.kind == "anthropic" else openai_error
                return limited(429, "rate limited", headers={"retry-after-ms": "50"})
            self.answered += 1
        role = next((r for r, task in TASKS.items() if task in received.text), "unknown")
        self.roles.append(role)
        text = {
            "competitor": 'Aim a little into the wind.\n```json\n{"aim": %.3f, "draw": %.3f}\n```'
            % (self.rng.uniform(-0.5, 0.5), self.rng.uniform(0.2, 0.8)),
            "coach": '```json\n{"edits": [{"op": "add_hint", "text": "Moderate draw is steadier '
            'in gusts", "tags": ["param:draw"]}]}\n```',
            "curator": '{"decisions": [{"index": 0, "decision": "accept", "reason": "supported"}]}',
        }.get(role, "The challenger differed from the incumbent mostly in draw.")
        body = (
            anthropic_message(text, model="claude-test")
            if self.kind == "anthropic"
            else openai_completion(text, model="gpt-test")
        )
        return Reply(body=body)


def route_everything(monkeypatch, kind: str, server: FakeServer) -> None:
    """Every role to the server, each through its own per-role variables."""
    base_url = server.base_url + ("/v1" if kind == "openai" else "")
    monkeypatch.setenv("LESSONLOOP_API_KEY", "sk-loopback-test-000000000000")
    for role in ROLES:
        monkeypatch.setenv(f"LESSONLOOP_{role.upper()}_PROVIDER", kind)
        monkeypatch.setenv(f"LESSONLOOP_{role.upper()}_MODEL", f"{kind}-model")
        monkeypatch.setenv(f"LESSONLOOP_{role.upper()}_BASE_URL", base_url)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_run_with_every_role_on_a_loopback_server_survives_429s_and_counts_usage(
    kind, cli, monkeypatch, home
):
    responder = ModelServer(kind)
    with FakeServer(responder) as server:
        route_everything(monkeypatch, kind, server)
        monkeypatch.setenv("LESSONLOOP_OFFLINE", "1")  # loopback is allowed offline
        result = cli("run", PLUGIN, "--iterations", 3, "--run-id", "hosted", "--json")
        assert result.code == 0, result.err
        assert result.json()["status"] == "completed"
        usage = cli("usage", "--run", "hosted", "--json").json()
    assert responder.requests == responder.answered + 2
    assert usage["calls"] == responder.answered
    assert usage["retries"] == 2
    assert set(usage["by_role"]) >= {"competitor", "analyst", "coach", "curator"}
    assert sum(part["calls"] for part in usage["by_role"].values()) == usage["calls"]
    # no price for a test model, and a loopback server costs nothing unless a price says so
    assert usage["input_tokens"] > 0 and usage["cost"] == 0.0
    assert set(responder.roles) >= {"competitor", "analyst", "coach", "curator"}
    everything = "".join(
        p.read_text(errors="replace")
        for p in home.rglob("*")
        if p.is_file() and p.suffix in (".json", ".md", ".ndjson", ".toml")
    )
    assert "sk-loopback-test" not in everything, "a key never reaches disk"


def test_a_wrong_key_stops_the_run_with_one_clear_line_and_no_retry_storm(cli, monkeypatch):
    with FakeServer(lambda received: openai_error(401, "Incorrect API key provided")) as server:
        route_everything(monkeypatch, "openai", server)
        result = cli("run", PLUGIN, "--iterations", 3, "--run-id", "badkey", "--json")
        posts = [r for r in server.received if r.method == "POST"]
    assert result.code == 1
    assert "rejected the API key (401)" in result.error()["error"]
    assert len(posts) == 1
    status = cli("status", "badkey", "--json").json()
    assert status["run"]["status"] == "failed"


def test_usage_totals_per_role_and_refuses_an_unknown_run(cli):
    assert cli("run", PLUGIN, "--iterations", 2, "--run-id", "offline", "--json").code == 0
    usage = cli("usage", "--json").json()
    assert set(usage) >= {"calls", "input_tokens", "output_tokens", "cost", "by_role"}
    assert usage["cost"] == 0.0, "local calls cost nothing"
    assert usage["by_role"]["competitor"]["calls"] >= 2
    assert "calls" in cli("usage", "--run", "offline").out
    missing = cli("usage", "--run", "nope", "--json")
    assert missing.code == 1 and "unknown run id" in missing.error()["error"]


def test_a_call_budget_stops_the_run_cleanly_and_resume_can_raise_it(cli):
    result = cli("run", PLUGIN, "--iterations", 4, "--run-id", "budget", "--max-calls", 7, "--json")
    assert result.code == 0
    summary = result.json()
    assert summary["status"] == "stopped"
    status = cli("status", "budget", "--json").json()["run"]
    assert "calls budget spent (7 of 7 calls)" in status["stop_reason"]
    assert cli("usage", "--run", "budget", "--json").json()["calls"] == 7
    resumed = cli("resume", "budget", "--max-calls", 1000, "--json")
    assert resumed.code == 0 and resumed.json()["status"] == "completed"
    assert resumed.json()["generations_executed"] == 4


def test_budget_flags_must_be_positive(cli):
    result = cli("run", PLUGIN, "--max-tokens", 0, "--json")
    assert result.code == 2 and "--max-tokens" in result.error()["error"]


def test_doctor_shows_per_role_environment_overrides_and_never_a_key(cli, monkeypatch, home):
    with FakeServer() as server:
        monkeypatch.setenv("LESSONLOOP_PROVIDER", "openai")
        monkeypatch.setenv("LESSONLOOP_MODEL", "gpt-test")
        monkeypatch.setenv("LESSONLOOP_BASE_URL", server.base_url + "/v1")
        monkeypatch.setenv("LESSONLOOP_API_KEY", "sk-doctor-secret-1234567890")
        monkeypatch.setenv("LESSONLOOP_COACH_PROVIDER", "anthropic")
        monkeypatch.setenv("LESSONLOOP_COACH_MODEL", "claude-test")
        monkeypatch.setenv("LESSONLOOP_COACH_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-doctor-secret-0987654321")
        monkeypatch.setenv("LESSONLOOP_JUDGE_MODEL", "gpt-judge")
        result = cli("doctor", "--json")
    report = result.json()
    routes = report["routes"]
    assert routes["coach"] == {
        "provider": "anthropic",
        "model": "claude-test",
        "base_url": server.base_url,
    }
    assert routes["judge"]["model"] == "gpt-judge" and routes["analyst"]["model"] == "gpt-test"
    assert routes["competitor"]["base_url"] == server.base_url + "/v1"
    # the fake serves gpt-test only: the judge's route is flagged, the others answer
    assert result.code == 1
    by_model = {e["model"]: e for e in report["endpoints"]}
    assert not by_model["gpt-judge"]["ok"] and "gpt-test" in by_model["gpt-judge"]["detail"]
    assert by_model["gpt-test"]["ok"] and by_model["claude-test"]["ok"]
    assert {e["key"] for e in report["endpoints"]} == {"LESSONLOOP_API_KEY", "ANTHROPIC_API_KEY"}
    assert "secret" not in result.out


def test_doctor_reports_an_endpoint_that_does_not_answer(cli, monkeypatch):
    monkeypatch.setenv("LESSONLOOP_PROVIDER", "ollama")
    monkeypatch.setenv("LESSONLOOP_MODEL", "llama3.2")
    monkeypatch.setenv("LESSONLOOP_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    result = cli("doctor")
    assert result.code == 1
    assert re.search(r"FAIL ollama http://127.0.0.1:9/v1.*connection", result.out)


def test_config_file_routes_and_flags_beat_environment(cli, monkeypatch, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        'provider = "ollama"\nmodel = "from-file"\n[roles.coach]\nmodel = "coach-from-file"\n'
    )
    report = cli("doctor", "--json").json()
    assert report["routes"]["coach"]["model"] == "coach-from-file"
    assert report["routes"]["analyst"] == {
        "provider": "ollama",
        "model": "from-file",
        "base_url": "http://localhost:11434/v1",
    }
    monkeypatch.setenv("LESSONLOOP_MODEL", "from-env")
    monkeypatch.setenv("LESSONLOOP_COACH_MODEL", "coach-from-env")
    report = cli("doctor", "--json").json()
    assert report["routes"]["analyst"]["model"] == "from-env"
    assert report["routes"]["coach"]["model"] == "coach-from-env"
    report = cli("doctor", "--provider", "local", "--json").json()
    assert {r["provider"] for r in report["routes"].values()} == {"local"}


def test_a_bad_config_file_is_one_line_naming_the_problem(cli, home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('provider = "openai"\nmodle = "typo"\n')
    result = cli("doctor", "--json")
    assert result.code == 2 and "unknown setting 'modle'" in result.error()["error"]
    (home / "config.toml").write_text("provider = [unclosed\n")
    result = cli("run", PLUGIN, "--json")
    assert result.code == 2 and "not valid TOML" in result.error()["error"]


def test_a_stored_run_keeps_its_routes_and_never_its_key(cli, monkeypatch, home):
    with FakeServer(ModelServer("openai", rate_limited=())) as server:
        route_everything(monkeypatch, "openai", server)
        assert cli("run", PLUGIN, "--iterations", 1, "--run-id", "routed").code == 0
    from lessonloop.store import open_store
    from lessonloop.store import runs as run_store

    with open_store(readonly=True) as store:
        stored = json.loads(run_store.get_run(store, "routed")["config_json"])
    assert stored["routes"]["coach"]["model"] == "openai-model"
    assert "sk-loopback" not in json.dumps(stored)
