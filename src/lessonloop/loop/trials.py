"""Context trials inside a run (issue 23, ``--context-trials screen|full``): the coach's edits
that the curator accepted no longer change what is served directly. They make a candidate
bundle (the entries the competitor is served now, with the edits applied), which is trialled
against the served bundle by the promotion gate; only an accepted candidate's edits go through
admission (and the candidate becomes the scope's active context bundle).

A trial pair: for a trial seed, the offline competitor proposes under each bundle
(``providers/local/trial.propose_under``, deterministic per seed; a model competitor answers
one call per side in the generation's context with that side's bundle, within the run's
``--max-calls``: ``_asked_under``) and each proposal is played
on ``TRIAL_GAMES`` game seeds of that trial seed through the run's own match pool (phase
``trial``, side ``candidate`` or ``incumbent``: sandboxed and on record like every play);
a side's score is the mean of its games (where both sides propose the same strategy, it is
played once and the pair's delta is 0; where the offline competitor proposes the same under
both bundles on every screen seed, nothing is played: the candidate is rejected at the screen,
``not played``, as its deltas of 0 would have it: ``all_alike``). ``full`` runs the gate's
stages (``gate.judge``);
``screen`` decides on the screen stage alone (``judge(..., through=SCREEN)``: accept when its
mean paired delta is above 0).

The trial runs before the generation's transaction and its matches are the generation's; the
candidate, every trial, the verdict, the admitted edits and the activation are written in that
transaction. So a stop never leaves a candidate half-judged: a run killed before the commit
redoes the generation, and with it the trial, on the same seeds first thing on resume.
The same generation plays the probation pairs of what the scope activated recently
(``promotion/probation.py``, ``_probation_pairs``), stored in the same transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..knowledge import edits
from ..knowledge.entries import fingerprint
from ..promotion import bundles, probation, records
from ..promotion import gate as promotion
from ..providers.local.trial import NoProposal, propose_under
from . import seeds
from .pool import MatchPool

OFF, SCREEN, FULL = "off", "screen", "full"
# a trial seed -> the strategy a side proposes for it (None: nothing playable)
Proposer = Callable[[int], dict | None]
TRIAL_GAMES = 3  # game seeds per proposal and trial seed


@dataclass
class ContextTrial:
    """A judged candidate bundle, ready to be stored in the generation's transaction."""

    candidate: list[dict]
    served: list[dict]
    candidate_id: str
    served_id: str
    verdict: promotion.Verdict

    def record(self, conn: Any, scope: str, run_id: str, index: int) -> int:
        """Store both bundles, the candidate, its trials and the verdict; the candidate's id."""
        bundles.save(conn, scope, self.served)
        bundles.save(conn, scope, self.candidate)
        number = records.add_candidate(
            conn,
            scope,
            "context",
            "bundle",
            self.candidate_id,
            "coach",
            run_id,
            index,
            incumbent_ref=self.served_id,
        )
        records.record_verdict(conn, number, self.verdict)
        return number


def served_bundle(knowledge: dict) -> list[dict]:
    """The entries the competitor is served (``Reflection._knowledge()``), as bundle dicts."""
    return [
        entry.to_dict()
        for kind in ("playbook", "hints", "dead_ends")
        for entry in knowledge.get(kind, [])
    ]


