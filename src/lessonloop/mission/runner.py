"""The mission's steps: the model proposes one change, it is applied (a patch) or run (an
allowed command) in the sandbox on the workspace, then the verifier runs there. Only the
verifier's exit 0 makes a mission ``succeeded``; steps or calls running out make it ``failed``
and too many refused steps in a row ``blocked``, each with the verifier's last output in the
reason. Every step is stored before the next one starts, so ``--run-id`` continues a mission;
the workspace is kept aside while a step runs (``checkpoint``), so a step killed midway is
undone on resume, and a step that makes the verifier's outcome worse, or changes nothing it
can see (``verdict``), is undone at once, stored as tried."""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import checkpoint, focus, lessons, merge, patch, proposal, replace, verdict, workspace
from . import store as mission_store

if TYPE_CHECKING:
    from ..store.db import Store

REFUSALS_IN_A_ROW = 3  # refused steps in a row before the mission is ``blocked``
VERIFIER_TIMEOUT = 300.0  # seconds
COMMAND_TIMEOUT = 120.0
KEPT_OUTPUT = 4000  # characters of the verifier's (redacted) report stored per step
REASON_OUTPUT = 1500  # of them quoted in a stop reason
MAX_TOKENS = 1500
_SHELL_CHARS = set(";&|`$<>\n\\(){}*?!#~")


@dataclass
class Checked:
    passed: bool
    exit_code: int | None  # None: killed (timeout, memory, ...)
    output: str  # the sandbox's report, redacted and capped


def _in_workspace(root: Path, argv: list[str]) -> list[str]:
    """``argv`` run from ``root`` (the sandbox starts in a fresh folder); no shell parsing."""
    return ["/bin/sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", str(root), *argv]


def verify(root: Path, verifier: str) -> Checked:
    """Run the verifier (a shell command line, the user's own) on the workspace, sandboxed."""
    from ..safety.redact import redact
    from ..safety.sandbox import Limits, run

    outcome = run(
        ["/bin/sh", "-c", f"cd {shlex.quote(str(root))} && {verifier}"],
        limits=Limits(timeout=VERIFIER_TIMEOUT, memory_mb=2048),
    )
    text = redact(outcome.report())
    return Checked(outcome.passed, outcome.exit_code, text[-KEPT_OUTPUT:])


def allowed(command: str, allow: list[str]) -> str | None:
    """Why ``command`` is refused (None: allowed). Allowed: its words start with the words of
    an ``--allow`` entry, and it has no shell syntax (it is run without a shell)."""
    if not allow:
        return "no command is allowed in this mission (no --allow given)"
    if set(command) & _SHELL_CHARS:
        return f"command {command!r} has shell syntax; only plain commands are run"
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return f"command {command!r} cannot be split into words: {exc}"
    for word in words[1:]:  # it runs in the workspace and may name nothing outside it
        for path in (word, word.partition("=")[2]):
            if path.startswith("/") or ".." in Path(path).parts:
                return f"command {command!r} names a path outside the workspace ({path})"
    for entry in allow:
        prefix = shlex.split(entry)
        if prefix and words[: len(prefix)] == prefix:
            return None
    return f"command {command!r} is not in the mission's allowlist ({', '.join(allow)})"


# a test by its name: test_x.py, x_test.go, x.test.js, x.spec.ts, conftest.py, tests/...
TEST_FILE = re.compile(
    r"(?:^|/)(?:tests?/|test_[^/]*\.\w+$|[^/]*_test\.\w+$|[^/]*\.(?:test|spec)\.\w+$|conftest\.py$)"
)


