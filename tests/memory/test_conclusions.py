"""Issue 17: what the agent itself found, advised or set up, as lessons (memory/conclusions).

Each rule is shown on an excerpt of a real session (the sessions of tests/fixtures/
real-sessions-2 and -3, and the shared development set) and on look-alikes that are no lesson:
a summary of work done, a benefits list, advice the user refused, a file the agent never wrote.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lessonloop.memory import session_lessons
from lessonloop.memory.conclusions import blocks, conclusions, sentence
from lessonloop.memory.transcript import read

from .test_transcript import event, result, use, write

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def said(text: str) -> dict:
    return event("assistant", [{"type": "text", "text": text}])


def found(tmp_path, events) -> list[tuple[str, str, str]]:
    path = write(tmp_path / "s.jsonl", events)
    return [(c.tag, c.summary, c.content) for c in conclusions(read(path))]


def summaries(tmp_path, events) -> list[str]:
    return [s for _, s, _ in found(tmp_path, events)]


ASKED = event(
    "user",
    "Search if claude -p can make use of WebSearch and Task tool. Especially "
    "the Task with Haiku model. Summarize the findings.",
)
SEARCHED = [
    use("w1", "WebSearch", {"query": "claude -p WebSearch Task tool"}),
    result("w1", "Web search results for query: ..."),
]

# ccl-claude-p-experiment-2b4ed4c0, line 23 (shortened)
KEY_FINDINGS = """Based on my own context and the CLI help output, let me summarize what I can determine:

## Summary: Claude Code `-p` Mode and Tool Availability

**Tool Control Options:**
- `--tools <tools...>` - Specify available tools from the built-in set

### Key Findings:

1. **Yes**, `claude -p` can use **WebSearch** and **Task** tools - they're part of the default toolset
2. **Yes**, Task tool supports **Haiku model** via `model: "haiku"` parameter - explicitly recommended for "quick, straightforward tasks to minimize cost and latency"
3. Tools can be controlled via `--tools`, `--allowedTools`, `--disallowedTools` flags
4. Permission grants still apply in `-p` mode (WebSearch needed explicit permission)"""

# ccl-claude-p-experiment-256ba646, line 10 (shortened)
YES_ANSWERS = """## Summary: Claude Code `-p` with WebSearch and Task Tool

### WebSearch in `-p` Mode
**Yes, WebSearch is available** in `claude -p` (non-interactive/print mode). You can pre-approve it with:
```bash
claude -p "your prompt" --allowedTools "WebSearch"
```

The WebSearch tool provides real-time web access. It supports domain filtering via `allowed_domains` and `blocked_domains`.

### Task Tool with Haiku Model
**Yes, the Task tool supports Haiku** via the optional `model` parameter:
- Enum values: `"sonnet"`, `"opus"`, `"haiku"`
- Default: inherits from parent conversation

