"""Run untrusted commands (task verifiers, Python code strategies) so that they cannot hurt
the machine or read our secrets.

A run gets:
- a fresh working directory, also its HOME and TMPDIR, removed afterwards;
- an allowlisted environment, so API keys, tokens and LESSONLOOP_* settings never reach it;
- resource limits (CPU, address space, file size, no core dumps, processes), set in the
  child just before exec; where a pids cgroup can be made (root, as in CI and containers,
  whom RLIMIT_NPROC does not bind), the kernel also caps its processes (``_pids_cgroup``);
- supervision from here: a wall-clock deadline, a process count, and a clean-up that kills
  every process the command started, background children and setsid() escapees included;
- its output read with a bound, then redacted, then capped.

The command runs under a tiny supervisor (``python -I -S``, code in ``_SUPERVISOR``). Why not
just ``Popen(..., preexec_fn=...)``: the supervisor is a *child subreaper*
(PR_SET_CHILD_SUBREAPER), so an orphan of the command (a double fork, ``setsid sleep 100 &``
whose shell has exited) is re-parented to it instead of to init and stays in one process tree
that ``run`` can find in /proc; and it is single-threaded, so forking and setting limits there
is safe, where a preexec_fn in a threaded caller can deadlock.

This contains accidents and ordinary hostile code. It is not a boundary against a determined
attacker running as the same user (or as root, who ignores RLIMIT_NPROC and may raise hard
limits, and who can read other processes' /proc/<pid>/environ and files): for that, run it
under a separate unprivileged user, or in a container or VM. One known escape: a command that
kills its supervisor and, within one scan (~15 ms), starts a process in a new session with an
emptied environment leaves that process running.
"""

from __future__ import annotations

import bisect
import math
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import NamedTuple

from .caps import cap
from .redact import redact

__all__ = ["Limits", "Outcome", "run"]

_POLL = 0.015  # seconds between /proc scans while the command runs...
_POLL_MAX = 0.1  # ...or up to this long where /proc holds many processes
_KILL_GRACE = 0.5  # at most this long to kill what is left (then 0.4 s more at worst)
_SLACK = 4096  # bytes read past output_bytes: context for the redactor, never shown
_CHUNK = 1 << 16
_MIB = 1 << 20
_PAGE = os.sysconf("SC_PAGE_SIZE")
_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_REPORT_TAIL = 2000  # characters of each stream in Outcome.report()


