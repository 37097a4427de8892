"""The offline competitor's side of a context trial (providers/local/trial.py): the proposal a
fresh run makes under a bundle, by the run's own code path, deterministic per (entries, seed),
better under a bundle that names the optimum and worse under one that steers away from it."""

from __future__ import annotations

import random
import statistics
from types import SimpleNamespace

import pytest

from lessonloop.knowledge import entries as knowledge_entries
from lessonloop.knowledge.entries import Entry
from lessonloop.loop import context as loop_context
from lessonloop.loop import reflection, seeds
from lessonloop.loop.runner import Runner, SearchContext, create_or_reuse
from lessonloop.providers.local import trial
from lessonloop.providers.local.prior import guidance
from lessonloop.providers.local.steps import near_any
from lessonloop.scenarios import registry, space
from lessonloop.store import open_store
from lessonloop.store import runs as run_store

GRID = registry.load("grid_ctf")
# the best-known grid_ctf strategy (scenarios/grid_ctf.py's tuning notes: ~0.66 over 1000 seeds)
OPTIMUM = {"aggression": 0.72, "stealth": 0.78, "defense_radius": 2, "retreat_threshold": 0.61}
# every parameter at the bound the notes measure worst (aggression 0 -> 0.44, stealth 0 -> 0.46)
BAD = {"aggression": 0.0, "stealth": 0.0, "defense_radius": 6, "retreat_threshold": 0.0}
TRIAL_SEEDS = range(16)
GAME_SEEDS = 10  # per proposal: the same game seeds for both sides of a pair


def targets(strategy: dict, helpful: int = 2) -> list[dict]:
    """A bundle of one ``target:`` bullet per parameter, as the coach writes them."""
    return [
        {
            "id": i + 1,
            "kind": "bullet",
            "summary": f"Best-known {name}: {value}",
            "content": "",
            "tags": [f"param:{name}", f"target:{name}={value}"],
            "helpful": helpful,
            "harmful": 0,
        }
        for i, (name, value) in enumerate(strategy.items())
    ]


def score(strategy: dict, trial_seed: int) -> float:
    game = range(1000 * trial_seed, 1000 * trial_seed + GAME_SEEDS)
    return statistics.fmean(GRID.play(strategy, g)["score"] for g in game)


def paired_deltas(bundle: list[dict], incumbent: list[dict]) -> list[float]:
    return [
        score(trial.propose_under(GRID, bundle, s), s)
        - score(trial.propose_under(GRID, incumbent, s), s)
        for s in TRIAL_SEEDS
    ]


def test_a_proposal_is_deterministic_per_entries_and_seed_whatever_their_order():
    bundle = targets(OPTIMUM) + [
        {
            "id": 9,
            "kind": "dead_end",
            "summary": "Rolled back",
            "content": '{"aggression": 0.7, "stealth": 0.8, "defense_radius": 2, '
            '"retreat_threshold": 0.6}',
            "tags": ["dead-end"],
        }
    ]
    shuffled = list(bundle)
    random.Random(5).shuffle(shuffled)
    first = trial.propose_under(GRID, bundle, 3)
    assert trial.propose_under(GRID, bundle, 3) == first
    assert trial.propose_under(GRID, shuffled, 3) == first, "a bundle is its entries, not an order"
    assert trial.proposals_under(GRID, bundle, 3)[0] == first
    assert len({str(trial.propose_under(GRID, bundle, s)) for s in range(8)}) == 8
    assert trial.propose_under(GRID, [], 3) != first


def test_targets_are_a_prior_never_the_answer_and_unserved_entries_are_left_out():
    bundle = targets(OPTIMUM)
    batch = trial.proposals_under(GRID, bundle, 1)
    # 9 drawn around the targets, and one more keeping their integer (competitor.py)
    assert len(batch) == 10 and OPTIMUM not in batch
    assert batch[-1]["defense_radius"] == OPTIMUM["defense_radius"]
    for strategy in batch:  # drawn around the targets (5 % of each range)
        assert abs(strategy["aggression"] - 0.72) < 0.25 and abs(strategy["stealth"] - 0.78) < 0.25
    pending = [{**e, "status": "pending", "tags": e["tags"]} for e in targets(BAD)]
    assert trial.proposals_under(GRID, bundle + pending, 1) == batch


def test_a_bundle_naming_the_optimum_proposes_stronger_strategies_than_an_empty_one():
    deltas = paired_deltas(targets(OPTIMUM), [])
    assert statistics.fmean(deltas) > 0.08, deltas
    assert sum(d > 0 for d in deltas) >= 13, deltas


def test_a_bundle_steering_into_a_bad_region_proposes_weaker_strategies():
    deltas = paired_deltas(targets(BAD), [])
    assert statistics.fmean(deltas) < -0.06, deltas
    assert sum(d < 0 for d in deltas) >= 13, deltas
    # against the helpful bundle too: a coach edit that would make a good bundle harmful
    worse = paired_deltas(targets(BAD, helpful=5), targets(OPTIMUM))
    assert statistics.fmean(worse) < -0.1 and sum(d < 0 for d in worse) >= 14, worse


def test_an_identical_bundle_proposes_the_same_strategy_so_every_pair_ties():
    copy = [dict(e, tags=list(e["tags"])) for e in reversed(targets(OPTIMUM))]
    assert paired_deltas(copy, targets(OPTIMUM)) == [0.0] * len(TRIAL_SEEDS)


