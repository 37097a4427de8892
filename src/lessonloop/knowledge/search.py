"""Search knowledge with SQLite FTS5 BM25, nudged by evidence."""

from __future__ import annotations

from ..store.db import Store
from .entries import Entry, words


def search(store: Store, query: str, *, scope: str | None = None,
           kinds: tuple[str, ...] | None = None, limit: int = 10) -> list[tuple[Entry, float]]:
    """Active entries matching any word of ``query``, best first, with their relevance.

    Relevance is BM25 (higher is better here) scaled up by net helpful evidence, so a lesson
    that has proven itself outranks an equally relevant untested one.
    """
    terms = sorted(set(words(query, keep_numbers=False)))
    if not terms:
        return []
    sql = ("SELECT k.*, -bm25(knowledge_fts) AS relevance FROM knowledge_fts "
           "JOIN knowledge k ON k.id = knowledge_fts.rowid "
           "WHERE knowledge_fts MATCH ? AND k.status = 'active'")
    params: list = [" OR ".join(f'"{t}"' for t in terms)]
    if scope is not None:
        sql += " AND k.scope = ?"
        params.append(scope)
    if kinds:
        sql += f" AND k.kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    sql += " ORDER BY bm25(knowledge_fts) LIMIT ?"
    params.append(max(1, limit) * 3)
    scored = []
    for row in store.query(sql, params):
        entry = Entry.from_row(row)
        scored.append((entry, row["relevance"] * (1 + 0.1 * max(0, entry.evidence))))
    scored.sort(key=lambda pair: -pair[1])
    return scored[:limit]
