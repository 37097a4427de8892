"""Memorize's model route against servers that answer, stall, refuse or ramble: its time limit
(LESSONLOOP_AUTOMEM_TIMEOUT), the session-end hook's deadline (a detached memorize when the
model may outlast it), the fallback reason in logs/hooks.log, and every answered call in the
usage ledger. The ``real_model`` test runs the same path against a real small model."""

from __future__ import annotations

import json
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import subprocess_env
from ..providers.fake_servers import FakeServer, Reply, openai_completion
from .test_session import IN_HOOK, Session, fresh_secrets, memories

DETERMINISTIC = {("preference", "Use pnpm instead of npm for this repo"),
                 ("decision", "Use vitest instead of jest")}
ANSWER = {"memories": [{"type": "decision", "summary": "Test with vitest, not jest"}]}


def model_env(server: FakeServer, **extra: str) -> dict:
    return {"LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
            "LESSONLOOP_BASE_URL": server.base_url + "/v1", **extra}


def answering(body: dict, delay: float = 0.0):
    return lambda received: Reply(body=openai_completion(json.dumps(body), model="test-model"),
                                  delay=delay)


def posts(server: FakeServer) -> list:
    return [r for r in server.received if r.method == "POST"]


def hooks_log(home: Path) -> list[str]:
    path = home / "logs" / "hooks.log"
    return path.read_text().splitlines() if path.exists() else []


def ledger(home: Path) -> list[dict]:
    with sqlite3.connect(home / "lessonloop.db") as conn:
        conn.row_factory = sqlite3.Row
        return [dict(r) for r in conn.execute(
            "SELECT * FROM provider_calls WHERE role = 'memorize' ORDER BY id")]


def played(home: Path, session_id: str, env: dict | None = None, consent: bool = True,
           cli=None) -> Session:
    """A session whose captures wait for memorize: played without consent, which is then
    given (when ``consent``), so only the session-end hook the test sends memorizes it."""
    session = Session(home, session_id, fresh_secrets(), env)
    session.play()
    assert memories(home) == []
    # its own end, without consent, logged that: only what the test's own hooks log counts
    (home / "logs" / "hooks.log").unlink(missing_ok=True)
    if consent:
        cli("memory", "consent", "yes")
    return session


def wait_for_detached(home: Path, seconds: float) -> list[dict]:
    """The notices a detached memorize leaves once it is done (its last act)."""
    from lessonloop.memory import hooks

    path = home / hooks.NOTICES
    deadline = time.monotonic() + seconds
    while not (path.exists() and path.read_bytes().endswith(b"\n")):
        assert time.monotonic() < deadline, f"no detached memorize finished: {hooks_log(home)}"
        time.sleep(0.1)
    return [json.loads(line) for line in path.read_text().splitlines()]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -------------------------------------------------------------------------------------------
# the time limit

def test_the_model_time_limit_is_a_setting_of_two_minutes_by_default():
    from lessonloop.errors import UsageError
    from lessonloop.memory import hooks, memorize

    route = {"LESSONLOOP_AUTOMEM_MODEL": "openai:m", "LESSONLOOP_BASE_URL": "http://127.0.0.1:1/v1"}
    assert memorize.model_seconds({}) == 120
    assert memorize.model_seconds({"LESSONLOOP_AUTOMEM_TIMEOUT": " 300 "}) == 300
    for bad in ("0", "-5", "soon", "nan", "99999"):
        with pytest.raises(UsageError, match="LESSONLOOP_AUTOMEM_TIMEOUT"):
            memorize.model_seconds({"LESSONLOOP_AUTOMEM_TIMEOUT": bad})
    assert memorize.longest_seconds({}) is None, "no model, nothing to wait for"
    # the default outlasts the hook (two requests: the answer and its repair round); 20 s fits
    assert memorize.longest_seconds(route) == 2 * 120 + memorize.SETTLE_SECONDS
    assert memorize.longest_seconds(route) > hooks.MEMORIZE_DEADLINE
    assert memorize.longest_seconds({**route, **IN_HOOK}) <= hooks.MEMORIZE_DEADLINE


def test_the_hooks_deadline_is_the_one_install_gives_claude_code():
    from lessonloop.integrations.claude_code import HOOKS
    from lessonloop.memory import hooks

    assert HOOKS["SessionEnd"][2] == HOOKS["PreCompact"][2] == hooks.MEMORIZE_DEADLINE


