"""``hook user-prompt-submit`` of this tree side by side with another tree's (``BASE_SRC``, e.g.
main's ``src``), against the same store of MEMORIES memories, interleaved in a shuffled order
each round so a shared machine's drift and the order move both alike. Both run through the
installed console script with ``PYTHONPATH`` set to their ``src`` (bytecode compiled, as
installed). Prints each one's median and the median of the paired differences per prompt; a
prompt holding a redactor trigger is timed too (the path that loads the redactor).

Usage: python bench/hook_side_by_side.py BASE_SRC [RUNS] [MEMORIES]
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

from common import ROOT, lessonloop_command, machine_speed
from recall_hook import PROMPTS, WARMUP, fill, run_once

PROMPTS_TIMED = {
    **PROMPTS,
    "a prompt with a trigger": "the auth token refresh fails after a key rotation; check the "
    "login flow",
}


def main() -> None:
    base = str(Path(sys.argv[1]).resolve())
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 31
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    print(machine_speed())
    trees = {"base": base, "this": str(ROOT / "src")}
    with tempfile.TemporaryDirectory(prefix="lessonloop-bench-side-") as tmp:
        home = Path(tmp) / "home"
        fill(home, count)
        jobs = []
        for what, prompt in PROMPTS_TIMED.items():
            payload = {"hook_event_name": "UserPromptSubmit", "cwd": tmp, "prompt": prompt}
            for tree, src in trees.items():
                env = dict(
                    os.environ,
                    LESSONLOOP_HOME=str(home),
                    LESSONLOOP_USER_HOME=str(Path(tmp) / "user"),
                    PYTHONPATH=src,
                )
                env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode compiled
                command = lessonloop_command() + ["hook", "user-prompt-submit"]
                jobs.append((f"{what} [{tree}]", command, payload, env))
        times: list[list[float]] = [[] for _ in jobs]
        outputs: list[set[bytes]] = [set() for _ in jobs]
        rng = random.Random(7)
        for attempt in range(runs + WARMUP):
            order = list(range(len(jobs)))
            rng.shuffle(order)
            for k in order:
                _, command, payload, env = jobs[k]
                data = json.dumps({**payload, "session_id": f"side-{k}-{attempt}"}).encode()
                elapsed, out = run_once(command, data, env)
                if attempt >= WARMUP:
                    times[k].append(elapsed)
                    outputs[k].add(out)
        for k, (label, *_) in enumerate(jobs):
            print(
                f"{label:<42} median {statistics.median(times[k]):6.1f} ms, min {min(times[k]):6.1f}"
            )
        for k in range(0, len(jobs), 2):
            paired = statistics.median(a - b for a, b in zip(times[k], times[k + 1]))
            same = "same output" if outputs[k] == outputs[k + 1] else "OUTPUTS DIFFER"
            print(f"{jobs[k][0][:-7]:<42} base - this: {paired:+.1f} ms (paired median), {same}")
    print(machine_speed("after"))


if __name__ == "__main__":
    main()
