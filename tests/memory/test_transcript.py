"""Transcript reader: tolerant parsing, tool calls and prompts, error→fix and correction pairing."""

from __future__ import annotations

import dataclasses
import json
import secrets
import string
import time
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessonloop.memory.feedback import Feedback
from lessonloop.memory.transcript import (
    Correction,
    ErrorFix,
    ToolCall,
    Transcript,
    UserMessage,
    read,
)

OWN = Path(__file__).resolve().parents[1] / "fixtures" / "claude-code"
SHARED = Path("/work/shared/fixtures/claude-code")
SESSION = OWN / "session_errors.jsonl"


def strings(value, seen=None):
    """Every string inside dataclasses, dicts, lists and tuples (properties included)."""
    if isinstance(value, str):
        yield value
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from strings(getattr(value, f.name))
        if isinstance(value, ErrorFix):
            yield value.lesson
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)


def event(kind: str, content, **extra) -> dict:
    role = "assistant" if kind == "assistant" else "user"
    return {
        "type": kind,
        "uuid": extra.pop("uuid", secrets.token_hex(4)),
        "isSidechain": False,
        "timestamp": "2025-07-01T10:00:00Z",
        "message": {"role": role, "content": content},
        **extra,
    }


def use(tool_id: str, name: str, tool_input: dict, **extra) -> dict:
    return event(
        "assistant",
        [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}],
        **extra,
    )


def result(tool_id: str, content, is_error: bool = False, **extra) -> dict:
    return event(
        "user",
        [{"type": "tool_result", "tool_use_id": tool_id, "content": content, "is_error": is_error}],
        **extra,
    )


def write(path: Path, events) -> Path:
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return path


# ------------------------------------------------------------------------------------------
# the shared real samples


@pytest.mark.parametrize(
    "name", ["edge_cases.jsonl", "representative_messages.jsonl", "session_b.jsonl"]
)
def test_shared_samples_parse(name):
    t = read(SHARED / name)
    assert isinstance(t, Transcript)
    for call in t.calls:
        assert isinstance(call, ToolCall) and call.id and call.name
    assert all(isinstance(p, UserMessage) and p.text for p in t.prompts)
    t.error_fixes()
    t.corrections()


def test_representative_sample():
    t = read(SHARED / "representative_messages.jsonl")
    assert t.skipped_lines == 0
    assert [(c.name, c.subject) for c in t.calls] == [
        ("Edit", "/tmp/decorator_example.py"),
        ("Bash", "python /tmp/decorator_example.py"),
    ]
    bash = t.calls[1]
    assert bash.completed and not bash.is_error and bash.errors == []
    assert bash.result == "", "a success keeps no text: only failures' text is ever used"
    assert bash.input == {
        "command": "python /tmp/decorator_example.py",
        "description": "Run the decorator example to show output",
    }
    assert bash.timestamp == "2025-06-14T10:03:00Z" and not bash.sidechain
    assert [p.text.split()[0] for p in t.prompts] == ["Hello", "Great!", "Can", "This"]
    assert t.prompts[0].text == (
        "Hello Claude! Can you help me understand how Python decorators work?"
    )
    assert [p.index for p in t.prompts] == sorted(p.index for p in t.prompts)
    assert t.prompts[1].index < t.calls[0].index < t.prompts[2].index
    assert t.error_fixes() == [] and t.corrections() == []


def test_edge_cases_sample():
    t = read(SHARED / "edge_cases.jsonl")
    # "massive error", 42 and [1] are not events; {"silly": "this"} is an unknown event
    assert t.skipped_lines == 3
    failing = t.calls[0]
    assert failing.name == "FailingTool" and failing.is_error and failing.completed
    assert [e.line for e in failing.errors] == [
        "Error: Tool execution failed with error: Command not found"
    ]
    assert failing.result == "Error: Tool execution failed with error: Command not found"
    # the MultiEdit's result line misspells "content": the call stays without a result
    multi = next(c for c in t.calls if c.name == "MultiEdit")
    assert not multi.completed and not multi.is_error and multi.subject == "/tmp/complex_example.py"
    texts = [p.text for p in t.prompts]
    assert not any(
        x.startswith(("Caveat:", "<command-name>", "<local-command-stdout>")) for x in texts
    )
    assert (
        "Testing special characters: café, naïve, résumé, 中文, العربية, русский, 🎉 emojis 🚀 "
        "and symbols ∑∆√π∞" in texts
    )
    assert len(texts) == 3 and "wow error" not in texts


