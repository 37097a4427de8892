"""The sandbox's processes, found in /proc and killed: a command's whole tree, background
children and setsid() escapees included (``ProcessTracker``), and the uid's thread count that
RLIMIT_NPROC is measured against (``threads_of_user``). Used by ``sandbox.py``."""

from __future__ import annotations

import bisect
import os
import signal
import time
from collections.abc import Callable
from typing import NamedTuple

PAGE = os.sysconf("SC_PAGE_SIZE")


DEAD = (b"Z", b"X")  # zombie, dead: gone but for the parent's wait()


class ProcessStat(NamedTuple):
    state: bytes
    ppid: int
    pgrp: int
    session: int
    start: int  # clock ticks after boot: tells a reused pid from the process we saw
    rss: int  # resident pages


def read_stat(pid: int) -> ProcessStat | None:
    try:
        stat_fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(stat_fd, 4096)
    except OSError:
        return None
    finally:
        os.close(stat_fd)
    # The command name (field 2) may hold spaces and parentheses: parse after the last ')'.
    fields = data[data.rfind(b")") + 2 :].split()
    if len(fields) < 22:
        return None
    return ProcessStat(
        fields[0], int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), int(fields[21])
    )


class ProcessTracker:
    """The sandbox's processes, found in /proc.

    A process belongs to the sandbox when it is in the supervisor's session, is a child of the
    supervisor or of a member, is in a process group or session led by a member, or was a
    member at an earlier scan and is still the same process (same start time: pids are
    reused). While the supervisor lives, every member descends from it (it is a subreaper).
    Should the command kill it, the other rules keep hold of the members, and one more finds
    a process that started since and carries the sandbox's environment (TMPDIR=<its dir>).
    """

    def __init__(self, root: int, workdir: str):
        self.root = root
        self.env_mark = f"TMPDIR={workdir}".encode()
        self.known: dict[int, int] = {}  # pid -> start time
        self.groups: set[int] = set()  # their process groups (not the supervisor's)
        self.resident = 0  # bytes the live members hold in RAM together

    def scan(self, limit: int | None = None) -> dict[int, int] | None:
        """Live members, excluding the supervisor: pid -> process group.

        None as soon as more than ``limit`` processes (zombies included, as for RLIMIT_NPROC)
        are seen in the sandbox's session: under a fork bomb a full scan is slow (thousands of
        entries, read while the bomb takes the CPU), and the answer is already known.
        """
        procs: dict[int, ProcessStat] = {}
        crowd = 0
        for pid in self._pids():
            proc = read_stat(pid)
            if proc is None:
                continue
            procs[pid] = proc
            if limit is not None and proc.session == self.root:
                crowd += 1
                if proc.pgrp != self.root:
                    self.groups.add(proc.pgrp)  # for kill_all's first, immediate killpg
                if crowd > limit + 1:  # + 1: the supervisor
                    return None
        linked: dict[int, list[int]] = {}  # parent, group or session leader -> processes
        for pid, proc in procs.items():
            for leader in {proc.ppid, proc.pgrp, proc.session}:
                if leader != pid:
                    linked.setdefault(leader, []).append(pid)

        def reach(todo: list[int], seen: set[int]) -> None:
            seen.update(todo)
            while todo:
                for pid in linked.get(todo.pop(), ()):
                    if pid not in seen:
                        seen.add(pid)
                        todo.append(pid)

        seen: set[int] = set()
        reach(
            [self.root]
            + [
                pid
                for pid, start in self.known.items()
                if pid in procs and procs[pid].start == start
            ],
            seen,
        )
        if self.root in procs:
            born = procs[self.root].start
            reach(
                [
                    pid
                    for pid, p in procs.items()
                    if pid not in seen and p.start >= born and self._carries_our_env(pid)
                ],
                seen,
            )
        seen.discard(self.root)
        self.known = {pid: procs[pid].start for pid in seen if pid in procs}
        live = {pid: procs[pid].pgrp for pid in self.known if procs[pid].state not in DEAD}
        self.groups = set(live.values()) - {self.root}
        self.resident = sum(procs[pid].rss for pid in live) * PAGE
        return live

    def _pids(self) -> list[int]:
        """All pids, those allocated after the supervisor's first (pids are handed out in
        increasing order until they wrap): under a fork bomb the count is reached early."""
        pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
        cut = bisect.bisect_left(pids, self.root)
        return pids[cut:] + pids[:cut]

    def _carries_our_env(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ_file:
                return self.env_mark in environ_file.read().split(b"\0")
        except OSError:
            return False

    def kill_all(self, until: float) -> None:
        """SIGKILL members until none is left, or ``until``.

        Whole process groups first: a killpg also reaches what was forked since the scan,
        which is what stops a fork bomb; and the groups already known are killed before the
        first scan, which takes time under a fork bomb. (The supervisor's own group is never
        one of them: it must outlive the clean-up.)
        """
        for group in self.groups:
            kill_now(os.killpg, group)
        while members := self.scan():
            for group in self.groups:
                kill_now(os.killpg, group)
            for pid in members:
                kill_now(os.kill, pid)
            if time.monotonic() >= until:
                return
            time.sleep(0.005)


def kill_now(kill: Callable[[int, int], None], target: int) -> None:
    """SIGKILL one process or group. Never 0, -1 or 1 (a process caught mid-exit can show such
    ids in /proc, and killpg(0) would hit our own group), never our own group."""
    if target <= 1 or (kill is os.killpg and target == os.getpgrp()):
        return
    try:
        kill(target, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def threads_of_user() -> int:
    """Threads the real uid has now. RLIMIT_NPROC counts the threads (not only processes) of
    the whole uid, so the sandbox's limit is this plus max_processes. Root ignores it."""
    uid, threads = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    threads += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return threads
