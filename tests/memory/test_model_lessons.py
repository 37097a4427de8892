"""The model route's own lessons (memory/model_lessons.py): what the model reads of a real
session, the checks a proposal must pass (form, narration, grounding in the session's events,
merged with a lesson already found), how accepted proposals join admission, and the wire: the
local-model kit's server in its fault modes (prose, failures, delays) leaves the deterministic
result, and the real model, when one is served, proposes within the checks."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from lessonloop.memory import consent, memorize, model_lessons, rewrite
from lessonloop.memory import transcript as transcripts
from lessonloop.memory.candidate import Candidate
from lessonloop.memory.model_wording import ModelRun

from ..providers.fake_servers import FakeServer, Reply, openai_completion

ROOT = Path(__file__).resolve().parents[2]
SET5 = ROOT / "tests" / "fixtures" / "real-sessions-5"
# a real session: the user asks the TUI to open the cached session HTML; the agent drops an
# import `load_sessions` still needs, then restores it
TUI = SET5 / "ccl-claude-code-log-sample-89488521.jsonl"
# the local-model kit (shared/tools/local-model), beside the project or where the lead put it
KIT = next(
    (
        p
        for p in (
            Path(os.environ.get("LESSONLOOP_TEST_KIT", "/nonexistent")),
            ROOT.parents[1] / "shared" / "tools" / "local-model",
            Path("/work/shared/tools/local-model"),
        )
        if (p / "serve.mjs").exists()
    ),
    None,
)


def events_of(path: Path) -> str:
    return model_lessons.session_events(transcripts.read(str(path)))


def model_env(url: str, **extra: str) -> dict:
    return {"LESSONLOOP_AUTOMEM_MODEL": "openai:test-model", "LESSONLOOP_BASE_URL": url, **extra}


def memorized(tmp_path: Path, name: str, transcript: Path, environ: dict):
    """Memorize ``transcript`` in a project of its own; the result and the stored rows."""
    root = tmp_path / name
    consent.record(root, "yes")
    result = memorize.memorize(
        "real",
        root,
        transcript=str(transcript),
        user_root=tmp_path / f"{name}-user",
        environ=environ,
    )
    with sqlite3.connect(root / "lessonloop.db") as conn:
        rows = conn.execute("SELECT kind, summary, content, why FROM knowledge ORDER BY id")
        return result, rows.fetchall(), root


# -------------------------------------------------------------------------------------------
# what the model reads


def test_the_model_reads_a_real_sessions_events_in_order_redacted_and_capped():
    events = events_of(TUI)
    lines = events.splitlines()
    assert lines[0] == "Session events, oldest first:"
    user = [n for n, line in enumerate(lines) if line.startswith("USER: now we have cache")]
    restored = [n for n, line in enumerate(lines) if "from .converter import" in line]
    assert user and restored and user[0] < restored[0], "the user's words, then the edits"
    assert any(line.startswith("HOOK PostToolUse:Edit ran uv run ruff format") for line in lines)
    assert len(events) <= model_lessons.EVENT_CHARS


def test_a_long_session_keeps_the_users_words_and_the_failures_first(tmp_path):
    """Past EVENT_CHARS, the agent's words go before the user's and the failures do."""
    lines = []
    for n in range(400):
        lines.append(
            {
                "type": "assistant",
                "message": {
                    "content": [{"type": "text", "text": f"Thinking aloud step {n} " + "x" * 80}]
                },
            }
        )
    lines.insert(200, {"type": "user", "message": {"content": "From now on use pnpm, never npm."}})
    path = tmp_path / "long.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    events = events_of(path)
    assert len(events) <= model_lessons.EVENT_CHARS
    assert "USER: From now on use pnpm, never npm." in events
    assert "Thinking aloud step 0 " in events and "Thinking aloud step 399 " not in events


# -------------------------------------------------------------------------------------------
# the checks a proposal passes


def proposal(summary: str, content: str = "", kind: str = "observation") -> dict:
    return {"kind": kind, "summary": summary, "content": content, "scope": "project"}


def test_a_made_up_path_is_refused_and_a_real_one_kept():
    events = events_of(TUI)
    real = "`load_sessions` in `claude_code_log/tui.py` still calls `convert_jsonl_to_html`."
    made_up = "`load_sessions` in `claude_code_log/session_loader.py` calls the converter."
    run = ModelRun(route="openai:test")
    kept = model_lessons.accepted([proposal(real), proposal(made_up)], events, [], run)
    assert [c.summary for c in kept] == [real]
    assert kept[0].kind == "observation" and kept[0].why == model_lessons.PROPOSED
    [refused] = run.proposal_refused
    assert refused["why"].startswith("ungrounded: `claude_code_log/session_loader.py`")
    assert run.proposal_rejected == {"ungrounded": 1} and run.proposals_kept == 1


def test_grounding_holds_content_commands_and_numbers_too():
    events = events_of(TUI)
    run = ModelRun(route="openai:test")
    kept = model_lessons.accepted(
        [
            proposal("Format with `uv run ruff format`.", "A hook runs it after every edit."),
            proposal("Lint with `uv run ruff check --fix`."),  # a command never run
            proposal("The TUI opens the cached session page.", "Port 8123 serves it."),
        ],
        events,
        [],
        run,
    )
    assert [c.summary for c in kept] == ["Format with `uv run ruff format`."]
    assert [r["why"].split(" is not")[0] for r in run.proposal_refused] == [
        "ungrounded: `uv run ruff check --fix`",
        "ungrounded: 8123",
    ]


def test_the_same_check_holds_a_rewording_to_its_lesson():
    """One grounding check: a rewording that adds a path its lesson and evidence lack is
    refused by ``rewrite.problem`` through ``rewrite.ungrounded``."""
    assert rewrite.ungrounded("Edit config/prod.exs", "Edit config/test.exs") == "config/prod.exs"
    assert rewrite.ungrounded("Edit `config/test.exs`", "edit  CONFIG/test.exs now") is None
    assert (
        rewrite.problem(
            "Set the key in `config/test.exs`",
            "",
            "Set the key in `config/test.exs` and config/prod.exs",
        )
        == "adds: config/prod.exs"
    )


def test_a_proposal_that_repeats_a_lesson_already_found_is_merged_not_added_twice():
    events = events_of(TUI)
    found = [Candidate("preference", "Don't check for the existence of the file, just launch it")]
    run = ModelRun(route="openai:test")
    kept = model_lessons.accepted(
        [
            proposal("Do not check that the session file exists: launch it.", kind="preference"),
            proposal("After each edit a hook runs `uv run ruff format`."),
            proposal("A PostToolUse hook runs `uv run ruff format` on each edit."),
        ],
        events,
        found,
        run,
    )
    assert [c.summary for c in kept] == ["After each edit a hook runs `uv run ruff format`."]
    assert run.proposal_rejected == {"merged": 2}


def test_a_story_of_the_session_is_no_lesson():
    events = events_of(TUI)
    run = ModelRun(route="openai:test")
    kept = model_lessons.accepted(
        [
            proposal("The user removed the unused import since we're no longer using it."),
            proposal("The agent restored the import of `convert_jsonl_to_html`."),
            proposal("Long " + "words " * 30),
            proposal("Keep the import of `convert_jsonl_to_html`: `load_sessions` uses it."),
        ],
        events,
        [],
        run,
    )
    assert [c.summary for c in kept] == [
        "Keep the import of `convert_jsonl_to_html`: `load_sessions` uses it."
    ]
    assert run.proposal_rejected == {"narration": 2, "form": 1}, run.proposal_refused


def test_a_request_for_the_task_at_hand_is_no_lesson():
    """Seen with the real 1.5B model on a development session: "Implement the refactoring
    plan." as a decision."""
    events = events_of(TUI)
    run = ModelRun(route="openai:test")
    kept = model_lessons.accepted(
        [
            proposal("Implement the launch of the session HTML page.", kind="decision"),
            proposal("Never check that the session HTML file exists.", kind="preference"),
        ],
        events,
        [],
        run,
    )
    assert [c.summary for c in kept] == ["Never check that the session HTML file exists."]
    assert run.proposal_rejected == {"one-off": 1}