def test_session_b_sample():
    t = read(SHARED / "session_b.jsonl")
    assert [p.text for p in t.prompts] == [
        "This is from a different session file to test multi-session handling.",
        "Perfect! This should appear without any session divider above it.",
    ]
    assert t.calls == [] and t.skipped_lines == 0


# ------------------------------------------------------------------------------------------
# the project's own fixture


@pytest.fixture(scope="module")
def session() -> Transcript:
    return read(SESSION)


def by_id(t: Transcript, tool_id: str) -> ToolCall:
    return next(c for c in t.calls if c.id == tool_id)


def test_calls_and_results(session):
    names = [(c.id, c.name) for c in session.calls]
    assert names == [
        ("toolu_01A", "Bash"),
        ("toolu_01B", "Read"),
        ("toolu_01C", "Bash"),
        ("toolu_01D", "Bash"),
        ("toolu_01E", "Edit"),
        ("toolu_01F", "Bash"),
        ("toolu_01G", "Edit"),
        ("toolu_01H", "Read"),
        ("toolu_01I", "Edit"),
        ("toolu_01J", "Task"),
        ("toolu_02A", "Bash"),
        ("toolu_02B", "Bash"),
        ("toolu_01K", "Bash"),
        ("toolu_02C", "Bash"),
        ("toolu_01Z", "Bash"),
    ]
    assert [c.index for c in session.calls] == sorted(c.index for c in session.calls)
    first = by_id(session, "toolu_01A")
    assert first.is_error and first.subject == "cd /home/dev/proj && pytest -q tests/test_parser.py"
    assert first.errors[0].line == "ModuleNotFoundError: No module named 'proj'"
    assert first.errors[0].normalized == "modulenotfounderror: no module named <q>"
    assert first.result.startswith("Exit code 1\n") and len(first.result) <= 2000
    assert first.timestamp.startswith("2025-07-01T10:")
    fixed = by_id(session, "toolu_01F")
    assert fixed.completed and not fixed.is_error and fixed.result == ""
    unanswered = by_id(session, "toolu_01Z")
    assert not unanswered.completed and unanswered.result == "" and not unanswered.is_error


def test_reads_and_greps_of_error_text_are_not_errors(session):
    for tool_id in ("toolu_01B", "toolu_01C", "toolu_01E", "toolu_01H", "toolu_01I"):
        call = by_id(session, tool_id)
        assert call.completed and not call.is_error and call.errors == [], tool_id
    assert by_id(session, "toolu_01B").result == "", "a read is no failure: its text is not kept"


def test_sidechains_are_kept_and_flagged(session):
    side = [c for c in session.calls if c.sidechain]
    assert [c.id for c in side] == ["toolu_02A", "toolu_02B", "toolu_02C"]
    assert len({c.chain for c in side}) == 1 and side[0].chain != ""
    assert all(c.chain == "" for c in session.calls if not c.sidechain)
    assert by_id(session, "toolu_02A").errors[0].line == "sh: 1: jest: not found"
    side_prompts = [p for p in session.prompts if p.sidechain]
    assert [p.text for p in side_prompts] == ["Run npm test in web/ and report."]


def test_prompts_are_the_users_own_words(session):
    main = [p.text for p in session.prompts if not p.sidechain]
    assert main[:5] == [
        "Run the parser tests and fix whatever fails.",
        "Now reformat parser.py.",
        "no, that's wrong \u2014 use tabs not spaces",
        "What does parse return?",
        "don't mock the database in these tests",
    ]
    assert "I prefer pnpm over npm. Also, from now on we use Postgres 16." in main
    assert not any(
        p.startswith(("<command", "<local-command", "Caveat:", "[Request interrupted"))
        for p in main
    )
    # invalid UTF-8 bytes are replaced, not fatal
    assert "always run the linter before committing \ufffd\ufffd" in main


