"""The generation loop for scenarios, resumable after any crash.

For each generation: build the context, ask the competitor (translator if needed), validate,
screen when the answer carries several candidates, play a paired tournament against the
incumbent, gate (advance / retry / rollback, holdout check before any advance), reflect
(analyst, coach, curator), then persist everything in one transaction before writing
artifacts and events. A crash loses at most the generation in flight; resuming redoes it with
the same seeds, so the run ends as if never interrupted.

Screening: an answer may carry several valid new strategies (the offline agent answers
attempt 0 with a batch; a model may too). Each candidate (at most ``SCREEN_CAP``) is played
once on the attempt's ``SCREEN_SEEDS`` screening seeds, and the incumbent once on the same
seeds, so each candidate gets a mean paired delta in which each seed's shared luck cancels.
Only the best-measured candidate goes to the gate, which judges it on training and holdout
seeds of its own (screening seeds never overlap them or the validation seeds: loop/seeds.py),
so screening chooses *which* candidate is judged, never *whether* one advances: the gate's
stated error rate holds as before. Every screening play is a match on record (phase
``screen``, side ``candidate:<i>`` or ``incumbent``) and counts in the play budget; each
screened candidate is stored (``screenings``) and told to the offline agent's optimizer in
the run's history (rebuilt from the store on resume), beside every gate decision.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import config
from ..errors import LessonloopError, UsageError
from ..knowledge import entries as knowledge_entries
from ..knowledge.render import write_views
from ..promotion import charter
from ..providers.registry import build_routes
from ..scenarios import registry
from ..store import runs as run_store
from ..store.db import Store
from ..timeutil import utc_now
from . import artifacts, elo, gate
from .answers import REPEATS, SCREEN_CAP, Answers, clamp_to_bounds, strategy_candidates
from .context import Context, Step, strategy_words
from .creation import best_known_strategy, create_or_reuse
from .lifecycle import RunLifecycle, RunStopped, completed_payload, run_lock, run_summary
from .options import (
    BUDGETS,
    FLAGS,
    MAX_ITERATIONS,
    MAX_MATCHES,
    MAX_RETRIES,
    MAX_TIMEOUT,
    MAX_WORKERS,
    RunOptions,
    check_iterations,
)
from .pool import MatchPool
from .pool import mean_score as pool_mean_score
from .reflection import Reflection
from .request import RUN_ID, check_run_id, new_run_id
from .runlock import is_active
from .tournament import SCREEN_SEEDS, VALIDATION_SEEDS, Tournament, screened_entry
from .trials import OFF, ContextTrial, ContextTrials

__all__ = [  # importable from here, as before the engine was split by concept
    "BUDGETS",
    "FLAGS",
    "MAX_ITERATIONS",
    "MAX_MATCHES",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "MAX_WORKERS",
    "REPEATS",
    "RUN_ID",
    "SCREEN_CAP",
    "SCREEN_SEEDS",
    "VALIDATION_SEEDS",
    "NoValidStrategy",
    "RunOptions",
    "RunStopped",
    "Runner",
    "SearchContext",
    "artifacts",
    "best_known_strategy",
    "build_routes",
    "check_iterations",
    "check_run_id",
    "clamp_to_bounds",
    "create_or_reuse",
    "is_active",
    "new_run_id",
    "run_lock",
    "run_summary",
    "strategy_candidates",
]

NO_STRATEGY_LIMIT = 2  # generations without any valid strategy after which a run fails


@dataclass
class SearchContext(Context):
    """The competitor's context plus the run's history: every played attempt of the finished
    generations in order ({"strategy", "mean_delta", "decision"}), rebuilt from the store on
    resume. Only the offline agent reads it (as ``Request.state["history"]``): its optimizer
    is rebuilt from it, so a resumed run proposes exactly what an uninterrupted one would.
    Models get the same facts in words, as before."""

    history: list = field(default_factory=list)

    def state(self) -> dict:
        return {**super().state(), "history": self.history}


class NoValidStrategy(LessonloopError):
    """The competitor never produced a strategy that could be played."""


class Runner(RunLifecycle, Answers, Tournament, Reflection, ContextTrials):
    """A scenario run: its generations, in the lifecycle every run shares
    (``loop/lifecycle.py``); asking (``loop/answers.py``), playing (``loop/tournament.py``)
    and learning (``loop/reflection.py``) each in a module of its own."""

    defers_writes = True

    def __init__(self, store: Store, run_id: str, observer: Callable[[dict], None] | None = None):
        super().__init__(store, run_id, observer)
        self.options = RunOptions(**run_store.loads(self.run["config_json"]))
        self.max_calls, self.max_tokens = self.options.max_calls, self.options.max_tokens
        self.target: int | None = None
        # the scope's active knowledge as of the last generation's end, and the views written
        self.entries: list[knowledge_entries.Entry] = []
        self.views: dict = {}

    def execute(self, target: int | None = None) -> dict:
        """Run the remaining generations (up to ``target`` when given) and return the summary."""
        self.target = target
        return super().execute()

    # the lifecycle's hooks ---------------------------------------------------------------------
    def prepare(self, done: list) -> None:
        target = self.target
        if target is not None and target != self.run["target_generations"]:
            if target < len(done):
                raise UsageError(
                    f"run {self.run_id} already has {len(done)} generations; "
                    "{field} cannot be lower",
                    field="iterations",
                )
            run_store.set_status(
                self.store,
                self.run_id,
                self.run["status"],
                self.run["stop_reason"],
                target_generations=target,
            )
            self.run = run_store.get_run(self.store, self.run_id)
        self.scenario = registry.load(self.run["scenario_ref"])
        settings = config.load()
        self.providers = self.meter(build_routes(self._routes(), settings))
        self.charter = charter.from_table(dict(settings.promotion), str(config.config_path()))
        self.epoch = registry.evaluator_epoch(self.scenario)
        self.scope = knowledge_entries.scenario_scope(self.scenario.name)
        self.trials = self.options.context_trials
        if self.trials != OFF and self.providers["competitor"].name == "trained":
            sys.stderr.write(
                f"context trials ({self.trials}) do not apply to a trained checkpoint, which "
                f"reads no context; run {self.run_id} goes without them\n"
            )
            self.trials = OFF
        elif self.trials != OFF and self.providers["competitor"].name != "local":
            if self.max_calls is None:  # each trial pair is two competitor calls
                sys.stderr.write(
                    f"context trials ({self.trials}) with a model competitor cost two calls a "
                    f"pair: give the run a --max-calls budget; run {self.run_id} goes without "
                    "them\n"
                )
                self.trials = OFF

    def start_payload(self, done: list) -> dict:
        return {
            "scenario": self.scenario.name,
            "target_generations": self.run["target_generations"],
            "completed_generations": len(done),
            "provider": self.options.provider or "local",
        }

    def play(self) -> None:
        # Artifacts, Markdown views and events are written in order while the next
        # generation's matches run. All are derived from the database: resume writes
        # whatever a crash left unwritten.
        self.pool = MatchPool(
            self.run["scenario_ref"], self.options.workers, self.options.match_timeout
        )
        target = self.run["target_generations"]
        first = len(self.trajectory) + 1
        for index in range(first, target + 1):
            self._generation(self.pool, index)
            self._check_any_strategy(index, target)

    def release(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.close()

    def _check_any_strategy(self, index: int, target: int) -> None:
        """A run whose competitor has produced no valid strategy in its first generations
        (or in all of them) fails with the reason, instead of completing with nothing played."""
        if index < min(target, NO_STRATEGY_LIMIT):
            return
        if any(step["strategy"] is not None for step in self.trajectory):
            return
        raise NoValidStrategy(
            f"no attempt produced a valid strategy in {index} generation"
            f"{'s' if index > 1 else ''}; the last: {self.last_problem}. Check the competitor's "
            "route with `lessonloop doctor`"
        )

    # state --------------------------------------------------------------------------------

    # state --------------------------------------------------------------------------------
    def restore(self, done: list) -> None:
        self._refresh_knowledge(write=write_views)
        start = self.options.start_incumbent
        self.incumbent: dict | None = (
            {"strategy": start["strategy"], "score": start["score"]} if start else None
        )
        self.incumbent_key = "start" if start else None  # names the incumbent in the ratings
        self.elo = elo.START
        self.best_score = 0.0
        self.trajectory: list[Step] = []
        self.last_analysis = ""
        # validated scores and ratings, rebuilt from the stored validation matches
        self.ratings = elo.Ratings()
        self.validated: dict[str, float] = {}
        self.history: list[dict] = []
        self._remember(
            run_store.gate_decisions(self.store, self.run_id),
            run_store.screenings(self.store, self.run_id),
        )
        played: dict[tuple[int, str], list] = {}
        for match in run_store.validation_matches(self.store, self.run_id):
            played.setdefault((match["generation_index"], match["side"]), []).append(
                None if match["error"] else match["score"]
            )
        for generation in done:
            index = generation["generation_index"]
            if (index, "incumbent") in played and self.incumbent_key:
                self._rate(self.incumbent_key, played[index, "incumbent"])
            if (index, "challenger") in played:
                self._rate(f"gen:{index}", played[index, "challenger"])
            self._advance_state(
                index,
                run_store.loads(generation["strategy_json"]),
                generation["mean_score"],
                generation["mean_delta"],
                generation["gate_decision"],
                generation["elo"],
                generation["best_score"],
                generation["analysis"],
            )

    def _advance_state(
        self, index, strategy, mean_score, mean_delta, decision, rating, best_score, analysis
    ) -> None:
        compared_to = self.incumbent["strategy"] if self.incumbent else None
        if decision == gate.ADVANCE:
            self.incumbent = {"strategy": strategy, "score": mean_score}
            self.incumbent_key = f"gen:{index}"
        self.elo, self.best_score, self.last_analysis = rating, best_score, analysis
        self.trajectory.append(
            Step(
                {
                    "generation": index,
                    "strategy": strategy,
                    "compared_to": compared_to,
                    "mean_score": mean_score,
                    "mean_delta": mean_delta,
                    "gate_decision": decision,
                }
            )
        )

    def _remember(self, decisions: list, screened: list) -> None:
        """Add stored gate decisions and screened candidates of played attempts to the search
        history, in the order they were measured (an attempt's screening before its gate)."""
        events = [
            (
                (d["generation_index"], d["attempt"], 1),
                {
                    "strategy": run_store.loads(_column(d, "strategy_json")),
                    "mean_delta": d["mean_delta"],
                    "pairs": _column(d, "pairs"),
                    "decision": d["decision"],
                },
            )
            for d in decisions
        ]
        events += [
            (
                (c["generation_index"], c["attempt"], 0),
                screened_entry(
                    {
                        "strategy": run_store.loads(c["strategy_json"]),
                        "mean_delta": c["mean_delta"],
                        "pairs": c["pairs"],
                    }
                ),
            )
            for c in screened
        ]
        events.sort(key=lambda e: e[0])  # stable: rows keep their stored order within a kind
        self.history.extend(e for _, e in events if e["strategy"] is not None)

    # one generation -----------------------------------------------------------------------
    def _generation(self, pool: MatchPool, index: int) -> None:
        started = time.perf_counter()
        created_at = utc_now()
        self._emit("generation_started", generation=index)
        calls: list[dict] = []
        match_rows: list[dict] = []
        decisions: list[dict] = []
        tried: list[dict] = []
        failure = ""
        final = None  # (strategy, tournament outcome, context manifest) of the last played attempt
        knowledge = self._knowledge() if self.options.knowledge else {}
        base = SearchContext(
            history=list(self.history),
            scenario=self.scenario.name,
            description=self.scenario.description,
            strategy_schema=self.scenario.strategy_schema,
            generation=index,
            attempt=0,
            incumbent=self.incumbent,
            trajectory=self.trajectory,
            last_analysis=self.last_analysis,
            budget=self.options.context_budget,
            **knowledge,
        )
        screened: list[dict] = []  # this generation's screened candidates, in order
        for attempt in range(self.options.max_retries + 1):
            retries_left = self.options.max_retries - attempt
            ctx = base.for_attempt(attempt, failure, tried)
            ctx.history = base.history + [screened_entry(c) for c in screened]
            manifest = ctx.manifest()
            strategies, problem = self._attempt_strategies(ctx, calls)
            strategy = strategies[0] if strategies else None
            if len(strategies) > 1:  # several candidates: the best screened goes to the gate
                strategy, rows = self._screen(pool, index, attempt, strategies, match_rows)
                screened.extend(rows)
            if strategy is None:
                decision = gate.invalid(problem, retries_left)
                decisions.append(self._decision_row(attempt, decision))
                failure = f"Attempt {attempt} was rejected: {problem}."
                if decision.decision == gate.ROLLBACK:
                    break
                continue
            outcome = self._tournament(pool, index, attempt, strategy, retries_left, match_rows)
            decision, paired, holdout = outcome["decision"], outcome["paired"], outcome["holdout"]
            tried.append(
                {
                    "strategy": strategy,
                    "mean_delta": paired.mean_delta if paired else None,
                    "pairs": paired.pairs if paired else None,
                }
            )
            decisions.append(
                {**self._decision_row(attempt, decision, paired, holdout), "strategy": strategy}
            )
            if problem:  # what was repaired in the answer, on record with the decision
                decisions[-1]["rationale"] = f"{problem}; {decisions[-1]['rationale']}"
            final = (strategy, outcome, manifest)
            if decision.decision != gate.RETRY:
                break
            failure = (
                f"Attempt {attempt} with strategy {strategy_words(strategy)} "
                f"was not accepted: {decision.rationale}. Dimension means: challenger "
                f"{_fmt_dims(outcome['challenger_dims'])}, incumbent "
                f"{_fmt_dims(outcome['incumbent_dims'])}. Try a different direction."
            )
        self.last_problem = decisions[-1]["rationale"]
        self._finish_generation(
            index,
            started,
            created_at,
            final,
            decisions,
            calls,
            match_rows,
            manifest if final is None else final[2],
            base,
            screened,
        )

    def _finish_generation(
        self,
        index,
        started,
        created_at,
        final,
        decisions,
        calls,
        match_rows,
        manifest,
        base: Context,
        screened: list,
    ) -> None:
        self.write_all()  # what the matches left no time for: files lag one generation at most
        if match_rows and all(m["error"] for m in match_rows):
            raise LessonloopError(
                f"every match in generation {index} failed; the scenario is "
                f"broken: {match_rows[0]['error']}"
            )
        last = decisions[-1]
        if final is None:  # no attempt produced a playable strategy
            strategy, outcome = None, None
            mean_score, incumbent_score, paired = 0.0, None, None
            dims: dict = {}
        else:
            strategy, outcome, _ = final
            mean_score = pool_mean_score(outcome["challenger"])
            incumbent_score = (
                pool_mean_score(outcome["incumbent"]) if outcome["incumbent"] else None
            )
            paired = outcome["paired"]
            dims = outcome["challenger_dims"]
        decision = last["decision"]
        # scores that are true: the incumbent after this generation, on the validation seeds
        if (
            self.incumbent is not None
            and self.incumbent_key is not None  # (set with the incumbent)
            and self.incumbent_key not in self.ratings
        ):
            self._validate(
                self.pool,
                self.incumbent_key,
                self.incumbent["strategy"],
                "incumbent",
                last["attempt"],
                match_rows,
            )  # a carried-over start, once
        key = self.incumbent_key
        if decision == gate.ADVANCE and strategy is not None:
            key = f"gen:{index}"
            self._validate(self.pool, key, strategy, "challenger", last["attempt"], match_rows)
        validated = self.validated.get(key) if key else None
        rating = self.ratings.rating(key) if key else elo.START
        best = validated if validated is not None else 0.0
        # the reflection prompts read the scenario, trajectory, incumbent and playbook
        reflection_ctx = base.for_attempt(last["attempt"])
        summary = {
            "decision": decision,
            "rationale": last["rationale"],
            "challenger": strategy,
            "incumbent": self.incumbent["strategy"] if self.incumbent else None,
            "challenger_score": mean_score,
            "incumbent_score": incumbent_score,
            "mean_delta": paired.mean_delta if paired else None,
            "wins": paired.wins if paired else 0,
            "losses": paired.losses if paired else 0,
            "challenger_dimensions": dims,
            "incumbent_dimensions": outcome["incumbent_dims"] if outcome else {},
            # no validated score: validation seeds only report, so nothing the reflection
            # roles (and through the playbook, the competitor) see may depend on them
        }
        analysis, curator_text = "", ""
        proposed: list[Any] = []
        trial: ContextTrial | None = None
        if final is not None:  # reflect only on what was played
            analysis, proposed, curator_text = self._reflect(reflection_ctx, summary, calls)
            if proposed and self.trials != OFF and self.options.knowledge:
                trial = self._context_trial(
                    self.pool,
                    index,
                    last["attempt"],
                    self._knowledge(),
                    proposed,
                    curator_text,
                    match_rows,
                    reflection_ctx,
                    calls,
                )
        # probation: runs with context trials watch what was activated; a checkpoint's runs
        # (no context trials: it reads no context) watch the checkpoint
        watches = self.trials != OFF or self.providers["competitor"].name == "trained"
        watched = (
            self._probation_pairs(self.pool, last["attempt"], match_rows, reflection_ctx, calls)
            if final is not None and watches and self.options.knowledge
            else []
        )
        record = run_store.GenerationRecord(
            run_id=self.run_id,
            generation_index=index,
            attempts=len(decisions),
            strategy=strategy,
            mean_score=mean_score,
            incumbent_score=incumbent_score,
            mean_delta=paired.mean_delta if paired else None,
            best_score=best,
            elo=rating,
            wins=paired.wins if paired else 0,
            losses=paired.losses if paired else 0,
            ties=paired.ties if paired else 0,
            quarantined=sum(1 for m in match_rows if m["error"]),
            gate_decision=decision,
            evaluator_epoch=self.epoch,
            dimensions=dims,
            context=manifest,
            analysis=analysis,
            duration_seconds=round(time.perf_counter() - started, 4),
            created_at=created_at,
            matches=match_rows,
            role_calls=calls,
            decisions=decisions,
            validated_score=validated,
            screenings=screened,
        )
        with self.store.transaction():  # the generation and what it taught, atomically
            self.record_calls()
            run_store.save_generation(self.store, record)
            if self.options.knowledge:  # a run that reads no knowledge writes none either
                # evidence only from a conclusive comparison, at the gate's confidence either
                # way: an advance, or a rollback whose challenger measurably lost; what the
                # gate could not tell apart says nothing about the bullets
                conclusive = paired is not None and (decision == gate.ADVANCE or paired.lost())
                self._learn(
                    index,
                    decision,
                    conclusive,
                    summary,
                    manifest,
                    proposed,
                    curator_text,
                    trial,
                    watched,
                )
        saved = run_store.get_generation(self.store, self.run_id, index)
        assert saved is not None  # saved just above
        self._remember(
            self.store.query(
                "SELECT * FROM gate_decisions WHERE run_id = ? AND generation_index = ? "
                "ORDER BY attempt, id",
                (self.run_id, index),
            ),
            run_store.screenings(self.store, self.run_id, index),
        )
        # continue from what was stored (redacted), so a resumed run sees exactly the same
        self._advance_state(
            index,
            run_store.loads(saved["strategy_json"]),
            mean_score,
            record.mean_delta,
            decision,
            rating,
            best,
            saved["analysis"],
        )
        self.write_later(
            artifacts.write_generation,
            self.run_dir,
            saved,
            run_store.matches(self.store, self.run_id, index),
        )
        if self.options.knowledge:
            self._refresh_knowledge(write=lambda texts: self.write_later(write_views, texts))
        self._emit(
            "generation_completed",
            **completed_payload(saved),
            rationale=last["rationale"],
            reason=last.get("reason") or "",
        )

    def _routes(self) -> dict[str, config.Route]:
        """The routes fixed at creation (a run from before routing sends every role to its
        one provider)."""
        if self.options.routes:
            return {role: config.Route(**route) for role, route in self.options.routes.items()}
        return {role: config.Route(self.options.provider or "local") for role in config.ROLES}


def _column(row, key: str):
    try:
        return row[key]
    except (IndexError, KeyError):
        return None


def _fmt_dims(dims: dict) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in dims.items()) or "none"