### Cost-Effective Patterns
- Use **Haiku** for: simple format checks, deploy scripts, parallel operations"""


def test_key_findings_after_research_are_one_lesson_with_every_finding(tmp_path):
    ((tag, summary, content),) = found(tmp_path, [ASKED, *SEARCHED, said(KEY_FINDINGS)])
    assert tag == "finding"
    assert summary == (
        "`claude -p` can use WebSearch and Task tools - they're part of the default toolset"
    )
    assert 'Task tool supports Haiku model via `model: "haiku"`' in content
    assert "Permission grants still apply" in content
    assert "after using WebSearch" in content and "not a check it ran" in content
    assert "--tools <tools...>" not in content  # what is not a finding stays out


def test_bold_yes_answers_are_findings_with_their_details_and_nothing_else(tmp_path):
    ((_, summary, content),) = found(tmp_path, [ASKED, *SEARCHED, said(YES_ANSWERS)])
    assert summary == "WebSearch is available in `claude -p` (non-interactive/print mode)"
    assert '--allowedTools "WebSearch"' in content
    assert "The Task tool supports Haiku via the optional `model` parameter" in content
    assert "allowed_domains" not in content and "deploy scripts" not in content


def test_a_no_finding_keeps_its_no(tmp_path):
    # spotter-subagent, line 31
    text = (
        "Good - I have enough context now. Key findings:\n\n- **No Igniter installers** "
        "exist for credo, dialyxir, mix_audit, or sobelow — they're simple deps added to "
        "`mix.exs`\n- The project already has `igniter` as a dependency\n\nBefore drafting "
        "beads, I need to clarify:"
    )
    assert summaries(tmp_path, [ASKED, *SEARCHED, said(text)]) == [
        "No Igniter installers exist for credo, dialyxir, mix_audit, or sobelow — they're "
        "simple deps added to `mix.exs`"
    ]


@pytest.mark.parametrize(
    "text",
    [
        # a benefits list with a bold "No ..." (ccl-JSSoundRecorder, line 210)
        "### Key Benefits:\n\n- **Better Performance**: runs on the audio thread\n- **No Blocking**: "
        "UI remains responsive during audio processing",
        # a summary of the work done is no finding
        "All done. Here's the summary:\n\n- Added `get_current_branch_pr()`\n- Updated the README",
        "## Summary\n\n1. **Switched to Hatchling**: changed the build backend",
        # the wrap-up of work done, and the state of the session's work
        "## Conclusion\n\n- The parser was split into three modules\n- The CLI keeps its flags",
        "Key findings:\n- All 42 tests pass\n- 3 failures fixed",
        # "yes" that is not the bold answer to a question
        "Yes, I'll search for that now.",
        "- **Yesterday's build** is broken",
    ],
)
def test_look_alikes_of_findings_are_no_lesson(tmp_path, text):
    assert summaries(tmp_path, [ASKED, *SEARCHED, said(text)]) == []


def test_a_root_cause_line_in_the_turns_last_text_is_a_finding(tmp_path):
    ran = [use("b1", "Bash", {"command": "mix test"}), result("b1", "1 failure")]
    text = (
        "Fixed.\n\n**Root cause:** the LiveView process could not see the rows the test "
        "created in the SQL sandbox; shared mode in setup fixes it."
    )
    assert summaries(tmp_path, [ASKED, *ran, said(text)]) == [
        "The LiveView process could not see the rows the test created in the SQL sandbox; "
        "shared mode in setup fixes it"
    ]
    # in the middle of the turn, "the fix is: ..." is a plan
    plan = "The fix is: make the sandbox shared in the test setup."
    again = [use("b2", "Bash", {"command": "mix test"}), result("b2", "0 failures")]
    assert summaries(tmp_path, [ASKED, *ran, said(plan), *again]) == []
    # a label that only names a heading of prose is no finding
    assert summaries(tmp_path, [ASKED, *ran, said("Fix: done")]) == []


def test_findings_without_any_tool_used_in_the_turn_are_an_opinion(tmp_path):
    assert summaries(tmp_path, [ASKED, said(KEY_FINDINGS)]) == []
    # the research of an earlier turn does not count for a later answer
    later = event("user", "And what do you think?")
    assert (
        summaries(tmp_path, [ASKED, *SEARCHED, said("Searching."), later, said(YES_ANSWERS)]) == []
    )


# ccl-claude-p-experiment-29ccd257, lines 2-5 (shortened)
EXPLORE_ASKED = event(
    "user",
    "Use the Explore task in sub-agents with Haiku model to give me an "
    "overview of the code organization in the /workspace/claude-code-log "
    "project",
)
EXPLORED = [
    use(
        "t1",
        "Task",
        {
            "description": "Explore codebase structure",
            "subagent_type": "Explore",
            "model": "haiku",
            "prompt": "Give me a comprehensive overview of the /workspace/claude-code-log project.",
        },
    ),
    result("t1", "Perfect! Now I have a comprehensive understanding. ..."),
]
OVERVIEW = """Here's an overview of the **claude-code-log** project organization:

| Directory | Purpose |
|-----------|---------|
| `claude_code_log/` | Main package (~31 Python files, ~10,600 LOC) |
| `claude_code_log/migrations/` | SQLite schema migrations |
| `test/` | 50 test files with comprehensive coverage |

## Core Components

- **cli.py** - Click-based CLI interface
- **cache.py** - SQLite caching system (~1,850 LOC)

## Data Pipeline

