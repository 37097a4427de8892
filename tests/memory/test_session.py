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

from lessonloop.memory import candidate, model_wording

from ..conftest import settle_captures, subprocess_env
from ..providers.fake_servers import (
    FakeServer,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_completion,
)


def fresh_secrets() -> dict:
    return {
        "github": "ghp_" + secrets.token_hex(18),
        "anthropic": "sk-ant-api03-" + secrets.token_urlsafe(40),
        "aws": "wJalrXUtnFEMI/" + secrets.token_hex(13),
        "password": "pw-" + secrets.token_hex(8),
    }


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
        self.lines.append(
            {
                "type": kind,
                "uuid": uuid,
                "parentUuid": self.parent,
                "sessionId": self.id,
                "timestamp": "2026-11-30T10:00:00.000Z",
                "cwd": str(self.home.parent),
                "isSidechain": False,
                "version": "2.0.0",
                "message": message,
                **extra,
            }
        )
        self.parent = uuid
        self.transcript.write_text("".join(json.dumps(line) + "\n" for line in self.lines))

    def hook(self, event: str, **payload) -> dict:
        body = {
            "session_id": self.id,
            "transcript_path": str(self.transcript),
            "cwd": str(self.home.parent),
            "hook_event_name": event,
            **payload,
        }
        done = subprocess.run(
            [sys.executable, "-m", "lessonloop", "hook", event],
            input=json.dumps(body).encode(),
            capture_output=True,
            env=self.env,
            timeout=60,
        )
        settle_captures(self.home)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else {}

    def prompt(self, text: str) -> dict:
        self._event("user", {"role": "user", "content": text})
        return self.hook("user-prompt-submit", prompt=text)

    def tool(
        self,
        name: str,
        tool_input: dict,
        response,
        is_error: bool = False,
        result_text: str | None = None,
    ) -> dict:
        call_id = f"toolu_{len(self.lines)}"
        self._event(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}],
            },
        )
        text = (
            result_text
            if result_text is not None
            else (
                response
                if isinstance(response, str)
                else (response.get("stdout", "") + response.get("stderr", ""))
            )
        )
        self._event(
            "user",
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": text,
                        "is_error": is_error,
                    }
                ],
            },
            toolUseResult=response,
        )
        if is_error:  # as Claude Code sends a failed call: to PostToolUseFailure, with its text
            return self.hook(
                "post-tool-use-failure",
                tool_name=name,
                tool_input=tool_input,
                error=text,
                is_interrupt=False,
                tool_use_id=call_id,
            )
        return self.hook(
            "post-tool-use",
            tool_name=name,
            tool_input=tool_input,
            tool_response=response,
            tool_use_id=call_id,
        )

    def play(self, more=None) -> dict:
        """The session: two stated lessons, a recurring error and its fix, a harmless read;
        ``more(self)`` plays more events before the session ends."""
        s = self.secret
        self.hook("session-start", source="startup")
        self.prompt(f"I prefer pnpm over npm for this repo. By the way my token is {s['github']}")
        self.tool(
            "Read",
            {"file_path": "/work/app/errors.py"},
            {
                "type": "text",
                "file": {
                    "filePath": "/work/app/errors.py",
                    "content": f"class ValidationError(Exception):\n    pass\nKEY = '{s['anthropic']}'\n",
                },
            },
            result_text="class ValidationError(Exception): pass",
        )
        for path in ("/work/app/src/a.js", "/tmp/build-1/src/b.js"):
            self.tool(
                "Bash",
                {"command": "npm test"},
                {
                    "stdout": "",
                    "stderr": f"Error: Cannot find module '{path}'\n"
                    f"AWS_SECRET_ACCESS_KEY={s['aws']}\n",
                    "interrupted": False,
                    "isImage": False,
                },
                is_error=True,
            )
        self.tool(
            "Edit",
            {
                "file_path": "/work/app/package.json",
                "old_string": '"main": "a.js"',
                "new_string": '"main": "src/a.js"',
            },
            {"filePath": "/work/app/package.json", "structuredPatch": []},
            result_text="The file /work/app/package.json has been updated.",
        )
        self.tool(
            "Bash",
            {"command": "npm test"},
            {
                "stdout": "All 12 tests passed\n",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            },
        )
        self.prompt(f"From now on we use vitest instead of jest. The db password={s['password']}")
        if more is not None:
            more(self)
        self.hook("stop", stop_hook_active=False)
        return self.hook("session-end", reason="prompt_input_exit")


def everything_under(*roots: Path) -> bytes:
    return b"".join(
        p.read_bytes() for root in roots if root.exists() for p in root.rglob("*") if p.is_file()
    )


def memories(home: Path) -> list[tuple[str, str]]:
    db = home / "lessonloop.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT kind, summary FROM knowledge ORDER BY id").fetchall()