def test_a_model_slower_than_its_time_limit_is_cut_off_there_and_the_reason_logged(home, cli):
    with FakeServer(answering(ANSWER, delay=4)) as server:
        env = model_env(server, LESSONLOOP_AUTOMEM_TIMEOUT="1")
        session = played(home, "slow-model", env, cli=cli)
        started = time.monotonic()
        output = session.hook("session-end", reason="other")   # fits the deadline: in the hook
        elapsed = time.monotonic() - started
        assert len(posts(server)) == 1, "one attempt"
    assert elapsed < 3.5, elapsed
    assert DETERMINISTIC <= set(memories(home))
    assert output["systemMessage"].startswith("Stored ")
    [line] = hooks_log(home)
    assert "session slow-model: model openai:test-model not used" in line
    assert "no answer within 1 s (LESSONLOOP_AUTOMEM_TIMEOUT)" in line
    assert "the deterministic memories stand" in line
    assert ledger(home) == [], "nothing was answered: nothing to count"


def test_a_slow_model_within_its_time_limit_is_waited_for_and_used(home, cli):
    from lessonloop.memory import memorize

    session = played(home, "patient", cli=cli)
    with FakeServer(answering(ANSWER, delay=2.5)) as server:
        result = memorize.memorize(session.id, home, environ=model_env(
            server, LESSONLOOP_AUTOMEM_TIMEOUT="4"))
    assert result.model == "used" and result.stored == ["Test with vitest, not jest"]


def test_a_summary_that_runs_on_into_json_syntax_is_no_memory(home, cli):
    """Seen with the real 0.5B model: 'edit `app/package.json`}, {' as a memory."""
    from lessonloop.memory import memorize

    session = played(home, "prompt", cli=cli)
    answer = {"memories": [{"type": "pattern", "summary": "Edit `app/package.json`}, {"},
                           {"type": "preference", "summary": "Use vitest instead of jest"}]}
    with FakeServer(answering(answer)) as server:
        result = memorize.memorize(session.id, home, environ=model_env(server))
    assert result.model == "used"
    assert "Use vitest instead of jest" in result.stored
    assert not any("}, {" in summary for summary in result.stored)


# -------------------------------------------------------------------------------------------
# what the model is sent: small enough for a 0.5B model

def test_the_model_gets_numbered_lessons_and_at_most_one_memory_for_each(home, cli):
    from lessonloop.memory import memorize

    session = played(home, "prompt", cli=cli)
    answer = {"memories": [{"type": "preference", "summary": "Use vitest instead of jest"},
                           {"type": "preference", "summary": "Use pnpm, not npm, here"}]}
    with FakeServer(answering(answer)) as server:
        result = memorize.memorize(session.id, home, environ=model_env(server))
        [call] = posts(server)
    assert result.model == "used", result.model
    schema = call.body["response_format"]["json_schema"]["schema"]
    assert schema == memorize.answer_schema(3), "three lessons, no other notes: three at most"
    assert schema["properties"]["memories"]["minItems"] == 1
    assert set(schema["properties"]["memories"]["items"]["properties"]) == {"type", "summary",
                                                                             "scope"}
    system, user = (m["content"] for m in call.body["messages"])
    assert system == memorize.MODEL_SYSTEM and len(system) < 800
    first = user.splitlines()[0]
    assert first.startswith('Answer format, with lesson 1 as the example: {"memories": '
                            '[{"type": "pattern", "summary": "When `npm test` fails with ')
    assert first.endswith("}, ...]}")
    assert "1. pattern: When `npm test` fails" in user
    assert "2. preference: Use pnpm instead of npm for this repo" in user
    assert "3. decision: Use vitest instead of jest" in user
    # the fix's evidence: the edited file and its changed lines
    assert 'Fixed by: Edited /work/app/package.json: "main": "src/a.js"' in user
    assert "Other notes" not in user, "every error line and word of the user is in a lesson"
    assert len(user) < 1200
    # the lesson kept word for word is that lesson (its kind, its evidence); the rewrite is new
    with sqlite3.connect(home / "lessonloop.db") as conn:
        stored = {summary: (kind, why) for kind, summary, why in conn.execute(
            "SELECT kind, summary, why FROM knowledge")}
    assert stored == {
        "Use vitest instead of jest": ("decision", 'The user said: "From now on we use vitest '
                                                   'instead of jest."'),
        "Use pnpm, not npm, here": ("preference", "Written by the memorize model from this "
                                                  "session's lessons.")}


