"""`lessonloop mcp` on the wire, byte by byte: the real server process (real SDK) fed lines a
client should not send, and closed on while requests are in flight. Every reply is read from
its stdout; a server that leaves one out would keep its client waiting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from ..conftest import subprocess_env  # noqa: E402

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def converse(env: dict, *lines: str | dict) -> tuple[list[dict], subprocess.CompletedProcess]:
    """Start ``lessonloop mcp``, hand it the handshake then ``lines`` (dicts are encoded, str
    are sent as they are), close its stdin at once and read everything it writes until it
    exits: the replies after the handshake's, and the finished process."""
    wire = [json.dumps(INITIALIZE), json.dumps(INITIALIZED)]
    wire += [line if isinstance(line, str) else json.dumps(line) for line in lines]
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", "mcp"],
        env=env,
        input="\n".join(wire) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )  # (a hang guard, far above any run here)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert replies and replies[0].get("id") == "init" and "result" in replies[0], done
    return replies[1:], done


def call(request_id, tool: str, **arguments) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def error(request_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@pytest.fixture
def env(home):
    return subprocess_env(home)


@pytest.fixture
def slow_task(tmp_path) -> Path:
    """A task whose verifier takes a second: a judge_output call on it is still running when
    the client has long closed stdin."""
    task = tmp_path / "slow.yaml"
    task.write_text(
        'name: slow\nprompt: p\nverifier:\n  command: "sleep 1 && echo ok"\n  timeout: 60\n'
    )
    return task


@pytest.mark.reliability
def test_malformed_lines_get_json_rpc_errors_and_the_server_keeps_serving(env):
    replies, done = converse(
        env,
        "{not json",  # -32700, id unknown
        "",  # a blank line: no answer
        "[]",  # -32600, id unknown
        '[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]',  # a batch: MCP has none
        {"jsonrpc": "2.0", "id": 5},  # a request without a method
        {"jsonrpc": "2.0", "id": "six", "method": 6},  # a method that is no string
        {"jsonrpc": "2.0", "method": {"a": 1}},  # no id to answer with
        {"jsonrpc": "2.0", "id": 7, "result": 5},  # a bad response: not answered
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        {"jsonrpc": "2.0", "id": 9, "method": "ping"},  # and the server still serves
    )
    assert replies == [
        error(None, -32700, "Parse error"),
        error(None, -32600, "Invalid Request"),
        error(None, -32600, "Invalid Request"),
        error(5, -32600, "Invalid Request"),
        error("six", -32600, "Invalid Request"),
        error(None, -32600, "Invalid Request"),
        {"jsonrpc": "2.0", "id": 9, "result": {}},
    ]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.reliability
def test_every_request_sent_before_stdin_closed_is_answered_before_the_server_exits(env, slow_task):
    replies, done = converse(
        env,
        call(1, "judge_output", task=str(slow_task), output="x"),  # a second on a worker thread
        call(2, "memory_store", type="decision", summary="the relay holds EOF back"),
        call(3, "memory_search", query="relay"),
        call(4, "no_such_tool"),
    )
    assert done.returncode == 0, done.stderr
    answers = {reply["id"]: reply for reply in replies}
    assert sorted(answers) == [1, 2, 3, 4] and len(replies) == 4, replies
    assert answers[1]["result"]["structuredContent"]["passed_verifier"] is True
    assert answers[2]["result"]["structuredContent"]["action"] == "added"
    assert answers[4]["result"]["isError"] is True  # (an unknown tool is a tool error)


def test_a_request_the_client_cancelled_is_not_waited_for_nor_answered(env, slow_task):
    replies, done = converse(
        env,
        call(1, "judge_output", task=str(slow_task), output="x"),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        call(2, "memory_recall"),
    )
    assert done.returncode == 0, done.stderr
    assert [reply["id"] for reply in replies] == [2]  # (the spec: no answer to a cancelled one)
