"""Sharing knowledge at scale: `knowledge import` of an export of ENTRIES varied memories into
a fresh home, the same file again (nothing to do), `knowledge export` of that store, and the
export imported into a second fresh home. Every step goes through the real CLI in a process.

The memories use bench/memory.py's vocabulary (a few common words, a long Zipf-like tail), so
admission's BM25 dedupe sees what real notes give it.

Usage: python bench/knowledge_share.py [ENTRIES]   (default 5,000)
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import machine_speed
from memory import words

ROOT = Path(__file__).resolve().parents[1]


def export_file(path: Path, count: int) -> None:
    rng = random.Random(11)
    lines = [json.dumps({"format": "lessonloop-knowledge", "version": 1})]
    for i in range(count):
        chosen = words(rng, 7)
        lines.append(
            json.dumps(
                {
                    "kind": "preference" if i % 3 else "pattern",
                    "scope": "project",
                    "summary": f"{chosen[0].capitalize()} {' '.join(chosen[1:6])} ({i})",
                    "content": " ".join(words(rng, 12)),
                    "helpful": i % 3,
                    "seen": 1 + i % 4,
                    "provenance": [{"source": "session", "session_id": f"s{i}"}],
                }
            )
        )
    path.write_text("\n".join(lines) + "\n")


def timed(home: Path, *args: str) -> tuple[float, str]:
    env = {**os.environ, "LESSONLOOP_HOME": str(home), "PYTHONPATH": str(ROOT / "src")}
    env["LESSONLOOP_USER_HOME"] = str(home.parent / "user-home")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lessonloop", *args], env=env, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return elapsed, done.stdout


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        source = base / "team.jsonl"
        export_file(source, count)
        for label, home, args in (
            ("import into a fresh home", base / "a", ("knowledge", "import", str(source))),
            ("the same file again", base / "a", ("knowledge", "import", str(source))),
            ("export that store", base / "a", ("knowledge", "export", "-o", str(base / "b.jsonl"))),
            ("its export into a fresh home", base / "c", ("knowledge", "import", str(base / "b.jsonl"))),
        ):  # fmt: skip
            elapsed, out = timed(home, *args, "--json")
            print(
                f"{label:32} {elapsed:7.2f} s  {count / elapsed:8.0f} entries/s  {out.strip()!r:.120}"
            )


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