def test_notes_no_lesson_holds_are_sent_and_make_room_for_a_memory(home, cli):
    from lessonloop.memory import memorize

    candidate = memorize.Candidate(kind="decision", summary="Use vitest instead of jest",
                                   why='The user said: "From now on we use vitest."')
    signals = [{"type": "error", "line": "Error: disk full", "normalized": "error: disk full"},
               {"type": "error", "line": "Error: disk full", "normalized": "error: disk full"}]
    feedback = [{"type": "feedback", "kind": "rule", "text": "Never push on Fridays"}]
    text = memorize._extracts([candidate], signals, feedback)
    assert text.splitlines()[-3:] == ["Other notes (a memory only for a lesson they teach):",
                                      "- error: Error: disk full",
                                      "- the user said (rule) Never push on Fridays"]
    assert memorize.answer_schema(1 + 2)["properties"]["memories"]["maxItems"] == 3
    assert memorize.answer_schema(50)["properties"]["memories"]["maxItems"] == \
        memorize.MAX_MODEL_MEMORIES


# -------------------------------------------------------------------------------------------
# the session-end hook's deadline: a detached memorize

def test_a_model_that_may_outlast_the_hook_memorizes_detached_and_reports_next_session(home, cli):
    with FakeServer(answering(ANSWER, delay=5)) as server:
        env = model_env(server)   # the default limit: 2 x 120 s + settling > 60 s
        session = played(home, "detached", env, cli=cli)
        started = time.monotonic()
        output = session.hook("session-end", reason="prompt_input_exit")
        elapsed = time.monotonic() - started
        assert elapsed < 5, f"the hook waited for the model: {elapsed:.1f} s"
        assert "in the background with openai:test-model" in output["systemMessage"]
        assert memories(home) == [], "the model is still thinking"
        [notice] = wait_for_detached(home, 60)
        assert len(posts(server)) == 1
    assert memories(home) == [("decision", "Test with vitest, not jest")], \
        "the model's memories, through admission, and not the deterministic ones beside them"
    assert notice["message"] == "Stored 1 new memory: Test with vitest, not jest"
    assert hooks_log(home) == []
    [row] = ledger(home)
    assert (row["run_id"], row["session_id"], row["calls"], row["cost"]) == (
        None, "detached", 1, 0.0), "a loopback endpoint costs nothing"
    assert (row["input_tokens"], row["output_tokens"], row["model"]) == (11, 7, "test-model")
    # the next session start tells the user, once
    start = session.hook("session-start", source="startup")
    assert start["systemMessage"] == ("Memorized in the background: Stored 1 new memory: "
                                      "Test with vitest, not jest")
    assert "systemMessage" not in session.hook("session-start", source="resume")
    # the same session ending again: nothing new, no process, nothing said
    assert session.hook("session-end", reason="other") == {}


def test_a_detached_memorize_that_falls_back_logs_why_and_says_so_next_session(home, cli):
    with FakeServer(lambda received: Reply(body=openai_completion("Sure! Here you go."))) as server:
        session = played(home, "detached-prose", model_env(server), cli=cli)
        output = session.hook("session-end", reason="other")
        assert "in the background" in output["systemMessage"]
        [notice] = wait_for_detached(home, 60)
        assert len(posts(server)) == 2, "the answer and its repair round"
    assert DETERMINISTIC <= set(memories(home))
    assert notice["message"].startswith("Stored ")
    assert notice["message"].endswith("(without the model: see logs/hooks.log)")
    [line] = hooks_log(home)
    assert "session detached-prose: model openai:test-model not used: OffSchemaError" in line
    assert [(r["calls"], r["session_id"]) for r in ledger(home)] == [(2, "detached-prose")]


