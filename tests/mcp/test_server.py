"""`lessonloop mcp` driven through the official SDK's stdio client (and once by hand, to see
every byte of its stdout): every tool, bad arguments, redaction, CLI interplay, a background
run, concurrent calls, and a stream that carries nothing but the protocol."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from lessonloop.errors import ERROR_LINE_MAX  # noqa: E402

from ..conftest import ROOT, contract_validator, subprocess_env  # noqa: E402

SERVE = "from lessonloop.mcp.server import serve; serve()"
TOOLS = {
    "memory_store",
    "memory_edit",
    "memory_supersede",
    "memory_search",
    "memory_recall",
    "memory_audit",
    "memory_forget",
    "memory_feedback",
    "list_scenarios",
    "evaluate_strategy",
    "run_start",
    "run_status",
    "list_runs",
    "read_playbook",
    "knowledge_export",
    "judge_output",
}
EXAMPLES = ROOT / "examples" / "tasks"
STRATEGY = {"aggression": 0.5, "stealth": 0.4, "defense_radius": 3, "retreat_threshold": 0.3}
GOOD_SQL = (
    "SELECT c.name, ROUND(SUM(o.amount_cents) / 100.0, 2) AS total_eur FROM customers c "
    "JOIN orders o ON o.customer_id = c.id WHERE o.status = 'paid' AND o.ordered_at "
    "BETWEEN '2024-01-01' AND '2024-12-31' GROUP BY c.id ORDER BY total_eur DESC LIMIT 3;"
)
GITHUB_TOKEN = "ghp_" + "R8kq2Lm9Xw4Tz7Vb1Nc6Hd3Jf5Gs0Pa8Yu2E"
ANTHROPIC_KEY = "sk-ant-api03-" + "Qm7Zt2Kx9Wv4Lb8Nc3Rf6Hy1Jd5Gs0Pa" * 3 + "-Xy12AA"
assert len(GITHUB_TOKEN) == 40


def run(coroutine):
    """Run a test's session; a failure inside the SDK's task groups is raised as itself."""
    try:
        return asyncio.run(coroutine)
    except BaseExceptionGroup as group:
        while isinstance(group, BaseExceptionGroup) and len(group.exceptions) == 1:
            group = group.exceptions[0]
        raise group from None


@pytest.fixture
def env(home):
    return subprocess_env(home)


@pytest.fixture
def errlog(tmp_path):
    with open(tmp_path / "server-stderr.log", "w+") as handle:
        yield handle


@contextlib.asynccontextmanager
async def connect(env: dict, errlog, stream_faults: list | None = None):
    """A session with a fresh server; anything on its stdout that is not a protocol message
    arrives at the message handler as an exception and is collected in ``stream_faults``."""
    faults = [] if stream_faults is None else stream_faults

    async def on_message(message) -> None:
        if isinstance(message, Exception):
            faults.append(message)

    params = StdioServerParameters(command=sys.executable, args=["-c", SERVE], env=env)
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            yield session
    assert faults == [], f"the server wrote non-protocol output on stdout: {faults}"


async def ok(session, tool: str, arguments: dict | None = None):
    result = await session.call_tool(tool, arguments or {})
    assert not result.is_error, f"{tool} failed: {result.content[0].text}"
    if result.structured_content is not None and set(result.structured_content) != {"result"}:
        assert json.loads(result.content[0].text) == result.structured_content
        return result.structured_content
    return result.content[0].text


async def fails(session, tool: str, arguments: dict | None = None) -> str:
    result = await session.call_tool(tool, arguments or {})
    assert result.is_error, f"{tool} should have failed: {result.content}"
    text = result.content[0].text
    assert "\n" not in text and "Traceback" not in text
    return text


def cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lessonloop", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


def test_every_tool_is_listed_with_a_schema_and_the_resources_are_there(env, errlog):
    async def scenario():
        async with connect(env, errlog) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert set(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and tool.input_schema["type"] == "object"
                assert tool.input_schema["additionalProperties"] is False  # as call_tool holds
                assert tool.annotations.read_only_hint or not tool.annotations.idempotent_hint
            store = tools["memory_store"].input_schema
            assert set(store["required"]) == {"type", "summary"}
            assert all(store["properties"][p].get("description") for p in store["properties"])
            assert tools["memory_search"].annotations.read_only_hint is True
            assert tools["memory_forget"].annotations.destructive_hint is True
            resources = [str(r.uri) for r in (await session.list_resources()).resources]
            assert resources == ["lessonloop://memories/recent"]
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["lessonloop://playbook/{scenario}"]

    run(scenario())


def test_every_tool_answers_against_a_fresh_home(env, errlog, home, tmp_path):
    async def scenario():
        async with connect(env, errlog) as session:
            assert await ok(session, "memory_search", {"query": "pnpm"}) == {"memories": []}
            assert await ok(session, "memory_recall") == "No memories yet."
            assert await ok(session, "list_runs") == {"runs": []}
            stored = await ok(
                session,
                "memory_store",
                {
                    "type": "preference",
                    "summary": "Use pnpm instead of npm",
                    "why": "faster installs",
                    "how_to_apply": "in every JS package",
                    "tags": "tooling, js",
                },
            )
            assert stored["action"] == "added" and stored["author"] == "auto"
            assert stored["source"] == "mcp" and stored["tags"] == ["tooling", "js", "mcp"]
            again = await ok(
                session,
                "memory_store",
                {
                    "type": "preference",
                    "summary": "use pnpm instead of npm",
                    "tags": ["tooling", "js"],
                },
            )
            assert again["action"] == "reinforced" and again["id"] == stored["id"]
            assert again["seen"] == 2
            found = (await ok(session, "memory_search", {"query": "pnpm", "limit": 5}))["memories"]
            assert [m["id"] for m in found] == [stored["id"]] and "score" in found[0]
            assert "Use pnpm instead of npm" in await ok(session, "memory_recall")
            audit = (await ok(session, "memory_audit"))["memories"]
            assert [m["summary"] for m in audit] == ["Use pnpm instead of npm"]
            recent = await session.read_resource("lessonloop://memories/recent")
            assert json.loads(recent.contents[0].text)[0]["id"] == stored["id"]
            assert "pnpm" in (home / "knowledge" / "project" / "knowledge.md").read_text()
            user = await ok(
                session,
                "memory_store",
                {"type": "preference", "scope": "user", "summary": "Answer in British English"},
            )
            assert user["scope"] == "user"
            assert (tmp_path / "user-home" / "lessonloop.db").exists()
            gone = await ok(session, "memory_forget", {"id": stored["id"]})
            assert gone == {
                "forgotten": stored["id"],
                "scope": "project",
                "summary": "Use pnpm instead of npm",
            }
            assert (await ok(session, "memory_search", {"query": "pnpm"}))["memories"] == []

            scenarios = (await ok(session, "list_scenarios"))["scenarios"]
            assert {"grid_ctf", "negotiation"} <= {s["name"] for s in scenarios}
            assert all(set(s) == {"name", "description", "strategy_schema"} for s in scenarios)
            report = await ok(
                session,
                "evaluate_strategy",
                {"scenario": "grid_ctf", "strategy": STRATEGY, "seeds": "1..3"},
            )
            assert report["valid"] and report["seeds"] == [1, 2, 3] and len(report["scores"]) == 3
            as_text = await ok(
                session,
                "evaluate_strategy",
                {"scenario": "grid_ctf", "strategy": json.dumps(STRATEGY), "seeds": [1, 2, 3]},
            )
            assert as_text["scores"] == report["scores"], "deterministic per strategy and seeds"
            playbook = await ok(session, "read_playbook", {"scenario": "grid_ctf"})
            assert playbook.startswith("# Playbook — scenario:grid_ctf")
            every_view = await ok(session, "read_playbook", {"scenario": "grid_ctf", "view": "all"})
            assert "# Hints" in every_view and "# Dead ends" in every_view
            resource = await session.read_resource("lessonloop://playbook/grid_ctf")
            assert resource.contents[0].text == playbook
            verdict = await ok(
                session,
                "judge_output",
                {"task": str(EXAMPLES / "sql-top-customers.yaml"), "output": GOOD_SQL},
            )
            assert verdict["score"] == 1.0 and verdict["passed_verifier"] is True
            assert set(verdict) == {"score", "passed_verifier", "dimensions", "reasoning", "epoch"}

    run(scenario())


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(env, errlog):
    async def scenario():
        async with connect(env, errlog) as session:
            text = await fails(session, "evaluate_strategy", {"scenario": "chess", "strategy": {}})
            assert "unknown scenario 'chess'" in text and "grid_ctf" in text
            text = await fails(
                session,
                "evaluate_strategy",
                {"scenario": "grid_ctf", "strategy": "{aggression: 0.5"},
            )
            assert "strategy is not valid JSON" in text
            text = await fails(
                session,
                "evaluate_strategy",
                {"scenario": "grid_ctf", "strategy": {"aggression": 7}},
            )
            assert "not valid for grid_ctf" in text
            text = await fails(
                session,
                "evaluate_strategy",
                {"scenario": "grid_ctf", "strategy": STRATEGY, "seeds": "9..1"},
            )
            assert "seeds '9..1'" in text and "--seeds" not in text
            assert "no project memories yet" in await fails(session, "memory_forget", {"id": 1})
            await ok(session, "memory_store", {"type": "decision", "summary": "Keep it simple"})
            assert "no project memory with id" in await fails(
                session, "memory_forget", {"id": 2**70}
            )
            assert "no project memory with id 4242" in await fails(
                session, "memory_forget", {"id": 4242}
            )
            text = await fails(session, "memory_search", {"query": "x", "limit": "ten"})
            assert "'limit'" in text and "integer" in text
            text = await fails(session, "memory_forget", {"id": [1]})
            assert "'id'" in text and "integer" in text
            # numbers are numbers: "1" or true is not quietly read as an id, a limit or a seed
            for tool, arguments in [
                ("memory_forget", {"id": "1"}),
                ("memory_search", {"query": "x", "limit": True}),
                ("memory_audit", {"limit": "5"}),
                ("run_start", {"scenario": "grid_ctf", "iterations": "3"}),
                (
                    "evaluate_strategy",
                    {"scenario": "grid_ctf", "strategy": STRATEGY, "seeds": [True, False]},
                ),
            ]:
                text = await fails(session, tool, arguments)
                assert "invalid arguments" in text and "integer" in text, (tool, text)
            assert "looks like a secret" in await fails(
                session, "run_start", {"scenario": "grid_ctf", "run_id": GITHUB_TOKEN}
            )
            text = await fails(session, "run_status", {"run_id": "r" * 200_000})
            assert text.startswith("Error executing tool run_status: unknown run id 'rrr")
            assert len(text.split(": ", 1)[1]) <= ERROR_LINE_MAX  # a huge id is not echoed whole
            text = await fails(session, "memory_store", {"type": "preference"})
            assert "invalid arguments for memory_store: 'summary' is required" == text
            text = await fails(session, "memory_store", {"type": "rumour", "summary": "x"})
            assert "'type'" in text and "'preference'" in text
            text = await fails(session, "memory_store", {"type": "decision", "summary": "   "})
            assert "not stored: empty summary" in text
            text = await fails(session, "memory_search", {"query": "x", "limt": 3})
            assert "unknown argument 'limt'" in text and "limit" in text
            assert "unknown run id 'nope' (see list_runs)" in await fails(
                session, "run_status", {"run_id": "nope"}
            )
            assert "'provider'" in await fails(
                session, "run_start", {"scenario": "grid_ctf", "provider": ""}
            )
            assert "unknown scenario" in await fails(session, "run_start", {"scenario": "chess"})
            assert "'iterations'" in await fails(
                session, "run_start", {"scenario": "grid_ctf", "iterations": 0}
            )
            text = await fails(session, "run_start", {"scenario": "grid_ctf", "seed": 2**63})
            assert "seed must be a non-negative 64-bit integer" in text and "--" not in text
            assert "invalid run id" in await fails(
                session, "run_start", {"scenario": "grid_ctf", "run_id": "../x"}
            )
            assert "unknown scenario" in await fails(
                session, "read_playbook", {"scenario": "chess"}
            )
            text = await fails(
                session,
                "judge_output",
                {"task": str(EXAMPLES / "support-reply.yaml"), "output": "Sorry about A-10423."},
            )
            assert "has a rubric, so judging it needs a model" in text
            assert "task file not found" in await fails(
                session, "judge_output", {"task": "missing.yaml", "output": "x"}
            )
            assert "Unknown tool" in await fails(session, "memory_delete_everything")
            with pytest.raises(Exception, match="unknown scenario 'chess'"):
                await session.read_resource("lessonloop://playbook/chess")
            # still serving
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            assert (await ok(session, "memory_search", {"query": "x"})) == {"memories": []}

    run(scenario())
    errlog.seek(0)
    assert "Traceback" not in errlog.read()


def _files(*roots: Path):
    for root in roots:
        if root.exists():
            yield from (p for p in root.rglob("*") if p.is_file())


def test_secrets_are_redacted_and_never_reach_disk(env, errlog, home, tmp_path):
    async def scenario():
        async with connect(env, errlog) as session:
            stored = await ok(
                session,
                "memory_store",
                {
                    "type": "observation",
                    "summary": f"Staging deploy token {GITHUB_TOKEN}",
                    "content": f"the staging key is {ANTHROPIC_KEY} and the CI token {GITHUB_TOKEN}",
                    "why": f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY}",
                    "tags": [GITHUB_TOKEN],
                },
            )
            found = (await ok(session, "memory_search", {"query": "staging key"}))["memories"]
            assert [m["id"] for m in found] == [stored["id"]]
            text = json.dumps(found)
            assert "[REDACTED:anthropic-api-key]" in text and "[REDACTED:github-token]" in text
            # secrets in arguments that are refused are not echoed either
            refused = await fails(
                session, "evaluate_strategy", {"scenario": ANTHROPIC_KEY, "strategy": {}}
            )
            refused += await fails(session, "memory_search", {"query": GITHUB_TOKEN, "limit": "x"})
            recent = await session.read_resource("lessonloop://memories/recent")
            return text + refused + recent.contents[0].text + await ok(session, "memory_recall")

    seen = run(scenario())
    secrets = [GITHUB_TOKEN, ANTHROPIC_KEY, GITHUB_TOKEN[4:], ANTHROPIC_KEY[13:45]]
    assert not [s for s in secrets if s in seen]
    files = list(_files(home, tmp_path / "user-home"))
    assert any(p.name == "lessonloop.db" for p in files)
    for path in files:
        data = path.read_bytes()
        assert not [s for s in secrets if s.encode() in data], f"a secret reached {path}"


def test_memories_flow_between_mcp_and_the_cli(env, errlog):
    async def scenario():
        async with connect(env, errlog) as session:
            stored = await ok(
                session,
                "memory_store",
                {
                    "type": "decision",
                    "summary": "Orders service uses Postgres 16",
                    "why": "logical replication",
                },
            )
            searched = cli(env, "memory", "search", "postgres", "--json")
            assert searched.returncode == 0, searched.stderr
            assert [m["id"] for m in json.loads(searched.stdout)] == [stored["id"]]
            added = cli(
                env,
                "memory",
                "add",
                "--type",
                "preference",
                "--summary",
                "Format Python with ruff",
                "--tags",
                "python",
                "--json",
            )
            assert added.returncode == 0, added.stderr
            found = (await ok(session, "memory_search", {"query": "ruff python"}))["memories"]
            assert found[0]["summary"] == "Format Python with ruff"
            assert found[0]["author"] == "user" and found[0]["source"] == "user"
            audit = (await ok(session, "memory_audit"))["memories"]
            assert [m["id"] for m in audit] == [stored["id"]], "the audit reviews automatic ones"
            shown = cli(env, "memory", "why", str(stored["id"]), "--json")
            assert json.loads(shown.stdout)["provenance"][0]["source"] == "mcp"

    run(scenario())


def test_run_start_runs_in_the_background_and_run_status_follows_it(env, errlog):
    async def scenario():
        async with connect(env, errlog) as session:
            starts = await asyncio.gather(
                *[
                    ok(
                        session,
                        "run_start",
                        {"scenario": "grid_ctf", "iterations": 3, "run_id": "mcp-run"},
                    )
                    for _ in range(4)
                ]
            )
            assert sum(s["started"] for s in starts) == 1, "racing starts spawn one run"
            started = next(s for s in starts if s["started"])
            assert started["run_id"] == "mcp-run"
            assert started["status"] in ("created", "running")
            deadline = time.monotonic() + 60
            while True:
                status = await ok(session, "run_status", {"run_id": "mcp-run"})
                if (
                    status["run"]["status"] not in ("created", "running")
                    and status["process"]["exit_code"] is not None
                ):
                    break
                assert time.monotonic() < deadline, f"the run did not finish: {status}"
                await asyncio.sleep(0.2)
            assert status["run"]["status"] == "completed", status
            assert status["process"]["exit_code"] == 0 and status["process"]["running"] is False
            assert status["progress_report"]["generations_completed"] == 3
            assert [g["generation_index"] for g in status["generations"]] == [1, 2, 3]
            contract_validator("run-status-v1.schema.json").validate(status)
            runs = (await ok(session, "list_runs"))["runs"]
            assert [r["run_id"] for r in runs] == ["mcp-run"] and runs[0]["status"] == "completed"
            from_cli = cli(env, "status", "mcp-run", "--json")
            assert json.loads(from_cli.stdout) == {
                k: v for k, v in status.items() if k != "process"
            }
            playbook = await ok(session, "read_playbook", {"scenario": "grid_ctf"})
            assert playbook.startswith("# Playbook — scenario:grid_ctf")
            again = await ok(
                session, "run_start", {"scenario": "grid_ctf", "iterations": 3, "run_id": "mcp-run"}
            )
            assert again["started"] is False and again["status"] == "completed", again

    run(scenario())


FRUITS = [
    "apples",
    "bananas",
    "cherries",
    "dates",
    "elderberries",
    "figs",
    "grapes",
    "honeydew",
    "kiwis",
    "lemons",
    "mangoes",
    "nectarines",
    "oranges",
    "papayas",
    "quinces",
    "raspberries",
    "strawberries",
    "tangerines",
    "watermelons",
    "blueberries",
]


def test_concurrent_calls_all_succeed_and_nothing_is_lost(env, errlog, home):
    async def scenario():
        async with connect(env, errlog) as session:
            stores = [
                session.call_tool(
                    "memory_store",
                    {"type": "observation", "summary": f"Team lunch always includes {fruit}"},
                )
                for fruit in FRUITS
            ]
            searches = [
                session.call_tool("memory_search", {"query": f"lunch {fruit}"}) for fruit in FRUITS
            ]
            results = await asyncio.gather(*[c for pair in zip(stores, searches) for c in pair])
            assert not [r.content[0].text for r in results if r.is_error]
            added = [r.structured_content for r in results[0::2]]
            assert all(a["action"] == "added" for a in added)
            assert len({a["id"] for a in added}) == len(FRUITS)
            audit = (await ok(session, "memory_audit", {"limit": 500}))["memories"]
            assert sorted(m["summary"] for m in audit) == sorted(
                f"Team lunch always includes {fruit}" for fruit in FRUITS
            )
            view = (home / "knowledge" / "project" / "knowledge.md").read_text()
            assert all(fruit in view for fruit in FRUITS), (
                "the view was rendered after the last write"
            )

    run(scenario())


NOISY = """
import logging, os, sys