@dataclass(frozen=True)
class Limits:
    """What one run may use; the defaults suit a task verifier."""

    timeout: float = 30.0  # wall-clock seconds; at the deadline the whole group is killed
    cpu_seconds: int | None = None  # RLIMIT_CPU; None -> ceil(timeout) + 1
    memory_mb: int = 1024  # RLIMIT_AS
    max_processes: int = 64  # processes alive in the sandbox at once
    file_mb: int = 64  # RLIMIT_FSIZE (largest file it can write)
    output_bytes: int = 64_000  # captured per stream; the rest is dropped, a marker says so

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError("timeout must be > 0")
        for name in ("memory_mb", "max_processes", "file_mb", "output_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if self.cpu_seconds is not None and self.cpu_seconds < 1:
            raise ValueError("cpu_seconds must be >= 1")


@dataclass
class Outcome:
    """How a run ended. ``killed`` is None, "timeout", "too many processes", "too much
    memory", "left N processes running" (they were killed then), or the name of the signal
    that ended the command ("SIGXFSZ", "SIGXCPU", "SIGKILL", "SIGSEGV", ...)."""

    exit_code: int | None  # None when the command did not exit by itself
    stdout: str  # capped, then redacted (secrets replaced by [REDACTED:...])
    stderr: str
    killed: str | None
    duration: float  # seconds

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and self.killed is None

    def report(self) -> str:
        """A short summary for feedback to a model or a person: how it ended, then the end of
        each non-empty stream (the part most likely to say what went wrong)."""
        if self.killed is not None:
            how = f"killed ({self.killed})"
        else:
            how = f"{'passed' if self.passed else 'failed'}: exit code {self.exit_code}"
        lines = [f"{how} after {self.duration:.2f}s"]
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text:
                lines.append(f"--- {name} ---")
                lines.append(_tail(text, _REPORT_TAIL).rstrip("\n"))
        return "\n".join(lines)


def run(
    command: str | list[str],
    *,
    stdin: bytes | None = None,
    files: dict[str, bytes] | None = None,
    limits: Limits = Limits(),
) -> Outcome:
    """Run ``command`` (a str through ``/bin/sh -c``, a list directly) in a fresh working
    directory holding ``files`` (relative names), with ``stdin`` as its input.

    Returns within about ``limits.timeout`` + 1 s and leaves no process of the command behind.
    """
    if isinstance(command, str):
        argv = ["/bin/sh", "-c", command]
    else:
        argv = [os.fsdecode(a) for a in command]
        if not argv:
            raise ValueError("empty command")
    workdir = tempfile.mkdtemp(prefix="lessonloop-sandbox-")
    try:
        _write_files(workdir, files or {})
        return _run_supervised(argv, workdir, stdin, limits)
    finally:
        _remove_tree(workdir)


# --------------------------------------------------------------------------------------------
# The supervisor: parent of the command, subreaper of everything it starts

_SUPERVISOR = """\
import os, resource, signal, sys
status, parent, cpu, mem, fsize, nproc = map(int, sys.argv[1:7])
cgroup = sys.argv[7]                     # a pids cgroup to join, or "" (see _pids_cgroup)
command = sys.argv[8:]
try:
    import ctypes
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl(36, 1, 0, 0, 0)                # PR_SET_CHILD_SUBREAPER: orphans come back here
    prctl(1, signal.SIGTERM, 0, 0, 0)    # PR_SET_PDEATHSIG: told when run()'s thread is gone
except (ImportError, OSError, AttributeError):
    prctl = None
if os.getppid() != parent:
    os._exit(70)
pid = os.fork()
if pid == 0:
    try:
        os.close(status)
        os.setpgid(0, 0)                 # its own group: killpg never hits the supervisor
        if cgroup:                       # before anything forks: every descendant is counted
            try:
                with open(cgroup + "/cgroup.procs", "w") as procs:
                    procs.write(str(os.getpid()))
            except OSError:
                pass
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):   # Python ignores them; exec keeps that
            signal.signal(sig, signal.SIG_DFL)
        if prctl:
            prctl(1, signal.SIGKILL, 0, 0, 0)
        for res, soft, hard in ((resource.RLIMIT_CPU, cpu, cpu + 1),
                                (resource.RLIMIT_AS, mem, mem),
                                (resource.RLIMIT_FSIZE, fsize, fsize),
                                (resource.RLIMIT_CORE, 0, 0),
                                (resource.RLIMIT_NPROC, nproc, nproc)):
            top = resource.getrlimit(res)[1]
            if top != resource.RLIM_INFINITY:
                soft, hard = min(soft, top), min(hard, top)
            resource.setrlimit(res, (soft, hard))
        os.execvp(command[0], command)
    except BaseException as e:
        os.write(2, f"sandbox: cannot run {command[0]!r}: {e}\\n".encode())
    os._exit(127)

def parent_died(*_):
    try:
        os.killpg(pid, signal.SIGKILL)
    finally:
        os._exit(1)

signal.signal(signal.SIGTERM, parent_died)
while True:
    try:
        child, st = os.wait()
    except ChildProcessError:            # nothing left below us
        break
    if child == pid:
        os.write(status, b"%d\\n" % st)
"""


def _run_supervised(argv: list[str], workdir: str, stdin: bytes | None, limits: Limits) -> Outcome:
    """Start the supervisor, watch the command, clean up, and say how it ended."""
    start = time.monotonic()
    cgroup = _pids_cgroup(limits.max_processes)
    try:
        return _supervise(argv, workdir, stdin, limits, start, cgroup)
    finally:
        if cgroup:
            _remove_cgroup(cgroup)


def _supervise(
    argv: list[str], workdir: str, stdin: bytes | None, limits: Limits, start: float, cgroup: str
) -> Outcome:
    proc, status_r = _start(argv, workdir, stdin, limits, cgroup)
    assert proc.stdout is not None and proc.stderr is not None  # (_start opens both pipes)
    out, err = _Capture(limits.output_bytes), _Capture(limits.output_bytes)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout.fileno(), selectors.EVENT_READ, out)
    sel.register(proc.stderr.fileno(), selectors.EVENT_READ, err)
    sel.register(status_r, selectors.EVENT_READ, None)
    tracker = _Tracker(proc.pid, workdir)
    try:
        killed, status = _watch(sel, tracker, start + limits.timeout, limits)
        if killed is None and status is not None:
            # A command must finish its work before it exits: what it leaves running (a
            # fork bomb whose first process returned, a forgotten daemon) fails the run.
            left = tracker.scan(limit=limits.max_processes)
            if left is None:
                killed = "too many processes"
            elif left:
                killed = f"left {len(left)} process{'es' if len(left) > 1 else ''} running"
    finally:
        # Kill what is left while the supervisor (alive, or a zombie not yet reaped) anchors
        # the process tree and keeps its pid, session and group ids from being reused.
        tracker.kill_all(time.monotonic() + _KILL_GRACE)
        try:
            proc.wait(timeout=0.2)  # it exits by itself once nothing is left
        except subprocess.TimeoutExpired:
            proc.kill()
            tracker.kill_all(time.monotonic() + 0.1)
            proc.wait()
        _drain(sel, time.monotonic() + 0.1)
        sel.close()
        os.close(status_r)
        proc.stdout.close()
        proc.stderr.close()

    exit_code = None
    if status is not None:  # the command itself ended
        code = os.waitstatus_to_exitcode(status)
        if code >= 0:
            exit_code = code
        elif killed is None:
            killed = _signal_name(-code)
    elif killed is None:
        # the command killed its supervisor, or the supervisor died without reporting
        killed = _signal_name(-proc.returncode) if proc.returncode < 0 else "supervisor died"
    return Outcome(
        exit_code=exit_code,
        stdout=out.text(),
        stderr=err.text(),
        killed=killed,
        duration=time.monotonic() - start,
    )


