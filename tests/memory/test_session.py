"""A scripted Claude Code session end to end: hook payloads and a transcript in the real format,
secrets planted everywhere, consent in every state, an optional model route."""

from __future__ import annotations

import json
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import subprocess_env
from ..providers.fake_servers import FakeServer, Reply, openai_completion


def fresh_secrets() -> dict:
    return {"github": "ghp_" + secrets.token_hex(18),
            "anthropic": "sk-ant-api03-" + secrets.token_urlsafe(40),
            "aws": "wJalrXUtnFEMI/" + secrets.token_hex(13),
            "password": "pw-" + secrets.token_hex(8)}


class Session:
    """Writes the transcript and sends the hook payloads of one session."""

    def __init__(self, home: Path, session_id: str, secret: dict, env: dict | None = None):
        self.home, self.id, self.secret = home, session_id, secret
        self.env = {**subprocess_env(home), **(env or {})}
        self.transcript = home.parent / f"{session_id}.jsonl"
        self.lines: list[dict] = []
        self.parent = None

    def _event(self, kind: str, message: dict, **extra) -> None:
        uuid = f"{self.id}-{len(self.lines)}"
        self.lines.append({"type": kind, "uuid": uuid, "parentUuid": self.parent,
                           "sessionId": self.id, "timestamp": "2026-11-30T10:00:00.000Z",
                           "cwd": str(self.home.parent), "isSidechain": False,
                           "version": "2.0.0", "message": message, **extra})
        self.parent = uuid
        self.transcript.write_text("".join(json.dumps(line) + "\n" for line in self.lines))

    def hook(self, event: str, **payload) -> dict:
        body = {"session_id": self.id, "transcript_path": str(self.transcript),
                "cwd": str(self.home.parent), "hook_event_name": event, **payload}
        done = subprocess.run([sys.executable, "-m", "lessonloop", "hook", event],
                              input=json.dumps(body).encode(), capture_output=True,
                              env=self.env, timeout=60)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    def prompt(self, text: str) -> dict:
        self._event("user", {"role": "user", "content": text})
        return self.hook("user-prompt-submit", prompt=text)

    def tool(self, name: str, tool_input: dict, response, is_error: bool = False,
             result_text: str | None = None) -> dict:
        call_id = f"toolu_{len(self.lines)}"
        self._event("assistant", {"role": "assistant", "model": "claude-test", "content": [
            {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]})
        text = result_text if result_text is not None else (
            response if isinstance(response, str)
            else (response.get("stdout", "") + response.get("stderr", "")))
        self._event("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": is_error}]},
            toolUseResult=response)
        return self.hook("post-tool-use", tool_name=name, tool_input=tool_input,
                         tool_response=response, tool_use_id=call_id)

    def play(self) -> dict:
        """The session: two stated lessons, a recurring error and its fix, a harmless read."""
        s = self.secret
        self.hook("session-start", source="startup")
        self.prompt(f"I prefer pnpm over npm for this repo. By the way my token is {s['github']}")
        self.tool("Read", {"file_path": "/work/app/errors.py"},
                  {"type": "text", "file": {"filePath": "/work/app/errors.py", "content":
                   f"class ValidationError(Exception):\n    pass\nKEY = '{s['anthropic']}'\n"}},
                  result_text="class ValidationError(Exception): pass")
        for path in ("/work/app/src/a.js", "/tmp/build-1/src/b.js"):
            self.tool("Bash", {"command": "npm test"},
                      {"stdout": "", "stderr": f"Error: Cannot find module '{path}'\n"
                       f"AWS_SECRET_ACCESS_KEY={s['aws']}\n", "interrupted": False,
                       "isImage": False}, is_error=True)
        self.tool("Edit", {"file_path": "/work/app/package.json", "old_string": '"main": "a.js"',
                           "new_string": '"main": "src/a.js"'},
                  {"filePath": "/work/app/package.json", "structuredPatch": []},
                  result_text="The file /work/app/package.json has been updated.")
        self.tool("Bash", {"command": "npm test"},
                  {"stdout": "All 12 tests passed\n", "stderr": "", "interrupted": False,
                   "isImage": False})
        self.prompt(f"From now on we use vitest instead of jest. The db password={s['password']}")
        self.hook("stop", stop_hook_active=False)
        return self.hook("session-end", reason="prompt_input_exit")


def everything_under(*roots: Path) -> bytes:
    return b"".join(p.read_bytes() for root in roots if root.exists()
                    for p in root.rglob("*") if p.is_file())


