"""Admission: the single path by which anything becomes, changes or leaves knowledge.

Every write to the knowledge tables is in this module (a test enforces it). A proposal is
redacted before anything else (so truncation can never reveal part of a secret), sanitized,
capped, checked against its source's policy, deduplicated (exact normalized match; for a
memory, the same summary; then BM25 within its scope) and written with its provenance and an audit event in one transaction;
the scope's Markdown views are then rendered again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC
from pathlib import Path

from ..errors import UsageError
from ..safety import CONTENT_MAX, HOW_MAX, SUMMARY_MAX, WHY_MAX
from ..safety import clean as safe_clean
from ..store.db import Store
from ..timeutil import utc_now
from . import render
from .entries import AUTHORS, KINDS, MEMORY_KINDS, Entry, fingerprint, get, words

SIMILARITY = 0.8  # token overlap (Jaccard) at which a BM25 candidate counts as the same lesson
CANDIDATES = 5
TAG_MAX, TAGS_MAX = 64, 16
SOURCES = ("coach", "evidence", "user", "session", "mcp", "import")
# A search step succeeds about one time in three by design, so most generations roll back and
# every bullet in context collects harmful counts. A bullet retires only when it does clearly
# worse than that: at least six outcomes and fewer than one advance in five.
RETIRE_MIN_OUTCOMES = 6
RETIRE_MAX_SUCCESS = 0.2


@dataclass
class Proposal:
    kind: str
    scope: str
    summary: str
    content: str = ""
    why: str = ""
    how_to_apply: str = ""
    tags: list[str] = field(default_factory=list)
    author: str = "auto"
    source: str = "coach"
    run_id: str | None = None
    generation_index: int | None = None
    session_id: str | None = None
    detail: str = ""
    approved_by: str | None = None  # the curator's decision, or "consent" for session memories


@dataclass
class Outcome:
    action: str  # added, reinforced, updated, retired, rejected
    entry_id: int | None
    reason: str = ""


def clean(text: str, limit: int) -> str:
    """The stripped text as ``safety.clean`` leaves it (sanitize, redact, cap: the order that
    keeps secrets out), stripped again."""
    return safe_clean((text or "").strip(), limit).strip()


def one_line(text: str) -> str:
    """Whitespace runs, newlines included, as one space: a summary or a tag is one line, so it
    cannot fake a heading or a list item where it is shown (views, the session-start block)."""
    return " ".join(text.split())


def prepare(proposal: Proposal) -> Proposal:
    tags = []
    for tag in proposal.tags[:TAGS_MAX]:
        tag = one_line(clean(str(tag), TAG_MAX))
        if tag and tag not in tags:
            tags.append(tag)
    return replace(
        proposal,
        summary=one_line(clean(proposal.summary, SUMMARY_MAX)),
        content=clean(proposal.content, CONTENT_MAX),
        why=clean(proposal.why, WHY_MAX),
        how_to_apply=clean(proposal.how_to_apply, HOW_MAX),
        tags=tags,
        detail=clean(proposal.detail, CONTENT_MAX),
    )


def _policy_problem(proposal: Proposal) -> str | None:
    """Why the proposal's source may not write it, or None when it may."""
    if proposal.kind not in KINDS:
        return f"unknown kind {proposal.kind!r}"
    if proposal.author not in AUTHORS or proposal.source not in SOURCES:
        return f"unknown author or source ({proposal.author!r}, {proposal.source!r})"
    if not proposal.summary:
        return "empty summary"
    if proposal.source == "coach" and proposal.approved_by not in ("accept", "merge"):
        return "coach edits need the curator's acceptance"
    if proposal.source == "session" and proposal.approved_by != "consent":
        return "session memories need the user's consent"
    if proposal.source == "user" and proposal.author != "user":
        return "user-sourced entries are user-authored"
    return None


def admit(
    store: Store, proposals: list[Proposal], root: Path | None = None, render_views: bool = True
) -> list[Outcome]:
    """Admit proposals in one transaction, then render the Markdown views they touched.

    Inside a caller's transaction the writes join it; pass ``render_views=False`` and render
    after the caller commits.
    """
    outcomes = []
    scopes = set()
    with store.transaction() as conn:
        for raw in proposals:
            proposal = prepare(raw)
            problem = _policy_problem(proposal)
            if problem:  # the audit keeps why, never the refused text itself
                outcomes.append(Outcome("rejected", None, problem))
                _event(conn, None, "reject", f"{proposal.source}: {problem}")
                continue
            outcomes.append(_admit_one(conn, proposal))
            scopes.add(proposal.scope)
    if render_views:
        for scope in scopes:
            render.render_scope(store, scope, root)
    return outcomes


