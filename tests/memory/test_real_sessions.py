"""Issue 17: what real Claude Code sessions say, as they say it — the user's own phrasing, the
structured feedback in transcripts (rejection reasons, AskUserQuestion answers, interrupts,
commands the user ran), PostToolUseFailure, and error lessons credited only with evidence.
Each rule has look-alike negatives: precision comes first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lessonloop.integrations import claude_code
from lessonloop.memory import facts, session_lessons
from lessonloop.memory.conclusions import plain
from lessonloop.memory.diagnosed import diagnosed_changes
from lessonloop.memory.diagnosis import explanations, in_brief
from lessonloop.memory.feedback import prompt_feedback
from lessonloop.memory.transcript import read

from ..conftest import settle_captures, subprocess_env
from .test_transcript import event, result, use, write


def lessons(prompt: str, corrected: bool = False) -> list[tuple[str, str]]:
    return [(f.kind, f.lesson) for f in prompt_feedback(prompt, corrected=corrected)]


# -------------------------------------------------------------------------------------------
# the user's own phrasing (each from a real session, then look-alikes that are no lesson)

RUST_PORT = (
    "Port this Python project to Rust. Create a standalone Rust library (no Python "
    "bindings needed). Delete all the Python source files when you're done (but keep the "
    "Justfile - update it to run Rust tests instead). Don't stop until all functions are "
    "ported, tests pass, and you have 100% coverage. You can ask me questions if you need "
    "clarification."
)


@pytest.mark.parametrize(
    "prompt, expected",
    [
        ("ok, fine, let's do vite", ("decision", "Use vite")),
        ("yes please, and let's make it cross-browser", ("decision", "Make it cross-browser")),
        ("Let's also Migrate to AudioWorklet", ("decision", "Migrate to AudioWorklet")),
        ("let's switch to uv for this repo", ("decision", "Switch to uv for this repo")),
        (
            "I have both Node and Python, but I don't want to make it only work for me or make "
            "assumptions about people's env. Would there be a cross-platform solution?",
            ("preference", "Don't make it only work for me or make assumptions about people's env"),
        ),
        (
            "So I'd like to keep it the same 3 simple files, but add the features from the TODOs",
            ("preference", "Keep it the same 3 simple files"),
        ),
        ("we want to keep the public API stable", ("preference", "Keep the public API stable")),
        (
            "Let's keep the name of the py file but change the pyproject script to reference it, "
            "otherwise gtg",
            ("decision", "Keep the name of the py file"),
        ),
        ("no Python bindings needed", ("decision", "No Python bindings needed")),
        (
            "Also, I deleted config.ru, as a first step let's figure out how to serve it",
            ("fact", "`config.ru` was deleted by the user"),
        ),
        (
            "Work on bead spotter-fum. Run bd ready to find available subtasks.",
            ("rule", "Run `bd ready` to find available subtasks"),
        ),
        (
            "So the Github link is https://github.com/o/r/blob/main/t.html and the v3 upgrade is "
            "already done, otherwise all good",
            ("fact", "The v3 upgrade is already done"),
        ),
        (
            "So the Github link is https://github.com/o/r/blob/main/t.html and the v3 upgrade is "
            "already done",
            ("fact", "The Github link is https://github.com/o/r/blob/main/t.html"),
        ),
        (
            "scrolling back in xterm.js still does not work (maybe because outer web catches it)? "
            "websearch xterm.js tmux interactions",
            ("fact", "Open problem: scrolling back in xterm.js still does not work"),
        ),
        # (real-sessions-2, ccl-claude-code-log-sample-71c9afe9: a revised choice, then the rule)
        (
            "Please have a look at this patch diff, I changed my mind a bit about it and would like to "
            "combine the logic: take the least nested path first, but take the latest if there are "
            "equal depths.\\",
            (
                "decision",
                "Take the least nested path first, but take the latest if there are equal depths",
            ),
        ),
        (
            "We've changed our minds: keep the old endpoint until v2 ships",
            ("decision", "Keep the old endpoint until v2 ships"),
        ),
        # (real-sessions-4, drmaciver-python-to-rust-port: a task's rules in asides and its end)
        (RUST_PORT, ("decision", "No Python bindings needed")),
        (RUST_PORT, ("rule", "Keep the Justfile; update it to run Rust tests instead")),
        (
            RUST_PORT,
            (
                "rule",
                "The work is done only when all functions are ported, tests pass, and "
                "you have 100% coverage",
            ),
        ),
        ("Keep the tests passing", ("rule", "Keep the tests passing")),
        # (real-sessions-5, ccl-claude-code-log-sample-89488521: a step dropped, a way chosen)
        (
            "now we have cache so we should change TUI that it launches the session HTML page "
            "rather than regenerating it. also we don't need to check for the existence of the "
            "file, let's just launch it.",
            (
                "decision",
                "Change TUI that it launches the session HTML page rather than regenerating it",
            ),
        ),
        (
            "also we don't need to check for the existence of the file, let's just launch it.",
            ("decision", "Don't check for the existence of the file, just launch it"),
        ),
        (
            "You don't need to add type hints to the tests.",
            ("decision", "Don't add type hints to the tests"),
        ),
        ("we don't need to pin the version, just saying", ("decision", "Don't pin the version")),
        (
            "Edit plan to NOT mention Instructor in the CLAUDE.md file. Use Instructor as a "
            "model example, that's all.",
            ("correction", "Don't mention Instructor in the CLAUDE.md file"),
        ),
        (
            "Refactor @tests/daytona_sandbox_test.mts and @tests/pr_creation_test.mts to use "
            "Vitest (https://vitest.dev/) as the standardized testing framework.",
            ("decision", "Use Vitest as the standardized testing framework"),
        ),
        (
            "analyze the @CLAUDE_exmpl.md and apply the sussinct structure pattern of it to my "
            "main @CLAUDE.md file",
            ("preference", "Keep CLAUDE.md succinct"),
        ),
        (
            "Check @CLAUDE.md I think there are repetitive OOP architecture rules in there, see "
            "if you can sharpen it so it is non-repetitive, succint.",
            ("preference", "Keep CLAUDE.md succinct and non-repetitive"),
        ),
        (
            "Make sure the DB is migrated or the tests won't work",
            ("fact", "Ensure the DB is migrated, or the tests will not work"),
        ),
        (  # spicebench fcdfff1b (set 18): a request, then a rule for it after a comma
            "make a PR, don't mention claude",
            ("correction", "Don't mention claude"),
        ),
        (  # spicebench a3b60c46 (set 18)
            "commit this. Make PR with details to user to know what they need to make. Do not "
            "coauthor with claude",
            ("correction", "Don't coauthor with claude"),
        ),
        (  # cipher-box e895bc3d (set 16): where the services the project needs run
            "ok can you start the dev server - redis and postgres are running on 192.168.133.114.",
            ("fact", "Redis and postgres run on 192.168.133.114"),
        ),
        ("The database runs on port 5433.", ("fact", "The database runs on port 5433")),
        (  # cipher-box e895bc3d (set 16)
            "can you first kill all api and web server instances and start things off on a "
            "clean slate? do not restart ngrok as the url is stable and already wired up on "
            "w3auth dashboard.",
            (
                "correction",
                "Don't restart ngrok as the url is stable and already wired up on w3auth dashboard",
            ),
        ),
        (  # napoli cae98e19: a pasted plan, in Markdown's bold
            "**Decision: Use `appendFile` for simplicity** — write each line to the log "
            "file as it arrives.",
            (
                "decision",
                "Use `appendFile` for simplicity — write each line to the log file as it arrives",
            ),
        ),
    ],
)
def test_real_phrasing_is_a_lesson(prompt, expected):
    assert expected in lessons(prompt), lessons(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "let's do it",
        "we don't need to run the tests now",
        "we don't need to worry about that",
        "we don't need to do this",
        "let's do the tests",
        "let's do this properly",
        "ok, let's do that",
        "let's make it work",
        "let's make it faster",
        "let's make it pretty",
        "let's keep going",
        "let's keep it",
        "let's keep in mind the deadline",
        "let's move to the next step",
        "let's switch to the other file",
        "Let's update readme with the working reinstall",
        "let's figure out what would be the simplest way to serve it up on localhost",
        "I want to fix the bug in the parser",
        "I would like to fix that",
        "I'd like to use it here",
        "I don't want to lose this",
        "I don't want to do that now",
        "no changes needed",
        "no worries needed",
        "no further action needed",
        "I removed foo.py from the import list",
        "I deleted it",
        "I renamed the variable",
        "run the tests to see if it works",
        "run it to check that",
        "Run pytest to check the fix",
        "Use tabs.",
        "use pnpm",  # a bare imperative in a prompt is the task at hand
        'Add a `<details>` element with the title "Implementation details"',
        "Can you list, in 5 bullet points, what are the strengths of this proposal?",
        "I very much like this idea, and I used it already with some success in the clmail project.",
        "I actually don't like much this idea, and I somewhat struggled with it.",
        "it still does not work",
        "Does the login still not work?",
        "I still don't know why it does not work",
        "the fix is already done?",
        "the link is here",
        "the tests are already passing",
        "this is already done",
        "the docs are at docs/index.md",
        "it is running on localhost:3000",  # a pronoun: what runs there is in the conversation
        "make a PR, don't merge it yet",  # this turn's
        "the app is running on localhost:3000 now?",
        # a revised mind without the rule after a colon, someone else's mind, a question
        "keep going",
        "Keep this in mind",
        "keep track of the ids",
        "Keep the same structure.",
        "keep it simple (as before)",
        "Do not stop until it works",
        "don't stop until I say so",
        "Wait until the build (the slow one) is done",
        "Create a standalone library (Rust)",
        "I changed my mind and would like to see the tests first",
        "I changed my mind.",
        "You changed my mind: the tests are fine as they are",
        "I changed my mind: why not?",
        "Have you changed your mind: is it done?",
        "I changed my mind about it: maybe try later",
        # a tool as this one value's default, a capital "NOT" that is no request
        "use this as the default library",
        "Use 5 as the default value",
        "I do NOT like this",
        # the instructions file read, or asked about, not rewritten
        "read CLAUDE.md and give me a concise summary",
        "make the README concise",
        "make sure it is fast or it won't work",
    ],
)
def test_look_alikes_are_no_lesson(prompt):
    assert lessons(prompt) == []


def test_a_rejection_reason_is_read_as_a_correction_so_an_imperative_counts():
    assert lessons("use pnpm", corrected=True) == [("correction", "Use pnpm")]
    assert lessons("use pnpm") == []  # in a prompt, "use X" alone is the task
    assert lessons("no", corrected=True) == [] and lessons("not now", corrected=True) == []


def test_lessons_are_whole_sentences_within_120_characters():
    long = "let's keep " + " ".join(["the"] * 5) + " " + "x" * 130
    assert lessons(long) == []
    for prompt in [
        "I don't want to make it only work for me or make assumptions about people's "
        "env, or about which shell, editor, package manager, OS or browser they use, "
        "and so on and so forth"
    ]:
        for _, lesson in lessons(prompt):
            assert len(lesson) <= 120 and "\u2026" not in lesson


# -------------------------------------------------------------------------------------------
# structured feedback in the transcript

REFUSED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if "
    "it was a file edit, the new_string was NOT written to the file). The user provided "
    "the following reason for the rejection:  use pnpm"
)


def test_a_rejection_reason_an_answer_and_a_typed_command_are_read(tmp_path):
    questions = [
        {
            "question": "Which rig do these beads belong to?",
            "header": "Rig prefix",
            "options": [
                {"label": "spotter", "description": "Use 'spotter'"},
                {"label": "No rig", "description": "Don't use a rig prefix"},
            ],
            "multiSelect": False,
        }
    ]
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "<bash-input>uv run ty check</bash-input>"),
                event(
                    "user",
                    "<bash-stdout>All checks passed!</bash-stdout><bash-stderr></bash-stderr>",
                ),
                use("a", "Bash", {"command": "npm install"}),
                result("a", REFUSED, True),
                use("q", "AskUserQuestion", {"questions": questions}),
                result(
                    "q",
                    'User has answered your questions: "Which rig do these beads belong to?"='
                    '"No rig". You can now continue with the user\'s answers in mind.',
                    toolUseResult={
                        "questions": questions,
                        "answers": {"Which rig do these beads belong to?": "No rig"},
                    },
                ),
                use(
                    "r",
                    "AskUserQuestion",
                    {"questions": [{"question": "Which tools?", "options": []}]},
                ),
                result(
                    "r",
                    'User has answered your questions: "Which tools?"="Credo + Dialyxir". '
                    "You can now continue.",
                ),
            ],
        )
    )
    said = [(s.kind, s.text, s.about, s.header, s.detail) for s in t.said]
    assert said == [
        ("command", "uv run ty check", "", "", ""),
        ("rejection", "use pnpm", "npm install", "", ""),
        (
            "answer",
            "No rig",
            "Which rig do these beads belong to?",
            "Rig prefix",
            "Don't use a rig prefix",
        ),
        ("answer", "Credo + Dialyxir", "Which tools?", "", ""),
    ]
    assert t.prompts == []  # none of these is a prompt the user typed
    assert not any(c.is_error for c in t.calls)
    found = [(c.kind, c.summary) for c in session_lessons.from_said(t)]
    assert found == [
        ("observation", "Type-check with `uv run ty check`"),
        ("preference", "Use pnpm"),
        ("decision", "Rig prefix: No rig (Don't use a rig prefix)"),
        ("decision", "Which tools: Credo + Dialyxir"),
    ]


def test_a_message_typed_while_a_tool_ran_is_read_beside_its_result(tmp_path):
    """Claude Code puts a message the user sends during a tool call in the tool result's user
    message, as a text block after the result (napoli-matcha 4efcdcef): no UserPromptSubmit
    fires for it, so the transcript is where it is read."""
    said = "Edit plan to NOT mention Instructor in the CLAUDE.md file."
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("e", "Edit", {"file_path": "CLAUDE.md", "old_string": "a", "new_string": "b"}),
                event(
                    "user",
                    [
                        {"type": "tool_result", "tool_use_id": "e", "content": "updated"},
                        {"type": "text", "text": said},
                    ],
                    toolUseResult={"filePath": "CLAUDE.md"},
                ),
            ],
        )
    )
    assert [p.text for p in t.prompts] == [said]
    assert t.calls[0].completed and not t.calls[0].is_error


def test_a_command_the_user_ran_that_failed_is_no_way_to_run_the_tests(tmp_path):
    """napoli-matcha b597dabb: the user's own `npx vitest` printed "No test files found,
    exiting with code 1"; "Run the tests with `npx vitest`" would teach the failing way."""
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "<bash-input>npx vitest</bash-input>"),
                event(
                    "user",
                    "<bash-stdout>\n RUN v4.0.18\n</bash-stdout><bash-stderr>\x1b[31mNo test "
                    "files found, exiting with code 1\n\x1b[39m</bash-stderr>",
                ),
                event("user", "<bash-input>uv run pytest</bash-input>"),
                event("user", "<bash-stdout>3 passed</bash-stdout><bash-stderr></bash-stderr>"),
            ],
        )
    )
    assert [(s.text, s.detail) for s in t.said] == [
        ("npx vitest", "exiting with code 1"),
        ("uv run pytest", ""),
    ]
    assert [c.summary for c in session_lessons.from_said(t)] == [
        "Run the tests with `uv run pytest`"
    ]
    # each is a Bash call as the agent's are, so a failure the agent then fixes is read the
    # same way, by the line that says it failed
    failed, passed = t.calls
    assert failed.input == {"command": "npx vitest"} and failed.is_error and failed.completed
    assert [e.line for e in failed.errors] == ["No test files found, exiting with code 1"]
    assert passed.completed and not passed.is_error and passed.errors == []