def test_malformed_and_non_object_lines_are_counted(session):
    # a cut-short JSON line, "just a string" and [1, 2, 3]; blank lines and unknown types are not
    assert session.skipped_lines == 3


def test_lines_over_the_limit_are_skipped_and_counted():
    t = read(SESSION, max_line_bytes=4096)
    small = read(SESSION)
    assert t.skipped_lines > small.skipped_lines
    assert not any(p.text.startswith("padding ") for p in t.prompts)
    assert any(p.text.startswith("padding ") for p in small.prompts)


def test_error_fixes(session):
    fixes = session.error_fixes()
    pairs = [(f.error.id, f.fix.id) for f in fixes]
    assert pairs == [
        ("toolu_01A", "toolu_01F"),
        ("toolu_01D", "toolu_01F"),
        ("toolu_01G", "toolu_01I"),
        ("toolu_02A", "toolu_02C"),
    ]
    assert fixes[0].normalized == fixes[1].normalized == "modulenotfounderror: no module named <q>"
    # the lesson shows the error as reported; the normalized form is only the key
    assert (
        fixes[0].lesson
        == fixes[1].lesson
        == (
            "When `pytest` fails with `ModuleNotFoundError: No module named 'proj'`, run "
            "`PYTHONPATH=src pytest -q tests/` instead"
        )
    )
    assert fixes[2].lesson == (
        "When Edit on `parser.py` fails with `String to replace not found in "
        "file.`, re-read the file, then edit again"
    )
    # the sidechain's failure pairs inside the sidechain, never with the main chain's `npm test`
    assert fixes[3].fix.sidechain and fixes[3].error.chain == fixes[3].fix.chain
    assert fixes[3].lesson == (
        "When `npm test` fails with `sh: 1: jest: not found`, run `npm install` first"
    )
    for f in fixes:
        assert isinstance(f, ErrorFix) and len(f.lesson) <= 120
        assert f.fix.index > f.error.index


def test_corrections_pair_with_the_call_they_corrected(session):
    found = session.corrections()
    assert [(c.feedback.lesson, c.corrected.id if c.corrected else None) for c in found] == [
        ("Use tabs, not spaces", "toolu_01I"),
        # only a text answer since the previous prompt: nothing to pair with
        ("Don't mock the database in these tests", None),
    ]
    assert all(isinstance(c, Correction) and isinstance(c.feedback, Feedback) for c in found)


# ------------------------------------------------------------------------------------------
# pairing rules on small inline transcripts


def test_a_main_chain_error_never_pairs_with_a_sidechain_success(tmp_path):
    side = {"isSidechain": True}
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "npm test"}),
                result("a", "Exit code 1\nnpm ERR! missing script: test", True),
                use("b", "Bash", {"command": "npm test"}, **side),
                result("b", "Tests: 1 passed", **side),
                use("c", "Bash", {"command": "cd app && npm test"}),
                result("c", "Tests: 2 passed"),
            ],
        )
    )
    assert [(f.error.id, f.fix.id) for f in t.error_fixes()] == [("a", "c")]


def test_fixes_need_the_same_kind_of_call_and_skip_later_failures(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "pytest -q"}),
                result("a", "Exit code 1\nE   ImportError: cannot import name 'x'", True),
                use("b", "Bash", {"command": "ruff check ."}),  # other command head
                result("b", "All checks passed!"),
                use("c", "Bash", {"command": "pytest -q"}),  # fails again
                result("c", "Exit code 1\nE   ImportError: cannot import name 'x'", True),
                use(
                    "d", "Edit", {"file_path": "/p/src/x.py", "old_string": "a", "new_string": "b"}
                ),
                result("d", "The file /p/src/x.py has been updated."),
                use("e", "Bash", {"command": "pytest -q"}),
                result("e", "5 passed in 0.1s"),
                use("f", "Bash", {"command": "git push"}),  # never fixed
                result("f", "Exit code 128\nfatal: no upstream", True),
                use("g", "Bash", {"command": "git status"}),
                result("g", "On branch main"),
            ],
        )
    )
    fixes = t.error_fixes()
    assert [(f.error.id, f.fix.id) for f in fixes] == [("a", "e"), ("c", "e")]
    # one lesson for both failures: the first one's window (with `ruff check .`) did not fix it
    assert (
        fixes[0].lesson
        == fixes[1].lesson
        == ("When `pytest` fails with `ImportError: cannot import name 'x'`, fix `x.py` and rerun")
    )
    assert [c.id for c in fixes[1].between] == ["d"]