def _admit_one(conn, proposal: Proposal) -> Outcome:
    key = fingerprint(proposal.kind, proposal.summary, proposal.content, proposal.tags)
    row = conn.execute(
        "SELECT id FROM knowledge WHERE scope = ? AND fingerprint = ? AND status = 'active' "
        "ORDER BY id LIMIT 1",
        (proposal.scope, key),
    ).fetchone()
    duplicate = row["id"] if row else None
    reason = "same normalized text"
    if duplicate is None and proposal.kind in MEMORY_KINDS:
        duplicate = _same_lesson(conn, proposal)
        reason = "same lesson"
    if duplicate is None and proposal.kind != "dead_end":
        duplicate = _near_duplicate(conn, proposal)
        reason = "BM25 near-duplicate"
    now = utc_now()
    if (
        duplicate is not None
        and proposal.session_id
        and conn.execute(
            "SELECT 1 FROM knowledge_provenance WHERE knowledge_id = ? AND session_id = ?",
            (duplicate, proposal.session_id),
        ).fetchone()
    ):
        return Outcome("reinforced", duplicate, "already recorded from this session")
    if duplicate is not None:
        conn.execute(
            "UPDATE knowledge SET seen = seen + 1, updated_at = ? WHERE id = ?", (now, duplicate)
        )
        _provenance(conn, duplicate, proposal, now)
        _event(conn, duplicate, "reinforce", f"{proposal.source}: {reason}")
        return Outcome("reinforced", duplicate, reason)
    cursor = conn.execute(
        "INSERT INTO knowledge (kind, scope, summary, content, why, how_to_apply, tags_json, "
        "fingerprint, author, created_at, updated_at, number) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, (SELECT COALESCE(MAX(number), 0) + 1 FROM knowledge WHERE scope = ?))",
        (
            proposal.kind,
            proposal.scope,
            proposal.summary,
            proposal.content,
            proposal.why,
            proposal.how_to_apply,
            json.dumps(proposal.tags),
            key,
            proposal.author,
            now,
            now,
            proposal.scope,
        ),
    )
    entry_id = cursor.lastrowid
    _provenance(conn, entry_id, proposal, now)
    _event(conn, entry_id, "add", f"{proposal.source}: {proposal.kind}")
    return Outcome("added", entry_id)


# An error and its fix make an observation when seen once in a session and a pattern when seen
# again: one lesson either way.
_SAME_LESSON_KINDS = {
    "pattern": ("pattern", "observation"),
    "observation": ("pattern", "observation"),
}


def _same_lesson(conn, proposal: Proposal) -> int | None:
    """An active memory of the same scope and kind (_SAME_LESSON_KINDS) whose summary says the
    same thing (the same words and numbers). A memory's summary is its lesson; its content and
    tags record how it came up (the user's own words, a correction or a stated preference),
    which differ from one session to the next."""
    mine = words(proposal.summary, keep_numbers=True)
    terms = words(proposal.summary)
    if not terms:
        return None
    query = "summary : (" + " AND ".join(f'"{w}"' for w in sorted(set(terms))) + ")"
    rows = conn.execute(  # (the full-text query runs once, as a set: joined, SQLite ran it per row)
        "SELECT id, summary FROM knowledge WHERE id IN (SELECT rowid FROM knowledge_fts "
        "WHERE knowledge_fts MATCH ?) AND scope = ? AND kind IN (?, ?) AND status = 'active' "
        "ORDER BY id LIMIT 50",
        (query, proposal.scope, *_SAME_LESSON_KINDS.get(proposal.kind, (proposal.kind,) * 2)),
    ).fetchall()
    return next(
        (row["id"] for row in rows if words(row["summary"], keep_numbers=True) == mine), None
    )


