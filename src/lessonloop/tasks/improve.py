"""The improve loop: generate → verify → judge → stop or revise with the feedback.

Each round is stored like a generation (so ``status``, ``show``, ``watch``, ``list`` and
``export`` work for task runs), the best output is kept in ``runs/<id>/best_output.<ext>``, and
what the run learned goes into the task's knowledge scope through admission, so the next
``improve`` of the task starts with it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from .. import canonical, config
from ..errors import LessonloopError, OffSchemaError, UsageError
from ..files import atomic_write
from ..knowledge import admission, edits
from ..knowledge import entries as knowledge_entries
from ..knowledge.render import render_scope
from ..loop import artifacts, elo
from ..loop.budget import check_limits
from ..loop.context import FENCE_NOTE, fence
from ..loop.lifecycle import RunLifecycle
from ..loop.request import new_run_id
from ..providers.base import Completion, Request
from ..providers.registry import build_routes
from ..store import runs as run_store
from ..store.db import Store
from ..timeutil import utc_now
from .evaluate import Evaluation, evaluate, extract, format_problems
from .judge import Judge, epoch
from .prompts import (
    TASK_COACH_SCHEMA,
    TASK_CURATOR_SCHEMA,
    Round,
    competitor_prompt,
    json_example,
    output_schema,
    structured,
)
from .spec import TaskSpec, parse

__all__ = ["TaskRun", "create_or_reuse", "json_example", "output_schema", "structured"]

PLATEAU_ROUNDS = 3  # rounds without a better score before the loop stops
JUDGE_FAILURES = 2  # consecutive rounds whose verdict could not be read
JUDGE_FAILED = "judge_failed"  # a round's gate decision when its output could not be scored
COMPETITOR_MAX_TOKENS = 1024  # a task's output; a small model that loops is cut off here


def task_scope(spec: TaskSpec) -> str:
    return f"task:{spec.slug}"


def routes_for(spec: TaskSpec, provider: str | None, model: str | None):
    """Settings, routes and providers for a task, refusing what cannot work offline."""
    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    routes = settings.routes()
    hint = (
        "set --provider (e.g. --provider ollama --model llama3.2, or scripted:FILE.json) or "
        "LESSONLOOP_PROVIDER; `lessonloop doctor` shows the routes"
    )
    if routes["competitor"].kind == "local":
        raise UsageError(
            f"improving task {spec.name!r} needs a model to write its outputs (the "
            f"offline local provider only plays scenarios): {hint}"
        )
    if spec.needs_judge and routes["judge"].kind == "local":
        raise UsageError(
            f"task {spec.name!r} has a rubric, so it needs a judge model: {hint} "
            "or LESSONLOOP_JUDGE_PROVIDER"
        )
    return settings, routes, build_routes(routes, settings)


class TaskRun(RunLifecycle):
    """One improve run of one task, in the lifecycle every run shares (``loop/lifecycle.py``):
    the task, its routes and its budgets (``max_calls``/``max_tokens``, the whole run's, its
    earlier sessions included, as for ``run``) are read from the run's row."""

    def __init__(self, store: Store, run_id: str, observer: Callable[[dict], None] | None = None):
        super().__init__(store, run_id, observer)
        stored = run_store.loads(self.run["config_json"])
        # the spec the run started with: an edited task file would change the scale (epoch)
        self.spec = parse(stored["task"], f"the task stored with run {run_id}")
        self.task_path = Path(self.run["scenario_ref"])
        self.routes = {role: config.Route(**route) for role, route in stored["routes"].items()}
        budgets = stored.get("budgets", {})
        self.max_calls, self.max_tokens = budgets.get("max_calls"), budgets.get("max_tokens")
        self.review = bool(stored.get("review", False))  # --review: lessons held as pending
        self.scope = task_scope(self.spec)
        self.epoch = epoch(self.spec, self.routes["judge"])
        self.output_schema = output_schema(self.spec)
        self.rounds: list[Round] = []
        self.round_index = 0
        self.position = (None, 0)
        self.stop_reason: str | None = None

    # the lifecycle's hooks ---------------------------------------------------------------------
    def prepare(self, done: list) -> None:
        # every call is checked against the budget and put on the ledger (``meter``)
        self.providers = self.meter(build_routes(self.routes, config.load()))
        self.judge = (
            Judge(self.spec, self.providers["judge"], self.routes["judge"], self.store)
            if self.spec.needs_judge
            else None
        )

    def resume_hint(self, flag: str) -> str:
        return (
            f"continue with `lessonloop improve {self.task_path} --run-id {self.run_id} {flag} N`"
        )

    def start_payload(self, done: list) -> dict:
        return {
            "scenario": f"task:{self.spec.name}",
            "target_generations": self.spec.max_rounds,
            "completed_generations": len(self.rounds),
            "provider": self.routes["competitor"].provider,
        }

    def play(self) -> None:
        reason = self._stop_reason()
        while reason is None:
            self._round(len(self.rounds) + 1)
            reason = self._stop_reason()
        self.stop_reason = reason
        self._learn()

    def outcome(self) -> tuple[str, str | None]:
        reason = self.stop_reason or ""
        status = "failed" if reason.startswith("the judge") else "completed"
        problems = [format_problems(r.output, self.spec) for r in self.rounds]
        if problems and all(problems):  # nothing usable was ever produced: no success
            status, reason = (
                "failed",
                (
                    f"no round produced an output in the task's format ({len(problems)} "
                    f"rounds); the last: {problems[-1][0]}. Check the competitor's route with "
                    "`lessonloop doctor`"
                ),
            )
        self.stop_reason = reason
        return status, reason

    def summary(self, reason: str | None = None) -> dict:
        return {
            **super().summary(reason),
            "stop_reason": reason,
            "best_output": str(self._best_path()) if self.best else None,
        }

    def _call(
        self,
        role: str,
        system: str,
        user: str,
        calls: list,
        schema: dict | None = None,
        max_tokens: int = 400,
        temperature: float = 0.7,
    ) -> tuple[Completion, str | None]:
        """One call of ``role`` (the budget and the ledger are the provider's wrapper's):
        the completion, and what was wrong when its answer failed ``schema`` after the
        provider's repair round (the answer is then kept, but invalid)."""
        problem = None
        try:
            completion = self.providers[role].complete(
                Request(
                    role=role,
                    system=system,
                    messages=[{"role": "user", "content": user}],
                    seed=self.round_index,
                    json_schema=schema,
                    max_tokens=max_tokens,
                    temperature=temperature,
                )
            )
        except OffSchemaError as exc:
            if exc.completion is None:
                raise
            completion, problem = exc.completion, exc.message
        calls.append(
            {
                "attempt": 0,
                "role": role,
                "prompt": f"{system}\n\n{user}",
                "output": completion.text,
                "created_at": utc_now(),
            }
        )
        return completion, problem

    @property
    def best(self) -> Round | None:
        """The best scored round (a round the judge could not score has no score)."""
        return max(
            (r for r in self.rounds if not r.evaluation.judge_failed),
            key=lambda r: r.evaluation.score,
            default=None,
        )

    # the rounds ------------------------------------------------------------------------------
    def restore(self, done: list) -> None:
        """A re-run of the same run id continues after its stored rounds (and rewrites the
        best output a crash after its round's commit left unwritten)."""
        for generation in done:
            output = (run_store.loads(generation["strategy_json"]) or {}).get("output", "")
            dims = run_store.loads(generation["dimensions_json"]) or {}
            self.rounds.append(
                Round(
                    generation["generation_index"],
                    output,
                    Evaluation(
                        generation["mean_score"],
                        dims.pop("verifier", None) == 1.0 if "verifier" in dims else None,
                        dims,
                        feedback=generation["analysis"],
                        epoch=generation["evaluator_epoch"],
                        judge_failed=generation["gate_decision"] == JUDGE_FAILED,
                    ),
                )
            )
        best = self.best
        if best is not None and not self._best_path().exists():
            atomic_write(self._best_path(), best.output)

    def _stop_reason(self) -> str | None:
        rounds = self.rounds
        if not rounds:
            return None
        last = rounds[-1]
        threshold = self.spec.threshold
        if len(rounds) >= 2 and all(
            not r.evaluation.judge_failed and r.evaluation.score >= threshold for r in rounds[-2:]
        ):
            return (
                f"threshold {threshold:g} reached in round {rounds[-2].index} and confirmed "
                f"in round {last.index}"
            )
        if len(rounds) >= JUDGE_FAILURES and all(
            r.evaluation.judge_failed for r in rounds[-JUDGE_FAILURES:]
        ):
            return f"the judge gave no usable verdict {JUDGE_FAILURES} rounds in a row"
        if len(rounds) >= 2 and rounds[-2].output == last.output:
            return f"round {last.index} produced the same output as round {rounds[-2].index}"
        if len(rounds) >= self.spec.max_rounds:
            return f"max rounds ({self.spec.max_rounds}) reached"

        def scored(group: list[Round]) -> list[float]:  # a judge failure is no score
            return [r.evaluation.score for r in group if not r.evaluation.judge_failed]

        best_before = max(scored(rounds[:-PLATEAU_ROUNDS]), default=None)
        if (
            best_before is not None
            and len(rounds) > PLATEAU_ROUNDS
            and max(scored(rounds[-PLATEAU_ROUNDS:]), default=best_before) <= best_before
        ):
            return f"plateau: no better score in the last {PLATEAU_ROUNDS} rounds"
        return None

    def _round(self, index: int) -> None:
        started, created_at = time.perf_counter(), utc_now()
        self.round_index = index
        self.position = (index, 0)  # where the ledger puts this round's calls
        self._emit("generation_started", generation=index)
        calls: list[dict] = []
        knowledge = knowledge_entries.active(self.store, self.scope)
        system, user, manifest = competitor_prompt(
            self.spec, self.output_schema, knowledge, self.rounds, self.best
        )
        completion, off_schema = self._call(
            "competitor",
            system,
            user,
            calls,
            schema=self.output_schema,
            max_tokens=COMPETITOR_MAX_TOKENS,
        )
        if off_schema is None and isinstance(completion.parsed, dict) and self.output_schema:
            output = json.dumps(completion.parsed, indent=2, ensure_ascii=False) + "\n"
        else:
            output = extract(completion.text, self.spec)
        if off_schema is not None:  # counted, but invalid: no verifier or judge is asked
            why = "; ".join(format_problems(output, self.spec)) or off_schema
            evaluation = Evaluation(
                0.0,
                None,
                reasoning=why,
                epoch=self.epoch,
                feedback=f"The output does not match the format: {why}",
            )
        else:
            evaluation = evaluate(self.spec, output, self.task_path.parent, self.judge, self.epoch)
        best = self.best
        best_score = best.evaluation.score if best else None
        if evaluation.judge_failed:
            decision = JUDGE_FAILED
        else:
            decision = (
                "advance"
                if best is None or evaluation.score > best.evaluation.score
                else "rollback"
            )
        self.rounds.append(Round(index, output, evaluation))
        reason = self._stop_reason()
        rationale = (
            f"not scored: {evaluation.reasoning}"
            if evaluation.judge_failed
            else f"score {evaluation.score:.4f}"
            + (f" vs best {best_score:.4f}" if best_score is not None else "")
        ) + (f"; stopping: {reason}" if reason else "; revising with the feedback")
        dims = dict(evaluation.dimensions)
        if evaluation.passed_verifier is not None:
            dims["verifier"] = 1.0 if evaluation.passed_verifier else 0.0
        delta = (
            None if best_score is None or evaluation.judge_failed else evaluation.score - best_score
        )
        record = run_store.GenerationRecord(
            run_id=self.run_id,
            generation_index=index,
            attempts=1,
            strategy={"output": output},
            # the column needs a number: a round the judge could not score holds 0 with the
            # decision judge_failed, and is never the best or a dead end
            mean_score=evaluation.score,
            incumbent_score=best_score,
            mean_delta=delta,
            best_score=max(evaluation.score, best_score or 0.0),
            elo=elo.START,
            wins=0,
            losses=0,
            ties=0,
            quarantined=0,
            gate_decision=decision,
            evaluator_epoch=self.epoch,
            dimensions=dims,
            context=manifest,
            analysis=evaluation.feedback or evaluation.reasoning,
            duration_seconds=round(time.perf_counter() - started, 4),
            created_at=created_at,
            role_calls=calls,
            decisions=[
                {
                    "attempt": 0,
                    "decision": decision,
                    "rationale": rationale,
                    "mean_delta": delta,
                    "created_at": utc_now(),
                }
            ],
        )
        with self.store.transaction():
            self.record_calls()
            run_store.save_generation(self.store, record)
            if evaluation.passed_verifier is False:  # what failed, so later runs avoid it
                admission.admit(
                    self.store,
                    [
                        admission.Proposal(
                            kind="dead_end",
                            scope=self.scope,
                            source="evidence",
                            summary=f"An output failed the verifier: {_first_line(evaluation.feedback)}",
                            content=output,
                            tags=["verifier-failed"],
                            detail=evaluation.feedback,
                            run_id=self.run_id,
                            generation_index=index,
                        )
                    ],
                    render_views=False,
                    hold=self.review,
                )
        saved = run_store.get_generation(self.store, self.run_id, index)
        artifacts.write_generation(self.run_dir, saved, [])
        if decision == "advance":
            atomic_write(self._best_path(), output)
        self._emit(
            "generation_completed",
            generation=index,
            mean_score=evaluation.score,
            incumbent_score=best_score,
            mean_delta=record.mean_delta,
            gate_decision=decision,
            elo=elo.START,
            best_score=record.best_score,
            attempts=1,
            quarantined=0,
            rationale=rationale,
            judge_failed=evaluation.judge_failed,
        )

    def _best_path(self) -> Path:
        return self.run_dir / f"best_output.{self.spec.extension}"

    # learning ------------------------------------------------------------------------------
    def _learn(self) -> None:
        """The best passing output becomes a bullet the next run starts from; with a model
        for the coach, its accepted edits join it."""
        best = self.best
        if best is None:
            return
        where = {"run_id": self.run_id, "generation_index": best.index}
        proposals = []
        if best.evaluation.score > 0:
            proposals.append(
                admission.Proposal(
                    kind="bullet",
                    scope=self.scope,
                    source="evidence",
                    summary=f"Best output so far scored {best.evaluation.score:.2f}: start from it",
                    content=best.output,
                    tags=["best-output", f"score:{best.evaluation.score:.2f}"],
                    detail=best.evaluation.feedback,
                    run_id=self.run_id,
                    generation_index=best.index,
                )
            )
        proposed: list = []
        curator_text = ""
        if all(self.providers[role].name != "local" for role in ("coach", "curator")):
            try:
                proposed, curator_text = self._coach(best)
            except LessonloopError as exc:  # the rounds stand; only the model's lessons are lost
                self._emit("learning_skipped", reason=exc.message)
        edits.apply(
            self.store, self.scope, proposed, curator_text, where, proposals, hold=self.review
        )
        render_scope(self.store, self.scope)

    def _coach(self, best: Round) -> tuple[list, str]:
        """The coach's proposed lessons for this task and the curator's verdicts on them (each
        a JSON answer held to its schema; an off-schema one teaches nothing)."""
        calls: list = []
        summary = "\n".join(
            f"- round {r.index}: "
            + (
                "not scored (the judge failed)"
                if r.evaluation.judge_failed
                else f"score {r.evaluation.score:.3f}"
            )
            + (
                ""
                if r.evaluation.passed_verifier is None
                else f", verifier {'passed' if r.evaluation.passed_verifier else 'failed'}"
            )
            + f"; {_first_line(r.evaluation.feedback or r.evaluation.reasoning)}"
            for r in self.rounds
        )
        coach, problem = self._call(
            "coach",
            "You are the coach: you turn the results of a task's rounds into lessons "
            "for its next run. " + FENCE_NOTE,
            f"Task: propose at most 3 lessons the scores support, or none.\n\n"
            f"## The task\n{self.spec.prompt.strip()}\n\n## Rounds\n{summary}\n\n"
            f"## Best output\n{fence('best_output', best.output)}\n\n## Answer\n"
            'Only a JSON object, e.g. {"edits": [{"op": "add_bullet", "text": "<one sentence '
            'the scores support>", "tags": ["<a word>"]}]}; op is add_bullet, add_hint or '
            "add_dead_end; an empty list when nothing is worth keeping.",
            calls,
            schema=TASK_COACH_SCHEMA,
            temperature=0.3,
        )
        proposed = [] if problem else edits.proposed(coach.text)
        curator_text = ""
        if proposed:
            listed = "\n".join(f"{i}. {canonical.dumps(e)}" for i, e in enumerate(proposed))
            curator, problem = self._call(
                "curator",
                "You are the curator: you decide which proposed lessons to keep.",
                "Task: decide for each proposed edit: accept, merge or reject. Reject edits "
                f"that are vague or unsupported.\n\n## Proposed edits\n{listed}\n\n## Answer\n"
                'Only a JSON object, e.g. {"decisions": [{"index": 0, "decision": "accept", '
                '"reason": "<a few words>"}]}, one decision per edit.',
                calls,
                schema=TASK_CURATOR_SCHEMA,
                temperature=0.0,
            )
            curator_text = "" if problem else curator.text
        return proposed, curator_text


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:200]
    return "(no detail)"


