"""Reading knowledge entries: kinds, scopes, normalization and queries (no writes here)."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field

from .. import canonical
from ..store.db import Store

MEMORY_KINDS = ("pattern", "decision", "preference", "observation")  # what sessions remember
KINDS = ("bullet", "hint", "dead_end", *MEMORY_KINDS)
AUTHORS = ("auto", "user")
# An entry's status. Only ``active`` entries are served (recall, context, search); the rest stay
# for the audit trail: ``retired`` (a bullet turned dead end, a memory that mostly misled),
# ``superseded`` (replaced by ``superseded_by``), ``pending`` (held for review, ``--review``),
# ``rejected`` (refused at review), ``stale`` (names a path or command the project no longer
# has; back to active when confirmed).
STATUSES = ("active", "retired", "superseded", "pending", "rejected", "stale")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")


def scenario_scope(name: str) -> str:
    return f"scenario:{name}"


def scope_dirname(scope: str) -> str:
    """The folder under ``knowledge/``: a scenario's own name, otherwise the scope made safe."""
    kind, _, name = scope.partition(":")
    text = name if kind == "scenario" and name else scope
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "default"


def words(text: str, keep_numbers: bool = False) -> list[str]:
    """Lowercased words; numbers dropped unless kept, so "x to 0.7" and "x to 0.8" match."""
    text = text.lower()
    if keep_numbers:
        return _WORD.findall(
            _NUMBER.sub(lambda m: f" n{float(m.group()):.2f} ".replace(".", "p"), text)
        )
    return _WORD.findall(_NUMBER.sub(" ", text))


def fingerprint(kind: str, summary: str, content: str, tags: list[str] | None = None) -> str:
    """Exact-duplicate key. A lesson from a run is its words (numbers set aside, so "x to 0.7"
    and "x to 0.8" match) plus its machine-readable tags, which carry the values agents act on;
    a memory keeps its numbers ("indent with 2 spaces" is not "4 spaces"); a dead end is the
    strategy it records, at full precision, whatever score it was given."""
    if kind == "dead_end":
        try:
            normalized = canonical.dumps(json.loads(content))
        except (json.JSONDecodeError, TypeError):
            normalized = " ".join(words(f"{summary} {content}", keep_numbers=True))
    else:
        text = " ".join(words(f"{summary} {content}", keep_numbers=kind in MEMORY_KINDS))
        normalized = text + " | " + " ".join(sorted(tags or []))
    return hashlib.sha256(f"{kind}|{normalized}".encode()).hexdigest()[:32]


_LIFECYCLE = ("pinned", "injected", "last_used_at", "confirmed_at", "superseded_by")


def _lifecycle(row, key: str):
    return bool(row[key]) if key == "pinned" else row[key]