print("noisy: printed on import")


class Noisy:
    name = "noisy"
    description = "Prints, logs and writes to fd 1 everywhere."
    strategy_schema = {"type": "object", "properties": {"x": {"type": "number", "minimum": 0,
                       "maximum": 1}}, "required": ["x"], "additionalProperties": False}

    def validate(self, strategy):
        print("noisy: validate on stdout")
        os.write(1, b"noisy: raw write to fd 1\\n")
        logging.getLogger("noisy").warning("noisy: a log line")
        if strategy.get("x") == 0.25:
            sys.exit(3)
        return [] if isinstance(strategy.get("x"), (int, float)) else ["x must be a number"]

    def play(self, strategy, seed):
        print("noisy: play on stdout", flush=True)
        return {"score": strategy["x"], "dimensions": {"x": strategy["x"]}}
"""


def test_stdout_carries_only_protocol_even_when_tools_print_and_log(env, errlog, tmp_path):
    """Driven by hand: every line the server writes on stdout must be a JSON-RPC message."""
    from mcp.types.version import LATEST_HANDSHAKE_VERSION

    plugin = tmp_path / "noisy.py"
    plugin.write_text(NOISY)
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        text=True,
    )
    watchdog = threading.Timer(60, proc.kill)
    watchdog.start()
    lines: list[str] = []

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        proc.stdin.flush()

    def answer(request_id: int) -> dict:
        while True:
            line = proc.stdout.readline()
            assert line, "the server closed its stdout"
            lines.append(line)
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def call(request_id: int, tool: str, arguments: dict) -> dict:
        send(
            {
                "id": request_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )
        return answer(request_id)["result"]

    try:
        send(
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": LATEST_HANDSHAKE_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            }
        )
        assert answer(1)["result"]["serverInfo"]["name"] == "lessonloop"
        send({"method": "notifications/initialized"})
        scored = call(
            2,
            "evaluate_strategy",
            {"scenario": f"{plugin}:Noisy", "strategy": {"x": 0.5}, "seeds": "1..3"},
        )
        assert not scored.get("isError") and scored["structuredContent"]["mean_score"] == 0.5
        crashed = call(
            3, "evaluate_strategy", {"scenario": f"{plugin}:Noisy", "strategy": {"x": 0.25}}
        )
        assert (
            crashed["isError"] and "internal error: SystemExit: 3" in crashed["content"][0]["text"]
        )
        assert not call(4, "memory_search", {"query": "anything"}).get("isError")
        proc.stdin.close()
        lines += proc.stdout.readlines()
        assert proc.wait(timeout=30) == 0
    finally:
        watchdog.cancel()
        proc.kill()
        proc.wait()
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", f"not a protocol message: {line!r}"
    errlog.seek(0)
    stderr = errlog.read()
    for stray in (
        "printed on import",
        "validate on stdout",
        "raw write to fd 1",
        "a log line",
        "play on stdout",
    ):
        assert f"noisy: {stray}" in stderr, f"{stray!r} went missing instead of to stderr"


def test_the_sdk_is_imported_lazily_and_its_absence_is_one_clear_error(monkeypatch, env):
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, lessonloop.mcp.server; print('mcp' in sys.modules)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.strip() == "False", probe.stderr
    from lessonloop.errors import UsageError
    from lessonloop.mcp import server

    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(UsageError, match=r"needs its SDK: pip install 'lessonloop\[mcp\]'"):
        server.serve()
    import gc

    assert gc.isenabled(), "the collector paused for the import runs again"


def test_the_server_logs_plain_lines_to_stderr_without_importing_rich(env):
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import logging, sys; "
            "from lessonloop.mcp.server import build_server; build_server(); "
            "logging.getLogger('mcp.server').warning('a plain warning'); "
            "print('rich' in sys.modules)",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert probe.stdout.strip() == "False", probe.stderr  # (Rich costs ~5% of the start)
    assert probe.stderr.strip() == "a plain warning"


def test_started_by_claude_code_it_keeps_memories_where_the_hooks_do(env, errlog, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    env = {k: v for k, v in env.items() if k != "LESSONLOOP_HOME"}
    env["CLAUDE_PROJECT_DIR"] = str(project)

    async def scenario():
        async with connect(env, errlog) as session:
            await ok(session, "memory_store", {"type": "decision", "summary": "Ship on Tuesdays"})

    run(scenario())
    assert (project / ".lessonloop" / "lessonloop.db").exists()


CLIENT = """
import json, subprocess, sys
server = subprocess.Popen([sys.executable, "-c", {serve!r}], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE)
print(server.pid, flush=True)
def send(message):
    server.stdin.write((json.dumps(message) + "\\n").encode())
    server.stdin.flush()