def test_a_kind_rests_on_its_evidence_the_users_words_or_a_failure():
    """A preference or decision is the user's: most of its words are in what the user said. A
    pattern is an error and its fix: it shares a name or words with a failure. This session
    has no failure (a search caught the dropped import before anything failed)."""
    events = events_of(TUI)
    run = ModelRun(route="openai:test")
    kept = model_lessons.accepted(
        [
            proposal("Launch the cached session HTML page.", kind="decision"),
            proposal("Always keep a concise version of `tui.py`.", kind="decision"),
            proposal("Keep the import of `convert_jsonl_to_html`.", kind="pattern"),
        ],
        events,
        [],
        run,
    )
    assert [c.summary for c in kept] == ["Launch the cached session HTML page."]
    assert [r["why"] for r in run.proposal_refused] == [
        "unsupported: a decision with nothing of it in what the user said",
        "unsupported: a pattern with nothing of it in a failure of the session",
    ]


# -------------------------------------------------------------------------------------------
# through memorize: admission, idempotency


def test_accepted_proposals_join_the_deterministic_lessons_through_admission(tmp_path):
    plain, found, _ = memorized(tmp_path, "plain", TUI, {})
    answer = {
        "memories": [
            proposal(
                "Keep the import of `convert_jsonl_to_html`: `load_sessions` uses it.",
            ),
            proposal(
                "Don't check for the existence of the file, just launch it.", kind="preference"
            ),
            proposal("Cache sessions in `claude_code_log/session_cache.py`."),
        ]
    }
    posts = []

    def reply(received):
        posts.append(received)
        schema = received.body["response_format"]["json_schema"]["schema"]
        if "lesson" in json.dumps(schema):  # the wording request: the lessons as found
            return Reply(
                body=openai_completion(
                    json.dumps({"memories": [{"lesson": 1, "summary": found[0][1]}]})
                )
            )
        return Reply(body=openai_completion(json.dumps(answer)))

    with FakeServer(reply) as server:
        result, stored, root = memorized(tmp_path, "model", TUI, model_env(server.base_url + "/v1"))
        again = memorize.memorize(
            "real", root, transcript=str(TUI), environ=model_env(server.base_url + "/v1")
        )
    assert result.model == "used", result.model
    new = [row for row in stored if row[3].startswith(model_lessons.PROPOSED)]
    assert [(kind, summary) for kind, summary, _, _ in new] == [
        ("observation", "Keep the import of `convert_jsonl_to_html`: `load_sessions` uses it.")
    ]
    assert {summary for _, summary, _, _ in found} <= {summary for _, summary, _, _ in stored}
    assert len(stored) == len(found) + 1, "the repeat is merged, the made-up file refused"
    [record] = [
        json.loads(line)
        for line in (root / "sessions" / "real" / "model.jsonl").read_text().splitlines()
    ]
    assert record["proposed"] == 3 and record["proposals_kept"] == 1
    assert record["proposal_rejected"] == {"merged": 1, "ungrounded": 1}
    # memorized again: nothing new to word or propose, no request
    assert again.stored == [] and len(posts) == 2