def test_a_fix_by_another_command_in_between(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "python app.py"}),
                result(
                    "a",
                    'Exit code 1\nTraceback (most recent call last):\n  File "app.py", line 1\n'
                    "ModuleNotFoundError: No module named 'requests'",
                    True,
                ),
                use("b", "Bash", {"command": "pip install requests"}),
                result("b", "Successfully installed requests-2.32.3"),
                use("c", "Bash", {"command": "python app.py"}),
                result("c", "ok"),
            ],
        )
    )
    (fix,) = t.error_fixes()
    assert fix.lesson == (
        "When `python app.py` fails with `ModuleNotFoundError: No module named "
        "'requests'`, run `pip install requests` first"
    )
    assert fix.fixed_by == "pip install requests"


def test_a_step_that_changes_something_is_the_fix_and_one_that_only_looks_is_not(tmp_path):
    denied = "fatal: Authentication failed for 'https://git.example.com/app.git'"
    for step, remedy in (
        (
            "git remote set-url origin git@git.example.com:app.git",
            "run `git remote set-url origin git@git.ex…` first",
        ),
        (
            "git config user.email dev@example.com",
            "run `git config user.email dev@example.com` first",
        ),
        ("git remote -v", "rerunning it worked"),
        ("git config user.email", "rerunning it worked"),
        ("git log -3 | tee log.txt", "run `git log -3 | tee log.txt` first"),
        ("export GIT_ASKPASS=/usr/bin/true", "run `export GIT_ASKPASS=/usr/bin/true` first"),
        (
            "echo machine git.example.com >> ~/.netrc",
            "run `echo machine git.example.com >> ~/.netrc` first",
        ),
        ("echo retrying", "rerunning it worked"),
        ("cd ~/app && git status", "rerunning it worked"),
        ("cat ~/.gitconfig 2>/dev/null", "rerunning it worked"),
    ):
        t = read(
            write(
                tmp_path / "t.jsonl",
                bash_calls(
                    ("git push", denied, True),
                    ("git push", denied, True),
                    (step, "", False),
                    ("git push", "Everything up-to-date", False),
                ),
            )
        )
        (lesson,) = {f.lesson for f in t.error_fixes()}  # (both failures: one lesson)
        assert lesson.startswith("When `git push` fails with `fatal: Authentication failed")
        assert lesson.endswith(f"`, {remedy}"), (step, lesson)


def test_a_run_of_the_same_program_that_only_looks_is_no_success_of_the_failed_one(tmp_path):
    dirty = "error: Dirty database version 17. Fix and force version."
    t = read(
        write(
            tmp_path / "t.jsonl",
            bash_calls(
                ("migrate -path db up", dirty, True),
                ("migrate -path db version", "17 (dirty)", False),
                ("migrate -path db force 16", "", False),
                ("migrate -path db up", "17/u add_index", False),
            ),
        )
    )
    [fix] = t.error_fixes()
    assert fix.fix.subject == "migrate -path db force 16", "not the `version` that only looked"
    assert fix.lesson.endswith("`, run `migrate -path db force 16` instead"), fix.lesson
    # a failed look is fixed by the next look that works
    t = read(
        write(
            tmp_path / "t.jsonl",
            bash_calls(
                ("migrate -path db version", "error: no such file", True),
                ("migrate -path db version", "16", False),
            ),
        )
    )
    assert [f.fix.subject for f in t.error_fixes()] == ["migrate -path db version"]


