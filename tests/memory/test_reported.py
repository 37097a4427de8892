"""What the user reports from their own runs (memory/reported.py): the command they say they
run the project with, and a pasted error the agent's edits fixed by the user's next paste.
Real excerpts first (pmsynapse-117458c8 of real-sessions-4: a Tauri app's `snps ui` panics),
then look-alikes that are no lesson."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lessonloop.memory import session_lessons
from lessonloop.memory.events import prompt_text
from lessonloop.memory.reported import pasted_errors, reported_fixes, run_commands, said_command
from lessonloop.memory.transcript import read

from .test_transcript import event, result, use, write

SET4 = Path(__file__).resolve().parents[1] / "fixtures" / "real-sessions-4"

FS_PANIC = (
    'when I run the command "snps ui" I see a long list of "compiling" steps, then "Running", '
    "but then I see the following error:\\\n\\\nthread 'main' panicked at "
    "apps/desktop/src-tauri/src/lib.rs:60:10:\nerror while running tauri application: "
    'PluginInitialization("fs", "Error deserializing \'plugins.fs\' within your Tauri '
    'configuration: unknown field `scope`, expected `requireLiteralLeadingDot`")\nnote: run with '
    "`RUST_BACKTRACE=1` environment variable to display a backtrace\n ELIFECYCLE  Command failed "
    "with exit code 101."
)
SHELL_PANIC = (
    "I see this error:\\\n\\\n  VITE v6.4.1  ready in 337 ms\n   Compiling pmsynapse-desktop v0.1.0\n"
    "thread 'main' panicked at apps/desktop/src-tauri/src/lib.rs:60:10:\nerror while running "
    'tauri application: PluginInitialization("shell", "Error deserializing \'plugins.shell\' '
    'within your Tauri configuration: unknown field `scope`, expected `open`")\n ELIFECYCLE  '
    "Command failed with exit code 101."
)
CONF = "/p/apps/desktop/src-tauri/tauri.conf.json"
CAPS = "/p/apps/desktop/src-tauri/capabilities/default.json"


def prompt(text: str) -> dict:
    return event("user", text)


def edit(tool_id: str, path: str, old: str, new: str) -> list[dict]:
    return [
        use(tool_id, "Edit", {"file_path": path, "old_string": old, "new_string": new}),
        result(tool_id, f"The file {path} has been updated."),
    ]


def bash(tool_id: str, command: str, out: str = "") -> list[dict]:
    return [use(tool_id, "Bash", {"command": command}), result(tool_id, out)]


def fixed_session(*between: list[dict], after: str = SHELL_PANIC) -> list[dict]:
    events = [prompt(FS_PANIC)]
    for part in between:
        events += part
    return events + [prompt(after)]


THE_FIX = (
    edit(
        "a",
        CONF,
        '"fs": {\n  "scope": ["$APPDATA/**"]\n}',
        '"fs": {\n  "requireLiteralLeadingDot": false\n}',
    ),
    bash("b", "mkdir -p apps/desktop/src-tauri/capabilities"),
    [
        use(
            "c",
            "Write",
            {
                "file_path": CAPS,
                "content": '{\n  "identifier": "default",\n'
                '  "permissions": [{"identifier": '
                '"fs:scope", "allow": ["$APPDATA/**"]}]'
                "\n}",
            },
        ),
        result("c", f"File created successfully at: {CAPS}"),
    ],
)


# -------------------------------------------------------------------------------------------
# the command the user says they run


@pytest.mark.parametrize(
    "text, command",
    [
        (FS_PANIC, "snps ui"),
        ("whenever I start `npm run dev` the page is blank", "npm run dev"),
        ("I usually run it with `docker compose up`", "docker compose up"),
        ("if I run 'mix phx.server' it crashes", "mix phx.server"),
    ],
)
def test_a_command_the_user_says_they_run_is_read(text, command):
    assert said_command(text) == command


@pytest.mark.parametrize(
    "text",
    [
        "when I run the tests I see a failure",  # no command named
        'when I run "the tests" nothing happens',  # a quoted phrase of prose
        'when I run into "snps ui" problems',  # not running it
        'I see "Running" then it stops',  # a quoted word of the output
        'when I run "this is what I typed, with commas, and more"',
        "you should run `npm test` before committing",  # the agent asked to run it
    ],
)
def test_look_alikes_name_no_command(text):
    assert said_command(text) == ""


def test_the_users_run_is_a_project_fact_with_what_it_printed(tmp_path):
    found = run_commands(read(write(tmp_path / "t.jsonl", [prompt(FS_PANIC), prompt(FS_PANIC)])))
    assert len(found) == 1
    assert found[0].summary == "The user runs `snps ui` in this project"
    assert "plugins.fs" in found[0].content and "src-tauri" in found[0].content


# -------------------------------------------------------------------------------------------
# a pasted error, fixed by the agent's edits, by the user's next paste


def test_a_panics_message_is_the_line_after_its_location():
    errors = pasted_errors(FS_PANIC)
    assert errors[0].startswith("error while running tauri application: PluginInitialization(")
    assert not any(e.startswith(("when I run", "I see")) for e in errors)  # the user's prose
    assert pasted_errors("yes") == [] and pasted_errors("ok, now add a button") == []


def test_the_edits_before_the_next_paste_without_the_error_are_its_fix(tmp_path):
    found = reported_fixes(read(write(tmp_path / "t.jsonl", fixed_session(*THE_FIX))))
    assert len(found) == 1
    lesson = found[0]
    assert lesson.summary == (
        "On `unknown field 'scope', expected 'requireLiteralLeadingDot'`, "
        "edit `tauri.conf.json` and `capabilities/default.json`"
    )
    assert len(lesson.summary) <= 120
    assert "requireLiteralLeadingDot" in lesson.content and "fs:scope" in lesson.content
    assert "plugins.shell" not in lesson.content  # the next error is not this lesson's


def test_the_same_error_pasted_again_is_no_fix(tmp_path):
    again = FS_PANIC.replace("60:10", "61:10")  # (a moved line is the same error)
    assert (
        reported_fixes(read(write(tmp_path / "t.jsonl", fixed_session(*THE_FIX, after=again))))
        == []
    )


@pytest.mark.parametrize(
    "after",
    [
        "thanks, now add a settings page",  # pastes nothing: proves nothing
        "I see this error:\nTypeError: x is undefined",  # another program's output, no shared line
    ],
)
def test_a_next_prompt_that_is_no_later_run_of_the_same_program_proves_nothing(tmp_path, after):
    assert (
        reported_fixes(read(write(tmp_path / "t.jsonl", fixed_session(*THE_FIX, after=after))))
        == []
    )


@pytest.mark.parametrize(
    "extra",
    [
        bash("x", "pnpm install @tauri-apps/plugin-fs", "done"),  # a command changed things too
        edit("y", "/p/README.md", "old words", "new words"),  # an edit the error never names
    ],
)
def test_ambiguous_evidence_gives_no_fix(tmp_path, extra):
    assert reported_fixes(read(write(tmp_path / "t.jsonl", fixed_session(*THE_FIX, extra)))) == []


def test_no_edit_in_between_is_no_fix(tmp_path):
    assert (
        reported_fixes(
            read(
                write(
                    tmp_path / "t.jsonl",
                    fixed_session(bash("a", "cat apps/desktop/src-tauri/tauri.conf.json", "{}")),
                )
            )
        )
        == []
    )


# -------------------------------------------------------------------------------------------
# the real session, end to end


def test_a_slash_commands_arguments_are_the_users_words():
    wrapped = (
        "<command-message>research_codebase is running\u2026</command-message>\n"
        "<command-name>/research_codebase</command-name>\n<command-args>when I run the "
        'command "snps ui" I see an error</command-args>'
    )
    assert (
        prompt_text(wrapped) == '/research_codebase when I run the command "snps ui" I see an error'
    )
    assert (
        prompt_text(
            "<command-name>/clear</command-name>\n<command-message>clear"
            "</command-message>\n<command-args></command-args>"
        )
        == ""
    )


def test_the_real_tauri_session_gives_the_fix_and_the_users_command(tmp_path):
    transcript = read(SET4 / "pmsynapse-117458c8.jsonl")
    summaries = [c.summary for c in session_lessons.from_reports(transcript)]
    assert "The user runs `snps ui` in this project" in summaries
    fix = next(s for s in summaries if s.startswith("On `"))
    assert "requireLiteralLeadingDot" in fix and "capabilities/default.json" in fix
    # the shell fix is never confirmed by a later run: no lesson claims it
    assert not any("plugins.shell" in c.content for c in session_lessons.from_reports(transcript))
    assert json.dumps(summaries)  # (plain strings)


def said(text: str) -> list[dict]:
    return [event("assistant", [{"type": "text", "text": text}])]


RPC_ERROR = (
    'I ran "pnpm build" and got the following error:\\\n @pmsynapse/rpc:build: DTS Build start\n'
    "@pmsynapse/rpc:build: src/index.ts(272,3): error TS2322: Type 'RpcResponse<undefined>' is "
    "not assignable to type 'RpcResponse<never>'.\n@pmsynapse/rpc:build: Error: error occurred in "
    "dts build"
)
RPC_FIX = edit(
    "e",
    "/p/packages/rpc/src/index.ts",
    "return createResponse(requestId, undefined, {",
    "return createResponse<never>(requestId, undefined, {",
)
NEXT_RUN = (
    '"pnpm build:all" fails with the following error:\\\nTasks: 3 successful, 3 total\n'
    "error: proc macro panicked\n  --> apps/desktop/src-tauri/src/lib.rs:59:14"
)
FOUND = (
    "Found the issue. The `createErrorResponse` function at line 272 needs to explicitly "
    "specify the type parameter `<never>`. Here's the fix:"
)


def test_another_run_without_the_error_counts_when_the_agent_said_what_it_found(tmp_path):
    """From set 7 (pmsynapse): the user's next paste is another command's run; the agent had
    announced its diagnosis, and the edit shares the error's words."""
    events = [prompt(RPC_ERROR), *said(FOUND), *RPC_FIX, prompt(NEXT_RUN)]
    (lesson,) = reported_fixes(read(write(tmp_path / "t.jsonl", events)))
    assert "RpcResponse<undefined>" in lesson.summary
    assert lesson.summary.endswith("`, edit `src/index.ts`")
    assert "pasted another run, without this error" in lesson.content
    assert "Cause (as the agent found it): The `createErrorResponse` function" in lesson.content
    # without the announced diagnosis another run proves nothing
    events = [prompt(RPC_ERROR), *RPC_FIX, prompt(NEXT_RUN)]
    assert reported_fixes(read(write(tmp_path / "t.jsonl", events))) == []


def test_a_run_the_user_reports_once_is_no_project_command():
    assert said_command(RPC_ERROR) == "" and said_command(NEXT_RUN) == ""
    assert said_command(RPC_ERROR, once=True) == "pnpm build"
    assert said_command(NEXT_RUN, once=True) == "pnpm build:all"