def with_edits(
    served: list[dict], proposed: list, curator_text: str, scope: str, where: dict
) -> list[dict]:
    """``served`` with the curator's accepted coach edits applied as admission would apply
    them (``knowledge/edits.apply``): an update rewrites its bullet, a removal drops it, an
    addition is a new entry unless one with its fingerprint is there (admission merges it)."""
    bundle = [dict(e) for e in served]
    next_id = max((int(e.get("id") or 0) for e in bundle), default=0) + 1
    known = {fingerprint(e["kind"], e["summary"], e["content"] or "", e["tags"]) for e in bundle}
    verdicts = edits.curator_verdicts(curator_text, len(proposed))
    for edit, verdict in zip(proposed, verdicts, strict=True):
        proposal = edits.proposal_from_edit(edit, verdict, scope, where)
        if proposal is None:
            continue
        target = edits.entry_id(edit.get("id"))
        fields = {"summary": proposal.summary, "content": proposal.content, "tags": proposal.tags}
        if edit.get("op") == "update_bullet" and target is not None:
            bundle = [{**e, **fields} if e.get("id") == target else e for e in bundle]
        elif edit.get("op") == "remove_bullet" and target is not None:
            bundle = [e for e in bundle if not (e.get("id") == target and e["kind"] == "bullet")]
        elif edit.get("op") in edits.EDIT_KINDS:
            key = fingerprint(proposal.kind, proposal.summary, proposal.content, proposal.tags)
            if key in known:
                continue
            known.add(key)
            bundle.append(
                {
                    "id": next_id,
                    "kind": proposal.kind,
                    "status": "active",
                    "helpful": 0,
                    "harmful": 0,
                    "seen": 1,
                    **fields,
                }
            )
            next_id += 1
    return bundle


