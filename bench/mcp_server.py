"""`lessonloop mcp` start-up side by side with minimal servers on the same SDK and transport,
then memory_search through the official SDK's stdio client:

- spawn to the first tool response (initialize, initialized, one memory_search on a fresh
  home), raw JSON-RPC lines over pipes, for ``lessonloop mcp`` and two minimal servers
  written here (the SDK's low-level ``Server`` and its ``MCPServer``, one tool each, both on
  ``stdio_server``) taking turns: medians of wall time and of the server's CPU time up to
  that response. Target: ≤ 0.6 s, or, where the SDK's own start alone (the minimal
  low-level server) takes more, ≤ 1.1× the minimal low-level server;
- memory_search round trip with about 1000 memories stored: median of 200, target ≤ 20 ms.

Usage: PYTHONPATH=src python bench/mcp_server.py [START_RUNS] [SEARCHES]
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine_speed

ROOT = Path(__file__).resolve().parents[1]
START_TARGET_S = 0.6
START_RATIO = 1.1  # × the minimal low-level server, when that alone takes over START_TARGET_S
SEARCH_TARGET_MS = 20.0
MEMORIES = 1000
SERVE = ["-m", "lessonloop", "mcp"]  # what `lessonloop mcp` runs
MINIMAL_LOWLEVEL = """
import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="memory_search", input_schema={
        "type": "object", "properties": {"query": {"type": "string"}}})])

async def call_tool(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text="[]")])

