"""The guards a model's wording of a lesson must pass (memory/rewrite.py). The refused wordings
are the ones the real Qwen2.5-Coder 0.5B model wrote for the lessons of the development set of
real sessions (bench/memory_quality.py --model); each lesson and evidence is as memorize found
it there."""

from __future__ import annotations

import pytest

from lessonloop.memory.rewrite import negated, problem, restore_spans

PNPM = ("Use pnpm", 'The user refused `npm install` and said: "use pnpm"')
VITE = ("Use vite", "ok, fine, let's do vite")
BROWSER = ("Make it cross-browser", "yes please, and let's make it cross-browser")
ENV = (
    "Don't make it only work for me or make assumptions about people's env",
    "I have both Node and Python, but I don't want to make it only work for me or make "
    "assumptions about people's env.",
)
WORKLET = ("Migrate to AudioWorklet", "Let's also Migrate to AudioWorklet")
PNPM_DEV = (
    "Start the app with `pnpm dev`",
    "Ran successfully 4 time(s) in the session: `pnpm dev`",
)
SECRET_KEY = (
    "When `mix test` fails with `no :secret_key_base configuration found in "
    "SpotterWeb.Endpoint.`, edit `config/test.exs`",
    "Error: ** (RuntimeError) no :secret_key_base configuration found in "
    "SpotterWeb.Endpoint.; Fixed by: Edited /home/USER/projects/spotter-worktrees/"
    "spotter-fum/config/test.exs: config :spotter, SpotterWeb.Endpoint, | http: [ip: "
    "{127, 0, 0, 1}, port: 4002],",
)
BUILD = (
    "When `node build.js` fails with `Error: Build failed with 1 error:`, run "
    "`cd assets && node build.js` instead",
    "Error: Error: Build failed with 1 error:; Fixed by: cd /home/USER/projects/"
    "spotter-worktrees/spotter-fum/assets && node build.js 2>&1",
)
SHIP = (
    "When `uv tool` fails with `ValueError: Unable to determine which files to ship`, edit "
    "`pyproject.toml`",
    "Error: ValueError: Unable to determine which files to ship; Fixed by: Edited /Users/dain/"
    "workspace/coderabbit-review-helper/pyproject.toml: [tool.hatch.build.targets.wheel] | "
    'only-include = ["extract-coderabbit-feedback.py"]',
)
UPGRADE = (
    "Use `uv tool upgrade --reinstall coderabbit-review-extractor`, not "
    "`uv tool install --reinstall .`",
    "The user refused `uv tool uninstall coderabbit-review-extractor && uv tool install "
    "--reinstall .`; `uv tool upgrade --reinstall coderabbit-review-extractor` then worked.",
)
DIALYZER = (
    "Type-check with `mix dialyzer`",
    "Ran successfully 5 time(s) in the session: `mix dialyzer 2>&1 | tail -20`",
)
TOOLS = (
    "Tools: Credo + Dialyxir + mix_audit (Skip Sobelow (Phoenix security scanner))",
    'Asked "Which tools should we set up?", the user chose: Credo + Dialyxir + mix_audit '
    "(Skip Sobelow (Phoenix security scanner))",
)