def test_code_in_backticks_is_quoted_as_written_when_a_summary_is_made_shorter():
    """A glob's ``**`` is no bold and its ``(c|m)`` no aside (napoli-matcha b597dabb)."""
    cause = (
        "The issue is that Vitest by default only picks up files matching the pattern "
        "`**/*.{test,spec}.?(c|m)[jt]s?(x)` (its default include), so `*_test.ts` is skipped."
    )
    brief = in_brief(plain(cause))
    assert "`**/*.{test,spec}.?(c|m)[jt]s?(x)`" in brief and "(its default" not in brief
    assert len(brief) <= 120
    assert plain("**Bold** and *it* and `a **b** *c*`") == "Bold and it and `a **b** *c*`"


def _asked(call_id: str, header: str, question: str, answer: str, options=()) -> list[dict]:
    questions = [
        {"question": question, "header": header, "options": [{"label": o} for o in options]}
    ]
    return [
        use(call_id, "AskUserQuestion", {"questions": questions}),
        result(
            call_id,
            f'User has answered your questions: "{question}"="{answer}". You can now continue.',
            toolUseResult={"questions": questions, "answers": {question: answer}},
        ),
    ]


def test_a_queued_message_handed_to_the_agent_mid_turn_is_read_once(tmp_path):
    """napoli-matcha 73c62e14 (Claude Code 2.1.39): a message typed while the agent works is
    queued; "remove" hands it to the agent mid-turn and the queue's record is all the
    transcript keeps of it, while "dequeue" delivers it as a user message of its own."""
    said = 'Ensure the status is always set as "Backlog" or the test will not work.'
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "Create a test for the PR flow"),
                {"type": "queue-operation", "operation": "enqueue", "content": said},
                {"type": "queue-operation", "operation": "remove"},
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "content": [{"type": "text", "text": "and commit it"}],
                },
                {"type": "queue-operation", "operation": "dequeue"},
                event("user", "and commit it"),
                {
                    "type": "queue-operation",
                    "operation": "enqueue",
                    "content": "<task-notification>\n<task-id>b6</task-id>\n"
                    "<status>completed</status>\n</task-notification>",
                },
                {"type": "queue-operation", "operation": "remove"},
            ],
        )
    )
    assert [p.text for p in t.prompts] == ["Create a test for the PR flow", said, "and commit it"]


def test_a_message_recorded_both_in_the_queue_and_beside_a_result_is_read_once(tmp_path):
    """Should a Claude Code version record a message handed over mid-turn both ways (the
    queue's "remove" and a text block beside the next tool result), it is one prompt."""
    said = "Edit plan to NOT mention Instructor in the CLAUDE.md file."
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                {"type": "queue-operation", "operation": "enqueue", "content": said},
                {"type": "queue-operation", "operation": "remove"},
                use("e", "Edit", {"file_path": "CLAUDE.md", "old_string": "a", "new_string": "b"}),
                event(
                    "user",
                    [
                        {"type": "tool_result", "tool_use_id": "e", "content": "updated"},
                        {"type": "text", "text": said},
                    ],
                    toolUseResult={"filePath": "CLAUDE.md"},
                ),
                event("user", said),  # typed again as a prompt of its own: read again
            ],
        )
    )
    assert [p.text for p in t.prompts] == [said, said]


def test_answers_taken_back_or_about_the_talk_itself_are_no_decision(tmp_path):
    """medgemma 527e3ccf: two Playwright answers the user took back a question later ("Wait,
    actually, I changed my mind. We don't need playwright tests."), and choices about the
    conversation ("More questions ..., or move to ...?"); the answer typed in the user's own
    words is read as they would say it in a prompt."""
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *_asked("a", "Playwright", "What env var should Playwright use?", "BASE_URL"),
                *_asked(
                    "b",
                    "Grounding",
                    "More questions about grounding, or move to orphan traces?",
                    "Next area",
                    ["Next area", "More questions"],
                ),
                *_asked("c", "Grounding", "What concurrency level?", "4 concurrent"),
                *_asked(
                    "e",
                    "Grounding",
                    "If one entity fails, should the others continue or should the batch fail?",
                    "Continue others",
                ),
                *_asked(
                    "d",
                    "Playwright",
                    "Anything else about Playwright?",
                    "Wait, actually, I changed my mind. We don't need playwright tests. "
                    "Get rid of that.",
                ),
            ],
        )
    )
    found = [(c.kind, c.summary) for c in session_lessons.from_said(t)]
    assert found == [
        ("decision", "Grounding: 4 concurrent"),
        ("decision", "Grounding: Continue others"),
        ("decision", "No playwright tests"),
    ]


def test_a_rejection_without_a_reason_and_an_interrupt_teach_nothing(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use(
                    "a", "Edit", {"file_path": "/p/CLAUDE.md", "old_string": "a", "new_string": "b"}
                ),
                result(
                    "a",
                    "The user doesn't want to take this action right now. STOP what you are "
                    "doing and wait for the user to tell you how to proceed.",
                    True,
                ),
                use("b", "Bash", {"command": "pytest -q"}),
                result("b", "[Request interrupted by user for tool use]", True),
                use(
                    "c", "Edit", {"file_path": "/p/CLAUDE.md", "old_string": "a", "new_string": "c"}
                ),
                result("c", "The file /p/CLAUDE.md has been updated."),
                use("d", "Bash", {"command": "pytest -q"}),
                result("d", "3 passed"),
            ],
        )
    )
    assert t.said == [] and not any(c.is_error for c in t.calls)
    assert t.error_lessons() == []


