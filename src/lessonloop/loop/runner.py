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

import fcntl
import json
import math
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import canonical, config, paths, state_block
from ..errors import (
    EndpointUnavailable,
    LessonloopError,
    OffSchemaError,
    ProviderError,
    Stopped,
    UsageError,
    unwritable,
)
from ..json_blocks import json_objects
from ..knowledge import admission, edits
from ..knowledge import entries as knowledge_entries
from ..knowledge.render import view_texts, write_views
from ..providers.base import Completion, Request
from ..providers.registry import build_routes
from ..scenarios import code, registry, space
from ..store import runs as run_store
from ..store.db import Store
from ..timeutil import utc_now
from . import artifacts, elo, gate, prompts, seeds
from .budget import Budget, BudgetSpent
from .context import TOKEN_BUDGET, Context, Step, strategy_words
from .events import EventLog, read_events
from .pool import MatchPool, MatchResult, mean_dimensions
from .pool import mean_score as pool_mean_score
from .request import RUN_ID, check_run_id, new_run_id  # noqa: F401 - RUN_ID kept importable
from .runlock import is_active  # noqa: F401 - importable from here too


@dataclass
class RunOptions:
    """Settings fixed when a run is created; a resumed run keeps its own."""

    provider: str | None = None  # --provider; None: from config, environment or "local"
    model: str | None = None  # --model
    matches: int = 5
    seed: int = 0
    max_retries: int = 2
    min_delta: float = 0.002
    match_timeout: float = 10.0
    workers: int = 0
    knowledge: bool = True  # playbook, hints and dead ends in the context (--no-knowledge)
    carry_incumbent: bool = True  # start from the best known strategy (--no-incumbent)
    context_budget: int = TOKEN_BUDGET
    start_incumbent: dict | None = None  # fixed when the run is created, so resume agrees
    routes: dict | None = None  # role -> {provider, model, base_url}, resolved at creation
    max_calls: int | None = None  # budget: provider calls for the whole run (--max-calls)
    max_tokens: int | None = None  # budget: input + output tokens (--max-tokens)

    def check(self) -> RunOptions:
        """Reject values no run can use, naming the option at fault (``UsageError.field``)."""
        if not 1 <= self.matches <= MAX_MATCHES:
            raise UsageError(f"must be between 1 and {MAX_MATCHES}", field="matches")
        if not 0 <= self.max_retries <= MAX_RETRIES:
            raise UsageError(f"must be between 0 and {MAX_RETRIES}", field="max_retries")
        if not (math.isfinite(self.min_delta) and 0 <= self.min_delta < 1):
            raise UsageError("must be a number in [0, 1)", field="min_delta")
        if not (math.isfinite(self.match_timeout) and 0 < self.match_timeout <= MAX_TIMEOUT):
            raise UsageError(
                f"must be between 0 and {MAX_TIMEOUT:g} seconds", field="match_timeout"
            )
        if not 0 <= self.workers <= MAX_WORKERS:
            raise UsageError(f"must be between 0 (automatic) and {MAX_WORKERS}", field="workers")
        if not 0 <= self.seed < 2**63:
            raise UsageError("must be a non-negative 64-bit integer", field="seed")
        if not 200 <= self.context_budget <= 1_000_000:
            raise UsageError("must be between 200 and 1000000 tokens", field="context_budget")
        for name in BUDGETS:
            value = getattr(self, name)
            if value is not None and not 1 <= value <= 10**12:
                raise UsageError("must be a positive integer", field=name)
        return self


MAX_ITERATIONS = 100_000
MAX_MATCHES = 1_000
MAX_RETRIES = 20
MAX_TIMEOUT = 3600.0
MAX_WORKERS = 64
FLAGS = {"carry_incumbent": "--no-incumbent/--fresh", "knowledge": "--no-knowledge/--fresh"}
BUDGETS = ("max_calls", "max_tokens")  # limits, not semantics: a resumed run may raise them
LOCK_WAIT_SECONDS = 0.5
DEAD_ENDS_IN_CONTEXT = 20  # the most recent; all of them stay in dead_ends.md
HINTS_IN_CONTEXT = 20  # the strongest
REPEATS = (
    "the answer repeats the current best or a strategy already tried: change at least one field"
)
NO_STRATEGY_LIMIT = 2  # generations without any valid strategy after which a run fails
SCREEN_SEEDS = 3  # screening seeds per candidate (the incumbent plays them once per attempt)
SCREEN_CAP = 32  # candidates of one answer screened at most (the first ones)
VALIDATION_SEEDS = 50  # fixed validation seeds scoring every advanced strategy (loop/seeds.py)


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


class RunStopped(Stopped):
    """The user interrupted the run; it is marked ``stopped`` and can be resumed."""


class NoValidStrategy(LessonloopError):
    """The competitor never produced a strategy that could be played."""