def test_a_proposal_that_fails_after_a_wording_that_passed_leaves_the_lessons_as_found(tmp_path):
    """Any failure of the route: the deterministic lessons, not half the model's work."""
    plain, found, _ = memorized(tmp_path, "plain", TUI, {})
    wording = {"memories": [{"lesson": 2, "summary": found[1][1].rstrip(".") + " at all."}]}

    def reply(received):
        schema = received.body["response_format"]["json_schema"]["schema"]
        if "lesson" in json.dumps(schema):
            return Reply(body=openai_completion(json.dumps(wording)))
        return Reply(body=openai_completion("Here are the lessons I found: none."))

    with FakeServer(reply) as server:
        result, stored, root = memorized(tmp_path, "model", TUI, model_env(server.base_url + "/v1"))
    assert result.model.startswith("not used: OffSchemaError"), result.model
    assert stored == found


def test_the_events_a_model_reads_never_hold_a_secret_of_the_session(home, cli):
    """Secrets in prompts, commands, error lines and the transcript's own values: what the
    proposal request carries is redacted, as the wording request's is."""
    from .test_session import Session, assert_no_secret, fresh_secrets, sent_bytes

    secret = fresh_secrets()
    session = Session(home, "secret-events", secret)
    session.play()
    session.prompt(f"From now on we deploy with the CI token {secret['github']} only.")
    session.tool(
        "Bash",
        {
            "command": f"curl -H 'Authorization: Bearer {secret['anthropic']}' https://api.example.com"
        },
        {"stdout": "", "stderr": f"401 for key {secret['anthropic']}\n", "interrupted": False},
        is_error=True,
    )
    cli("memory", "consent", "yes")
    bodies = []

    def reply(received):
        bodies.append(sent_bytes(received))
        schema = received.body["response_format"]["json_schema"]["schema"]
        if "lesson" in json.dumps(schema):  # the wording request: a wording the guards refuse
            return Reply(
                body=openai_completion(json.dumps({"memories": [{"lesson": 1, "summary": "xyz"}]}))
            )
        return Reply(body=openai_completion(json.dumps({"memories": []})))

    with FakeServer(reply) as server:
        result = memorize.memorize(
            session.id,
            home,
            environ=model_env(server.base_url + "/v1", LESSONLOOP_AUTOMEM_TIMEOUT="30"),
        )
    proposals = [body for body in bodies if b"Session events, oldest first" in body]
    assert proposals, ("the model was sent the session's events", result.model)
    for body in bodies:
        assert_no_secret(body, secret)


