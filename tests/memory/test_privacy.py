"""Private text: a ``<private>`` span in a prompt never reaches disk, nor does the sentence
around it; ``LESSONLOOP_MEMORY=off`` turns capture and memorize off for the session."""

from __future__ import annotations

import json

import pytest

from lessonloop.memory import privacy

from .test_session import Session, everything_under, fresh_secrets, memories

PROBE = "Prefer naming services after <private>our customer Acme</private> in the API"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (PROBE, ""),
        (
            f"Use pnpm for installs. {PROBE}. Always run the tests!",
            "Use pnpm for installs. Always run the tests!",
        ),
        ("Keep it short, e.g. <private>x y z</private> here. Fine.", "Fine."),
        ("First line.\nSecond <private>unclosed and all. After it", "First line."),
        ("One. Stray </private> closes nothing. Two.", "One. Two."),
        ("A <private>spans. Two sentences.</private> of it. B.", "B."),
        ("<PRIVATE>shouted</PRIVATE>", ""),
        # a span of whole sentences between two others: only it goes
        (
            "We use Grafana. <private>The client is Acme.</private> I prefer dark mode.",
            "We use Grafana. I prefer dark mode.",
        ),
        (
            "We use Grafana. <private>Acme</private> is our client. Dark mode.",
            "We use Grafana. Dark mode.",
        ),
        ("nothing private here", "nothing private here"),
    ],
)
def test_the_sentence_holding_a_private_span_goes_whole(text, kept):
    assert privacy.strip(text) == kept


def test_what_repeats_a_private_span_goes_too():
    assert privacy.echoes(PROBE) == ["our customer acme", "acme"]  # the span, and its name
    assert (
        privacy.strip(
            "Noted. I will name them after Our  Customer\nAcme. Done.", ["our customer acme"]
        )
        == "Noted. Done."
    )


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "no"])
def test_the_memory_switch(value):
    assert privacy.memory_off({"LESSONLOOP_MEMORY": value})
    assert not privacy.memory_off({"LESSONLOOP_MEMORY": "on"}) and not privacy.memory_off({})


PRIVATE_WORDS = ("Acme", "zebraquartz", "naming services", "Prefer naming")


def no_private_words_under(*roots) -> None:
    blob = everything_under(*roots)
    for words in PRIVATE_WORDS:
        assert words.encode() not in blob, words


def private_session(session: Session, before_end=None) -> dict:
    """A session whose prompts hold private spans (closed, unclosed, in a correction), the
    agent repeating one, and stated lessons beside them that must still be kept."""
    session.hook("session-start", source="startup")
    session.prompt(PROBE)
    session.prompt(
        "I prefer pnpm over npm for this repo. "
        "<private>The zebraquartz account is ours</private> so never mention it."
    )
    session._event(
        "assistant",
        {
            "role": "assistant",
            "content": [
                {
                    "type": "text",
                    "text": "Understood. I will name services after our customer Acme.",
                }
            ],
        },
    )
    session.tool(
        "Bash",
        {"command": "echo our customer Acme"},
        {
            "stdout": "",
            "stderr": "Error: our customer Acme not found\nError: disk quota exceeded\n",
        },
        is_error=True,
    )
    session.prompt("From now on we use vitest instead of jest. <private>zebraquartz says hi")
    session.hook("stop", stop_hook_active=False)
    if before_end is not None:
        before_end()
    return session.hook("session-end", reason="prompt_input_exit")


def test_private_text_never_reaches_disk_and_no_fragment_is_stored(home, cli):
    cli("memory", "consent", "yes")
    user_home = home.parent / "user-home"
    session = Session(home, "private", {})
    # the capture hooks wrote nothing private before memorize (which rewrites the captures)
    private_session(session, lambda: no_private_words_under(home))
    assert "disk quota exceeded" in (home / "sessions" / "private" / "signals.jsonl").read_text()
    stored = [summary for _, summary in memories(home)]
    assert "Use pnpm instead of npm for this repo" in stored  # the rest of the session counts
    assert "Use vitest instead of jest" in stored
    assert not any("naming" in s or "Prefer" in s for s in stored), stored  # no fragment
    blob = everything_under(home, user_home)
    for words in PRIVATE_WORDS:
        assert words.encode() not in blob, words
    raw = session.transcript.read_text()
    assert all(words in raw for words in PRIVATE_WORDS[:2]), "the transcript holds them"


def test_memorizing_the_raw_transcript_alone_stores_nothing_private(home, cli):
    """No capture hook ran (hooks installed later): memorize reads the transcript itself."""
    cli("memory", "consent", "yes")
    session = Session(home, "raw", {})
    session.hook = lambda event, **payload: {}  # type: ignore[method-assign]
    private_session(session)
    done = cli("memorize", "--transcript", session.transcript, "--json")
    assert done.code == 0, done.err
    assert "Use pnpm instead of npm for this repo" in done.json()["stored"]
    blob = everything_under(home, home.parent / "user-home")
    for words in PRIVATE_WORDS:
        assert words.encode() not in blob, words


