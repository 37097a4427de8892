"""`skill export SCOPE` through the real CLI: a Claude Code Agent Skill whose frontmatter keeps
the official rules (checked here on their own, with a YAML parser) and whose content is the
scope's strongest knowledge, ranked by evidence."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import yaml

from lessonloop.app.skills import check_frontmatter, skill_name
from lessonloop.knowledge import admission
from lessonloop.knowledge.admission import Proposal
from lessonloop.store import open_store

GITHUB_TOKEN = "ghp_" + "R8kq2Lm9Xw4Tz7Vb1Nc6Hd3Jf5Gs0Pa8Yu2E"
SCOPE = "scenario:grid_ctf"


def official_problems(skill: Path) -> list[str]:
    """The Agent Skills rules for SKILL.md, as Anthropic's docs and agentskills.io state them:
    YAML frontmatter between --- lines with ``name`` (1-64 characters: lowercase letters,
    digits and hyphens, no leading, trailing or doubled hyphen, the folder's name, neither
    "anthropic" nor "claude", no XML tags) and ``description`` (non-empty, at most 1024
    characters, no XML tags, saying what the skill does and when to use it); a body under 500
    lines."""
    text = skill.read_text(encoding="utf-8")
    match = re.match(r"\A---\n(.*?)\n---\n", text, re.S)
    if match is None:
        return ["no frontmatter"]
    front = yaml.safe_load(match.group(1))
    problems = []
    name, description = front.get("name"), front.get("description")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
        problems.append(f"name {name!r}")
    elif len(name) > 64 or "anthropic" in name or "claude" in name:
        problems.append(f"name {name!r}")
    elif name != skill.parent.name:
        problems.append("name is not the folder's")
    if not isinstance(description, str) or not 1 <= len(description.strip()) <= 1024:
        problems.append("description length")
    elif re.search(r"<[^>]+>", description) or "Use when" not in description:
        problems.append(f"description {description!r}")
    if len(text.splitlines()) >= 500:
        problems.append("over 500 lines")
    return problems


@pytest.fixture
def playbook(home):
    """A scenario's knowledge with evidence: the order a skill must show it in is C, A, B."""

    def bullet(summary):
        return Proposal(kind="bullet", scope=SCOPE, summary=summary, approved_by="accept",
                        run_id="r1", generation_index=1)  # fmt: skip

    with open_store(home) as store:
        admission.admit(
            store,
            [
                bullet("A: keep aggression near 0.5"),
                bullet("B: retreat early when outnumbered"),
                bullet(f"C: scout the flanks first {GITHUB_TOKEN}"),
                Proposal(
                    kind="hint",
                    scope=SCOPE,
                    summary="Try a defense radius of 4",
                    approved_by="accept",
                ),  # fmt: skip
                Proposal(
                    kind="dead_end",
                    scope=SCOPE,
                    summary="All-in rush",
                    source="evidence",
                    content='{"aggression": 1.0}',
                ),  # fmt: skip
            ],
            home,
        )
    with closing(sqlite3.connect(home / "lessonloop.db")) as conn, conn:
        for summary, helpful, harmful in (("A:%", 3, 1), ("B:%", 0, 4), ("C:%", 6, 0)):
            conn.execute(
                "UPDATE knowledge SET helpful = ?, harmful = ? WHERE summary LIKE ?",
                (helpful, harmful, summary),
            )
        conn.execute("UPDATE knowledge SET content = ? WHERE kind = 'hint'", (GITHUB_TOKEN,))
    return home


def test_a_scenario_skill_is_valid_and_ranked_by_evidence(cli, playbook, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    written = cli("skill", "export", "grid_ctf", "--json")
    assert written.code == 0, written.err
    value = written.json()
    skill = tmp_path / ".claude" / "skills" / "lessonloop-grid-ctf" / "SKILL.md"
    assert value["path"] == str(skill) and value["name"] == "lessonloop-grid-ctf"
    assert official_problems(skill) == []
    text = skill.read_text()
    bullets = [line for line in text.splitlines() if line.startswith("- ") and ": " in line[:5]]
    assert [line[2] for line in bullets] == ["C", "A", "B"]  # evidence 6, 2, -4
    assert "[+6/-0, seen 1]" in bullets[0]
    assert "## Hints" in text and "Try a defense radius of 4" in text
    assert '- All-in rush — tried: {"aggression": 1.0} [' in text
    assert GITHUB_TOKEN not in text and "R8kq2Lm9" not in text
    assert value["sections"] == {"Playbook": 3, "Hints": 1, "Dead ends": 1}


def test_a_memory_skill_goes_where_it_is_told(cli, home, tmp_path):
    cli("memory", "add", "--type", "preference", "--summary", "Use pnpm, never npm",
        "--why", "the lockfile is pnpm's")  # fmt: skip
    cli("memory", "add", "--type", "pattern", "--summary", "Run make db before the tests",
        "--how", "when the tests say: no such table")  # fmt: skip
    out = tmp_path / "skills"
    written = cli("skill", "export", "project", "-o", out, "--json").json()
    skill = out / "lessonloop-project-memories" / "SKILL.md"
    assert written["path"] == str(skill) and official_problems(skill) == []
    text = skill.read_text()
    assert "Use pnpm, never npm (why: the lockfile is pnpm's)" in text
    assert "Run make db before the tests — when the tests say: no such table" in text
    human = cli("skill", "export", "project", "-o", out)
    assert human.out.startswith("wrote skill lessonloop-project-memories to ")


def test_nothing_to_export_and_bad_scopes_are_one_line(cli, home, tmp_path):
    empty = cli("skill", "export", "grid_ctf", "-o", tmp_path, "--json")
    assert empty.code == 1 and "no active knowledge" in empty.error()["error"]
    every = cli("skill", "export", "all", "-o", tmp_path, "--json")
    assert every.code == 1 and "one scope" in every.error()["error"]
    bad = cli("skill", "export", "a/b", "-o", tmp_path, "--json")
    assert bad.code == 2 and bad.error()["error"].startswith("'a/b' is not a scope")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("scope", "name"),
    [
        ("scenario:grid_ctf", "lessonloop-grid-ctf"),
        ("task:Fix the Bug!", "lessonloop-task-fix-the-bug"),
        ("project", "lessonloop-project-memories"),
        ("user", "lessonloop-user-memories"),
        ("task:claude--anthropic helper", "lessonloop-task-helper"),
        ("task:" + "x" * 200, "lessonloop-task-" + "x" * 48),
    ],
)
def test_skill_names_keep_the_rules_whatever_the_scope(scope, name):
    assert skill_name(scope) == name
    assert check_frontmatter(name, "Lessons. Use when asked.", name) == []


def test_the_checker_knows_the_rules():
    assert check_frontmatter("Bad_Name", "x. Use when y.", "Bad_Name")
    assert check_frontmatter("my-claude-skill", "x. Use when y.", "my-claude-skill")
    assert check_frontmatter("ok", "x" * 1025 + " Use when", "ok")
    assert check_frontmatter("ok", "<b>x</b>. Use when y.", "ok")
    assert check_frontmatter("ok", "x. Use when y.", "other-folder")
