"""The improve loop: generate → verify → judge → stop or revise with the feedback.

Each round is stored like a generation (so ``status``, ``show``, ``watch``, ``list`` and
``export`` work for task runs), the best output is kept in ``runs/<id>/best_output.<ext>``, and
what the run learned goes into the task's knowledge scope through admission, so the next
``improve`` of the task starts with it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .. import canonical, config, paths
from ..errors import EndpointUnavailable, LessonloopError, OffSchemaError, Stopped, UsageError
from ..files import atomic_write
from ..knowledge import admission, edits
from ..knowledge import entries as knowledge_entries
from ..knowledge.render import render_scope
from ..loop import artifacts, elo
from ..loop.budget import Budget, BudgetSpent, Metered, check_limits
from ..loop.context import FENCE_NOTE, estimate_tokens, fence
from ..loop.events import EventLog
from ..loop.runner import new_run_id, run_lock, run_summary
from ..providers.base import Completion, Request
from ..providers.registry import build_routes
from ..store import runs as run_store
from ..store.db import Store
from ..timeutil import utc_now
from .evaluate import Evaluation, evaluate, extract, format_problems
from .judge import Judge, epoch
from .spec import TaskSpec, parse

PLATEAU_ROUNDS = 3  # rounds without a better score before the loop stops
JUDGE_FAILURES = 2  # consecutive rounds whose verdict could not be read
JUDGE_FAILED = "judge_failed"  # a round's gate decision when its output could not be scored
COMPETITOR_MAX_TOKENS = 1024  # a task's output; a small model that loops is cut off here
SYSTEM = (
    "You write the output a task asks for, and improve it with the feedback on earlier "
    "attempts. " + FENCE_NOTE
)
EXAMPLE_MAX = 400  # characters of a one-line JSON example before it is cut to its keys
TASK_COACH_SCHEMA = {
    "type": "object",
    "required": ["edits"],
    "additionalProperties": False,
    "properties": {
        "edits": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "required": ["op", "text", "tags"],
                "additionalProperties": False,
                "properties": {
                    "op": {"enum": list(edits.EDIT_KINDS)},
                    "text": {"type": "string", "maxLength": 200},
                    "tags": {
                        "type": "array",
                        "maxItems": 4,
                        "items": {"type": "string", "maxLength": 40},
                    },
                },
            },
        }
    },
}
TASK_CURATOR_SCHEMA = {
    "type": "object",
    "required": ["decisions"],
    "additionalProperties": False,
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["index", "decision", "reason"],
                "additionalProperties": False,
                "properties": {
                    "index": {"type": "integer", "minimum": 0},
                    "decision": {"enum": ["accept", "merge", "reject"]},
                    "reason": {"type": "string", "maxLength": 120},
                },
            },
        }
    },
}


def output_schema(spec: TaskSpec) -> dict | None:
    """The schema the competitor's answer is held to (through the endpoint's structured
    output): the task's own, or any JSON object for a JSON task without one. An answer is one
    JSON object (see ``extract``; a forced tool's input is one too), so a schema of another
    kind is left to the checks after the answer."""
    if spec.json_schema is not None:
        kind = spec.json_schema.get("type")
        return structured(spec.json_schema) if kind in (None, "object") else None
    return {"type": "object"} if spec.output_format == "json" else None


def structured(schema: dict) -> dict:
    """``schema`` with every required key of an object listed under its ``properties``: the
    same schema (the key's schema is the object's ``additionalProperties``), but one a grammar
    built from ``properties`` (llama.cpp and its kin) enforces — otherwise a required key
    that only ``additionalProperties`` allows may be left out."""
    schema = copy.deepcopy(schema)

    def visit(node) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
            return
        if not isinstance(node, dict):
            return
        required = node.get("required")
        extra = node.get("additionalProperties", True)
        if (
            isinstance(required, list)
            and extra is not False
            and isinstance(node.get("properties", {}), dict)
        ):
            properties = node.setdefault("properties", {})
            for name in required:
                if isinstance(name, str) and name not in properties:
                    properties[name] = (
                        copy.deepcopy(extra)
                        if isinstance(extra, dict) and "patternProperties" not in node
                        else {}
                    )
        for key, value in node.items():
            if key not in ("const", "enum", "default", "examples", "required"):
                visit(value)

    visit(schema)
    return schema


def json_example(schema: dict | None) -> str:
    """A one-line example of the JSON answer, a placeholder per value (not JSON, so an echo of
    it is never taken for an answer)."""

    def value(node, depth: int) -> str:
        if not isinstance(node, dict):
            return "<value>"
        if "const" in node:
            return json.dumps(node["const"])
        if isinstance(node.get("enum"), list) and node["enum"]:
            return "<" + " or ".join(json.dumps(v) for v in node["enum"][:4]) + ">"
        kind = node.get("type")
        properties = node.get("properties")
        if (kind == "object" or isinstance(properties, dict)) and depth < 3:
            fields = properties if isinstance(properties, dict) else {}
            inner = ", ".join(f'"{k}": {value(v, depth + 1)}' for k, v in fields.items())
            return "{" + (inner or "...") + "}"
        if kind == "array":
            return "[" + value(node.get("items"), depth + 1) + ", ...]"
        if isinstance(kind, str):
            low, high = node.get("minimum"), node.get("maximum")
            bounds = f" {low}..{high}" if low is not None and high is not None else ""
            return f"<{kind}{bounds}>"
        return "<value>"

    schema = schema or {"type": "object"}
    line = value(schema, 0)
    if len(line) > EXAMPLE_MAX:  # too long for one line: the top-level keys only
        keys = ", ".join(f'"{k}": ...' for k in (schema.get("properties") or {}))
        line = "{" + (keys or "...") + "}"
    return line


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


@dataclass
class Round:
    index: int
    output: str
    evaluation: Evaluation


class TaskRun:
    """One improve run of one task. ``max_calls``/``max_tokens`` bound the whole run (its
    earlier sessions included), as they do for ``run``."""

    def __init__(
        self,
        store: Store,
        spec: TaskSpec,
        task_path: Path,
        run_id: str,
        providers: dict,
        routes: dict,
        observer: Callable[[dict], None] | None = None,
        max_calls: int | None = None,
        max_tokens: int | None = None,
    ):
        self.store, self.spec, self.task_path, self.run_id = store, spec, task_path, run_id
        self.routes = routes
        self.observer = observer or (lambda event: None)
        self.run_dir = paths.run_dir(run_id)
        self.scope = task_scope(spec)
        self.epoch = epoch(spec, routes["judge"])
        self.budget = Budget(
            max_calls, max_tokens, run_store.usage_totals(store, run_id), hint=self._resume_hint
        )
        # every call is checked against the budget and on record the moment it returns
        self.providers = {
            role: Metered(provider, self.budget, lambda c, role=role: self._record(role, c))
            for role, provider in providers.items()
        }
        self.judge = (
            Judge(spec, self.providers["judge"], routes["judge"], store)
            if spec.needs_judge
            else None
        )
        self.output_schema = output_schema(spec)
        self.rounds: list[Round] = []
        self.round_index = 0

    # bookkeeping ---------------------------------------------------------------------------
    def _record(self, role: str, completion: Completion) -> None:
        run_store.record_call(
            self.store,
            self.run_id,
            self.round_index or None,
            0,
            role,
            self.providers[role].name,
            completion,
        )

    def _resume_hint(self, flag: str) -> str:
        return (
            f"continue with `lessonloop improve {self.task_path} --run-id {self.run_id} {flag} N`"
        )

    def _emit(self, event: str, **payload) -> None:
        self.observer(self.events.emit(event, **payload))

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

    # the loop ------------------------------------------------------------------------------
    def execute(self) -> dict:
        with run_lock(self.run_dir):
            self.events = EventLog(self.run_dir / "events.ndjson")
            self._restore()
            run_store.set_status(self.store, self.run_id, "running")
            self._emit(
                "run_started" if not self.rounds else "run_resumed",
                scenario=f"task:{self.spec.name}",
                target_generations=self.spec.max_rounds,
                completed_generations=len(self.rounds),
                provider=self.routes["competitor"].provider,
            )
            try:
                reason = self._stop_reason()
                while reason is None:
                    self._round(len(self.rounds) + 1)
                    reason = self._stop_reason()
                self._learn()
            except KeyboardInterrupt:
                self._finish("stopped", "interrupted by the user")
                raise Stopped(
                    f"run {self.run_id} interrupted; continue with "
                    f"`lessonloop resume {self.run_id}`"
                ) from None
            except BudgetSpent as exc:  # a limit the user set: a clean stop, resumable
                self._finish("stopped", exc.message)
                return self._summary(exc.message)
            except EndpointUnavailable as exc:  # a server that is down: nothing is wrong here
                reason = f"{exc.message}: `lessonloop resume {self.run_id}`"
                self._finish("stopped", reason)
                raise EndpointUnavailable(reason) from None
            except Exception as exc:
                message = getattr(exc, "message", None) or f"{exc.__class__.__name__}: {exc}"
                self._finish("failed", message)
                raise
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
            self._finish(status, reason)
        return self._summary(reason)

    def _summary(self, reason: str) -> dict:
        return {
            **run_summary(self.store, self.run_id),
            "stop_reason": reason,
            "best_output": str(self._best_path()) if self.best else None,
        }

    def _restore(self) -> None:
        """A re-run of the same run id continues after its stored rounds."""
        for g in run_store.generations(self.store, self.run_id):
            output = (run_store.loads(g["strategy_json"]) or {}).get("output", "")
            dims = run_store.loads(g["dimensions_json"]) or {}
            self.rounds.append(
                Round(
                    g["generation_index"],
                    output,
                    Evaluation(
                        g["mean_score"],
                        dims.pop("verifier", None) == 1.0 if "verifier" in dims else None,
                        dims,
                        feedback=g["analysis"],
                        epoch=g["evaluator_epoch"],
                        judge_failed=g["gate_decision"] == JUDGE_FAILED,
                    ),
                )
            )

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
        self._emit("generation_started", generation=index)
        calls: list[dict] = []
        knowledge = knowledge_entries.active(self.store, self.scope)
        system, user, manifest = self._prompt(knowledge)
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
            decision = "advance" if best is None or evaluation.score > best_score else "rollback"
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

    def _answer_format(self) -> str:
        """The answer's format with a one-line example (a schema itself goes through the
        endpoint's structured output, not the words)."""
        spec = self.spec
        if spec.output_format == "json" and self.output_schema is None:
            return "Only the JSON, nothing before or after it."
        if spec.output_format == "json":
            return f"Only the JSON object, e.g.\n{json_example(self.output_schema)}"
        if spec.output_format == "code":
            language = (spec.language or "").lower()
            return f"Only the code, in one fenced block:\n```{language}\n<the code>\n```"
        kind = "Markdown" if spec.output_format == "markdown" else "plain text"
        return f"Only the output itself, in {kind}, e.g.\n<the output, nothing before or after it>"

    def _prompt(self, knowledge: list) -> tuple[str, str, dict]:
        """The competitor's prompt: a fixed system message, then the task, its requirements,
        what earlier runs and rounds taught, and the answer format, each under a heading."""
        spec = self.spec
        parts = {"task": spec.prompt.strip()}
        requirements = [f"- Contains exactly: {s!r}" for s in spec.required_strings]
        requirements += [f"- Covers: {c}" for c in spec.required_concepts]
        if spec.rubric:
            requirements += [
                f"- Judged on {d.name} (weight {d.weight:g}): {d.description}" for d in spec.rubric
            ]
        if spec.verifier:
            requirements.append("- A verifier program checks it: it must pass.")
        if requirements:
            parts["requirements"] = "\n".join(requirements)
        by_kind = {
            kind: [e for e in knowledge if e.kind == kind]
            for kind in ("bullet", "hint", "dead_end")
        }
        lessons = [
            f"- {e.summary}" + (f"\n{e.content}" if e.kind == "bullet" and e.content else "")
            for e in knowledge_entries.ranked(by_kind["bullet"]) + by_kind["hint"]
        ]
        if lessons:
            parts["lessons"] = fence("lessons", "\n".join(lessons))
        if by_kind["dead_end"]:
            parts["dead_ends"] = fence(
                "dead_ends", "\n".join(f"- {e.summary}" for e in by_kind["dead_end"][-10:])
            )
        if self.rounds:
            last = self.rounds[-1]
            verdict = (
                "was not scored (the judge failed)"
                if last.evaluation.judge_failed
                else f"scored {last.evaluation.score:.3f}"
            )
            parts["previous_attempt"] = (
                f"Round {last.index} {verdict}.\n"
                + fence("previous_output", last.output)
                + "\n"
                + fence("feedback", last.evaluation.feedback or last.evaluation.reasoning)
            )
            best = self.best
            if best is not last and best is not None:
                parts["best_so_far"] = (
                    f"Round {best.index} scored {best.evaluation.score:.3f}:\n"
                    + fence("best_output", best.output)
                )
        parts["answer"] = self._answer_format()
        titles = {
            "task": "Task",
            "requirements": "Requirements",
            "lessons": "Lessons from earlier runs",
            "dead_ends": "Outputs that failed before",
            "previous_attempt": "Your previous attempt",
            "best_so_far": "Best so far",
            "answer": "Answer",
        }
        user = "\n\n".join(f"## {titles[name]}\n{text}" for name, text in parts.items())
        manifest = {
            "generation": len(self.rounds) + 1,
            "attempt": 0,
            "components": [
                {
                    "name": name,
                    "chars": len(text),
                    "tokens": estimate_tokens(text),
                    "sha256": hashlib.sha256(text.encode()).hexdigest(),
                }
                for name, text in parts.items()
            ],
            "knowledge": {
                "playbook": [e.id for e in by_kind["bullet"]],
                "hints": [e.id for e in by_kind["hint"]],
                "dead_ends": [e.id for e in by_kind["dead_end"]],
            },
        }
        return SYSTEM, user, manifest

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
                    **where,
                )
            )
        proposed: list = []
        curator_text = ""
        if all(self.providers[role].name != "local" for role in ("coach", "curator")):
            try:
                proposed, curator_text = self._coach(best)
            except LessonloopError as exc:  # the rounds stand; only the model's lessons are lost
                self._emit("learning_skipped", reason=exc.message)
        edits.apply(self.store, self.scope, proposed, curator_text, where, proposals)
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

    def _finish(self, status: str, reason: str) -> None:
        run_store.set_status(self.store, self.run_id, status, reason)
        run = run_store.get_run(self.store, self.run_id)
        artifacts.write_report(
            self.run_dir,
            run,
            run_store.generations(self.store, self.run_id),
            run_store.gate_decisions(self.store, self.run_id),
        )
        self._emit(f"run_{status}", reason=reason, **run_summary(self.store, self.run_id))


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:200]
    return "(no detail)"