def test_dead_ends_in_the_bundle_are_avoided_as_the_competitor_avoids_them():
    bundle = targets(OPTIMUM)
    params = space.parameters(GRID.strategy_schema)
    before = trial.proposals_under(GRID, bundle, 2)
    dead = [
        {"id": 100 + i, "kind": "dead_end", "summary": "Rolled back", "content": str(s)}
        for i, s in enumerate(before)
    ]
    dead = [{**d, "content": d["content"].replace("'", '"')} for d in dead]
    after = trial.proposals_under(GRID, bundle + dead, 2)
    assert after and not any(near_any(s, before, params) for s in after)
    # a dead end whose content holds no strategy is no dead end (as in a run's context)
    junk = [{"id": 200, "kind": "dead_end", "summary": "x", "content": "not json"}]
    assert trial.proposals_under(GRID, bundle + junk, 2) == before


class _PickyGrid:
    """grid_ctf refusing about half its strategies (by the thousandths of aggression): some
    batch members are not playable."""

    name = GRID.name
    strategy_schema = GRID.strategy_schema

    def validate(self, strategy: dict) -> list[str]:
        found = GRID.validate(strategy)
        if int(strategy.get("aggression", 0) * 1000) % 2:
            found = [*found, "aggression: odd thousandths"]
        return found


def test_the_proposal_is_the_first_member_of_the_batch_the_scenario_accepts():
    """propose_under draws the batch member by member and stops at the first the scenario
    accepts: exactly the full batch's first valid member, with or without targets, dead ends
    and members the scenario refuses (a context trial plays it)."""
    picky = _PickyGrid()
    before = trial.proposals_under(GRID, targets(OPTIMUM), 2)
    dead = [
        {"id": 100 + i, "kind": "dead_end", "summary": "Rolled back", "content": str(s)}
        for i, s in enumerate(before[:4])
    ]
    dead = [{**d, "content": d["content"].replace("'", '"')} for d in dead]
    refused = 0
    for bundle in ([], targets(OPTIMUM), targets(BAD) + dead):
        for seed in range(12):
            batch = trial.proposals_under(GRID, bundle, seed)
            assert trial.propose_under(GRID, bundle, seed) == batch[0]
            accepted = trial.proposals_under(picky, bundle, seed)
            assert trial.propose_under(picky, bundle, seed) == accepted[0]
            refused += accepted[0] != batch[0]
    assert refused > 0, "some first members were refused: the later member was taken"
    covered = [{"id": 1, "kind": "dead_end", "summary": "x", "content": "{}"}]
    everything_refused = SimpleNamespace(
        name=GRID.name, strategy_schema=GRID.strategy_schema, validate=lambda s: ["no"]
    )
    with pytest.raises(trial.NoProposal):
        trial.propose_under(everything_refused, covered, 1)


def test_the_state_is_the_one_the_loop_builds_for_a_fresh_runs_first_attempt():
    assert trial.META_KEYS == loop_context.META_KEYS
    assert trial.HINTS_IN_CONTEXT == reflection.HINTS_IN_CONTEXT
    assert trial.DEAD_ENDS_IN_CONTEXT == reflection.DEAD_ENDS_IN_CONTEXT
    rng = random.Random(7)
    stored = []
    for i in range(1, 71):  # more hints and dead ends than a context holds, ties in evidence
        kind = ("bullet", "hint", "dead_end")[i % 3]
        name = rng.choice(list(OPTIMUM))
        stored.append(
            Entry(
                id=i,
                kind=kind,
                scope="scenario:grid_ctf",
                summary=f"entry {i}",
                content=f'{{"aggression": {rng.random():.3f}, "stealth": 0.5, '
                f'"defense_radius": 3, "retreat_threshold": 0.5}}'
                if kind == "dead_end"
                else "",
                why="",
                how_to_apply="",
                tags=[f"target:{name}={rng.random():.3f}"] if kind == "bullet" else ["t"],
                helpful=rng.randint(0, 3),
                harmful=rng.randint(0, 2),
                seen=rng.randint(1, 2),
            )
        )
    knowledge = reflection.Reflection._knowledge(SimpleNamespace(entries=stored))
    ctx = SearchContext(
        history=[],
        scenario=GRID.name,
        description=GRID.description,
        strategy_schema=GRID.strategy_schema,
        generation=1,
        attempt=0,
        incumbent=None,
        trajectory=[],
        **knowledge,
    )
    shuffled = [e.to_dict() for e in stored]
    random.Random(1).shuffle(shuffled)
    assert trial.fresh_state(GRID, shuffled) == ctx.state()
    assert trial.fresh_state(GRID, stored) == ctx.state()


@pytest.mark.parametrize("scenario", ["grid_ctf", "negotiation"])
def test_the_first_batch_is_what_a_fresh_run_under_that_knowledge_screens_first(
    home, cli, scenario
):
    with open_store() as store:  # a run whose coach writes targets, hints and dead ends
        Runner(store, create_or_reuse(store, scenario, 6, {"seed": 3})).execute()
    listed = cli("playbook", "list", scenario, "--json").json()
    loaded = registry.load(scenario)
    params = space.parameters(loaded.strategy_schema)
    found, _ = guidance([e for e in listed if e["kind"] == "bullet"], params)
    assert found, "the first run left targets: the batch is drawn around them"
    with open_store() as store:
        served = knowledge_entries.active(store, knowledge_entries.scenario_scope(scenario))
        fresh = create_or_reuse(store, scenario, 1, {"seed": 11, "carry_incumbent": False})
        Runner(store, fresh).execute()
        screened = [
            run_store.loads(r["strategy_json"])
            for r in run_store.screenings(store, fresh, 1)
            if r["attempt"] == 0
        ]
    seed = seeds.call_seed(11, 1, 0, "competitor")
    assert screened == trial.proposals_under(loaded, listed, seed)
    assert screened == trial.proposals_under(loaded, served, seed)
    assert screened[0] == trial.propose_under(loaded, listed, seed)
