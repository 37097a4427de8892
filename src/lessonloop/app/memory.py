"""Memories: search, list, store, forget, recall and prune them; record the consent to automatic
memories; turn a session into memories. ``lessonloop memory ...`` and the MCP ``memory_*``
tools call these.

Memories are knowledge entries of the memory kinds in scope ``project`` (the store under the
home) or ``user`` (the store under the user root). Writes go through admission (``writing``
serializes them, see ``stores.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import NotFoundError, UsageError
from .limits import check_limit
from .stores import reading, writing

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..knowledge.entries import Entry
    from ..memory.memorize import Result
    from ..store.db import Store

SCOPES = ("project", "user")
MAX_SEARCH = 100


def scope_root(scope: str) -> Path:
    """The root whose store holds ``scope``'s memories (project: the home; user: the user's)."""
    if scope not in SCOPES:
        raise UsageError(f"is project or user, not {scope!r}", field="scope")
    return paths.home() if scope == "project" else paths.user_home()


def memory_roots(scope: str) -> list[tuple[str, Path]]:
    """Each scope ``scope`` names (``all``: both) with its root."""
    if scope == "all":
        return [("project", paths.home()), ("user", paths.user_home())]
    if scope in SCOPES:
        return [(scope, scope_root(scope))]
    raise UsageError(f"is project, user or all, not {scope!r}", field="scope")


def memory_objects(
    store: Store, entries: Sequence[Entry], scores: Sequence[float] | None = None
) -> list[dict[str, Any]]:
    """Memories as `lessonloop memory ... --json` and the MCP tools print them; where each
    came from (its first provenance) is read in one query for all of them."""
    ids = [e.id for e in entries]
    sources: dict[int, str] = {}
    for start in range(0, len(ids), 500):  # within SQLite's limit on query parameters
        chunk = ids[start : start + 500]
        for row in store.query(
            f"SELECT knowledge_id, source FROM knowledge_provenance WHERE knowledge_id IN "
            f"({','.join('?' * len(chunk))}) ORDER BY id DESC",
            chunk,
        ):
            sources[row["knowledge_id"]] = row["source"]  # the last assignment is the first
    values = []
    for index, entry in enumerate(entries):
        value: dict[str, Any] = {
            "id": entry.number,
            "type": entry.kind,
            "scope": entry.scope,
            "summary": entry.summary,
            "content": entry.content,
            "why": entry.why,
            "how_to_apply": entry.how_to_apply,
            "tags": entry.tags,
            "author": entry.author,
            "source": sources.get(entry.id),
            "seen": entry.seen,
            "created_at": entry.created_at,
        }
        if scores is not None:
            # four significant digits: BM25 of a word in most of a small store is ~1e-6
            value["score"] = float(f"{scores[index]:.4g}")
        values.append(value)
    return values


def memory_entry(store: Store, scope: str, number: int) -> Entry:
    """The memory ``number`` of ``scope`` (whatever its status), or NotFoundError."""
    from ..knowledge.entries import MEMORY_KINDS, by_number

    entry = by_number(store, scope, number)
    if entry is None or entry.kind not in MEMORY_KINDS:
        raise NotFoundError(f"no {scope} memory with id {number}", listing="list_memories")
    return entry


def memory_object(store: Store, entry: Entry, score: float | None = None) -> dict[str, Any]:
    return memory_objects(store, [entry], None if score is None else [score])[0]


def search_memories(query: str, scope: str = "all", limit: int = 10) -> list[dict[str, Any]]:
    """Memories matching ``query``, best first (BM25 nudged by evidence), over ``scope``."""
    from ..knowledge.search import search
    from ..memory.recall import MEMORY_KINDS

    check_limit(limit, MAX_SEARCH)
    found: list[dict[str, Any]] = []
    for name, root in memory_roots(scope):
        with reading(root) as store:
            if store is not None:
                hits = search(store, query, scope=name, kinds=MEMORY_KINDS, limit=limit)
                found += memory_objects(store, [e for e, _ in hits], [s for _, s in hits])
    found.sort(key=lambda item: -item["score"])
    return found[:limit]


def recent_memories(
    scope: str = "all", limit: int | None = 50, automatic_only: bool = False, retired: bool = False
) -> list[dict[str, Any]]:
    """Active memories, newest first (all of them when ``limit`` is None); ``automatic_only``
    keeps those not written by the user (what `lessonloop memory audit` reviews); ``retired``
    adds the memories retired for misleading, each object then with its ``status``."""
    from ..knowledge.entries import active_top
    from ..memory.recall import MEMORY_KINDS

    check_limit(limit)
    items: list[dict[str, Any]] = []
    for name, root in memory_roots(scope):
        with reading(root) as store:
            if store is not None:
                found = memory_objects(
                    store, active_top(store, name, MEMORY_KINDS, limit, "newest", automatic_only)
                )
                if retired:
                    found = [{**value, "status": "active"} for value in found]
                    found += _retired(store, name)  # the user's own too: how else to bring one back
                items += found
    items.sort(key=lambda item: (item["created_at"], item["id"]), reverse=True)
    return items[:limit]


def _retired(store: Store, scope: str) -> list[dict[str, Any]]:
    """The retired memories of ``scope``, marked (``status``), as `memory audit` lists them
    (`memory approve ID` brings one back)."""
    from .memory_evidence import memories

    gone = memories(store, scope, "retired")
    return [{**value, "status": "retired"} for value in memory_objects(store, gone)]


def store_memory(
    kind: str,
    summary: str,
    content: str = "",
    why: str = "",
    how_to_apply: str = "",
    tags: list[str] | None = None,
    scope: str = "project",
    *,
    author: str = "auto",
    source: str = "mcp",
) -> dict[str, Any]:
    """Admit one memory (redacted, sanitized, capped, deduplicated) and return it with the
    admission's action (added or reinforced)."""
    from ..knowledge import admission
    from ..knowledge.entries import get
    from ..memory.recall import MEMORY_KINDS

    if kind not in MEMORY_KINDS:
        raise UsageError(f"is one of {', '.join(MEMORY_KINDS)}, not {kind!r}", field="type")
    root = scope_root(scope)
    proposal = admission.Proposal(
        kind=kind,
        scope=scope,
        summary=summary,
        content=content,
        why=why,
        how_to_apply=how_to_apply,
        tags=list(tags or []),
        author=author,
        source=source,
    )
    with writing(root) as store:
        outcome = admission.admit(store, [proposal], root)[0]
        stored = get(store, outcome.entry_id) if outcome.entry_id is not None else None
        if outcome.action == "rejected" or stored is None:
            raise UsageError(f"not stored: {outcome.reason}")
        return {**memory_object(store, stored), "action": outcome.action}