def _near_duplicate(conn, proposal: Proposal) -> int | None:
    """The most similar active entry of the same scope, kind and tags, found with FTS5 BM25.

    Tags must match exactly: "raising stealth helps" and "raising aggression helps" share most
    of their words but are different lessons, and their tags say so. A memory's numbers count
    as words (see ``fingerprint``).
    """
    terms = set(words(f"{proposal.summary} {proposal.content}"))
    if not terms:
        return None
    numbers = proposal.kind in MEMORY_KINDS
    mine = set(words(f"{proposal.summary} {proposal.content}", keep_numbers=numbers))
    query = " OR ".join(f'"{w}"' for w in sorted(terms))
    rows = conn.execute(
        "SELECT k.id, k.summary, k.content, k.tags_json FROM knowledge_fts f "
        "JOIN knowledge k ON k.id = f.rowid WHERE knowledge_fts MATCH ? AND k.scope = ? "
        "AND k.kind = ? AND k.status = 'active' ORDER BY bm25(knowledge_fts) LIMIT ?",
        (query, proposal.scope, proposal.kind, CANDIDATES),
    ).fetchall()
    for row in rows:
        if sorted(json.loads(row["tags_json"])) != sorted(proposal.tags):
            continue
        theirs = set(words(f"{row['summary']} {row['content']}", keep_numbers=numbers))
        if len(mine & theirs) / len(mine | theirs) >= SIMILARITY:
            return row["id"]
    return None


def _provenance(conn, entry_id: int, proposal: Proposal, now: str) -> None:
    conn.execute(
        "INSERT INTO knowledge_provenance (knowledge_id, source, run_id, generation_index, "
        "session_id, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            entry_id,
            proposal.source,
            proposal.run_id,
            proposal.generation_index,
            proposal.session_id,
            proposal.detail,
            now,
        ),
    )


def _event(conn, entry_id: int | None, action: str, detail: str) -> None:
    conn.execute(
        "INSERT INTO knowledge_events (knowledge_id, action, detail, created_at) "
        "VALUES (?, ?, ?, ?)",
        (entry_id, action, clean(detail, CONTENT_MAX), utc_now()),
    )


def update(
    store: Store,
    entry_id: int,
    proposal: Proposal,
    root: Path | None = None,
    render_views: bool = True,
) -> Outcome:
    """Rewrite an entry of the proposal's scope and kind; automatic edits never overwrite what a
    user wrote."""
    current = get(store, entry_id)
    if current is None or current.status != "active":
        return Outcome("rejected", entry_id, "no such active entry")
    proposal = prepare(proposal)
    problem = _policy_problem(proposal)
    if problem is None and (current.scope, current.kind) != (proposal.scope, proposal.kind):
        problem = f"entry {entry_id} is a {current.kind} of {current.scope}, not a {proposal.kind} of {proposal.scope}"
    if problem is None and current.author == "user" and proposal.author != "user":
        problem = "user-authored entries are never overwritten by automatic ones"
    if problem:
        return Outcome("rejected", entry_id, problem)
    now = utc_now()
    with store.transaction() as conn:
        conn.execute(
            "UPDATE knowledge SET summary = ?, content = ?, why = ?, how_to_apply = ?, "
            "tags_json = ?, fingerprint = ?, updated_at = ? WHERE id = ?",
            (
                proposal.summary,
                proposal.content or current.content,
                proposal.why or current.why,
                proposal.how_to_apply or current.how_to_apply,
                json.dumps(proposal.tags or current.tags),
                fingerprint(
                    current.kind,
                    proposal.summary,
                    proposal.content or current.content,
                    proposal.tags or current.tags,
                ),
                now,
                entry_id,
            ),
        )
        _provenance(conn, entry_id, proposal, now)
        _event(conn, entry_id, "update", f"{proposal.source}")
    if render_views:
        render.render_scope(store, current.scope, root)
    return Outcome("updated", entry_id)


