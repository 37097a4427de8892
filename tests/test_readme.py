"""README.md is executable: every fenced block meant to run is run, in order, as written.

A block's language says what it is: ``bash`` blocks are commands (run with ``lessonloop`` on
PATH in a fresh folder, offline, each block one ``bash -e`` script), ``python`` blocks are code
(run, or written to the file a ``file:`` note names for the commands after it), ``toml`` is a
config.toml (loaded as lessonloop loads it) and ``yaml`` a task (parsed as a task file).
Untagged blocks are sample output and trees, never run. Notes a reader does not see, HTML
comments just above a block, say what the block needs:

    <!-- readme-test: skip: WHY -->    not run here, and why
    <!-- readme-test: model: WHAT -->  needs a model server or key (skipped, saying what)
    <!-- readme-test: file: PATH -->   the python block is that file
    <!-- readme-test: setup: CMD -->   a shell command run first (a file the reader has)

``RUN_ID`` and ``ID`` in a command stand for the newest run made by the blocks before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from .conftest import ROOT, subprocess_env

README = ROOT / "README.md"
RUNNABLE = ("bash", "python", "toml", "yaml")
NOTE = re.compile(r"^<!-- readme-test: (skip|model|file|setup): (.+?) -->$")
FENCE = re.compile(r"^```(\S*)\s*$")
PLACEHOLDER = re.compile(r"\b(RUN_ID|ID)\b")  # the newest run made by the blocks before


@dataclass
class Block:
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    notes: dict[str, list[str]] = field(default_factory=dict)

    @property
    def why_not(self) -> str | None:
        if "skip" in self.notes:
            return self.notes["skip"][0]
        if "model" in self.notes:
            return (
                f"needs {self.notes['model'][0]}; the default suite is offline (the model "
                "paths are covered by the real_model tests and bench/real_model.py)"
            )
        return None

    def __str__(self) -> str:
        return f"README.md:{self.line} ({self.lang or 'untagged'})"


def blocks(text: str) -> list[Block]:
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        notes: dict[str, list[str]] = {}
        j = i - 1
        while j >= 0 and NOTE.match(lines[j]):
            kind, value = NOTE.match(lines[j]).groups()
            notes.setdefault(kind, []).insert(0, value)
            j -= 1
        end = next(k for k in range(i + 1, len(lines)) if lines[k].startswith("```"))
        found.append(Block(i + 1, opening.group(1), "\n".join(lines[i + 1 : end]) + "\n", notes))
        i = end + 1
    return found


def test_every_block_is_run_or_says_why_not():
    every = blocks(README.read_text(encoding="utf-8"))
    assert len(every) > 10
    for block in every:
        assert block.lang in ("", *RUNNABLE), f"{block}: an unknown language tag"
        if not block.lang:  # sample output or a tree: it must not look like a command
            assert not re.search(r"^(\$ |lessonloop )", block.text, re.M), (
                f"{block} holds commands: tag it bash"
            )
        if "file" in block.notes:
            assert block.lang == "python", f"{block}: file: is for python blocks"
    runnable = [b for b in every if b.lang in RUNNABLE and b.why_not is None]
    assert sum(b.lang == "bash" for b in runnable) >= 8, "most commands run"
    assert any("class Archery" in b.text for b in runnable), "the scenario example runs"


@pytest.mark.parametrize(
    "block",
    [b for b in blocks(README.read_text(encoding="utf-8")) if b.why_not is not None],
    ids=str,
)
def test_blocks_not_run_here(block):
    pytest.skip(f"{block}: {block.why_not}")


def _run_id(env, cwd) -> str | None:
    import json

    listed = subprocess.run(
        ["lessonloop", "list", "--json"],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    runs = json.loads(listed.stdout or "[]")
    return runs[0]["run_id"] if runs else None


def _shell(script: str, env, cwd, where) -> subprocess.CompletedProcess:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (
        f"{where} failed (exit {done.returncode}):\n{script}\n"
        f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}"
    )
    return done


def test_readme_runs_as_written(tmp_path, monkeypatch):
    """Every runnable block, in the README's order, in one fresh folder: the state one block
    leaves (runs, knowledge, files) is what the next one finds, as for a reader."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "examples").symlink_to(ROOT / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "lessonloop"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m lessonloop "$@"\n')
    launcher.chmod(0o755)
    env = subprocess_env(
        tmp_path / "unused-home",
        HOME=str(tmp_path / "user"),
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        COLUMNS="100",
    )
    del env["LESSONLOOP_HOME"]  # the default, ./.lessonloop, as a reader has it
    run_id = None
    ran = []
    for block in blocks(README.read_text(encoding="utf-8")):
        if block.lang not in RUNNABLE or block.why_not is not None:
            continue
        for command in block.notes.get("setup", []):
            _shell(command, env, folder, f"{block} setup")
        if block.lang == "bash":
            script = block.text
            if PLACEHOLDER.search(script):  # looked up only for a block that names it
                run_id = _run_id(env, folder) or run_id
            if run_id is not None:
                script = PLACEHOLDER.sub(run_id, script)
            _shell(script, env, folder, block)
        elif block.lang == "python":
            target = block.notes.get("file", [None])[0]
            if target:
                (folder / target).parent.mkdir(parents=True, exist_ok=True)
                (folder / target).write_text(block.text, encoding="utf-8")
                code = f"import runpy; runpy.run_path({str(folder / target)!r})"
            else:
                code = block.text
            done = subprocess.run(
                [sys.executable, "-c", code],
                env=env,
                cwd=folder,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, f"{block}: {done.stderr[-2000:]}"
        elif block.lang == "toml":  # a config.toml, read as lessonloop reads one
            from lessonloop import config

            home = tmp_path / "toml-home"
            home.mkdir(exist_ok=True)
            (home / "config.toml").write_text(block.text, encoding="utf-8")
            monkeypatch.setenv("LESSONLOOP_HOME", str(home))
            settings = config.load(environ={})
            assert settings.route("competitor").provider, block
        elif block.lang == "yaml":  # a task file, parsed as `improve` parses one
            import yaml

            from lessonloop.tasks.spec import parse

            assert parse(yaml.safe_load(block.text), str(block)).name, block
        ran.append(block)
    run_id = _run_id(env, folder) or run_id
    assert run_id is not None and any("class Archery" in b.text for b in ran)
    assert (folder / ".lessonloop" / "runs" / run_id / "report.md").exists()