def test_a_wholly_private_prompt_writes_no_prompt_record(home, cli):
    cli("memory", "consent", "yes")
    session = Session(home, "whole", {})
    session.prompt("<private>the zebraquartz plan: fix it somehow</private>")
    session.prompt("Please refactor src/app.py to use dataclasses")
    captured = (home / "sessions" / "whole" / "feedback.jsonl").read_text()
    records = [json.loads(line) for line in captured.splitlines()]
    assert [r["type"] for r in records] == ["prompt_check"]  # the second prompt's only
    assert "zebraquartz" not in captured


@pytest.mark.parametrize("value", ["off", "0"])
def test_memory_off_captures_and_memorizes_nothing(home, cli, value, monkeypatch):
    cli("memory", "consent", "yes")
    # a memory the session's prompts are about: recalled, but no injection log is written
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm, not npm, for this repo")
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    secret = fresh_secrets()
    session = Session(home, "off", secret, {"LESSONLOOP_MEMORY": value})
    session.play()  # every capture event: prompts, failures, successes, stop, session-end
    session.hook("pre-compact", trigger="auto")
    session.hook(
        "post-tool-use",
        tool_name="Bash",
        tool_input={"command": "make"},
        tool_response={"stdout": "", "stderr": "boom", "exit_code": 2},
    )
    session.hook("memorize")  # the detached memorize, were one started
    after = sorted(p.relative_to(home) for p in home.rglob("*"))
    # (reading the store for recall leaves SQLite's -wal/-shm beside it: no session data)
    new = [str(p) for p in after if p not in before and not p.name.startswith("lessonloop.db-")]
    assert new == ["logs", "logs/hooks.log"], new
    assert not (home / "sessions").exists()
    assert memories(home) == [("preference", "Use pnpm, not npm, for this repo")]  # ours only
    log = (home / "logs" / "hooks.log").read_text()
    assert "session off: LESSONLOOP_MEMORY=off: nothing memorized" in log
    assert not any(v in log for v in secret.values())
    # the same session memorized by hand: nothing with the switch, its lessons without it
    monkeypatch.setenv("LESSONLOOP_MEMORY", value)
    done = cli("memorize", "--transcript", session.transcript, "--json").json()
    assert done["stored"] == [] and done["skipped"] == "LESSONLOOP_MEMORY is off"
    said = cli("memorize", "--transcript", session.transcript)
    assert said.err == "nothing memorized: LESSONLOOP_MEMORY is off.\n"  # no consent hint
    monkeypatch.delenv("LESSONLOOP_MEMORY")
    assert cli("memorize", "--transcript", session.transcript, "--json").json()["stored"]


def test_the_transcript_reader_keeps_nothing_private_anywhere(tmp_path):
    """Prompts, the agent's words, commands, a refusal's reason and answers: no stage after
    the reader sees a private span or what repeats it."""
    from lessonloop.memory import transcript

    def user(content, **extra):
        return {"type": "user", "message": {"role": "user", "content": content}, **extra}

    def assistant(*blocks):
        return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}

    refusal = (
        "The user doesn't want to proceed with this tool use. The user provided the following "
        "reason for the rejection: <private>ask Zorblax first</private> and never on Fridays"
    )
    lines = [
        user(f"{PROBE}. Keep the API small."),
        assistant({"type": "text", "text": "Noted: services named after our customer Acme."}),
        assistant(
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "grep -r Acme ."}}
        ),
        user(
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "Exit code 1\nAcme missing",
                    "is_error": True,
                }
            ]
        ),
        assistant(
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "rm -rf build"}}
        ),
        user([{"type": "tool_result", "tool_use_id": "t2", "content": refusal, "is_error": True}]),
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    read = transcript.read(path)
    assert [p.text for p in read.prompts] == ["Keep the API small."]
    kept = repr((read.prompts, read.texts, read.calls, read.said))
    for words in ("Acme", "Zorblax", "naming services"):
        assert words not in kept, words
    assert len(read.calls) == 2 and read.calls[0].is_error


def test_transcript_echoes_come_from_the_users_prompts_only(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"role": "user", "content": f"{PROBE}."}},
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "<private>Zorblax</private>"}],
            },
        },
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "<private>Quux</private>"}],
            },
        },
        "not json <private>",
    ]
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    assert privacy.transcript_echoes(str(path)) == ["our customer acme", "acme", "zorblax"]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert privacy.transcript_echoes(str(empty)) == []
    assert privacy.transcript_echoes(str(tmp_path / "missing.jsonl")) == []
    assert privacy.transcript_echoes(None) == []


def test_a_secret_shown_inside_a_private_span_is_redacted_where_it_is_repeated_bare(home, cli):
    """The span never reaches disk, and neither does its secret when a later prompt repeats the
    value bare: the hook learns the session's secrets from the prompt as it came (only salted
    digests are kept), private spans included."""
    cli("memory", "consent", "yes")
    value = "Rk8vT3qLp9ZwX2mN7bY4cH6dJ1fG5sQ0"
    session = Session(home, "private-secret", {})
    session.hook("session-start", source="startup")
    session.prompt(f"<private>export API_KEY={value}</private> hi")
    session.prompt(f"From now on use pnpm. Always give {value} to the deploy script.")
    session.hook("stop", stop_hook_active=False)
    session.hook("session-end", reason="prompt_input_exit")
    assert value.encode() not in everything_under(home, home.parent / "user-home")
    assert any("pnpm" in summary for _, summary in memories(home))