def retire(
    store: Store,
    entry_id: int,
    reason: str,
    *,
    by_user: bool = False,
    scope: str | None = None,
    kind: str | None = None,
    root: Path | None = None,
    render_views: bool = True,
) -> Outcome:
    """Take an entry out of use (it stays for the audit trail). ``scope``/``kind``, when given,
    must match: an automatic caller retires only what it owns."""
    current = get(store, entry_id)
    if current is None or current.status != "active":
        return Outcome("rejected", entry_id, "no such active entry")
    if current.author == "user" and not by_user:
        return Outcome("rejected", entry_id, "only the user retires user-authored entries")
    if (scope and current.scope != scope) or (kind and current.kind != kind):
        return Outcome(
            "rejected", entry_id, f"entry {entry_id} is a {current.kind} of {current.scope}"
        )
    with store.transaction() as conn:
        conn.execute(
            "UPDATE knowledge SET status = 'retired', updated_at = ? WHERE id = ?",
            (utc_now(), entry_id),
        )
        _event(conn, entry_id, "retire", reason)
    if render_views:
        render.render_scope(store, current.scope, root)
    return Outcome("retired", entry_id, reason)


def forget(store: Store, entry_id: int, root: Path | None = None) -> Outcome:
    """Delete an entry and its provenance for good (the user's choice); the audit keeps a note."""
    current = get(store, entry_id)
    if current is None:
        raise UsageError(f"unknown knowledge id {entry_id}")
    with store.transaction() as conn:
        conn.execute("DELETE FROM knowledge_provenance WHERE knowledge_id = ?", (entry_id,))
        conn.execute("DELETE FROM knowledge WHERE id = ?", (entry_id,))
        conn.execute("UPDATE knowledge_events SET detail = '' WHERE knowledge_id = ?", (entry_id,))
        _event(conn, entry_id, "forget", f"{current.kind} in {current.scope}")
    render.render_scope(store, current.scope, root)
    return Outcome("forgotten", entry_id)


def prune(
    store: Store,
    scope: str,
    kinds: tuple[str, ...],
    *,
    older_than_days: float | None,
    keep_at_most: int | None,
    root: Path | None = None,
) -> int:
    """Delete automatic entries of ``scope`` not touched for ``older_than_days`` and the
    lowest-ranked ones beyond ``keep_at_most``; user-authored entries always stay. Returns how
    many were deleted (the audit keeps a note of each)."""
    from datetime import datetime, timedelta

    marks = ",".join("?" * len(kinds))
    rows = store.query(
        f"SELECT * FROM knowledge WHERE scope = ? AND kind IN ({marks}) AND author = 'auto' "
        "ORDER BY (helpful - harmful) DESC, seen DESC, updated_at DESC, id DESC",
        (scope, *kinds),
    )
    doomed = []
    if older_than_days is not None:
        cutoff = (datetime.now(UTC) - timedelta(days=older_than_days)).strftime("%Y-%m-%dT%H:%M:%S")
        doomed += [r["id"] for r in rows if r["updated_at"][:19] <= cutoff]
    if keep_at_most is not None:
        users = store.query_aggregate(
            f"SELECT COUNT(*) FROM knowledge WHERE scope = ? AND kind IN "
            f"({marks}) AND author = 'user'",
            (scope, *kinds),
        )[0]
        room = max(0, keep_at_most - users)
        doomed += [r["id"] for r in rows[room:] if r["id"] not in doomed]
    if not doomed:
        return 0
    with store.transaction() as conn:
        for entry_id in doomed:
            conn.execute("DELETE FROM knowledge_provenance WHERE knowledge_id = ?", (entry_id,))
            conn.execute("DELETE FROM knowledge WHERE id = ?", (entry_id,))
            _event(conn, entry_id, "prune", f"in {scope}")
    render.render_scope(store, scope, root)
    return len(doomed)


STALE_PREFIX = "missing: "


def stale_references(detail: str) -> list[str]:
    """The references a ``stale`` event's detail names (``missing: file a.py; script build``)."""
    if not detail.startswith(STALE_PREFIX):
        return []
    return [part.strip() for part in detail[len(STALE_PREFIX) :].split(";") if part.strip()]