class ContextTrials:
    """The part of ``loop/runner.Runner`` that trials a candidate bundle. Needs the run's
    ``scenario``, ``run`` row, ``options`` and ``_play`` (``loop/tournament.Tournament``)."""

    scenario: Any
    run: Any
    run_id: str
    options: Any
    scope: str
    store: Any
    entries: list
    providers: dict
    budget: Any
    _play: Callable[..., list]
    _knowledge: Callable[[], dict]
    _call: Callable[..., Any]
    trials: str  # the mode in force: the run's option, "off" on a route that cannot trial

    def _context_trial(
        self,
        pool: MatchPool,
        index: int,
        attempt: int,
        knowledge: dict,
        proposed: list,
        curator_text: str,
        match_rows: list,
        ctx: Any = None,
        calls: list | None = None,
    ) -> ContextTrial | None:
        """Trial the candidate bundle the accepted edits make; None when they change nothing
        the competitor is served (no accepted edit, or only merges into what is there).
        With a model competitor, each side's proposal for a trial seed is one competitor call
        in this generation's context ``ctx`` with the side's bundle as its knowledge (recorded
        in ``calls``); a trial the call budget left cannot cover is not played: the candidate
        is rejected, saying so."""
        where = {"run_id": self.run_id, "generation_index": index}
        served = served_bundle(knowledge)
        candidate = with_edits(served, proposed, curator_text, self.scope, where)
        served_id, candidate_id = bundles.bundle_id(served), bundles.bundle_id(candidate)
        if candidate_id == served_id:
            return None
        scores: dict[tuple[str, int], float] = {}
        through = promotion.HOLDOUT if self.trials == FULL else promotion.SCREEN
        alike = None
        if self.providers["competitor"].name == "local":
            proposers = {
                promotion.CANDIDATE: _under(self.scenario, candidate),
                promotion.INCUMBENT: _under(self.scenario, served),
            }
            alike = lambda seed_list: all_alike(proposers, seed_list)  # noqa: E731
        else:
            short = self._calls_short(through)
            if short is not None:
                return ContextTrial(candidate, served, candidate_id, served_id, short)
            proposers = {
                promotion.CANDIDATE: self._asked_under(candidate, ctx, calls),
                promotion.INCUMBENT: self._asked_under(served, ctx, calls),
            }

        def play_seeds(seed_list: list[int]) -> None:
            scores.update(self._play_sides(pool, proposers, seed_list, attempt, match_rows))

        key = f"context:{self.run['seed']}:{index}:{candidate_id}:{served_id}"
        verdict = promotion.judge(
            lambda side, seed: scores[side, seed],
            key,
            self.options.min_delta,
            prepare=play_seeds,
            through=through,
            alike=alike,
        )
        verdict.rationale = f"{candidate_id} against the served {served_id}: {verdict.rationale}"
        return ContextTrial(candidate, served, candidate_id, served_id, verdict)

    def _calls_short(self, through: str) -> promotion.Verdict | None:
        """A rejection when the call budget left cannot pay for the trial's stages (two calls
        a pair: one per side), else None."""
        needed = 2 * (
            promotion.SCREEN_PAIRS if through == promotion.SCREEN else promotion.MAX_PAIRS
        )
        left = self.budget.remaining()["calls"]
        if left is None or left >= needed:
            return None
        return promotion.Verdict(
            promotion.REJECT,
            promotion.SCREEN,
            "not played",
            f"not trialled: {left} calls left of --max-calls, the trial needs up to {needed} "
            "(what is served stays as it is)",
        )

    def _asked_under(self, bundle: list[dict], ctx: Any, calls: list | None) -> Proposer:
        """What the model competitor proposes for a trial seed in ``ctx`` when served
        ``bundle``: one call, seeded by the trial seed, and the first strategy of its answer
        the scenario accepts (clamped into bounds; the current best or this generation's tries
        count too: the question is what the context makes it propose). An answer with none
        proposes nothing (None: the side scores 0 on that seed)."""
        from dataclasses import replace

        from ..scenarios import code
        from . import prompts
        from .answers import clamp_to_bounds, strategy_candidates
        from .reflection import in_context

        served = replace(ctx, **in_context(bundle_entries(bundle, self.scope)))
        schema = self.scenario.strategy_schema

        def propose(seed: int) -> dict | None:
            answer = self._call("competitor", served, prompts.competitor(served), calls, seed=seed)
            for candidate in strategy_candidates(answer):
                strategy, _ = clamp_to_bounds(candidate, schema)
                if not code.problems(self.scenario, strategy):
                    return strategy
            return None

        return propose

    def _play_sides(
        self,
        pool: MatchPool,
        proposers: dict[str, Proposer],
        seed_list: list[int],
        attempt: int,
        match_rows: list,
    ) -> dict[tuple[str, int], float]:
        """Each side's score on each trial seed: the mean of its proposal's ``TRIAL_GAMES``
        games through the run's pool (phase ``trial``); a side with nothing to propose scores
        0, the lowest a match can; where both sides propose one strategy it is played once."""
        scores: dict[tuple[str, int], float] = {}
        jobs, labels = [], []
        same: list[int] = []
        for seed in seed_list:
            games = seeds.trial_game_seeds(seed, TRIAL_GAMES)
            proposals: dict[str, dict] = {}
            for side, propose in proposals_of(proposers, seed).items():
                if propose is None:  # nothing to play: the lowest score a match can have
                    scores[side, seed] = 0.0
                else:
                    proposals[side] = propose
            for side, strategy in proposals.items():
                if side == promotion.INCUMBENT and strategy == proposals.get(promotion.CANDIDATE):
                    same.append(seed)
                    continue
                jobs += [(strategy, g) for g in games]
                labels += [(side, seed)] * len(games)
        results = self._play(pool, jobs, attempt, "trial", [s for s, _ in labels], match_rows)
        played: dict[tuple[str, int], list[float]] = {}
        for label, result in zip(labels, results, strict=True):
            played.setdefault(label, [])
            if result.error is None:
                played[label].append(result.score)
        for label, values in played.items():
            scores[label] = sum(values) / len(values) if values else 0.0
        for seed in same:
            scores[promotion.INCUMBENT, seed] = scores[promotion.CANDIDATE, seed]
        return scores

    def _probation_pairs(
        self, pool: MatchPool, attempt: int, match_rows: list, ctx: Any, calls: list
    ) -> list[tuple[probation.Watch, list[promotion.Trial]]]:
        """This generation's probation pairs for each of the scope's pointers on probation
        (``promotion/probation.py``): the active one (candidate) against the one it replaced
        (incumbent), played as context trials are (with a model competitor, two calls a pair,
        in ``ctx``); stored by ``probation.step`` in the generation's transaction. A pointer
        whose sides cannot be rebuilt, or whose calls the budget left cannot pay, is not
        watched this generation."""
        done = []
        trained = self.providers["competitor"].name == "trained"
        for watch in probation.watching(self.store.conn, self.scope):
            if trained and watch.role == "context":
                continue  # a checkpoint reads no context: its runs cannot tell bundles apart
            proposers = self._probation_sides(watch, ctx, calls)
            if proposers is None:
                continue
            scores = self._play_sides(pool, proposers, watch.seeds, attempt, match_rows)
            played = [
                promotion.Trial(
                    probation.STAGE,
                    seed,
                    scores[promotion.CANDIDATE, seed],
                    scores[promotion.INCUMBENT, seed],
                )
                for seed in watch.seeds
            ]
            done.append((watch, played))
        return done

    def _probation_sides(
        self, watch: probation.Watch, ctx: Any, calls: list
    ) -> dict[str, Proposer] | None:
        """Proposers for the active ref and the one it replaced: bundles under the run's
        competitor (context), or checkpoints (competitor; before any, the offline agent under
        the served context)."""
        conn = self.store.conn
        leaving = records.candidate(conn, watch.candidate_id) or {}
        before = watch.previous_ref or leaving.get("incumbent_ref")
        if watch.role == "context":
            now = bundles.load(conn, watch.ref)
            then = bundles.load(conn, before) if before else None
            if now is None or then is None:
                return None
            if self.providers["competitor"].name == "local":
                return {
                    promotion.CANDIDATE: _under(self.scenario, now),
                    promotion.INCUMBENT: _under(self.scenario, then),
                }
            left = self.budget.remaining()["calls"]
            if left is not None and left < 2 * probation.PAIRS:
                return None
            return {
                promotion.CANDIDATE: self._asked_under(now, ctx, calls),
                promotion.INCUMBENT: self._asked_under(then, ctx, calls),
            }
        from ..training import registry
        from ..training import trial as training_trial

        current = registry.get(conn, watch.ref)
        previous = registry.get(conn, before) if before else None
        if current is None:
            return None
        entries = self.entries  # what the scope serves now (a lora model's prompt reads it)
        return {
            promotion.CANDIDATE: training_trial.checkpoint_proposer(
                current, self.scenario, entries
            ),
            promotion.INCUMBENT: (
                training_trial.checkpoint_proposer(previous, self.scenario, entries)
                if previous is not None
                else _under(self.scenario, served_bundle(self._knowledge()))
            ),
        }