def test_success_is_judged_by_the_tools_own_status_not_by_words_in_its_output(tmp_path):
    output = (
        "15:18:53.671 [warning] GitLogReader: could not resolve branch\n"
        "warning: single-quoted strings represent charlists\n"
        "Finished in 0.4 seconds\n297 tests, 0 failures\n"
    )
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "mix test"}),
                result(
                    "a",
                    output,
                    toolUseResult={"stdout": output, "stderr": "", "interrupted": False},
                ),
                use("b", "Bash", {"command": "uv run ty check"}),
                result(
                    "b",
                    "WARN ty is pre-release software and not ready for production use.\n"
                    "All checks passed!",
                ),
            ],
        )
    )
    assert [(c.is_error, c.errors) for c in t.calls] == [(False, []), (False, [])]


# -------------------------------------------------------------------------------------------
# fixes credited only with evidence


def bash(call_id: str, command: str, output: str = "", failed: bool = False) -> list[dict]:
    text = f"Exit code 1\n{output}" if failed else output
    return [use(call_id, "Bash", {"command": command}), result(call_id, text, failed)]


def edit(call_id: str, path: str, old: str, new: str, error: str = "") -> list[dict]:
    return [
        use(call_id, "Edit", {"file_path": path, "old_string": old, "new_string": new}),
        result(call_id, error or f"The file {path} has been updated.", bool(error)),
    ]


def error_lessons(tmp_path, events) -> list[tuple[str, str]]:
    t = read(write(tmp_path / "t.jsonl", [e for group in events for e in group]))
    return [(x.lesson, x.detail) for x in t.error_lessons()]


def test_the_edit_that_shares_the_errors_words_is_the_fix_not_the_last_command(tmp_path):
    found = error_lessons(
        tmp_path,
        [
            bash(
                "a",
                "mix test",
                "** (RuntimeError) no :secret_key_base configuration found in MyWeb.Endpoint.",
                failed=True,
            ),
            edit(
                "b",
                "/p/config/test.exs",
                "import Config",
                'import Config\nconfig :my, MyWeb.Endpoint, secret_key_base: "test-only"',
            ),
            edit("c", "/p/lib/other.ex", "def a, do: 1", "def a, do: 2"),
            bash("d", "mix deps.get", "All dependencies are up to date"),
            bash("e", "mix test", "12 tests, 0 failures"),
        ],
    )
    assert len(found) == 1
    lesson, detail = found[0]
    assert lesson.endswith("edit `config/test.exs`") and "secret_key_base" in lesson
    assert "secret_key_base" in detail and "deps.get" not in lesson
    assert len(lesson) <= 120 and "\u2026" not in lesson


def test_several_unrelated_changes_are_ambiguous_and_give_no_lesson(tmp_path):
    assert (
        error_lessons(
            tmp_path,
            [
                bash("a", "make", "make: *** [all] Error 2", failed=True),
                edit("b", "/p/src/a.c", "int x;", "int y;"),
                bash("c", "rm -rf build"),
                bash("d", "make", "done"),
            ],
        )
        == []
    )


def test_a_rerun_that_worked_is_no_evidence_and_a_fix_the_error_names_is(tmp_path):
    assert (
        error_lessons(
            tmp_path,
            [
                bash("a", "npm test", "Error: connect ECONNREFUSED 127.0.0.1:5432", failed=True),
                bash("b", "npm test", "ok"),
            ],
        )
        == []
    )
    found = error_lessons(
        tmp_path,
        [
            bash(
                "a",
                "git commit -m x",
                "[FORMAT] Code is not formatted.\nRun 'mix format' to fix.",
                failed=True,
            ),
            bash("b", "mix format"),
            bash("c", "git add -A"),
            bash("d", "git commit -m x", "[main 1a2b3c] x"),
        ],
    )
    assert [lesson.split(", ")[-1] for lesson, _ in found] == ["run `mix format` first"]


def test_a_changed_command_is_the_fix_only_when_the_error_asked_for_it(tmp_path):
    found = error_lessons(
        tmp_path,
        [
            bash(
                "a",
                "git push",
                "fatal: The current branch feat has no upstream branch.\nTo push "
                "the current branch and set the remote as upstream, use\n\n"
                "    git push --set-upstream origin feat",
                failed=True,
            ),
            bash("b", "git push --set-upstream origin feat", "done"),
            bash(
                "c",
                "node assets/build.js",
                'Error: Build failed with 1 error:\nCould not resolve "js/app.js"',
                failed=True,
            ),
            bash("d", "cd /home/u/p/assets && node build.js", "built"),
        ],
    )
    assert [lesson.split(", run ")[-1] for lesson, _ in found] == [
        "`git push --set-upstream origin feat` instead",
        "`cd assets && node build.js` instead",
    ]
    # other arguments the error never asked for: an intended exit, not a fix
    assert (
        error_lessons(
            tmp_path,
            [
                bash(
                    "a",
                    "cd /tmp && mytool",
                    "No PR found for the current branch\nusage: mytool --help",
                    failed=True,
                ),
                bash("b", "mytool owner/repo/2", "ok"),
            ],
        )
        == []
    )


def test_tooling_errors_count_lines_and_the_test_being_written_give_no_lesson(tmp_path):
    assert (
        error_lessons(
            tmp_path,
            [
                [
                    use("a", "Bash", {"command": "npx vitest run"}),
                    result("a", "<tool_use_error>Sibling tool call errored</tool_use_error>", True),
                ],
                bash("b", "npx vitest run", "ok"),
                edit(
                    "c",
                    "/p/README.md",
                    "a",
                    "b",
                    error="File has not been read yet. Read it first before writing to it.",
                ),
                [use("d", "Read", {"file_path": "/p/README.md"}), result("d", "a")],
                edit("e", "/p/README.md", "a", "b"),
                bash("f", "mix test test/x_test.exs", "12 tests, 1 failure", failed=True),
                edit("g", "/p/test/x_test.exs", "assert a", "assert b"),
                bash("h", "mix test test/x_test.exs", "12 tests, 0 failures"),
                bash(
                    "i",
                    "mix test test/y_test.exs",
                    '** (ArgumentError) expected selector ".badge" to return a single element',
                    failed=True,
                ),
                edit("j", "/p/test/y_test.exs", '".badge"', '".subagent-badge"'),
                bash("k", "mix test test/y_test.exs", "3 tests, 0 failures"),
            ],
        )
        == []
    )


PYTEST_FAILED = (
    "test/test_cache.py::TestCache::test_version_mismatch FAILED [ 21%]\n"
    "E       AssertionError: assert '1.0.0' == '2.0.0'\n"
    "FAILED test/test_cache.py::TestCache::test_version_mismatch - AssertionError\n"
    "1 failed, 26 passed in 1.48s"
)


def test_a_pre_existing_tests_stale_expectation_is_the_fix_the_agents_own_new_test_is_not(
    tmp_path,
):
    """The failing test was in the project before the session: editing it was the fix. When
    the agent had written that test itself earlier, adjusting it is work in progress."""
    run = "uv run pytest test/test_cache.py -v"
    fix = edit("f", "/p/test/test_cache.py", "== '2.0.0'", "== '1.0.0'")
    assert error_lessons(
        tmp_path, [bash("a", run, PYTEST_FAILED, failed=True), fix, bash("b", run, "27 passed")]
    ) == [
        (
            "On `FAILED test/test_cache.py::TestCache::test_version_mismatch - AssertionError`, "
            "edit `test/test_cache.py`",
            "Edited /p/test/test_cache.py: == '1.0.0'",
        )
    ]
    longer = edit("w", "/p/test/test_cache.py", "", "def test_version_mismatch_twice():\n    ...")
    assert (
        error_lessons(  # another test whose name only begins with it: still the project's
            tmp_path,
            [longer, bash("a", run, PYTEST_FAILED, failed=True), fix, bash("b", run, "27 passed")],
        )
        != []
    )
    written = edit("w", "/p/test/test_cache.py", "", "def test_version_mismatch():\n    ...")
    assert (
        error_lessons(
            tmp_path,
            [written, bash("a", run, PYTEST_FAILED, failed=True), fix, bash("b", run, "ok")],
        )
        == []
    )


def test_an_errors_memory_names_the_tests_that_failed():
    """A real session (claude-code-log, set 11): a pre-existing test's expectation was stale."""
    session = FIXTURES / "real-sessions-11" / "ccl-claude-code-log-sample-aa5c5ada.jsonl"
    found = session_lessons.from_errors([], read(session))
    assert [(c.summary, c.content.split("\n")[0]) for c in found] == [
        (
            "When `pytest` fails with `AssertionError: assert '1.0.0' == '2.0.0'`, "
            "edit `test/test_cache.py`",
            "Error: AssertionError: assert '1.0.0' == '2.0.0' (failing: "
            "`test/test_cache.py::TestCacheManager::test_cache_invalidation_version_mismatch`)",
        )
    ]


def test_edit_failures_name_their_cause(tmp_path):
    found = error_lessons(
        tmp_path,
        [
            edit(
                "a",
                "/p/t.js",
                "a\\nb",
                "c",
                error="<tool_use_error>String to replace not found in file.</tool_use_error>",
            ),
            [use("b", "Read", {"file_path": "/p/t.js"}), result("b", "a\nb")],
            edit("c", "/p/t.js", "a\nb", "c"),
        ],
    )
    # (the error whole and the fix whole: the step's name gives way to fit 120 characters)
    assert [lesson for lesson, _ in found] == [
        "On `String to replace not found in file.`, write real newlines in `old_string`, not "
        "`\\n` escapes"
    ]
    found = error_lessons(
        tmp_path,
        [
            edit("a", "/p/u.ex", "x  = 1", "x = 2", error="String to replace not found in file."),
            [use("b", "Read", {"file_path": "/p/u.ex"}), result("b", "x = 1")],
            edit("c", "/p/u.ex", "x = 1", "x = 2"),
        ],
    )
    assert [lesson for lesson, _ in found] == [
        "When Edit on `u.ex` fails with `String to replace not found in file.`, re-read the "
        "file, then edit again"
    ]