# Where a pids cgroup can be made: cgroup v1's pids hierarchy, or the cgroup2 root when it hands
# the pids controller down. Writable by root only, as a rule.
_CGROUP_ROOTS = ("/sys/fs/cgroup/pids", "/sys/fs/cgroup")
_cgroups_made = 0


def _pids_cgroup(max_processes: int) -> str:
    """A fresh pids cgroup whose ``pids.max`` bounds the command's processes, or "" where none
    can be made. RLIMIT_NPROC does not bind root, so as root a fork bomb is otherwise held
    back only by the tracker's scans, which fall behind on a loaded machine; the kernel's
    count cannot. One more than ``max_processes`` is allowed, so the tracker still sees the
    command go over its limit and reports "too many processes"."""
    global _cgroups_made
    for root in _CGROUP_ROOTS:
        if root == "/sys/fs/cgroup":
            try:
                with open(f"{root}/cgroup.subtree_control") as controls:
                    if "pids" not in controls.read().split():
                        continue
            except OSError:
                continue
        _cgroups_made += 1
        path = f"{root}/lessonloop-sandbox-{os.getpid()}-{_cgroups_made}"
        try:
            os.mkdir(path)
        except OSError:
            continue
        try:
            with open(f"{path}/pids.max", "w") as limit:
                limit.write(str(max_processes + 1))
            return path
        except OSError:
            _remove_cgroup(path)
    return ""


