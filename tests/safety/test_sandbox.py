"""The sandbox: ordinary runs work, and hostile commands are stopped, reported, and cleaned up.

Every hostile case checks three things: ``run`` returned within timeout + 1 s, the outcome
says why it ended, and no process of the command is left. Leftovers are found independently
of the sandbox's own bookkeeping: by a unique token in the command line, or by the pids the
command printed.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import uuid

import pytest

from lessonloop.safety import pids_cgroup
from lessonloop.safety.sandbox import Limits, Outcome, run

PY = sys.executable


def _token() -> str:
    return f"sbx{uuid.uuid4().hex[:12]}"


def _state(pid: int) -> bytes | None:
    """The process state letter, or None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data[data.rfind(b")") + 2 :].split()[0]


def _alive(pid: int) -> bool:
    return _state(pid) not in (None, b"Z", b"X")  # a zombie is dead, waiting to be reaped


def _with_token(token: str) -> list[int]:
    """Live processes whose command line holds ``token``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if token.encode() in f.read() and _alive(int(name)):
                        found.append(int(name))
            except OSError:
                pass
    return found


def _pids(text: str) -> list[int]:
    return [int(w) for w in text.split() if w.isdigit()]


# Seconds a contained run may overrun its deadline on a loaded machine (the suite runs on two
# xdist workers beside other work): every bound stays far below what an uncontained command
# takes (forever, or its ``sleep 100``), so a broken limit still fails the test.
GRACE = 3.0


def timed(command, **kwargs) -> tuple[Outcome, float]:
    start = time.monotonic()
    outcome = run(command, **kwargs)
    return outcome, time.monotonic() - start


def assert_contained(
    outcome: Outcome, elapsed: float, limits: Limits, token: str | None = None, pids: list[int] = ()
) -> None:
    assert elapsed < limits.timeout + GRACE, f"run took {elapsed:.2f}s: {outcome.report()}"
    if token:
        assert _with_token(token) == [], "processes of the command are still alive"
    left = [pid for pid in pids if _alive(pid)]
    assert left == [], f"still alive: {left}"


def assert_machine_fine() -> None:
    outcome = run("echo ok", limits=Limits(timeout=5))
    assert (outcome.exit_code, outcome.stdout, outcome.killed) == (0, "ok\n", None)


# --------------------------------------------------------------------------------------------
# Ordinary runs


def test_exit_codes_pass_through():
    assert run("exit 3").exit_code == 3
    ok = run("true")
    assert ok.passed and ok.exit_code == 0 and ok.killed is None
    failed = run(["false"])
    assert failed.exit_code == 1 and not failed.passed


def test_stdin_reaches_the_command():
    assert run("cat", stdin=b"hello\nworld").stdout == "hello\nworld"
    assert run(["wc", "-c"], stdin=b"x" * 100_000).stdout.strip() == "100000"
    # Input the command never reads cannot block the run.
    outcome, elapsed = timed("true", stdin=b"x" * 10_000_000)
    assert outcome.passed and elapsed < 1 + GRACE


def test_files_are_written_into_the_working_directory_which_is_removed_afterwards():
    check = b"import sys\nprint(open(sys.argv[1]).read().upper())\n"
    outcome = run(
        f"pwd; {PY} check.py output.sql; cat data/nested.txt",
        files={"check.py": check, "output.sql": b"select 1;", "data/nested.txt": b"n"},
    )
    assert outcome.passed, outcome.report()
    workdir, rest = outcome.stdout.split("\n", 1)
    assert rest == "SELECT 1;\nn"
    assert os.path.isabs(workdir) and not os.path.exists(workdir)


def test_a_list_runs_without_a_shell():
    outcome = run([PY, "-c", "import sys; print(sys.argv[1])", "a b; echo no $HOME"])
    assert outcome.stdout == "a b; echo no $HOME\n"


def test_a_missing_program_is_reported():
    outcome = run(["no-such-program-in-the-sandbox"])
    assert outcome.exit_code == 127 and "no-such-program-in-the-sandbox" in outcome.stderr


def test_file_names_must_stay_inside_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    for bad in ("../escape", "/etc/passwd", "a/../../escape", "."):
        with pytest.raises(ValueError):
            run("true", files={bad: b"x"})
    assert list(tmp_path.iterdir()) == []  # the working directory went, despite the error


def test_limits_are_validated():
    for bad in (dict(timeout=0), dict(memory_mb=0), dict(max_processes=0), dict(cpu_seconds=0)):
        with pytest.raises(ValueError):
            Limits(**bad)


def test_runs_from_several_threads_at_once():
    results: dict[int, Outcome] = {}

    def one(i: int) -> None:
        results[i] = run(f"sleep 0.1; echo {i}")

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {i: o.stdout for i, o in results.items()} == {i: f"{i}\n" for i in range(6)}


def test_report_says_how_it_ended_and_shows_the_output():
    report = run("echo out; echo err >&2; exit 3").report()
    assert "exit code 3" in report and "out" in report and "err" in report
    assert "killed (timeout)" in run("sleep 5", limits=Limits(timeout=0.2)).report()
    long = run(f"{PY} -c \"print('\\n'.join(str(i) for i in range(5000)))\"").report()
    assert len(long) < 2200 and long.rstrip().endswith("4999")


# --------------------------------------------------------------------------------------------
# Hostile commands


@pytest.mark.parametrize("kind", ["shell", "python"])
def test_an_infinite_loop_is_killed_at_the_deadline(kind):
    token = _token()
    command = (
        f"while :; do :; done # {token}"
        if kind == "shell"
        else [PY, "-c", "while True: pass", token]
    )
    limits = Limits(timeout=1)
    outcome, elapsed = timed(command, limits=limits)
    assert outcome.killed == "timeout" and outcome.exit_code is None and not outcome.passed
    assert elapsed >= 1
    assert_contained(outcome, elapsed, limits, token)


def test_cpu_time_is_limited_separately():
    token = _token()
    limits = Limits(timeout=5, cpu_seconds=1)
    outcome, elapsed = timed(f"while :; do :; done # {token}", limits=limits)
    assert outcome.killed == "SIGXCPU" and elapsed < limits.timeout - 0.5
    assert_contained(outcome, elapsed, limits, token)


FORK_BOMBS = {
    # The first process of these returns at once, leaving the bomb to its children.
    "bash": ["bash", "-c", ":(){ :|:& };: # TOKEN"],
    "dash": "b(){ b|b& };b # TOKEN",
    # These keep their first process alive too.
    "dash-waiting": "b(){ b|b& };b; sleep 10 # TOKEN",
    "python": [
        PY,
        "-c",
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        "TOKEN",
    ],
}


@pytest.mark.parametrize("name", list(FORK_BOMBS))
def test_a_fork_bomb_is_stopped_and_nothing_is_left(name):
    if name == "bash" and not shutil.which("bash"):
        pytest.skip("bash is not installed")
    token = _token()
    bomb = FORK_BOMBS[name]
    command = (
        bomb.replace("TOKEN", token)
        if isinstance(bomb, str)
        else [token if part == "TOKEN" else part.replace("TOKEN", token) for part in bomb]
    )
    limits = Limits(timeout=3, max_processes=32)
    outcome, elapsed = timed(command, limits=limits)
    # A bomb whose first process returns at once leaves its children running: never a pass.
    assert not outcome.passed, outcome.report()
    if outcome.killed is None:
        # Under a pids cgroup the kernel refuses the bomb's forks, and it may die out by itself
        # before a scan counts it: contained, with a failing exit, not killed by us.
        assert _kernel_caps_processes() and outcome.exit_code != 0, outcome.report()
    else:
        assert outcome.killed in ("too many processes", "timeout") or outcome.killed.startswith(
            "left"
        )
    assert_contained(outcome, elapsed, limits, token)
    assert_machine_fine()


def _kernel_caps_processes() -> bool:
    probe = pids_cgroup.pids_cgroup(4)
    if probe:
        pids_cgroup.remove_cgroup(probe)
    return bool(probe)


@pytest.mark.parametrize("chunk", ["10**9", "10**7"])
def test_a_memory_bomb_ends_within_the_deadline(chunk):
    token = _token()
    limits = Limits(timeout=5, memory_mb=256)
    code = f"chunks = []\nwhile True:\n    chunks.append(bytearray({chunk}))"
    outcome, elapsed = timed([PY, "-c", code, token], limits=limits)
    assert (
        outcome.exit_code not in (0, None) and "MemoryError" in outcome.stderr
    ) or outcome.killed is not None, outcome.report()
    assert elapsed < limits.timeout - 0.5
    assert_contained(outcome, elapsed, limits, token)


def test_a_10gb_write_is_stopped_by_the_file_size_limit():
    token = _token()
    limits = Limits(timeout=10, file_mb=16)
    outcome, elapsed = timed(
        ["dd", "if=/dev/zero", f"of=big-{token}", "bs=1M", "count=10240"], limits=limits
    )
    assert outcome.killed == "SIGXFSZ" and elapsed < 1 + GRACE
    assert_contained(outcome, elapsed, limits, token)

    # Through the shell, which reports its child's signal as 128 + n; the file goes with the
    # working directory.
    outcome, elapsed = timed(
        f"pwd; dd if=/dev/zero of=big-{token} bs=1M count=10240", limits=limits
    )
    assert outcome.killed == "SIGXFSZ" or outcome.exit_code == 128 + signal.SIGXFSZ
    assert elapsed < 1 + GRACE and not os.path.exists(outcome.stdout.split("\n")[0])
    assert_contained(outcome, elapsed, limits, token)


def test_a_python_write_loop_is_stopped_by_the_file_size_limit():
    token = _token()
    limits = Limits(timeout=10, file_mb=16)
    code = (
        "import os\nprint(os.getcwd(), flush=True)\nwith open('big', 'wb') as f:\n"
        "    while True:\n        f.write(b'x' * 1048576)"
    )
    outcome, elapsed = timed([PY, "-c", code, token], limits=limits)
    # Python ignores SIGXFSZ and raises OSError(EFBIG) instead; other programs get killed.
    assert outcome.killed == "SIGXFSZ" or "File too large" in outcome.stderr, outcome.report()
    assert elapsed < 1 + GRACE and not os.path.exists(outcome.stdout.strip())
    assert_contained(outcome, elapsed, limits, token)


def test_a_crash_names_its_signal():
    outcome = run([PY, "-c", "import ctypes; ctypes.string_at(0)"])
    assert outcome.killed == "SIGSEGV" and outcome.exit_code is None


SECRETS = {
    "ANTHROPIC_API_KEY": "sk-" + "ant-api03-" + "Zt8qL2mVx9RkP4wN7yB1cD6fH3jS5aE0uG-iO_TrYqWe2"
    "sDfGhJkLzXcVbNm1234567890AbCdEfGhIjKlMnOpQrStUvWxYz-AA",
    "OPENAI_API_KEY": "sk-" + "proj-" + "Qw3rTy7UiOp1AsDf5GhJkL9ZxCvBnM2qWeRtYuIoP4aSdFgHjKl",
    "GITHUB_TOKEN": "ghp" + "_" + "R8tY2uI9oP3aS4dF5gH6jK7lZ1xC0vB9nM8q",
    "LESSONLOOP_API_KEY": "llk-" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
}


def test_the_environment_is_an_allowlist(monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    for command in (
        "env",
        "cat /proc/self/environ",
        "cat /proc/$PPID/environ",
        f"{PY} -c 'import os; print(dict(os.environ))'",
    ):
        outcome = run(command)
        assert outcome.passed, outcome.report()
        seen = outcome.stdout + outcome.stderr
        for name, value in SECRETS.items():
            assert value not in seen and value[:12] not in seen, (command, name)
        assert "LESSONLOOP" not in seen and "API_KEY" not in seen and "TOKEN" not in seen
    names = {line.split("=", 1)[0] for line in run("env").stdout.splitlines()}
    assert names <= {
        "PATH",
        "LANG",
        "LC_ALL",
        "HOME",
        "TMPDIR",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONUNBUFFERED",
        "PWD",
        "SHLVL",
        "_",
    }  # the last three: the shell's
    home = run("echo $HOME; echo $TMPDIR; pwd").stdout.split()
    assert home[0] == home[1] == home[2]


def test_a_secret_the_command_prints_is_redacted():
    outcome = run(
        't=ghp_; echo "token=${t}AbCdEfGh0123456789IjKlMnOp0123456789qr"; '
        'echo "$t"R8tY2uI9oP3aS4dF5gH6jK7lZ1xC0vB9nM8q >&2'
    )
    assert "[REDACTED:" in outcome.stdout and "AbCdEfGh0123" not in outcome.stdout
    assert "[REDACTED:github-token]" in outcome.stderr and "R8tY2uI9" not in outcome.stderr


def test_a_secret_cut_by_the_output_cap_leaves_nothing_readable():
    secret = "ghp_" + "A1b2C3d4" * 5
    limits = Limits(output_bytes=1000)
    for pad in (940, 960, 990, 995, 999):
        code = f"print('x' * {pad} + ' ' + {secret!r} + ' ' + 'y' * 50)"
        outcome = run([PY, "-c", code], limits=limits)
        assert len(outcome.stdout) <= 1000 and "truncated" in outcome.stdout
        assert "ghp_" not in outcome.stdout and "A1b2" not in outcome.stdout, pad


def test_an_output_flood_is_capped_and_returns_at_the_deadline():
    token = _token()
    limits = Limits(timeout=1, output_bytes=1000)
    outcome, elapsed = timed(["yes", token], limits=limits)
    assert outcome.killed == "timeout"
    assert len(outcome.stdout) <= 1000 and outcome.stdout.startswith(f"{token}\n")
    assert "…[truncated:" in outcome.stdout and outcome.stdout.endswith("more bytes]")
    assert_contained(outcome, elapsed, limits, token)


def test_a_flood_on_both_streams_does_not_deadlock():
    token = _token()
    limits = Limits(timeout=1, output_bytes=500)
    outcome, elapsed = timed(f"yes {token} >&2 & yes {token}", limits=limits)
    assert outcome.killed == "timeout" and len(outcome.stdout) <= 500 >= len(outcome.stderr)
    assert_contained(outcome, elapsed, limits, token)


def test_a_background_child_is_killed_when_the_command_exits():
    limits = Limits(timeout=5)
    outcome, elapsed = timed("sleep 100 & echo $!; exit 0", limits=limits)
    assert not outcome.passed and outcome.exit_code == 0 and elapsed < limits.timeout - 1
    assert outcome.killed == "left 1 process running", "work left running fails the run"
    assert_contained(outcome, elapsed, limits, pids=_pids(outcome.stdout))


@pytest.mark.parametrize(
    "command",
    [
        "setsid sleep 100 & echo $!; exit 0",  # a new session; its shell exits at once
        "(setsid sleep 100 & echo $!); exit 0",  # and a double fork: orphaned at once
        "(setsid sleep 100 & echo $!); sleep 0.1",
    ],
)
def test_a_child_that_calls_setsid_is_killed_too(command):
    limits = Limits(timeout=5)
    outcome, elapsed = timed(command, limits=limits)
    assert outcome.killed == "left 1 process running" and elapsed < limits.timeout - 1, (
        outcome.report()
    )
    assert_contained(outcome, elapsed, limits, pids=_pids(outcome.stdout))


def test_the_setsid_child_really_left_the_session():
    token = _token()
    code = "import os, time; print(os.getpid(), os.getsid(0), flush=True); time.sleep(100)"
    limits = Limits(timeout=5)
    outcome, elapsed = timed(f"setsid {PY} -c '{code}' {token} & sleep 0.5; exit 0", limits=limits)
    pid, sid = _pids(outcome.stdout)
    assert pid == sid and outcome.killed == "left 1 process running"
    assert_contained(outcome, elapsed, limits, token, pids=[pid])


def test_killing_the_supervisor_does_not_free_the_children():
    limits = Limits(timeout=5)
    for command in (
        "sleep 100 & echo $!; kill -9 $PPID; sleep 1",
        "(setsid sleep 100 & echo $!); kill -9 $PPID; sleep 1",
    ):
        outcome, elapsed = timed(command, limits=limits)
        assert outcome.killed == "SIGKILL" and not outcome.passed
        assert_contained(outcome, elapsed, limits, pids=_pids(outcome.stdout))


def test_a_timeout_kills_children_in_other_groups_and_sessions():
    token = _token()
    limits = Limits(timeout=1)
    outcome, elapsed = timed(
        f"setsid sleep 100 & echo $!; (sleep 100 & echo $!); "
        f"{PY} -c 'import time; time.sleep(100)' {token} & echo $!; wait",
        limits=limits,
    )
    assert outcome.killed == "timeout"
    assert_contained(outcome, elapsed, limits, token, pids=_pids(outcome.stdout))


def test_processes_that_together_hold_too_much_memory_are_stopped():
    """RLIMIT_AS bounds each process; the watcher bounds what they hold together."""
    hog = f"{PY} -c 'import time; b = bytearray(150 * 2**20); time.sleep(30)'"
    limits = Limits(timeout=10, memory_mb=256)
    outcome, elapsed = timed(f"for i in 1 2 3 4; do {hog} & done; wait", limits=limits)
    assert outcome.killed == "too much memory", outcome.report()
    assert elapsed < limits.timeout - 2
    assert_contained(outcome, elapsed, limits)


def test_where_a_pids_cgroup_can_be_made_the_kernel_caps_the_commands_processes():
    """As root RLIMIT_NPROC binds nothing: the pids cgroup's count is what holds a fork bomb
    back however loaded the machine is (the tracker's scans can fall behind)."""

    probe = pids_cgroup.pids_cgroup(4)
    if not probe:
        pytest.skip("no writable pids cgroup here (not root, or no pids controller)")
    pids_cgroup.remove_cgroup(probe)
    token = _token()
    limits = Limits(timeout=3, max_processes=8)
    own = "$(grep -h lessonloop-sandbox- /proc/self/cgroup | cut -d: -f3)"
    outcome, elapsed = timed(
        f"cat /proc/self/cgroup; cat /sys/fs/cgroup/pids{own}/pids.max /sys/fs/cgroup{own}/pids.max"
        f" 2>/dev/null; for i in $(seq 40); do sleep 5 & done; wait # {token}",
        limits=limits,
    )
    [line] = [text for text in outcome.stdout.splitlines() if "lessonloop-sandbox-" in text]
    assert "9" in outcome.stdout.splitlines(), outcome.report()  # pids.max: max_processes + 1
    assert not outcome.passed
    assert outcome.killed == "too many processes" or outcome.killed.startswith("left")
    assert_contained(outcome, elapsed, limits, token)
    cgroup = line.split(":")[-1]
    assert not any(os.path.exists(root + cgroup) for root in pids_cgroup.CGROUP_ROOTS), (
        "the cgroup is removed with the run"
    )