# the played session's second lesson ("Use pnpm instead of npm for this repo"), worded by a model
# as memorize's guards allow (memory/rewrite.py)
REWORDED = "Use pnpm, not npm, for this repo."
MEMORY_ANSWER = {"memories": [{"lesson": 2, "summary": REWORDED}]}


# a model time limit whose worst case (two requests) fits the session-end hook's 60 s: memorize
# runs inside the hook, as these tests read its result when the hook returns
IN_HOOK = {"LESSONLOOP_AUTOMEM_TIMEOUT": "20"}
# the wording request alone: the model's own lessons (on by default) are a second request, tested
# in test_model_lessons.py
WORDING_ONLY = {"LESSONLOOP_AUTOMEM_PROPOSE": "off"}


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


def secrets_in_lessons(session: Session) -> None:
    """Secrets inside the sentences that become lessons and the error lines that become
    pattern keys: by their shape, after their key (the db password), and before it (the
    "bare" one, whose key only a command that succeeded shows, later)."""
    s = session.secret
    session.prompt(f"Always run the migrations with {s['password']} as the db password.")
    session.prompt(
        f"Always push with the token {s['github']} to the mirror. From now on log in "
        f"to staging as deploy-{s['bare']}."
    )
    quiet = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
    for _ in range(2):
        error = (
            f"Error: login rejected for user deploy-{s['bare']} at db:5432 (key {s['anthropic']})\n"
        )
        session.tool(
            "Bash",
            {"command": "npm run deploy"},
            {**quiet, "stderr": error},
            is_error=True,
            result_text=f"Exit code 1\n{error}",
        )
    session.tool(
        "Edit",
        {
            "file_path": "/work/app/config/deploy.json",
            "old_string": '"db"',
            "new_string": '"db.internal"',
        },
        {"filePath": "/work/app/config/deploy.json"},
        result_text="The file has been updated.",
    )
    session.tool("Bash", {"command": "npm run deploy"}, {**quiet, "stdout": "deployed\n"})
    session.tool(
        "Bash",
        {"command": f"export DEPLOY_PASSWORD='{s['bare']}' && ./bin/smoke"},
        {**quiet, "stdout": "ok\n"},
    )


def test_secrets_inside_lesson_sentences_and_error_lines_never_reach_disk(home, user_home, cli):
    cli("memory", "consent", "yes")
    # and one no rule finds by its shape: only a key, later in the session, says it is a secret
    secret = {**fresh_secrets(), "bare": f"Zq{secrets.token_hex(3)}-{secrets.token_hex(6)}"}
    Session(home, "sess-lessons", secret).play(more=secrets_in_lessons)
    stored = memories(home)
    summaries = [summary for _, summary in stored]
    assert ("preference", "Use pnpm instead of npm for this repo") in stored
    assert {
        "Run the migrations with [REDACTED:password] as the db password",
        "Push with the token [REDACTED:github-token] to the mirror",
        "Log in to staging as deploy-[REDACTED:password]",
    } <= set(summaries), summaries
    [deploy] = [s for s in summaries if "login rejected" in s]
    assert "login rejected for user deploy-[REDACTED:password]" in deploy, deploy
    blob = everything_under(home, user_home)
    for value in secret.values():
        assert value.encode() not in blob and value[:14].encode() not in blob, value[:6]


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


def test_a_session_replayed_under_its_own_id_adds_and_counts_nothing(home, cli):
    """The hooks append its captures a second time (an error seen once, an observation, now
    looks seen twice, a pattern): its lessons stay the same memories, seen once."""
    cli("memory", "consent", "yes")
    quiet = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}

    def play() -> dict:
        session = Session(home, "replayed", fresh_secrets())
        session.hook("session-start", source="startup")
        session.tool(
            "Bash",
            {"command": "make generate"},
            {**quiet, "stderr": "make: sqlc: No such file or directory\n"},
            is_error=True,
        )
        session.tool(
            "Bash", {"command": "go install github.com/sqlc-dev/sqlc/cmd/sqlc@v1.26.0"}, quiet
        )
        session.tool(
            "Bash", {"command": "make generate"}, {**quiet, "stdout": "generated 4 files\n"}
        )
        session.prompt("From now on we use vitest instead of jest.")
        return session.hook("session-end", reason="prompt_input_exit")

    play()
    before = cli("memory", "list", "--scope", "project", "--json").json()
    assert {m["type"] for m in before} >= {"observation", "decision"}, before
    output = play()
    after = cli("memory", "list", "--scope", "project", "--json").json()
    # (in the same order or not: the replay was given them, and a memory used lately ranks
    # higher among equals)
    assert sorted((m["id"], m["summary"], m["seen"]) for m in after) == sorted(
        (m["id"], m["summary"], m["seen"]) for m in before
    )
    assert "systemMessage" not in output


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
    with FakeServer(
        lambda received: Reply(body=openai_completion(json.dumps(MEMORY_ANSWER)))
    ) as server:
        env = {
            "LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
            **WORDING_ONLY,
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
            **IN_HOOK,
        }
        Session(home, "no-consent", secret, env).play()
        assert [r for r in server.received if r.method == "POST"] == []
        cli("memory", "consent", "yes")
        Session(home, "with-consent", secret, env).play()
        posts = [r for r in server.received if r.method == "POST"]
    assert len(posts) == 1
    sent = json.dumps(posts[0].body)
    for value in secret.values():
        assert value not in sent and value[:14] not in sent
    assert ("preference", REWORDED) in memories(home)


