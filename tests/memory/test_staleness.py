"""Stale memories: a memory naming a file, script, target or program the project lost leaves
recall (``memory audit --stale`` says why); one whose words merely look like paths never does."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from lessonloop.memory import recall, staleness
from lessonloop.store import open_store
from lessonloop.timeutil import utc_now

from .test_session import Session


@pytest.fixture
def project(tmp_path) -> Path:
    """A real project folder: an Elixir config, a Python app, package.json scripts, a Makefile."""
    root = tmp_path / "proj"
    (root / "config").mkdir(parents=True)
    (root / "config" / "test.exs").write_text("import Config\n")
    (root / "config" / "dev.exs").write_text("import Config\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "seed.sh").write_text("#!/bin/sh\n")
    (root / "package.json").write_text(
        json.dumps({"name": "p", "scripts": {"build": "vite build", "test": "vitest"}})
    )
    (root / "Makefile").write_text("deploy: build\n\tdo-deploy\n\nbuild:\n\techo build\n")
    return root


def add(cli, summary: str, content: str = "") -> int:
    args = ["memory", "add", "--type", "pattern", "--summary", summary, "--json"]
    return cli(*args, *(["--content", content] if content else [])).json()["id"]


def stale(cli, project: Path) -> dict[int, list[str]]:
    done = cli("memory", "audit", "--stale", "--project", project, "--json")
    assert done.code == 0, done.err
    return {item["id"]: item["missing"] for item in done.json()}


def recalled(home: Path) -> str:
    return recall.block(home, home.parent / "user-home")


def test_a_deleted_file_marks_its_memory_stale_and_out_of_recall_until_it_is_back(
    cli, home, project
):
    named = add(cli, "Test settings live in `config/test.exs`, not in config/dev.exs")
    other = add(cli, "The app starts from src/app.py")
    assert stale(cli, project) == {}
    assert "config/test.exs" in recalled(home)
    (project / "config" / "test.exs").unlink()
    assert stale(cli, project) == {named: ["file config/test.exs"]}
    assert "config/test.exs" not in recalled(home) and "src/app.py" in recalled(home)
    listed = [m["id"] for m in cli("memory", "list", "--json").json()]
    assert named not in listed and other in listed
    why = cli("memory", "why", named, "--json").json()
    assert why["events"][-1]["action"] == "stale"
    assert why["events"][-1]["detail"] == "missing: file config/test.exs"
    text = cli("memory", "audit", "--stale", "--project", project)
    assert f"[project {named}]" in text.out and "stale?: missing file config/test.exs" in text.out
    (project / "config" / "test.exs").write_text("import Config\n")  # restored
    assert stale(cli, project) == {}
    assert "config/test.exs" in recalled(home)
    assert [e["action"] for e in cli("memory", "why", named, "--json").json()["events"]][-2:] == [
        "stale",
        "fresh",
    ]


def test_a_renamed_script_a_removed_target_and_a_deleted_script_file(cli, home, project):
    build = add(cli, "Run `npm run build` before opening the preview")
    deploy = add(cli, "Ship with `make deploy`; it builds first")
    seed = add(cli, "Load fixtures with `./scripts/seed.sh` after a reset")
    kept = add(cli, "Run `pnpm test` to run vitest")
    assert stale(cli, project) == {}
    (project / "package.json").write_text(
        json.dumps({"scripts": {"compile": "vite build", "test": "vitest"}})
    )
    (project / "Makefile").write_text("release:\n\techo release\n")
    (project / "scripts" / "seed.sh").unlink()
    assert stale(cli, project) == {
        build: ["script build"],
        deploy: ["target deploy"],
        seed: ["file scripts/seed.sh"],
    }
    assert kept not in stale(cli, project)


def test_a_confirmed_memory_is_not_marked_again_for_the_same_missing_file(cli, home, project):
    named = add(cli, "Test settings live in config/test.exs", "The app is in src/app.py")
    (project / "config" / "test.exs").unlink()
    assert stale(cli, project) == {named: ["file config/test.exs"]}
    # what `memory approve ID` does (another part of issue 22): back to active, confirmed now
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn, conn:
        conn.execute(
            "UPDATE knowledge SET status = 'active', confirmed_at = ? WHERE number = ?",
            (utc_now(), named),
        )
    assert stale(cli, project) == {}
    assert "config/test.exs" in recalled(home)
    (project / "src" / "app.py").unlink()  # something else it names is lost: marked again
    assert stale(cli, project) == {named: ["file config/test.exs", "file src/app.py"]}


@pytest.mark.parametrize(
    "summary",
    [
        "Docs are at https://hexdocs.pm/phoenix/config/test.exs and www.example.com/a/b.py",
        "Prefer small modules, e.g. one job each, i.e. no god objects",
        "Requires python3.12 or v1.2.3; 1.2/1.3 are too old and the 24/7 build",
        "Use /usr/bin/env bash and /etc/hosts, never ~/bin/tool.sh",
        "Read and/or write input/output through the client/server layer",
        "Clone github.com/owner/repo.git and see example.org/path/x.js",
        "Define it with `async def` and `retries = 3`; Node.js is fine",
        "The error came from ../other/project/file.py and $HOME/notes.md",
        "Install with `frobnicate --all`, a tool this machine never had",
        "The refactor deleted src/renderer.py and split it into two modules",
        "The old layout (`config/legacy.exs`) is gone; settings are in one file now",
        'Renders `<ruby><rb>text</rb><rt class="token">id</rt></ruby>` per token',
    ],
)
def test_words_that_merely_look_like_paths_or_commands_mark_nothing(cli, home, project, summary):
    assert staleness.references(summary) == []
    memory = add(cli, summary)
    assert stale(cli, project) == {}
    assert any(m["id"] == memory for m in cli("memory", "list", "--json").json())


def test_nothing_is_marked_against_a_folder_that_is_not_the_project(cli, home, tmp_path):
    add(cli, "Test settings live in config/test.exs")
    add(cli, "The app entry is `main.py`")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert stale(cli, elsewhere) == {}


def test_a_program_found_before_and_gone_now_is_missing_a_never_seen_one_is_not(home, project):
    from lessonloop.knowledge import admission

    home.mkdir(parents=True, exist_ok=True)
    with open_store(home) as store:
        admission.admit(
            store,
            [
                admission.Proposal(
                    kind="pattern",
                    scope="project",
                    summary="Run `frobnicate --all` before each commit",
                    source="user",
                    author="user",
                ),
                admission.Proposal(
                    kind="pattern",
                    scope="project",
                    summary="Run `mix test` with MIX_ENV=test",
                    source="user",
                    author="user",
                ),
            ],
            home,
        )
        on_path = {"frobnicate"}

        def which(name: str) -> str | None:
            return f"/opt/bin/{name}" if name in on_path else None

        assert staleness.check(store, home, str(project), which=which) == []
        on_path.clear()  # uninstalled; mix was never here: nothing to say about it
        found = staleness.check(store, home, str(project), which=which, force=True)
        assert [(f.summary, f.missing, f.action) for f in found] == [
            ("Run `frobnicate --all` before each commit", ["program frobnicate"], "marked")
        ]


def test_memorize_marks_what_the_project_lost_since_an_earlier_session(cli, home, project):
    """The real hooks: session one sees the file there, it is deleted, session two's memorize
    marks the memory, and the next session starts without it."""
    cli("memory", "consent", "yes")
    named = add(cli, "Test settings live in config/test.exs")
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    for session_id in ("before", "after"):
        session = Session(home, session_id, {}, env)
        session.hook("session-start", source="startup")
        session.prompt("Fix the flaky login test please")
        if session_id == "after":
            assert (
                "config/test.exs"
                in session.hook("session-start", source="resume")["hookSpecificOutput"][
                    "additionalContext"
                ]
            )
        session.hook("session-end", reason="prompt_input_exit")
        if session_id == "before":
            assert staleness.load_state(home)["project"] == str(project)
            (project / "config" / "test.exs").unlink()
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn:
        assert conn.execute(
            "SELECT status FROM knowledge WHERE number = ?", (named,)
        ).fetchone() == ("stale",)
    start = Session(home, "next", {}, env).hook("session-start", source="startup")
    assert "config/test.exs" not in json.dumps(start)
    # audit --stale without --project: the folder memorize checked against
    done = cli("memory", "audit", "--stale", "--json")
    assert [(m["id"], m["missing"]) for m in done.json()] == [(named, ["file config/test.exs"])]


def test_audit_stale_errors_are_one_line(cli, home, tmp_path):
    add(cli, "Test settings live in config/test.exs")
    done = cli("memory", "audit", "--stale", "--project", tmp_path / "nowhere", "--json")
    assert done.code in (1, 2) and "nowhere" in done.error()["error"]
    plain = cli("memory", "audit", "--stale", "--project", tmp_path / "nowhere")
    assert plain.code in (1, 2) and len(plain.err.strip().splitlines()) == 1
    assert "Traceback" not in plain.err
    assert cli("memory", "audit", "--stale", "--scope", "user", "--json").json() == []


def test_references_name_paths_scripts_targets_and_programs():
    found = staleness.references(
        "Run `npm run build` then `make deploy VERSION=2` and `just fmt`; the config is in "
        "`config/test.exs`, the entry `./run.sh`, the app lib/foo/bar.ex; https://x.io/a.py"
    )
    assert [str(r) for r in found] == [
        "file config/test.exs",
        "file lib/foo/bar.ex",
        "file run.sh",
        "program just",
        "program make",
        "program npm",
        "recipe fmt",
        "script build",
        "target deploy",
    ]


def test_what_was_missing_when_a_memory_was_stored_is_not_its_loss(home, project):
    """A memory stored by a memorize is looked at, not marked: a file it names that is not
    there then (planned, or said gone in words the filter missed) counts only once seen."""
    from lessonloop.knowledge import admission

    home.mkdir(parents=True, exist_ok=True)
    with open_store(home) as store:
        started = utc_now()
        admission.admit(
            store,
            [
                admission.Proposal(
                    kind="observation",
                    scope="project",
                    summary="Release notes go to config/notes.exs from now on",
                    source="user",
                    author="user",
                )
            ],
            home,
        )
        assert staleness.check(store, home, str(project), fresh_since=started) == []
        assert staleness.check(store, home, str(project), force=True) == []  # still not a loss
        (project / "config" / "notes.exs").write_text("# notes\n")
        assert staleness.check(store, home, str(project), force=True) == []
        (project / "config" / "notes.exs").unlink()  # seen, then lost: now it counts
        found = staleness.check(store, home, str(project), force=True)
        assert [(f.missing, f.action) for f in found] == [(["file config/notes.exs"], "marked")]


def test_a_memory_memorize_stored_goes_stale_when_its_file_goes_and_back_when_it_returns(
    cli, home, project
):
    """All through the hooks: session one states a rule naming a file that exists and one that
    never did; the file is deleted; session two's memorize marks the memory for that file only;
    the file is back; session three's memorize gives the memory back to recall."""
    cli("memory", "consent", "yes")
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    rule = "From now on keep the test settings in config/test.exs, never in config/local.exs."

    def session(name: str, prompt: str) -> dict:
        played = Session(home, name, {}, env)
        played.hook("session-start", source="startup")
        played.prompt(prompt)
        return played.hook("session-end", reason="prompt_input_exit")

    assert "config/test.exs" in session("one", rule)["systemMessage"]
    [(number,)] = _numbers(home)
    (project / "config" / "test.exs").unlink()
    session("two", "Please tidy the README")
    assert _numbers(home, "stale") == [(number,)]  # marked by session two's memorize
    assert stale(cli, project) == {number: ["file config/test.exs"]}
    assert "config/test.exs" not in recalled(home)
    (project / "config" / "test.exs").write_text("import Config\n")
    session("three", "Please tidy the README again")
    assert _numbers(home, "active") == [(number,)] and "config/test.exs" in recalled(home)


def _numbers(home: Path, status: str | None = None) -> list[tuple[int]]:
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn:
        where = " AND status = ?" if status else ""
        return conn.execute(
            f"SELECT number FROM knowledge WHERE scope = 'project'{where}",
            (status,) if status else (),
        ).fetchall()


def test_a_stale_memory_learned_again_is_confirmed_not_copied(cli, home, project):
    """Seeing the lesson again is a confirmation: the stale entry comes back into recall with
    its history (and is not marked again for the same missing file), instead of a second copy
    being added beside it."""
    summary = "Test settings live in `config/test.exs`, not in config/dev.exs"
    named = add(cli, summary)
    (project / "config" / "test.exs").unlink()
    assert stale(cli, project) == {named: ["file config/test.exs"]}
    again = cli("memory", "add", "--type", "pattern", "--summary", summary, "--json").json()
    assert again["action"] == "reinforced" and again["id"] == named
    listed = cli("memory", "list", "--json").json()
    assert [(m["id"], m["seen"]) for m in listed] == [(named, 2)]
    assert stale(cli, project) == {}
    assert "config/test.exs" in recalled(home)
