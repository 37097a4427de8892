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
    # added, reinforced, updated, retired, rejected; the user's verbs: edited, unchanged,
    # duplicate (entry_id: the one repeated), superseded, pinned, unpinned, approved,
    # rejected_by_user
    action: str
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
    store: Store,
    proposals: list[Proposal],
    root: Path | None = None,
    render_views: bool = True,
    *,
    hold: bool = False,
) -> list[Outcome]:
    """Admit proposals in one transaction, then render the Markdown views they touched.

    Inside a caller's transaction the writes join it; pass ``render_views=False`` and render
    after the caller commits. ``hold`` (review mode, ``--review``): new entries are written
    ``pending``, served only once approved (``review``); a repeat of a pending entry
    reinforces it rather than adding a second one.
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
            outcomes.append(_admit_one(conn, proposal, hold))
            scopes.add(proposal.scope)
    if render_views:
        for scope in scopes:
            render.render_scope(store, scope, root)
    return outcomes


def _admit_one(conn, proposal: Proposal, hold: bool = False) -> Outcome:
    key = fingerprint(proposal.kind, proposal.summary, proposal.content, proposal.tags)
    duplicate, reason = _duplicate(conn, proposal, key, HELD if hold else SERVED)
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
    if duplicate is not None:  # seen again: a confirmation, which brings a stale one back
        conn.execute(
            "UPDATE knowledge SET seen = seen + 1, updated_at = ?, confirmed_at = ?, status = "
            "CASE status WHEN 'stale' THEN 'active' ELSE status END WHERE id = ?",
            (now, now, duplicate),
        )
        _provenance(conn, duplicate, proposal, now)
        _event(conn, duplicate, "reinforce", f"{proposal.source}: {reason}")
        return Outcome("reinforced", duplicate, reason)
    cursor = conn.execute(
        "INSERT INTO knowledge (kind, scope, summary, content, why, how_to_apply, tags_json, "
        "fingerprint, author, created_at, updated_at, status, number) VALUES (?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, (SELECT COALESCE(MAX(number), 0) + 1 FROM knowledge WHERE scope = ?))",
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
            "pending" if hold else "active",
            proposal.scope,
        ),
    )
    entry_id = cursor.lastrowid
    _provenance(conn, entry_id, proposal, now)
    _event(
        conn,
        entry_id,
        "add",
        f"{proposal.source}: {proposal.kind}" + (" (held for review)" if hold else ""),
    )
    return Outcome("added", entry_id)


# the statuses a new text is deduplicated against: a stale entry learned again is confirmed
SERVED, HELD = ("active", "stale"), ("active", "stale", "pending")


def _duplicate(
    conn, proposal: Proposal, key: str, statuses: tuple[str, ...] = SERVED, exclude: int = 0
) -> tuple[int | None, str]:
    """The entry of ``statuses`` (other than ``exclude``) that ``proposal`` repeats, and why:
    the same normalized text, for a memory the same lesson, else a BM25 near-duplicate."""
    marks = ",".join("?" * len(statuses))
    row = conn.execute(
        f"SELECT id FROM knowledge WHERE scope = ? AND fingerprint = ? AND status IN ({marks}) "
        "AND id <> ? ORDER BY id LIMIT 1",
        (proposal.scope, key, *statuses, exclude),
    ).fetchone()
    if row:
        return row["id"], "same normalized text"
    if proposal.kind in MEMORY_KINDS:
        found = _same_lesson(conn, proposal, statuses, exclude)
        if found is not None:
            return found, "same lesson"
    if proposal.kind != "dead_end":
        found = _near_duplicate(conn, proposal, statuses, exclude)
        if found is not None:
            return found, "BM25 near-duplicate"
    return None, ""


# An error and its fix make an observation when seen once in a session and a pattern when seen
# again: one lesson either way.
_SAME_LESSON_KINDS = {
    "pattern": ("pattern", "observation"),
    "observation": ("pattern", "observation"),
}


def _same_lesson(
    conn, proposal: Proposal, statuses: tuple[str, ...] = SERVED, exclude: int = 0
) -> int | None:
    """An active memory of the same scope and kind (_SAME_LESSON_KINDS) whose summary says the
    same thing (the same words and numbers). A memory's summary is its lesson; its content and
    tags record how it came up (the user's own words, a correction or a stated preference),
    which differ from one session to the next."""
    mine = words(proposal.summary, keep_numbers=True)
    terms = words(proposal.summary)
    if not terms:
        return None
    query = "summary : (" + " AND ".join(f'"{w}"' for w in sorted(set(terms))) + ")"
    marks = ",".join("?" * len(statuses))
    rows = conn.execute(  # (the full-text query runs once, as a set: joined, SQLite ran it per row)
        "SELECT id, summary FROM knowledge WHERE id IN (SELECT rowid FROM knowledge_fts "
        "WHERE knowledge_fts MATCH ?) AND scope = ? AND kind IN (?, ?) AND status IN "
        f"({marks}) AND id <> ? ORDER BY id LIMIT 50",
        (
            query,
            proposal.scope,
            *_SAME_LESSON_KINDS.get(proposal.kind, (proposal.kind,) * 2),
            *statuses,
            exclude,
        ),
    ).fetchall()
    return next(
        (row["id"] for row in rows if words(row["summary"], keep_numbers=True) == mine), None
    )


def _near_duplicate(
    conn, proposal: Proposal, statuses: tuple[str, ...] = SERVED, exclude: int = 0
) -> int | None:
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
    marks = ",".join("?" * len(statuses))
    rows = conn.execute(
        "SELECT k.id, k.summary, k.content, k.tags_json FROM knowledge_fts f "
        "JOIN knowledge k ON k.id = f.rowid WHERE knowledge_fts MATCH ? AND k.scope = ? "
        f"AND k.kind = ? AND k.status IN ({marks}) AND k.id <> ? "
        "ORDER BY bm25(knowledge_fts) LIMIT ?",
        (query, proposal.scope, proposal.kind, *statuses, exclude, CANDIDATES),
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
    if (current.author == "user" or current.pinned) and not by_user:
        return Outcome(
            "rejected", entry_id, "only the user retires user-authored or pinned entries"
        )
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


EDITABLE = ("active", "pending", "stale")  # what a user may correct; the rest is history
# entries out of use that the user may approve back into use (or reject): held for review,
# stale, or retired (a memory that misled, a bullet turned dead end: the user's call)
REVIEWED = ("pending", "stale", "retired")


def edit(
    store: Store,
    entry_id: int,
    *,
    summary: str | None = None,
    content: str | None = None,
    root: Path | None = None,
) -> Outcome:
    """The user's correction of an entry's summary and/or content: redacted, sanitized and
    capped like any text, refused when it would repeat another entry of the scope (the
    outcome's ``entry_id`` names that one). The entry is the user's afterwards (never
    overwritten automatically) and confirmed now; the audit event keeps old → new."""
    current = get(store, entry_id)
    if current is None or current.status not in EDITABLE:
        return Outcome("rejected", entry_id, "no such entry to edit (active, pending or stale)")
    proposal = prepare(
        Proposal(
            kind=current.kind,
            scope=current.scope,
            summary=current.summary if summary is None else summary,
            content=current.content if content is None else content,
            tags=current.tags,
            author="user",
            source="user",
        )
    )
    if not proposal.summary:
        return Outcome("rejected", entry_id, "empty summary")
    changes = [
        f"{name}: {old!r} -> {new!r}"
        for name, old, new in (
            ("summary", current.summary, proposal.summary),
            ("content", current.content, proposal.content),
        )
        if old != new
    ]
    if not changes:
        return Outcome("unchanged", entry_id, "the same text as before")
    key = fingerprint(current.kind, proposal.summary, proposal.content, current.tags)
    now = utc_now()
    with store.transaction() as conn:
        duplicate, reason = _duplicate(conn, proposal, key, HELD, exclude=entry_id)
        if duplicate is not None:
            return Outcome("duplicate", duplicate, reason)
        conn.execute(
            "UPDATE knowledge SET summary = ?, content = ?, fingerprint = ?, author = 'user', "
            "confirmed_at = ?, updated_at = ? WHERE id = ?",
            (proposal.summary, proposal.content, key, now, now, entry_id),
        )
        _provenance(conn, entry_id, proposal, now)
        _event(conn, entry_id, "edit", "; ".join(changes))
    render.render_scope(store, current.scope, root)
    return Outcome("edited", entry_id)


def supersede(store: Store, old_id: int, new_id: int, root: Path | None = None) -> Outcome:
    """Replace ``old_id`` by ``new_id`` (the user's choice): the old entry leaves everything
    that serves active entries, keeps its history and points to the new one; both are in the
    same scope and the new one is active."""
    old, new = get(store, old_id), get(store, new_id)
    problem = (
        "an entry cannot supersede itself"
        if old_id == new_id
        else "no such entry to supersede"
        if old is None or old.status not in EDITABLE
        else "the replacement is not an active entry"
        if new is None or new.status != "active"
        else f"the entries are in different scopes ({old.scope}, {new.scope})"
        if old.scope != new.scope
        else None
    )
    if problem or old is None or new is None:
        return Outcome("rejected", old_id, problem or "")
    now = utc_now()
    with store.transaction() as conn:
        conn.execute(
            "UPDATE knowledge SET status = 'superseded', superseded_by = ?, updated_at = ? "
            "WHERE id = ?",
            (new_id, now, old_id),
        )
        conn.execute(
            "UPDATE knowledge SET confirmed_at = ?, updated_at = ? WHERE id = ?",
            (now, now, new_id),
        )
        _event(conn, old_id, "supersede", f"by {new.number}: {new.summary}")
        _event(conn, new_id, "supersedes", f"{old.number}: {old.summary}")
    render.render_scope(store, old.scope, root)
    return Outcome("superseded", old_id, f"by {new_id}")


def pin(store: Store, entry_id: int, pinned: bool = True, root: Path | None = None) -> Outcome:
    """Pin an entry (first in recall; never pruned nor retired automatically) or unpin it."""
    current = get(store, entry_id)
    if current is None:
        return Outcome("rejected", entry_id, "no such entry")
    if current.pinned == pinned:
        return Outcome("unchanged", entry_id, "already pinned" if pinned else "not pinned")
    with store.transaction() as conn:
        conn.execute(
            "UPDATE knowledge SET pinned = ?, updated_at = ? WHERE id = ?",
            (int(pinned), utc_now(), entry_id),
        )
        _event(conn, entry_id, "pin" if pinned else "unpin", "user")
    render.render_scope(store, current.scope, root)
    return Outcome("pinned" if pinned else "unpinned", entry_id)


def review(
    store: Store, entry_ids: list[int], approve: bool, root: Path | None = None
) -> list[Outcome]:
    """The user's verdict on held entries (``pending``, ``stale`` ones to confirm, ``retired``
    ones to bring back):
    approved ones become active and confirmed now, rejected ones ``rejected`` (kept for the
    audit). Entries not held are left as they are (outcome ``rejected``)."""
    now = utc_now()
    outcomes = []
    scopes = set()
    with store.transaction() as conn:
        for entry_id in entry_ids:
            row = conn.execute(
                "SELECT scope, status FROM knowledge WHERE id = ?", (entry_id,)
            ).fetchone()
            if row is None or row["status"] not in REVIEWED:
                status = row["status"] if row else "missing"
                outcomes.append(Outcome("rejected", entry_id, f"not held for review ({status})"))
                continue
            if approve:
                conn.execute(
                    "UPDATE knowledge SET status = 'active', confirmed_at = ?, updated_at = ? "
                    "WHERE id = ?",
                    (now, now, entry_id),
                )
            else:
                conn.execute(
                    "UPDATE knowledge SET status = 'rejected', updated_at = ? WHERE id = ?",
                    (now, entry_id),
                )
            _event(conn, entry_id, "approve" if approve else "reject", f"user: was {row['status']}")
            outcomes.append(Outcome("approved" if approve else "rejected_by_user", entry_id))
            scopes.add(row["scope"])
    for scope in scopes:
        render.render_scope(store, scope, root)
    return outcomes


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
    lowest-ranked ones beyond ``keep_at_most``; user-authored and pinned entries always stay.
    Returns how many were deleted (the audit keeps a note of each)."""
    from datetime import datetime, timedelta

    marks = ",".join("?" * len(kinds))
    rows = store.query(
        f"SELECT * FROM knowledge WHERE scope = ? AND kind IN ({marks}) AND author = 'auto' "
        "AND NOT pinned ORDER BY (helpful - harmful) DESC, seen DESC, updated_at DESC, id DESC",
        (scope, *kinds),
    )
    doomed = []
    if older_than_days is not None:
        cutoff = (datetime.now(UTC) - timedelta(days=older_than_days)).strftime("%Y-%m-%dT%H:%M:%S")
        doomed += [r["id"] for r in rows if r["updated_at"][:19] <= cutoff]
    if keep_at_most is not None:
        users = store.query_aggregate(
            f"SELECT COUNT(*) FROM knowledge WHERE scope = ? AND kind IN "
            f"({marks}) AND (author = 'user' OR pinned)",
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
                and not entry.pinned
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


# Evidence for memories (issue 22): what the sessions they were given to, and their users, say.
VERDICTS = ("helped", "misled")  # counted in ``helpful`` and ``harmful``
# A memory retires when it mostly misleads: misled at least this often and more often than it
# helped (see ``retire_misleading``).
RETIRE_MIN_MISLED = 2


@dataclass
class SessionUse:
    """A memory given to a session: its row id, when it was last given, and the session's
    verdict on it (None when the session gave no evidence) with the reason."""

    entry_id: int
    at: str
    verdict: str | None = None
    reason: str = ""


def session_mark(session_id: str) -> str:
    """How the events of a session's evidence start (``session <id>:``): what makes memorizing
    a session again count nothing twice."""
    return one_line(clean(f"session {session_id}:", 300))


def record_session_evidence(
    store: Store, session_id: str, uses: list[SessionUse], root: Path | None = None
) -> list[int]:
    """Count each memory given to ``session_id`` once (``injected`` + 1, ``last_used_at``) and
    record the session's verdict on it once (``helpful`` or ``harmful`` + 1, ``confirmed_at``
    when it helped), each as an event that names the session, in one transaction: memorizing the
    session again (a compaction, then its end) counts nothing twice, yet a verdict the first
    pass could not give is given by the next. Returns the ids newly judged misled."""
    mark = session_mark(session_id)
    misled: list[int] = []
    scopes = set()
    with store.transaction() as conn:
        for use in uses:
            row = conn.execute(
                "SELECT scope, kind FROM knowledge WHERE id = ?", (use.entry_id,)
            ).fetchone()
            if row is None or row["kind"] not in MEMORY_KINDS:
                continue  # forgotten since it was given
            done = {
                event["action"]
                for event in conn.execute(
                    "SELECT action FROM knowledge_events WHERE knowledge_id = ? AND action IN "
                    "('used', 'helped', 'misled') AND substr(detail, 1, ?) = ?",
                    (use.entry_id, len(mark), mark),
                )
            }
            now = utc_now()
            if "used" not in done:
                conn.execute(
                    "UPDATE knowledge SET injected = injected + 1, last_used_at = "
                    "max(COALESCE(last_used_at, ''), ?), updated_at = ? WHERE id = ?",
                    (use.at, now, use.entry_id),
                )
                _event(conn, use.entry_id, "used", f"{mark} given at {use.at}")
            if use.verdict in VERDICTS and not done & set(VERDICTS):
                _verdict(conn, use.entry_id, use.verdict, f"{mark} {use.reason}", now)
                scopes.add(row["scope"])
                if use.verdict == "misled":
                    misled.append(use.entry_id)
    for scope in scopes:  # (the views show evidence, not uses)
        render.render_scope(store, scope, root)
    return misled


def _verdict(conn, entry_id: int, verdict: str, detail: str, now: str) -> None:
    column = "helpful" if verdict == "helped" else "harmful"
    confirmed = ", confirmed_at = ?" if verdict == "helped" else ""
    conn.execute(
        f"UPDATE knowledge SET {column} = {column} + 1, updated_at = ?{confirmed} WHERE id = ?",
        (now, now, entry_id) if confirmed else (now, entry_id),
    )
    _event(conn, entry_id, verdict, detail)


def record_feedback(
    store: Store,
    entry_id: int,
    verdict: str,
    note: str = "",
    *,
    source: str = "user",
    root: Path | None = None,
) -> Outcome:
    """Count a verdict someone gave a memory (``memory feedback``, the MCP ``memory_feedback``):
    each one counts, with its source and note (redacted) in the event."""
    if verdict not in VERDICTS:
        raise UsageError(f"the verdict is helped or misled, not {verdict!r}")
    current = get(store, entry_id)
    if current is None or current.kind not in MEMORY_KINDS:
        return Outcome("rejected", entry_id, "no such memory")
    detail = f"{source}: {note}" if note.strip() else source
    with store.transaction() as conn:
        _verdict(conn, entry_id, verdict, detail, utc_now())
    render.render_scope(store, current.scope, root)
    return Outcome(verdict, entry_id)


def retire_misleading(
    store: Store, entry_ids: list[int], *, by_user: bool = False, root: Path | None = None
) -> list[int]:
    """Retire each of these memories that mostly misleads: misled at least
    ``RETIRE_MIN_MISLED`` times and more often than it helped. It leaves recall (status
    ``retired``) and stays, marked, in ``memory audit`` and ``memory stats``. A pinned memory
    never retires this way; a user-authored one only on its user's own verdict (``by_user``,
    as ``retire`` holds). Returns the ids retired."""
    retired = []
    for entry_id in dict.fromkeys(entry_ids):
        entry = get(store, entry_id)
        if (
            entry is None
            or entry.kind not in MEMORY_KINDS
            or entry.status != "active"
            or entry.pinned
            or entry.harmful < RETIRE_MIN_MISLED
            or entry.harmful <= entry.helpful
        ):
            continue
        reason = f"mostly misled: misled {entry.harmful}, helped {entry.helpful}"
        if retire(store, entry_id, reason, by_user=by_user, root=root).action == "retired":
            retired.append(entry_id)
    return retired


# --------------------------------------------------------------------------------------------
# Import (``lessonloop knowledge import``): another store's entries, through the same gate.


@dataclass
class Imported:
    """One entry of a knowledge export to admit: its proposal (source ``import``, the file and
    the original provenance in ``detail``) and the evidence it carries."""

    proposal: Proposal
    helpful: int = 0
    harmful: int = 0
    seen: int = 1
    pinned: bool = False
    created_at: str | None = None
    confirmed_at: str | None = None


def admit_imported(store: Store, items: list[Imported], root: Path | None = None) -> list[Outcome]:
    """Admit an export's entries in one transaction (all or none), then render the views.

    Each is redacted, checked and deduplicated as any proposal is: a repeat reinforces the
    entry already there and never changes its text or author (a user's own stays as written).
    Counters merge by maximum, not sum: exports travel round a team, so two files often carry
    the same history, and a sum would count it twice (max never loses evidence and makes an
    import idempotent). An entry whose import of this very line is already recorded (the same
    ``detail``: the file, the entry's own fingerprint and its original provenance, as
    ``app/knowledge_share`` writes it) is left as it is: ``unchanged``. The entry must be part
    of that key: lines with the same (or no) provenance are distinct entries, each admitted.
    """
    import hashlib

    def key(scope: str, detail: str) -> tuple[str, bytes]:
        return scope, hashlib.sha256(detail.encode()).digest()

    outcomes = []
    scopes = set()
    with store.transaction() as conn:
        imported = {  # what earlier imports recorded (read once: the detail has no index)
            key(row["scope"], row["detail"]): row["id"]
            for row in conn.execute(
                "SELECT k.id, k.scope, p.detail FROM knowledge_provenance p JOIN knowledge k "
                "ON k.id = p.knowledge_id WHERE p.source = 'import' AND k.status = 'active'"
            )
        }
        for item in items:
            proposal = prepare(item.proposal)
            problem = _policy_problem(proposal)
            if problem:
                outcomes.append(Outcome("rejected", None, problem))
                _event(conn, None, "reject", f"{proposal.source}: {problem}")
                continue
            scopes.add(proposal.scope)
            again = imported.get(key(proposal.scope, proposal.detail))
            if again is not None:
                outcomes.append(Outcome("unchanged", again, "already imported"))
                continue
            outcome = _admit_one(conn, proposal)
            if outcome.entry_id is not None:
                imported[key(proposal.scope, proposal.detail)] = outcome.entry_id
            if outcome.action == "added":
                conn.execute(
                    "UPDATE knowledge SET helpful = ?, harmful = ?, seen = MAX(?, 1), pinned = ?, "
                    "created_at = COALESCE(?, created_at), confirmed_at = ? WHERE id = ?",
                    (
                        item.helpful,
                        item.harmful,
                        item.seen,
                        int(item.pinned),
                        item.created_at,
                        item.confirmed_at,
                        outcome.entry_id,
                    ),
                )
            else:  # admission counted one more sighting (seen + 1): an import merges by max
                conn.execute(
                    "UPDATE knowledge SET helpful = MAX(helpful, ?), harmful = MAX(harmful, ?), "
                    "seen = MAX(seen - 1, ?, 1), confirmed_at = CASE WHEN COALESCE(?, '') > "
                    "COALESCE(confirmed_at, '') THEN ? ELSE confirmed_at END WHERE id = ?",
                    (
                        item.helpful,
                        item.harmful,
                        item.seen,
                        item.confirmed_at,
                        item.confirmed_at,
                        outcome.entry_id,
                    ),
                )
            outcomes.append(outcome)
    for scope in scopes:
        render.render_scope(store, scope, root)
    return outcomes