def mark_stale(
    store: Store,
    entry_id: int,
    missing: list[str],
    *,
    root: Path | None = None,
    render_views: bool = True,
) -> Outcome:
    """Take an active memory out of recall because the project no longer has what it names
    (``missing``: ``file config/test.exs``, ``script build``); the event names them. A memory
    the user confirmed after it was last marked for these same references stays active."""
    current = get(store, entry_id)
    if current is None or current.status != "active" or not missing:
        return Outcome("rejected", entry_id, "no such active entry")
    detail = STALE_PREFIX + "; ".join(sorted(set(missing)))
    now = utc_now()
    with store.transaction() as conn:
        last = conn.execute(
            "SELECT detail, created_at FROM knowledge_events WHERE knowledge_id = ? "
            "AND action = 'stale' ORDER BY id DESC LIMIT 1",
            (entry_id,),
        ).fetchone()
        confirmed = conn.execute(
            "SELECT confirmed_at FROM knowledge WHERE id = ?", (entry_id,)
        ).fetchone()["confirmed_at"]
        if (
            last is not None
            and confirmed
            and confirmed > last["created_at"]
            and set(stale_references(clean(detail, CONTENT_MAX)))
            <= set(stale_references(last["detail"]))
        ):
            return Outcome("kept", entry_id, "confirmed since it was marked for these")
        conn.execute(
            "UPDATE knowledge SET status = 'stale', updated_at = ? WHERE id = ? "
            "AND status = 'active'",
            (now, entry_id),
        )
        _event(conn, entry_id, "stale", detail)
    if render_views:
        render.render_scope(store, current.scope, root)
    return Outcome("stale", entry_id, detail)


def mark_fresh(
    store: Store,
    entry_id: int,
    reason: str,
    *,
    root: Path | None = None,
    render_views: bool = True,
) -> Outcome:
    """Give a stale memory back to recall (what it names is there again)."""
    current = get(store, entry_id)
    if current is None or current.status != "stale":
        return Outcome("rejected", entry_id, "no such stale entry")
    with store.transaction() as conn:
        conn.execute(
            "UPDATE knowledge SET status = 'active', updated_at = ? WHERE id = ? "
            "AND status = 'stale'",
            (utc_now(), entry_id),
        )
        _event(conn, entry_id, "fresh", reason)
    if render_views:
        render.render_scope(store, current.scope, root)
    return Outcome("fresh", entry_id, reason)


def record_evidence(
    store: Store,
    entry_ids: list[int],
    helpful: bool,
    *,
    run_id: str,
    generation_index: int,
    root: Path | None = None,
    render_views: bool = True,
) -> list[int]:
    """Count a generation's outcome for the bullets in its context; return the ids retired.

    A bullet that keeps hurting (see ``RETIRE_MIN_OUTCOMES``) becomes a dead end.
    """
    if not entry_ids:
        return []
    column = "helpful" if helpful else "harmful"
    now = utc_now()
    retired: list[int] = []
    scopes = set()
    marks = ",".join("?" * len(entry_ids))
    detail = f"run {run_id} generation {generation_index}"
    with store.transaction() as conn:
        rows = conn.execute(
            f"SELECT id FROM knowledge WHERE id IN ({marks}) AND status = 'active' "
            "AND kind = 'bullet'",
            entry_ids,
        ).fetchall()
        ids = [row["id"] for row in rows]
        marks = ",".join("?" * len(ids))
        conn.execute(
            f"UPDATE knowledge SET {column} = {column} + 1, updated_at = ? WHERE id IN ({marks})",
            (now, *ids),
        )
        rows = conn.execute(f"SELECT * FROM knowledge WHERE id IN ({marks})", ids).fetchall()
        conn.executemany(
            "INSERT INTO knowledge_events (knowledge_id, action, detail, created_at) VALUES (?, ?, ?, ?)",
            [(row["id"], column, detail, now) for row in rows],
        )
        for row in rows:
            scopes.add(row["scope"])
            entry = Entry.from_row(row)
            outcomes = entry.helpful + entry.harmful
            if (
                entry.author == "auto"
                and outcomes >= RETIRE_MIN_OUTCOMES
                and entry.helpful < RETIRE_MAX_SUCCESS * outcomes
            ):
                summary = clean(f"Retired lesson: {entry.summary}", SUMMARY_MAX)
                conn.execute(
                    "UPDATE knowledge SET kind = 'dead_end', summary = ?, fingerprint = ?, "
                    "updated_at = ? WHERE id = ?",
                    (
                        summary,
                        fingerprint("dead_end", summary, entry.content, entry.tags),
                        now,
                        entry.id,
                    ),
                )
                _event(
                    conn, entry.id, "retire", f"harmful {entry.harmful} vs helpful {entry.helpful}"
                )
                retired.append(entry.id)
    if render_views:
        for scope in scopes:
            render.render_scope(store, scope, root)
    return retired