def test_a_session_with_no_lesson_of_its_own_is_memorized_for_the_model_once(tmp_path, monkeypatch):
    """The session-end hook starts a detached memorize only when there is something new
    (``has_new_lessons``): with a model that proposes, a session's events it has not read yet
    are; once read, they are not, and a second memorize asks nothing."""
    path = tmp_path / "quiet.jsonl"
    line = {"type": "user", "message": {"content": "Is `make docs` the way to build the docs?"}}
    path.write_text(json.dumps(line) + "\n")
    root = tmp_path / "project"
    consent.record(root, "yes")
    assert not memorize.has_new_lessons("quiet", root, str(path)), "no model: nothing new"
    answer = {"memories": [proposal("Build the docs with `make docs`.")]}
    with FakeServer(lambda received: Reply(body=openai_completion(json.dumps(answer)))) as server:
        env = model_env(server.base_url + "/v1")
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert memorize.has_new_lessons("quiet", root, str(path))
        first = memorize.memorize("quiet", root, transcript=str(path), environ=env)
        assert not memorize.has_new_lessons("quiet", root, str(path))
        second = memorize.memorize("quiet", root, transcript=str(path), environ=env)
        asked = len([r for r in server.received if r.method == "POST"])
    assert first.stored == ["Build the docs with `make docs`."] and second.stored == []
    assert asked == 1