def test_a_compound_command_that_worked_pairs_with_the_failure_of_its_later_step(tmp_path):
    init = 'Error: Backend initialization required, please run "terraform init"'
    refused = "Error: could not connect to server: connection refused"
    charge = "stripe.error.AuthenticationError: No API key provided."
    for steps, remedy in (
        (
            (
                ("terraform plan -out=tfplan", init, True),
                ("terraform plan", init, True),
                (
                    "cd infra && terraform init -input=false && terraform plan -out=tfplan",
                    "ok",
                    False,
                ),
            ),
            "run `terraform init -input=false` first",
        ),
        (
            (
                ("uv run alembic upgrade head", refused, True),
                (
                    "docker compose up -d db && uv run alembic upgrade head",
                    "Running upgrade",
                    False,
                ),
            ),
            "run `docker compose up -d db` first",
        ),
        (
            (
                ("uv run python scripts/charge.py", charge, True),  # $(...) stays one word
                (
                    "STRIPE_API_KEY=$(op read op://dev/stripe/key | head -1) uv run python "
                    "scripts/charge.py",
                    "charged",
                    False,
                ),
            ),
            "run `STRIPE_API_KEY=$(op read o…` instead",
        ),
    ):
        t = read(write(tmp_path / "t.jsonl", bash_calls(*steps)))
        lessons = {f.lesson for f in t.error_fixes()}
        assert len(lessons) == 1 and lessons.pop().endswith(f"`, {remedy}"), (steps, lessons)


def bash_calls(*steps, prefix="c"):
    """Events for Bash calls (ids c0, c1...): (command, output, failed)."""
    events = []
    for n, (command, output, failed) in enumerate(steps):
        events += [
            use(f"{prefix}{n}", "Bash", {"command": command}),
            result(f"{prefix}{n}", f"Exit code 1\n{output}" if failed else output, failed),
        ]
    return events


VITEST = (
    "Error: Cannot find module 'vitest'\nRequire stack:\n- /home/dev/app/node_modules/.bin/vitest"
)


def test_a_rerun_after_a_fix_names_what_ran_in_between_once(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            bash_calls(
                ("pnpm test", VITEST, True),
                ("pnpm test -- --run", VITEST.replace("/home/dev", "/srv/ci"), True),
                ("pnpm add -D vitest", "Packages: +42\nDone in 3.1s", False),
                ("pnpm test", "Tests  18 passed (18)", False),
            ),
        )
    )
    fixes = t.error_fixes()
    assert [(f.error.id, f.fix.id) for f in fixes] == [("c0", "c3"), ("c1", "c3")]
    # one lesson for the one error, naming the real fix, never the failing command itself
    assert {f.lesson for f in fixes} == {
        "When `pnpm test` fails with `Error: Cannot find module 'vitest'`, run `pnpm add -D vitest` "
        "first"
    }
    assert {f.fixed_by for f in fixes} == {"pnpm add -D vitest"}
    assert fixes[0].normalized == fixes[1].normalized == "error: cannot find module <q>"


def test_a_rerun_from_another_directory_spelling_is_still_a_rerun(tmp_path):
    tb = (
        'Traceback (most recent call last):\n  File "/p/orders/worker.py", line 12\n'
        "ModuleNotFoundError: No module named 'orders_core'"
    )
    t = read(
        write(
            tmp_path / "t.jsonl",
            bash_calls(
                ("cd /home/dev/zephyr && python -m orders.worker", tb, True),
                ("python -m orders.api --port 8081", tb, True),
                (
                    "pip install -e packages/orders_core",
                    "Successfully installed orders_core-0.3.1",
                    False,
                ),
                ("python -m orders.worker", "worker ready on queue orders.high", False),
            ),
        )
    )
    (fix,) = t.error_fixes()
    assert fix.lesson == (
        "When `orders.worker` fails with `No module named 'orders_core'`, run "
        "`pip install -e packages/orders_core` first"
    )
    assert fix.fixed_by == "pip install -e packages/orders_core"
    assert "<q>" not in fix.lesson and fix.normalized == "modulenotfounderror: no module named <q>"


def test_a_different_command_that_succeeds_replaces_the_failing_one(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            bash_calls(
                ("pytest", "ERROR: file or directory not found: tests", True),
                ("cd backend && pytest", "12 passed in 0.3s", False),
                ("make build --bogus", "make: unrecognized option '--bogus'", True),
                ("make build", "done", False),
                ("curl -sf http://localhost:8080/health", "curl: (7) Failed to connect", True),
                ("curl -sf http://localhost:8080/health", "ok", False),
            ),
        )
    )
    assert [f.lesson for f in t.error_fixes()] == [
        "When `pytest` fails with `ERROR: file or directory not found: tests`, run "
        "`cd backend && pytest` instead",
        "When `make build` fails with `make: unrecognized option '--bogus'`, run `make build` "
        "instead",
        "When `curl` fails with `curl: (7) Failed to connect`, rerunning it worked",
    ]


