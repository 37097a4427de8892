"""The one shell-command splitter (lessonloop.shell), as its two readers use it: a command Claude
Code ran, with quotes, escapes, substitutions and redirections honoured (the session signals),
and any text read plain, where every separator character ends a stage (the redactor's -u check,
which reads JSON-escaped transcript lines)."""

from __future__ import annotations

import pytest

from lessonloop.memory.commands import command_head, command_key
from lessonloop.safety.redact import redact
from lessonloop.shell import command_stages, command_words, last_stage


@pytest.mark.parametrize(
    ("command", "stages"),
    [
        ('echo "a; b" && ls -la', ['echo "a; b"', "ls -la"]),
        ("pytest -q 2>&1 | tail -5", ["pytest -q 2>&1", "tail -5"]),
        ("npm test &> out.log; echo done", ["npm test &> out.log", "echo done"]),
        (
            "cd $(git rev-parse --show-toplevel && pwd) || exit",
            [
                "cd $(git rev-parse --show-toplevel && pwd)",
                "exit",
            ],
        ),
        ("make \\\n  build", ["make    build"]),
        ("a\nb ;; c", ["a", "b", "c"]),
    ],
)
def test_a_command_splits_at_the_separators_the_shell_reads(command, stages):
    assert command_stages(command) == stages


@pytest.mark.parametrize(
    ("text", "stages"),
    [
        ('echo "a; b" && ls', ['echo "a', 'b"', "ls"]),
        ("pytest 2>&1 | tail", ["pytest 2>", "1", "tail"]),
        ('{\\"command\\": \\"x | y\\"}', ['{\\"command\\": \\"x', 'y\\"}']),
    ],
)
def test_plain_text_splits_at_every_separator_character(text, stages):
    assert command_stages(text, plain=True) == stages


def test_the_last_stage_is_empty_right_after_a_separator():
    assert last_stage("docker exec es01 curl -u", plain=True) == "docker exec es01 curl -u"
    assert last_stage('docker ps; sh -c "x; curl -u', plain=True) == "curl -u"
    assert last_stage("docker ps ;  ", plain=True) == ""
    assert last_stage('sh -c "x; curl -u') == 'sh -c "x; curl -u'  # (quoted: one stage)


def test_words_lose_their_quotes_and_keep_a_substitution_whole():
    assert command_words("git commit -m 'fix: x' --author=\"A B\"") == [
        "git",
        "commit",
        "-m",
        "fix: x",
        "--author=A B",
    ]
    assert command_words("echo $(date +%s) done") == ["echo", "$(date +%s)", "done"]


def test_both_readers_see_the_same_stages():
    # the signals: what a command runs, and the command without its output filter
    assert command_head("cd app && uv run pytest -q | tail -3") == "pytest"
    assert command_key("pytest -q 2>&1 | tail -3") == "pytest -q"
    # the redactor: a -u after a separator is the next program's (curl's: a password)
    assert "Pa55w0rd" not in redact("docker exec es01 sh; curl -u elastic:Pa55w0rd http://x")
    assert redact("docker exec -u postgres:postgres db psql") == (
        "docker exec -u postgres:postgres db psql"
    )