def start(
    store: Store,
    spec: TaskSpec,
    task_path: Path,
    provider: str | None = None,
    model: str | None = None,
    run_id: str | None = None,
    observer: Callable[[dict], None] | None = None,
    max_calls: int | None = None,
    max_tokens: int | None = None,
) -> dict:
    """Improve ``spec``: a new run, or the rounds left of ``run_id`` when it exists.

    ``max_calls``/``max_tokens`` bound the run (stored with it, so a resumed run keeps them;
    given again for an existing run, they replace them)."""
    check_limits(max_calls, max_tokens)
    given = {
        name: value
        for name, value in (("max_calls", max_calls), ("max_tokens", max_tokens))
        if value is not None
    }
    existing = run_store.find_run(store, run_id) if run_id else None
    if existing is not None:
        if existing["kind"] != "task" or existing["scenario"] != f"task:{spec.name}":
            raise UsageError(
                f"run {run_id!r} is a {existing['scenario']!r} run, not task {spec.name!r}"
            )
        stored = run_store.loads(existing["config_json"])
        # the spec the run started with: an edited task file would change the scale (epoch)
        spec = parse(stored["task"], f"the task stored with run {run_id}")
        routes = {role: config.Route(**r) for role, r in stored["routes"].items()}
        settings = config.load()
        providers = build_routes(routes, settings)
        budgets = {**stored.get("budgets", {}), **given}  # limits, not semantics: may be raised
        if budgets != stored.get("budgets", {}):
            run_store.update_config(store, run_id, {**stored, "budgets": budgets})
    else:
        settings, routes, providers = routes_for(spec, provider, model)
        run_id = run_id or new_run_id()
        budgets = given
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
                "routes": {r: route.to_dict() for r, route in routes.items()},
                "task": spec.model_dump(exclude_defaults=True),
                "budgets": budgets,
            },
        )
    from ..loop import request

    request.discard(run_id)  # the command line `started` kept: the row holds it all now
    return TaskRun(
        store,
        spec,
        task_path,
        run_id,
        providers,
        routes,
        observer,
        budgets.get("max_calls"),
        budgets.get("max_tokens"),
    ).execute()