def test_a_read_retried_with_other_arguments_names_them(tmp_path):
    found = error_lessons(
        tmp_path,
        [
            [
                use("a", "Read", {"file_path": "/p/big.jsonl"}),
                result(
                    "a",
                    "File content (85812 tokens) exceeds maximum allowed tokens (25000). Please "
                    "use offset and limit parameters to read specific portions of the file.",
                    True,
                ),
            ],
            [use("b", "Read", {"file_path": "/p/big.jsonl", "limit": 5}), result("b", "...")],
        ],
    )
    assert len(found) == 1 and found[0][0].endswith("retry with `limit: 5`")


# -------------------------------------------------------------------------------------------
# the hooks: PostToolUseFailure registered and handled, PostToolUse is a success


def hook(home: Path, event_name: str, payload: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", event_name],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=subprocess_env(home),
        timeout=60,
    )
    settle_captures(home)
    return done


def test_install_registers_post_tool_use_failure():
    assert claude_code.HOOKS["PostToolUseFailure"][:2] == ("post-tool-use-failure", "*")
    assert claude_code.HOOKS["PostToolUse"][:2] == ("post-tool-use", "*")


def test_failures_are_captured_from_post_tool_use_failure_and_never_from_a_success(home, cli):
    cli("memory", "consent", "yes")
    base = {
        "session_id": "s1",
        "cwd": str(home.parent),
        "tool_name": "Bash",
        "tool_input": {"command": "mix test"},
        "tool_use_id": "t1",
    }
    signals = home / "sessions" / "s1" / "signals.jsonl"
    done = hook(
        home,
        "post-tool-use",
        {
            **base,
            "hook_event_name": "PostToolUse",
            "tool_response": {
                "stdout": "[warning] could not resolve branch\n297 tests, 0 failures\n",
                "stderr": "",
                "interrupted": False,
            },
        },
    )
    assert done.returncode == 0 and done.stdout == b"" and not signals.exists()
    for payload in [
        {"error": "[Request interrupted by user for tool use]", "is_interrupt": True},
        {"error": "The user doesn't want to proceed with this tool use.", "is_interrupt": False},
    ]:
        hook(
            home,
            "post-tool-use-failure",
            {**base, "hook_event_name": "PostToolUseFailure", **payload},
        )
    assert not signals.exists()
    done = hook(
        home,
        "post-tool-use-failure",
        {
            **base,
            "hook_event_name": "PostToolUseFailure",
            "is_interrupt": False,
            "error": "Exit code 1\n** (RuntimeError) no :secret_key_base configuration found",
        },
    )
    assert done.returncode == 0 and done.stderr == b""
    [captured] = [json.loads(line) for line in signals.read_text().splitlines()]
    assert captured["line"].startswith("** (RuntimeError) no :secret_key_base")
    assert captured["subject"] == "mix test"


def test_a_payload_over_32_mib_is_read_whole_and_its_tail_signal_kept(home, cli):
    cli("memory", "consent", "yes")
    error = "x" * (33 * 1024 * 1024) + "\nModuleNotFoundError: No module named 'yaml'\n"
    done = hook(
        home,
        "post-tool-use-failure",
        {
            "session_id": "big",
            "cwd": str(home.parent),
            "hook_event_name": "PostToolUseFailure",
            "tool_name": "Bash",
            "tool_input": {"command": "python app.py"},
            "is_interrupt": False,
            "error": "Exit code 1\n" + error,
        },
    )
    assert done.returncode == 0 and done.stderr == b""
    lines = (home / "sessions" / "big" / "signals.jsonl").read_text().splitlines()
    assert any("No module named" in json.loads(line)["line"] for line in lines)


def test_a_lone_surrogate_in_a_payload_does_not_lose_the_capture(home, cli):
    cli("memory", "consent", "yes")
    body = (
        '{"session_id": "sur", "cwd": "%s", "hook_event_name": "UserPromptSubmit", '
        '"prompt": "From now on we use vitest instead of jest \\ud800."}' % home.parent
    )
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "hook", "user-prompt-submit"],
        input=body.encode(),
        capture_output=True,
        env=subprocess_env(home),
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == b""
    settle_captures(home)
    records = [
        json.loads(line)
        for line in (home / "sessions" / "sur" / "feedback.jsonl").read_text().splitlines()
    ]
    assert [r["lesson"] for r in records if r["type"] == "feedback"] == [
        "Use vitest instead of jest ?"
    ]
    assert [r["type"] for r in records] == ["feedback", "prompt_check"]


def test_an_open_problem_the_user_later_confirms_fixed_is_not_kept():
    reported = {
        "type": "feedback",
        "kind": "fact",
        "user_scope": False,
        "lesson": "Open problem: scrolling back in xterm.js still does not work",
        "text": "scrolling back in xterm.js still does not work",
    }
    thanks = {"type": "feedback", "kind": "confirmation", "lesson": "", "text": "perfect, works"}
    assert [c.summary for c in session_lessons.from_feedback([reported], None)] == [
        reported["lesson"]
    ]
    assert session_lessons.from_feedback([reported, thanks], None) == []


def test_an_answer_about_the_next_step_is_no_decision(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use(
                    "q",
                    "AskUserQuestion",
                    {
                        "questions": [
                            {
                                "question": "Should I proceed with the migration now?",
                                "header": "Proceed",
                                "options": [{"label": "Yes", "description": "Run it"}],
                            },
                            {
                                "question": "Which package manager should the project use?",
                                "header": "Manager",
                                "options": [{"label": "pnpm", "description": "Fast, strict"}],
                            },
                        ]
                    },
                ),
                result(
                    "q",
                    "User has answered your questions: ...",
                    toolUseResult={
                        "answers": {
                            "Should I proceed with the migration now?": "Yes",
                            "Which package manager should the project use?": "pnpm",
                        }
                    },
                ),
            ],
        )
    )
    assert [c.summary for c in session_lessons.from_said(t)] == ["Manager: pnpm (Fast, strict)"]


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        ("How do you want to generate your first checkpoint to the console?", True),  # gtm-sdk
        ("Which of these should I fix first?", False),
        ("What first?", False),
    ],
)
def test_first_makes_a_question_a_step_only_when_it_asks_for_an_order(tmp_path, question, kept):
    t = read(write(tmp_path / "t.jsonl", _asked("q", "Approach", question, "Throwaway branch")))
    assert bool(session_lessons.from_said(t)) is kept


def test_advice_lines_are_no_error_key():
    from lessonloop.memory.tool_errors import tool_errors

    found = tool_errors(
        "Bash",
        {"command": "git add a.css"},
        {
            "is_error": True,
            "content": (
                "Exit code 1\nThe following paths are ignored by one of your .gitignore files:\n"
                "priv/static/assets\nhint: Use -f if you really want to add them.\n"
                'hint: "git config advice.addIgnoredFile false"'
            ),
        },
    )
    assert [e.line for e in found] == [
        "The following paths are ignored by one of your .gitignore files:"
    ]
    found = tool_errors(
        "Bash",
        {"command": "make"},
        {"is_error": True, "content": "Exit code 2\nboom\nnote: see log"},
    )
    assert [e.line for e in found] == ["boom"]


def test_project_commands_are_learned_from_repeated_successful_use(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                e
                for group in [
                    bash("a", "mix credo --strict 2>&1 | tail -20", "no issues"),
                    bash("b", "mix credo --strict", "no issues"),
                    bash("c", "mix test", "3 tests, 0 failures"),
                    bash(
                        "d", "mix test", "3 tests, 0 failures"
                    ),  # every project's default: no fact
                    bash("e", "ruff format", "1 file reformatted"),  # once only: no fact
                    bash("f", "ruff format", "error: x", failed=True),  # a failure is no use
                    bash("i", "uv run mypy src", "Success"),  # a type-check: once is enough
                    bash("j", "uv run pytest -x", "3 passed"),  # how this project runs its tests
                    bash("k", "uv run pytest -x", "3 passed"),
                    bash("g", "git status", "clean"),
                    bash("h", "git status", "clean"),
                    [
                        use("s", "Bash", {"command": "mix phx.server", "run_in_background": True}),
                        result("s", "Command running in background with ID: 1"),
                    ],
                ]
                for e in group
            ],
        )
    )
    found = [(c.kind, c.summary) for c in facts.project_facts(t)]
    assert found == [
        ("observation", "Lint with `mix credo --strict`"),
        ("observation", "Type-check with `uv run mypy src`"),
        ("observation", "Run the tests with `uv run pytest -x`"),
        ("observation", "Start the app with `mix phx.server`"),
    ]


def test_what_a_mise_task_runs_is_read_from_its_echo():
    """entireio/cli (set 15): mise prints each task it runs ("[test] $ go test ./..."), as npm
    prints a script's command; a failed run shows it too."""
    session = FIXTURES / "real-sessions-15" / "entire-cli-59455d2e.jsonl"
    found = [c.summary for c in facts.script_facts(read(session))]
    assert found == [
        "`mise run test` runs `go test ./...`; `mise run lint` runs `golangci-lint run ./...`"
    ]
    failed_first = FIXTURES / "real-sessions-15" / "entire-cli-1ecba475.jsonl"
    assert [c.summary for c in facts.script_facts(read(failed_first))] == [
        "`mise run test` runs `go test ./...`"
    ]


def test_a_project_started_as_two_servers_is_one_fact():
    """FSM1/cipher-box (set 16): the API and the web app are started by two commands, each
    several times; one memory names both."""
    session = FIXTURES / "real-sessions-16" / "cipher-box-e895bc3d.jsonl"
    found = [c.summary for c in facts.project_facts(read(session))]
    assert found == ["Start the app with `pnpm --filter api dev` and `pnpm --filter web dev`"]


def test_what_the_user_says_after_refusing_a_call_without_a_reason_is_its_reason():
    """entireio/cli (set 15): the user refused the agent's edit of reset.go (no reason) and then
    typed "fix the test, the code is right"; cipher-box (set 16): a refusal, then "... do not
    restart ngrok as the url is stable ...". A background task's end notice after a refusal
    is Claude Code's, not the user's ("Read the output file to retrieve the result: ...")."""
    entire = read(FIXTURES / "real-sessions-15" / "entire-cli-1ecba475.jsonl")
    reasons = [(s.text, s.about.rsplit("/", 1)[-1]) for s in entire.said if s.kind == "rejection"]
    assert reasons == [("fix the test, the code is right", "reset.go")]
    assert [c.summary for c in session_lessons.from_said(entire)] == [
        "Fix the test, the code is right"
    ]
    cipher = read(FIXTURES / "real-sessions-16" / "cipher-box-e895bc3d.jsonl")
    said = [s.text for s in cipher.said if s.kind == "rejection"]
    assert len(said) == 1 and said[0].endswith("do not restart ngrok as the url is stable and "
                                               "already wired up on w3auth dashboard.")  # fmt: skip
    assert not any("Read the output file" in p.text for p in cipher.prompts)