def protected_files(root: Path, verifier: str) -> set[Path]:
    """What checks the mission, resolved: the workspace files the verifier's command names
    (``python3 test_x.py``, ``pytest test_x.py::test_a``) and its tests found by their names
    (a discovering verifier such as ``pytest`` names none). A step may not change them,
    however it spells their path, so the mission cannot pass by rewriting its own check."""
    found = {(root / name).resolve() for name in workspace.files(root) if TEST_FILE.search(name)}
    try:
        words = shlex.split(verifier)
    except ValueError:
        words = verifier.split()
    for word in words:
        name = word.partition("::")[0]
        if name and not name.startswith("-") and (root / name).is_file():
            found.add((root / name).resolve())
    return found


def run_command(root: Path, command: str) -> tuple[bool, str]:
    from ..safety.redact import redact
    from ..safety.sandbox import Limits, run

    outcome = run(_in_workspace(root, shlex.split(command)), limits=Limits(COMMAND_TIMEOUT))
    return outcome.passed, redact(outcome.report())[-1000:]


def _tail(text: str, size: int) -> str:
    text = text.strip()
    return text if len(text) <= size else "..." + text[-size:]


class Mission:
    """One mission's state, read back from the store and the run's folder."""

    def __init__(self, store: Store, run_id: str, folder: Path):
        self.store, self.run_id, self.folder = store, run_id, folder
        row = mission_store.mission(store, run_id)
        assert row is not None
        self.row = row
        self.workspace = folder / "workspace"
        self.base = folder / "base"
        self.diff_path = folder / "mission.diff"
        self.steps_before = len(self.steps)  # stored when this attempt began

    @property
    def steps(self) -> list[dict]:
        return mission_store.steps(self.store, self.run_id)

    def last_check(self, steps: list[dict]) -> tuple[int | None, str]:
        for step in reversed(steps):  # a reverted step's result is not the workspace's
            if step["applied"] and step["verifier_output"] is not None:
                return step["verifier_exit"], step["verifier_output"]
        return self.row["initial_exit"], self.row["initial_output"] or ""

    def write_diff(self) -> None:
        self.diff_path.write_text(workspace.diff(self.base, self.workspace), encoding="utf-8")

    def act(self, change: proposal.Proposal) -> tuple[bool, bool, str]:
        """(applied, refused, message) for one proposed change."""
        if change.kind == "invalid":
            return False, False, change.text
        if change.kind in ("patch", "file", "replace", "code"):
            try:
                diff = self.as_diff(change)
                touched = {
                    name: patch.inside(self.workspace, name)
                    for p in patch.parse(diff)
                    for name in {p.old_path, p.new_path}
                    if name
                }
                protected = protected_files(self.workspace, self.row["verifier"])
                named = sorted(  # a test made anew (a conftest.py that skips all) counts too
                    name
                    for name, path in touched.items()
                    if path in protected or TEST_FILE.search(Path(name).as_posix())
                )
                if named:
                    raise patch.PatchRefused(
                        f"{', '.join(named)} is a test or named by the verifier's command: the "
                        "mission may not change what checks it"
                    )
                changed = patch.apply(self.workspace, diff)
            except patch.PatchRefused as exc:
                return False, True, f"refused: {exc}"
            except (patch.PatchFailed, OSError, UnicodeDecodeError) as exc:
                return False, False, f"the patch does not apply: {exc}"
            return True, False, f"patched {', '.join(changed)}"
        why = allowed(change.text, self.row["allow"])
        if why is not None:
            return False, True, f"refused: {why}"
        before = self.checks()
        passed, report = run_command(self.workspace, change.text)
        after = self.checks()
        changed = sorted(n for n in before.keys() | after.keys() if before.get(n) != after.get(n))
        if changed:  # made, changed or deleted; the caller puts back the step's checkpoint
            why = f"{change.text!r} changed {', '.join(changed)}"
            return False, True, f"refused: {why}: the mission may not change what checks it"
        return True, False, f"ran {change.text!r}: {' '.join(report.split())[:300]}"

    def checks(self) -> dict[str, bytes]:
        """The bytes of what checks the mission (``protected_files``), by name."""
        root = self.workspace.resolve()
        found = {}
        for path in protected_files(self.workspace, self.row["verifier"]):
            try:
                found[path.relative_to(root).as_posix()] = path.read_bytes()
            except (OSError, ValueError):
                continue
        return found

    def as_diff(self, change: proposal.Proposal) -> str:
        """The change as a unified diff, so every form goes through the same path checks."""
        if change.kind == "patch":
            return change.text
        if change.kind == "code":
            sources = {
                name: text
                for name in workspace.files(self.workspace)
                if name.endswith(".py") and (text := workspace.text(self.workspace / name))
            }
            home = merge.home_of(sources, change.text)
            if home is None:
                raise patch.PatchFailed(
                    "the code names no file (a `FILE: path` line before it) and no single file "
                    "defines its functions"
                )
            merged = merge.merge(sources[home], change.text, whole=False)
            return self.rewrite(home, merged or change.text)
        if change.kind == "file":
            name, _, content = change.text.partition("\n")
            target = patch.inside(self.workspace, name)
            if target.is_file() and name.endswith(".py"):  # a fragment: merged by definitions
                content = merge.merge(patch.read(target)[0], content) or content
            return self.rewrite(name, content)
        blocks = proposal.replace_blocks(change.text)
        contents = replace.new_contents(self.workspace, blocks, workspace.files(self.workspace))
        return "".join(self.rewrite(name, content) for name, content in contents.items())

    def rewrite(self, name: str, content: str) -> str:
        """A file's new content as a diff against the workspace."""
        import difflib

        target = patch.inside(self.workspace, name)
        old = patch.read(target)[0] if target.is_file() else ""
        if not content.endswith("\n"):
            content += "\n"
        lines = difflib.unified_diff(
            patch.split_lines(old, keepends=True),
            patch.split_lines(content, keepends=True),
            f"a/{name}" if target.is_file() else "/dev/null",
            f"b/{name}",
        )
        text = "".join(lines)
        if not text:
            raise patch.PatchFailed(f"{name}: that is the code as it already is; change it")
        return text

    def summary(self) -> dict:
        steps = self.steps
        row = mission_store.mission(self.store, self.run_id) or self.row
        return {
            "run_id": self.run_id,
            "status": row["status"],
            "stop_reason": row["stop_reason"],
            "goal": row["goal"],
            "verifier": row["verifier"],
            "workspace_of": row["source_dir"],
            "allow": row["allow"],
            "max_steps": row["max_steps"],
            "max_calls": row["max_calls"],
            "initial_verifier_exit": row["initial_exit"],
            "calls": sum(step["calls"] for step in steps),
            "steps": steps,
            "artifacts": {"diff": str(self.diff_path), "workspace": str(self.workspace)},
        }