def test_a_long_error_line_is_shown_trimmed_and_readable(tmp_path):
    line = (
        "ERROR 2002 (HY000): Can't connect to local MySQL server through socket "
        "'/var/run/mysqld/mysqld.sock' (2)"
    )
    t = read(
        write(
            tmp_path / "t.jsonl",
            bash_calls(
                ("mysql orders -e 'select 1'", line, True),
                ("mysql -h 127.0.0.1 --protocol=tcp orders -e 'select 1'", "1", False),
            ),
        )
    )
    (fix,) = t.error_fixes()
    assert len(fix.lesson) <= 120 and "<" not in fix.lesson
    assert fix.lesson.startswith("When `mysql` fails with `ERROR 2002 (HY000): Can't connect to")
    assert fix.lesson.endswith("` instead") and "\u2026`, run `mysql -h 127.0.0.1" in fix.lesson


def test_a_correction_pairs_with_the_call_it_is_about_or_none(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "Check the env."),
                *bash_calls(
                    ("pip install requests", "Successfully installed requests", False),
                    ("python scripts/flush.py", "RuntimeError: lock held", True),
                    ("python scripts/flush.py --force", "RuntimeError: lock held", True),
                ),
                event("user", "No, that's wrong - use httpx instead of requests."),
                *bash_calls(
                    ("python scripts/flush.py --force", "RuntimeError: lock held", True), prefix="d"
                ),
                event("user", "No, that's wrong - use uv instead of pip."),
                use(
                    "e", "Edit", {"file_path": "/p/a.py", "old_string": "x", "new_string": "    y"}
                ),
                result("e", "The file /p/a.py has been updated."),
                *bash_calls(("ruff check .", "All checks passed!", False), prefix="f"),
                event("user", "No, use tabs not spaces."),
                *bash_calls(("ls", "a.py", False), prefix="g"),
                event("user", "That's wrong."),
            ],
        )
    )
    found = [
        (c.feedback.lesson, c.corrected.subject if c.corrected else None) for c in t.corrections()
    ]
    assert found == [
        # an earlier call of the turn that names the package, not the latest unrelated one
        ("Use httpx instead of requests", "pip install requests"),
        # nothing in the turn is about pip
        ("Use uv instead of pip", None),
        # a code-style correction is about the latest edit
        ("Use tabs, not spaces", "/p/a.py"),
        # a bare "that's wrong" names nothing: the latest call
        ("", "ls"),
    ]


def test_results_before_their_call_and_repeated_calls(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                result("a", "Exit code 2\nmake: *** [all] Error 2", True),
                use("a", "Bash", {"command": "make"}),
                use("a", "Bash", {"command": "make"}),
                result("a", "fine"),
            ],
        )
    )
    assert len(t.calls) == 1 and t.calls[0].is_error
    assert t.calls[0].errors[0].line == "make: *** [all] Error 2"


def test_a_correction_without_a_call_since_the_previous_prompt(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "Create the config loader."),
                use("a", "Write", {"file_path": "/p/config.py", "content": "x = 1"}),
                result("a", "File created successfully at: /p/config.py"),
                event("user", "No, put the config in pyproject.toml."),
                event("assistant", [{"type": "text", "text": "Done."}]),
                event("user", "never use global state"),
                event("user", [{"type": "text", "text": "that's wrong"}]),
            ],
        )
    )
    found = [
        (c.feedback.kind, c.feedback.lesson, c.corrected.id if c.corrected else None)
        for c in t.corrections()
    ]
    assert found == [
        ("correction", "Put the config in pyproject.toml", "a"),
        ("correction", "", None),
    ]