def test_a_projects_own_test_command_and_a_single_type_check_are_facts():
    """Real sessions: claude-code-log (set 11) runs its tests with `uv run pytest`, napoli (set
    14) type-checks once with `npx tsc --noEmit`; both are how this project does it."""
    ccl = FIXTURES / "real-sessions-11"
    napoli = FIXTURES / "real-sessions-14"
    found = {
        c.summary: c.content
        for path in [*ccl.glob("*.jsonl"), *napoli.glob("*.jsonl")]
        for c in facts.project_facts(read(path))
    }
    assert "Run the tests with `uv run pytest -v`" in found
    assert "Type-check with `npx tsc --noEmit`" in found
    assert found["Type-check with `npx tsc --noEmit`"].startswith("Ran successfully 1 time(s)")


def test_the_checks_run_after_the_last_edits_are_the_projects_routine():
    """A real session (claude-code-log, set 10): after its edits the agent ran the tests, the
    type-checker, the linter and the formatter, each once, each succeeding."""
    session = FIXTURES / "real-sessions-10" / "ccl-claude-code-log-sample-07f2e15c.jsonl"
    found = facts.check_routine(read(session))
    assert [c.summary for c in found] == [
        "Checks run before finishing: `uv run pytest`, `uv run pyright`, `ruff check --fix`, "
        "`ruff format`"
    ]


def test_two_checks_a_failed_one_or_an_edit_between_make_no_routine(tmp_path):
    def routine(*groups) -> list[str]:
        t = read(write(tmp_path / "t.jsonl", [e for group in groups for e in group]))
        return [c.summary for c in facts.check_routine(t)]

    assert routine(bash("a", "mix test"), bash("b", "mix credo")) == []  # every project's habit
    assert (
        routine(
            bash("a", "mix test"),
            bash("b", "mix credo"),
            bash("c", "mix credo --strict", "1 issue", failed=True),  # the lint failed at last
            bash("d", "mix dialyzer"),
        )
        == []
    )
    assert (
        routine(
            bash("a", "mix test"),
            edit("b", "lib/a.ex", "x", "y"),  # an edit between: two stretches of two
            bash("c", "mix credo"),
            bash("d", "mix dialyzer"),
        )
        == []
    )
    other_editor = [  # another agent's edit tool, by its own name
        use("b", "str_replace_based_edit_tool", {"path": "lib/a.ex", "new_str": "y"}),
        result("b", "ok"),
    ]
    assert (
        routine(
            bash("a", "mix test"), other_editor, bash("c", "mix credo"), bash("d", "mix dialyzer")
        )
        == []
    )
    assert routine(
        bash("a", "mix test"),
        bash("b", "git status"),  # other commands do not break it
        bash("c", "mix credo"),
        bash("d", "mix dialyzer"),
    ) == ["Checks run before finishing: `mix test`, `mix credo`, `mix dialyzer`"]


@pytest.mark.parametrize(
    "command, role",
    [
        ("uv run ty check", "Type-check with `uv run ty check`"),
        ("mix phx.server", "Start the app with `mix phx.server`"),
        ("python manage.py runserver", "Start the app with `python manage.py runserver`"),
        ("cargo build --release", "Build with `cargo build --release`"),
        # the most specific name decides: `ruff format` formats though `ruff` alone lints
        ("uv run ruff format src", "Format with `uv run ruff format src`"),
        ("ruff check --fix", "Lint with `ruff check --fix`"),
        # (output filters and the files of this run go: the project's command stays)
        ("mix test test/x_test.exs 2>&1 | tail -5", "Run the tests with `mix test`"),
        ("rm -rf build", ""),
        ("echo build", ""),
        ("git status", ""),
        ("ls -la", ""),
        ("./scripts/build.sh", ""),
        ("cat test.txt", ""),
    ],
)
def test_what_a_project_command_does(command, role):
    assert facts.project_command(command) == role


REFUSED_BARE = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. "
    "if it was a file edit, the new_string was NOT written to the file). STOP what you "
    "are doing and wait for the user to tell you how to proceed."
)


def refused(call_id: str, command: str) -> list[dict]:
    return [use(call_id, "Bash", {"command": command}), result(call_id, REFUSED_BARE, True)]


def test_a_refused_command_and_the_one_that_replaced_it_and_worked(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                e
                for group in [
                    refused(
                        "a",
                        "find . -name '*.pyc' -delete; uv tool uninstall cr && "
                        "uv tool install --reinstall .",
                    ),
                    [
                        event(
                            "user",
                            "We need to find a cleaner way to reinstall without hunting for caches",
                        )
                    ],
                    bash("b", "uv tool upgrade --reinstall cr", "Updated cr"),
                ]
                for e in group
            ],
        )
    )
    assert [c.summary for c in session_lessons.from_refusals(t)] == [
        "Use `uv tool upgrade --reinstall cr`, not `uv tool install --reinstall .`"
    ]


@pytest.mark.parametrize(
    "after",
    [
        bash("b", "uv tool upgrade --reinstall cr", "error: no such tool", failed=True),  # failed
        bash("b", "pip install -e .", "ok"),  # another program: no replacement
        bash("b", "uv tool list", "cr v1"),  # only looks
        bash("b", "uv tool install --reinstall .", "ok"),  # the same step, run anyway
        [use("r", "Read", {"file_path": "/p/README.md"}), result("r", "text")],  # something else
    ],
)
def test_no_replacement_is_credited_without_evidence(tmp_path, after):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [*refused("a", "uv tool uninstall cr && uv tool install --reinstall ."), *after],
        )
    )
    assert session_lessons.from_refusals(t) == []


def test_a_success_with_a_status_code_is_no_failure(home, cli):
    cli("memory", "consent", "yes")
    hook(
        home,
        "post-tool-use",
        {
            "session_id": "web",
            "cwd": str(home.parent),
            "hook_event_name": "PostToolUse",
            "tool_name": "WebFetch",
            "tool_input": {"url": "https://example.com"},
            "tool_response": {
                "bytes": 1200,
                "code": 200,
                "codeText": "OK",
                "result": "Error handling in the docs: ...",
                "durationMs": 300,
            },
        },
    )
    assert not (home / "sessions" / "web" / "signals.jsonl").exists()
    hook(
        home,
        "post-tool-use",
        {
            "session_id": "web",
            "cwd": str(home.parent),
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "tool_response": {"stdout": "", "stderr": "make: *** [all] Error 2", "exit_code": 2},
        },
    )
    assert (home / "sessions" / "web" / "signals.jsonl").exists()  # its own status: failed


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from .test_transcript import any_json  # noqa: E402

_shapes = st.sampled_from(
    [
        {"type": "user", "message": {"content": "<bash-input>uv run ty check</bash-input>"}},
        {
            "type": "assistant",
            "message": {
                "content": [{"type": "tool_use", "id": "q", "name": "AskUserQuestion", "input": {}}]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {"type": "tool_result", "tool_use_id": "q", "content": 'answered "a"="b"'}
                ]
            },
            "toolUseResult": {"answers": {"a": ["b", 1]}, "questions": "x"},
        },
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "tool_use", "id": "r", "name": "Bash", "input": {"command": 3}}
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "r",
                        "content": REFUSED,
                        "is_error": True,
                    }
                ]
            },
        },
    ]
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.one_of(any_json, _shapes), max_size=12))
def test_random_content_never_breaks_the_new_readers(tmp_path, events):
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    t = read(path)
    for lesson in t.error_lessons():
        assert len(lesson.lesson) <= 120
    t.refused_alternatives()
    session_lessons.from_said(t)
    session_lessons.from_refusals(t)
    facts.project_facts(t)


def test_secrets_in_the_new_channels_never_reach_disk(home, cli):
    """Secrets planted in a rejection reason, an answer, a command the user typed, an error
    line and an edit that fixed it: the memories keep the lessons, never the secrets."""
    from .test_session import Session, everything_under, fresh_secrets, memories

    cli("memory", "consent", "yes")
    s = fresh_secrets()
    session = Session(home, "secret-channels", s)
    session.hook("session-start", source="startup")
    session._event(
        "user",
        {
            "role": "user",
            "content": f"<bash-input>uv run ty check --token {s['github']}</bash-input>",
        },
    )
    session._event(
        "assistant",
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "r1",
                    "name": "Bash",
                    "input": {"command": "npm install"},
                }
            ],
        },
    )
    session._event(
        "user",
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "r1",
                    "is_error": True,
                    "content": (
                        "The user doesn't want to proceed with this tool use. The tool use was rejected. The "
                        f"user provided the following reason for the rejection: use pnpm, NPM_TOKEN is "
                        f"{s['github']}"
                    ),
                }
            ],
        },
    )
    question = {
        "question": "Which API key should the app use?",
        "header": "API key",
        "options": [{"label": s["anthropic"], "description": "the new one"}],
    }
    session._event(
        "assistant",
        {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": "q1",
                    "name": "AskUserQuestion",
                    "input": {"questions": [question]},
                }
            ],
        },
    )
    session._event(
        "user",
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "q1",
                    "content": "User has answered your "
                    f'questions: "Which API key should the app use?"="{s["anthropic"]}".',
                }
            ],
        },
        toolUseResult={
            "questions": [question],
            "answers": {"Which API key should the app use?": s["anthropic"]},
        },
    )
    session.tool(
        "Bash",
        {"command": "psql -c 'select 1'"},
        {
            "stdout": "",
            "stderr": (
                f"psql: error: FATAL: password authentication failed, password={s['password']}"
            ),
        },
        is_error=True,
        result_text=f"Exit code 2\npsql: error: FATAL: password authentication "
        f"failed, password={s['password']}",
    )
    session.tool(
        "Edit",
        {
            "file_path": "/w/config/db.env",
            "old_string": "PGPASSWORD=",
            "new_string": f"PGPASSWORD={s['password']}\nAWS_SECRET_ACCESS_KEY={s['aws']}",
        },
        {"filePath": "/w/config/db.env"},
        result_text="The file has been updated.",
    )
    session.tool(
        "Bash",
        {"command": "psql -c 'select 1'"},
        {"stdout": "1\n", "stderr": "", "interrupted": False},
    )
    session.hook("session-end", reason="prompt_input_exit")
    summaries = [summary for _, summary in memories(home)]
    assert "Use pnpm" in " ".join(summaries), summaries
    assert not any(x.startswith("API key:") for x in summaries), "a secret answer is no lesson"
    blob = everything_under(home, home.parent / "user-home")
    for value in s.values():
        assert value.encode() not in blob and value[:14].encode() not in blob, value[:6]