@pytest.mark.parametrize(
    "lesson, wording, why",
    [
        # the user's words copied back: chat, not a lesson
        (
            BROWSER,
            "yes please, and let's make it cross-browser",
            "adds: the chat or note word 'yes'",
        ),
        (
            ENV,
            "I have both Node and Python, but I don't want to make it only work for me or make "
            "assumptions about people's env.",
            "adds: the chat or note word 'i'",
        ),
        (VITE, "ok, fine, let's do vite", "drops: the word 'use'"),
        # another lesson's evidence, answered for this one (the model's numbering slipped)
        (
            WORKLET,
            "Let's also Migrate to AudioWorklet; Said in: <ide_selection>The user selected the "
            "lines 98 to 98 from /Users/dain/workspace/JSSoundRecorder/CLAUDE.md: AudioWor",
            "form: 159 characters",
        ),
        (PNPM_DEV, "The user refused `npm install` and said: 'use pnpm'", "drops: `pnpm dev`"),
        # the key term dropped, or another invented
        (SHIP, "Edit pyproject.toml to include only the required files.", "drops: `uv tool`"),
        (
            BUILD,
            "Run `cd assets && node build.js` instead to use `lazy_html` as a test dependency.",
            "drops: `node build.js`",
        ),
        (SECRET_KEY, "Edit `config/test.exs` to use `SpotterWeb.Endpoint`.", "drops: `mix test`"),
        # (its backticks put back, it still leaves out what the user refused)
        (
            UPGRADE,
            "Use uv tool upgrade --reinstall coderabbit-review-extractor",
            "drops: `uv tool install --reinstall .`",
        ),
        (
            (
                "Lint with `mix credo`",
                "Ran successfully 3 time(s) in the session: `mix credo "
                "lib/spotter/services/transcript_renderer.ex 2>&1`",
            ),
            "Lint with `mix credo` to ensure all dependencies are correctly configured.",
            "adds: the word 'confi'",
        ),
        (
            DIALYZER,
            "Type-check with `mix dialyzer` is a command-line tool that checks the correctness "
            "of your code. It's useful for debugging and ensuring that your code is working",
            "form: 160 characters",
        ),
        (
            TOOLS,
            "Credo + Dialyxir + mix_audit (Skip Sobelow (Phoenix security scanner))",
            "drops: the word 'tool'",
        ),
        (
            (
                "Start the app with `mix phx.server`",
                "Ran successfully 2 time(s) in the session: `mix phx.server`",
            ),
            "Start the app with `mix phx.server`. Evidence: Ran successfully 2 "
            "time(s) in the session: `mix phx.server`",
            "adds: the chat or note word 'evidence'",
        ),
        # memorize's own note on the lesson, or the run's command, copied into it
        (
            (
                "Lint with `mix credo --strict`",
                "Ran successfully 4 time(s) in the session: `mix credo --strict 2>&1 | head -100`",
            ),
            "Lint with `mix credo --strict` to run successfully 4 "
            "time(s) in the session: `mix credo --strict 2>&1 | head -100`",
            "adds: `mix credo --strict 2>&1 | head -100`",
        ),
        (
            (
                "Lint with `mix credo`",
                "Ran successfully 3 time(s) in the session: `mix credo "
                "lib/spotter/services/transcript_renderer.ex 2>&1`",
            ),
            "Run `mix credo` to lint with `mix credo lib/spotter/services/transcript_renderer.ex`.",
            "adds: `mix credo lib/spotter/services/transcript_renderer.ex`",
        ),
        (
            ("Start the app with `mix phx.server`", "Ran successfully 2 time(s): `mix phx.server`"),
            "Start the app with `mix phx.server`}, {",
            "form: JSON syntax in the sentence",
        ),
    ],
)
def test_wordings_the_real_small_model_wrote_are_refused_for_what_they_got_wrong(
    lesson, wording, why
):
    summary, evidence = lesson
    assert problem(summary, evidence, restore_spans(summary, wording)) == why


