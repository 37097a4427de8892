"""The offline competitor's side of a context trial (issue 23): what it proposes for a scenario
when the context it is served holds exactly a given bundle of knowledge entries.

A trial compares two bundles by their proposals on the same seeds, so the proposal must be the
one a fresh run would make under that context, by the run's own code path: the request state
is built as ``loop/context.Context.state()`` builds it for a fresh run's first attempt
(``loop/runner.SearchContext``: generation 1, attempt 0, no incumbent, empty trajectory and
history), with the knowledge selected as ``loop/reflection.Reflection._knowledge`` selects it,
and the answer comes from ``LocalProvider.complete`` (``Competitor._first_batch``: points drawn
by ``prior.prior_point`` around the ``guidance`` targets, or seeded random points without
targets; none next to a dead end, ``steps.near_any``). This module cannot import the loop (the
providers sit below it: tests/test_layering.py), so the few lines that shape the state are
mirrored here; tests/providers/test_local_trial.py checks them against the loop's own
``Context.state()`` and against a real run's first screened batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ... import canonical
from ...errors import LessonloopError
from ...json_blocks import json_objects
from ...scenarios import code, space
from ..base import Request
from .agent import LocalProvider
from .competitor import first_batch_members

# mirrored from the loop (tests/providers/test_local_trial.py checks they still agree)
META_KEYS = ("$schema", "$id", "$comment")  # loop/context.META_KEYS: not in the interface
HINTS_IN_CONTEXT = 20  # loop/reflection.HINTS_IN_CONTEXT: the strongest
DEAD_ENDS_IN_CONTEXT = 20  # loop/reflection.DEAD_ENDS_IN_CONTEXT: the most recent


# a bundle's entries: dicts (``playbook list --json`` rows, ``Entry.to_dict()``) or the store's
# ``Entry`` objects (this layer does not import the knowledge store to name the type)
Bundle = Iterable[Mapping[str, Any] | Any]


class NoProposal(LessonloopError):
    """The competitor's first batch under a bundle held no strategy the scenario accepts."""


def propose_under(scenario: Any, entries: Bundle, seed: int) -> dict:
    """The strategy a context trial plays for ``scenario`` under the bundle ``entries``: the
    first member of the offline competitor's first batch (``proposals_under``), deterministic
    per (entries, seed) and independent of the entries' order when they carry ids.

    Why the first member: a fresh run screens the whole batch (9 points) on 3 screening seeds
    and makes the best-measured one its first incumbent. The members are independent draws
    from one distribution (``prior_point`` around the targets, or uniform samples), so no
    member is ranked above another by the prior; the first is the runner's ``strategies[0]``
    (the one it judges when there is nothing to screen) and an unbiased sample of what the
    context makes the competitor propose. The paired delta over trial seeds then estimates
    how much better the bundle's proposals are, plays only on the trial's own game seeds (no
    9 x 3 screening plays per side and seed), and is not sharpened beyond what a run sees
    (the member nearest the targets would be: a run never plays the targets themselves).
    ``seed`` is the competitor request's seed: a fresh run with run seed R proposes
    ``proposals_under(..., loop.seeds.call_seed(R, 1, 0, "competitor"))`` first.

    It is that member without the rest of the batch: the competitor's batch member by member
    (``competitor.first_batch_members``, which its answer lists; ``_search`` answers a fresh
    state with it), each as the answer's JSON reads back, up to the first the scenario
    accepts. A context trial asks for two proposals per trial seed: drawing, checking and
    rendering the other eight members was most of a trial's own work (issue 18).
    """
    state = fresh_state(scenario, entries)
    params = space.parameters(state["strategy_schema"])
    for member in first_batch_members(state, seed, params):
        for candidate in json_objects(json.dumps(member)):  # as the answer's text reads back
            if not code.problems(scenario, candidate):
                return candidate
    raise NoProposal(_NONE_VALID.format(name=scenario.name))


