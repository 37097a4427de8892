"""`lessonloop mcp` through the official SDK's stdio client:

- server start to the first tool response (spawn, initialize, one memory_search on a fresh
  home): median of 5, target ≤ 1 s;
- memory_search round trip with about 1000 memories stored: median of 200, target ≤ 20 ms.

Usage: PYTHONPATH=src python bench/mcp_server.py [START_RUNS] [SEARCHES]
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from common import machine_speed

ROOT = Path(__file__).resolve().parents[1]
START_TARGET_S = 1.0
SEARCH_TARGET_MS = 20.0
MEMORIES = 1000
SERVE = ["-m", "lessonloop", "mcp"]  # what `lessonloop mcp` runs
WORDS = ("api cache queue retry timeout schema index migration deploy rollback token session "
         "worker thread socket buffer logger metric trace alert config secret vault proxy route "
         "handler parser lexer compiler linker bundle module package release branch commit "
         "review test fixture mock stub coverage lint format style naming import export "
         "database table column query join filter sort page cursor batch stream event topic "
         "consumer producer broker partition replica shard cluster node pod container image "
         "volume mount network subnet firewall gateway balancer certificate domain header "
         "cookie cors csrf oauth scope claim role permission audit backup restore snapshot "
         "python rust go typescript react vue svelte django flask fastapi rails spring kotlin "
         "swift gradle maven npm pnpm yarn poetry uv ruff black mypy pytest jest vitest docker "
         "postgres mysql sqlite redis kafka rabbit nginx terraform ansible helm grafana").split()


def verdict(value: float, target: float) -> str:
    return "OK" if value <= target else "MISSED"


def environment(home: Path) -> dict:
    env = dict(os.environ, LESSONLOOP_HOME=str(home), LESSONLOOP_USER_HOME=str(home.parent / "user"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


def seed_memories(home: Path, count: int) -> int:
    """Store ``count`` distinct memories in one admission batch (as memory_store would, one by
    one); returns how many were added."""
    os.environ["LESSONLOOP_HOME"] = str(home)
    from lessonloop.knowledge import admission
    from lessonloop.store import open_store

    rng = random.Random(7)
    proposals = [admission.Proposal(
        kind=rng.choice(("pattern", "decision", "preference", "observation")), scope="project",
        summary=" ".join(rng.sample(WORDS, 7)), content=" ".join(rng.sample(WORDS, 25)),
        tags=["mcp"], author="auto", source="mcp") for _ in range(count)]
    with open_store(home) as store:
        outcomes = admission.admit(store, proposals, home)
    return sum(o.action == "added" for o in outcomes)


async def first_response(env: dict) -> float:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=SERVE, env=env)
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("memory_search", {"query": "anything"})
            elapsed = time.perf_counter() - started
            assert not result.is_error, result.content
    return elapsed


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
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    print(machine_speed())
    searches = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-mcp-") as tmp:
        starts = []
        for index in range(runs + 1):
            seconds = asyncio.run(first_response(environment(Path(tmp) / f"fresh-{index}")))
            if index:  # the first run warms the file cache and .pyc files
                starts.append(seconds)
        start = statistics.median(starts)
        print(f"server start to first tool response: median {start:.3f} s over {runs} runs "
              f"(min {min(starts):.3f}, max {max(starts):.3f}); target ≤ {START_TARGET_S:g} s: "
              f"{verdict(start, START_TARGET_S)}")

        home = Path(tmp) / "seeded"
        added = seed_memories(home, MEMORIES)
        times, hits = asyncio.run(search_round_trips(environment(home), searches))
        median = statistics.median(times)
        p95 = sorted(times)[int(0.95 * (len(times) - 1))]
        print(f"memory_search round trip with {added} memories: median {median:.2f} ms over "
              f"{searches} calls (p95 {p95:.2f}, max {max(times):.2f}; {hits / len(times):.1f} "
              f"results per call); target ≤ {SEARCH_TARGET_MS:g} ms: "
              f"{verdict(median, SEARCH_TARGET_MS)}")


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