# -------------------------------------------------------------------------------------------
# the wire: the local-model kit's server in its fault modes


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class KitServer:
    """The kit's serve.mjs on a free port in a fault mode (FAULT_PROSE=1 loads no model)."""

    def __init__(self, tmp_path: Path, **faults: str):
        if KIT is None or shutil.which("node") is None:
            pytest.skip("the local-model kit (shared/tools/local-model) or node is not here")
        self.port = free_port()
        self.log = (tmp_path / f"kit-{self.port}.log").open("w")
        self.process = subprocess.Popen(
            ["node", str(KIT / "serve.mjs"), "--dir", str(tmp_path), "--port", str(self.port)],
            env={**os.environ, "FAULT_PROSE": "1", **faults},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        self.url = f"http://127.0.0.1:{self.port}/v1"
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    break
            except OSError:
                assert self.process.poll() is None, "the kit's server exited"
                assert time.monotonic() < deadline, "the kit's server did not start"
                time.sleep(0.1)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.log.close()


@pytest.mark.parametrize(
    "faults, timeout",
    [
        ({}, "30"),  # every answer prose, whatever the schema asks
        ({"FAULT_EVERY": "1"}, "30"),  # every request a 500
        ({"FAULT_EVERY": "1", "FAULT_CODE": "429", "FAULT_RETRY_AFTER": "1"}, "30"),
        ({"FAULT_DELAY": "20"}, "1"),  # no answer within the time limit
    ],
    ids=["prose", "every-500", "every-429", "delay"],
)
def test_the_kits_faults_leave_the_deterministic_result(tmp_path, faults, timeout):
    plain, found, _ = memorized(tmp_path, "plain", TUI, {})
    server = KitServer(tmp_path, **faults)
    try:
        result, stored, root = memorized(
            tmp_path, "model", TUI, model_env(server.url, LESSONLOOP_AUTOMEM_TIMEOUT=timeout)
        )
    finally:
        server.close()
    assert result.model.startswith("not used: "), result.model
    assert stored == found, "the deterministic memories, exactly"
    assert sorted(result.stored) == sorted(plain.stored)
    done = json.loads((root / "sessions" / "real" / "memorized.json").read_text())
    assert not any(key.startswith("model-proposed:") for key in done), "asked again next time"


def test_a_proposal_request_that_fails_leaves_a_session_with_no_lessons_as_it_was(tmp_path):
    """A session the deterministic pass finds nothing in: the proposal is the only request,
    and the kit's prose answer to it stores nothing, with the reason."""
    path = tmp_path / "quiet.jsonl"
    path.write_text(
        json.dumps({"type": "user", "message": {"content": "What does this repository do?"}}) + "\n"
    )
    server = KitServer(tmp_path)
    try:
        result, stored, _ = memorized(tmp_path, "quiet", path, model_env(server.url))
    finally:
        server.close()
    assert stored == [] and result.stored == []
    assert result.model.startswith("not used: OffSchemaError"), result.model


# -------------------------------------------------------------------------------------------
# the real model (LESSONLOOP_TEST_MODEL_URL)


@pytest.mark.real_model
def test_a_real_model_proposes_lessons_within_the_checks(tmp_path, capsys, real_model):
    plain, found, _ = memorized(tmp_path, "plain", TUI, {})
    env = {
        "LESSONLOOP_AUTOMEM_MODEL": f"openai:{real_model.model}",
        "LESSONLOOP_BASE_URL": real_model.url,
        "LESSONLOOP_AUTOMEM_TIMEOUT": "900",
    }
    result, stored, root = memorized(tmp_path, "model", TUI, env)
    [record] = [
        json.loads(line)
        for line in (root / "sessions" / "real" / "model.jsonl").read_text().splitlines()
    ]
    with capsys.disabled():  # -s shows what the model did
        print(
            f"\nreal model {real_model.model}: {result.model}; stored {[s for _, s, _, _ in stored]}; "
            f"refused proposals {record['proposal_refused']}"
        )
    assert result.model == "used", result.model
    events = events_of(TUI)
    assert record["proposed"] == record["proposals_kept"] + sum(
        record["proposal_rejected"].values()
    )
    for kind, summary, content, why in stored:
        if why.startswith(model_lessons.PROPOSED):
            assert rewrite.ungrounded(f"{summary}\n{content}", events) is None, summary
            assert rewrite.form_problem(summary) is None, summary
    lessons = [row for row in stored if not row[3].startswith(model_lessons.PROPOSED)]
    assert len(lessons) == len(found), "every deterministic lesson, as found or worded"
