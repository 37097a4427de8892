"""What a mission teaches goes through admission into the project's scope: the change that
made the verifier pass (redacted), the dead ends of a failed mission; a repeat reinforces the
lesson rather than adding one, and a later mission is shown it."""

from __future__ import annotations

import shutil
import sqlite3

from .conftest import FIX, VERIFIER, completions
from .test_mission import SECRET


def _lessons(home) -> list[tuple]:
    with sqlite3.connect(home / "lessonloop.db") as db:
        return db.execute(
            "SELECT kind, summary, content, seen, tags_json FROM knowledge "
            "WHERE scope = 'project' AND status = 'active' ORDER BY id"
        ).fetchall()


def _mission(cli, repo, run_id, *extra):
    return cli(
        "mission", "fix calc.total", "--verifier", VERIFIER, "--workspace", repo,
        "--run-id", run_id, "--json", *extra,
    )  # fmt: skip


def test_a_success_becomes_a_pattern_once_and_the_next_mission_is_shown_it(
    cli, home, repo, model, tmp_path
):
    model(lambda request: FIX)
    assert _mission(cli, repo, "l1").code == 0
    (lesson,) = _lessons(home)
    kind, summary, content, seen, tags = lesson
    assert kind == "pattern" and "`python3 test_calc.py`" in summary and "calc.py" in summary
    assert "AssertionError" in summary  # the failure it started from
    assert (
        "-    return sum(range(1, n))" in content and "+    return sum(range(1, n + 1))" in content
    )
    assert '"mission"' in tags
    again = tmp_path / "again"
    shutil.copytree(repo, again)
    server = model(lambda request: FIX)
    assert _mission(cli, again, "l2").code == 0
    assert [row[3] for row in _lessons(home)] == [2]  # the same lesson, reinforced
    prompt = completions(server)[0].text
    assert "Lessons from earlier missions in this project:" in prompt
    assert "(worked before)" in prompt and "+    return sum(range(1, n + 1))" in prompt


def test_a_failure_leaves_its_dead_ends_and_a_secret_never_reaches_knowledge(
    cli, home, repo, model
):
    leaky = (
        "FILE: calc.py\n```\ndef total(n):\n"
        f'    token = "{SECRET}"\n    return sum(range(2, n))\n```\n'
    )
    model(lambda request: leaky)
    result = _mission(cli, repo, "l3", "--max-steps", "1")
    assert result.json()["status"] == "failed"
    (lesson,) = _lessons(home)
    kind, summary, content, _, tags = lesson
    assert kind == "observation" and "did not make `python3 test_calc.py` pass" in summary
    assert "range(2, n)" in content and "[REDACTED" in content
    assert SECRET.encode() not in (home / "lessonloop.db").read_bytes()
    listed = cli("memory", "list")  # a memory like any other: listed, searchable
    assert "did not make `python3 test_calc.py` pass" in listed.out, listed.out
    again = cli("mission", "--run-id", "l3", "--json")  # asked again, nothing new done
    assert again.json()["status"] == "failed"
    assert [row[3] for row in _lessons(home)] == [1]  # not reinforced by its own repeat
    # a succeeded mission whose change holds the secret: redacted by the gate too
    fix = FIX.replace(
        "+    return sum(range(1, n + 1))", f"+    return sum(range(1, n + 1))  # {SECRET}"
    )
    model(lambda request: fix)
    assert _mission(cli, repo, "l4").json()["status"] == "succeeded"
    pattern = [row for row in _lessons(home) if row[0] == "pattern"][0]
    assert "[REDACTED" in pattern[2] and SECRET not in pattern[2]
    assert SECRET.encode() not in (home / "lessonloop.db").read_bytes()