def _remove_cgroup(path: str) -> None:
    """Remove the cgroup once its processes are gone (killed by then; a moment to be reaped)."""
    for _ in range(20):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _start(
    argv: list[str], workdir: str, stdin: bytes | None, limits: Limits, cgroup: str
) -> tuple[subprocess.Popen, int]:
    """The supervisor, in a new session, and the pipe on which it reports the wait status.

    Input comes from an (unlinked) file, so a command that never reads it cannot block us.
    """
    cpu = limits.cpu_seconds or math.ceil(limits.timeout) + 1
    nproc = _threads_of_user() + limits.max_processes
    numbers = (cpu, limits.memory_mb * _MIB, limits.file_mb * _MIB, nproc)
    status_r, status_w = os.pipe()
    stdin_file = None
    try:
        if stdin is not None:
            stdin_file = tempfile.TemporaryFile()
            stdin_file.write(stdin)
            stdin_file.seek(0)
        proc = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-S",
                "-c",
                _SUPERVISOR,
                str(status_w),
                str(os.getpid()),
                *map(str, numbers),
                cgroup,
                *argv,
            ],
            cwd=workdir,
            env=_environment(workdir),
            stdin=stdin_file if stdin_file is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(status_w,),
            start_new_session=True,
        )
    except BaseException:
        os.close(status_r)
        raise
    finally:
        os.close(status_w)
        if stdin_file is not None:
            stdin_file.close()
    return proc, status_r


def _watch(
    sel: selectors.BaseSelector, tracker: _Tracker, deadline: float, limits: Limits
) -> tuple[str | None, int | None]:
    """Read output and count processes until the command ends, the supervisor dies, the
    deadline passes, or there are too many processes or they hold too much memory together
    (RLIMIT_AS bounds each one only): ``(killed, wait status)``.

    One thread and a selector: no deadlock when both pipes fill, and a flood is read (and
    dropped past the cap) as fast as it comes.
    """
    next_scan = time.monotonic()
    while True:
        now = time.monotonic()
        if now >= deadline:
            return "timeout", None
        if now >= next_scan:
            members = tracker.scan(limit=limits.max_processes)
            if members is None or len(members) > limits.max_processes:
                return "too many processes", None
            if tracker.resident > limits.memory_mb * _MIB:
                return "too much memory", None
            # Where /proc is long a scan costs more: keep the watching under ~1/3 of a core.
            next_scan = now + min(max(_POLL, 2 * (time.monotonic() - now)), _POLL_MAX)
        for key, _ in sel.select(min(next_scan, deadline) - time.monotonic()):
            data = os.read(key.fd, _CHUNK)
            if key.data is not None and data:
                key.data.add(data)
                continue
            sel.unregister(key.fd)
            if key.data is None:  # the status pipe
                if not data:
                    return None, None  # the supervisor died without reporting
                return None, int(data.split()[0])


def _drain(sel: selectors.BaseSelector, until: float) -> None:
    """Read what the killed processes left in the pipes. Bounded: a process that escaped and
    still holds a pipe open must not keep run() waiting for EOF."""
    while len(sel.get_map()) > 0 and time.monotonic() < until:
        for key, _ in sel.select(until - time.monotonic()):
            data = os.read(key.fd, _CHUNK)
            if key.data is not None and data:
                key.data.add(data)
            else:
                sel.unregister(key.fd)


# --------------------------------------------------------------------------------------------
# Finding and killing the sandbox's processes in /proc


_DEAD = (b"Z", b"X")  # zombie, dead: gone but for the parent's wait()


class _Proc(NamedTuple):
    state: bytes
    ppid: int
    pgrp: int
    session: int
    start: int  # clock ticks after boot: tells a reused pid from the process we saw
    rss: int  # resident pages


def _read_stat(pid: int) -> _Proc | None:
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
    return _Proc(
        fields[0], int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), int(fields[21])
    )


class _Tracker:
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
        procs: dict[int, _Proc] = {}
        crowd = 0
        for pid in self._pids():
            proc = _read_stat(pid)
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
        live = {pid: procs[pid].pgrp for pid in self.known if procs[pid].state not in _DEAD}
        self.groups = set(live.values()) - {self.root}
        self.resident = sum(procs[pid].rss for pid in live) * _PAGE
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
            _signal(os.killpg, group)
        while members := self.scan():
            for group in self.groups:
                _signal(os.killpg, group)
            for pid in members:
                _signal(os.kill, pid)
            if time.monotonic() >= until:
                return
            time.sleep(0.005)