# -------------------------------------------------------------------------------------------
# the project's own hooks, permission refusals, and constraints the user found
# (tests/fixtures/real-sessions-2: real sessions, see its README)

SECOND_SET = Path(__file__).parent.parent / "fixtures" / "real-sessions-2"


@pytest.mark.parametrize(
    "prompt, expected",
    [
        (
            "Oh, I just found out that this is not supported by Chrome :(\\\n\\\nThis is the relevant "
            "CSS:\\\n\\\nCan you please help rewriting this to use proper HTML ruby elements?",
            ("fact", "Chrome does not support it: use proper HTML ruby elements instead"),
        ),
        (
            "Flexbox gap isn't supported in Safari 13",
            ("fact", "Safari 13 does not support Flexbox gap"),
        ),
        (
            "I keep getting mysterious build errors when MDX files have URLs wrapped in angle brackets "
            "that markdownlint puts in automatically (MD034/no-bare-urls) – how can I disable that?",
            (
                "fact",
                "Mysterious build errors happen when MDX files have URLs wrapped in angle brackets",
            ),
        ),
        (
            "we keep hitting flaky failures whenever the cache is cold",
            ("fact", "Flaky failures happen when the cache is cold"),
        ),
    ],
)
def test_a_constraint_the_user_found_is_a_fact(prompt, expected):
    assert expected in lessons(prompt), lessons(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "Is this not supported by Chrome?",
        "This is not supported by Safari.",
        "I keep getting it wrong when I try",
        "I keep getting emails when the build fails",
        "why do I keep getting errors?",
        "it is supported by Chrome",
    ],
)
def test_constraint_look_alikes_are_no_lesson(prompt):
    assert lessons(prompt) == []


def test_the_projects_hooks_are_read_from_what_claude_code_reported(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                {
                    "type": "system",
                    "content": "\x1b[1mPostToolUse:Edit\x1b[22m [uv run ruff format] "
                    "completed successfully: 27 files left unchanged",
                    "isSidechain": False,
                },
                {
                    "type": "system",
                    "content": "\x1b[1mPostToolUse:MultiEdit\x1b[22m [uv run ruff format]"
                    " completed successfully: 1 file reformatted",
                    "isSidechain": False,
                },
                {
                    "type": "system",
                    "content": '\x1b[1mStop\x1b[22m [bash -c \'echo "=== DEBUG ===" >&2;'
                    ' uv run pyright 2>&1 | tee /dev/stderr; echo "Exit code: $?" >&2\'] completed '
                    "successfully: 0 errors",
                    "isSidechain": False,
                },
                {
                    "type": "system",
                    "content": "\x1b[1mStop\x1b[22m [uv run pytest 2>&1] completed "
                    "successfully: 3 passed",
                    "isSidechain": False,
                },
                {
                    "type": "system",
                    "content": "Running \x1b[1mPostToolUse:Edit\x1b[22m...",
                    "isSidechain": False,
                },
                event(
                    "user",
                    "Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: # "
                    "Running Quality Checks...\n\n# Uncommitted Changes Detected\n\nCannot exit with "
                    "unstaged changes.\n\nBefore stopping, please:\n\n1. Run `git status`",
                    isMeta=True,
                ),
            ],
        )
    )
    assert t.prompts == []  # a hook's feedback is not the user's words
    found = [c.summary for c in facts.project_hooks(t)]
    assert found == [
        "After each edit, a project hook runs `uv run ruff format`",
        "When the agent stops, project hooks run `uv run pyright`, `uv run pytest`",
        "The Stop hook `stop.sh` blocks the agent: Cannot exit with unstaged changes",
    ]
    # the content names the hook event, as the project's settings do
    assert facts.project_hooks(t)[0].content.startswith(
        "After each edit (PostToolUse:Edit, PostToolUse:MultiEdit),"
    )


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_what_satisfied_a_blocking_hook_is_in_its_memory():
    # drmaciver-coverage-test-fix: the stop hook blocks for untracked files; the agent adds the
    # generated files to .gitignore and the hook does not block again
    t = read(FIXTURES / "real-sessions-2" / "drmaciver-coverage-test-fix.jsonl")
    (block,) = [c for c in facts.project_hooks(t) if "blocked" in c.content]
    assert (
        "After its last block the agent edited `.gitignore` (# Python | __pycache__/ | "
        "*.pyc | # Coverage | .coverage), and it did not block again." in block.content
    )


def test_a_decision_above_a_pasted_diff_names_what_it_is_about():
    # ccl-claude-code-log-sample-71c9afe9: the rule alone names nothing the next session finds
    t = read(FIXTURES / "real-sessions-2" / "ccl-claude-code-log-sample-71c9afe9.jsonl")
    (decision,) = [
        c
        for c in session_lessons.from_feedback(session_lessons.feedback_stream([], t), t)
        if c.kind == "decision"
    ]
    assert decision.summary == (
        "Take the least nested path first, but take the latest if there are equal depths"
    )
    assert decision.content.endswith(
        "About the diff pasted with it: `claude_code_log/renderer.py` (`get_project_display_name`)"
    )


@pytest.mark.parametrize(
    "prompts",
    [
        # no diff in the prompt that says it
        ["I changed my mind: keep the old endpoint until v2 ships"],
        # a diff, but in another prompt
        [
            "I changed my mind: keep the old endpoint until v2 ships",
            "look at this\ndiff --git a/api.py b/api.py\n--- a/api.py\n+++ b/api.py\n@@ -1 +1 @@\n"
            "-def old():\n+def new():",
        ],
    ],
)
def test_no_diff_is_named_for_a_decision_said_without_one(tmp_path, prompts):
    t = read(write(tmp_path / "t.jsonl", [event("user", p) for p in prompts]))
    (decision,) = [
        c
        for c in session_lessons.from_feedback(session_lessons.feedback_stream([], t), t)
        if c.kind == "decision"
    ]
    assert "About the diff" not in decision.content


def stop_block(reason: str) -> dict:
    return event(
        "user",
        f"Stop hook feedback:\n[${{CLAUDE_PLUGIN_ROOT}}/scripts/hooks/stop.sh]: {reason}",
        isMeta=True,
    )


@pytest.mark.parametrize(
    "after",
    [
        # three files edited: no clear evidence of what satisfied it
        [
            *edit("e1", "/p/a.py", "x", "y"),
            *edit("e2", "/p/b.py", "x", "y"),
            *edit("e3", "/p/c.py", "x", "y"),
        ],
        # the user spoke first: the edit is the next task's
        [event("user", "now add a README"), *edit("e1", "/p/README.md", "", "# p")],
        # an edit that failed, and a command: no edit made it pass
        [
            *edit("e1", "/p/.gitignore", "x", "y", error="String to replace not found in file."),
            *bash("b1", "git add -A && git commit -m wip", "[master 1] wip"),
        ],
    ],
)
def test_no_fix_is_credited_to_a_hook_block_without_clear_evidence(tmp_path, after):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", "add multiply"),
                stop_block("Cannot exit with untracked files."),
                *after,
            ],
        )
    )
    (block,) = facts.project_hooks(t)
    assert "After its last block" not in block.content


def test_permission_refusals_are_a_fact_of_the_project(tmp_path):
    t = read(SECOND_SET / "ccl-claude-p-experiment-2b4ed4c0.jsonl")
    found = sorted(c.summary for c in facts.permission_facts(t))
    assert found == [
        "`WebSearch`, `Read ~/.claude/CLAUDE.md` need a permission not granted here",
        "`claude -p`, `claude --version` need approval here (refused without it)",
        "`ls ~/.claude` was blocked: outside the allowed working directories",
    ]
    # a failure that is no refusal is no permission fact
    plain = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "npm test"}),
                result(
                    "a",
                    "Error: 1 test failed: this command requires approval of the reviewer?",
                    is_error=True,
                ),
            ],
        )
    )
    assert facts.permission_facts(plain) == []


@pytest.mark.parametrize(
    "command, shown",
    [
        ("uv run pytest 2>&1", "uv run pytest"),
        ("${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh", "stop.sh"),
        ("bash -c 'echo start >&2; uv run pyright 2>&1 | tee /dev/stderr'", "uv run pyright"),
        ("npx prettier --write .", "npx prettier --write ."),
    ],
)
def test_what_a_hook_command_does(command, shown):
    assert facts.hook_command(command) == shown


@pytest.mark.parametrize(
    "prompt, expected",
    [
        (
            "you just deleted my claude-parser?",
            ("correction", "Never delete `claude-parser` without asking the user first"),
        ),
        (
            "wtf? you deleted my tests!",
            ("correction", "Never delete tests without asking the user first"),
        ),
    ],
)
def test_work_the_user_finds_destroyed_is_a_rule(prompt, expected):
    assert expected in lessons(prompt), lessons(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "Did you remove the config file?",
        "you removed it",
        "you deleted the old branch, good",
        "I think you deleted my notes.md",
        "you removed my comment about the cache, which is fine",
    ],
)
def test_destroyed_look_alikes_are_no_lesson(prompt):
    assert lessons(prompt) == []


def test_an_error_the_session_never_got_past_is_an_open_problem_without_a_fix(tmp_path):
    stuck = 'Path "/work/app" does not exist'
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                use("a", "Bash", {"command": "mv /work/app ~/apps/"}),
                result("a", stuck, is_error=True),
                use("b", "Bash", {"command": "ls"}),
                result("b", stuck, is_error=True),
                use("c", "Bash", {"command": "cd ~ && ls"}),
                result("c", stuck, is_error=True),
                use("d", "TodoWrite", {"todos": []}),
                result("d", "ok"),
            ],
        )
    )
    found = [c for c in session_lessons.from_errors([], t) if "open-problem" in c.tags]
    assert [c.summary for c in found] == [
        'Unresolved: `Bash` kept failing with `Path "/work/app" does not exist`'
    ]
    assert "mv /work/app" in found[0].content and "Fixed by" not in found[0].content
    # twice only, or a later success of the same tool: no open problem
    for tail in ([], [use("e", "Bash", {"command": "pwd"}), result("e", "/home")]):
        t = read(
            write(
                tmp_path / "u.jsonl",
                [
                    use("a", "Bash", {"command": "mv /work/app ~/apps/"}),
                    result("a", stuck, is_error=True),
                    use("b", "Bash", {"command": "ls"}),
                    result("b", stuck, is_error=True),
                    *(
                        [use("c", "Bash", {"command": "ls"}), result("c", stuck, is_error=True)]
                        if tail
                        else []
                    ),
                    *tail,
                ],
            )
        )
        assert [c for c in session_lessons.from_errors([], t) if "open-problem" in c.tags] == []


