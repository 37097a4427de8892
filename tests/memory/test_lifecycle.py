"""A memory's life across sessions, end to end in the real hook format (issue 22's acceptance):
recalled on the prompt that needs it and not on others, proven by what the session then did,
superseded out of recall, private text never on disk, shared through an export imported twice.
"""

from __future__ import annotations

import json
import time

from lessonloop.timeutil import utc_now

from .test_session import Session, everything_under, fresh_secrets

DEPLOY = "Deploy with `fly deploy --remote-only`, never from a laptop build."
PNPM = "Use pnpm, not npm, to install packages in this repo."


class LiveSession(Session):
    """A session whose transcript events carry the time they happened, as Claude Code's do:
    what a memory is judged on is what came after it was given."""

    def _event(self, kind: str, message: dict, **extra) -> None:
        super()._event(kind, message, **extra)
        self.lines[-1]["timestamp"] = utc_now()
        self.transcript.write_text("".join(json.dumps(x) + "\n" for x in self.lines))
        time.sleep(0.002)  # events a few milliseconds apart, as a real session's are

    def given(self, output: dict) -> str:
        return output.get("hookSpecificOutput", {}).get("additionalContext", "")


def add(cli, kind: str, summary: str) -> int:
    done = cli("memory", "add", "--type", kind, "--summary", summary, "--json")
    assert done.code == 0, done.err
    return done.json()["id"]


def stats(cli) -> dict[str, dict]:
    return {m["summary"]: m for m in cli("memory", "stats", "--json").json()}


def test_a_memory_is_recalled_when_needed_proven_superseded_kept_private_and_shared(
    home, cli, tmp_path, monkeypatch
):
    assert cli("memory", "consent", "yes").code == 0
    deploy, pnpm = add(cli, "decision", DEPLOY), add(cli, "preference", PNPM)

    # a session: the memory comes with the prompt that needs it, once, and with no other prompt
    session = LiveSession(home, "second", fresh_secrets())
    session.hook("session-start", source="startup")
    assert DEPLOY in session.given(
        session.prompt("How do we deploy this app? Is a build from my laptop fine?")
    )
    unrelated = "Rename the helper parse_row in utils.py to parse_line and update its callers."
    assert session.prompt(unrelated) == {}
    assert session.prompt("ok, deploy it from a laptop build then") == {}  # given once per session
    said = session.given(session.prompt("Install the packages this repo needs for a date picker"))
    assert PNPM in said and DEPLOY not in said
    # ... and the session does as it says: its evidence says it helped
    session.tool(
        "Bash",
        {"command": "pnpm add react-day-picker"},
        {"stdout": "Packages: +1\nDone in 1.2s\n", "stderr": "", "interrupted": False},
    )
    session.hook("stop", stop_hook_active=False)
    session.hook("session-end", reason="prompt_input_exit")
    log = cli("memory", "recall", "--log", "second", "--json").json()
    prompted = [(x["id"], x["event"]) for x in log if x["event"] != "session-start"]
    assert prompted == [(deploy, "user-prompt-submit"), (pnpm, "user-prompt-submit")]
    used = stats(cli)
    assert (used[PNPM]["injected"], used[PNPM]["helped"], used[PNPM]["misled"]) == (1, 1, 0)
    assert used[DEPLOY]["injected"] == 1 and used[DEPLOY]["misled"] == 0

    # superseded: the old memory leaves recall, at session start and on the prompt
    newer = add(cli, "decision", "Deploy with `kamal deploy` from CI; fly.io is gone.")
    assert cli("memory", "supersede", deploy, "--by", str(newer)).code == 0
    later = LiveSession(home, "third", fresh_secrets())
    start = later.given(later.hook("session-start", source="startup"))
    assert "kamal deploy" in start and "fly deploy" not in start
    told = later.given(later.prompt("Can we deploy from CI or do we still need fly?"))
    assert "kamal deploy" in told and "fly deploy" not in told

    # private text: never on disk, and no fragment of its sentence stored
    later.prompt(
        "From now on name the queues after <private>Project Bluebird</private> in the worker "
        "config. Also, always run `make lint` before committing."
    )
    later.hook("stop", stop_hook_active=False)
    later.hook("session-end", reason="prompt_input_exit")
    assert b"Bluebird" not in everything_under(home, home.parent / "user-home")
    summaries = [m["summary"] for m in cli("memory", "list", "--json").json()]
    assert not any("queues" in s for s in summaries), summaries
    assert any("make lint" in s for s in summaries), summaries

    # shared: an export imported into a fresh home, twice, gives the same entries once
    exported = tmp_path / "team.jsonl"
    assert cli("knowledge", "export", "-o", exported).code == 0
    ours = sorted((m["type"], m["summary"]) for m in cli("memory", "list", "--json").json())
    monkeypatch.setenv("LESSONLOOP_HOME", str(tmp_path / "fresh-home"))
    monkeypatch.setenv("LESSONLOOP_USER_HOME", str(tmp_path / "fresh-user"))
    for _ in range(2):
        assert cli("knowledge", "import", exported).code == 0
        theirs = sorted((m["type"], m["summary"]) for m in cli("memory", "list", "--json").json())
        assert theirs == ours
