"""`lessonloop hook post-tool-use`: median wall time of the whole process (target ≤ 40 ms on a
typical payload: most tool calls succeed), for a successful command, and of `lessonloop hook
post-tool-use-failure` for a failing one (which also loads the redactor for its error lines),
side by side with `python -S -c pass`. The reference implementation spawns
several node processes per call; it is not installable here, so there is no side-by-side
number.

Usage: python bench/hooks.py [RUNS]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from common import lessonloop_command, machine_speed, verdict

TARGET_MS = 40
FAILING = {
    "session_id": "bench-session", "transcript_path": "/tmp/none.jsonl", "cwd": "/tmp",
    "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "toolu_01",
    "tool_input": {"command": "pytest -q tests/test_api.py", "description": "Run the API tests"},
    "tool_response": {"stdout": "F..\n" + "=" * 40 + "\nE   AssertionError: expected 200, got 500\n"
                      "tests/test_api.py:42: AssertionError\n1 failed, 2 passed in 0.31s\n",
                      "stderr": "", "interrupted": False, "isImage": False},
}


# Claude Code sends a failed call to PostToolUseFailure, with the result's text in "error"
FAILURE = {**{k: v for k, v in FAILING.items() if k != "tool_response"},
           "hook_event_name": "PostToolUseFailure", "is_interrupt": False,
           "error": "Exit code 1\n" + FAILING["tool_response"]["stdout"]}


SUCCEEDING = {**FAILING, "tool_input": {"command": "ls src", "description": "List sources"},
              "tool_response": {"stdout": "app.py\nmodels.py\nviews.py\n", "stderr": "",
                                "interrupted": False, "isImage": False}}


def measure(name: str, payload: dict, runs: int, event: str = "post-tool-use") -> float:
    data = json.dumps(payload).encode()
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LESSONLOOP_HOME=os.path.join(tmp, "home"))
        # an installed package has its bytecode compiled; let the warm-up runs write it here too
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        command = lessonloop_command() + ["hook", event]
        times = []
        for attempt in range(runs + 3):
            started = time.perf_counter()
            done = subprocess.run(command, input=data, env=env, capture_output=True)
            elapsed = (time.perf_counter() - started) * 1000
            if done.returncode != 0:
                raise SystemExit(f"hook failed: {done.stderr.decode()}")
            if attempt >= 3:  # the first runs warm the file cache and .pyc files
                times.append(elapsed)
        captured = os.path.join(tmp, "home", "sessions", "bench-session", "signals.jsonl")
        lines = sum(1 for _ in open(captured)) if os.path.exists(captured) else 0
    ms = statistics.median(times)
    print(f"lessonloop hook {event}, {name}: median {ms:.1f} ms over {runs} runs (min "
          f"{min(times):.1f}, max {max(times):.1f}); {lines} signals captured")
    return ms


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 31
    print(machine_speed())
    bare = []
    for attempt in range(runs + 3):  # the floor: an interpreter that starts and does nothing
        started = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        if attempt >= 3:
            bare.append((time.perf_counter() - started) * 1000)
    print(f"python -S -c pass (side by side): median {statistics.median(bare):.1f} ms")
    typical = measure("a command that succeeds (typical)", SUCCEEDING, runs)
    measure("a failing test run", FAILURE, runs, "post-tool-use-failure")
    print(f"target ≤ {TARGET_MS} ms on the typical payload: {verdict(typical, TARGET_MS)}")


if __name__ == "__main__":
    main()
    print(machine_speed("after"))