def test_a_broken_model_answer_falls_back_to_the_deterministic_memories(home, cli):
    cli("memory", "consent", "yes")
    with FakeServer(
        lambda received: Reply(body=openai_completion("I cannot do JSON today"))
    ) as server:
        env = {
            "LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
            **WORDING_ONLY,
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
            "LESSONLOOP_MAX_RETRIES": "0",
            **IN_HOOK,
        }
        output = Session(home, "broken", fresh_secrets(), env).play()
        assert [r for r in server.received if r.method == "POST"], "the model was asked"
    assert ("decision", "Use vitest instead of jest") in memories(home)
    assert output["systemMessage"].startswith("Stored")


def test_a_model_that_echoes_a_secret_has_its_wording_refused_and_recorded_redacted(home, cli):
    cli("memory", "consent", "yes")
    token = "ghp_" + secrets.token_hex(18)
    answer = {"memories": [{"lesson": 2, "summary": f"Use pnpm, not npm, for this repo: {token}"}]}
    with FakeServer(lambda received: Reply(body=openai_completion(json.dumps(answer)))) as server:
        env = {
            "LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
            **WORDING_ONLY,
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
            **IN_HOOK,
        }
        output = Session(home, "echo", fresh_secrets(), env).play()
    assert "Use pnpm instead of npm for this repo" in output["systemMessage"]
    assert ("preference", "Use pnpm instead of npm for this repo") in memories(home)
    [record] = [
        json.loads(line)
        for line in (home / "sessions" / "echo" / "model.jsonl").read_text().splitlines()
    ]
    assert record["rejected"] == {"adds": 1}
    assert "[REDACTED:github-token]" in record["refused"][0]["wording"]
    assert token.encode() not in everything_under(home)


def test_a_slow_model_gets_one_short_attempt_and_the_deterministic_memories_stand(home, cli):
    from lessonloop.memory import memorize

    session = Session(home, "slow", fresh_secrets())
    session.play()  # no consent yet: nothing is memorized
    cli("memory", "consent", "yes")
    with FakeServer(lambda received: Reply(body=openai_completion("{}"), delay=6)) as server:
        env = {
            "LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
            "LESSONLOOP_MAX_RETRIES": "4",
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
            "LESSONLOOP_AUTOMEM_TIMEOUT": "1",
        }
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
        session.tool(
            "Bash",
            {"command": "npm test"},
            {
                "stdout": "",
                "stderr": f"Error: Cannot find module '/tmp/build-{n}/a.js'\n",
                "interrupted": False,
                "isImage": False,
            },
            is_error=True,
        )
        session.tool(
            "Bash",
            {"command": "npm install"},
            {"stdout": "added 3 packages\n", "stderr": "", "interrupted": False, "isImage": False},
        )
        session.tool(
            "Bash",
            {"command": "npm test"},
            {
                "stdout": "All 12 tests passed\n",
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            },
        )
    session.hook("session-end", reason="other")
    stored = [summary for kind, summary in memories(home) if kind in ("pattern", "observation")]
    assert len(stored) == 1 and "npm install" in stored[0], stored
    with sqlite3.connect(home / "lessonloop.db") as conn:
        seen = conn.execute("SELECT seen FROM knowledge WHERE kind = 'pattern'").fetchone()[0]
    assert seen == 1, "one session proposes the lesson once, however often the error came back"


# -------------------------------------------------------------------------------------------
# model routes: LESSONLOOP_AUTOMEM_MODEL


def posts(server: FakeServer) -> list:
    return [r for r in server.received if r.method == "POST"]


def captured_session(home: Path, session_id: str, secret: dict) -> Session:
    """A played session whose captures wait for consent (none was given while it ran)."""
    session = Session(home, session_id, secret)
    session.play()
    assert memories(home) == [], "no consent yet: nothing memorized"
    return session


def sent_bytes(received) -> bytes:
    """Everything a request carried but its credentials: path, body and the other headers."""
    headers = {k: v for k, v in received.headers.items() if k not in ("authorization", "x-api-key")}
    return received.path.encode() + received.raw + json.dumps(headers).encode()