def proposals_under(scenario: Any, entries: Bundle, seed: int) -> list[dict]:
    """The offline competitor's first batch under ``entries``, as the runner reads it: every
    strategy in the answer the scenario accepts (``scenarios/code.problems``), new, in order
    (``loop/answers.Answers._attempt_strategies``; the local agent's numbers are already
    within bounds, so there is nothing to clamp). Raises NoProposal when none is valid."""
    request = Request(
        role="competitor",
        system="",
        messages=[],
        seed=seed,
        state=fresh_state(scenario, entries),
    )
    text = LocalProvider().complete(request).text
    found: list[dict] = []
    keys: set[str] = set()
    for candidate in json_objects(text):
        key = canonical.dumps(candidate)
        if key not in keys and not code.problems(scenario, candidate):
            keys.add(key)
            found.append(candidate)
    if not found:
        raise NoProposal(_NONE_VALID.format(name=scenario.name))
    return found


_NONE_VALID = (
    "the offline competitor proposed no valid {name} strategy under this bundle (its dead "
    "ends may cover the whole space)"
)


def fresh_state(scenario: Any, entries: Bundle) -> dict:
    """The competitor's request state for a fresh run's first attempt whose context holds
    exactly ``entries``: bullets ranked into the playbook, the strongest hints, the most
    recent dead ends' strategies (``Context.state()`` of a ``SearchContext`` with an empty
    history). Entries of other kinds, and any whose ``status`` is not ``active`` (a listing's
    pending or stale ones: only active entries are served), are left out.
    The context budget trims nothing here: a fresh context holds no trajectory or analysis,
    and a bundle within the run's caps fits the default budget (a bundle of well over a
    hundred long bullets would be trimmed by a run and not here)."""
    listed = [
        e for e in (_entry(e, position) for position, e in enumerate(entries)) if e is not None
    ]
    by_kind = {
        kind: [e for e in listed if e["kind"] == kind] for kind in ("bullet", "hint", "dead_end")
    }
    dead_ends = sorted(by_kind["dead_end"], key=lambda e: e["id"])[-DEAD_ENDS_IN_CONTEXT:]
    return {
        "role": "competitor",
        "generation": 1,
        "attempt": 0,
        "strategy_schema": {
            k: v for k, v in scenario.strategy_schema.items() if k not in META_KEYS
        },
        "incumbent": None,
        "trajectory": [],
        "tried": [],
        "failure": None,
        "playbook": [_entry_state(e) for e in ranked(by_kind["bullet"])],
        "hints": [_entry_state(e) for e in ranked(by_kind["hint"])[:HINTS_IN_CONTEXT]],
        "dead_ends": [s for s in map(_dead_end_strategy, dead_ends) if s is not None],
        "history": [],
    }


def ranked(entries: list[dict]) -> list[dict]:
    """Most useful first, as ``knowledge/entries.ranked`` orders a scope's entries: evidence
    (helpful - harmful), then how often seen, then newest (highest id)."""
    return sorted(entries, key=lambda e: (-(e["helpful"] - e["harmful"]), -e["seen"], -e["id"]))


def _entry(entry: Mapping | Any, position: int) -> dict | None:
    """One bundle entry as a plain dict with what the context reads, or None when it is not
    served (a status other than active). Accepts the store's ``Entry``, its ``to_dict()``, or
    a ``playbook list --json`` row; an entry without an id is numbered by its position (later
    = newer, as the store numbers them)."""
    if not isinstance(entry, Mapping):
        entry = entry.to_dict()
    if entry.get("status", "active") != "active":
        return None
    tags = entry.get("tags")
    if tags is None and isinstance(entry.get("tags_json"), str):
        tags = json.loads(entry["tags_json"])
    raw_id = entry.get("id")
    return {
        "id": raw_id if isinstance(raw_id, int) else position + 1,
        "kind": str(entry.get("kind", "bullet")),
        "summary": str(entry.get("summary", "")),
        "content": entry.get("content") or "",
        "tags": [str(t) for t in tags or []],
        "helpful": int(entry.get("helpful", 0) or 0),
        "harmful": int(entry.get("harmful", 0) or 0),
        "seen": int(entry.get("seen", 1) or 1),
    }


def _entry_state(entry: dict) -> dict:
    """An entry as the competitor's state shows it (``loop/context.entry_state``)."""
    return {k: entry[k] for k in ("id", "summary", "tags", "helpful", "harmful")}


def _dead_end_strategy(entry: dict) -> dict | None:
    """The strategy a dead end records in its content (``loop/context.dead_end_strategy``)."""
    try:
        value = json.loads(entry["content"])
    except (json.JSONDecodeError, TypeError):
        return None
    return value if isinstance(value, dict) else None
