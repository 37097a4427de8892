"""Costs that must not grow with the run (issue 20, point 5): prompt bytes per role and stored
bytes per generation, at generation 30 and at generation 300 of one offline grid_ctf run.

Prompt bytes are the prompts as stored (``role_outputs.prompt``): for the offline agent that is
the words a model would read plus the record of the data it acted on. "words" is the part a
model is sent (everything before that record). Stored bytes are every row the generation left
in the database (role prompts and outputs, matches, screenings, gate decisions, calls, the
generation row) plus its artifact files. Each figure is the mean over the five generations
ending at 30 and at 300, so one generation's retries do not decide it.
Usage: python bench/prompt_growth.py [GENERATIONS]   (default 300; the run takes a few minutes)
       python bench/prompt_growth.py --home HOME RUN_ID GENERATIONS   (a run made before)
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import lessonloop_command

RECORD = "\n\n```json lessonloop-state\n"
WINDOW = 5
TABLES = (
    "role_outputs",
    "matches",
    "screenings",
    "gate_decisions",
    "provider_calls",
    "generations",
)


def _row_bytes(conn: sqlite3.Connection, table: str, run_id: str, generation: int) -> int:
    columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
    total = " + ".join(f"COALESCE(LENGTH(CAST({c} AS BLOB)), 0)" for c in columns)
    value = conn.execute(
        f"SELECT SUM({total}) FROM {table} WHERE run_id = ? AND generation_index = ?",
        (run_id, generation),
    ).fetchone()[0]
    return value or 0


def _files_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir()) if folder.is_dir() else 0


def measure(home: Path, run_id: str, generation: int) -> dict:
    """Per-role mean prompt bytes (stored, and words only) and stored bytes per generation,
    averaged over the WINDOW generations ending at ``generation``."""
    conn = sqlite3.connect(home / "lessonloop.db")
    gens = range(generation - WINDOW + 1, generation + 1)
    roles: dict[str, dict[str, list[int]]] = {}
    for role, prompt in conn.execute(
        "SELECT role, prompt FROM role_outputs WHERE run_id = ? AND generation_index "
        "BETWEEN ? AND ?",
        (run_id, gens[0], gens[-1]),
    ):
        sizes = roles.setdefault(role, {"stored": [], "words": []})
        sizes["stored"].append(len(prompt.encode()))
        sizes["words"].append(len(prompt.split(RECORD, 1)[0].encode()))
    stored = {
        table: statistics.mean(_row_bytes(conn, table, run_id, g) for g in gens) for table in TABLES
    }
    stored["files"] = statistics.mean(
        _files_bytes(home / "runs" / run_id / "generations" / str(g)) for g in gens
    )
    conn.close()
    return {
        "roles": {
            role: {k: statistics.mean(v) for k, v in sizes.items()}
            for role, sizes in sorted(roles.items())
        },
        "stored": stored,
    }


def report(home: Path, run_id: str, generations: int, elapsed: float | None) -> None:
    points = [g for g in (30, generations) if g <= generations]
    results = {g: measure(home, run_id, g) for g in points}
    database = (home / "lessonloop.db").stat().st_size
    took = f" in {elapsed:.0f} s" if elapsed is not None else ""
    print(
        f"offline grid_ctf, {generations} generations{took}; database "
        f"{database / 1e6:.1f} MB; means over the {WINDOW} generations ending at each point"
    )
    head = "".join(f"{f'gen {g}':>12}" for g in points)
    print(f"{'prompt bytes per call':<32}{head}{'ratio':>8}")
    for role in results[points[-1]]["roles"]:
        for kind in ("words", "stored"):
            values = [results[g]["roles"].get(role, {}).get(kind, 0) for g in points]
            ratio = values[-1] / values[0] if values[0] else float("nan")
            print(
                f"  {role + ' (' + kind + ')':<30}"
                + "".join(f"{v:>12,.0f}" for v in values)
                + f"{ratio:>8.2f}"
            )
    print(f"{'stored bytes per generation':<32}{head}{'ratio':>8}")
    for part in results[points[-1]]["stored"]:
        values = [results[g]["stored"][part] for g in points]
        ratio = values[-1] / values[0] if values[0] else float("nan")
        print(f"  {part:<30}" + "".join(f"{v:>12,.0f}" for v in values) + f"{ratio:>8.2f}")
    totals = [sum(results[g]["stored"].values()) for g in points]
    print(
        f"  {'total':<30}"
        + "".join(f"{v:>12,.0f}" for v in totals)
        + f"{totals[-1] / totals[0]:>8.2f}"
    )


def main() -> None:
    if sys.argv[1:2] == ["--home"]:  # measure a run made before: --home HOME RUN_ID GENERATIONS
        report(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), None)
        return
    generations = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory(prefix="lessonloop-growth-") as tmp:
        home = Path(tmp) / "home"
        env = dict(os.environ, LESSONLOOP_HOME=str(home))
        started = time.perf_counter()
        subprocess.run(
            lessonloop_command()
            + ["run", "grid_ctf", "--iterations", str(generations), "--run-id", "growth", "--json"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        report(home, "growth", generations, time.perf_counter() - started)


if __name__ == "__main__":
    main()