def assert_no_secret(blob: bytes, secret: dict) -> None:
    for value in secret.values():
        assert value.encode() not in blob and value[:14].encode() not in blob, value


def test_model_routes_resolve_as_documented():
    from lessonloop.config import Route
    from lessonloop.errors import UsageError
    from lessonloop.memory.memorize import model_route

    elsewhere = "http://127.0.0.1:9/v1/"
    for value in (None, "", "off", "  off  "):
        environ = {} if value is None else {"LESSONLOOP_AUTOMEM_MODEL": value}
        assert model_route({**environ, "LESSONLOOP_BASE_URL": elsewhere}) is None, value
    assert model_route({"LESSONLOOP_AUTOMEM_MODEL": "claude-haiku-4-5"}) == Route(
        "anthropic", "claude-haiku-4-5", "https://api.anthropic.com"
    )
    assert model_route({"LESSONLOOP_AUTOMEM_MODEL": "anthropic:claude-sonnet-4-5"}) == Route(
        "anthropic", "claude-sonnet-4-5", "https://api.anthropic.com"
    )
    assert model_route({"LESSONLOOP_AUTOMEM_MODEL": "ollama:llama3.2"}) == Route(
        "ollama", "llama3.2", "http://localhost:11434/v1"
    )
    assert model_route({"LESSONLOOP_AUTOMEM_MODEL": "openai:gpt-4o-mini"}) == Route(
        "openai", "gpt-4o-mini", "https://api.openai.com/v1"
    )
    # every provider `run` can reach, from the one registry: the local servers' presets too
    assert model_route({"LESSONLOOP_AUTOMEM_MODEL": "vllm:qwen2.5-7b"}) == Route(
        "vllm", "qwen2.5-7b", "http://localhost:8000/v1"
    )
    assert model_route({"LESSONLOOP_AUTOMEM_MODEL": "lmstudio:qwen"}).base_url.endswith(":1234/v1")
    # LESSONLOOP_BASE_URL belongs to the openai route only: it never diverts the others
    assert (
        model_route(
            {"LESSONLOOP_AUTOMEM_MODEL": "openai:gpt-4o-mini", "LESSONLOOP_BASE_URL": elsewhere}
        ).base_url
        == "http://127.0.0.1:9/v1"
    )
    for value in ("anthropic:claude-haiku-4-5", "claude-haiku-4-5", "ollama:llama3.2"):
        route = model_route({"LESSONLOOP_AUTOMEM_MODEL": value, "LESSONLOOP_BASE_URL": elsewhere})
        assert "127.0.0.1:9" not in route.base_url, value
    for bad in (
        "gemini:flash",
        "ollama:",
        "anthropic:",
        "claude",
        "haiku",
        "local:x",
        "scripted:x",
    ):
        with pytest.raises(UsageError, match="LESSONLOOP_AUTOMEM_MODEL"):
            model_route({"LESSONLOOP_AUTOMEM_MODEL": bad})


def test_each_model_route_follows_its_providers_own_endpoint_variable():
    """A gateway set up for Claude Code (ANTHROPIC_BASE_URL) or the SDKs is where the route
    goes; lessonloop's own LESSONLOOP_BASE_URL still wins for openai, and no provider's variable
    diverts another's route."""
    from lessonloop.memory.memorize import model_route

    everything = {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:7/",
        "OPENAI_BASE_URL": "http://127.0.0.1:8/v1",
        "OLLAMA_HOST": "127.0.0.1:9",
    }
    route = lambda value, **env: model_route({"LESSONLOOP_AUTOMEM_MODEL": value, **env})  # noqa: E731
    assert route("claude-haiku-4-5", **everything).base_url == "http://127.0.0.1:7"
    assert (
        route(
            "anthropic:claude-haiku-4-5", ANTHROPIC_BASE_URL="https://gw.example.com/anthropic/v1"
        ).base_url
        == "https://gw.example.com/anthropic"
    )  # (the SDK adds /v1/messages itself)
    assert route("openai:gpt-4o-mini", **everything).base_url == "http://127.0.0.1:8/v1"
    assert (
        route(
            "openai:gpt-4o-mini", **everything, LESSONLOOP_BASE_URL="http://127.0.0.1:6/v1"
        ).base_url
        == "http://127.0.0.1:6/v1"
    )
    assert route("ollama:llama3.2", **everything).base_url == "http://127.0.0.1:9/v1"
    for host, url in (
        ("gpu-box", "http://gpu-box:11434/v1"),
        ("http://gpu-box", "http://gpu-box:80/v1"),
        ("https://ollama.example.com/", "https://ollama.example.com:443/v1"),
        ("0.0.0.0", "http://127.0.0.1:11434/v1"),
        ('"0.0.0.0:8080"', "http://127.0.0.1:8080/v1"),
        ("[::1]:11434", "http://[::1]:11434/v1"),
        ("http://box:1/v1", "http://box:1/v1"),
    ):
        assert route("ollama:llama3.2", OLLAMA_HOST=host).base_url == url, (
            host
        )  # (as ollama reads it)
    for value, own in (
        ("claude-haiku-4-5", "ANTHROPIC_BASE_URL"),
        ("openai:gpt-4o-mini", "OPENAI_BASE_URL"),
        ("ollama:llama3.2", "OLLAMA_HOST"),
    ):
        others = {k: v for k, v in everything.items() if k != own}
        assert "127.0.0.1" not in route(value, **others).base_url, value