def test_meta_and_injected_user_events_are_not_prompts(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "<command-name>/model</command-name>\n<command-args></command-args>"),
                event("user", "<local-command-stdout>Set model to opus</local-command-stdout>"),
                event(
                    "user", "Caveat: The messages below were generated by the user while running"
                ),
                event("user", "hidden", isMeta=True),
                event(
                    "user",
                    "This session is being continued from a previous conversation that ran "
                    "out of context.",
                    isCompactSummary=True,
                ),
                event(
                    "user", [{"type": "text", "text": "[Request interrupted by user for tool use]"}]
                ),
                event("user", "<system-reminder>ctx</system-reminder>\nreal question here"),
                event(
                    "user", [{"type": "image", "source": {}}, {"type": "text", "text": "see image"}]
                ),
                {"type": "system", "content": "x", "uuid": "s"},
                {"type": "summary", "summary": "y"},
                {"type": "queue-operation", "operation": "enqueue", "content": "never push"},
                {"type": "user", "message": "error"},
                {"type": "assistant", "message": {"content": 5}},
                {"type": "user", "message": {"content": [None, 5, {"type": "tool_result"}]}},
            ],
        )
    )
    assert [p.text for p in t.prompts] == ["real question here", "see image"]
    assert t.skipped_lines == 0


def test_missing_unreadable_and_empty_inputs(tmp_path):
    for path in [tmp_path / "missing.jsonl", tmp_path, "", "\x00bad"]:
        t = read(path)
        assert (t.calls, t.prompts, t.skipped_lines) == ([], [], 0)
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert read(tmp_path / "empty.jsonl").calls == []
    (tmp_path / "noise.jsonl").write_bytes(b"\xff\xfe\x00\n{\n}\n\n" + b"\x80" * 100)
    assert read(tmp_path / "noise.jsonl").skipped_lines == 4


def test_a_huge_line_is_skipped_without_reading_it_whole(tmp_path):
    path = tmp_path / "huge.jsonl"
    with path.open("wb") as f:
        f.write(json.dumps(event("user", "before")).encode() + b"\n")
        f.write(b'{"type": "user", "message": {"role": "user", "content": "')
        for _ in range(24):
            f.write(b"x" * 1_000_000)
        f.write(b'"}}\n')
        f.write(json.dumps(event("user", "after")).encode())  # no final newline
    tracemalloc.start()
    t = read(path, max_line_bytes=2_000_000)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert [p.text for p in t.prompts] == ["before", "after"] and t.skipped_lines == 1
    print(f"peak memory reading a 24 MB line: {peak / 1e6:.1f} MB")
    assert peak < 12_000_000


# ------------------------------------------------------------------------------------------
# secrets never survive


def test_planted_secrets_never_appear_in_any_field(tmp_path):
    alnum = string.ascii_letters + string.digits
    anthropic = "sk-ant-api03-" + "".join(secrets.choice(alnum + "_-") for _ in range(93)) + "AA"
    github = "ghp_" + "".join(secrets.choice(alnum) for _ in range(36))
    password = "Tr0ub4dor" + "".join(secrets.choice(alnum) for _ in range(8))
    text = (OWN / "secrets_template.jsonl").read_text()
    text = (
        text.replace("{{ANTHROPIC_KEY}}", anthropic)
        .replace("{{GITHUB_TOKEN}}", github)
        .replace("{{PASSWORD}}", password)
    )
    path = tmp_path / "secrets.jsonl"
    path.write_text(text)
    t = read(path)
    assert len(t.calls) == 4 and len(t.prompts) == 2
    assert t.calls[0].is_error and t.calls[3].is_error
    everything = list(strings(t)) + list(strings(t.error_fixes())) + list(strings(t.corrections()))
    assert t.error_fixes() and t.corrections()
    for secret in (anthropic, github, password):
        for piece in (secret, secret[-16:], secret[4:20]):
            leaks = [s for s in everything if piece in s]
            assert leaks == [], (piece, leaks[:2])
    joined = "\n".join(everything)
    assert "[REDACTED:anthropic-api-key]" in joined and "[REDACTED:github-token]" in joined
    assert "[REDACTED:password]" in joined


# ------------------------------------------------------------------------------------------
# speed