def _signal(kill, target: int) -> None:
    """SIGKILL one process or group. Never 0, -1 or 1 (a process caught mid-exit can show such
    ids in /proc, and killpg(0) would hit our own group), never our own group."""
    if target <= 1 or (kill is os.killpg and target == os.getpgrp()):
        return
    try:
        kill(target, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _threads_of_user() -> int:
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


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


# --------------------------------------------------------------------------------------------
# Output


class _Capture:
    """The start of one output stream. The first ``limit`` + _SLACK bytes are kept; the rest is
    read and dropped (only counted), so a flood neither blocks the command nor fills memory."""

    def __init__(self, limit: int):
        self.limit = limit
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit + _SLACK - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    def text(self) -> str:
        """Decode, redact, then cap: at most ``limit`` characters.

        Redaction must run before any cut a reader sees (half a secret is no longer
        recognisable), yet memory must stay bounded. So the raw bytes were cut while reading,
        at ``limit`` + _SLACK; the kept text is decoded (errors replaced) and redacted whole;
        then as many characters as the slack held are dropped from its end, taking along any
        secret cut at the raw boundary; and ``cap`` brings it to ``limit`` characters (markers
        can make text longer) without splitting a marker. A note says how much was dropped.
        """
        raw = bytes(self.data)
        text = raw.decode("utf-8", "replace")
        clean = redact(_without_our_secrets(text))
        if self.total <= self.limit:
            return cap(clean, self.limit)
        note = f"…[truncated: {self.total - self.limit} more bytes]"
        slack = len(text) - len(raw[: self.limit].decode("utf-8", "replace"))
        keep = max(0, min(len(clean) - slack, self.limit - len(note)))
        return cap(clean, keep, marker="") + note


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE", re.IGNORECASE)


def _without_our_secrets(text: str) -> str:
    """The values of our own secret-named variables, cut out literally: a command running as
    the same user can read them from /proc/<our pid>/environ, and a key need not look like one
    for the pattern redactor to catch it."""
    for name, value in os.environ.items():
        if len(value) >= 6 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "[REDACTED:generic-secret]")
    return text


def _tail(text: str, limit: int) -> str:
    """The last ``limit`` characters or so, starting at a line when one starts near the cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    newline = text.find("\n", cut, cut + 200)
    return "…" + text[newline + 1 if newline != -1 else cut :]


# --------------------------------------------------------------------------------------------
# The working directory and the environment


def _environment(workdir: str) -> dict[str, str]:
    """An allowlist: nothing of ours (API keys, tokens, LESSONLOOP_*) reaches the command."""
    return {
        "PATH": os.environ.get("PATH") or _DEFAULT_PATH,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    }


def _write_files(workdir: str, files: dict[str, bytes]) -> None:
    """Write ``files`` under ``workdir``; a name that would land outside it is refused."""
    for name, data in files.items():
        rel = os.path.normpath(name)
        if os.path.isabs(rel) or rel == "." or rel.split(os.sep)[0] == "..":
            raise ValueError(
                f"file name must be relative and inside the working directory: {name!r}"
            )
        path = os.path.join(workdir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def _remove_tree(path: str) -> None:
    """Remove the working directory, even where the command took permissions away."""

    def fix(func, failed_path, _exc):
        try:
            os.chmod(os.path.dirname(failed_path), 0o700)
            if (
                func is not os.rmdir
                and os.path.isdir(failed_path)
                and not os.path.islink(failed_path)
            ):
                os.chmod(failed_path, 0o700)  # a directory it could not open: open it, go again
                _remove_tree(failed_path)
            else:
                func(failed_path)
        except OSError:
            pass

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=fix)
    else:
        shutil.rmtree(path, onerror=fix)
