"""Search knowledge with SQLite FTS5 BM25, nudged by evidence."""

from __future__ import annotations

from ..store.db import Store
from .entries import Entry, words


COMMON_SHARE = 0.02  # a term in more of the entries than this says little about relevance


def _selective(store: Store, terms: list[str]) -> list[str]:
    """The terms worth ranking by: those in at most COMMON_SHARE of the entries, or the rarest
    one when all are common. A term most entries contain adds almost nothing to BM25, yet
    matching it makes FTS5 score every one of those entries."""
    marks = ",".join("?" * len(terms))
    frequency = dict(store.query(f"SELECT term, doc FROM knowledge_vocab WHERE term IN ({marks})",
                                 terms))
    total = store.query_one("SELECT MAX(id) FROM knowledge")[0] or 0  # ~ the count, in O(1)
    kept = [t for t in terms if frequency.get(t, 0) <= max(50, COMMON_SHARE * total)]
    return kept or [min(terms, key=lambda t: frequency.get(t, 0))]


def search(store: Store, query: str, *, scope: str | None = None,
           kinds: tuple[str, ...] | None = None, limit: int = 10) -> list[tuple[Entry, float]]:
    """Active entries matching the query's selective words, best first, with their relevance.

    Relevance is BM25 (higher is better here) scaled up by net helpful evidence, so a lesson
    that has proven itself outranks an equally relevant untested one.
    """
    terms = sorted(set(words(query, keep_numbers=False)))
    if not terms:
        return []
    terms = _selective(store, terms)
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
