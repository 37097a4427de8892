"""Offline `run grid_ctf --iterations 30` wall time and peak memory, with autocontext beside it.

Targets: median ≤ 3 s wall (start-up included, 5 paired matches per generation) and peak
memory ≤ 150 MB. If autocontext 0.18.0 is installed in bench/.peer (see bench/setup_peer.sh),
its deterministic 30-generation grid_ctf run is timed the same way and the ratio printed.
Usage: python bench/run_offline.py [RUNS]
"""

from __future__ import annotations

import sys

from common import ROOT, lessonloop_command, median_runs, verdict

TARGET_S = 3.0
TARGET_MB = 150
PEER = ROOT / "bench" / ".peer" / "bin" / "autoctx"


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    command = lessonloop_command() + ["run", "grid_ctf", "--iterations", "30", "--json"]
    ours = median_runs(command, runs, fresh_home=True)
    print(
        f"lessonloop run grid_ctf --iterations 30: median {ours['median_s']:.2f} s "
        f"(min {ours['min_s']:.2f}, max {ours['max_s']:.2f}) over {runs} runs, "
        f"peak {ours['peak_mb']:.0f} MB; targets ≤ {TARGET_S} s: {verdict(ours['median_s'], TARGET_S)}, "
        f"≤ {TARGET_MB} MB: {verdict(ours['peak_mb'], TARGET_MB)}"
    )
    if not PEER.exists():
        print("autocontext 0.18.0 not installed in bench/.peer: run bench/setup_peer.sh to compare")
        return
    peer_runs = max(1, min(runs, 3))
    peer = median_runs(
        [str(PEER), "run", "grid_ctf", "--iterations", "30"],
        peer_runs,
        extra_env={"AUTOCONTEXT_AGENT_PROVIDER": "deterministic"},
        empty_cwd=True,
    )
    print(
        f"autocontext 0.18.0 (deterministic, 3 unpaired matches): median {peer['median_s']:.2f} s "
        f"over {peer_runs} runs, peak {peer['peak_mb']:.0f} MB"
    )
    print(f"ratio autocontext / lessonloop wall time: {peer['median_s'] / ours['median_s']:.1f}x")


if __name__ == "__main__":
    main()
