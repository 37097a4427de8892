"""The prompt hook's fast path (``memory/secret_free``): it skips the redactor only for texts
the redactor would return unchanged, and its tables are the prefilter's own."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lessonloop.memory import secret_free
from lessonloop.memory.secret_free import may_hold_secret
from lessonloop.safety.redact import prefilter, redact
from lessonloop.safety.redact.entropy import ENTROPY_CANDIDATE

from ..conftest import subprocess_env
from ..safety.test_families import EXAMPLES


def test_the_tables_are_the_prefilters():
    low = {w for _, _, w in prefilter._KEY_FINDERS} | {"cookie"}
    low |= {w for _, _, words in prefilter._LOW_SEARCHES for w in words}
    text = {w for _, _, words, _ in prefilter._TEXT_SEARCHES if words for w in words}
    text |= set(prefilter._WITHIN) | {"login("}
    unliteral = [(p.pattern, c) for p, _, words, c in prefilter._TEXT_SEARCHES if words is None]
    patterns = [
        *unliteral,
        (prefilter._SHORT_FLAGS.pattern, "-"),
        (ENTROPY_CANDIDATE.pattern, ":="),
    ]
    assert set(secret_free.LOW_LITERALS) == low, "update memory/secret_free.py's LOW_LITERALS"
    assert set(secret_free.TEXT_LITERALS) == text, "update memory/secret_free.py's TEXT_LITERALS"
    assert list(zip(secret_free.PATTERNS, secret_free._FIRSTS)) == patterns, (
        "update memory/secret_free.py's PATTERNS"
    )


PLANTED = [s for family_secrets, _ in EXAMPLES.values() for s in family_secrets] + [
    "export DB_PASSWORD=pw-5f3a9c",
    "curl -u admin:hunter2 https://x.example",
    "mysql -phunter2",
    "Authorization: Bearer abc.def",
    'config = {"dsn": "postgres://u:p@db/x"}',
    "deploy_key = Q3vX9mZpL2rT8wKs7yHd4nBf",
    "echo pw | sudo -S ls",
]
FRAGMENTS = [
    *secret_free.LOW_LITERALS,
    *(w.upper() for w in secret_free.LOW_LITERALS),
    *secret_free.TEXT_LITERALS,
    *(w[:-1] for w in secret_free.TEXT_LITERALS),
    *PLANTED,
    "run the tests",
    "npm_",
    "x_",
    "--user",
    " -u ",
    " -p",
    "-----BEGIN",
    "0123abcd-89abcdef",
    "0123456789abcdef0123456789abcdef-",
    "Q3vX9mZpL2rT8wKs7yHd4nBf",
    "abcdefghijklmnopqrstuvwxyz012345",
    "=",
    ":",
    " ",
    "\n",
    "'",
    '"',
    "_",
    "-",
    ".",
    "/",
]


def _standard_triggers(text: str) -> frozenset:
    """The prefilter's triggers by its standard path (the capture hooks')."""
    saved = prefilter._accelerator
    prefilter._accelerator = None
    try:
        return prefilter._scan_text(text)[0]
    finally:
        prefilter._accelerator = saved


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), min_size=1, max_size=12
    ).map("".join)
)
def test_a_text_it_passes_is_one_the_redactor_leaves_as_it_is(text):
    if may_hold_secret(text):
        return
    assert not _standard_triggers(text)
    prefilter._forget_lines()
    assert not prefilter._present(text)
    assert redact(text) == text


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(PLANTED), st.text(max_size=40), st.text(max_size=40))
def test_a_planted_secret_of_every_family_always_takes_the_redactor(secret, before, after):
    assert may_hold_secret(f"{before} {secret} {after}")
    assert may_hold_secret(secret)


def test_every_planted_secret_is_one_the_redactor_finds():
    # (else the test above proves nothing about it)
    for secret in PLANTED:
        assert redact(f"x {secret} y") != f"x {secret} y", secret


def test_ordinary_prompts_pass():
    for prompt in (
        "Can you add a details element under the pricing table that explains the yearly discount?",
        "the integration tests hang while connecting to redis; rerun pytest",
    ):
        assert not may_hold_secret(prompt)


def _hook(home: Path, prompt: str, session: str) -> str:
    """Run the prompt hook as Claude Code does; the names of the lessonloop modules it loaded."""
    code = (
        "import sys; from lessonloop.memory import hooks; hooks.main(['user-prompt-submit']); "
        "print(' '.join(m for m in sys.modules if m.startswith('lessonloop.safety')))"
    )
    payload = {"session_id": session, "prompt": prompt, "cwd": str(home.parent)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=subprocess_env(home),
        check=True,
        timeout=60,
    )
    return done.stdout


def _captured(home: Path, session: str) -> str:
    return "".join(p.read_text() for p in home.rglob(f"sessions/{session}/*.jsonl"))


def test_the_hook_loads_no_redactor_for_a_plain_prompt_and_captures_it_as_before(home):
    loaded = _hook(home, "From now on always use pnpm instead of npm in this repo.", "s-plain")
    assert "lessonloop.safety.redact" not in loaded
    captured = _captured(home, "s-plain")
    assert '"type": "feedback"' in captured and "pnpm" in captured


def test_a_secret_or_a_sessions_known_secret_still_takes_the_redactor(home):
    value = f"pw-{secrets.token_hex(8)}"
    loaded = _hook(home, f"From now on always export DB_PASSWORD={value} first.", "s-key")
    assert "lessonloop.safety.redact" in loaded
    assert value not in _captured(home, "s-key")
    # later in the session, the value alone: no trigger, but the session knows it
    loaded = _hook(home, f"From now on always use {value} when you log in.", "s-key")
    assert "lessonloop.safety.redact" in loaded
    captured = _captured(home, "s-key")
    assert value not in captured and "[REDACTED:" in captured
