"""A copy of examples/mission-repo and a loopback OpenAI-compatible model for missions."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..conftest import ROOT
from ..providers.fake_servers import (
    FakeServer,
    Received,
    Reply,
    openai_completion,
    route_every_role,
)

VERIFIER = "python3 test_calc.py"
FIX = """Here is the fix:
```diff
--- a/calc.py
+++ b/calc.py
@@ -4,3 +4,3 @@
 def total(n):
     \"\"\"The sum of the whole numbers from 1 to n, both included.\"\"\"
-    return sum(range(1, n))
+    return sum(range(1, n + 1))
```
"""


@pytest.fixture
def repo(tmp_path) -> Path:
    folder = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "mission-repo", folder)
    return folder


@pytest.fixture
def model(home, monkeypatch) -> Iterator[Callable[[Callable[[Received], str]], FakeServer]]:
    """``model(answer)``: route the competitor to a loopback server whose every answer is
    ``answer(request)``."""
    servers: list[FakeServer] = []

    def start(answer: Callable[[Received], str]) -> FakeServer:
        server = FakeServer(responder=lambda r: Reply(body=openai_completion(answer(r))))
        servers.append(server)
        route_every_role(monkeypatch, server)
        return server

    yield start
    for server in servers:
        server.close()


def completions(server: FakeServer) -> list[Received]:
    return [r for r in server.received if r.path.endswith("/chat/completions")]