async def main():
    server = Server("minimal", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""
MINIMAL_MCPSERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")

@server.tool()
def memory_search(query: str) -> list[str]:
    return []

server.run("stdio")
"""
SERVERS = {
    "lessonloop mcp": SERVE,
    "minimal low-level Server": ["-c", MINIMAL_LOWLEVEL],
    "minimal MCPServer": ["-c", MINIMAL_MCPSERVER],
}
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_search", "arguments": {"query": "anything"}},
    },
]
WORDS = (
    "api cache queue retry timeout schema index migration deploy rollback token session "
    "worker thread socket buffer logger metric trace alert config secret vault proxy route "
    "handler parser lexer compiler linker bundle module package release branch commit "
    "review test fixture mock stub coverage lint format style naming import export "
    "database table column query join filter sort page cursor batch stream event topic "
    "consumer producer broker partition replica shard cluster node pod container image "
    "volume mount network subnet firewall gateway balancer certificate domain header "
    "cookie cors csrf oauth scope claim role permission audit backup restore snapshot "
    "python rust go typescript react vue svelte django flask fastapi rails spring kotlin "
    "swift gradle maven npm pnpm yarn poetry uv ruff black mypy pytest jest vitest docker "
    "postgres mysql sqlite redis kafka rabbit nginx terraform ansible helm grafana"
).split()


def verdict(value: float, target: float) -> str:
    return "OK" if value <= target else "MISSED"


def environment(home: Path) -> dict:
    env = dict(
        os.environ, LESSONLOOP_HOME=str(home), LESSONLOOP_USER_HOME=str(home.parent / "user")
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


def seed_memories(home: Path, count: int) -> int:
    """Store ``count`` distinct memories in one admission batch (as memory_store would, one by
    one); returns how many were added."""
    os.environ["LESSONLOOP_HOME"] = str(home)
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    rng = random.Random(7)
    proposals = [
        admission.Proposal(
            kind=rng.choice(("pattern", "decision", "preference", "observation")),
            scope="project",
            summary=" ".join(rng.sample(WORDS, 7)),
            content=" ".join(rng.sample(WORDS, 25)),
            tags=["mcp"],
            author="auto",
            source="mcp",
        )
        for _ in range(count)
    ]
    with open_store(home) as store:
        outcomes = admission.admit(store, proposals, home)
    return sum(o.action == "added" for o in outcomes)


def first_response(args: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU seconds from spawning ``python ARGS`` to its answer to a tool call sent
    right after the handshake (all written at once, as clients pipeline them)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in HANDSHAKE).encode())
    proc.stdin.flush()
    for line in proc.stdout:
        if json.loads(line).get("id") == 2:
            break
    else:
        raise SystemExit(f"no answer to the tool call from {args}")
    wall = time.perf_counter() - started
    with open(f"/proc/{proc.pid}/stat") as handle:  # utime + stime, in clock ticks
        ticks = sum(map(int, handle.read().rsplit(")", 1)[1].split()[11:13]))
    proc.stdin.close()
    proc.stdout.close()
    proc.wait()
    return wall, ticks / os.sysconf("SC_CLK_TCK")


def sdk_import() -> tuple[float, float]:
    """Wall and CPU seconds of a process that only imports the SDK (any server pays this:
    importing any part of ``mcp`` runs its package's ``__init__``, which imports the client,
    both server layers, the HTTP transports and the protocol's types). It exits at once, as
    the servers' CPU time is taken at their answer, before any clean-up."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "import os, mcp; os._exit(0)"])
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime


async def search_round_trips(env: dict, count: int) -> tuple[list[float], int]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=SERVE, env=env)
    rng = random.Random(11)
    times, hits = [], 0
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for attempt in range(count + 10):
                query = " ".join(rng.sample(WORDS, 3))
                started = time.perf_counter()
                result = await session.call_tool("memory_search", {"query": query, "limit": 10})
                elapsed = (time.perf_counter() - started) * 1000
                assert not result.is_error, result.content
                if attempt >= 10:  # the first calls import the search path
                    times.append(elapsed)
                    hits += len(result.structured_content["memories"])
    return times, hits


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    print(machine_speed())
    searches = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-mcp-") as tmp:
        starts: dict[str, list[tuple[float, float]]] = {name: [] for name in SERVERS}
        imports = []
        for index in range(runs + 1):  # the servers take turns; the first round warms caches
            for turn, (name, args) in enumerate(SERVERS.items()):
                result = first_response(args, environment(Path(tmp) / f"fresh-{index}-{turn}"))
                if index:
                    starts[name].append(result)
            if index:
                imports.append(sdk_import())
        medians = {
            name: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for name, v in starts.items()
        }
        for name, (wall, cpu) in medians.items():
            walls = [w for w, _ in starts[name]]
            print(
                f"{name:26s} spawn to first tool response: median {wall:.3f} s wall "
                f"(min {min(walls):.3f}, max {max(walls):.3f}), {cpu:.3f} s CPU, {runs} runs"
            )
        print(
            f"{'import mcp':26s} the SDK's import alone: median "
            f"{statistics.median(w for w, _ in imports):.3f} s wall, "
            f"{statistics.median(c for _, c in imports):.3f} s CPU, {runs} runs"
        )
        ours, floor = medians["lessonloop mcp"], medians["minimal low-level Server"]
        print(
            f"lessonloop / minimal low-level: {ours[0] / floor[0]:.2f}x wall, "
            f"{ours[1] / floor[1]:.2f}x CPU"
        )
        if floor[0] > START_TARGET_S:
            print(
                f"the SDK's own start alone is over {START_TARGET_S:g} s here: target ≤ "
                f"{START_RATIO:g}x the minimal low-level server: "
                f"{verdict(ours[0] / floor[0], START_RATIO)}"
            )
        else:
            print(f"target ≤ {START_TARGET_S:g} s: {verdict(ours[0], START_TARGET_S)}")

        home = Path(tmp) / "seeded"
        added = seed_memories(home, MEMORIES)
        times, hits = asyncio.run(search_round_trips(environment(home), searches))
        median = statistics.median(times)
        p95 = sorted(times)[int(0.95 * (len(times) - 1))]
        print(
            f"memory_search round trip with {added} memories: median {median:.2f} ms over "
            f"{searches} calls (p95 {p95:.2f}, max {max(times):.2f}; {hits / len(times):.1f} "
            f"results per call); target ≤ {SEARCH_TARGET_MS:g} ms: "
            f"{verdict(median, SEARCH_TARGET_MS)}"
        )


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
