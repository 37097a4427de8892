"""Search knowledge with SQLite FTS5 BM25, nudged by evidence."""

from __future__ import annotations

from ..store.db import Store
from .entries import Entry, words

COMMON_SHARE = 0.02  # a term in more of the entries than this says little about relevance
SCORED_MATCHES = 2_000  # a query of common words only is ranked over its newest matches
POOL_FACTOR = 4  # ranked hits fetched per wanted hit, before the scope and kind filters
MAX_TERMS = 64  # the first distinct words of a query that are searched for


def _selective(store: Store, terms: list[str]) -> tuple[list[str], list[str], int]:
    """The terms in at most COMMON_SHARE of the entries, those in any entry, and the highest
    id (about the number of entries).

    A term most entries contain adds almost nothing to BM25, yet matching it makes FTS5 score
    every one of those entries. Matches are counted up to that share only: a full count (and
    FTS5's vocabulary table) reads the term's whole posting list, ~4 ms at 100,000 entries."""
    top = store.query_aggregate("SELECT MAX(id) FROM knowledge")[0] or 0  # ~ the count, in O(1)
    share = max(50, int(COMMON_SHARE * top))
    if top <= share:
        return terms, terms, top  # (no term can be in more)
    count = (
        "(SELECT count(*) FROM (SELECT 1 FROM knowledge_fts WHERE knowledge_fts MATCH ? LIMIT ?))"
    )
    counts = store.query_aggregate(
        f"SELECT {', '.join([count] * len(terms))}",
        [value for t in terms for value in (f'"{t}"', share + 1)],
    )
    matched = [(t, n) for t, n in zip(terms, counts) if n]
    return [t for t, n in matched if n <= share], [t for t, _ in matched], top


def _newest_matches_from(store: Store, expression: str) -> int:
    """The lowest id among the newest SCORED_MATCHES matches (0 when there are fewer)."""
    row = store.query_aggregate(
        "SELECT MIN(rowid), COUNT(*) FROM (SELECT rowid FROM knowledge_fts "
        "WHERE knowledge_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
        [expression, SCORED_MATCHES],
    )
    return row[0] if row[1] >= SCORED_MATCHES else 0


def _ranked(
    store: Store,
    expression: str,
    from_id: int,
    pool: int | None,
    scope: str | None,
    kinds: tuple[str, ...] | None,
) -> tuple[list[tuple[int, float]], bool]:
    """(id, BM25 relevance) of the active entries in ``scope`` and ``kinds`` among the best
    ``pool`` matches with id ≥ ``from_id`` (among all of them when None), best first; and
    whether the pool held every such match.

    Matches are ranked in the index alone, then filtered: joining each match to its row
    before ranking costs more than the ranking."""
    conditions, params = ["k.status = 'active'"], [expression, from_id, pool or -1]
    if scope is not None:
        conditions.append("k.scope = ?")
        params.append(scope)
    if kinds:
        conditions.append(f"k.kind IN ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    rows = store.query(
        "SELECT r.id, r.relevance, k.id IS NOT NULL FROM (SELECT rowid AS id, "
        "-bm25(knowledge_fts) AS relevance FROM knowledge_fts WHERE knowledge_fts MATCH ? "
        "AND rowid >= ? ORDER BY bm25(knowledge_fts) LIMIT ?) r "
        f"{'LEFT ' if pool else ''}JOIN knowledge k ON k.id = r.id AND {' AND '.join(conditions)} "
        "ORDER BY r.relevance DESC",
        params,
    )
    return [(i, relevance) for i, relevance, kept in rows if kept], pool is None or len(rows) < pool


def search(
    store: Store,
    query: str,
    *,
    scope: str | None = None,
    kinds: tuple[str, ...] | None = None,
    limit: int = 10,
) -> list[tuple[Entry, float]]:
    """Active entries matching the query's selective words, best first, with their relevance
    (a word no entry holds is left out).

    Relevance is BM25 (higher is better here) scaled up by net helpful evidence, so a lesson
    that has proven itself outranks an equally relevant untested one. Only the query's
    selective words are ranked by; a query of common words only is ranked over its newest
    SCORED_MATCHES matches (over all of them when those yield too few): it says too little to
    rank a whole large store by, and scoring 90,000 matches takes ~0.1 s.
    """
    terms = list(dict.fromkeys(words(query, keep_numbers=False)))[:MAX_TERMS]
    if not terms:
        return []
    selective, matched, top = _selective(store, terms)
    if not matched:
        return []
    expression = " OR ".join(f'"{t}"' for t in selective or matched)
    from_id = 0 if selective or top <= SCORED_MATCHES else _newest_matches_from(store, expression)
    wanted = max(1, limit) * 3  # evidence reorders the best few: rank more than are returned
    pool: int | None = wanted * POOL_FACTOR
    while True:
        found, exhausted = _ranked(store, expression, from_id, pool, scope, kinds)
        if len(found) >= wanted or (exhausted and from_id == 0):
            break
        if exhausted:
            from_id = 0  # the newest entries held too few: rank them all
        else:
            pool = None  # the filters left too few of the best: rank every match
    best = found[:wanted]
    rows = store.query(
        f"SELECT * FROM knowledge WHERE id IN ({','.join('?' * len(best))})", [i for i, _ in best]
    )
    entries = {row["id"]: Entry.from_row(row) for row in rows}  # (one forgotten meanwhile: gone)
    scored = [
        (entries[i], relevance * (1 + 0.1 * max(0, entries[i].evidence)))
        for i, relevance in best
        if i in entries
    ]
    scored.sort(key=lambda pair: -pair[1])
    return scored[:limit]
