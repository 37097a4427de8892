"""Markdown views of a scope's knowledge, rendered again after every change.

``knowledge/<scope>/playbook.md`` (bullets ranked by evidence, with their counts),
``hints.md``, ``dead_ends.md`` and, for session memories, ``knowledge.md`` (most useful first)
and ``journal.md`` (newest first: when each was learned, and why).
"""

from __future__ import annotations

from pathlib import Path

from .. import paths
from ..files import atomic_write
from ..store.db import Store
from .entries import MEMORY_KINDS, Entry, active_counts, active_top, ranked, scope_dirname

VIEW_MAX = 500  # entries listed per view; the rest are counted

VIEWS = {
    "playbook.md": ("Playbook", ("bullet",)),
    "hints.md": ("Hints", ("hint",)),
    "dead_ends.md": ("Dead ends", ("dead_end",)),
    "knowledge.md": ("Knowledge", MEMORY_KINDS),
    "journal.md": ("Journal", MEMORY_KINDS),
}
NEWEST_FIRST = "journal.md"
MEMORY_VIEWS = ("knowledge.md", "journal.md")  # written once a scope holds memories


def _shown_id(entry: Entry) -> int:
    """A memory by the id users give `memory forget` (its number in its scope); a playbook
    bullet by the id the coach's edits name."""
    return entry.number if entry.scope in ("project", "user") else entry.id


def _line(entry: Entry) -> str:
    counts = f"+{entry.helpful}/-{entry.harmful}, seen {entry.seen}"
    tags = f" `{' '.join(entry.tags)}`" if entry.tags else ""
    body = f"- [{_shown_id(entry)}] {entry.summary} ({counts}){tags}"
    if entry.content and entry.content != entry.summary:
        body += "\n  " + entry.content.replace("\n", "\n  ")
    return body


def _journal_line(entry: Entry) -> str:
    body = f"- {entry.created_at[:10]} [{_shown_id(entry)}] {entry.kind}: {entry.summary}"
    if entry.why:
        body += "\n  why: " + entry.why.replace("\n", "\n  ")
    return body


def knowledge_dir(scope: str, root: Path | None = None) -> Path:
    return (root or paths.home()) / "knowledge" / scope_dirname(scope)


def view_texts(
    scope: str, entries: list[Entry], root: Path | None = None, totals: dict[str, int] | None = None
) -> dict[Path, str]:
    """The text of every view of ``scope`` (empty views say so) from its active ``entries``,
    keyed by its path; a view lists its VIEW_MAX most useful entries and says how many more
    there are (``totals``: entries per view when ``entries`` holds only the top ones)."""
    folder = knowledge_dir(scope, root)
    texts = {}
    for filename, (title, kinds) in VIEWS.items():
        chosen = [e for e in entries if e.kind in kinds]
        total = (totals or {}).get(filename, len(chosen))
        path = folder / filename
        if not chosen and filename in MEMORY_VIEWS and not path.exists():
            continue
        lines = [f"# {title} — {scope}", ""]
        if filename == NEWEST_FIRST:
            lines += [_journal_line(e) for e in sorted(chosen, key=lambda e: -e.id)[:VIEW_MAX]]
        else:
            lines += [_line(e) for e in ranked(chosen)[:VIEW_MAX]]
        if not chosen:
            lines.append("(none yet)")
        if total > VIEW_MAX:
            lines += ["", f"…and {total - VIEW_MAX} more (`lessonloop memory list`)."]
        texts[path] = "\n".join(lines) + "\n"
    return texts


def write_views(texts: dict[Path, str]) -> None:
    for path, text in texts.items():
        atomic_write(path, text)


def render_scope(store: Store, scope: str, root: Path | None = None) -> Path:
    """Render every view of ``scope`` now and return its folder. Only what each view lists is
    read, so a scope of 100,000 memories renders as fast as one of a hundred."""
    entries: dict[int, Entry] = {}  # (by id: an entry in two views is rendered once)
    totals: dict[str, int] = {}
    counts = active_counts(store, scope)
    for filename, (_, kinds) in VIEWS.items():
        totals[filename] = sum(counts.get(kind, 0) for kind in kinds)
        if totals[filename]:  # an empty view's query could scan the scope's other kinds
            order = "newest" if filename == NEWEST_FIRST else "useful"
            entries.update((e.id, e) for e in active_top(store, scope, kinds, VIEW_MAX, order))
    write_views(view_texts(scope, list(entries.values()), root, totals))
    return knowledge_dir(scope, root)