@pytest.mark.parametrize("value", ["off", ""])
def test_model_off_never_contacts_a_model_and_stores_the_deterministic_memories(home, cli, value):
    cli("memory", "consent", "yes")
    secret = fresh_secrets()
    with FakeServer(
        lambda received: Reply(body=openai_completion(json.dumps(MEMORY_ANSWER)))
    ) as server:
        env = {
            "LESSONLOOP_AUTOMEM_MODEL": value,
            "LESSONLOOP_BASE_URL": server.base_url + "/v1",
            "OPENAI_API_KEY": "sk-proj-" + secrets.token_hex(20),
        }
        output = Session(home, f"off-{value or 'empty'}", secret, env).play()
        assert server.received == [], "no request of any kind reached the endpoint"
    stored = memories(home)
    assert ("preference", "Use pnpm instead of npm for this repo") in stored
    assert ("decision", "Use vitest instead of jest") in stored
    assert ("preference", REWORDED) not in stored
    assert output["systemMessage"].startswith(f"Stored {len(stored)} new memories: ")
    with sqlite3.connect(home / "lessonloop.db") as conn:
        calls = conn.execute("SELECT COUNT(*) FROM provider_calls").fetchone()[0]
    assert calls == 0, "no model call recorded"


def test_model_off_in_process_never_builds_a_provider(home, cli, monkeypatch):
    from lessonloop import config
    from lessonloop.memory import memorize
    from lessonloop.providers import registry

    session = captured_session(home, "off-in-process", fresh_secrets())
    cli("memory", "consent", "yes")

    def no_provider(*args, **kwargs):
        raise AssertionError("a provider was built with LESSONLOOP_AUTOMEM_MODEL=off")

    monkeypatch.setattr(registry, "build", no_provider)
    with FakeServer() as server:
        for kind in ("anthropic", "openai", "ollama"):
            monkeypatch.setitem(config.DEFAULT_BASE_URLS, kind, server.base_url + "/v1")
        result = memorize.memorize(
            session.id,
            home,
            environ={
                "LESSONLOOP_AUTOMEM_MODEL": "off",
                "LESSONLOOP_BASE_URL": server.base_url + "/v1",
            },
        )
        assert server.received == []
    assert result.model is None and result.skipped is None
    assert "Use vitest instead of jest" in result.stored
    assert "Use pnpm instead of npm for this repo" in result.stored


def test_the_session_end_hook_reaches_the_gateway_anthropic_base_url_names(home, cli):
    """As Claude Code users route Anthropic calls through a gateway: the real hook process, with
    consent, asks the model there once, and no secret of the session travels."""
    cli("memory", "consent", "yes")
    secret = fresh_secrets()
    reply = lambda received: Reply(body=anthropic_message(tool_input=MEMORY_ANSWER))  # noqa: E731
    with FakeServer(reply) as server:
        env = {
            "LESSONLOOP_AUTOMEM_MODEL": "claude-haiku-4-5",
            **WORDING_ONLY,
            "ANTHROPIC_BASE_URL": server.base_url,
            **IN_HOOK,
        }
        output = Session(home, "gateway", secret, env).play()
        calls = posts(server)
    assert len(calls) == 1 and calls[0].path == "/v1/messages"
    assert calls[0].body["model"] == "claude-haiku-4-5"
    assert_no_secret(sent_bytes(calls[0]), secret)
    assert ("preference", REWORDED) in memories(home)
    assert REWORDED in output["systemMessage"]