def _big_transcript(path: Path, target: int) -> int:
    source = "".join(
        f"def f{i}(x):\n    if x is None:\n        raise ValueError('Error: bad {i}')\n"
        f"    return x + {i}\n"
        for i in range(250)
    )
    fixture = SESSION.read_bytes().splitlines()
    size, k = 0, 0
    with path.open("wb") as f:
        while size < target:
            k += 1
            events = [
                event("user", f"Please look at module {k} and fix the failing test"),
                use(f"r{k}", "Read", {"file_path": f"/p/m{k}.py"}),
                result(
                    f"r{k}",
                    source,
                    toolUseResult={
                        "type": "text",
                        "file": {"filePath": f"/p/m{k}.py", "content": source},
                    },
                ),
                use(f"b{k}", "Bash", {"command": f"pytest -q tests/test_m{k}.py"}),
                result(f"b{k}", "." * 40 + "\n40 passed in 0.5s"),
            ]
            lines = [json.dumps(e).encode() for e in events]
            if k % 10 == 0:  # now and then a session full of failures
                lines += [line.replace(b"toolu_", b"toolu_%d_" % k) for line in fixture]
            for line in lines:
                f.write(line + b"\n")
                size += len(line) + 1
    return size


def test_a_10_mb_transcript_reads_fast(tmp_path):
    path = tmp_path / "big.jsonl"
    size = _big_transcript(path, 10_000_000)
    start = time.perf_counter()
    t = read(path)
    elapsed = time.perf_counter() - start
    start = time.perf_counter()
    fixes, corrections = t.error_fixes(), t.corrections()
    pairing = time.perf_counter() - start
    print(
        f"read {size / 1e6:.1f} MB: {elapsed:.3f} s, {len(t.calls)} calls, "
        f"{len(t.prompts)} prompts; pairing {pairing:.3f} s "
        f"({len(fixes)} fixes, {len(corrections)} corrections)"
    )
    assert len(t.calls) > 500 and fixes and corrections
    assert elapsed < 5


def test_a_refused_call_is_neither_a_failure_nor_a_fix_and_what_the_user_said_is_its_reason(
    tmp_path,
):
    refusal = (
        "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
        "if it was a file edit, the new_string was NOT written to the file). To tell you how "
        "to proceed, the user said:\nno, don't use sudo for this"
    )
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "npm install -g pnpm"}),
                result("a", "Exit code 243\nnpm ERR! code EACCES", True),
                use("b", "Bash", {"command": "sudo npm install -g pnpm"}),
                result("b", refusal, True),
                use("c", "Bash", {"command": "npm install -g pnpm --prefix ~/.local"}),
                result("c", "added 1 package"),
            ],
        )
    )
    refused = t.calls[1]
    assert refused.rejected and not refused.is_error and refused.errors == []
    assert [(f.error.id, f.fix.id) for f in t.error_fixes()] == [("a", "c")]
    # what the user said is the rejection's reason, about the refused call (not a prompt)
    assert [(x.kind, x.text, x.about) for x in t.said] == [
        ("rejection", "no, don't use sudo for this", "sudo npm install -g pnpm")
    ]
    assert [(c.feedback.lesson, c.corrected.id) for c in t.corrections()] == [
        ("Don't use sudo for this", "b")
    ]


_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=30)
    | st.sampled_from(
        [
            "user",
            "assistant",
            "tool_use",
            "tool_result",
            "text",
            "Bash",
            "Read",
            "a",
            "b",
            "Exit code 1\nerror: x",
            "<command-name>x</command-name>",
            "never push to main",
        ]
    )
)
any_json = st.recursive(
    _leaf,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "id",
                    "name",
                    "input",
                    "tool_use_id",
                    "is_error",
                    "text",
                    "isSidechain",
                    "uuid",
                    "parentUuid",
                    "toolUseResult",
                    "stdout",
                    "stderr",
                    "command",
                    "file_path",
                    "isMeta",
                    "agentId",
                    "timestamp",
                ]
            ),
            children,
            max_size=6,
        )
    ),
    max_leaves=25,
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(any_json, max_size=12), st.binary(max_size=64))
def test_random_content_never_raises(tmp_path, events, noise):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(json.dumps(e).encode() for e in events) + b"\n" + noise)
    t = read(path, max_line_bytes=200)
    t.error_fixes()
    t.corrections()
    for call in t.calls:
        assert isinstance(call.input, dict) and len(call.result) <= 2000
