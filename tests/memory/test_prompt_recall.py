"""Recall matched to each prompt and to each Bash command, through the real hook entry
(``python -m lessonloop hook <event>`` with Claude Code's JSON payload on stdin), the real CLI
and a real store; every memory given is in the session's injection log."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lessonloop import paths
from lessonloop.memory import injections, prompt_recall

from ..conftest import ROOT, settle_captures, subprocess_env

PNPM = "Use pnpm, not npm, to install dependencies and run scripts in this repo"
VITEST = "When `npm test` fails with `Cannot find module 'vitest'`, run `pnpm install` first"
ALEMBIC = "We use Postgres 16 with Alembic migrations; never edit an applied migration, add one"
RELEVANT = "please install the dependencies with npm and run the scripts"
IRRELEVANT = "Add a dark mode toggle to the settings page"


def hook(home: Path, event: str, payload: dict, **env: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", event],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=subprocess_env(home, **env),
        timeout=60,
    )
    settle_captures(home)
    return done


def prompt(home: Path, text: str, session: str = "s1", **env: str) -> subprocess.CompletedProcess:
    payload = {
        "session_id": session,
        "hook_event_name": "UserPromptSubmit",
        "cwd": str(home.parent),
        "prompt": text,
    }
    return hook(home, "user-prompt-submit", payload, **env)


def bash(home: Path, command: str, session: str = "s1", **env: str) -> subprocess.CompletedProcess:
    payload = {
        "session_id": session,
        "hook_event_name": "PreToolUse",
        "cwd": str(home.parent),
        "tool_name": "Bash",
        "tool_use_id": "toolu_01",
        "tool_input": {"command": command, "description": "Run it"},
    }
    return hook(home, "pre-tool-use", payload, **env)


def context(done: subprocess.CompletedProcess, event: str) -> str:
    """The hook's additionalContext; nothing else (never a permissionDecision or "continue")."""
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    output = json.loads(done.stdout)
    if event != "SessionStart":  # (session start may add a systemMessage)
        assert set(output) == {"hookSpecificOutput"}
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == event
    return output["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def memories(home, cli):
    """Three project memories, added as a user adds them (the real CLI, through admission)."""
    for kind, summary in (("preference", PNPM), ("pattern", VITEST), ("decision", ALEMBIC)):
        done = cli("memory", "add", "--type", kind, "--summary", summary)
        assert done.code == 0, done.err
    return home


def test_a_relevant_prompt_gets_its_memory_once_per_session_and_an_irrelevant_one_nothing(
    memories,
):
    given = context(prompt(memories, RELEVANT), "UserPromptSubmit")
    assert given.startswith(prompt_recall.PROMPT_HEADER)
    assert f"- [preference] {PNPM} (new today)" in given.splitlines()
    assert ALEMBIC not in given and "Alembic" not in given  # (nothing in common with the prompt)

    again = prompt(memories, RELEVANT + ", again")
    assert again.returncode == 0 and again.stdout == b"", "a memory is given once per session"
    assert PNPM in context(prompt(memories, RELEVANT, session="s2"), "UserPromptSubmit")

    quiet = prompt(memories, IRRELEVANT, session="s3")
    assert quiet.returncode == 0 and quiet.stdout == b"" and quiet.stderr == b""
    assert injections.read(str(memories), "s3") == []

    (line,) = injections.read(str(memories), "s1")
    assert line["event"] == "user-prompt-submit" and line["scope"] == "project"
    assert line["number"] == 1 and line["summary"] == PNPM
    assert line["reason"].startswith('prompt matched "install dependencies npm scripts" (bm25 ')
    assert line["score"] >= prompt_recall.THRESHOLD


def test_a_memory_of_the_session_start_block_is_still_given_to_the_prompt_that_needs_it(memories):
    """The start block may be far out of context when the prompt comes; the prompt's own
    injection is still once per session."""
    start = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
    block = context(hook(memories, "session-start", start), "SessionStart")
    assert PNPM in block and VITEST in block and ALEMBIC in block
    logged = injections.read(str(memories), "s1")
    assert [x["event"] for x in logged] == ["session-start"] * 3
    assert {x["number"] for x in logged} == {1, 2, 3}
    assert all(x["reason"].startswith("session startup: among the project's") for x in logged)

    done = prompt(memories, RELEVANT)
    assert PNPM in context(done, "UserPromptSubmit")
    assert [x["event"] for x in injections.read(str(memories), "s1")][3:] == ["user-prompt-submit"]
    again = prompt(memories, RELEVANT)
    assert again.returncode == 0 and again.stdout == b""
    assert len(injections.read(str(memories), "s1")) == 4


def test_recall_off_gives_nothing_anywhere_and_the_prompt_is_still_captured(memories, cli):
    assert cli("memory", "consent", "yes").code == 0
    start = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
    off = {"LESSONLOOP_RECALL": "off"}
    assert hook(memories, "session-start", start, **off).stdout == b""
    said = "From now on always use pnpm, never npm: install the dependencies and run the scripts"
    assert prompt(memories, said, **off).stdout == b""
    assert bash(memories, "npm test", **off).stdout == b""
    assert injections.read(str(memories), "s1") == []
    captured = (memories / "sessions" / "s1" / "feedback.jsonl").read_text()
    assert '"type": "feedback"' in captured and '"type": "prompt_check"' in captured
    # and with recall on, the same prompt is captured as well as answered
    assert PNPM in context(prompt(memories, said, session="s2"), "UserPromptSubmit")
    assert '"type": "feedback"' in (memories / "sessions" / "s2" / "feedback.jsonl").read_text()


def test_a_bash_command_gets_its_known_failure_once_and_no_other_command_does(memories):
    given = context(bash(memories, "cd web && npm test -- --run"), "PreToolUse")
    assert given.startswith(prompt_recall.COMMAND_HEADER)
    assert f"- [pattern] {VITEST} (new today)" in given.splitlines()
    assert bash(memories, "npm test").stdout == b"", "once per session"
    (line,) = injections.read(str(memories), "s1")
    assert line["event"] == "pre-tool-use" and line["reason"] == 'command "npm test" about to run'

    # another command, even one the fix names, or one that merely contains the words
    for other in ("pnpm install", "pnpm test", "npm testing", "npm run build", "ls"):
        assert bash(memories, other, session="s2").stdout == b"", other
    # not a Bash call
    payload = {"session_id": "s3", "tool_name": "Read", "tool_input": {"file_path": "npm test"}}
    assert hook(memories, "pre-tool-use", payload).stdout == b""


def test_install_registers_the_command_recall_for_bash_calls(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("install", "claude-code").code == 0
    installed = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    (entry,) = installed["PreToolUse"]
    assert entry["matcher"] == "Bash"
    assert entry["hooks"][0]["command"].endswith("lessonloop hook pre-tool-use")


def test_recall_log_lists_what_was_given_when_and_why(memories, cli):
    start = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "resume"}
    hook(memories, "session-start", start)
    context(bash(memories, "npm test", session="s2"), "PreToolUse")
    context(prompt(memories, RELEVANT, session="s2"), "UserPromptSubmit")

    shown = cli("memory", "recall", "--log", "s2")
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert len(lines) == 4
    assert "pre-tool-use" in lines[0] and f"[project 2] {VITEST}" in lines[0]
    assert lines[1].strip() == 'why: command "npm test" about to run'
    assert "user-prompt-submit" in lines[2] and f"[project 1] {PNPM}" in lines[2]
    assert lines[3].strip().startswith('why: prompt matched "install dependencies npm scripts"')

    as_json = cli("memory", "recall", "--log", "s1", "--json").json()
    assert [(x["event"], x["scope"]) for x in as_json] == [("session-start", "project")] * 3
    assert sorted(x["id"] for x in as_json) == [1, 2, 3]
    assert all(x["at"].endswith("Z") and x["reason"].startswith("session resume") for x in as_json)

    quiet = cli("memory", "recall", "--log", "s3")  # a session that was given nothing
    prompt(memories, IRRELEVANT, session="s3")
    quiet = cli("memory", "recall", "--log", "s3")
    assert quiet.code == 0 and quiet.out == "no memory was given in session s3\n"
    assert cli("memory", "recall", "--log", "s3", "--json").json() == []

    unknown = cli("memory", "recall", "--log", "nope")
    assert unknown.code == 1 and unknown.out == ""
    assert unknown.err.strip().splitlines() == [
        f"error: no session 'nope' under {memories / 'sessions'}"
    ]
    assert (
        "no session 'nope'" in cli("memory", "recall", "--log", "nope", "--json").error()["error"]
    )


def test_only_active_memories_are_recalled_and_evidence_orders_equals(memories, cli):
    db = paths.db_path(memories)
    for summary in (
        "Run the billing worker integration tests with pytest -m billing, not tox",
        "Run the billing worker integration tests against the staging Redis, not a local one",
    ):
        assert cli("memory", "add", "--type", "observation", "--summary", summary).code == 0
    with sqlite3.connect(db) as conn:  # (as supersede and feedback will set them)
        conn.execute("UPDATE knowledge SET status = 'superseded' WHERE number = 1")
        conn.execute("UPDATE knowledge SET helpful = 4 WHERE number = 5")
    assert prompt(memories, RELEVANT).stdout == b"", "a superseded memory stays out of recall"
    given = context(
        prompt(memories, "run the billing worker integration tests", session="s2"),
        "UserPromptSubmit",
    )
    lines = given.splitlines()[2:]
    assert [line.split("] ")[1][:52] for line in lines] == [
        "Run the billing worker integration tests against the",
        "Run the billing worker integration tests with pytest",
    ], "helped 4 times: first among equally relevant memories"
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE knowledge SET helpful = 0")
        conn.execute("UPDATE knowledge SET pinned = 1 WHERE number = 4")
    given = context(
        prompt(memories, "run the billing worker integration tests", session="s3"),
        "UserPromptSubmit",
    )
    assert "with pytest" in given.splitlines()[2], "pinned: first among equals"


def test_the_users_own_memories_are_recalled_under_their_scope(memories, cli):
    summary = "Prefer ripgrep over grep when searching large repositories for symbols"
    done = cli("memory", "add", "--type", "preference", "--scope", "user", "--summary", summary)
    assert done.code == 0, done.err
    given = context(
        prompt(memories, "search the repositories for that symbol with grep"), "UserPromptSubmit"
    )
    assert summary in given
    (line,) = injections.read(str(memories), "s1")
    assert line["scope"] == "user" and line["number"] == 1


def test_a_broken_store_or_no_store_prints_nothing_and_keeps_the_capture(home, cli):
    payload = "From now on always use pnpm, never npm, in this repo"
    assert cli("memory", "consent", "yes").code == 0
    done = prompt(home, payload)  # no store at all
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert not paths.db_path(home).exists(), "recall must not create the store"
    paths.db_path(home).write_bytes(b"this is not a database" * 100)
    for done in (prompt(home, payload, session="s2"), bash(home, "npm test", session="s2")):
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    assert '"type": "feedback"' in (home / "sessions" / "s2" / "feedback.jsonl").read_text()


def test_private_text_is_not_searched_for():
    assert prompt_recall.terms("run <private>pnpm alembic</private> the migrations") == [
        prompt_recall.variants("migrations")
    ]
    assert prompt_recall.terms("deploy <private>pnpm to the staging box") == [
        prompt_recall.variants("deploy")
    ]


def test_the_prompt_and_command_hooks_read_the_store_without_the_store_module(memories):
    """The per-prompt hooks stay on the standard library: no third-party module, no CLI, and
    not lessonloop's store module either (SQLite is read with sqlite3 directly)."""
    probe = (
        "import io, json, sys\n"
        "sys.modules['ahocorasick_rs'] = None  # (as lessonloop.__main__ does for hooks)\n"
        "from lessonloop.memory.hooks import main\n"
        "for event, payload in json.loads(sys.argv[1]):\n"
        "    sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode()))\n"
        "    main([event])  # (its capture too, in this process)\n"
        "print(sorted(m for m, v in sys.modules.items() if v is not None and ("
        "m.split('.')[0] in ('typer', 'click', 'rich', 'pydantic', 'yaml', 'jsonschema',"
        " 'anthropic', 'openai', 'ahocorasick_rs') or m.startswith('lessonloop.store')"
        " or m == 'lessonloop.cli' or m.startswith('lessonloop.knowledge'))))"
    )
    events = [
        ("user-prompt-submit", {"session_id": "p", "prompt": RELEVANT}),
        (
            "pre-tool-use",
            {"session_id": "p", "tool_name": "Bash", "tool_input": {"command": "npm test"}},
        ),
    ]
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(events)],
        capture_output=True,
        text=True,
        env=subprocess_env(memories),
        timeout=60,
    )
    lines = done.stdout.strip().splitlines()
    assert PNPM in lines[0] and VITEST in lines[1], done.stderr
    assert lines[-1] == "[]", done.stderr


