"""A pids cgroup for one sandboxed command: the kernel's own cap on its processes, where one
can be made (root, as in CI and containers, whom RLIMIT_NPROC does not bind). Used by
``sandbox.py``."""

from __future__ import annotations

import os
import time

# Where a pids cgroup can be made: cgroup v1's pids hierarchy, or the cgroup2 root when it hands
# the pids controller down. Writable by root only, as a rule.
CGROUP_ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")
cgroups_made = 0


def pids_cgroup(max_processes: int) -> str:
    """A fresh pids cgroup whose ``pids.max`` bounds the command's processes, or "" where none
    can be made. RLIMIT_NPROC does not bind root, so as root a fork bomb is otherwise held
    back only by the tracker's scans, which fall behind on a loaded machine; the kernel's
    count cannot. One more than ``max_processes`` is allowed, so the tracker still sees the
    command go over its limit and reports "too many processes"."""
    global cgroups_made
    for root in CGROUP_ROOTS:
        if root == "/sys/fs/cgroup":
            try:
                with open(f"{root}/cgroup.subtree_control") as controls:
                    if "pids" not in controls.read().split():
                        continue
            except OSError:
                continue
        cgroups_made += 1
        path = f"{root}/lessonloop-sandbox-{os.getpid()}-{cgroups_made}"
        try:
            os.mkdir(path)
        except OSError:
            continue
        try:
            with open(f"{path}/pids.max", "w") as limit:
                limit.write(str(max_processes + 1))
            return path
        except OSError:
            remove_cgroup(path)
    return ""


def remove_cgroup(path: str) -> None:
    """Remove the cgroup once its processes are gone (killed by then; a moment to be reaped)."""
    for _ in range(20):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)
