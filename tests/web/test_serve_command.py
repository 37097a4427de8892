"""``lessonloop serve``: it says where it listens and the token, answers at once, refuses what
it cannot do in one line."""

from __future__ import annotations

import json
import socket
import urllib.request

import pytest


def test_serve_prints_its_address_and_token_and_answers(served):
    assert len(served.token) >= 30
    with urllib.request.urlopen(f"{served.url}/api/runs", timeout=10) as answer:
        assert json.load(answer) == []
        assert answer.headers["x-frame-options"] == "DENY"


def test_a_busy_port_is_one_line(run_cli):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = run_cli("serve", "--port", port)
    assert result.code == 1
    assert result.err.startswith(f"error: cannot listen on 127.0.0.1:{port}")
    assert "--port" in result.err and len(result.err.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--host", "0.0.0.0"], "--host must name one address, not the wildcard"),
        (["--host", "example.com"], "--host is an IP address"),
        (["--port", "70000"], "--port must be between 0"),
    ],
)
def test_what_serve_refuses(run_cli, args, words):
    result = run_cli("serve", *args)
    assert result.code == 2
    assert result.err.startswith(f"error: {words}"), result.err
