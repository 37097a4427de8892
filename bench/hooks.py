"""Every ``lessonloop hook <event>``: median wall time of the whole process on a typical payload,
run as ``lessonloop install claude-code`` writes it (``claude_code.hook_command``), side by side
with the floor (``python -S -c pass``, an interpreter that starts and does nothing) and with
``python -c pass`` (the same with ``site``); one prompt also through the console script. A hook
answers, exits, then captures in the background (memory/deferred.py): the time until it exits
is what Claude Code waits for, and the capture's own time is shown beside it.

Target: every capture hook (user-prompt-submit, pre-tool-use, post-tool-use,
post-tool-use-failure, stop) ≤ 40 ms median on its typical payload. Typical payloads: a command
that succeeds (most tool calls), a failing Bash call with about 2 KB of error output (as Claude
Code sends it to PostToolUseFailure, and as older versions sent it to PostToolUse), a prompt
that states a preference and a plain prompt. session-start (recall) and session-end (memorize)
are shown for reference; they open the store and have no target here.

Runs are interleaved (one run of every command per round), so a shared machine's drift moves
all of them alike; the first rounds warm the file cache and the .pyc files and are not counted.
The reference implementation spawns several node processes per call; it is not installable
here, so there is no number for it.

Usage: python bench/hooks.py [RUNS]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from common import hook_command, lessonloop_command, machine_speed, settle, verdict

TARGET_MS = 40
WARMUP = 3
SESSION = "bench-session"
BASE = {
    "session_id": SESSION,
    "transcript_path": "/tmp/none.jsonl",
    "cwd": "/tmp",
    "permission_mode": "default",
}

# about 2 KB of a failing test run, as pytest prints it
ERROR_OUTPUT = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0\n"
    "rootdir: /home/dev/shop\nconfigfile: pyproject.toml\ncollected 3 items\n\n"
    "tests/test_api.py F..                                                    [100%]\n\n"
    "=================================== FAILURES ===================================\n"
    "_______________________________ test_create_order ______________________________\n\n"
    "client = <starlette.testclient.TestClient object at 0x7f3a2c1d9e50>\n\n"
    "    def test_create_order(client):\n"
    '        response = client.post("/orders", json={"sku": "A-100", "qty": 2})\n'
    ">       assert response.status_code == 200, response.text\n"
    'E       AssertionError: {"detail":"Internal Server Error"}\n'
    "E       assert 500 == 200\n"
    "E        +  where 500 = <Response [500]>.status_code\n\n"
    "tests/test_api.py:42: AssertionError\n"
    "------------------------------ Captured log call -------------------------------\n"
    "ERROR    shop.api:orders.py:88 create_order failed\n"
    "Traceback (most recent call last):\n"
    '  File "/home/dev/shop/src/shop/orders.py", line 85, in create_order\n'
    "    order = repo.insert(payload)\n"
    '  File "/home/dev/shop/src/shop/repo.py", line 31, in insert\n'
    "    cursor.execute(SQL_INSERT, row)\n"
    "sqlite3.OperationalError: no such table: orders\n"
    "=========================== short test summary info ============================\n"
    'FAILED tests/test_api.py::test_create_order - AssertionError: {"detail":"Internal Se...\n'
    "========================= 1 failed, 2 passed in 0.31s ==========================\n"
)
COMMAND = {"command": "pytest -q tests/test_api.py", "description": "Run the API tests"}

# Claude Code sends a failed call to PostToolUseFailure, with the result's text in "error"
FAILURE = {
    **BASE,
    "hook_event_name": "PostToolUseFailure",
    "tool_name": "Bash",
    "tool_use_id": "toolu_01",
    "tool_input": COMMAND,
    "is_interrupt": False,
    "error": "Exit code 1\n" + ERROR_OUTPUT,
}
# older versions sent it to PostToolUse, with the failure in the response's own status
FAILED_RESPONSE = {
    **BASE,
    "hook_event_name": "PostToolUse",
    "tool_name": "Bash",
    "tool_use_id": "toolu_01",
    "tool_input": COMMAND,
    "tool_response": {
        "stdout": ERROR_OUTPUT,
        "stderr": "",
        "exit_code": 1,
        "interrupted": False,
        "isImage": False,
    },
}
SUCCESS = {
    **BASE,
    "hook_event_name": "PostToolUse",
    "tool_name": "Bash",
    "tool_use_id": "toolu_02",
    "tool_input": {"command": "ls src", "description": "List"},
    "tool_response": {
        "stdout": "app.py\nmodels.py\nviews.py\n",
        "stderr": "",
        "interrupted": False,
        "isImage": False,
    },
}
PRE_TOOL = {
    **BASE,
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_use_id": "toolu_02",
    "tool_input": SUCCESS["tool_input"],
}
PREFERENCE = {
    **BASE,
    "hook_event_name": "UserPromptSubmit",
    "prompt": "ok, fine, let's do vite. And use pnpm, not npm, in this repo: the "
    "lockfile is pnpm-lock.yaml. Then run the tests again.",
}
PLAIN_PROMPT = {
    **BASE,
    "hook_event_name": "UserPromptSubmit",
    "prompt": "Can you add a details element under the pricing table that explains "
    "the yearly discount?",
}
STOP = {**BASE, "hook_event_name": "Stop", "stop_hook_active": False}
START = {**BASE, "hook_event_name": "SessionStart", "source": "startup"}
END = {**BASE, "hook_event_name": "SessionEnd", "reason": "other"}

# (event, what the payload is, payload, under the target)
CASES = (
    ("post-tool-use", "a command that succeeds (typical)", SUCCESS, True),
    ("post-tool-use-failure", "a failing Bash call, 2 KB of output", FAILURE, True),
    ("post-tool-use", "a failing Bash call (older versions)", FAILED_RESPONSE, True),
    ("user-prompt-submit", "a prompt stating a preference", PREFERENCE, True),
    ("user-prompt-submit", "a plain request", PLAIN_PROMPT, True),
    ("pre-tool-use", "a Bash call", PRE_TOOL, True),
    ("stop", "the end of a turn", STOP, True),
    ("session-start", "startup, empty store (reference)", START, False),
    ("session-end", "no transcript (reference)", END, False),
)


def run_once(command: list[str], data: bytes | None, env: dict | None) -> tuple[float, float]:
    """Wall and CPU (user + system) milliseconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, input=data, env=env, capture_output=True)
    elapsed = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return elapsed, cpu


