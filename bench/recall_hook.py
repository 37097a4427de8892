"""``hook user-prompt-submit`` with per-prompt recall against 100,000 stored memories (issue 22's
target: ≤ 40 ms median), side by side with the floor (``python -S -c pass``) and with the same
hook on an empty store, in the same run. ``pre-tool-use`` before a Bash command (the known
failure of that command) is timed too, at both sizes. The hooks run as ``lessonloop install
claude-code`` writes them (``claude_code.hook_command``); one row runs the console script, for
reference. A hook answers and exits, then captures in the background (memory/deferred.py): each
run's capture is written before the next run starts.

The store holds 100,000 project memories with realistic, varied summaries (errors of common
commands and their fixes, tool choices, decisions and preferences about generated module names
and paths: a few common words and a long tail, as real notes have), written with SQL for speed
(setting up is not what is measured; the FTS5 index is kept by the schema's triggers).

Each run is a new session (a memory given once is not given again in a session, so one session
would search for less and less). Runs are interleaved, one of each command per round, so a
shared machine's drift moves all of them alike; the first rounds warm the caches and are not
counted. See bench/hooks.py for the other hooks.

Usage: python bench/recall_hook.py [RUNS] [MEMORIES]
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import hook_command, lessonloop_command, machine_speed, settle, verdict

TARGET_MS = 40
WARMUP = 3
PROMPTS = {  # what is timed, and whether recall should find something for it
    "a prompt about known things": "the integration tests hang while connecting to redis; "
    "rerun pytest and check the docker compose config of the billing worker",
    "a plain request": "Can you add a details element under the pricing table that explains "
    "the yearly discount?",
}
COMMAND = "npm test -- --run"

COMMANDS = (
    "npm test",
    "pnpm build",
    "pnpm install",
    "pytest",
    "cargo test",
    "mix test",
    "go test",
    "make lint",
    "docker compose up",
    "alembic upgrade head",
    "uv run pytest",
    "npx tsc",
    "ruff check",
    "mypy",
    "cargo clippy",
    "mix format",
    "bundle exec rspec",
    "gradle build",
)
ERRORS = (
    "ModuleNotFoundError: No module named '{a}'",
    "TypeError: {a}() missing 1 required argument",
    "connection refused on port {n}",
    "Cannot find module '{a}'",
    "error[E0425]: cannot find value `{a}` in this scope",
    "KeyError: '{a}'",
    'FATAL: database "{a}" does not exist',
    "{a}.{b} is not a function",
    "permission denied: {a}/{b}.sh",
    "timeout after {n} s in {a}",
)
FIXES = (
    "run `{c}` first",
    "edit `{a}/{b}.py`",
    "set {A}_URL in .env",
    "run it from `{a}/`",
    "pin {a} to {n}.{m}",
    "add `{a}` to the dev dependencies",
    "restart the {a} container",
)
SHAPES = (
    ("pattern", "When `{c}` fails with `{e}`, {f}"),
    ("preference", "Use {a}, not {b}, for the {x} of {y}"),
    ("decision", "The {a} service keeps its {x} in {a}/{b}.py; {y} reads it through {c2}"),
    ("decision", "We decided to move {a} off {b} and onto {x} before the {y} release"),
    ("observation", "The {a} tests need {b} running on localhost:{n} (`{c}`)"),
    ("preference", "The user wants {a} answers about {b}, with {x} examples"),
    ("observation", "{a}.{b}() returns None when the {x} cache is cold; {y} retries it"),
)
COMMON = (
    "cache queue billing auth retry index schema deploy docker pytest migration lint vitest "
    "webpack pnpm npm postgres redis kafka cron logging metrics tracing timeout config secret "
    "token backup router handler service worker api client server build release branch merge "
    "review fixture mock flaky parallel"
).split()
_SYLLABLES = "ka lo mi ne ru ta so vi ze pa do fu gi he ju".split()
TAIL = sorted({a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES})
WORDS = COMMON + TAIL
WEIGHTS = [1 / (rank + 1) for rank in range(len(WORDS))]  # Zipf-like


def memory(rng: random.Random, i: int) -> tuple[str, str, str]:
    a, b, x, y = rng.choices(WORDS, weights=WEIGHTS, k=4)
    slots = {
        "a": a,
        "b": b,
        "x": x,
        "y": y,
        "A": a.upper(),
        "n": str(rng.randrange(1, 9999)),
        "m": str(rng.randrange(0, 30)),
        "c": rng.choice(COMMANDS),
        "c2": rng.choice(COMMANDS),
    }
    slots["e"] = rng.choice(ERRORS).format(**slots)
    slots["f"] = rng.choice(FIXES).format(**slots)
    kind, shape = rng.choice(SHAPES)
    summary = shape.format(**slots)[:120]
    content = f"Seen in session {i % 997}; " + " ".join(rng.choices(WORDS, weights=WEIGHTS, k=10))
    if kind == "pattern":
        content = f"Error: {slots['e']}\nFixed by: {slots['f']}"
    return kind, summary, content


PLANTED = (  # what the prompt and the command are about, among the 100,000
    (
        "observation",
        "The billing worker's integration tests need Redis on localhost:6379 "
        "(`docker compose up -d redis`)",
        "Otherwise they hang while connecting.",
    ),
    (
        "pattern",
        "When `npm test` fails with `Cannot find module 'vitest'`, run `pnpm install` first",
        "Error: Cannot find module 'vitest'\nFixed by: ran pnpm install",
    ),
)


def fill(home: Path, count: int) -> None:
    """A real store (the schema by lessonloop itself) holding ``count`` project memories, the
    PLANTED ones among them (when there is room)."""
    from lessonloop.store import open_store

    rng = random.Random(11)
    now = "2026-11-30T10:00:00.000Z"
    rows = [memory(rng, i) for i in range(count)]
    for k, planted in enumerate(PLANTED if count >= 10 * len(PLANTED) else ()):
        rows[count // 2 + k] = planted
    with open_store(home) as store, store.transaction() as conn:
        conn.executemany(
            "INSERT INTO knowledge (kind, scope, summary, content, tags_json, fingerprint, "
            "author, created_at, updated_at, number, helpful, harmful) VALUES "
            "(?, 'project', ?, ?, '[\"auto-memorize\"]', ?, 'auto', ?, ?, ?, ?, ?)",
            [
                (*row, f"fp{i}", now, now, i + 1, rng.randrange(3), rng.randrange(2))
                for i, row in enumerate(rows)
            ],
        )


def run_once(command: list[str], data: bytes | None, env: dict | None) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run(command, input=data, env=env, capture_output=True)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()}")
    return elapsed, done.stdout


def in_process(home: Path, runs: int) -> None:
    """Recall's own work at that size, in this process (imports warm, no interpreter start):
    what the hook adds beyond importing sqlite3 (~3 ms) and, when it gives a memory, the recall
    line's formatting (calendar, ~2 ms)."""
    from lessonloop.memory import prompt_recall

    cases = [(what, prompt_recall.for_prompt, prompt) for what, prompt in PROMPTS.items()]
    cases.append((f"`{COMMAND}`", prompt_recall.for_command, COMMAND))
    print("\nin process, imports warm (a new session each run):")
    for what, function, text in cases:
        times = []
        for i in range(runs + 1):
            started = time.perf_counter()
            function(text, str(home), f"in-process-{what}-{i}")
            times.append((time.perf_counter() - started) * 1000)
        print(
            f"  {what:<30} median {statistics.median(times[1:]):5.1f} ms, min {min(times):5.1f} ms"
        )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 31
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    print(machine_speed())
    print(f"hook command (as installed): {' '.join(hook_command('<event>'))}")
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-recall-") as tmp:
        big, empty = Path(tmp) / "big", Path(tmp) / "empty"
        started = time.perf_counter()
        fill(big, count)
        fill(empty, 0)
        size = (big / "lessonloop.db").stat().st_size / 1e6
        print(
            f"store: {count:,} memories, {size:.0f} MB (filled in "
            f"{time.perf_counter() - started:.1f} s)"
        )
        jobs = [("python -S -c pass", [sys.executable, "-S", "-c", "pass"], None, None)]
        for home, label in ((big, f"{count:,} memories"), (empty, "empty store")):
            env = dict(
                os.environ,
                LESSONLOOP_HOME=str(home),
                LESSONLOOP_USER_HOME=str(Path(tmp) / "user"),
            )
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled
            for what, prompt in PROMPTS.items():
                payload = {"hook_event_name": "UserPromptSubmit", "cwd": tmp, "prompt": prompt}
                jobs.append(
                    (
                        f"user-prompt-submit, {what}, {label}",
                        hook_command("user-prompt-submit"),
                        payload,
                        env,
                    )
                )
            payload = {
                "hook_event_name": "PreToolUse",
                "cwd": tmp,
                "tool_name": "Bash",
                "tool_input": {"command": COMMAND},
            }
            jobs.append(
                (f"pre-tool-use, `{COMMAND}`, {label}", hook_command("pre-tool-use"), payload, env)
            )
            if home == big:  # the same hook without recall: what recall adds
                prompt = PROMPTS["a prompt about known things"]
                payload = {"hook_event_name": "UserPromptSubmit", "cwd": tmp, "prompt": prompt}
                jobs.append(
                    (
                        f"user-prompt-submit, LESSONLOOP_RECALL=off, {label}",
                        hook_command("user-prompt-submit"),
                        payload,
                        {**env, "LESSONLOOP_RECALL": "off"},
                    )
                )
                jobs.append(  # for reference: the installed command is what Claude Code runs
                    (
                        f"user-prompt-submit, {label}, console script (reference)",
                        lessonloop_command() + ["hook", "user-prompt-submit"],
                        payload,
                        env,
                    )
                )
        times: list[list[float]] = [[] for _ in jobs]
        answered = [0] * len(jobs)
        for attempt in range(runs + WARMUP):
            for k, (_, command, payload, env) in enumerate(jobs):
                data = None
                if payload is not None:  # a new session each run
                    data = json.dumps({**payload, "session_id": f"bench-{k}-{attempt}"}).encode()
                elapsed, out = run_once(command, data, env)
                if env is not None:  # its deferred capture, written before the next run
                    settle(env["LESSONLOOP_HOME"])
                if attempt >= WARMUP:
                    times[k].append(elapsed)
                    answered[k] += bool(out.strip())
        medians = [statistics.median(t) for t in times]
        width = max(len(label) for label, *_ in jobs)
        print(f"\n{'':<{width}}  median ms   min ms  x(-S)  recalled  target")
        over = []
        for k, (label, *_rest) in enumerate(jobs):
            target = ""
            if k and "(reference)" not in label:
                target = f"<= {TARGET_MS}: {verdict(medians[k], TARGET_MS)}"
                if medians[k] > TARGET_MS:
                    over.append(label)
            shown = f"{answered[k]}/{runs}" if k else ""
            print(
                f"{label:<{width}}  {medians[k]:9.1f}  {min(times[k]):7.1f}  "
                f"{medians[k] / medians[0]:5.2f}  {shown:>8}  {target}"
            )
        in_process(big, runs)
        print(
            f"\n{runs} runs each, interleaved; 'recalled' is runs that gave a memory. Recall "
            f"adds {medians[1] - medians[4]:+.1f} ms to user-prompt-submit at {count:,} "
            "memories (the first row against the RECALL=off one). "
            + ("OK" if not over else "OVER TARGET: " + "; ".join(over))
        )


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