@pytest.mark.parametrize(
    "value, model",
    [
        ("anthropic:claude-test-model", "claude-test-model"),
        ("claude-haiku-4-5", "claude-haiku-4-5"),
    ],
)
def test_an_anthropic_route_is_asked_only_with_consent_and_never_sees_a_secret(
    home, cli, monkeypatch, value, model
):
    from lessonloop import config
    from lessonloop.memory import memorize

    secret = fresh_secrets()
    session = captured_session(home, "anthropic-route", secret)
    # a key of another provider must not travel to Anthropic either
    openai_key = "sk-proj-" + secrets.token_hex(24)
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)
    reply = lambda received: Reply(body=anthropic_message(tool_input=MEMORY_ANSWER))  # noqa: E731
    with FakeServer(reply) as server, FakeServer() as openai_server:
        # the route's endpoint is config.DEFAULT_BASE_URLS["anthropic"]: point it here
        monkeypatch.setitem(config.DEFAULT_BASE_URLS, "anthropic", server.base_url)
        environ = {
            "LESSONLOOP_AUTOMEM_MODEL": value,
            **WORDING_ONLY,
            "LESSONLOOP_BASE_URL": openai_server.base_url + "/v1",
        }
        for answer in (None, "ask", "no"):
            if answer:
                cli("memory", "consent", answer)
            skipped = memorize.memorize(session.id, home, environ=environ)
            assert skipped.skipped and skipped.stored == [] and skipped.model is None
            assert server.received == [], f"consent {answer or 'missing'}: no model call"
        cli("memory", "consent", "yes")
        result = memorize.memorize(session.id, home, environ=environ)
        calls = posts(server)
        assert openai_server.received == []
    assert result.model == "used", result.model
    assert len(calls) == 1 and calls[0].path == "/v1/messages"
    body = calls[0].body
    assert body["model"] == model
    assert body["tool_choice"] == {"type": "tool", "name": "respond"}
    # the memory schema, with no more memories than the three lessons it is sent
    assert body["tools"][0]["input_schema"] == model_wording.answer_schema(3)
    [message] = body["messages"]
    extracts = message["content"] if isinstance(message["content"], str) else calls[0].text
    assert "Use vitest instead of jest" in extracts, "the model sees the candidates"
    assert len(extracts) <= model_wording.EXTRACT_CHARS
    assert_no_secret(sent_bytes(calls[0]), secret)
    assert openai_key.encode() not in json.dumps(calls[0].headers).encode() + calls[0].raw
    assert REWORDED in result.stored and len(result.stored) == 3, result.stored
    assert ("preference", REWORDED) in memories(home)
    assert_no_secret(everything_under(home, home.parent / "user-home"), secret)


class TranscriptOnly(Session):
    """The same session with no capture hooks: memorize reads the raw transcript alone."""

    def hook(self, event: str, **payload) -> dict:
        return {}


def test_a_model_route_never_sees_a_secret_from_the_raw_transcript(home, cli, monkeypatch):
    from lessonloop import config
    from lessonloop.memory import memorize

    secret = fresh_secrets()
    session = TranscriptOnly(home, "raw-transcript", secret)
    session.play()
    # secrets inside the very sentences and error lines that become candidates
    session.prompt(f"From now on we deploy with the CI token {secret['github']} only.")
    for _ in range(2):
        session.tool(
            "Bash",
            {"command": "git push"},
            {
                "stdout": "",
                "stderr": "fatal: Authentication failed for "
                f"'https://deploy:{secret['password']}@git.example.com/app.git' "
                f"(key {secret['anthropic']})\n",
                "interrupted": False,
                "isImage": False,
            },
            is_error=True,
        )
    session.tool(
        "Bash",
        {"command": "git remote set-url origin git@git.example.com:app.git"},
        {"stdout": "", "stderr": "", "interrupted": False, "isImage": False},
    )
    session.tool(
        "Bash",
        {"command": "git push"},
        {"stdout": "Everything up-to-date\n", "stderr": "", "interrupted": False, "isImage": False},
    )
    raw = session.transcript.read_text()
    assert all(value in raw for value in secret.values()), "the transcript holds them all"
    cli("memory", "consent", "yes")
    reply = lambda received: Reply(body=anthropic_message(tool_input=MEMORY_ANSWER))  # noqa: E731
    with FakeServer(reply) as server:
        monkeypatch.setitem(config.DEFAULT_BASE_URLS, "anthropic", server.base_url)
        result = memorize.memorize(
            session.id,
            home,
            transcript=str(session.transcript),
            environ={"LESSONLOOP_AUTOMEM_MODEL": "claude-haiku-4-5", **WORDING_ONLY},
        )
        [call] = posts(server)
    assert result.model == "used", result.model
    assert "Use vitest instead of jest" in call.text
    assert "Authentication failed" in call.text and "CI token" in call.text
    assert "[REDACTED:" in call.text
    assert_no_secret(sent_bytes(call), secret)
    assert_no_secret(everything_under(home, home.parent / "user-home"), secret)


