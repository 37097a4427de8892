"""`lessonloop --help` start-up time (target: median ≤ 150 ms). Usage: python bench/help.py [RUNS]"""

from __future__ import annotations

import sys

from common import lessonloop_command, median_runs, verdict

TARGET_MS = 150


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 21
    median_runs(lessonloop_command() + ["--help"], 2)  # warm the file cache and .pyc files
    result = median_runs(lessonloop_command() + ["--help"], runs)
    ms = result["median_s"] * 1000
    print(
        f"lessonloop --help: median {ms:.0f} ms over {runs} runs "
        f"(min {result['min_s'] * 1000:.0f}, max {result['max_s'] * 1000:.0f}); "
        f"target ≤ {TARGET_MS} ms: {verdict(ms, TARGET_MS)}"
    )


if __name__ == "__main__":
    main()