def forget_memory(entry_id: int, scope: str = "project") -> dict[str, Any]:
    """Delete one memory for good (and its line in the Markdown view)."""
    from ..knowledge import admission
    from ..knowledge.entries import by_number
    from ..memory.recall import MEMORY_KINDS

    root = scope_root(scope)
    if not paths.db_path(root).exists():
        raise NotFoundError(f"no {scope} memories yet")
    with writing(root) as store:
        entry = by_number(store, scope, entry_id)
        if entry is None or entry.kind not in MEMORY_KINDS:
            raise NotFoundError(f"no {scope} memory with id {entry_id}")
        admission.forget(store, entry.id, root)
    return {"forgotten": entry_id, "scope": scope, "summary": entry.summary}


def useful_memories(scope: str = "all") -> list[dict[str, Any]]:
    """Every active memory, most useful first (user-authored, evidence, repeats, recency)."""
    from ..knowledge.entries import active_top
    from ..memory.recall import MEMORY_KINDS

    items: list[dict[str, Any]] = []
    for name, root in memory_roots(scope):
        with reading(root) as store:
            if store is not None:
                items += memory_objects(
                    store, active_top(store, name, MEMORY_KINDS, None, "recall")
                )
    return items


def stale_memories(project: Path | None = None, recheck: bool = True) -> list[dict[str, Any]]:
    """Project memories marked stale, each with the references it names that the project no
    longer has (``missing``) and when it was marked (``memory audit --stale``). ``recheck``
    first checks every project memory against ``project`` (by default the folder the last
    check used, else the current one): marks the newly stale, gives back the restored."""
    import os

    from ..knowledge.admission import stale_references
    from ..knowledge.entries import Entry
    from ..memory import staleness
    from ..memory.recall import MEMORY_KINDS

    root = paths.home()
    if project is not None and not project.is_dir():
        raise UsageError(f"is not a folder: {project}", field="project")
    if not paths.db_path(root).exists():
        return []
    if recheck:
        folder = str(project) if project else staleness.project_dir(root) or os.getcwd()
        with writing(root) as store:
            staleness.check(store, root, folder, force=True)
    with reading(root) as store:
        if store is None:
            return []
        marks = ",".join("?" * len(MEMORY_KINDS))
        entries = [
            Entry.from_row(row)
            for row in store.query(
                f"SELECT * FROM knowledge WHERE scope = 'project' AND status = 'stale' "
                f"AND kind IN ({marks}) ORDER BY number",
                MEMORY_KINDS,
            )
        ]
        items = memory_objects(store, entries)
        for entry, item in zip(entries, items, strict=True):
            last = store.query_one(
                "SELECT detail, created_at FROM knowledge_events WHERE knowledge_id = ? "
                "AND action = 'stale' ORDER BY id DESC LIMIT 1",
                (entry.id,),
            )
            item["status"] = entry.status
            item["missing"] = stale_references(last["detail"]) if last else []
            item["marked_at"] = last["created_at"] if last else None
            item["confirmed_at"] = entry.confirmed_at
    return items