def captured(home: str) -> int:
    folder = os.path.join(home, "sessions", SESSION)
    if not os.path.isdir(folder):
        return 0
    return sum(
        sum(1 for _ in open(os.path.join(folder, name), "rb"))
        for name in os.listdir(folder)
        if name.endswith(".jsonl")
    )


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 31
    print(machine_speed())
    floors = (
        ("python -S -c pass", [sys.executable, "-S", "-c", "pass"]),
        ("python -c pass", [sys.executable, "-c", "pass"]),
    )
    print(f"hook command (as installed): {' '.join(hook_command('<event>'))}")
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-hooks-") as tmp:
        jobs = []  # (label, command, stdin, env, home)
        for label, command in floors:
            jobs.append((label, command, None, None, None))
        cases = [(*case, hook_command(case[0])) for case in CASES]
        # the same prompt through the console script, whose template imports re first
        # (for reference: the installed command is what Claude Code runs)
        event, what, payload, _ = CASES[3]
        cases.append((event, what, payload, False, lessonloop_command() + ["hook", event]))
        for i, (event, what, payload, _, command) in enumerate(cases):
            home = os.path.join(tmp, f"home{i}")
            env = dict(
                os.environ, LESSONLOOP_HOME=home, LESSONLOOP_USER_HOME=os.path.join(tmp, f"user{i}")
            )
            # an installed package has its bytecode compiled; let the warm-up runs write it too
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            label = f"{event}, {what}" + (", console script (reference)" if i >= len(CASES) else "")
            jobs.append((label, command, json.dumps(payload).encode(), env, home))
        times: list[list[float]] = [[] for _ in jobs]
        cpus: list[list[float]] = [[] for _ in jobs]
        afters: list[list[float]] = [[] for _ in jobs]
        for attempt in range(runs + WARMUP):  # interleaved: one run of each per round
            for k, (_, command, data, env, home) in enumerate(jobs):
                elapsed, cpu = run_once(command, data, env)
                # the capture it deferred, written before the next run starts
                after = settle(home) if home else 0.0
                if attempt >= WARMUP:
                    times[k].append(elapsed)
                    cpus[k].append(cpu)
                    afters[k].append(after)
        medians = [statistics.median(t) for t in times]
        cpu_medians = [statistics.median(c) for c in cpus]
        bare, site = medians[0], medians[1]
        width = max(len(label) for label, *_ in jobs)
        print(
            f"\n{'':<{width}}  median ms   min ms  x(-S)  x(site)  CPU ms  then ms  captured  "
            "target"
        )
        over = []
        for k, (label, _, _, _, home) in enumerate(jobs):
            target = ""
            lines = ""
            if k >= len(floors):
                _, _, _, capture_hook, _ = cases[k - len(floors)]
                # lines over every run (a failure's error lines, a prompt's lesson and check)
                lines = str(captured(home) // (runs + WARMUP))
                if capture_hook:
                    target = f"<= {TARGET_MS}: {verdict(medians[k], TARGET_MS)}"
                    if medians[k] > TARGET_MS:
                        over.append(label)
            print(
                f"{label:<{width}}  {medians[k]:9.1f}  {min(times[k]):7.1f}  "
                f"{medians[k] / bare:5.2f}  {medians[k] / site:7.2f}  {cpu_medians[k]:6.1f}  "
                f"{statistics.median(afters[k]):7.1f}  {lines:>8}  {target}"
            )
    print(
        f"\n{runs} runs each, interleaved; 'median ms' is until the hook process exits (what "
        "Claude Code waits for); 'then ms' is how much longer its deferred capture took to be "
        "written (waited for before the next run); 'captured' is lines written per run; CPU ms "
        "is the hook process's own user + system time (not its capture's). "
        f"Every capture hook ≤ {TARGET_MS} ms: "
        + ("OK" if not over else "OVER TARGET: " + "; ".join(over))
    )


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