def test_what_a_model_may_see_is_redacted_and_capped_whatever_the_candidates_hold():

    secret = fresh_secrets()
    leaky = candidate.Candidate(
        kind="decision",
        summary=f"Deploy with {secret['github']}",
        content=f"aws_secret_access_key = {secret['aws']}",
        why=f"password={secret['password']}",
    )
    wordy = candidate.Candidate(
        kind="observation", summary="x" * 300, content=f"token {secret['github']} " + "y" * 5000
    )
    extracts = model_wording.extracts([leaky] * 5 + [wordy] * 35)
    assert len(extracts) <= model_wording.EXTRACT_CHARS
    assert "[REDACTED:" in extracts and "Deploy with" in extracts
    assert_no_secret(extracts.encode(), secret)


def test_an_anthropic_route_without_its_sdk_falls_back_with_an_install_hint(home, cli, monkeypatch):
    import sys as system

    from lessonloop import config
    from lessonloop.memory import memorize

    session = captured_session(home, "anthropic-no-sdk", fresh_secrets())
    cli("memory", "consent", "yes")
    monkeypatch.setitem(system.modules, "anthropic", None)  # import fails as if not installed
    with FakeServer() as server:
        monkeypatch.setitem(config.DEFAULT_BASE_URLS, "anthropic", server.base_url)
        result = memorize.memorize(
            session.id, home, environ={"LESSONLOOP_AUTOMEM_MODEL": "claude-haiku-4-5"}
        )
        assert server.received == []
    assert (
        result.model.startswith("not used: UsageError")
        and "pip install 'lessonloop[anthropic]'" in result.model
    ), result.model
    assert "Use vitest instead of jest" in result.stored
    assert ("decision", "Use vitest instead of jest") in memories(home)


def test_an_anthropic_route_without_a_key_falls_back_before_connecting(home, cli, monkeypatch):
    import anthropic

    from lessonloop.memory import memorize

    session = captured_session(home, "anthropic-no-key", fresh_secrets())
    cli("memory", "consent", "yes")
    clients = []
    monkeypatch.setattr(anthropic, "Anthropic", lambda *a, **k: clients.append(k))
    result = memorize.memorize(
        session.id, home, environ={"LESSONLOOP_AUTOMEM_MODEL": "anthropic:claude-haiku-4-5"}
    )
    assert clients == [], "no client for https://api.anthropic.com without a key"
    assert (
        result.model.startswith("not used: ProviderError") and "ANTHROPIC_API_KEY" in result.model
    )
    assert "Use vitest instead of jest" in result.stored


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body=anthropic_message("no JSON here, sorry")),
        Reply(
            body=anthropic_message(tool_input={"memories": [{"type": "rumour", "summary": "x"}]})
        ),
        anthropic_error(529, "overloaded"),
    ],
    ids=["prose", "off-schema", "overloaded"],
)
def test_a_broken_anthropic_answer_falls_back_to_the_deterministic_memories(
    home, cli, monkeypatch, reply
):
    from lessonloop import config
    from lessonloop.memory import memorize

    session = captured_session(home, "anthropic-broken", fresh_secrets())
    cli("memory", "consent", "yes")
    with FakeServer(lambda received: reply) as server:
        monkeypatch.setitem(config.DEFAULT_BASE_URLS, "anthropic", server.base_url)
        result = memorize.memorize(
            session.id, home, environ={"LESSONLOOP_AUTOMEM_MODEL": "claude-haiku-4-5"}
        )
        assert posts(server), "the model was asked"
    assert result.model.startswith("not used"), result.model
    stored = memories(home)
    assert ("decision", "Use vitest instead of jest") in stored
    assert ("preference", "Use pnpm instead of npm for this repo") in stored
    assert not any(kind == "rumour" or summary == "x" for kind, summary in stored)


def test_an_ollama_route_goes_to_the_local_ollama_endpoint_without_any_key(home, cli, monkeypatch):
    from lessonloop import config
    from lessonloop.memory import memorize

    secret = fresh_secrets()
    session = captured_session(home, "ollama-route", secret)
    openai_key = "sk-proj-" + secrets.token_hex(24)
    monkeypatch.setenv("OPENAI_API_KEY", openai_key)  # never for a local server
    reply = lambda received: Reply(body=openai_completion(json.dumps(MEMORY_ANSWER)))  # noqa: E731
    with FakeServer(reply) as ollama, FakeServer(reply) as openai_server:
        # the route's endpoint is config.DEFAULT_BASE_URLS["ollama"] (localhost:11434/v1)
        monkeypatch.setitem(config.DEFAULT_BASE_URLS, "ollama", ollama.base_url + "/v1")
        environ = {
            "LESSONLOOP_AUTOMEM_MODEL": "ollama:llama3.2",
            **WORDING_ONLY,
            "LESSONLOOP_BASE_URL": openai_server.base_url + "/v1",
        }
        cli("memory", "consent", "no")
        refused = memorize.memorize(session.id, home, environ=environ)
        assert refused.skipped == "consent is no" and ollama.received == []
        cli("memory", "consent", "yes")
        result = memorize.memorize(session.id, home, environ=environ)
        calls = posts(ollama)
        assert openai_server.received == [], "LESSONLOOP_BASE_URL is the openai route's"
    assert result.model == "used", result.model
    assert len(calls) == 1 and calls[0].path == "/v1/chat/completions"
    assert calls[0].body["model"] == "llama3.2"
    assert openai_key not in calls[0].headers.get("authorization", "")
    assert openai_key.encode() not in calls[0].raw
    assert_no_secret(sent_bytes(calls[0]), secret)
    assert "Use vitest instead of jest" in calls[0].text
    assert REWORDED in result.stored and len(result.stored) == 3, result.stored