# -------------------------------------------------------------------------------------------
# a plan the user refused and then dropped (ccl-danieldemmel-me-next-f852ad25, lines 84-90)

WORKER_ASKED = (
    "Do you think there's a simple way to offload the actual tokenisation process to a "
    "worker without having to have another JS file and complicated inter-process "
    "communication?"
)
WORKER_PLAN = (
    "## Web Worker Analysis & Alternative Solutions\n\n### Why Traditional Web Workers "
    "Are Complex Here\n\n1. **Separate File Requirement**: Workers typically need a "
    "separate JS file"
)
PLAN_REFUSED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected "
    "(eg. if it was a file edit, the new_string was NOT written to the file). STOP "
    "what you are doing and wait for the user to tell you how to proceed."
)


def plan_session(tmp_path, then: str, refused: bool = True):
    return read(
        write(
            tmp_path / "t.jsonl",
            [
                event("user", WORKER_ASKED),
                use("p1", "ExitPlanMode", {"plan": WORKER_PLAN}),
                result("p1", PLAN_REFUSED if refused else "User has approved your plan.", refused),
                event("user", "[Request interrupted by user for tool use]"),
                event("user", then),
            ],
        )
    )


def test_a_refused_plan_the_user_then_drops_is_a_decision(tmp_path):
    t = plan_session(
        tmp_path,
        "Never mind! But I'd like to ask you to add a `<details>` element "
        'with the title "Implementation details"',
    )
    (dropped,) = session_lessons.dropped_plans(t)
    assert dropped.kind == "decision"
    assert dropped.summary == (
        "The user dropped the plan: Web Worker Analysis & Alternative Solutions"
    )
    assert WORKER_ASKED in dropped.content and dropped.content.endswith('said: "Never mind!"')


@pytest.mark.parametrize(
    "then, refused",
    [
        (
            "Keep it in one file, and use a Blob URL for the worker",
            True,
        ),  # a correction, not a drop
        ("Never mind, that works", False),  # the plan was approved
        ("I never mind a second file, go ahead", True),
    ],
)
def test_a_plan_not_dropped_is_no_decision(tmp_path, then, refused):
    assert session_lessons.dropped_plans(plan_session(tmp_path, then, refused)) == []


# -------------------------------------------------------------------------------------------
# what a task runner's recipes run (real-sessions-4, drmaciver-python-to-rust-port)


def test_a_task_runners_recipes_are_learned_from_what_it_printed_when_they_ran():
    session = FIXTURES / "real-sessions-4" / "drmaciver-python-to-rust-port.jsonl"
    [fact] = facts.recipe_facts(read(session))
    assert fact.summary == (
        "This project's just recipes: `just check` runs `cargo llvm-cov --fail-under-lines 100`"
    )
    assert fact.content == (
        "`just check` runs `cargo llvm-cov --fail-under-lines 100`; `just lint` "
        "runs `cargo clippy -- -D warnings`; `just format` runs `cargo fmt`"
    )


@pytest.mark.parametrize(
    "command, output, is_error",
    [
        ("make test", "make[1]: Entering directory '/src'\npytest -q", False),  # make's own chatter
        ("just check", "error: Justfile does not contain recipe `check`.", True),  # it failed
        ("just check 2>&1", "error: Justfile does not contain recipe `check`.", False),
        ("make", "cc -o app main.c", False),  # no target named: which recipe?
        ("just test", "just build\ncargo test", False),  # a recipe that calls the runner
        ("make lint", "src/app.py:3:1: F401 unused import", False),  # output, not a command
        ("ls -la", "total 0", False),  # not a task runner
    ],
)
def test_no_recipe_fact_from_a_failure_or_output_that_is_not_the_command(
    tmp_path, command, output, is_error
):
    session = write(
        tmp_path / "s.jsonl",
        [use("t1", "Bash", {"command": command}), result("t1", output, is_error=is_error)],
    )
    assert facts.recipe_facts(read(session)) == []


def said(text: str) -> list[dict]:
    return [event("assistant", [{"type": "text", "text": text}])]


def test_the_agents_diagnosis_between_failure_and_fix_is_the_cause(tmp_path):
    """Words from a real session (claude-code-log, a browser test after a refactor): the
    sentences that explain, written after the failure and before the fix, become the cause;
    narration, plans and a diagnosis written after the fix do not."""
    path = "/p/claude_code_log/html_generator.py"
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *said("The old renderer is the cause, because `renderer.py` was split."),
                *bash(
                    "a",
                    "uv run pytest test/test_timeline_browser.py",
                    "AssertionError: Should contain the system warning about Opus limit",
                    failed=True,
                ),
                *said(
                    "I see the issue. This system message has a `content` field instead of a "
                    "`message` field. Let me check how system messages are parsed in the models:"
                ),
                *said(
                    "There's the bug! We're looking for `message` attribute but it should be `content`."
                ),
                *edit(
                    "b",
                    path,
                    'message_content = getattr(message, "message", "")',
                    'message_content = getattr(message, "content", "")',
                ),
                *said("Because `content` is now read, the test should pass."),
                *bash("c", "uv run pytest test/test_timeline_browser.py", "1 passed"),
            ],
        )
    )
    (found,) = t.error_lessons()
    assert found.cause == (
        "This system message has a `content` field instead of a `message` field. "
        "We're looking for `message` attribute but it should be `content`."
    )
    (memory,) = session_lessons.from_errors([], t)
    assert memory.content.endswith(f"Cause (as the agent found it): {found.cause}")


def test_no_cause_is_kept_without_an_explaining_sentence_that_names_something(tmp_path):
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *bash("a", "mix test", "** (RuntimeError) no :secret_key_base found", failed=True),
                *said(
                    "I see the issue. The problem is that it is not configured properly. "
                    "Let me fix `config/test.exs` because it is wrong."
                ),
                *edit("b", "/p/config/test.exs", "import Config", "import Config\n# key"),
                *bash("c", "mix test", "12 tests, 0 failures"),
            ],
        )
    )
    (found,) = t.error_lessons()
    assert found.cause == ""
    (memory,) = session_lessons.from_errors([], t)
    assert "Cause" not in memory.content


def test_a_project_command_run_with_a_longer_timeout_says_so(tmp_path):
    """From real sessions: the agent gave the browser suite (180000 ms) and dialyzer
    (300000 ms) more than the Bash tool's 2 minutes; the next session should know."""

    def timed(call_id: str, command: str, timeout: int | None, failed: bool = False):
        tool_input = {"command": command} | ({"timeout": timeout} if timeout else {})
        return [use(call_id, "Bash", tool_input), result(call_id, "done", failed)]

    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *timed("a", "mix dialyzer 2>&1 | tail -20", 300000),
                *timed("b", "mix dialyzer", None),
                *timed("c", "mix credo --strict", 60000),
                *timed("d", "mix credo --strict", None),
                *timed("e", "mix credo --strict", 900000, failed=True),  # a failure says nothing
            ],
        )
    )
    found = {c.summary: c.content for c in facts.project_facts(t)}
    assert found["Type-check with `mix dialyzer`"].endswith(
        "Successful runs were given a timeout of 300000 ms (the Bash tool's default is 2 minutes)."
    )
    assert "timeout" not in found["Lint with `mix credo --strict`"]


SIDECHAIN_DIAGNOSIS = (
    "Now I understand the issue. The `isSidechain` field exists in the model but it's not "
    "being used to add the appropriate CSS classes to messages. Let me create a plan to fix this:"
)


def diagnosed(tmp_path, *groups) -> list:
    t = read(write(tmp_path / "t.jsonl", [e for group in groups for e in group]))
    return diagnosed_changes(t, set())


def sidechain_fix() -> list[dict]:
    return edit(
        "b",
        "/p/claude_code_log/html_generator.py",
        "        # Handle command messages",
        '        if message.isSidechain:\n            css_class += " sidechain"\n'
        "        # Handle command messages",
    )


def test_a_diagnosis_the_agent_announced_changed_and_checked_is_a_finding(tmp_path):
    """Words from a real session (claude-code-log): no error to key on, but the agent said what
    it found, changed the file and the test it ran next passed."""
    (found,) = diagnosed(
        tmp_path,
        said(SIDECHAIN_DIAGNOSIS),
        [use("r", "Read", {"file_path": "/p/claude_code_log/html_generator.py"})],
        [result("r", "370  # Handle command messages")],
        sidechain_fix(),
        bash("c", "uv run pytest test/test_timeline_browser.py -k sidechain", "1 passed"),
    )
    assert found.summary == (
        "The `isSidechain` field exists in the model but it's not being used to add the "
        "appropriate CSS classes to messages."
    )
    assert 'html_generator.py: if message.isSidechain: | css_class += " sidechain"' in found.content
    assert (
        "Checked with `uv run pytest test/test_timeline_browser.py -k sidechain`" in found.content
    )


@pytest.mark.parametrize(
    "after",
    [
        # the check after the change failed: the diagnosis is not proven
        [sidechain_fix(), bash("c", "uv run pytest", "1 failed", failed=True)],
        # a command changed something before any edit: the edit is not this diagnosis' fix
        [bash("m", "npm install", "added 3"), sidechain_fix(), bash("c", "uv run pytest", "ok")],
        # nothing checked the change before the user spoke again
        [sidechain_fix(), [event("user", "now the docs, please")], bash("c", "pytest", "ok")],
    ],
)
def test_no_finding_without_a_change_and_a_check_that_passed(tmp_path, after):
    assert diagnosed(tmp_path, said(SIDECHAIN_DIAGNOSIS), *after) == []


def test_no_finding_from_words_that_are_not_an_announced_diagnosis(tmp_path):
    assert (
        diagnosed(
            tmp_path,
            said("Let me look at how `html_generator.py` assigns the CSS classes to messages."),
            sidechain_fix(),
            bash("c", "uv run pytest", "ok"),
        )
        == []
    )