def memories(home: Path) -> list[tuple[str, str]]:
    db = home / "lessonloop.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT kind, summary FROM knowledge ORDER BY id").fetchall()


@pytest.fixture
def user_home(home):
    return home.parent / "user-home"


def test_a_session_yields_lessons_not_trigger_phrases_and_no_secret(home, user_home, cli):
    cli("memory", "consent", "yes")
    secret = fresh_secrets()
    output = Session(home, "sess-one", secret).play()
    stored = memories(home)
    kinds = {kind for kind, _ in stored}
    summaries = [summary for _, summary in stored]
    assert ("preference", "Use pnpm instead of npm for this repo") in stored
    assert ("decision", "Use vitest instead of jest") in stored
    assert "pattern" in kinds and any("npm test" in s and "package.json" in s for s in summaries)
    with sqlite3.connect(home / "lessonloop.db") as conn:
        [content] = conn.execute("SELECT content FROM knowledge WHERE kind = 'pattern'").fetchone()
    assert "Fixed by: " in content and "package.json" in content.split("Fixed by: ")[1], content
    assert not any(s.lower().startswith(("i prefer", "from now on")) for s in summaries)
    assert output["systemMessage"].startswith(f"Stored {len(stored)} new memories: ")
    assert [s for _, s in memories(user_home)] == ["Use pnpm instead of npm for this repo"]
    blob = everything_under(home, user_home)
    for value in secret.values():
        assert value.encode() not in blob and value[:14].encode() not in blob
    signals = (home / "sessions" / "sess-one" / "signals.jsonl").read_text()
    assert "ValidationError" not in signals, "a file read that mentions Error is no signal"


def test_a_second_identical_session_adds_no_duplicate(home, cli):
    cli("memory", "consent", "yes")
    secret = fresh_secrets()
    Session(home, "first", secret).play()
    before = memories(home)
    output = Session(home, "second", secret).play()
    assert memories(home) == before
    assert "systemMessage" not in output, "nothing new: nothing to say"
    seen = cli("memory", "list", "--scope", "project", "--json").json()
    assert all(m["seen"] >= 2 for m in seen)


def test_memorizing_the_same_session_twice_adds_nothing(home, cli):
    cli("memory", "consent", "yes")
    session = Session(home, "twice", fresh_secrets())
    session.play()
    count = len(memories(home))
    again = session.hook("pre-compact", trigger="auto")
    assert "systemMessage" not in again and len(memories(home)) == count
    cli("memorize", "--session-id", "twice")
    assert len(memories(home)) == count


@pytest.mark.parametrize("answer", [None, "ask"])
def test_without_consent_nothing_is_synthesized_and_the_user_is_told_once(home, cli, answer):
    if answer:
        cli("memory", "consent", answer)
    session = Session(home, "pending", fresh_secrets())
    start = session.hook("session-start", source="startup")
    assert "lessonloop memory consent yes" in start["systemMessage"]
    end = session.play()
    assert "systemMessage" not in end, "told once per session, at its start"
    assert memories(home) == []


def test_consent_false_means_nothing_at_all(home, cli):
    cli("memory", "consent", "no")
    output = Session(home, "refused", fresh_secrets()).play()
    assert output == {} and memories(home) == []
    assert not (home / "sessions" / "refused" / "signals.jsonl").exists()
    assert not (home / "sessions" / "refused" / "feedback.jsonl").exists()


def test_a_model_route_is_called_only_with_consent_and_never_sees_a_secret(home, cli):
    secret = fresh_secrets()
    answer = {"memories": [{"type": "preference", "summary": "Use pnpm for every script",
                            "why": "stated by the user", "scope": "project"}]}
    with FakeServer(lambda received: Reply(body=openai_completion(json.dumps(answer)))) as server:
        env = {"LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
               "LESSONLOOP_BASE_URL": server.base_url + "/v1"}
        Session(home, "no-consent", secret, env).play()
        assert [r for r in server.received if r.method == "POST"] == []
        cli("memory", "consent", "yes")
        Session(home, "with-consent", secret, env).play()
        posts = [r for r in server.received if r.method == "POST"]
    assert len(posts) == 1
    sent = json.dumps(posts[0].body)
    for value in secret.values():
        assert value not in sent and value[:14] not in sent
    assert ("preference", "Use pnpm for every script") in memories(home)