# -------------------------------------------------------------------------------------------
# the memorize command's one line


def test_the_one_line_names_each_lesson_whole_and_counts_the_rest():
    from lessonloop.memory.memorize import MESSAGE_SHOWN, Result

    lessons = [
        f"When `make` fails with `error {i}`, run `export PATH=$PATH:$(go env GOPATH)/bin` first"
        for i in range(MESSAGE_SHOWN + 2)
    ]
    assert Result(stored=lessons[:1]).message == f"Stored 1 new memory: {lessons[0]}"
    message = Result(stored=lessons).message
    assert message.startswith(f"Stored {len(lessons)} new memories: {lessons[0]}, {lessons[1]}")
    assert message.endswith(f"{lessons[MESSAGE_SHOWN - 1]}, and 2 more (`lessonloop memory list`)")
    assert Result().message is None


def test_the_memorize_command_prints_what_it_stored_and_nothing_the_second_time(home, cli):
    import re

    session = captured_session(home, "cli-memorize", fresh_secrets())
    cli("memory", "consent", "yes")
    first = cli("memorize", "--session-id", session.id)
    assert first.code == 0 and first.err == ""
    stored = [summary for _, summary in memories(home)]
    assert len(stored) >= 3
    match = re.fullmatch(r"Stored (\d+) new memories: (.+)\n", first.out)
    assert match, first.out
    assert int(match.group(1)) == len(stored)
    names = match.group(2)
    for summary in stored[:6]:
        assert summary in names, (summary, names)  # (whole: a cut lesson hides its fix)
    assert names.count(", ") >= min(len(stored), 6) - 1

    again = cli("memorize", "--session-id", session.id)
    assert (again.code, again.out, again.err) == (0, "", ""), again
    assert [summary for _, summary in memories(home)] == stored

    # the same transcript as another session: its lessons only reinforce, so nothing to say
    copy = home.parent / "cli-memorize-copy.jsonl"
    copy.write_bytes(session.transcript.read_bytes())
    other = cli("memorize", "--transcript", copy)
    assert (other.code, other.out, other.err) == (0, "", ""), other
    assert [summary for _, summary in memories(home)] == stored
    as_json = cli("memorize", "--transcript", copy, "--json").json()
    assert as_json["stored"] == []


def test_the_memorize_command_says_memory_for_one(home, cli):
    cli("memory", "consent", "yes")
    session = Session(home, "just-one", fresh_secrets())
    session._event("user", {"role": "user", "content": "I prefer tabs over spaces in this repo."})
    result = cli("memorize", "--transcript", session.transcript)
    [(kind, summary)] = memories(home)
    assert result.out == f"Stored 1 new memory: {summary}\n" and result.err == ""
    assert kind == "preference" and "tabs" in summary.lower()
    assert cli("memorize", "--transcript", session.transcript).out == ""


def test_the_memorize_command_without_consent_stores_nothing_and_says_how_to_answer(home, cli):
    session = captured_session(home, "cli-no-consent", fresh_secrets())
    result = cli("memorize", "--session-id", session.id)
    assert result.code == 0 and result.out == ""
    assert result.err.startswith("nothing memorized: consent is missing")
    assert "lessonloop memory consent yes" in result.err
    assert memories(home) == []


def test_memorize_reads_its_model_settings_from_the_environment_it_is_given(home, cli):
    from lessonloop.memory import memorize

    session = captured_session(home, "own-environ", fresh_secrets())
    cli("memory", "consent", "yes")
    with FakeServer(
        lambda received: Reply(body=openai_completion(json.dumps(MEMORY_ANSWER)))
    ) as server:
        result = memorize.memorize(
            session.id,
            home,
            environ={
                "LESSONLOOP_AUTOMEM_MODEL": "openai:test-model",
                **WORDING_ONLY,
                "LESSONLOOP_BASE_URL": server.base_url + "/v1",
                "OPENAI_API_KEY": "sk-given-only",
            },
        )
        [post] = [r for r in server.received if r.method == "POST"]
    assert result.model == "used", result.model
    assert post.headers.get("authorization") == "Bearer sk-given-only"  # not os.environ's