@dataclass
class Entry:
    id: int
    kind: str
    scope: str
    summary: str
    content: str
    why: str
    how_to_apply: str
    tags: list[str] = field(default_factory=list)
    helpful: int = 0
    harmful: int = 0
    seen: int = 1
    author: str = "auto"
    status: str = "active"
    created_at: str = ""
    updated_at: str = ""
    number: int = 0  # within its scope: what users call a memory's id
    pinned: bool = False
    injected: int = 0  # times given to a session (recall at start or per prompt/tool)
    last_used_at: str | None = None  # last given to a session
    confirmed_at: str | None = None  # last seen again, helped, approved or edited
    superseded_by: int | None = None  # the entry (row id) that replaced this one

    @classmethod
    def from_row(cls, row) -> Entry:
        return cls(
            id=row["id"],
            kind=row["kind"],
            scope=row["scope"],
            summary=row["summary"],
            content=row["content"],
            why=row["why"],
            how_to_apply=row["how_to_apply"],
            tags=json.loads(row["tags_json"]),
            helpful=row["helpful"],
            harmful=row["harmful"],
            seen=row["seen"],
            author=row["author"],
            status=row["status"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            number=row["number"] if "number" in row.keys() else 0,
            **{k: _lifecycle(row, k) for k in _LIFECYCLE if k in row.keys()},
        )

    @property
    def evidence(self) -> int:
        return self.helpful - self.harmful

    def to_dict(self) -> dict:
        return {
            k: getattr(self, k)
            for k in (
                "id",
                "kind",
                "scope",
                "summary",
                "content",
                "why",
                "how_to_apply",
                "tags",
                "helpful",
                "harmful",
                "seen",
                "author",
                "status",
                "created_at",
                "updated_at",
                *_LIFECYCLE,
            )
        }


def ranked(entries: list[Entry]) -> list[Entry]:
    """Most useful first: evidence (helpful − harmful), then how often seen, then newest."""
    return sorted(entries, key=lambda e: (-e.evidence, -e.seen, -e.id))


def active(store: Store, scope: str, kinds: tuple[str, ...] = KINDS) -> list[Entry]:
    marks = ",".join("?" * len(kinds))
    rows = store.query(
        f"SELECT * FROM knowledge WHERE scope = ? AND status = 'active' AND kind IN ({marks}) "
        "ORDER BY id",
        (scope, *kinds),
    )
    return [Entry.from_row(r) for r in rows]


# Each order is spelled as its index in migration 6 is (knowledge_by_usefulness,
# knowledge_for_recall), so SQLite walks the index and reads only the rows it returns. "recall"
# puts pinned entries before that index's order: SQLite still finds the scope's active rows by
# the index, then sorts them (a top-N sort of one scope: a few ms at 100,000 memories).
_ORDERS = {
    "useful": "(helpful - harmful) DESC, seen DESC, id DESC",  # ``ranked``, in SQL
    # pinned first, then user-authored, evidence, repeats and recency (what a session recalls)
    "recall": "pinned DESC, (author <> 'user'), (helpful - harmful) DESC, seen DESC, "
    "updated_at DESC, id DESC",
    "newest": "id DESC",
}


def active_top(
    store: Store,
    scope: str,
    kinds: tuple[str, ...],
    limit: int | None,
    order: str = "useful",
    automatic_only: bool = False,
) -> list[Entry]:
    """The first ``limit`` (all when None) active entries of ``kinds`` in an order of _ORDERS;
    ``automatic_only``: those the user did not write."""
    marks = ",".join("?" * len(kinds))
    author = " AND author <> 'user'" if automatic_only else ""
    rows = store.query(
        f"SELECT * FROM knowledge WHERE scope = ? AND status = 'active' AND kind "
        f"IN ({marks}){author} ORDER BY {_ORDERS[order]} LIMIT ?",
        (scope, *kinds, -1 if limit is None else limit),
    )
    return [Entry.from_row(r) for r in rows]


def active_counts(store: Store, scope: str) -> dict[str, int]:
    """How many active entries ``scope`` holds of each kind."""
    return {
        row["kind"]: row["entries"]
        for row in store.query(
            "SELECT kind, COUNT(*) AS entries FROM knowledge WHERE scope = ? AND "
            "status = 'active' GROUP BY kind",
            (scope,),
        )
    }


def by_number(store: Store, scope: str, number: int) -> Entry | None:
    """The entry a user names by its id within ``scope`` (a memory's id)."""
    if not 0 < number < 2**63:
        return None
    row = store.query_one("SELECT * FROM knowledge WHERE scope = ? AND number = ?", (scope, number))
    return Entry.from_row(row) if row else None


def get(store: Store, entry_id: int) -> Entry | None:
    if not 0 < entry_id < 2**63:  # no such row, and SQLite could not even take the number
        return None
    row = store.query_one("SELECT * FROM knowledge WHERE id = ?", (entry_id,))
    return Entry.from_row(row) if row else None


def provenance(store: Store, entry_id: int) -> list[dict]:
    return [
        dict(r)
        for r in store.query(
            "SELECT * FROM knowledge_provenance WHERE knowledge_id = ? ORDER BY id", (entry_id,)
        )
    ]