def proposals_of(proposers: dict[str, Proposer], seed: int) -> dict[str, dict | None]:
    """Each side's proposal for ``seed``; None where it proposed nothing playable (a
    ``NoProposal``, or a trained model's answer without a strategy)."""
    found: dict[str, dict | None] = {}
    for side, propose in proposers.items():
        try:
            found[side] = propose(seed)
        except NoProposal:
            found[side] = None
    return found


def all_alike(proposers: dict[str, Proposer], seed_list: list[int]) -> bool:
    """Whether both sides propose the same (or both nothing) for every seed: every pair a
    tie before a game is played. The offline competitor proposes from the bundle's targets,
    directions and dead ends only, so most edits the coach makes (evidence counts, wording, a
    hint) change none of its proposals: in a 30-generation grid_ctf run 27 of 30 candidates,
    whose 486 trial plays (a sixth of the run's) could only measure deltas of 0 (issue 18).
    Only for proposers that cost no calls (a model's would be asked twice)."""
    for seed in seed_list:
        found = proposals_of(proposers, seed)
        if found[promotion.CANDIDATE] != found[promotion.INCUMBENT]:
            return False
    return True


def bundle_entries(bundle: list[dict], scope: str) -> list[Any]:
    """A bundle's entries as the store's ``Entry`` objects, numbered in order (the context
    reads ids, kinds, texts, tags and evidence)."""
    from ..knowledge.entries import Entry

    return [
        Entry(
            id=int(entry.get("id") or position + 1),
            kind=str(entry["kind"]),
            scope=scope,
            summary=str(entry.get("summary", "")),
            content=str(entry.get("content") or ""),
            why=str(entry.get("why") or ""),
            how_to_apply=str(entry.get("how_to_apply") or ""),
            tags=[str(tag) for tag in entry.get("tags") or []],
            helpful=int(entry.get("helpful") or 0),
            harmful=int(entry.get("harmful") or 0),
            seen=int(entry.get("seen") or 1),
        )
        for position, entry in enumerate(bundle)
        if entry.get("status", "active") == "active"
    ]


def _under(scenario: Any, bundle: list[dict]) -> Proposer:
    """What the offline competitor proposes for a trial seed when served ``bundle``."""
    return lambda seed: propose_under(scenario, bundle, seed)