def test_a_long_diagnosis_is_said_in_fewer_words_never_cut():
    text = (
        "The current implementation of `get_project_display_name` simply takes the last working "
        "directory from the list (the most recent one) and returns its name."
    )
    assert in_brief(text) == (
        "`get_project_display_name` takes the last working directory from the list and "
        "returns its name."
    )


def test_ambiguous_evidence_with_a_diagnosis_keeps_the_error_and_its_cause_not_a_fix(tmp_path):
    """Words from a real session (spotter): two changes came before the clean run, so no fix is
    credited, but what the agent found is kept as an observation of the error."""
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *bash(
                    "a",
                    "mix test test/spotter_web/live/session_live_test.exs",
                    '** (ArgumentError) expected selector ".subagent-badge" to return a single '
                    "element, but got none",
                    failed=True,
                ),
                *said(
                    "I see the issue: `load_session_messages` doesn't include `agent_id` in the "
                    "map. This is a real bug in the SessionLive code."
                ),
                *edit("b", "/p/lib/spotter_web/live/session_live.ex", "x", "y"),
                *bash("c", "mix ecto.reset", "done"),
                *bash("d", "mix test test/spotter_web/live/session_live_test.exs", "0 failures"),
            ],
        )
    )
    (memory,) = [c for c in session_lessons.from_errors([], t) if "error" in c.tags]
    assert memory.kind == "observation"
    assert memory.summary == "`load_session_messages` doesn't include `agent_id` in the map."
    assert (
        "Fixed by" not in memory.content
        and "No single change was clearly its fix" in memory.content
    )


@pytest.mark.parametrize(
    "text, expected",
    [  # (from real sessions)
        (
            "I see that `convert_jsonl_to_html` is still used in the `load_sessions` method. "
            "I need to add the import back.",
            [("`convert_jsonl_to_html` is still used in the `load_sessions` method.", True)],
        ),
        (
            "The issue is clear \u2014 the LiveView process can't access the SQL sandbox from "
            "the test process.",
            [("The LiveView process can't access the SQL sandbox from the test process.", True)],
        ),
        (
            "Perfect! Now I understand the format. Let me check what exporters are available:",
            [],
        ),
        (
            "The build script expects to be run from within the `assets/` directory.",
            [("The build script expects to be run from within the `assets/` directory.", False)],
        ),
        ("I see the issue - it is not configured properly.", []),
    ],
)
def test_what_counts_as_the_agents_diagnosis(text, expected):
    assert [(e.sentence, e.opened) for e in explanations(text)] == expected


def test_a_step_that_worked_once_run_from_the_project_root_says_so(tmp_path):
    """From a real session (pmsynapse): a root package.json script run in apps/desktop."""
    events = [
        *bash(
            "a",
            "pnpm build:all",
            'ERR_PNPM_RECURSIVE_EXEC_FIRST_FAIL  Command "build:all" not found',
            failed=True,
        ),
        *bash("b", "cd /Users/dev/pmsynapse && pnpm build:all", "Tasks: 3 successful"),
    ]
    for one in events:
        one["cwd"] = "/Users/dev/pmsynapse"
    (found,) = error_lessons(tmp_path, [events])
    assert found[0].endswith("run it from the project root")
    for one in events:
        one["cwd"] = "/Users/dev"  # the cd went somewhere else than where the session runs
    (found,) = error_lessons(tmp_path, [events])
    assert found[0].endswith("run it from `pmsynapse/`")


def test_what_a_package_script_runs_is_read_from_what_the_package_manager_printed(tmp_path):
    """From a real session (pmsynapse): the run failed later (cargo was not on the PATH), but
    pnpm had printed what `build:all` is; `tauri` -> `tauri` and `dev` -> `vite` say nothing."""
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *bash(
                    "a",
                    "cd /p && pnpm build:all",
                    "turbo 2.6.3\n\nsh: cargo: command not found\n\n\n> pmsynapse@0.1.0 build:all /p\n"
                    "> turbo run build && cargo build --workspace --release\n\n• Packages in scope",
                    failed=True,
                ),
                *bash(
                    "b",
                    "pnpm tauri icon a.svg",
                    "> @pmsynapse/desktop@0.1.0 tauri /p\n> tauri icon a.svg",
                ),
                *bash("c", "npm run dev", "> jssoundrecorder@0.1.0 dev /p\n> vite\n\nready"),
            ],
        )
    )
    assert [(c.summary, c.tags) for c in facts.script_facts(t)] == [
        (
            "`pnpm build:all` runs `turbo run build && cargo build --workspace --release`",
            ["project-fact", "command"],
        )
    ]


def test_a_successful_npm_9_run_prints_its_script_and_the_last_printing_wins(tmp_path):
    """napoli-matcha b597dabb: npm 9+ prints "> test:pr" then the command, with no package
    version; the script changed in the session (a rename fixed "No test files found"), so
    the last printing is the script; npm runs its own scripts through `npm run`."""
    t = read(
        write(
            tmp_path / "t.jsonl",
            [
                *bash(
                    "a",
                    "npm run test:pr",
                    "> test:pr\n> vitest run tests/pr_test.ts\n\nNo test files found, exiting with "
                    "code 1",
                    failed=True,
                ),
                *bash(
                    "b", "npm run test:pr", "> test:pr\n> vitest run tests/pr.test.ts\n\n 1 passed"
                ),
                *bash("c", "npm test", "> test\n> vitest run\n\n 3 passed"),
            ],
        )
    )
    (fact,) = facts.script_facts(t)
    assert fact.summary == (
        "`npm run test:pr` runs `vitest run tests/pr.test.ts`; `npm test` runs `vitest run`"
    )
    assert facts.recipe_facts(t) == []


def test_a_cd_that_the_shell_kept_is_learned_from_the_failure_it_caused(tmp_path):
    """From a real session (pmsynapse): `cd apps/desktop && ...` worked, the next
    `cd apps/desktop && ...` failed because the shell was still in apps/desktop."""
    from lessonloop.memory.shell_state import kept_directory

    def lessons(*groups):
        return kept_directory(read(write(tmp_path / "t.jsonl", [e for g in groups for e in g])))

    again = "(eval):cd:1: no such file or directory: apps/desktop"
    (found,) = lessons(
        bash("a", "cd apps/desktop && pnpm tauri --help", "Usage: tauri"),
        bash("b", "cd apps/desktop && pnpm tauri icon --help", again, failed=True),
    )
    assert found.summary == (
        "The shell keeps its working directory between Bash calls: after `cd apps/desktop`, "
        "use absolute paths"
    )
    # a directory that never existed, or one no cd entered, teaches nothing about the shell
    assert lessons(bash("b", "cd apps/desktop && ls", again, failed=True)) == []
    assert (
        lessons(
            bash("a", "cd apps/web && ls", "x"),
            bash("b", "cd apps/desktop && ls", again, failed=True),
        )
        == []
    )


def test_secrets_in_a_diagnosis_and_a_package_script_never_reach_disk(home, cli):
    """The new sources of lessons (the agent's diagnosis, what a package script runs, the
    changed lines of a diagnosed fix) carry secrets planted in them to no file."""
    from .test_session import Session, everything_under, fresh_secrets, memories

    cli("memory", "consent", "yes")
    s = fresh_secrets()
    session = Session(home, "secret-diagnosis", s)
    session.hook("session-start", source="startup")
    session.tool(
        "Bash",
        {"command": "pnpm deploy"},
        {"stdout": "", "stderr": "Error: 401"},
        is_error=True,
        result_text=f"Exit code 1\n> shop@1.0.0 deploy /w\n> vercel deploy --token {s['github']}\n"
        "Error: 401 Unauthorized",
    )
    for text in (
        f"Now I understand the issue. The `DATABASE_URL` in `config/dev.exs` still holds "
        f"`PGPASSWORD={s['password']}` instead of reading `System.get_env`.",
        f"The `deploy` script passes `--token {s['github']}` because `VERCEL_TOKEN` is unset.",
    ):
        session._event(
            "assistant", {"role": "assistant", "content": [{"type": "text", "text": text}]}
        )
    session.tool(
        "Edit",
        {
            "file_path": "/w/config/dev.exs",
            "old_string": f"PGPASSWORD={s['password']}",
            "new_string": f'System.get_env("PGPASSWORD") || "{s["aws"]}"',
        },
        {"filePath": "/w/config/dev.exs"},
        result_text="The file has been updated.",
    )
    session.tool("Bash", {"command": "mix test"}, {"stdout": "3 tests, 0 failures", "stderr": ""})
    session.tool("Bash", {"command": "pnpm deploy"}, {"stdout": "done", "stderr": ""})
    session.hook("session-end", reason="prompt_input_exit")
    summaries = " ".join(summary for _, summary in memories(home))
    assert "`DATABASE_URL`" in summaries and "`pnpm deploy` runs `vercel deploy" in summaries
    blob = everything_under(home, home.parent / "user-home")
    for value in s.values():
        assert value.encode() not in blob and value[:14].encode() not in blob, value[:6]


@pytest.mark.parametrize(
    "prompt, expected",
    [  # how people state lasting rules to an agent (common forms no earlier rule read)
        ("use yarn instead of npm", ("preference", "Use yarn instead of npm")),
        (
            "remember to update the changelog when you change the API",
            ("rule", "Update the changelog when you change the API"),
        ),
        (
            "The API must stay backwards compatible.",
            ("rule", "The API must stay backwards compatible"),
        ),
        (
            "we use conventional commits in this repo",
            ("rule", "Use conventional commits in this project"),
        ),
        (
            "in this repo we use 2 spaces for indentation",
            ("rule", "Use 2 spaces for indentation in this project"),
        ),
        ("can you stop using sudo", ("correction", "Stop using sudo")),
    ],
)
def test_common_forms_of_a_lasting_rule_are_a_lesson(prompt, expected):
    assert expected in lessons(prompt), lessons(prompt)


@pytest.mark.parametrize(
    "prompt",
    [  # the same forms about this task only, or no rule at all
        "use a dict instead of a list here",
        "use httpx instead of requests here",
        "use a set instead of a list",
        "the tests must stay green while you refactor",
        "remember to add a test for this",
        "make sure to check the output",
        "we use this in the parser",
        "I used yarn instead of npm yesterday",
        "can you stop the server",
    ],
)
def test_look_alikes_of_a_lasting_rule_are_no_lesson(prompt):
    assert lessons(prompt) == [], lessons(prompt)
