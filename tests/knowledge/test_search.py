"""Knowledge search: BM25 over the query's selective words, bounded work on common words, and
the same answer as ranking every match."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessonloop.knowledge import admission, search
from lessonloop.knowledge.admission import Proposal
from lessonloop.store import open_store

KINDS = ("pattern", "preference", "decision", "observation")
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")


@pytest.fixture
def store(home):
    with open_store() as s:
        yield s


def add(store, summary, scope="project", kind="pattern") -> int:
    [outcome] = admission.admit(
        store, [Proposal(kind=kind, scope=scope, summary=summary, source="mcp")], render_views=False
    )
    assert outcome.action == "added", outcome
    return outcome.entry_id


def name(n: int) -> str:
    """A distinct word for ``n`` (lessons set numbers aside when they compare texts)."""
    return "x" + "".join(chr(97 + int(d)) for d in str(n))


def ids(found):
    return [entry.id for entry, _ in found]


def reference(store, query_terms, scope, kinds):
    """Every active match in scope and kinds with its BM25 relevance, ranked in one statement
    (the straightforward query search() must agree with)."""
    rows = store.query(
        "SELECT k.id, -bm25(knowledge_fts) FROM knowledge_fts JOIN knowledge k "
        "ON k.id = knowledge_fts.rowid WHERE knowledge_fts MATCH ? AND k.status = 'active' "
        f"AND k.scope = ? AND k.kind IN ({','.join('?' * len(kinds))}) "
        "ORDER BY bm25(knowledge_fts)",
        [" OR ".join(f'"{t}"' for t in query_terms), scope, *kinds],
    )
    return [(row[0], round(row[1], 9)) for row in rows]


def test_the_rarer_word_ranks_and_a_word_most_entries_share_is_set_aside(store):
    for n in range(60):  # "service" is in every entry: it cannot tell them apart
        add(store, f"service note number {n} about item{n}")
    wanted = add(store, "service retries need a jittered backoff")
    weaker = add(
        store,
        "backoff is mentioned once in a much longer note about the service "
        "and its many unrelated configuration switches and knobs",
    )
    assert search._selective(store, ["backoff", "service"])[0] == ["backoff"]
    assert ids(search.search(store, "service backoff", scope="project")) == [wanted, weaker]
    # a word no entry holds does not hide the others, however common they are
    assert len(search.search(store, "service zzqq", scope="project")) == 10


def test_evidence_lifts_an_equally_relevant_lesson(store):
    first = add(store, "pin the linter version")
    second = add(store, "pin the formatter version")
    store.conn.execute("UPDATE knowledge SET helpful = 3 WHERE id = ?", (second,))
    assert ids(search.search(store, "pin version", scope="project")) == [second, first]


def test_a_query_of_common_words_only_ranks_its_newest_matches(store, monkeypatch):
    monkeypatch.setattr(search, "SCORED_MATCHES", 10)
    added = [add(store, f"shared topic entry {n} " + "word" * (n % 3)) for n in range(70)]
    found = search.search(store, "shared topic", scope="project", limit=3)
    assert len(found) == 3 and set(ids(found)) <= set(added[-10:])


def test_when_the_newest_matches_are_out_of_scope_all_matches_are_ranked(store, monkeypatch):
    monkeypatch.setattr(search, "SCORED_MATCHES", 10)
    older = [add(store, f"shared topic entry {n}") for n in range(60)]
    for n in range(20):
        add(store, f"shared topic elsewhere {name(n)}", scope="scenario:grid_ctf", kind="bullet")
    found = search.search(store, "shared topic", scope="project", limit=5)
    assert len(found) == 5 and set(ids(found)) <= set(older)


def test_when_the_best_matches_are_filtered_out_every_match_is_ranked(store, monkeypatch):
    monkeypatch.setattr(search, "POOL_FACTOR", 1)
    for n in range(6):  # the strongest matches, all in another scope
        add(store, f"zebra zebra zebra {name(n)}", scope="scenario:grid_ctf", kind="bullet")
    mine = add(store, "a zebra crossing appears once in this much longer project note here")
    assert ids(search.search(store, "zebra", scope="project", kinds=KINDS, limit=1)) == [mine]


def test_retired_entries_and_other_kinds_are_not_found(store):
    kept = add(store, "prefer tabs in makefiles", kind="preference")
    gone = add(store, "prefer spaces in makefiles", kind="preference")
    admission.retire(store, gone, "superseded")
    add(store, "makefiles need tabs", scope="project", kind="hint")
    assert ids(search.search(store, "makefiles", scope="project", kinds=KINDS)) == [kept]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    entries=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
            st.sampled_from(("project", "user")),
            st.sampled_from(KINDS + ("hint",)),
            st.booleans(),
        ),
        min_size=1,
        max_size=25,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    limit=st.integers(1, 4),
    pool_factor=st.sampled_from((1, 10)),
)
def test_search_agrees_with_ranking_every_match(
    home, monkeypatch, entries, query, limit, pool_factor
):
    monkeypatch.setattr(search, "POOL_FACTOR", pool_factor)
    with open_store() as store:
        store.conn.execute("DELETE FROM knowledge")  # a fresh store per example
        for n, (text, scope, kind, retired) in enumerate(entries):
            [outcome] = admission.admit(
                store,
                [
                    Proposal(
                        kind=kind, scope=scope, summary=f"{' '.join(text)} number{n}", source="mcp"
                    )
                ],
                render_views=False,
            )
            if retired and outcome.action == "added":
                admission.retire(store, outcome.entry_id, "test")
        found = [
            (e.id, round(r, 9))
            for e, r in search.search(
                store, " ".join(query), scope="project", kinds=KINDS, limit=limit
            )
        ]
        expected = reference(store, sorted(set(query)), "project", KINDS)
        # ties may come in either order: the scores must match, and each hit must be a match
        assert [r for _, r in found] == [r for _, r in expected][:limit]
        assert set(found) <= set(expected)