def test_the_labelled_set_meets_the_precision_targets_on_both_halves(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "recall_precision.py"), "--json"],
        capture_output=True,
        text=True,
        env=subprocess_env(tmp_path / "home"),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    halves = json.loads(done.stdout)["halves"]
    for name in ("tune", "held"):
        half = halves[name]
        assert half["precision"] >= 0.90, (name, half)
        assert half["silence"] >= 0.95, (name, half)
        assert half["injected"] >= 20, "a recall that gives nothing would pass trivially"
    assert halves["all"]["irrelevant_prompts"] * 2 >= halves["all"]["prompts"]


def test_a_command_gets_its_best_proven_failure_and_never_one_that_mostly_misled(memories, cli):
    other = (
        "When `npm test` fails with `ECONNREFUSED 127.0.0.1:5432`, run `docker compose up -d db`"
    )
    assert cli("memory", "add", "--type", "pattern", "--summary", other).code == 0
    with sqlite3.connect(paths.db_path(memories)) as conn:
        conn.execute("UPDATE knowledge SET helpful = 2 WHERE number = 4")
    assert other in context(bash(memories, "npm test"), "PreToolUse")
    with sqlite3.connect(paths.db_path(memories)) as conn:
        conn.execute("UPDATE knowledge SET helpful = 0, harmful = 3 WHERE number = 4")
    given = context(bash(memories, "npm test", session="s2"), "PreToolUse")
    assert VITEST in given and other not in given
    with sqlite3.connect(paths.db_path(memories)) as conn:
        conn.execute("UPDATE knowledge SET harmful = 3 WHERE number = 2")
    assert bash(memories, "npm test", session="s3").stdout == b"", "both mostly misled"


