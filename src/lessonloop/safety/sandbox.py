"""Run untrusted commands (task verifiers, Python code strategies) so that they cannot hurt
the machine or read our secrets.

A run gets:
- a fresh working directory, also its HOME and TMPDIR, removed afterwards;
- an allowlisted environment, so API keys, tokens and LESSONLOOP_* settings never reach it;
- resource limits (CPU, address space, file size, no core dumps, processes), set in the
  child just before exec; where a pids cgroup can be made (root, as in CI and containers,
  whom RLIMIT_NPROC does not bind), the kernel also caps its processes (``pids_cgroup``);
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

from .caps import cap
from .pids_cgroup import pids_cgroup, remove_cgroup
from .process_tree import ProcessTracker, threads_of_user
from .redact import redact

__all__ = ["Limits", "Outcome", "run"]

_POLL = 0.015  # seconds between /proc scans while the command runs...
_POLL_MAX = 0.1  # ...or up to this long where /proc holds many processes
_KILL_GRACE = 0.5  # at most this long to kill what is left (then 0.4 s more at worst)
_SLACK = 4096  # bytes read past output_bytes: context for the redactor, never shown
_CHUNK = 1 << 16
_MIB = 1 << 20
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
cgroup = sys.argv[7]                     # a pids cgroup to join, or "" (see pids_cgroup)
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
    cgroup = pids_cgroup(limits.max_processes)
    try:
        return _supervise(argv, workdir, stdin, limits, start, cgroup)
    finally:
        if cgroup:
            remove_cgroup(cgroup)


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
    tracker = ProcessTracker(proc.pid, workdir)
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


def _start(
    argv: list[str], workdir: str, stdin: bytes | None, limits: Limits, cgroup: str
) -> tuple[subprocess.Popen, int]:
    """The supervisor, in a new session, and the pipe on which it reports the wait status.

    Input comes from an (unlinked) file, so a command that never reads it cannot block us.
    """
    cpu = limits.cpu_seconds or math.ceil(limits.timeout) + 1
    nproc = threads_of_user() + limits.max_processes
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
    sel: selectors.BaseSelector, tracker: ProcessTracker, deadline: float, limits: Limits
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
