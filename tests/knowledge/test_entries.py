"""Listing entries in SQL: each order matches its Python definition and walks its index."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessonloop.knowledge import admission, entries
from lessonloop.knowledge.admission import Proposal
from lessonloop.knowledge.entries import _ORDERS, MEMORY_KINDS, active_top
from lessonloop.store import open_store


@pytest.mark.parametrize(
    "order, index",
    [("useful", "knowledge_by_usefulness"), ("recall", "knowledge_for_pinned_recall")],
)
def test_each_order_reads_its_rows_in_index_order(home, order, index):
    """A scope of 100,000 memories lists in milliseconds only while SQLite walks an index in
    the listing's order instead of sorting every row: spelling an order otherwise loses it
    (recall's pinned-first order sorted every row: ~50 ms instead of ~10 ms for the
    session-start block at 100,000 memories)."""
    with open_store() as store:
        plan = " | ".join(
            row[3]
            for row in store.query(
                "EXPLAIN QUERY PLAN SELECT * FROM knowledge WHERE scope = ? AND status = 'active' "
                f"AND kind IN ('pattern', 'decision') ORDER BY {_ORDERS[order]} LIMIT 500",
                ("project",),
            )
        )
    assert f"USING INDEX {index}" in plan and "TEMP B-TREE" not in plan, plan
    assert "SCAN knowledge" not in plan, plan


def recall_order(listed):
    """The SessionStart order, as first written in Python: pinned ones first, then the user's
    own, then by evidence, then seen again, then most recently updated."""
    newest_first = sorted(listed, key=lambda e: (e.updated_at, e.id), reverse=True)
    return sorted(
        newest_first, key=lambda e: (not e.pinned, e.author != "user", -e.evidence, -e.seen)
    )


rows = st.lists(
    st.tuples(
        st.sampled_from(("user", "auto")),
        st.integers(0, 2),
        st.integers(0, 2),
        st.integers(1, 3),
        st.integers(0, 3),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=20,
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=rows, limit=st.sampled_from((None, 1, 3)))
def test_the_sql_orders_are_the_python_ones(home, rows, limit):
    with open_store() as store:
        store.conn.execute("DELETE FROM knowledge")  # a fresh store per example
        for n, (author, helpful, harmful, seen, day, retired, pinned) in enumerate(rows):
            [outcome] = admission.admit(
                store,
                [
                    Proposal(
                        kind=MEMORY_KINDS[n % 4],
                        scope="project",
                        summary=f"memory {'x' * n} alone",
                        author=author,
                        source="user" if author == "user" else "mcp",
                    )
                ],
                render_views=False,
            )
            assert outcome.action == "added", outcome
            store.conn.execute(
                "UPDATE knowledge SET helpful = ?, harmful = ?, seen = ?, "
                "updated_at = ?, status = ?, pinned = ? WHERE id = ?",
                (
                    helpful,
                    harmful,
                    seen,
                    f"2026-11-0{day + 1}T00:00:00Z",
                    "retired" if retired else "active",
                    int(pinned),
                    outcome.entry_id,
                ),
            )
        every = entries.active(store, "project", MEMORY_KINDS)
        assert len(every) == sum(not row[5] for row in rows)
        listed = {
            order: [e.id for e in active_top(store, "project", MEMORY_KINDS, limit, order)]
            for order in _ORDERS
        }
        automatic = [
            e.id
            for e in active_top(
                store, "project", MEMORY_KINDS, limit, "newest", automatic_only=True
            )
        ]
    assert listed["useful"] == [e.id for e in entries.ranked(every)][:limit]
    assert listed["recall"] == [e.id for e in recall_order(every)][:limit]
    assert listed["newest"] == sorted((e.id for e in every), reverse=True)[:limit]
    assert automatic == sorted((e.id for e in every if e.author != "user"), reverse=True)[:limit]