```
JSONL File → parser.py → factories/ → renderer.py → html/ or markdown/
```"""


def test_an_overview_after_a_subagent_explored_names_the_code_base_and_its_flow(tmp_path):
    ((tag, summary, content),) = found(tmp_path, [EXPLORE_ASKED, *EXPLORED, said(OVERVIEW)])
    assert tag == "overview"
    assert summary == (
        "claude-code-log data pipeline: JSONL File → parser.py → factories/ → "
        "renderer.py → html/ or markdown/"
    )
    assert "(subagent_type Explore, model haiku) explored /workspace/claude-code-log" in content
    assert "cache.py - SQLite caching system" in content
    assert "`claude_code_log/migrations/` - SQLite schema migrations" in content
    # a subagent's counts go stale with the next commit: not kept
    assert "`claude_code_log/` - Main package\n" in content
    assert "`test/` - test files with comprehensive coverage" in content
    assert not any(n in content for n in ("1,850", "10,600", "31", "50 "))


def reads(n: int) -> list[dict]:
    return [
        e
        for k in range(n)
        for e in (use(f"r{k}", "Read", {"file_path": f"/p/m{k}.py"}), result(f"r{k}", "x = 1"))
    ]


def test_an_overview_after_the_agent_read_the_code_itself(tmp_path):
    asked = event("user", "How is the code organized?")
    ((tag, summary, content),) = found(tmp_path, [asked, *reads(3), said(OVERVIEW)])
    assert summary.startswith("This project's data pipeline: JSONL File → parser.py")
    assert content.startswith("From the agent's overview after it read 3 files or searches:")


def test_no_overview_without_exploring_or_before_the_turn_ended(tmp_path):
    assert summaries(tmp_path, [EXPLORE_ASKED, said(OVERVIEW)]) == []
    failed = [EXPLORED[0], result("t1", "Agent failed", is_error=True)]
    assert summaries(tmp_path, [EXPLORE_ASKED, *failed, said(OVERVIEW)]) == []
    # two reads are a look, not an exploration; reads with an edit are work, not an overview
    assert summaries(tmp_path, [EXPLORE_ASKED, *reads(2), said(OVERVIEW)]) == []
    edited = [
        use("e1", "Edit", {"file_path": "/p/a.py", "old_string": "a", "new_string": "b"}),
        result("e1", "The file /p/a.py has been updated."),
    ]
    assert summaries(tmp_path, [EXPLORE_ASKED, *reads(4), *edited, said(OVERVIEW)]) == []
    more = [use("b1", "Bash", {"command": "ls"}), result("b1", "x")]
    assert summaries(tmp_path, [EXPLORE_ASKED, *EXPLORED, said(OVERVIEW), *more]) == []
    # an arrow in a list of renames is no flow
    renamed = "Renamed files:\n- `a.py` → `b.py`\n- `c.py` → `d.py`"
    assert summaries(tmp_path, [EXPLORE_ASKED, *EXPLORED, said(renamed)]) == []


# pmsynapse-2e90adc4, lines 1 and 12 (shortened)
HOW_ASKED = event(
    "user",
    "check the latest commit, how to make sure that when I run snps command "
    "it sees the new options?",
)
LOOKED = [use("g1", "Bash", {"command": "git log -1 --stat"}), result("g1", "commit c89ab8dd")]
ADVICE = """The latest commit added new `snps claude` commands (parse, list, analyze, tree, import). To make the `snps` command see these new options:

**Rebuild the CLI:**

```bash
# Build the snps-cli crate
cargo build -p snps-cli --release

# Install it (overwrites the existing snps binary)
cargo install --path engine/snps-cli
```