def test_a_broken_model_answer_falls_back_to_the_deterministic_memories(home, cli):
    cli("memory", "consent", "yes")
    with FakeServer(lambda received: Reply(body=openai_completion("I cannot do JSON today"))) as server:
        env = {"LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
               "LESSONLOOP_BASE_URL": server.base_url + "/v1", "LESSONLOOP_MAX_RETRIES": "0"}
        output = Session(home, "broken", fresh_secrets(), env).play()
        assert [r for r in server.received if r.method == "POST"], "the model was asked"
    assert ("decision", "Use vitest instead of jest") in memories(home)
    assert output["systemMessage"].startswith("Stored")


def test_a_model_that_echoes_a_secret_is_reported_as_stored_redacted(home, cli):
    cli("memory", "consent", "yes")
    token = "ghp_" + secrets.token_hex(18)
    answer = {"memories": [{"type": "decision", "summary": f"Deploy with {token}"}]}
    with FakeServer(lambda received: Reply(body=openai_completion(json.dumps(answer)))) as server:
        env = {"LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
               "LESSONLOOP_BASE_URL": server.base_url + "/v1"}
        output = Session(home, "echo", fresh_secrets(), env).play()
    assert output["systemMessage"] == "Stored 1 new memory: Deploy with [REDACTED:github-token]"
    assert token.encode() not in everything_under(home)


def test_a_slow_model_gets_one_short_attempt_and_the_deterministic_memories_stand(home, cli, monkeypatch):
    from lessonloop.memory import memorize

    session = Session(home, "slow", fresh_secrets())
    session.play()  # no consent yet: nothing is memorized
    cli("memory", "consent", "yes")
    monkeypatch.setattr(memorize, "MODEL_SECONDS", 1.0)
    with FakeServer(lambda received: Reply(body=openai_completion("{}"), delay=6)) as server:
        env = {"LESSONLOOP_AUTOMEM_MODEL": "openai:test-model", "LESSONLOOP_MAX_RETRIES": "4",
               "LESSONLOOP_BASE_URL": server.base_url + "/v1"}
        import time

        started = time.monotonic()
        result = memorize.memorize("slow", home, str(session.transcript), environ=env)
        elapsed = time.monotonic() - started
        posts = [r for r in server.received if r.method == "POST"]
    assert result.model.startswith("not used") and elapsed < 5, (result.model, elapsed)
    assert len(posts) == 1, "one attempt, whatever LESSONLOOP_MAX_RETRIES says"
    assert ("decision", "Use vitest instead of jest") in memories(home)


def test_session_end_hooks_racing_on_one_session_store_each_memory_once(home, cli):
    from concurrent.futures import ThreadPoolExecutor

    session = Session(home, "racing", fresh_secrets())
    session.play()
    cli("memory", "consent", "yes")
    with ThreadPoolExecutor(8) as pool:
        outputs = list(pool.map(lambda _: session.hook("session-end", reason="other"), range(8)))
    assert sum(bool(o.get("systemMessage")) for o in outputs) == 1, "one of them stored them"
    with sqlite3.connect(home / "lessonloop.db") as conn:
        seen = [row[0] for row in conn.execute("SELECT seen FROM knowledge")]
    assert seen and set(seen) == {1}


def test_one_error_fixed_the_same_way_again_and_again_is_one_memory(home, cli):
    cli("memory", "consent", "yes")
    session = Session(home, "again-and-again", fresh_secrets())
    session.hook("session-start", source="startup")
    for n in range(4):
        session.tool("Bash", {"command": "npm test"},
                     {"stdout": "", "stderr": f"Error: Cannot find module '/tmp/build-{n}/a.js'\n",
                      "interrupted": False, "isImage": False}, is_error=True)
        session.tool("Bash", {"command": "npm install"},
                     {"stdout": "added 3 packages\n", "stderr": "", "interrupted": False,
                      "isImage": False})
        session.tool("Bash", {"command": "npm test"},
                     {"stdout": "All 12 tests passed\n", "stderr": "", "interrupted": False,
                      "isImage": False})
    session.hook("session-end", reason="other")
    stored = [summary for kind, summary in memories(home) if kind in ("pattern", "observation")]
    assert len(stored) == 1 and "npm install" in stored[0], stored
    with sqlite3.connect(home / "lessonloop.db") as conn:
        seen = conn.execute("SELECT seen FROM knowledge WHERE kind = 'pattern'").fetchone()[0]
    assert seen == 1, "one session proposes the lesson once, however often the error came back"