def create_or_reuse(
    store: Store,
    spec: TaskSpec,
    task_path: Path,
    provider: str | None = None,
    model: str | None = None,
    run_id: str | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
    review: bool = False,
) -> str:
    """The id of a new improve run of ``spec``, or of ``run_id`` when it exists (it continues
    with the rounds left). Routes that cannot work fail before anything is created.

    ``max_calls``/``max_tokens`` bound the run (stored with it, so a resumed run keeps them;
    given again for an existing run, they replace them). ``review`` (what the run learns is
    held as pending) is fixed when the run is created."""
    check_limits(max_calls, max_tokens)
    given = {
        name: value
        for name, value in (("max_calls", max_calls), ("max_tokens", max_tokens))
        if value is not None
    }
    existing = run_store.find_run(store, run_id) if run_id else None
    if existing is not None and run_id is not None:
        if existing["kind"] != "task" or existing["scenario"] != f"task:{spec.name}":
            raise UsageError(
                f"run {run_id!r} is a {existing['scenario']!r} run, not task {spec.name!r}"
            )
        stored = run_store.loads(existing["config_json"])
        if review and not stored.get("review"):
            raise UsageError(
                f"run {run_id!r} keeps the settings it was created with (review = False); "
                "drop --review or start a new run"
            )
        budgets = {**stored.get("budgets", {}), **given}  # limits, not semantics: may be raised
        if budgets != stored.get("budgets", {}):
            run_store.update_config(store, run_id, {**stored, "budgets": budgets})
        return run_id
    _, routes, _ = routes_for(spec, provider, model)
    run_id = run_id or new_run_id()
    run_store.create_run(
        store,
        run_id=run_id,
        scenario=f"task:{spec.name}",
        kind="task",
        scenario_ref=str(task_path),
        target_generations=spec.max_rounds,
        provider=routes["competitor"].provider,
        seed=0,
        config={
            "kind": "task",
            "routes": {role: route.to_dict() for role, route in routes.items()},
            "task": spec.model_dump(exclude_defaults=True),
            "budgets": given,
            "review": review,
        },
    )
    return run_id