def test_a_detached_memorize_that_cannot_start_stores_the_deterministic_memories_at_once(
        home, cli, monkeypatch):
    import subprocess

    from lessonloop.memory import hooks

    def no_process(*args, **kwargs):
        raise OSError(11, "Resource temporarily unavailable")

    with FakeServer(answering(ANSWER)) as server:
        session = played(home, "no-process", model_env(server), cli=cli)
        for name, value in model_env(server).items():
            monkeypatch.setenv(name, value)
        monkeypatch.setattr(subprocess, "Popen", no_process)
        output = hooks.session_end({"session_id": session.id,
                                    "transcript_path": str(session.transcript)}, str(home))
        assert posts(server) == [], "no model within the hook's deadline"
    assert output["systemMessage"].startswith("Stored ")
    assert DETERMINISTIC <= set(memories(home))
    [line] = hooks_log(home)
    assert "session no-process: the detached memorize did not start" in line
    assert "memorizing without the model" in line


def test_the_session_end_hook_that_detaches_imports_nothing_outside_the_standard_library(home, cli):
    with FakeServer(answering(ANSWER)) as server:
        env = {**subprocess_env(home), **model_env(server)}
        session = played(home, "stdlib-only", env, cli=cli)
        payload = json.dumps({"session_id": session.id, "transcript_path": str(session.transcript),
                              "cwd": str(home.parent), "hook_event_name": "SessionEnd"})
        probe = ("import sys, io\nsys.argv = ['lessonloop', 'hook', 'session-end']\n"
                 f"sys.stdin = io.TextIOWrapper(io.BytesIO({payload.encode()!r}))\n"
                 "from lessonloop.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n"
                 "    pass\nprint(sorted(m for m, v in sys.modules.items() if v is not None and "
                 "m.split('.')[0] in ('typer', 'click', 'rich', 'pydantic', 'yaml', 'jsonschema',"
                 " 'anthropic', 'openai', 'httpx', 'ahocorasick_rs')"
                 " or m in ('lessonloop.cli', 'lessonloop.providers.registry')))")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              env=env, timeout=60)
        assert "in the background" in done.stdout, (done.stdout, done.stderr)
        assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
        wait_for_detached(home, 60)
    assert memories(home) == [("decision", "Test with vitest, not jest")]


# -------------------------------------------------------------------------------------------
# fallbacks: the deterministic memories stand, the reason is one line in logs/hooks.log

@pytest.mark.parametrize("case", ["refused", "off-schema", "no-memories", "bad-setting"])
def test_every_fallback_stores_the_deterministic_memories_and_logs_one_line(home, cli, case):
    replies = {"off-schema": lambda received: Reply(body=openai_completion(
                   json.dumps({"memories": [{"type": "rumour", "summary": "x"}]}))),
               "no-memories": answering({"memories": []})}
    with FakeServer(replies.get(case, answering(ANSWER))) as server:
        env = model_env(server, **IN_HOOK)
        if case == "refused":
            env["LESSONLOOP_BASE_URL"] = f"http://127.0.0.1:{closed_port()}/v1"
        if case == "bad-setting":
            env["LESSONLOOP_AUTOMEM_TIMEOUT"] = "a while"
        session = played(home, f"fallback-{case}", env, cli=cli)
        started = time.monotonic()
        output = session.hook("session-end", reason="other")
        elapsed = time.monotonic() - started
        asked = len(posts(server))
    assert elapsed < 10, f"{case}: {elapsed:.1f} s (no wait for a server that is down)"
    stored = set(memories(home))
    assert DETERMINISTIC <= stored and ("decision", "Test with vitest, not jest") not in stored
    assert output["systemMessage"].startswith(f"Stored {len(stored)} new memories: ")
    [line] = hooks_log(home)
    assert f"memorize session fallback-{case}: model" in line and " not used: " in line, line
    assert line.endswith(f"; the deterministic memories stand ({len(stored)} new)"), line
    reason = {"refused": "connection failed", "off-schema": "OffSchemaError",
              "no-memories": "OffSchemaError",
              "bad-setting": "LESSONLOOP_AUTOMEM_TIMEOUT must be a number"}[case]
    assert reason in line, line
    calls = {"refused": 0, "off-schema": 2, "no-memories": 2, "bad-setting": 0}[case]
    assert asked == calls and sum(r["calls"] for r in ledger(home)) == calls, \
        "every answered request is in the ledger, none that was not"