@pytest.mark.parametrize(
    "lesson, wording, why",
    [
        (PNPM, "Don't use pnpm.", "negation: negates pnpm"),
        (PNPM, "Use yarn.", "drops: the word 'pnpm'"),
        (PNPM, "Use pnpm instead of `yarn install`.", "adds: `yarn install`"),
        # a command from the evidence is refused too: the lesson's own commands are the lesson's
        (PNPM, "Use pnpm instead of `npm install`.", "adds: `npm install`"),
        (
            ("Use vitest instead of jest", "From now on we use vitest instead of jest."),
            "Use jest, not vitest.",
            "negation: no longer negates jest",
        ),
        (
            UPGRADE,
            "Use `uv tool install --reinstall .`, not `uv tool upgrade --reinstall "
            "coderabbit-review-extractor`",
            "negation: no longer negates `uv tool install --reinstall .`",
        ),
        (
            ENV,
            "Make it only work for me and make assumptions about people's env",
            'drops: the word "don\'t"',
        ),
        (VITE, "Use vite\u2026", "form: a line break, an ellipsis or an unclosed backtick"),
        (VITE, "Use `vite", "form: a line break, an ellipsis or an unclosed backtick"),
        (WORKLET, "Migrate to audio worklets.", "drops: AudioWorklet"),
        (WORKLET, "Migrate the recorder to AudioWorklet.", "adds: the word 'recor'"),
        (DIALYZER, "Type-check with `mix dialyzer` and `mix credo`", "adds: `mix credo`"),
        (
            SECRET_KEY,
            "When `mix test` fails with `no :secret_key_base configuration found in "
            "SpotterWeb.Endpoint.`, edit `config/dev.exs`",
            "drops: `config/test.exs`",
        ),
    ],
)
def test_wordings_that_turn_drop_or_invent_are_refused(lesson, wording, why):
    summary, evidence = lesson
    assert problem(summary, evidence, wording) == why


@pytest.mark.parametrize(
    "lesson, wording",
    [
        (PNPM, "Use pnpm, not npm, to install."),
        (VITE, "Use vite for this project."),
        (BROWSER, "Make it cross-browser."),
        (
            ("Use vitest instead of jest", "From now on we use vitest instead of jest."),
            "Use vitest, not jest, in this project.",
        ),
        (
            (
                "Type-check with `uv run ty check`",
                "The user ran `uv run ty check` in this project.",
            ),
            "Type-check the project with `uv run ty check`.",
        ),
        (
            SECRET_KEY,
            "If `mix test` fails with `no :secret_key_base configuration found in "
            "SpotterWeb.Endpoint.`, edit `config/test.exs`.",
        ),
        (
            UPGRADE,
            "Use `uv tool upgrade --reinstall coderabbit-review-extractor` instead of "
            "`uv tool install --reinstall .`",
        ),
        # written by the real 0.5B model ("instead" that ends a clause negates nothing after it)
        (
            BUILD,
            "Run `cd assets && node build.js` instead when `node build.js` fails with "
            "`Error: Build failed with 1 error:`.",
        ),
        (
            (
                "Type-check with `uv run ty check`",
                "The user ran `uv run ty check` in this project.",
            ),
            "Type-check with `uv run ty check` in this project.",
        ),
    ],
)
def test_a_wording_that_keeps_the_lesson_and_adds_nothing_new_is_accepted(lesson, wording):
    summary, evidence = lesson
    assert problem(summary, evidence, wording) is None


def test_backticks_a_small_model_left_off_are_put_back_around_the_lessons_own_text():
    assert (
        restore_spans("Lint with `mix credo`", "Lint with mix credo.") == "Lint with `mix credo`."
    )
    assert (
        restore_spans(
            SECRET_KEY[0],
            "When `mix test` fails with no :secret_key_base "
            "configuration found in SpotterWeb.Endpoint, edit config/test.exs",
        )
        == SECRET_KEY[0]
    )
    # only the lesson's own text, whole, at a word's edge
    assert restore_spans("Use `a.b`", "Use xa.b") == "Use xa.b"
    assert restore_spans("Run `mix test`", "Run mix tests") == "Run mix tests"


def test_what_a_sentence_negates_is_the_next_words_after_each_negation():
    assert negated("Use pnpm instead of npm") == {"npm"}
    assert negated("Run `x` instead when `y` fails") == set()
    assert negated("Use `a`, not `b c`") == {"`b c`"}
    assert negated("Never push on Fridays") == {"push", "frida"}
