"""Every document the code cites is in the repository: a reader can follow each reference
(generated files such as ``playbook.md`` are lowercase and not citations)."""

from __future__ import annotations

import re

from .conftest import ROOT

CITED = re.compile(r"\bdocs/[\w./-]+\.md\b|\b[A-Z][A-Z_]+\.md\b|\bDESIGN §")
WHERE = ("src", "docs", "bench")


def _citations() -> list[tuple[str, str]]:
    files = [ROOT / "README.md"] + [
        path
        for folder in WHERE
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".md")
    ]
    return [
        (str(path.relative_to(ROOT)), match.group())
        for path in files
        for match in CITED.finditer(path.read_text(encoding="utf-8"))
    ]


# files lessonloop writes (``skill export`` writes a Claude Code Agent Skill's SKILL.md)
WRITTEN = {"SKILL.md"}


def _in_the_repository(cited: str) -> bool:
    return cited in WRITTEN or any((folder / cited).is_file() for folder in (ROOT, ROOT / "docs"))


def test_the_pattern_finds_citations_and_leaves_generated_files_alone():
    text = "see DESIGN §6, ANCHORS.md and docs/architecture.md; knowledge/x/playbook.md"
    assert CITED.findall(text) == ["DESIGN §", "ANCHORS.md", "docs/architecture.md"]
    assert not _in_the_repository("ANCHORS.md") and _in_the_repository("docs/architecture.md")


def test_every_cited_document_is_in_the_repository():
    missing = sorted({item for item in _citations() if not _in_the_repository(item[1])})
    assert missing == []