@given(st.text(max_size=200))
def test_tokens_are_what_the_regular_expression_finds(text):
    import re

    assert prompt_recall.tokens(text) == re.findall(r"[^\W_]+", text)


@given(st.text(alphabet="`ab c", max_size=30))
def test_first_quoted_is_what_the_regular_expression_finds(text):
    import re

    found = re.search(r"`([^`]+)`", text)
    assert prompt_recall.first_quoted(text) == (found.group(1) if found else None)


def test_the_prompt_hook_answers_without_re_json_nor_functools(memories, cli):
    """The prompt hook's answer (recall, here with a memory to give) imports neither ``re``
    nor ``json`` (with ``enum``, a fifth of its start-up) nor ``functools`` (which ``_sqlite3``
    would import: prompt_recall._sqlite_module): what the prompt teaches is captured by the
    deferred child, which may."""
    assert cli("memory", "consent", "yes").code == 0
    code = (
        "import os, sys\nfrom lessonloop.memory import hooks\n"
        "hooks.main(['user-prompt-submit'], defer=True)\n"
        "print(sorted({'re', 'json', 'enum', 'functools'} & set(sys.modules)))"
    )
    payload = {"session_id": "s1", "cwd": str(memories.parent), "prompt": RELEVANT}
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=subprocess_env(memories),
        check=True,
    )
    settle_captures(memories)
    answer, imported = done.stdout.strip().splitlines()
    assert PNPM in json.loads(answer)["hookSpecificOutput"]["additionalContext"]
    assert imported == "[]", done.stderr
    assert (memories / "sessions" / "s1" / "feedback.jsonl").exists()  # (captured after)


def test_a_home_that_cannot_be_written_still_gets_its_memories(memories):
    """The injection log cannot be written (here ``sessions`` is a file, as a read-only or full
    home refuses the folder): the prompt and the session start still get their memories."""
    (memories / "sessions").write_text("not a folder")
    assert PNPM in context(prompt(memories, RELEVANT), "UserPromptSubmit")
    start = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
    assert PNPM in context(hook(memories, "session-start", start), "SessionStart")
