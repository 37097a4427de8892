"""The Markdown views: knowledge.md ranks a scope's memories, journal.md lists them newest first."""

from __future__ import annotations

import pytest

from lessonloop.knowledge import admission, render
from lessonloop.knowledge.admission import Proposal
from lessonloop.store import open_store


@pytest.fixture
def store(home):
    with open_store() as s:
        yield s


def memory(summary, kind="preference", why="", session="s1"):
    return Proposal(
        kind=kind,
        scope="project",
        summary=summary,
        why=why,
        source="session",
        session_id=session,
        approved_by="consent",
    )


def views(home):
    folder = home / "knowledge" / "project"
    return (folder / "knowledge.md").read_text(), (folder / "journal.md").read_text()


def test_the_journal_lists_memories_newest_first_with_date_and_why(store, home):
    first, second = (
        o.entry_id
        for o in admission.admit(
            store,
            [
                memory("Use pnpm, not npm", why='user said "we use pnpm here"'),
                memory("Run the tests with -x", kind="decision"),
            ],
        )
    )
    admission.admit(store, [memory("use pnpm not npm", session="s2")])  # reinforces the first
    knowledge, journal = views(home)
    assert knowledge.index(f"[{first}]") < knowledge.index(f"[{second}]")
    assert journal.startswith("# Journal — project\n")
    assert journal.index(f"[{second}] decision: Run the tests with -x") < journal.index(
        f"[{first}] preference: Use pnpm, not npm"
    )
    day = store.query_one("SELECT created_at FROM knowledge WHERE id = ?", (first,))[0][:10]
    assert (
        f'- {day} [{first}] preference: Use pnpm, not npm\n  why: user said "we use pnpm here"'
        in journal
    )


def test_a_forgotten_memory_leaves_the_journal_too(store, home):
    [o] = admission.admit(store, [memory("Prefer tabs in Makefiles")])
    admission.forget(store, o.entry_id)
    knowledge, journal = views(home)
    assert "tabs" not in journal and "tabs" not in knowledge
    assert journal.endswith("(none yet)\n")


def test_the_journal_keeps_the_newest_and_counts_the_rest(store, home, monkeypatch):
    monkeypatch.setattr(render, "VIEW_MAX", 3)
    ids = [
        admission.admit(store, [memory(f"Lesson number {word}")])[0].entry_id
        for word in ("alpha", "bravo", "charlie", "delta", "echo")
    ]
    admission.admit(store, [memory("lesson number alpha", session=f"s{n}") for n in (2, 3, 4)])
    # (three later sessions: the oldest becomes the most useful)
    knowledge, journal = views(home)
    assert [f"[{i}]" in journal for i in ids] == [False, False, True, True, True]
    assert f"[{ids[0]}]" in knowledge and "…and 2 more" in journal and "…and 2 more" in knowledge


def test_game_scopes_get_no_memory_views(store, home):
    admission.admit(
        store,
        [
            Proposal(
                kind="bullet",
                scope="scenario:grid_ctf",
                summary="Guard the flag",
                approved_by="accept",
            )
        ],
    )
    folder = home / "knowledge" / "grid_ctf"
    assert (folder / "playbook.md").exists()
    assert not (folder / "journal.md").exists() and not (folder / "knowledge.md").exists()
