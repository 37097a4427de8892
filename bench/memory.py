"""Session memory at scale (targets: memorize of a 10 MB transcript with 100,000 entries in the
store ≤ 1 s; `memory search` p50 ≤ 10 ms at 100,000 entries).

The store is filled with 100,000 varied memories (written with SQL for speed: setting up is
not what is measured; the FTS5 index is kept by the schema's triggers), then a ~10 MB
Claude Code transcript is memorized through the real code path, and searches are timed.

Also times the SessionStart recall block at that size (no target).

Usage: python bench/memory.py [ENTRIES]
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import machine_speed

COMMON = (
    "cache queue billing auth retry index schema deploy docker pytest migration lint "
    "vitest webpack pnpm npm postgres redis kafka cron logging metrics tracing timeout "
    "config secret token rotate backup restore router handler service worker api client "
    "server build release branch merge rebase review fixture mock stub flaky parallel"
).split()
# a project's vocabulary: a few common words and a long tail (Zipf-like), as real notes have
_SYLLABLES = "ka lo mi ne ru ta so vi ze pa do fu gi he ju".split()
TAIL = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})[:3000]
WEIGHTS = [1 / (rank + 1) for rank in range(len(COMMON) + len(TAIL))]
WORDS = COMMON + TAIL


def words(rng: random.Random, k: int) -> list[str]:
    return rng.choices(WORDS, weights=WEIGHTS, k=k)


def fill(db: Path, count: int) -> None:
    rng = random.Random(7)
    conn = sqlite3.connect(db)
    now = "2026-11-30T10:00:00.000Z"
    rows = []
    for i in range(count):
        chosen = words(rng, 7)
        summary = f"{chosen[0].capitalize()} {' '.join(chosen[1:6])} ({i})"
        rows.append(
            (
                "preference" if i % 3 else "pattern",
                "project",
                summary,
                " ".join(words(rng, 12)),
                "",
                "",
                json.dumps(["auto-memorize"]),
                f"fp{i}",
                "auto",
                now,
                now,
            )
        )
    conn.executemany(
        "INSERT INTO knowledge (kind, scope, summary, content, why, how_to_apply, tags_json, "
        "fingerprint, author, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    conn.commit()
    conn.close()


def transcript(path: Path, target_bytes: int) -> None:
    rng = random.Random(3)
    lines, size, n = [], 0, 0
    stated = ["I prefer pnpm over npm for this repo.", "From now on we use vitest instead of jest."]
    while size < target_bytes:
        n += 1
        call = f"toolu_{n}"
        failing = n % 7 == 0
        output = "".join(f"line {i}: {' '.join(words(rng, 3))} ok\n" for i in range(40)) + (
            f"Error: Cannot find module '/tmp/x{n}/a.js'\n" if failing else ""
        )
        events = []
        if n % 15 == 1:  # a prompt now and then, most of them ordinary requests
            prompt = (
                stated[(n // 15) % 2]
                if n % 45 == 1
                else f"Please look at the {' '.join(words(rng, 4))} code and fix it."
            )
            events.append({"type": "user", "message": {"role": "user", "content": prompt}})
        events += [
            {
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": "Bash",
                            "input": {"command": "npm test" if n % 2 else "pytest -q"},
                        }
                    ],
                },
            },
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": call,
                            "content": output,
                            "is_error": failing,
                        }
                    ],
                },
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
            },
        ]
        for event in events:
            event.update(
                {
                    "uuid": f"u{n}-{len(lines)}",
                    "sessionId": "bench",
                    "isSidechain": False,
                    "timestamp": "2026-11-30T10:00:00.000Z",
                }
            )
            line = json.dumps(event)
            lines.append(line)
            size += len(line) + 1
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    print(machine_speed())
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        os.environ["LESSONLOOP_HOME"] = str(home)
        os.environ["LESSONLOOP_USER_HOME"] = str(Path(tmp) / "user")
        from lessonloop.app.memory import search_memories
        from lessonloop.memory import consent
        from lessonloop.memory.memorize import memorize
        from lessonloop.memory.recall import block
        from lessonloop.store import open_store

        open_store().close()
        fill(home / "lessonloop.db", count)
        consent.record(home, "yes")
        path = Path(tmp) / "session.jsonl"
        transcript(path, 10 * 1024 * 1024)
        size_mb = path.stat().st_size / 1e6
        times = []
        for attempt in range(3):  # fresh sessions: each memorizes the same transcript again
            started = time.perf_counter()
            result = memorize(f"bench-{attempt}", home, transcript=str(path))
            times.append(time.perf_counter() - started)
        memorize_s = statistics.median(times)
        print(
            f"memorize: {size_mb:.1f} MB transcript, {count} entries in the store: median "
            f"{memorize_s:.2f} s over 3 (last stored {len(result.stored)}, reinforced "
            f"{result.reinforced}); target ≤ 1 s: {'OK' if memorize_s <= 1 else 'MISSED'}"
        )
        rng = random.Random(11)
        queries = [" ".join(words(rng, 2)) for _ in range(200)]
        search_memories(queries[0], "project", 10)  # warm the page cache
        samples = []
        for query in queries:
            started = time.perf_counter()
            search_memories(query, "project", 10)
            samples.append((time.perf_counter() - started) * 1000)
        p50 = statistics.median(samples)
        recall_ms = []
        for _ in range(5):
            started = time.perf_counter()
            block(home, Path(tmp) / "user")
            recall_ms.append((time.perf_counter() - started) * 1000)
        print(
            f"session-start recall block: median {statistics.median(recall_ms):.1f} ms over 5 "
            f"at {count} entries (no target)"
        )
        print(
            f"memory search: p50 {p50:.1f} ms, p95 {sorted(samples)[189]:.1f} ms over 200 "
            f"queries at {count} entries; target p50 ≤ 10 ms: {'OK' if p50 <= 10 else 'MISSED'}"
        )


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
