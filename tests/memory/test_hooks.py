"""Hooks: always exit 0, log their own errors, capture without losing lines, recall bounded."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys

from lessonloop.memory import capture, consent, recall

from ..conftest import subprocess_env


def hook(home, event: str, payload, env: dict | None = None) -> subprocess.CompletedProcess:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return subprocess.run([sys.executable, "-m", "lessonloop", "hook", event], input=data,
                          capture_output=True, env={**subprocess_env(home), **(env or {})},
                          timeout=60)


def test_a_broken_payload_or_unknown_event_still_exits_zero_and_is_logged(home):
    for event, payload in [("post-tool-use", b"{not json"), ("teleport", {"session_id": "s"}),
                           ("session-start", b"\xff\xfe garbage"), ("post-tool-use", b"[1, 2]")]:
        done = hook(home, event, payload)
        assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""
    log = (home / "logs" / "hooks.log").read_text()
    assert "not JSON" in log and "unknown hook event 'teleport'" in log


def test_hooks_do_not_import_the_cli_stack(home):
    probe = ("import sys, io\nsys.argv = ['lessonloop', 'hook', 'stop']\n"
             "sys.stdin = io.TextIOWrapper(io.BytesIO(b'{}'))\n"
             "from lessonloop.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'rich', "
             "'pydantic', 'yaml', 'jsonschema', 'anthropic', 'openai') or m == 'lessonloop.cli'))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=subprocess_env(home), timeout=60)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr


def _append_many(path: str, worker: int, count: int) -> None:
    for i in range(count):
        capture.append(__import__("pathlib").Path(path),
                       {"type": "error", "worker": worker, "i": i, "line": "x" * (i * 97 % 3000)})


def test_twenty_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "sessions" / "s" / "signals.jsonl"
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_append_many, args=(str(path), w, 50)) for w in range(20)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(60)
        assert p.exitcode == 0
    records = capture.read(path)
    assert len(records) == 20 * 50
    assert {(r["worker"], r["i"]) for r in records} == {(w, i) for w in range(20) for i in range(50)}


def test_locked_admits_one_holder_at_a_time(tmp_path):
    import threading

    path = tmp_path / "sessions" / "s" / "memorize.lock"
    order = []

    def second():
        with capture.locked(path):
            order.append("second")

    with capture.locked(path):
        waiting = threading.Thread(target=second)
        waiting.start()
        waiting.join(0.3)
        order.append("first")  # the second holder is still waiting for the lock
    waiting.join(10)
    assert order == ["first", "second"]


def test_consent_states(tmp_path):
    assert consent.state(tmp_path) == "missing"
    for answer in ("yes", "no", "ask"):
        consent.record(tmp_path, answer)
        assert consent.state(tmp_path) == answer
    (tmp_path / consent.FILE).write_text("{garbage")
    assert consent.state(tmp_path) == "missing"


def test_session_start_tells_once_and_recalls_within_budget(home, cli):
    first = hook(home, "session-start", {"session_id": "s1", "source": "startup"})
    assert "memory consent yes" in json.loads(first.stdout)["systemMessage"]
    again = hook(home, "session-start", {"session_id": "s1", "source": "resume"})
    assert again.stdout == b"", "told once per session, and nothing to recall yet"
    import itertools

    nouns = ["billing", "search", "auth", "queue", "cache", "mailer", "export", "metrics",
             "gateway", "scheduler"]
    verbs = ["retries", "logs", "batches", "encrypts", "validates", "throttles", "pages",
             "streams"]
    for noun, verb, other in itertools.islice(itertools.product(nouns, verbs, nouns[::-1]), 80):
        cli("memory", "add", "--type", "decision", "--summary",
            f"The {noun} service {verb} requests before calling {other}")
    cli("memory", "consent", "yes")
    out = json.loads(hook(home, "session-start", {"session_id": "s2"}).stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "systemMessage" not in out
    assert len(context) <= recall.BUDGET_TOKENS * 4 and context.count("\n- [decision]") > 10
