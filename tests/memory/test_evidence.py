"""Evidence for memories (issue 22, point 2): a session's transcript in the real format, the
injection log the hooks write, and the real memorize judge whether each memory given helped
or misled; `memory feedback`, `memory stats`, audit's retired marking and retirement."""

from __future__ import annotations

import calendar
import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from lessonloop.memory import injections

from ..conftest import settle_captures, subprocess_env

QUIET = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
MISSING = "Error: Cannot find module 'left-pad'\nRequire stack:\n- /work/app/src/index.js\n"


def stamp(moment: float) -> str:
    millis = round(moment * 1000)  # (not floored: 0.581 may be 0.58099...)
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(millis // 1000)) + f".{millis % 1000:03d}Z"
    )


class Transcript:
    """A Claude Code transcript (JSONL) written event by event, one second apart from
    ``start`` (epoch seconds)."""

    def __init__(self, home: Path, session_id: str, start: float, step: float = 1.0):
        self.id, self.step = session_id, step
        self.path = home.parent / f"{session_id}.jsonl"
        self.moment = start
        self.lines: list[dict] = []
        self.parent: str | None = None
        self.cwd = str(home.parent)

    def _event(self, kind: str, message: dict, **extra) -> None:
        uuid = f"{self.id}-{len(self.lines)}"
        self.lines.append(
            {
                "type": kind,
                "uuid": uuid,
                "parentUuid": self.parent,
                "sessionId": self.id,
                "timestamp": stamp(self.moment),
                "cwd": self.cwd,
                "isSidechain": False,
                "version": "2.0.0",
                "message": message,
                **extra,
            }
        )
        self.moment += self.step
        self.parent = uuid
        self.path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))

    def prompt(self, text: str) -> None:
        self._event("user", {"role": "user", "content": text})

    def tool(self, name: str, tool_input: dict, response, is_error: bool = False, text=None):
        call_id = f"toolu_{self.id}_{len(self.lines)}"
        self._event(
            "assistant",
            {
                "role": "assistant",
                "model": "claude-test",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}],
            },
        )
        if text is None:
            text = (
                response if isinstance(response, str) else response["stdout"] + response["stderr"]
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

    def bash(self, command: str, out: str = "", err: str = "") -> None:
        failed = bool(err)
        self.tool(
            "Bash",
            {"command": command},
            {**QUIET, "stdout": out, "stderr": err},
            is_error=failed,
            text=f"Exit code 1\n{err}" if failed else out,
        )

    def edit(self, path: str, old: str, new: str) -> None:
        self.tool(
            "Edit",
            {"file_path": path, "old_string": old, "new_string": new},
            {"filePath": path},
            text=f"The file {path} has been updated.",
        )


def row(home: Path, number: int, scope: str = "project") -> dict:
    db = (
        home / "lessonloop.db"
        if scope == "project"
        else home.parent / "user-home" / "lessonloop.db"
    )
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        found = conn.execute(
            "SELECT * FROM knowledge WHERE scope = ? AND number = ?", (scope, number)
        ).fetchone()
        return dict(found)


def events(home: Path, number: int) -> list[tuple[str, str]]:
    with sqlite3.connect(home / "lessonloop.db") as conn:
        return conn.execute(
            "SELECT action, detail FROM knowledge_events WHERE knowledge_id = "
            "(SELECT id FROM knowledge WHERE scope = 'project' AND number = ?) ORDER BY id",
            (number,),
        ).fetchall()


def give(
    home: Path, session_id: str, number: int, event: str = "session-start", scope: str = "project"
) -> float:
    """Log the memory as given to the session (as the hooks do); when, in epoch seconds."""
    memory = row(home, number, scope)
    injections.record(
        str(home),
        session_id,
        event,
        [
            {
                "scope": scope,
                "id": memory["id"],
                "number": number,
                "summary": memory["summary"],
                "reason": "test",
                "score": None,
            }
        ],
    )
    at = injections.read(str(home), session_id)[-1]["at"]
    return calendar.timegm(time.strptime(at[:19], "%Y-%m-%dT%H:%M:%S")) + int(at[20:23]) / 1000


def memorize(cli, session: Transcript) -> None:
    done = cli("memorize", "--session-id", session.id, "--transcript", session.path, "--json")
    assert done.code == 0, done.err


def learn_missing_module(cli, home: Path) -> int:
    """A first session: `npm test` fails twice on a missing module, `npm install` fixes it;
    memorize keeps that as a pattern. Its id."""
    first = Transcript(home, "learn", time.time() - 3600)
    first.prompt("Run the tests please")
    first.bash("npm test", err=MISSING)
    first.bash("npm test", err=MISSING)
    first.bash("npm install", out="added 1 package\n")
    first.bash("npm test", out="All 12 tests passed\n")
    memorize(cli, first)
    [pattern] = [m for m in cli("memory", "list", "--json").json() if m["type"] == "pattern"]
    assert "npm install" in pattern["summary"] and "Fixed by: npm install" in pattern["content"]
    return pattern["id"]


def start(cli, home: Path) -> None:
    assert cli("memory", "consent", "yes").code == 0


def test_a_pattern_whose_fix_ran_and_whose_error_did_not_come_back_helped(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    given = give(home, "helped", number)
    session = Transcript(home, "helped", given + 1)
    session.prompt("Run the tests again")
    session.bash("npm install", out="up to date\n")
    session.bash("npm test", out="All 12 tests passed\n")
    memorize(cli, session)
    memory = row(home, number)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 1, 0)
    assert memory["confirmed_at"] and memory["last_used_at"]
    helped = [detail for action, detail in events(home, number) if action == "helped"]
    assert len(helped) == 1 and "session helped:" in helped[0] and "npm install" in helped[0]


def test_an_error_that_came_back_and_was_fixed_another_way_misled(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    given = give(home, "misled", number)
    session = Transcript(home, "misled", given + 1)
    session.prompt("Run the tests again")
    session.bash("npm test", err=MISSING)
    session.edit("/work/app/package.json", '"left-pad": "0.0.1"', '"left-pad": "1.3.0"')
    session.bash("npm test", out="All 12 tests passed\n")
    memorize(cli, session)
    memory = row(home, number)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 0, 1)
    assert memory["confirmed_at"] is None and memory["status"] == "active"  # once is not mostly
    [misled] = [detail for action, detail in events(home, number) if action == "misled"]
    assert "another fix worked" in misled and "package.json" in misled


def test_the_same_error_and_the_memorys_fix_after_it_helped(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    given = give(home, "again", number)
    session = Transcript(home, "again", given + 1)
    session.bash("npm test", err=MISSING)
    session.bash("npm install", out="added 1 package\n")
    session.bash("npm test", out="All 12 tests passed\n")
    memorize(cli, session)
    assert (row(home, number)["helpful"], row(home, number)["harmful"]) == (1, 0)


def test_what_happened_before_the_memory_was_given_is_no_evidence(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    given = give(home, "before", number, "user-prompt-submit")
    session = Transcript(home, "before", given - 30)  # the error and its other fix: before
    session.bash("npm test", err=MISSING)
    session.edit("/work/app/package.json", '"left-pad": "0.0.1"', '"left-pad": "1.3.0"')
    session.bash("npm test", out="All 12 tests passed\n")
    memorize(cli, session)
    memory = row(home, number)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 0, 0)


def test_a_session_that_never_came_near_the_memory_gives_no_evidence_and_counts_the_use(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    given = give(home, "unrelated", number)
    session = Transcript(home, "unrelated", given + 1)
    session.prompt("What does the README say about deployment?")
    session.tool("Read", {"file_path": "/work/app/README.md"}, "# App\nDeploy with make.")
    session.bash("ls docs", out="deploy.md\n")
    memorize(cli, session)
    memory = row(home, number)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 0, 0)
    assert memory["last_used_at"] is not None and memory["confirmed_at"] is None
    assert [a for a, _ in events(home, number) if a in ("helped", "misled")] == []
    [used] = [detail for action, detail in events(home, number) if action == "used"]
    assert used.startswith("session unrelated:")


def test_memorizing_a_session_twice_counts_nothing_twice(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    given = give(home, "twice", number)
    session = Transcript(home, "twice", given + 1)
    session.bash("npm install", out="up to date\n")
    session.bash("npm test", out="All 12 tests passed\n")
    memorize(cli, session)
    session.prompt("Thanks, now lint it")  # (a compaction, then more, then the session's end)
    session.bash("npm run lint", out="ok\n")
    memorize(cli, session)
    memorize(cli, session)
    memory = row(home, number)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 1, 0)
    assert [a for a, _ in events(home, number)].count("used") == 1


def test_a_preference_followed_helped_and_one_the_user_corrected_misled(cli, home):
    start(cli, home)
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm instead of npm")
    cli("memory", "add", "--type", "decision", "--summary", "Use vitest instead of jest")
    given = give(home, "prefs", 1)
    give(home, "prefs", 2)
    session = Transcript(home, "prefs", given + 1)
    session.bash("pnpm install", out="done\n")
    session.bash("npx vitest run", out="ok\n")
    session.prompt("No, use jest here, not vitest.")
    session.bash("npx jest", out="ok\n")
    memorize(cli, session)
    pnpm, vitest = row(home, 1), row(home, 2)
    assert (pnpm["helpful"], pnpm["harmful"]) == (1, 0)
    assert (vitest["helpful"], vitest["harmful"]) == (0, 1)
    [misled] = [detail for action, detail in events(home, 2) if action == "misled"]
    assert "jest" in misled


def test_a_memory_that_mostly_misleads_leaves_recall_and_stays_marked_in_audit(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    for n in range(2):
        name = f"misled-{n}"
        session = Transcript(home, name, give(home, name, number) + 1)
        session.bash("npm test", err=MISSING)
        session.edit("/work/app/package.json", f'"left-pad": "0.0.{n}"', '"left-pad": "1.3.0"')
        session.bash("npm test", out="All 12 tests passed\n")
        memorize(cli, session)
    memory = row(home, number)
    assert (memory["harmful"], memory["status"]) == (2, "retired")
    assert [a for a, _ in events(home, number)].count("retire") == 1
    assert number not in [m["id"] for m in cli("memory", "list", "--json").json()]
    assert memory["summary"] not in cli("memory", "recall").out
    audit = cli("memory", "audit", "--json").json()
    assert [m["status"] for m in audit if m["id"] == number] == ["retired"]
    assert f"[project {number}]" in cli("memory", "audit").out.split("[retired]")[0]
    stats = {m["id"]: m for m in cli("memory", "stats", "--json").json()}
    assert stats[number]["status"] == "retired" and stats[number]["misled"] == 2


def test_a_pinned_memory_never_retires_automatically(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    with sqlite3.connect(home / "lessonloop.db") as conn:
        conn.execute("UPDATE knowledge SET pinned = 1 WHERE number = ?", (number,))
    for _ in range(3):
        assert cli("memory", "feedback", number, "misled", "--json").code == 0
    memory = row(home, number)
    assert (memory["harmful"], memory["status"]) == (3, "active")


def test_feedback_counts_redacts_its_note_and_retires_by_the_rule(cli, home):
    start(cli, home)
    cli("memory", "add", "--type", "preference", "--summary", "Deploy on Fridays")
    token = "ghp_" + "R8kq2Lm9Xw4Tz7Vb1Nc6Hd3Jf5Gs0Pa8Yu2E"
    helped = cli("memory", "feedback", 1, "helped", "--note", f"worked with {token}", "--json")
    assert helped.code == 0, helped.err
    value = helped.json()
    assert (value["helped"], value["misled"], value["retired"]) == (1, 0, False)
    assert row(home, 1)["confirmed_at"] is not None
    assert token.encode() not in (home / "lessonloop.db").read_bytes()
    assert any("[REDACTED" in detail for action, detail in events(home, 1) if action == "helped")
    assert cli("memory", "feedback", 1, "misled", "--json").json()["retired"] is False  # 1 vs 1
    assert row(home, 1)["status"] == "active"
    text = cli("memory", "feedback", 1, "misled", "--note", "it broke prod")  # 2 vs 1
    assert "misled 2" in text.out and "retired from recall" in text.out
    assert row(home, 1)["status"] == "retired"  # the user's own memory, on their verdict


def test_feedback_on_an_unknown_id_or_verdict_is_one_line(cli, home):
    start(cli, home)
    none_yet = cli("memory", "feedback", 1, "helped")
    assert none_yet.code == 1 and none_yet.err.strip() == "error: no project memories yet"
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm instead of npm")
    unknown = cli("memory", "feedback", 42, "helped", "--json")
    assert unknown.code == 1 and "Traceback" not in unknown.err
    assert "no project memory with id 42" in unknown.error()["error"]
    bad = cli("memory", "feedback", 1, "great")
    assert bad.code == 2 and bad.err.count("\n") == 1 and "helped or misled" in bad.err
    assert row(home, 1)["helpful"] == 0


def test_stats_shows_every_memory_with_its_uses_and_evidence(cli, home):
    start(cli, home)
    assert cli("memory", "stats", "--json").json() == []
    number = learn_missing_module(cli, home)
    given = give(home, "stats", number)
    session = Transcript(home, "stats", given + 1)
    session.bash("npm install", out="up to date\n")
    memorize(cli, session)
    cli(
        "memory", "add", "--type", "preference", "--summary", "Answer in English", "--scope", "user"
    )
    stats = cli("memory", "stats", "--json").json()
    keys = {
        "id",
        "scope",
        "kind",
        "summary",
        "injected",
        "helped",
        "misled",
        "last_used_at",
        "status",
    }
    assert all(keys <= set(item) for item in stats)
    [mine] = [m for m in stats if m["scope"] == "project" and m["id"] == number]
    assert (mine["kind"], mine["injected"], mine["helped"], mine["misled"]) == ("pattern", 1, 1, 0)
    assert mine["last_used_at"] == injections.read(str(home), "stats")[0]["at"]
    assert [m["summary"] for m in stats if m["scope"] == "user"] == ["Answer in English"]
    assert cli("memory", "stats", "--scope", "user", "--json").json()[0]["injected"] == 0
    line = [ln for ln in cli("memory", "stats").out.splitlines() if f"[project {number}]" in ln][0]
    assert "injected 1, helped 1, misled 0" in line
    assert cli("memory", "stats", "--scope", "team").code == 2


def test_the_session_end_hook_judges_the_memories_of_both_scopes(cli, home):
    start(cli, home)
    number = learn_missing_module(cli, home)
    cli(
        "memory", "add", "--type", "preference", "--summary", "Use pnpm, not npm", "--scope", "user"
    )
    given = give(home, "hooked", number)
    give(home, "hooked", 1, "user-prompt-submit", scope="user")
    session = Transcript(home, "hooked", given + 1)
    session.prompt("Install and test")
    session.bash("pnpm install", out="done\n")
    session.bash("pnpm test", out="All 12 tests passed\n")
    payload = {
        "session_id": "hooked",
        "transcript_path": str(session.path),
        "cwd": session.cwd,
        "hook_event_name": "SessionEnd",
        "reason": "prompt_input_exit",
    }
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", "session-end"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    mine, theirs = row(home, number), row(home, 1, "user")
    assert (mine["injected"], mine["helpful"], mine["harmful"]) == (1, 0, 0)  # never came near
    assert (theirs["injected"], theirs["helpful"], theirs["harmful"]) == (1, 1, 0)
    stats = cli("memory", "stats", "--scope", "user", "--json").json()
    assert [(m["injected"], m["helped"]) for m in stats] == [(1, 1)]


def test_what_a_memory_prefers_and_rejects_and_what_contradicts_it():
    from lessonloop.memory.evidence import contradicts, sides

    assert sides("Use pnpm instead of npm for this repo") == ({"pnpm"}, {"npm"})
    assert sides("Use `npm ci`, not `npm install`") == ({"npm", "ci"}, {"install"})
    assert sides("Never force-push to main")[0] == set()
    memory = "Use pnpm instead of npm"
    preferred, rejected = sides(memory)
    assert contradicts("Use npm here, not pnpm", memory, preferred, rejected)
    assert contradicts("Don't use pnpm", memory, preferred, rejected)
    assert not contradicts("Use pnpm instead of npm.", memory, preferred, rejected)
    assert not contradicts("Use pnpm, not npm", memory, preferred, rejected)
    assert not contradicts("Use vitest instead of jest", memory, preferred, rejected)


def test_the_user_saying_the_memory_again_is_no_correction(cli, home):
    start(cli, home)
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm instead of npm")
    session = Transcript(home, "again-said", give(home, "again-said", 1) + 1)
    session.bash("pnpm install", out="done\n")
    session.prompt("Good. From now on, always use pnpm instead of npm.")
    session.bash("pnpm test", out="ok\n")
    memorize(cli, session)
    assert (row(home, 1)["helpful"], row(home, 1)["harmful"]) == (1, 0)


def test_a_memory_the_agent_went_against_gets_no_credit(cli, home):
    start(cli, home)
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm instead of npm")
    session = Transcript(home, "against", give(home, "against", 1) + 1)
    session.bash("pnpm install", out="done\n")
    session.bash("npm test", out="ok\n")
    memorize(cli, session)
    assert (row(home, 1)["injected"], row(home, 1)["helpful"], row(home, 1)["harmful"]) == (1, 0, 0)


def test_a_correction_the_prompt_hook_captured_after_the_agent_acted_misled(cli, home):
    start(cli, home)
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm instead of npm")
    given = give(home, "captured", 1)
    session = Transcript(home, "captured", given + 0.01, step=0.01)  # (the agent acts now)
    session.bash("pnpm install", out="done\n")
    time.sleep(0.05)
    payload = {
        "session_id": "captured",
        "transcript_path": str(session.path),
        "cwd": session.cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": "No, use npm here, not pnpm.",
    }
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", "user-prompt-submit"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settle_captures(home)
    assert "pnpm" in (home / "sessions" / "captured" / "feedback.jsonl").read_text()
    memorize(cli, session)  # (the transcript holds no such prompt: only the hook saw it)
    assert (row(home, 1)["helpful"], row(home, 1)["harmful"]) == (0, 1)
    [misled] = [detail for action, detail in events(home, 1) if action == "misled"]
    assert "the user said otherwise" in misled and "npm" in misled


# ------------------------------------------------------------------ a pattern written by hand

JSDOM = (
    "When npm test fails with Cannot find module jest-environment-jsdom, "
    "run npm install --save-dev jest-environment-jsdom"
)
JEST_MISSING = (
    "\n> app@1.0.0 test\n> jest\n\n FAIL  src/App.test.js\n  \u25cf Test suite failed to run\n\n"
    "    Cannot find module 'jest-environment-jsdom' from "
    "'node_modules/jest-config/build/normalize.js'\n\n    Require stack:\n"
    "      node_modules/jest-config/build/normalize.js\n"
    "      node_modules/jest-config/build/index.js\n      node_modules/jest-cli/bin/jest.js\n\n"
    "Test Suites: 1 failed, 1 total\nTests:       0 total\nSnapshots:   0 total\n"
    "Time:        0.61 s\nRan all test suites.\nnpm ERR! Test failed.  See above for more details.\n"
)
JEST_PASSED = "Test Suites: 3 passed, 3 total\nTests:       14 passed, 14 total\n"


def hand_written_session(cli, home: Path, name: str, play) -> tuple[dict, str]:
    """A memory added with `memory add`, given to a session by the real prompt hook, the session
    played by ``play(session)`` (its calls reported to the real hooks) and ended by the real
    session-end hook (which memorizes it); the memory's row and `memory why` afterwards."""
    from .test_lifecycle import LiveSession, add
    from .test_session import fresh_secrets

    start(cli, home)
    number = add(cli, "pattern", JSDOM)
    session = LiveSession(home, name, fresh_secrets())
    session.hook("session-start", source="startup")
    said = session.prompt("npm test fails with Cannot find module jest-environment-jsdom, fix it")
    assert JSDOM in session.given(said)
    play(session)
    session.hook("stop", stop_hook_active=False)
    session.hook("session-end", reason="prompt_input_exit")
    why = cli("memory", "why", number)
    assert why.code == 0, why.err
    return row(home, number), why.out


def npm(session, command: str, out: str = "", err: str = "") -> None:
    response = {**QUIET, "stdout": out, "stderr": err}
    if err:
        session.tool("Bash", {"command": command}, response, True, f"Exit code 1\n{out}{err}")
    else:
        session.tool("Bash", {"command": command}, response)


def test_a_hand_written_pattern_whose_error_came_back_after_its_fix_misled(cli, home):
    def play(session):
        npm(session, "npm install --save-dev jest-environment-jsdom", "added 41 packages\n")
        npm(session, "npm test", err=JEST_MISSING)
        npm(session, "npm install --save-dev jest@29 jest-environment-jsdom@29", "changed 212\n")
        npm(session, "npm test", JEST_PASSED)

    memory, why = hand_written_session(cli, home, "jsdom-misled", play)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 0, 1)
    assert "misled" in why and "another fix worked" in why and "jest@29" in why
    assert "helped" not in why and "did as it says" not in why


def test_the_same_hand_written_pattern_whose_fix_worked_helped(cli, home):
    def play(session):
        npm(session, "npm install --save-dev jest-environment-jsdom", "added 41 packages\n")
        npm(session, "npm test", JEST_PASSED)

    memory, why = hand_written_session(cli, home, "jsdom-helped", play)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 1, 0)
    assert "its fix ran" in why and "the error did not come back" in why


def test_a_hand_written_pattern_whose_error_never_showed_up_gives_no_verdict(cli, home):
    def play(session):  # another module missing: another error, fixed another way
        other = JEST_MISSING.replace("jest-environment-jsdom", "jest-environment-node")
        npm(session, "npm test", err=other)
        npm(session, "npm install --save-dev jest-environment-node", "added 3 packages\n")
        npm(session, "npm test", JEST_PASSED)
        npm(session, "npm run lint", "ok\n")

    memory, why = hand_written_session(cli, home, "jsdom-none", play)
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (1, 0, 0)
    assert "helped" not in why and "misled" not in why


def test_what_error_and_fix_a_hand_written_memory_names():
    from lessonloop.memory.evidence import _extends, _stated

    jsdom = _stated(JSDOM)
    assert jsdom is not None and jsdom.fix == "npm install --save-dev jest-environment-jsdom"
    assert jsdom.names("Cannot find module 'jest-environment-jsdom' from 'node_modules/x.js'")
    assert not jsdom.names("Cannot find module 'jest-environment-node' from 'node_modules/x.js'")
    assert not jsdom.names("npm ERR! Test failed.  See above for more details.")
    first = _stated("Run `pnpm install` when vitest fails with Cannot find package vite")
    assert first is not None and first.fix == "pnpm install"
    fixed_by = _stated("ENOENT on config.yml is fixed by running make config")
    assert fixed_by is not None and fixed_by.fix == "make config"
    prose = _stated("If cargo build fails with linker cc not found, install build-essential")
    assert prose is not None and prose.fix == ""  # a prose fix: no command to tell apart
    dot = _stated(
        "When pytest fails with ImportError: cannot import name 'load_config' from "
        "'app.settings', run pip install -e ."
    )
    assert dot is not None and dot.fix == "pip install -e ."  # (its own ".", not a full stop)
    assert dot.names("ImportError: cannot import name 'load_config' from 'app.settings'")
    assert not dot.names("ImportError: cannot import name 'load_env' from 'app.settings'")
    ended = _stated("When npm test fails with Cannot find module left-pad, run npm ci.")
    assert ended is not None and ended.fix == "npm ci"
    assert _stated("Use vitest instead of jest") is None
    assert _stated("Always run pnpm install before the tests") is None
    # a fix read from words that another fix only adds to may be the same one: no verdict
    assert _extends("pip install -e .", "pip install -e") and not _extends("npm ci", "npm i")
    assert not _extends("npm install --save-dev jest@29 jest-environment-jsdom@29", jsdom.fix)


def test_a_hand_written_pattern_with_a_prose_fix_is_not_proven_when_its_error_comes_back(cli, home):
    start(cli, home)
    prose = (
        "If npm test fails with Cannot find module jest-environment-jsdom, "
        "add jest-environment-jsdom to devDependencies"
    )
    cli("memory", "add", "--type", "pattern", "--summary", prose)
    for name, back in (("prose-back", True), ("prose-gone", False)):
        session = Transcript(home, name, give(home, name, 1) + 1)
        session.bash("npm install --save-dev jest-environment-jsdom", out="added 41 packages\n")
        if back:
            session.bash("npm test", err=JEST_MISSING)
            session.bash("npm install --save-dev jest@29 jest-environment-jsdom@29", out="ok\n")
        session.bash("npm test", out=JEST_PASSED)
        memorize(cli, session)
    memory = row(home, 1)  # no command to tell its fix from another: helped once, by doing as
    assert (memory["injected"], memory["helpful"], memory["harmful"]) == (2, 1, 0)  # it says
    [helped] = [detail for action, detail in events(home, 1) if action == "helped"]
    assert helped.startswith("session prose-gone:")