def check_iterations(iterations: int) -> None:
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise UsageError(f"must be between 1 and {MAX_ITERATIONS}", field="iterations")


def create_or_reuse(
    store: Store,
    scenario_name: str,
    iterations: int,
    overrides: dict | None = None,
    run_id: str | None = None,
) -> str:
    """Create a run, or return ``run_id`` when it already exists (re-running resumes it).

    ``overrides`` are the options the user gave explicitly; an existing run keeps its own
    settings, so a conflicting override is refused rather than silently ignored.
    """
    check_iterations(iterations)
    overrides = overrides or {}
    if run_id is not None:
        check_run_id(run_id)
        existing = run_store.find_run(store, run_id)
        if existing is not None:
            reference = registry.canonical_reference(scenario_name)
            if reference not in (existing["scenario"], existing["scenario_ref"]):
                raise UsageError(
                    f"run {run_id!r} is a {existing['scenario']!r} run, not {scenario_name!r}"
                )
            stored = json.loads(existing["config_json"])
            budgets = {name: overrides.pop(name) for name in BUDGETS if name in overrides}
            for name, value in overrides.items():
                if stored.get(name) != value:
                    flag = FLAGS.get(name, "--" + name.replace("_", "-"))
                    raise UsageError(
                        f"run {run_id!r} keeps the settings it was created with "
                        f"({name} = {stored.get(name)}); drop {flag} or start a new run"
                    )
            if budgets:
                RunOptions(**budgets).check()
                run_store.update_config(store, run_id, {**stored, **budgets})
            return run_id
    options = RunOptions(**overrides).check()
    scenario = registry.load(scenario_name)
    settings = config.load(flags={"PROVIDER": options.provider, "MODEL": options.model})
    routes = settings.routes()
    providers = build_routes(routes, settings)  # a bad route fails before anything is created
    if providers["competitor"].name == "local":
        space.parameters(scenario.strategy_schema)  # the offline agent must be able to search it
    options.routes = {role: route.to_dict() for role, route in routes.items()}
    options.provider, options.model = routes["competitor"].provider, routes["competitor"].model
    if options.carry_incumbent:
        options.start_incumbent = best_known_strategy(store, scenario)
    run_id = run_id or new_run_id()
    run_store.create_run(
        store,
        run_id=run_id,
        scenario=scenario.name,
        scenario_ref=registry.canonical_reference(scenario_name),
        target_generations=iterations,
        provider=options.provider,
        seed=options.seed,
        config=asdict(options),
    )
    return run_id


def best_known_strategy(store: Store, scenario) -> dict | None:
    """The strongest final incumbent among earlier runs of this scenario that are not running.

    A run's final incumbent beat every strategy before it in that run on paired and holdout
    seeds; between runs, the one with the highest tournament mean wins. Never the validated
    score: validation seeds only report (a choice made by them would flatter the next run's
    validated score of the same strategy on the same seeds).
    """
    epoch = registry.evaluator_epoch(scenario)
    rows = store.query(
        "SELECT g.run_id, g.generation_index, g.strategy_json, g.mean_score FROM generations g "
        "JOIN runs r ON r.run_id = g.run_id WHERE r.scenario = ? AND g.evaluator_epoch = ? "
        "AND r.status NOT IN ('running', 'created') AND g.gate_decision = 'advance' "
        "AND g.generation_index = (SELECT MAX(h.generation_index) FROM generations h "
        "WHERE h.run_id = g.run_id AND h.gate_decision = 'advance') "
        "ORDER BY g.mean_score DESC, r.created_at DESC",
        (scenario.name, epoch),
    )
    for row in rows:
        strategy = json.loads(row["strategy_json"])
        try:
            if code.problems(scenario, strategy):
                continue
        except Exception:
            continue
        return {
            "strategy": strategy,
            "score": row["mean_score"],
            "from_run": row["run_id"],
            "generation": row["generation_index"],
        }
    return None


@contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold the run's lock file; the OS releases it if this process dies.

    A brief wait covers ``watch`` or ``status`` probing the lock at the same instant.
    """
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        handle = open(run_dir / "run.lock", "a+")
    except OSError as exc:
        raise unwritable(run_dir / "run.lock", exc) from None
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                handle.close()
                raise LessonloopError(
                    f"run {run_dir.name} is already running in another process"
                ) from None
            time.sleep(0.02)
    try:
        with suppress(OSError):  # the pid is for people; the lock works without it (full disk)
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
        yield
    finally:
        handle.close()


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Runner:
    def __init__(self, store: Store, run_id: str, observer: Callable[[dict], None] | None = None):
        self.store = store
        self.run = run_store.get_run(store, run_id)
        self.run_id = run_id
        self.options = RunOptions(**json.loads(self.run["config_json"]))
        self.run_dir = paths.run_dir(run_id)
        self.observer = observer or (lambda event: None)
        # derived files and events waiting to be written while the next matches play
        self.deferred: deque[tuple[Callable, tuple]] = deque()
        self.deferring = False
        self.unrecorded: list[tuple] = []  # in-process providers' calls, not yet in the ledger
        # the scope's active knowledge as of the last generation's end, and the views written
        self.entries: list[knowledge_entries.Entry] = []
        self.views: dict[Path, str] = {}

    def _emit(self, event: str, **payload: object) -> None:
        """Append an event. While generations run, events share the deferred-write queue, so
        each generation's event lands after its artifacts and events keep their order."""
        if self.deferring:
            self._write_later(self._emit_now, event, payload)
        else:
            self._emit_now(event, payload)

    def _emit_now(self, event: str, payload: dict) -> None:
        self.observer(self.events.emit(event, **payload))

    def execute(self, target: int | None = None) -> dict:
        """Run the remaining generations (up to ``target`` when given) and return the summary."""
        with run_lock(self.run_dir), _sigterm_as_interrupt():
            done = run_store.generations(self.store, self.run_id)
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
            self.events = EventLog(self.run_dir / "events.ndjson")
            self.scenario = registry.load(self.run["scenario_ref"])
            self.providers = build_routes(self._routes(), config.load())
            self.budget = Budget(
                self.options.max_calls,
                self.options.max_tokens,
                spent=run_store.usage_totals(self.store, self.run_id),
                hint=lambda flag: f"continue with `lessonloop resume {self.run_id} {flag} N`",
            )
            self.epoch = registry.evaluator_epoch(self.scenario)
            self.scope = knowledge_entries.scenario_scope(self.scenario.name)
            self._repair(done)
            self._refresh_knowledge(write=write_views)
            self._restore(done)
            target = self.run["target_generations"]
            first = len(done) + 1
            self._emit(
                "run_resumed" if done or self.run["status"] != "created" else "run_started",
                scenario=self.scenario.name,
                target_generations=target,
                completed_generations=len(done),
                provider=self.options.provider or "local",
            )
            run_store.set_status(self.store, self.run_id, "running")
            pool = self.pool = MatchPool(
                self.run["scenario_ref"], self.options.workers, self.options.match_timeout
            )
            # Artifacts, Markdown views and events are written in order while the next
            # generation's matches run. All are derived from the database: resume writes
            # whatever a crash left unwritten.
            self.deferring = True
            try:
                for index in range(first, target + 1):
                    self._generation(pool, index)
                    self._check_any_strategy(index, target)
                self._close_files(raise_errors=True)
            except KeyboardInterrupt:
                self._close_files(raise_errors=False)
                self._finish("stopped", "interrupted by the user")
                raise RunStopped(
                    f"run {self.run_id} interrupted; continue with `lessonloop resume {self.run_id}`"
                ) from None
            except BudgetSpent as exc:  # a limit the user set: a clean stop, not a failure
                self._close_files(raise_errors=True)
                self._finish("stopped", str(exc))
                return self.summary()
            except (
                EndpointUnavailable
            ) as exc:  # a server that is down: nothing is wrong with the run
                self._close_files(raise_errors=False)
                reason = f"{exc}: `lessonloop resume {self.run_id}`"
                self._finish("stopped", reason)
                raise EndpointUnavailable(reason) from None
            except LessonloopError as exc:
                self._close_files(raise_errors=False)
                self._finish("failed", str(exc))
                raise
            except Exception as exc:
                self._close_files(raise_errors=False)
                self._finish("failed", f"{exc.__class__.__name__}: {exc}")
                raise
            finally:
                pool.close()
                self._close_files(raise_errors=False)
            self._finish("completed", None)
        return self.summary()

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
    def _restore(self, done: list) -> None:
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
        for m in run_store.validation_matches(self.store, self.run_id):
            played.setdefault((m["generation_index"], m["side"]), []).append(
                None if m["error"] else m["score"]
            )
        for g in done:
            index = g["generation_index"]
            if (index, "incumbent") in played and self.incumbent_key:
                self._rate(self.incumbent_key, played[index, "incumbent"])
            if (index, "challenger") in played:
                self._rate(f"gen:{index}", played[index, "challenger"])
            self._advance_state(
                index,
                run_store.loads(g["strategy_json"]),
                g["mean_score"],
                g["mean_delta"],
                g["gate_decision"],
                g["elo"],
                g["best_score"],
                g["analysis"],
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

    def _repair(self, done: list) -> None:
        """After a crash between a generation's commit and its files, write what is missing."""
        events, _ = read_events(self.events.path)
        logged = {
            e["payload"].get("generation") for e in events if e["event"] == "generation_completed"
        }
        for g in done:
            index = g["generation_index"]
            if not artifacts.has_generation_artifacts(self.run_dir, index):
                artifacts.write_generation(
                    self.run_dir, g, run_store.matches(self.store, self.run_id, index)
                )
            if index not in logged:
                self._emit("generation_completed", **_completed_payload(g), recovered=True)

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
            ctx.history = base.history + [_screened_entry(c) for c in screened]
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

    def _refresh_knowledge(self, write: Callable[[dict], None]) -> None:
        """Read the scope's active knowledge once (for the views now and the next generation's
        context) and write the views whose text changed."""
        self.entries = knowledge_entries.active(self.store, self.scope)
        changed = {
            path: text
            for path, text in view_texts(self.scope, self.entries).items()
            if self.views.get(path) != text
        }
        if changed:
            self.views.update(changed)
            write(changed)

    def _knowledge(self) -> dict:
        """The scenario's active playbook (ranked), its strongest hints and most recent dead
        ends. Both caps are selection at load time; the budget never trims what is loaded."""
        entries = self.entries
        by_kind = {
            kind: [e for e in entries if e.kind == kind] for kind in ("bullet", "hint", "dead_end")
        }
        return {
            "playbook": knowledge_entries.ranked(by_kind["bullet"]),
            "hints": knowledge_entries.ranked(by_kind["hint"])[:HINTS_IN_CONTEXT],
            "dead_ends": by_kind["dead_end"][-DEAD_ENDS_IN_CONTEXT:],
        }

    def _attempt_strategies(self, ctx: Context, calls: list) -> tuple[list[dict], str]:
        """The answer's strategies for this attempt: the first valid new one (see
        ``_attempt_strategy``), then every other valid new candidate of the same answer in
        order, up to SCREEN_CAP (several are screened; one goes straight to the gate)."""
        strategy, problem, answer = self._attempt_strategy(ctx, calls)
        if strategy is None:
            return [], problem
        found = [strategy]
        seen = {canonical.dumps(strategy)} | {canonical.dumps(t["strategy"]) for t in ctx.tried}
        if ctx.incumbent:
            seen.add(canonical.dumps(ctx.incumbent["strategy"]))
        for candidate in answer:
            if len(found) >= SCREEN_CAP:
                break
            candidate, _ = clamp_to_bounds(candidate, self.scenario.strategy_schema)
            if canonical.dumps(candidate) in seen:
                continue
            if not code.problems(self.scenario, candidate):  # a broken validate() fails the run
                seen.add(canonical.dumps(candidate))
                found.append(candidate)
        return found, problem

    def _screen(self, pool, index, attempt, candidates, match_rows) -> tuple[dict, list[dict]]:
        """Play each candidate once on the attempt's screening seeds, beside the incumbent on
        the same seeds (each seed's luck, shared by every strategy, cancels in the paired
        delta); the best by mean paired delta goes to the gate. Screening chooses which
        candidate is judged, never whether it advances: the gate judges it on training and
        holdout seeds of its own. Returns that candidate and a row per screened candidate."""
        seed_list = seeds.screening_seeds(self.run["seed"], index, attempt, SCREEN_SEEDS)
        k = len(seed_list)
        jobs = [(c, s) for c in candidates for s in seed_list]
        sides = [f"candidate:{i}" for i in range(len(candidates)) for _ in seed_list]
        if self.incumbent is not None:
            jobs += [(self.incumbent["strategy"], s) for s in seed_list]
            sides += ["incumbent"] * k
        results = self._play(pool, jobs, attempt, "screen", sides, match_rows)
        reference = results[len(candidates) * k :] if self.incumbent is not None else None
        measured: list[tuple[float | None, int]] = []
        for i in range(len(candidates)):
            mine = results[i * k : (i + 1) * k]
            if reference is None:  # no incumbent yet: raw scores, made relative below
                deltas = [a.score for a in mine if a.error is None]
            else:
                deltas = [
                    a.score - b.score
                    for a, b in zip(mine, reference)
                    if a.error is None and b.error is None
                ]
            measured.append((sum(deltas) / len(deltas), len(deltas)) if deltas else (None, 0))
        ranked = [i for i, (delta, _) in enumerate(measured) if delta is not None]
        best = max(ranked, key=lambda i: measured[i][0]) if ranked else 0
        if reference is None and ranked:  # relative to the one the gate makes the incumbent
            top = measured[best][0]
            measured = [(d - top if d is not None else None, n) for d, n in measured]
        rows = [
            {
                "attempt": attempt,
                "candidate": i,
                "strategy": c,
                "mean_delta": measured[i][0],
                "pairs": measured[i][1],
                "chosen": i == best,
            }
            for i, c in enumerate(candidates)
        ]
        return candidates[best], rows

    def _attempt_strategy(self, ctx: Context, calls: list) -> tuple[dict | None, str, list]:
        """The competitor's strategy (the first candidate in its answer that validates), what
        was wrong or repaired, and the answer's candidates (none after a translation or a
        repair: only the first answer is screened). An
        echo of the current best or of this generation's tries is no answer; an answer with
        no JSON at all goes to the translator. A model whose answer the scenario refuses is
        told why and asked once more, within the same attempt."""
        prompt = prompts.competitor(ctx)
        completion = self._call("competitor", ctx, prompt, calls)
        candidates = strategy_candidates(completion)
        if not candidates and completion.text.strip():
            completion = self._call(
                "translator", ctx, prompts.translator(ctx, completion.text), calls
            )
            return (*self._first_valid(strategy_candidates(completion), ctx), [])
        strategy, problem = self._first_valid(candidates, ctx)
        if (
            strategy is None
            and candidates
            and not getattr(self.providers["competitor"], "reads_state", False)
        ):
            seed = seeds.call_seed(self.run["seed"], ctx.generation, ctx.attempt, "repair")
            repair, follow_up = prompts.competitor_repair(
                prompt,
                ctx,
                completion.text,
                candidates[0],
                problem,
                seed,
                repeated=problem == REPEATS,
            )
            completion = self._call("competitor", ctx, repair, calls, follow_up=follow_up)
            strategy, problem = self._first_valid(strategy_candidates(completion), ctx)
            return strategy, problem, []
        return strategy, problem, candidates

    def _first_valid(self, candidates: list[dict], ctx: Context) -> tuple[dict | None, str]:
        """The first candidate the scenario accepts that is new (and what was clamped in it),
        or what was wrong."""
        echoes = {canonical.dumps(t["strategy"]) for t in ctx.tried}
        if ctx.incumbent:
            echoes.add(canonical.dumps(ctx.incumbent["strategy"]))
        problem = "no strategy JSON object found in the answer"
        for candidate in candidates:
            candidate, clamped = clamp_to_bounds(candidate, self.scenario.strategy_schema)
            if canonical.dumps(candidate) in echoes:
                problem = REPEATS
                continue
            problems = code.problems(self.scenario, candidate)  # ScenarioBroken fails the run
            if not problems:
                return candidate, "; ".join(clamped)
            if not problem.startswith("invalid"):  # the first invalid candidate says why
                problem = "invalid strategy: " + "; ".join(map(str, problems))
        return None, problem

    def _call(
        self,
        role: str,
        ctx: Context,
        prompt: prompts.Prompt,
        calls: list,
        follow_up: list[dict] | None = None,
    ) -> Completion:
        """One provider call: within the budget, recorded for usage the moment it returns.
        An answer that failed its schema is recorded too and comes back unparsed.
        ``follow_up``: messages after the prompt (an answer and what was wrong with it)."""
        self.budget.check()
        provider = self.providers[role]
        request = Request(
            role=role,
            system=prompt.system,
            messages=[{"role": "user", "content": prompt.user}, *(follow_up or [])],
            temperature=prompt.temperature,
            max_tokens=prompt.max_tokens,
            json_schema=prompt.schema,
            state=prompt.state,
            # a repair is sampled afresh: under its first seed a model repeats itself
            seed=seeds.call_seed(
                self.run["seed"],
                ctx.generation,
                ctx.attempt,
                f"{role}-repair" if follow_up else role,
            ),
        )
        try:
            completion = provider.complete(request)
        except ProviderError as exc:  # what was answered before it failed is counted
            if exc.completion is None:
                raise
            self._count(role, ctx, provider, exc.completion, request)
            if not isinstance(exc, OffSchemaError):
                raise
            completion = exc.completion  # answered, off its schema: an invalid answer
        else:
            self._count(role, ctx, provider, completion, request)
        shown = "\n\n".join([prompt.system, prompt.user, *(m["content"] for m in follow_up or [])])
        if getattr(provider, "reads_state", False):  # what it acted on
            shown = f"{shown}\n\n{state_block.render(prompt.state)}"
        calls.append(
            {
                "attempt": ctx.attempt,
                "role": role,
                "prompt": shown,
                "output": completion.text,
                "created_at": utc_now(),
            }
        )
        return completion

    def _count(
        self, role: str, ctx: Context, provider, completion: Completion, request: Request
    ) -> None:
        """Put an answered call on record and against the budget."""
        call = (self.run_id, ctx.generation, ctx.attempt, role, provider.name, completion)
        if getattr(provider, "remote", False):  # it may have cost money: on record at once
            run_store.record_call(self.store, *call)
        else:  # free and in-process: recorded with its generation (or when the run stops)
            self.unrecorded.append(call)
        self.budget.add(completion, request)

    def _routes(self) -> dict[str, config.Route]:
        """The routes fixed at creation (a run from before routing sends every role to its
        one provider)."""
        if self.options.routes:
            return {role: config.Route(**route) for role, route in self.options.routes.items()}
        return {role: config.Route(self.options.provider or "local") for role in config.ROLES}

    def _play(
        self, pool: MatchPool, jobs: list, attempt: int, phase: str, sides: list, match_rows: list
    ) -> list[MatchResult]:
        results = pool.play(jobs, while_waiting=self._write_one if self.deferred else None)
        for side, result in zip(sides, results):
            match_rows.append(
                {
                    "attempt": attempt,
                    "phase": phase,
                    "side": side,
                    "seed": result.seed,
                    "score": result.score,
                    "dimensions": result.dimensions,
                    "summary": result.summary,
                    "error": result.error,
                    "duration_ms": result.duration_ms,
                }
            )
        return results

    def _paired_play(
        self, pool, strategy, incumbent, seed_list, attempt, phase, match_rows
    ) -> tuple[list[MatchResult], list[MatchResult], gate.PairedResult | None]:
        """Both sides on the same seeds; pairs with a failed match on either side are dropped."""
        n = len(seed_list)
        jobs = [(strategy, s) for s in seed_list] + [(incumbent, s) for s in seed_list]
        results = self._play(
            pool, jobs, attempt, phase, ["challenger"] * n + ["incumbent"] * n, match_rows
        )
        mine, theirs = results[:n], results[n:]
        return mine, theirs, _paired(mine, theirs)

    def _tournament(self, pool, index, attempt, strategy, retries_left, match_rows) -> dict:
        train = seeds.training_seeds(self.run["seed"], index, attempt, self.options.matches)
        paired = holdout = None
        if self.incumbent is None:
            mine = self._play(
                pool,
                [(strategy, s) for s in train],
                attempt,
                "train",
                ["challenger"] * len(train),
                match_rows,
            )
            theirs: list[MatchResult] = []
            if any(r.error is None for r in mine):
                decision = gate.Decision(
                    gate.ADVANCE, "no incumbent yet: the first valid strategy becomes the incumbent"
                )
            else:
                decision = gate.invalid(f"every match failed ({_first_error(mine)})", retries_left)
        else:
            incumbent = self.incumbent["strategy"]
            matches, min_delta = self.options.matches, self.options.min_delta
            least = gate.min_pairs(matches)
            mine, theirs, paired = self._paired_play(
                pool, strategy, incumbent, train, attempt, "train", match_rows
            )
            # a close call gets more pairs: doubled, up to gate.TRAIN_CAP x --matches
            while (
                paired is not None
                and paired.close_call(min_delta, least)
                and len(mine) < gate.TRAIN_CAP * matches
            ):
                more = seeds.training_seeds(
                    self.run["seed"], index, attempt, len(mine), start=len(mine)
                )
                extra_mine, extra_theirs, _ = self._paired_play(
                    pool, strategy, incumbent, more, attempt, "train", match_rows
                )
                mine, theirs = mine + extra_mine, theirs + extra_theirs
                paired = _paired(mine, theirs)
            if paired is None:
                decision = gate.invalid(
                    f"every pair had a failed match ({_first_error(mine + theirs)})", retries_left
                )
            else:
                if paired.clears(min_delta, least):
                    held = seeds.holdout_seeds(
                        self.run["seed"], index, attempt, gate.HOLDOUT_CAP * matches
                    )
                    played = gate.HOLDOUT_START * matches
                    held_mine, held_theirs, holdout = self._paired_play(
                        pool, strategy, incumbent, held[:played], attempt, "holdout", match_rows
                    )
                    # a close call on holdout (a gain, not yet significant): pairs doubled
                    while (
                        holdout is not None
                        and not holdout.holds()
                        and holdout.mean_delta > 0
                        and played < len(held)
                    ):
                        more = held[played : 2 * played]
                        extra_mine, extra_theirs, _ = self._paired_play(
                            pool, strategy, incumbent, more, attempt, "holdout", match_rows
                        )
                        held_mine, held_theirs = held_mine + extra_mine, held_theirs + extra_theirs
                        played += len(more)
                        holdout = _paired(held_mine, held_theirs)
                decision = gate.decide(paired, holdout, min_delta, retries_left, least)
        return {
            "decision": decision,
            "paired": paired,
            "holdout": holdout,
            "challenger": mine,
            "incumbent": theirs,
            "challenger_dims": mean_dimensions(mine),
            "incumbent_dims": mean_dimensions(theirs),
        }

    def _decision_row(self, attempt, decision, paired=None, holdout=None) -> dict:
        """A gate decision with the statistic it decided on."""
        return {
            "attempt": attempt,
            "decision": decision.decision,
            "rationale": decision.rationale,
            "reason": decision.reason,
            "mean_delta": paired.mean_delta if paired else None,
            "wins": paired.wins if paired else 0,
            "losses": paired.losses if paired else 0,
            "holdout_delta": holdout.mean_delta if holdout else None,
            "pairs": paired.pairs if paired else None,
            "t_statistic": paired.t_statistic(self.options.min_delta) if paired else None,
            "lower_bound": paired.lower_bound if paired else None,
            "holdout_pairs": holdout.pairs if holdout else None,
            "holdout_lower_bound": holdout.lower_bound if holdout else None,
            "created_at": utc_now(),
        }

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
                _screened_entry(
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

    def _rate(self, key: str, scores: list) -> float:
        """Rate a strategy from its validation scores; its validated score (the mean over the
        seeds that completed, 0 when none did)."""
        self.ratings.add(key, scores)
        completed = [x for x in scores if x is not None]
        self.validated[key] = sum(completed) / len(completed) if completed else 0.0
        return self.validated[key]

    def _validate(
        self, pool, key: str, strategy: dict, side: str, attempt: int, match_rows: list
    ) -> None:
        """Play a strategy on the fixed validation seeds (never used to choose) and rate it."""
        valid = seeds.validation_seeds(self.run["seed"], VALIDATION_SEEDS)
        results = self._play(
            pool,
            [(strategy, s) for s in valid],
            attempt,
            "validation",
            [side] * len(valid),
            match_rows,
        )
        self._rate(key, [None if r.error else r.score for r in results])

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
        self._write_all()  # what the matches left no time for: files lag one generation at most
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
        if self.incumbent is not None and self.incumbent_key not in self.ratings:
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
        analysis, proposed, curator_text = "", [], ""
        if final is not None:  # reflect only on what was played
            analysis = self._call(
                "analyst", reflection_ctx, prompts.analyst(reflection_ctx, summary), calls
            ).text
            coach = self._call(
                "coach", reflection_ctx, prompts.coach(reflection_ctx, summary, analysis), calls
            )
            proposed = [
                e
                for e in edits.proposed(_answer_text(coach))
                if not (isinstance(e, dict) and e.get("text") == prompts.COACH_EXAMPLE_TEXT)
            ]
            if proposed:
                curator_text = _answer_text(
                    self._call(
                        "curator", reflection_ctx, prompts.curator(reflection_ctx, proposed), calls
                    )
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
            self._record_calls()
            run_store.save_generation(self.store, record)
            if self.options.knowledge:  # a run that reads no knowledge writes none either
                # evidence only from a conclusive comparison, at the gate's confidence either
                # way: an advance, or a rollback whose challenger measurably lost; what the
                # gate could not tell apart says nothing about the bullets
                conclusive = paired is not None and (decision == gate.ADVANCE or paired.lost())
                self._learn(index, decision, conclusive, summary, manifest, proposed, curator_text)
        saved = run_store.get_generation(self.store, self.run_id, index)
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
        self._write_later(
            artifacts.write_generation,
            self.run_dir,
            saved,
            run_store.matches(self.store, self.run_id, index),
        )
        if self.options.knowledge:
            self._refresh_knowledge(write=lambda texts: self._write_later(write_views, texts))
        self._emit(
            "generation_completed",
            **_completed_payload(saved),
            rationale=last["rationale"],
            reason=last.get("reason") or "",
        )

    def _write_later(self, write: Callable, *args) -> None:
        """Queue a derived-file write or event for the next wait on matches."""
        self.deferred.append((write, args))

    def _write_one(self) -> bool:
        """Do the oldest queued write; True while more remain."""
        if self.deferred:
            write, args = self.deferred.popleft()
            write(*args)
        return bool(self.deferred)

    def _write_all(self) -> None:
        while self._write_one():
            pass

    def _close_files(self, raise_errors: bool) -> None:
        """Write what is still queued, so what follows is written directly.

        After a successful run a failed write is an error; on the way out after another error
        it matters less than the one being reported, and the other writes are still tried.
        """
        self.deferring = False
        if raise_errors:
            self._write_all()
        while self.deferred:
            with suppress(Exception):
                self._write_one()

    def _learn(
        self,
        index: int,
        decision: str,
        compared: bool,
        summary: dict,
        manifest: dict,
        proposed: list,
        curator_text: str,
    ) -> None:
        """Evidence for the bullets in context (only when the gate compared challenger and
        incumbent conclusively), a dead end for a rolled-back strategy, and the coach's edits the curator
        accepted — all through admission."""
        where = {"run_id": self.run_id, "generation_index": index}
        in_context = manifest.get("knowledge", {}).get("playbook", [])
        if compared and decision in (gate.ADVANCE, gate.ROLLBACK) and in_context:
            admission.record_evidence(
                self.store, in_context, decision == gate.ADVANCE, render_views=False, **where
            )
        proposals = []
        if decision == gate.ROLLBACK and summary["challenger"] is not None and summary["incumbent"]:
            proposals.append(
                admission.Proposal(
                    kind="dead_end",
                    scope=self.scope,
                    source="evidence",
                    summary=(
                        f"Rolled back: scored {summary['challenger_score']:.4f} against the "
                        f"incumbent's {summary['incumbent_score'] or 0:.4f}"
                    ),
                    content=canonical.dumps(summary["challenger"]),
                    tags=["dead-end", f"score:{summary['challenger_score']:.4f}"],
                    detail=summary["rationale"],
                    **where,
                )
            )
        edits.apply(self.store, self.scope, proposed, curator_text, where, proposals)

    def _record_calls(self) -> None:
        if self.unrecorded:
            run_store.record_calls(self.store, self.unrecorded)
        self.unrecorded = []

    def _finish(self, status: str, reason: str | None) -> None:
        self._record_calls()
        run_store.set_status(self.store, self.run_id, status, reason)
        self.run = run_store.get_run(self.store, self.run_id)
        artifacts.write_report(
            self.run_dir,
            self.run,
            run_store.generations(self.store, self.run_id),
            run_store.gate_decisions(self.store, self.run_id),
        )
        self._emit(f"run_{status}", reason=reason, **self.summary())

    def summary(self) -> dict:
        return run_summary(self.store, self.run_id)


def run_summary(store: Store, run_id: str) -> dict:
    """The ``run --json`` shape: ``best_score`` is the best strategy's validated score, and
    ``tournament_score`` its mean in the tournament where it advanced."""
    run = run_store.get_run(store, run_id)
    done = run_store.generations(store, run_id)
    return {
        "run_id": run_id,
        "scenario": run["scenario"],
        "generations_executed": len(done),
        "best_score": run_store.best_score(done),
        "tournament_score": run_store.tournament_score(done),
        "current_elo": run_store.current_elo(done),
        "status": run["status"],
    }


def _completed_payload(g) -> dict:
    """The ``generation_completed`` event, built from the stored row."""
    return {
        "generation": g["generation_index"],
        "mean_score": g["mean_score"],
        "incumbent_score": g["incumbent_score"],
        "mean_delta": g["mean_delta"],
        "gate_decision": g["gate_decision"],
        "elo": g["elo"],
        "best_score": g["best_score"],
        "validated_score": g["validated_score"],
        "attempts": g["attempts"],
        "quarantined": g["quarantined"],
    }


CLAMP_SLACK = 0.1  # share of a field's range a number may overshoot and still be set to the bound


def clamp_to_bounds(candidate: dict, schema: dict) -> tuple[dict, list[str]]:
    """``candidate`` with numbers just past their field's bounds (by at most CLAMP_SLACK of its
    range) set to the bound, and a note for each. Grammar-constrained servers enforce a
    schema's types but not its bounds, so a small model writes 0.508 for a field that ends at
    0.5; a number far outside (5 for a field from 0 to 1) is no such slip and stays invalid."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return candidate, []
    fixed, notes = dict(candidate), []
    for name, value in candidate.items():
        spec = properties.get(name)
        if (
            not isinstance(spec, dict)
            or spec.get("type") not in ("number", "integer")
            or isinstance(value, bool)
            or not isinstance(value, (int, float))
        ):
            continue
        low, high = spec.get("minimum"), spec.get("maximum")
        if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
            continue
        bound = low if value < low else high if value > high else None
        if bound is not None and abs(value - bound) <= CLAMP_SLACK * (high - low):
            fixed[name] = bound
            notes.append(f"{name} {value:g} clamped to {bound:g}")
    return fixed, notes


def strategy_candidates(completion: Completion) -> list[dict]:
    """Every JSON object in an answer, the endpoint's parsed JSON first; one that looks like a
    JSON Schema (an echoed interface) is none."""
    found = ([completion.parsed] if isinstance(completion.parsed, dict) else []) + json_objects(
        completion.text or ""
    )
    return [
        c for c in found if not ({"properties", "$schema"} & set(c) or c.get("type") == "object")
    ]


def _screened_entry(row: dict) -> dict:
    """A screened candidate as the search history shows it (decision ``screened``)."""
    return {
        "strategy": row["strategy"],
        "mean_delta": row["mean_delta"],
        "pairs": row["pairs"],
        "decision": "screened",
    }


def _answer_text(completion: Completion) -> str:
    """The answer as text, its parsed JSON when the endpoint returned some."""
    if isinstance(completion.parsed, dict):
        return json.dumps(completion.parsed)
    return completion.text


def _paired(mine: list[MatchResult], theirs: list[MatchResult]) -> gate.PairedResult | None:
    """The paired result of two sides on the same seeds; pairs with a failed match are left out."""
    pairs = [
        (a.score, b.score) for a, b in zip(mine, theirs) if a.error is None and b.error is None
    ]
    return gate.PairedResult.from_pairs(pairs) if pairs else None


def _column(row, key: str):
    try:
        return row[key]
    except (IndexError, KeyError):
        return None


def _first_error(results: list[MatchResult]) -> str:
    return next((r.error for r in results if r.error), "no error recorded")


def _fmt_dims(dims: dict) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in dims.items()) or "none"