def test_a_session_end_without_consent_stores_nothing_and_logs_why(home, cli):
    with FakeServer(answering(ANSWER)) as server:
        session = played(home, "no-consent", model_env(server), consent=False)
        assert session.hook("session-end", reason="other") == {}, "told once, at the start"
        assert posts(server) == []
    assert memories(home) == []
    [line] = hooks_log(home)
    assert "session no-consent: nothing memorized: consent is missing" in line
    assert "lessonloop memory consent yes" in line


# -------------------------------------------------------------------------------------------
# the usage ledger

def test_usage_counts_the_memorize_calls_answered_used_or_not(home, cli):
    from lessonloop.memory import memorize

    first = played(home, "ledger-one", cli=cli)
    second = Session(home, "ledger-two", fresh_secrets())
    second.prompt("From now on we deploy on Fridays only.")
    with FakeServer(answering(ANSWER)) as good:
        assert memorize.memorize(first.id, home, environ=model_env(good)).model == "used"
    prose = lambda received: Reply(body=openai_completion("no JSON"))  # noqa: E731
    with FakeServer(prose) as bad:
        result = memorize.memorize(second.id, home, environ=model_env(bad))
    assert result.model.startswith("not used: OffSchemaError"), result.model
    rows = ledger(home)
    assert [(r["session_id"], r["calls"], r["run_id"]) for r in rows] == [
        ("ledger-one", 1, None), ("ledger-two", 2, None)]
    usage = cli("usage", "--json").json()
    assert usage["by_role"]["memorize"]["calls"] == 3
    assert usage["by_role"]["memorize"]["input_tokens"] == 11 * 3
    assert usage["cost"] == 0.0


# -------------------------------------------------------------------------------------------
# a real small model (LESSONLOOP_TEST_MODEL_URL)

@pytest.mark.real_model
def test_a_real_model_memorizes_a_session_or_falls_back_with_the_reason_logged(
        home, cli, capsys, real_model):
    """The hooks as Claude Code runs them, the route at a real OpenAI-compatible server with its
    default time limit: the session-end hook returns at once, the detached memorize stores the
    model's validated memories (or the deterministic ones, with the reason logged), and usage
    counts every answered call."""
    from lessonloop.memory.memorize import MEMORY_KINDS, MODEL_REQUESTS, longest_seconds

    env = {"LESSONLOOP_AUTOMEM_MODEL": f"openai:{real_model.model}",
           "LESSONLOOP_BASE_URL": real_model.url}
    session = played(home, "real-model", env, cli=cli)
    started = time.monotonic()
    output = session.hook("session-end", reason="prompt_input_exit")
    assert time.monotonic() - started < 10
    assert f"in the background with openai:{real_model.model}" in output["systemMessage"]
    [notice] = wait_for_detached(home, longest_seconds(env) + 30)
    took = time.monotonic() - started
    stored = memories(home)
    log = hooks_log(home)
    rows = ledger(home)
    calls = sum(r["calls"] for r in rows)
    with capsys.disabled():  # (the cli fixture captures; -s shows what the model did)
        print(f"\nreal model {real_model.model}: {took:.1f} s in all; ledger {rows}; "
              f"stored {stored}; log {log}; notice {notice['message']!r}")
    assert stored, "something was stored either way"
    if log:  # fell back: the deterministic memories, and why
        [line] = log
        assert "session real-model: model openai:" in line and " not used: " in line, line
        assert DETERMINISTIC <= set(stored)
        assert notice["message"].endswith("(without the model: see logs/hooks.log)")
        if "OffSchemaError" in line:
            assert calls == MODEL_REQUESTS, "both answers off the schema are counted"
    else:  # the model's validated memories, through admission
        assert calls in (1, MODEL_REQUESTS), rows
        assert all(kind in MEMORY_KINDS and 3 <= len(summary) <= 120 for kind, summary in stored)
        assert notice["message"].startswith("Stored ")
    if calls:
        assert all(r["session_id"] == "real-model" and r["run_id"] is None and r["cost"] == 0.0
                   and r["input_tokens"] > 0 and r["output_tokens"] > 0 for r in rows), rows
        usage = cli("usage", "--json").json()
        assert usage["by_role"]["memorize"]["calls"] == calls
        assert usage["cost"] == 0.0
    else:
        assert "no answer within" in log[0] or "connection failed" in log[0], log