def memory_history(entry_id: int, scope: str = "project") -> dict[str, Any]:
    """A memory with its status (what superseded it), provenance and audit events
    (``memory why``)."""
    from ..knowledge.entries import by_number, provenance
    from .memory_review import reviewed_object

    with reading(scope_root(scope)) as store:
        entry = by_number(store, scope, entry_id) if store is not None else None
        if store is None or entry is None:
            raise NotFoundError(f"no {scope} memory with id {entry_id}", listing="list_memories")
        return {
            **reviewed_object(store, entry),
            "provenance": provenance(store, entry.id),
            "events": [
                dict(event)
                for event in store.query(
                    "SELECT action, detail, created_at FROM knowledge_events "
                    "WHERE knowledge_id = ? ORDER BY id",
                    (entry.id,),
                )
            ],
        }


def prune_memories(scope: str, older_than: float | None, keep: int) -> dict[str, int]:
    """Drop the automatic memories unused for ``older_than`` days (user-authored ones stay) and
    keep at most ``keep`` per scope (see ``admission.prune``), then VACUUM each store."""
    from ..knowledge import admission
    from ..memory.recall import MEMORY_KINDS

    if older_than is not None and older_than < 0:
        raise UsageError("must not be negative", field="older_than")
    if keep < 0:
        raise UsageError("must not be negative", field="keep")
    report: dict[str, int] = {}
    for name, root in memory_roots(scope):
        if not paths.db_path(root).exists():
            continue
        with writing(root) as store:
            report[name] = admission.prune(
                store,
                name,
                MEMORY_KINDS,
                older_than_days=older_than,
                keep_at_most=keep,
                root=root,
            )
            store.vacuum()
    return report


def recall_text() -> str:
    """The block a new session starts with (project memories, then the user's)."""
    from ..memory.recall import block

    return block(paths.home(), paths.user_home())


def recall_log(session_id: str) -> list[dict[str, Any]]:
    """What the session was given, in order: each memory with when, by which event (session
    start, a prompt, a command about to run) and why (``memory/injections.py``)."""
    from ..memory import injections

    if not session_id.strip():
        raise UsageError("name a session id (the `session_id` of its hook payloads)")
    folder = paths.session_dir(session_id)
    if not folder.is_dir():
        raise NotFoundError(f"no session {session_id!r} under {folder.parent}")
    return [
        {
            "at": item.get("at"),
            "event": item.get("event"),
            "scope": item.get("scope"),
            "id": item.get("number"),
            "summary": item.get("summary", ""),
            "reason": item.get("reason", ""),
            "score": item.get("score"),
        }
        for item in injections.read(str(paths.home()), session_id)
    ]


def split_tags(tags: str | list[str] | None) -> list[str]:
    """Tags given as one comma-separated string (each stripped, empty ones dropped) or as a
    list (kept as it is: admission cleans every tag)."""
    if isinstance(tags, str):
        return [tag.strip() for tag in tags.split(",") if tag.strip()]
    return list(tags or [])


def record_consent(answer: str) -> Path:
    """Allow (yes), refuse (no) or postpone (ask) automatic memories for this project; the
    file that keeps the answer."""
    from ..memory import consent

    if answer not in consent.ANSWERS:
        raise UsageError(f"answer yes, no or ask, not {answer!r}")
    kept: Path = consent.record(paths.ensure_home(), answer)
    return kept


def consent_hint() -> str:
    """How to give the consent automatic memories wait for."""
    from ..memory.consent import HOW_TO_ANSWER

    return HOW_TO_ANSWER


def memorize(
    session_id: str | None, transcript: Path | None = None, review: bool = False
) -> Result:
    """Turn a session's captures (by ``session_id``) or a transcript file into memories; the
    ``memorize.Result`` (stored, reinforced, skipped, the model used, a message). ``review``:
    new memories are held as pending until approved."""
    from ..memory.memorize import memorize as memorize_session

    if transcript is None:
        if session_id is None:
            raise UsageError(
                "give {field} (captured by the hooks) or a transcript", field="session_id"
            )
        if not paths.session_dir(session_id).is_dir():
            raise NotFoundError(
                f"no session {session_id!r}: the hooks captured nothing under "
                f"{paths.session_dir(session_id)} (check the id, or give {{field}} FILE)",
                field="transcript",
            )
        return memorize_session(session_id, paths.home(), transcript=None, review=review)
    if transcript.is_dir():
        raise UsageError(
            f"takes a session's .jsonl file; {transcript} is a directory", field="transcript"
        )
    if not transcript.is_file():
        raise UsageError(f"transcript not found: {transcript}")
    return memorize_session(
        session_id or transcript.stem, paths.home(), transcript=str(transcript), review=review
    )
