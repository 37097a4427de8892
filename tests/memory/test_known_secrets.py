"""Issue 17, point 7: a value seen under a secret's name anywhere in a session is redacted
everywhere else in it — bare in a log line, a prompt, an error line that becomes a pattern's
key, a sentence that becomes a lesson — whichever comes first, through the real hooks and
memorize. The values planted here are ones the redactor cannot tell from text alone."""

from __future__ import annotations

import json
import secrets
import sqlite3
from pathlib import Path

from lessonloop.memory import known_secrets
from lessonloop.safety.redact import redact

from .test_session import Session, everything_under

QUIET = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}


def bare_value() -> str:
    """A password no rule finds by its shape: only its key says it is one."""
    value = f"Zq{secrets.token_hex(3)}-{secrets.token_hex(6)}"
    assert (
        redact(f"login rejected for {value} at db:5432") == f"login rejected for {value} at db:5432"
    )
    return value


def session_files(home: Path, session: str) -> bytes:
    return everything_under(home / "sessions" / session)


def stored(home: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(home / "lessonloop.db") as conn:
        return conn.execute("SELECT kind, summary, content FROM knowledge ORDER BY id").fetchall()


def fail(session: Session, command: str, stderr: str) -> dict:
    return session.tool(
        "Bash",
        {"command": command},
        {**QUIET, "stderr": stderr},
        is_error=True,
        result_text=f"Exit code 1\n{stderr}",
    )


def test_a_value_seen_under_a_key_is_redacted_bare_in_every_later_capture(home, cli):
    """Keyed first (a failing command's environment), then bare: in a log line of another
    failure's output, in a sentence that becomes a lesson, in an error line that becomes a
    pattern's key. The hooks redact it as they capture: it never reaches the session folder."""
    cli("memory", "consent", "yes")
    v = bare_value()
    s = Session(home, "keyed-first", {})
    s.hook("session-start", source="startup")
    fail(s, f"DB_PASSWORD={v} ./migrate.sh", "migrate: cannot reach the database\n")
    fail(
        s,
        "./migrate.sh --verbose",
        f"2026-11-30 10:00:01 DEBUG pool: opening 4 connections as app/{v}\n"
        f"Error: login rejected for user app with {v} at db:5432\n",
    )
    s.prompt(f"From now on log in to staging as deploy-{v}.")
    assert v.encode() not in session_files(home, "keyed-first")
    captured = (home / "sessions" / "keyed-first" / "signals.jsonl").read_text()
    assert "[REDACTED:password]" in captured and "login rejected for user app" in captured
    feedback = [
        json.loads(line)
        for line in (home / "sessions" / "keyed-first" / "feedback.jsonl").read_text().splitlines()
    ]
    assert any(
        r.get("lesson") == "Log in to staging as deploy-[REDACTED:password]" for r in feedback
    ), feedback
    assert (home / "sessions" / "keyed-first" / known_secrets.FILE).exists()


def test_a_value_seen_bare_before_its_key_is_redacted_at_memorize(home, cli):
    """Bare first — a sentence that becomes a lesson, an error line that becomes a pattern's
    key — then under a key in a command that succeeded (which no capture hook sees): memorize
    learns it from the transcript, rewrites the captures and stores the lessons without it."""
    cli("memory", "consent", "yes")
    v = bare_value()
    s = Session(home, "bare-first", {})
    s.hook("session-start", source="startup")
    s.prompt(f"From now on log in to staging as deploy-{v}.")
    for _ in range(2):
        fail(s, "npm run migrate", f"Error: login rejected for user {v} at db:5432\n")
    s.tool(
        "Edit",
        {
            "file_path": "/work/app/config/db.json",
            "old_string": '"host": "db"',
            "new_string": '"host": "db.internal"',
        },
        {"filePath": "/work/app/config/db.json"},
        result_text="The file has been updated.",
    )
    s.tool("Bash", {"command": "npm run migrate"}, {**QUIET, "stdout": "migrated 3\n"})
    assert v.encode() in session_files(home, "bare-first"), "(the hooks had no key to go by)"
    s.tool(
        "Bash",
        {"command": f"export STAGING_PASSWORD='{v}' && ./bin/check"},
        {**QUIET, "stdout": "ok\n"},
    )
    s.hook("session-end", reason="prompt_input_exit")
    rows = stored(home)
    assert ("decision", "Log in to staging as deploy-[REDACTED:password]") in [r[:2] for r in rows]
    [error] = [r for r in rows if "login rejected" in r[2]]
    assert "login rejected for user [REDACTED:password] at db:5432" in error[1], error
    assert "login rejected for user [REDACTED:password]" in error[2], error
    blob = everything_under(home, home.parent / "user-home")
    assert v.encode() not in blob and v[:8].encode() not in blob


def test_a_hook_that_sees_the_key_rewrites_what_earlier_hooks_captured_bare(home, cli):
    cli("memory", "consent", "yes")
    v = bare_value()
    s = Session(home, "rewritten", {})
    s.prompt(f"From now on log in to staging as deploy-{v}.")
    assert v.encode() in session_files(home, "rewritten")
    fail(s, f"STAGING_PASSWORD={v} ./bin/login", "login: host unreachable\n")
    assert v.encode() not in session_files(home, "rewritten")
    assert b"Log in to staging as deploy-[REDACTED:password]" in session_files(home, "rewritten")


def test_keyed_in_one_prompt_bare_in_the_next(home, cli):
    """A user prompt that gives the value under a key, then a later prompt that repeats it
    in a sentence that becomes a lesson."""
    cli("memory", "consent", "yes")
    v = bare_value()
    s = Session(home, "prompts", {})
    s.hook("session-start", source="startup")
    s.prompt(f"The staging env has STAGING_API_TOKEN={v} set, use it for the smoke tests.")
    s.prompt(f"Always run the smoke tests with {v} against staging.")
    assert v.encode() not in session_files(home, "prompts")
    s.hook("session-end", reason="prompt_input_exit")
    summaries = [r[1] for r in stored(home)]
    assert "Run the smoke tests with [REDACTED:generic-secret] against staging" in summaries, (
        summaries
    )
    assert v.encode() not in everything_under(home, home.parent / "user-home")


def test_common_words_and_short_values_under_a_key_stay_in_the_text(home, cli):
    """``password: postgres`` must not turn every "postgres" of the session into a marker."""
    cli("memory", "consent", "yes")
    s = Session(home, "words", {})
    s.hook("session-start", source="startup")
    fail(s, "PGPASSWORD=postgres psql -h db -U app", "psql: error: connection refused\n")
    s.prompt("From now on use postgres 16 for the test database.")
    feedback = (home / "sessions" / "words" / "feedback.jsonl").read_text()
    assert "Use postgres 16 for the test database" in feedback
    assert not (home / "sessions" / "words" / known_secrets.FILE).exists()


# -------------------------------------------------------------------------------------------
# the session's file: digests, never values; the captures rewritten


def test_the_session_file_holds_digests_and_two_hooks_saving_at_once_agree(tmp_path):
    folder = tmp_path / "sessions" / "s"
    v1, v2 = bare_value(), bare_value()
    first, second = known_secrets.load(folder), known_secrets.load(folder)  # (two processes)
    known_secrets.learn(first, f"DB_PASSWORD={v1}")
    known_secrets.learn(second, {"env": {"API_TOKEN": v2}})
    known_secrets.save(folder, first)
    known_secrets.save(folder, second)  # its salt lost the race: it saves under the first's
    data = (folder / known_secrets.FILE).read_bytes()
    assert v1.encode() not in data and v2.encode() not in data and data.count(b"salt ") == 1
    later = known_secrets.load(folder)
    with later:
        assert redact(f"{v1} and {v2}") == "[REDACTED:password] and [REDACTED:generic-secret]"


def test_the_captures_are_rewritten_and_other_records_kept(tmp_path):
    from lessonloop.memory import capture

    folder = tmp_path / "sessions" / "s"
    v = bare_value()
    capture.append(folder / "feedback.jsonl", {"type": "feedback", "lesson": f"Log in as {v}"})
    capture.append(folder / "signals.jsonl", {"type": "error", "line": "Error: no such file"})
    before = (folder / "signals.jsonl").read_bytes()
    with known_secrets.watching(folder, seen=(f"export STAGING_PASSWORD={v}",)):
        pass
    assert capture.read(folder / "feedback.jsonl") == [
        {"type": "feedback", "lesson": "Log in as [REDACTED:password]"}
    ]
    assert (folder / "signals.jsonl").read_bytes() == before