**Key points:**
- `cargo install --path engine/snps-cli` installs to `~/.cargo/bin/snps`
- Make sure `~/.cargo/bin` is in your PATH"""


def test_install_from_source_advice_is_a_project_fact(tmp_path):
    ((tag, summary, content),) = found(tmp_path, [HOW_ASKED, *LOOKED, said(ADVICE)])
    assert tag == "install"
    assert summary == (
        "Install this project from its source with `cargo install --path engine/snps-cli`"
    )
    assert "new `snps claude` commands (parse, list, analyze, tree, import)" in content
    assert "installs to `~/.cargo/bin/snps`" in content
    assert "not run in the session" in content


@pytest.mark.parametrize(
    "text",
    [
        "Install the dependencies with `pip install requests`.",  # a package, not the project
        "```bash\ncargo install ripgrep\n```",
        "Run `npm install` first.",
        "```\nuv tool install ruff\n```",
        "You could use `pip install --upgrade pip`.",
    ],
)
def test_installing_something_else_is_no_project_fact(tmp_path, text):
    assert summaries(tmp_path, [HOW_ASKED, *LOOKED, said(text)]) == []


def test_install_advice_the_user_refused_is_not_kept(tmp_path):
    refused = [
        use("r1", "Bash", {"command": "uv tool uninstall x && uv tool install --reinstall ."}),
        result(
            "r1",
            "The user doesn't want to proceed with this tool use. The tool use was rejected",
            is_error=True,
        ),
    ]
    text = "To pick up changes, reinstall:\n```\nuv tool install --reinstall .\n```"
    assert summaries(tmp_path, [HOW_ASKED, *refused, said(text)]) == []


# ccl-danieldemmel-me-next-5ed31c36, lines 0-11 (shortened)
LINT_ASKED = event(
    "user",
    "I keep getting mysterious build errors when MDX files have URLs wrapped "
    "in angle brackets that markdownlint puts in automatically – how can I "
    "disable that?",
)
WROTE = [
    use(
        "e1",
        "Write",
        {"file_path": "/w/site/.markdownlintrc.json", "content": '{\n  "MD034": false\n}\n'},
    ),
    result("e1", "File created successfully at: /w/site/.markdownlintrc.json"),
]
CREATED = (
    "I've created a [.markdownlintrc.json](.markdownlintrc.json) file that disables the "
    "MD034 rule (no-bare-urls). This will prevent markdownlint from automatically wrapping "
    "URLs in angle brackets.\n\nYou may need to reload your IDE window for the changes to "
    "take effect.\n\nIf you have existing URLs that were already wrapped in angle brackets, "
    "you'll need to remove those angle brackets manually to fix the build errors."
)


def test_a_config_file_the_agent_created_is_a_decision_with_what_is_left_to_do(tmp_path):
    ((tag, summary, content),) = found(tmp_path, [LINT_ASKED, *WROTE, said(CREATED)])
    assert tag == "config"
    assert summary == "`.markdownlintrc.json` disables the MD034 rule (no-bare-urls)"
    assert "remove those angle brackets manually" in content
    assert "reload your IDE" not in content  # a maybe is no step of the project


@pytest.mark.parametrize(
    "events, text",
    [
        ([], CREATED),  # the agent never wrote the file
        (WROTE, "I've created a test file that covers the parser."),
        (
            [
                use("e2", "Write", {"file_path": "/w/site/notes.md", "content": "x"}),
                result("e2", "File created successfully"),
            ],
            "I've created a notes.md file that lists the open questions.",
        ),  # no configuration
    ],
)
def test_look_alikes_of_a_config_file_are_no_lesson(tmp_path, events, text):
    assert summaries(tmp_path, [LINT_ASKED, *events, said(text)]) == []


def test_sidechain_text_is_not_the_agents_answer(tmp_path):
    side = said(KEY_FINDINGS)
    side["isSidechain"] = True
    assert summaries(tmp_path, [ASKED, *SEARCHED, side]) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "**Yes, WebSearch is available** in `claude -p` (non-interactive/print mode). You can "
            "pre-approve it",
            "Yes, WebSearch is available in `claude -p` (non-interactive/print mode)",
        ),
        ("Use `a.b()` e.g. here. Then more", "Use `a.b()` e.g. here"),
        ("Calls `x. y` in one go. Rest", "Calls `x. y` in one go"),
        ("word " * 40, ""),
    ],
)
def test_a_summary_is_a_whole_first_sentence(text, expected):
    assert sentence(text) == expected


def test_blocks_keep_code_lists_and_tables_apart():
    kinds = [
        b.kind
        for b in blocks(
            "# T\n\npara\nmore\n- item\n  cont\n```\ncode\n```\n| a | b |\n|---|---|\n| c | d |"
        )
    ]
    assert kinds == ["heading", "blank", "para", "item", "code", "table", "table"]


# -------------------------------------------------------------------------------------------
# on the real sessions, whole


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "real-sessions-3/pmsynapse-2e90adc4.jsonl",
            [
                (
                    "install",
                    "Install this project from its source with "
                    "`cargo install --path engine/snps-cli`",
                )
            ],
        ),
        (
            "real-sessions-3/ccl-claude-p-experiment-256ba646.jsonl",
            [("finding", "WebSearch is available in `claude -p` (non-interactive/print mode)")],
        ),
        (
            "real-sessions-3/ccl-claude-p-experiment-29ccd257.jsonl",
            [
                (
                    "overview",
                    "claude-code-log data pipeline: JSONL File → parser.py → factories/ → "
                    "renderer.py → html/ or markdown/",
                )
            ],
        ),
        (
            "real-sessions-2/ccl-claude-p-experiment-2b4ed4c0.jsonl",
            [
                (
                    "finding",
                    "`claude -p` can use WebSearch and Task tools - they're part of the default "
                    "toolset",
                )
            ],
        ),
        (
            "real-sessions-2/ccl-danieldemmel-me-next-5ed31c36.jsonl",
            [("config", "`.markdownlintrc.json` disables the MD034 rule (no-bare-urls)")],
        ),
        # sessions where the agent states none of these: nothing
        ("real-sessions-2/drmaciver-coverage-test-fix.jsonl", []),
        ("real-sessions-2/ccl-danieldemmel-me-next-b25638d7.jsonl", []),
        ("real-sessions-2/ccl-claude-code-log-sample-71c9afe9.jsonl", []),
    ],
)
def test_conclusions_of_real_sessions(name, expected):
    got = [(c.tag, c.summary) for c in conclusions(read(FIXTURES / name))]
    assert got == expected


# -------------------------------------------------------------------------------------------
# whatever the agent wrote, reading it never raises

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_pieces = st.sampled_from(
    [
        "**Yes**, ",
        "**No**, ",
        "Key findings:\n",
        "## Findings\n",
        "Root cause: ",
        "- ",
        "1. ",
        "```\n",
        "| `a/` | b |\n",
        " → ",
        " -> ",
        "`cargo install --path x`",
        "`pip install -e .`",
        "I've created a `.xrc` file that ",
        "you'll need to fix it manually. ",
        "\n\n",
        "`",
        "**",
        "[l](u)",
        "e.g. ",
        "(~12 LOC)",
        "/abs/path ",
        "word ",
    ]
)
_text = st.lists(st.one_of(_pieces, st.text(max_size=20)), max_size=30).map("".join)
_shape = st.one_of(
    _text.map(said),
    st.sampled_from(
        [
            *SEARCHED,
            *EXPLORED,
            *WROTE,
            ASKED,
            EXPLORE_ASKED,
            use("x", "Task", {"prompt": 3, "model": None}),
            result("x", None),
        ]
    ),
    _text.map(lambda t: event("user", t)),
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(_shape, max_size=10))
def test_random_answers_never_break_the_rules_and_summaries_stay_whole(tmp_path, events):
    for tag, summary, content in found(tmp_path, events):
        assert tag in ("finding", "overview", "install", "config")
        assert 0 < len(summary) <= 120 and "\u2026" not in summary and "\n" not in summary
        assert len(content) <= 1504


def test_a_rule_that_fails_loses_no_other_lesson_of_the_session(tmp_path, monkeypatch):
    from lessonloop.memory import conclusions as module

    t = read(FIXTURES / "real-sessions-2" / "ccl-danieldemmel-me-next-5ed31c36.jsonl")
    assert [c.summary for c in session_lessons.from_conclusions(t)] == [
        "`.markdownlintrc.json` disables the MD034 rule (no-bare-urls)"
    ]

    def broken(transcript):
        raise ValueError("a shape nobody expected")

    monkeypatch.setattr(module, "conclusions", broken)
    assert session_lessons.from_conclusions(t) == []
    feedback = session_lessons.feedback_stream([], t)
    assert session_lessons.from_feedback(feedback, t)  # the user's own lesson is still there


# pmsynapse (set 7), the answer to "how to run the tauri application for snps?" (shortened)
TAURI_ANSWER = """Here's how to run the PMSynapse Tauri desktop app:

## Prerequisites
```bash
# Install dependencies first (from repo root)
pnpm install
```

**Linux only:** Install system dependencies
```bash
sudo apt-get update
sudo apt-get install -y libwebkit2gtk-4.1-dev \\
  libappindicator3-dev librsvg2-dev patchelf libssl-dev
```

**Option 2: Desktop app only**
```bash
cd apps/desktop
pnpm tauri:dev
# Opens desktop window with hot reload
```"""


def test_how_to_run_something_answered_with_a_command_that_names_it_is_a_fact(tmp_path):
    ((tag, summary, content),) = found(
        tmp_path, [event("user", "how to run the tauri application for snps?"), said(TAURI_ANSWER)]
    )
    assert tag == "howto"
    assert summary == "To run the tauri application for snps: `cd apps/desktop && pnpm tauri:dev`"
    assert "also gave: `pnpm install` (the agent's advice; not run in the session)" in content
    assert "libssl" not in content  # a continued `sudo apt-get` line is no command of its own


@pytest.mark.parametrize(
    "prompt, answer",
    [
        ("how to use pnpn?", "```bash\nnpm install -g pnpm\n```"),  # no command names it
        ("how to run the tauri application?", "Run it from the desktop app folder."),
        ("run the tauri application", TAURI_ANSWER),  # a request, not a question
    ],
)
def test_no_how_to_fact_without_a_question_and_a_command_that_answers_it(tmp_path, prompt, answer):
    assert summaries(tmp_path, [event("user", prompt), said(answer)]) == []