send({{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {{
    "protocolVersion": "2025-06-18", "capabilities": {{}}, "clientInfo": {{"name": "t", "version": "1"}}}}}})
server.stdout.readline()
send({{"jsonrpc": "2.0", "method": "notifications/initialized"}})
send({{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {{"name": "judge_output",
      "arguments": {{"task": {task!r}, "output": "x"}}}}}})
print("sent", flush=True)
server.wait()
"""


def test_a_killed_client_takes_the_server_and_its_work_with_it(env, tmp_path):
    import os
    import signal

    marker = f"lessonloop-test-{os.getpid()}-slow-verifier"
    task = tmp_path / "slow.yaml"
    task.write_text(
        f'name: slow\nprompt: p\nverifier:\n  command: "sleep 120 && echo {marker}"\n'
        "  timeout: 120\n"
    )
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT.format(serve=SERVE, task=str(task))],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    server_pid = int(client.stdout.readline())
    assert client.stdout.readline().strip() == "sent"

    def running(pattern: str) -> bool:
        return subprocess.run(["pgrep", "-f", pattern], capture_output=True).returncode == 0

    deadline = time.monotonic() + 30
    while not running(marker):  # the verifier has started: the call is in flight
        assert time.monotonic() < deadline, "the verifier never started"
        time.sleep(0.1)
    os.kill(client.pid, signal.SIGKILL)
    client.wait()
    deadline = time.monotonic() + 10
    while running(marker) or alive(server_pid):
        assert time.monotonic() < deadline, "the orphaned server or its verifier lived on"
        time.sleep(0.1)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has exited: only its parent has not reaped it)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