def start(
    store: Store,
    run_id: str,
    folder: Path,
    goal: str,
    verifier: str,
    source: Path,
    allow: list[str],
    max_steps: int,
    max_calls: int | None,
) -> None:
    """Copy the folder twice (``base``: as it was, for the final diff; ``workspace``: what the
    steps change), store the mission and the verifier's first result. The goal is stored
    redacted; a verifier or allowed command holding a secret is refused (it is stored to be run
    again on resume, so it cannot be redacted: the secret belongs in the environment)."""
    from ..errors import UsageError
    from ..safety.redact import redact

    for command in (verifier, *allow):
        if redact(command) != command:
            raise UsageError(
                "a secret in a command would be stored with the mission: pass it through the "
                "environment instead",
                field="verifier" if command == verifier else "allow",
            )
    goal = redact(goal)
    for name in ("base", "workspace"):  # left by a start that died before the row was stored
        shutil.rmtree(folder / name, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    source_digest = workspace.digest(source)
    workspace.copy(source, folder / "base")
    workspace.copy(source, folder / "workspace")
    mission_store.create(
        store, run_id, goal, verifier, str(source), source_digest, allow, max_steps, max_calls
    )
    try:
        first = verify(folder / "workspace", verifier)
    except KeyboardInterrupt:  # stopped as a step would be: resume runs the verifier first
        from ..errors import Stopped

        resume = f"`lessonloop mission --run-id {run_id}`"
        mission_store.update(
            store, run_id, "stopped", f"interrupted during the verifier's first run; continue "
            f"with {resume}",
        )  # fmt: skip
        raise Stopped(f"mission {run_id} interrupted; continue it with {resume}") from None
    mission_store.set_initial(store, run_id, first.exit_code, first.output)


def run(
    mission: Mission,
    provider,
    on_step: Callable[[dict], None] = lambda event: None,
) -> dict:
    """Steps until the verifier passes or steps, calls or patience run out."""
    from ..errors import LessonloopError
    from ..loop.budget import Budget, BudgetSpent, Metered
    from ..providers.base import Request

    row, run_id = mission.row, mission.run_id
    steps = mission.steps
    budget = Budget(
        row["max_calls"],
        spent={"calls": sum(step["calls"] for step in steps)},
        hint=lambda flag: f"continue with `lessonloop mission --run-id {run_id} {flag} N`",
    )
    from ..store.runs import record_call

    # each answered call goes on the usage ledger at once, under the step it is for
    metered = Metered(
        provider,
        budget,
        record=lambda completion: record_call(
            mission.store, run_id, len(steps) + 1, 0, "competitor", provider.name, completion
        ),
    )
    if row["initial_output"] is None and not steps:  # the start died before the first check
        first = verify(mission.workspace, row["verifier"])
        mission_store.set_initial(mission.store, run_id, first.exit_code, first.output)
        mission.row = row = mission_store.mission(mission.store, run_id) or row
    checkpoint.recover(mission.folder, mission.workspace, len(steps))  # a step killed midway
    refusals = 0
    if row["status"] != "blocked":  # a blocked mission resumed: the user wants more tries
        for step in reversed(steps):
            if not step["refused"]:
                break
            refusals += 1
    mission_store.update(mission.store, run_id, "running", None)
    mission.write_diff()
    known = lessons.recall(
        mission.store, row["goal"], row["verifier"], mission.last_check(steps)[1]
    )
    try:
        while True:
            exit_code, output = mission.last_check(steps)
            quoted = _tail(output, REASON_OUTPUT)
            if exit_code == 0:
                return _end(mission, "succeeded", f"the verifier passed after {len(steps)} steps")
            if len(steps) >= row["max_steps"]:
                return _end(
                    mission,
                    "failed",
                    f"{len(steps)} steps done and the verifier still fails; its last output: "
                    f"{quoted}",
                )
            if refusals >= REFUSALS_IN_A_ROW:
                return _end(
                    mission,
                    "blocked",
                    f"{refusals} steps in a row were refused (the last: "
                    f"{steps[-1]['message']}); the verifier's last output: {quoted}",
                )
            pointed = focus.focus(mission.workspace, output)
            text = proposal.prompt(
                row["goal"],
                row["allow"],
                row["verifier"],
                exit_code,
                output,
                # where the failure points, when it points into the workspace: shown all
                # files, a small model copies one back unchanged
                workspace.overview(mission.workspace, contents=not pointed),
                steps,
                pointed,
                known,
            )
            before = budget.spent["calls"]
            try:
                completion = metered.complete(
                    Request(
                        role="competitor",
                        system=proposal.system(row["allow"]),
                        messages=[{"role": "user", "content": text}],
                        # hotter as steps fail: a model repeating itself gets unstuck
                        temperature=min(1.0, 0.3 + 0.1 * len(steps)),
                        seed=len(steps) + 1,
                        max_tokens=MAX_TOKENS,
                    )
                )
            except BudgetSpent as exc:
                return _end(mission, "failed", f"{exc}; the verifier's last output: {quoted}")
            change = proposal.parse(completion.text or "")
            saved = None
            if change.kind != "invalid":
                saved = checkpoint.save(mission.folder, mission.workspace, len(steps))
            applied, refused, message = mission.act(change)
            if refused and saved is not None:  # whatever a refused step did is undone
                checkpoint.restore(mission.workspace, saved)
            check = verify(mission.workspace, row["verifier"]) if applied else None
            if check is not None and saved is not None:
                why = verdict.undo(
                    (exit_code, output),
                    (check.exit_code, check.output),
                    edit=change.kind != "command",
                )
                if why is not None:
                    checkpoint.restore(mission.workspace, saved)
                    applied = False
                    message += f"; reverted: {why}"
            index = len(steps) + 1
            mission_store.add_step(
                mission.store,
                run_id,
                index,
                kind=change.kind,
                proposal=change.text if change.kind != "invalid" else (completion.text or ""),
                applied=applied,
                refused=refused,
                message=message,
                verifier_exit=None if check is None else check.exit_code,
                verifier_output=None if check is None else check.output,
                calls=budget.spent["calls"] - before,
            )
            if saved is not None:
                checkpoint.discard(saved)
            mission.write_diff()
            refusals = refusals + 1 if refused else 0
            steps = mission.steps
            on_step(steps[-1])
    except (LessonloopError, KeyboardInterrupt, OSError) as exc:
        if isinstance(exc, OSError):  # a full disk, a file the workspace cannot hold: told so
            from ..errors import unwritable

            exc = unwritable(exc.filename or mission.folder, exc)
        reason = str(exc) or "interrupted"
        _, output = mission.last_check(mission.steps)
        mission_store.update(
            mission.store,
            run_id,
            "stopped",
            f"{reason}; continue with `lessonloop mission --run-id {run_id}`; the verifier's "
            f"last output: {_tail(output, REASON_OUTPUT)}",
        )
        if isinstance(exc, KeyboardInterrupt):  # told as a stop, exit 1, as evolve does
            from ..errors import Stopped

            raise Stopped(
                f"mission {run_id} interrupted; continue it with `lessonloop mission --run-id "
                f"{run_id}`"
            ) from None
        raise exc from None


def _end(mission: Mission, status: str, reason: str) -> dict:
    """Store how the mission ended; what it teaches goes through admission."""
    ended_so_before = mission.row["status"] == status and len(mission.steps) == mission.steps_before
    mission_store.update(mission.store, mission.run_id, status, reason)
    row = mission_store.mission(mission.store, mission.run_id) or mission.row
    diff = mission.diff_path.read_text(encoding="utf-8") if mission.diff_path.is_file() else ""
    if not ended_so_before:  # a mission asked again with nothing new done teaches nothing new
        lessons.learn(mission.store, row, mission.steps, status, diff)
    return mission.summary()


def apply(mission: Mission) -> list[str]:
    """Apply the mission's diff to the user's folder: the only path that changes it. Refused
    unless the mission succeeded and the folder is as it was when the mission started."""
    from ..errors import UsageError

    row = mission.row
    source = Path(row["source_dir"])
    if row["status"] != "succeeded":
        raise UsageError(
            f"mission {mission.run_id} is {row['status']}: its verifier never passed, so "
            f"nothing is applied (its diff: {mission.diff_path})"
        )
    if not source.is_dir() or workspace.digest(source) != row["source_digest"]:
        raise UsageError(
            f"{source} changed since mission {mission.run_id} started, so nothing is applied; "
            f"review and apply its diff by hand: {mission.diff_path}"
        )
    text = mission.diff_path.read_text(encoding="utf-8") if mission.diff_path.is_file() else ""
    if not text.strip():
        return []
    try:
        return patch.apply(source, text)
    except (patch.PatchFailed, patch.PatchRefused) as exc:
        raise UsageError(f"the diff of mission {mission.run_id} does not apply: {exc}") from None
