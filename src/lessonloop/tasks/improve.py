"""The improve loop: generate → verify → judge → stop or revise with the feedback.

Each round is stored like a generation (so ``status``, ``show``, ``watch``, ``list`` and
``export`` work for task runs), the best output is kept in ``runs/<id>/best_output.<ext>``, and
what the run learned goes into the task's knowledge scope through admission, so the next
``improve`` of the task starts with it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import canonical, config, paths
from ..errors import LessonloopError, UsageError
from ..files import atomic_write
from ..knowledge import admission, edits
from ..knowledge import entries as knowledge_entries
from ..knowledge.render import render_scope
from ..loop import artifacts, elo
from ..loop.context import FENCE_NOTE, estimate_tokens, fence
from ..loop.events import EventLog
from ..loop.runner import new_run_id, run_lock, run_summary
from ..providers.base import Completion, Request
from ..providers.registry import build_routes
from ..store import runs as run_store
from ..store.db import Store
from ..timeutil import utc_now
from .evaluate import Evaluation, evaluate, extract
from .judge import Judge, epoch
from .spec import TaskSpec, parse

PLATEAU_ROUNDS = 3  # rounds without a better score before the loop stops
JUDGE_FAILURES = 2  # consecutive rounds whose verdict could not be read
FORMAT_HINTS = {
    "text": "Reply with the output only, as plain text.",
    "markdown": "Reply with the output only, in Markdown.",
    "json": "Reply with the output only: one JSON object.",
    "code": "Reply with the output only: the code in one fenced block{language}.",
}


def task_scope(spec: TaskSpec) -> str:
    return f"task:{spec.slug}"


def routes_for(spec: TaskSpec, provider: str | None, model: str | None):
    """Settings, routes and providers for a task, refusing what cannot work offline."""
    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    routes = settings.routes()
    hint = ("set --provider (e.g. --provider ollama --model llama3.2, or scripted:FILE.json) or "
            "LESSONLOOP_PROVIDER; `lessonloop doctor` shows the routes")
    if routes["competitor"].kind == "local":
        raise UsageError(f"improving task {spec.name!r} needs a model to write its outputs (the "
                         f"offline local provider only plays scenarios): {hint}")
    if spec.needs_judge and routes["judge"].kind == "local":
        raise UsageError(f"task {spec.name!r} has a rubric, so it needs a judge model: {hint} "
                         "or LESSONLOOP_JUDGE_PROVIDER")
    return settings, routes, build_routes(routes, settings)


@dataclass
class Round:
    index: int
    output: str
    evaluation: Evaluation


class TaskRun:
    """One improve run of one task."""

    def __init__(self, store: Store, spec: TaskSpec, task_path: Path, run_id: str, providers: dict,
                 routes: dict, observer: Callable[[dict], None] | None = None):
        self.store, self.spec, self.task_path, self.run_id = store, spec, task_path, run_id
        self.providers, self.routes = providers, routes
        self.observer = observer or (lambda event: None)
        self.run_dir = paths.run_dir(run_id)
        self.scope = task_scope(spec)
        self.epoch = epoch(spec, routes["judge"])
        self.judge = (Judge(spec, providers["judge"], routes["judge"], store,
                            on_call=lambda c: self._record("judge", c))
                      if spec.needs_judge else None)
        self.rounds: list[Round] = []
        self.round_index = 0

    # bookkeeping ---------------------------------------------------------------------------
    def _record(self, role: str, completion: Completion) -> None:
        run_store.record_call(self.store, self.run_id, self.round_index or None, 0, role,
                              self.providers[role].name, completion)

    def _emit(self, event: str, **payload) -> None:
        self.observer(self.events.emit(event, **payload))

    def _call(self, role: str, system: str, user: str, calls: list) -> str:
        completion = self.providers[role].complete(Request(
            role=role, system=system, messages=[{"role": "user", "content": user}],
            seed=self.round_index))
        self._record(role, completion)
        calls.append({"attempt": 0, "role": role, "prompt": f"{system}\n\n{user}",
                      "output": completion.text, "created_at": utc_now()})
        return completion.text

    @property
    def best(self) -> Round | None:
        return max(self.rounds, key=lambda r: r.evaluation.score, default=None)

    # the loop ------------------------------------------------------------------------------
    def execute(self) -> dict:
        with run_lock(self.run_dir):
            self.events = EventLog(self.run_dir / "events.ndjson")
            self._restore()
            run_store.set_status(self.store, self.run_id, "running")
            self._emit("run_started" if not self.rounds else "run_resumed",
                       scenario=f"task:{self.spec.name}", target_generations=self.spec.max_rounds,
                       completed_generations=len(self.rounds),
                       provider=self.routes["competitor"].provider)
            try:
                reason = self._stop_reason()
                while reason is None:
                    self._round(len(self.rounds) + 1)
                    reason = self._stop_reason()
                self._learn()
            except KeyboardInterrupt:
                self._finish("stopped", "interrupted by the user")
                raise
            except Exception as exc:
                message = getattr(exc, "message", None) or f"{exc.__class__.__name__}: {exc}"
                self._finish("failed", message)
                raise
            status = "failed" if reason.startswith("the judge") else "completed"
            self._finish(status, reason)
        return {**run_summary(self.store, self.run_id), "stop_reason": reason,
                "best_output": str(self._best_path()) if self.best else None}

    def _restore(self) -> None:
        """A re-run of the same run id continues after its stored rounds."""
        for g in run_store.generations(self.store, self.run_id):
            output = (run_store.loads(g["strategy_json"]) or {}).get("output", "")
            dims = run_store.loads(g["dimensions_json"]) or {}
            self.rounds.append(Round(g["generation_index"], output, Evaluation(
                g["mean_score"], dims.pop("verifier", None) == 1.0 if "verifier" in dims else None,
                dims, feedback=g["analysis"], epoch=g["evaluator_epoch"])))

    def _stop_reason(self) -> str | None:
        rounds = self.rounds
        if not rounds:
            return None
        last = rounds[-1]
        threshold = self.spec.threshold
        if len(rounds) >= 2 and min(r.evaluation.score for r in rounds[-2:]) >= threshold:
            return (f"threshold {threshold:g} reached in round {rounds[-2].index} and confirmed "
                    f"in round {last.index}")
        if len(rounds) >= JUDGE_FAILURES and all(r.evaluation.judge_failed
                                                  for r in rounds[-JUDGE_FAILURES:]):
            return f"the judge gave no usable verdict {JUDGE_FAILURES} rounds in a row"
        if len(rounds) >= 2 and rounds[-2].output == last.output:
            return f"round {last.index} produced the same output as round {rounds[-2].index}"
        if len(rounds) >= self.spec.max_rounds:
            return f"max rounds ({self.spec.max_rounds}) reached"
        best_before = max((r.evaluation.score for r in rounds[:-PLATEAU_ROUNDS]), default=None)
        if (best_before is not None and len(rounds) > PLATEAU_ROUNDS
                and max(r.evaluation.score for r in rounds[-PLATEAU_ROUNDS:]) <= best_before):
            return f"plateau: no better score in the last {PLATEAU_ROUNDS} rounds"
        return None

    def _round(self, index: int) -> None:
        started, created_at = time.perf_counter(), utc_now()
        self.round_index = index
        self._emit("generation_started", generation=index)
        calls: list[dict] = []
        knowledge = knowledge_entries.active(self.store, self.scope)
        system, user, manifest = self._prompt(knowledge)
        answer = self._call("competitor", system, user, calls)
        output = extract(answer, self.spec)
        evaluation = evaluate(self.spec, output, self.task_path.parent, self.judge, self.epoch)
        best = self.best
        best_score = best.evaluation.score if best else None
        decision = "advance" if best is None or evaluation.score > best_score else "rollback"
        self.rounds.append(Round(index, output, evaluation))
        reason = self._stop_reason()
        rationale = (f"score {evaluation.score:.4f}"
                     + (f" vs best {best_score:.4f}" if best_score is not None else "")
                     + (f"; stopping: {reason}" if reason else "; revising with the feedback"))
        dims = dict(evaluation.dimensions)
        if evaluation.passed_verifier is not None:
            dims["verifier"] = 1.0 if evaluation.passed_verifier else 0.0
        record = run_store.GenerationRecord(
            run_id=self.run_id, generation_index=index, attempts=1, strategy={"output": output},
            mean_score=evaluation.score, incumbent_score=best_score,
            mean_delta=None if best_score is None else evaluation.score - best_score,
            best_score=max(evaluation.score, best_score or 0.0), elo=elo.START,
            wins=0, losses=0, ties=0, quarantined=0, gate_decision=decision,
            evaluator_epoch=self.epoch, dimensions=dims, context=manifest,
            analysis=evaluation.feedback or evaluation.reasoning,
            duration_seconds=round(time.perf_counter() - started, 4), created_at=created_at,
            role_calls=calls,
            decisions=[{"attempt": 0, "decision": decision, "rationale": rationale,
                        "mean_delta": None if best_score is None else evaluation.score - best_score,
                        "created_at": utc_now()}])
        with self.store.transaction():
            run_store.save_generation(self.store, record)
            if evaluation.passed_verifier is False:  # what failed, so later runs avoid it
                admission.admit(self.store, [admission.Proposal(
                    kind="dead_end", scope=self.scope, source="evidence",
                    summary=f"An output failed the verifier: {_first_line(evaluation.feedback)}",
                    content=output, tags=["verifier-failed"], detail=evaluation.feedback,
                    run_id=self.run_id, generation_index=index)], render_views=False)
        saved = run_store.get_generation(self.store, self.run_id, index)
        artifacts.write_generation(self.run_dir, saved, [])
        if decision == "advance":
            atomic_write(self._best_path(), output)
        self._emit("generation_completed", generation=index, mean_score=evaluation.score,
                   incumbent_score=best_score, mean_delta=record.mean_delta,
                   gate_decision=decision, elo=elo.START, best_score=record.best_score,
                   attempts=1, quarantined=0, rationale=rationale)

    def _best_path(self) -> Path:
        return self.run_dir / f"best_output.{self.spec.extension}"

    def _prompt(self, knowledge: list) -> tuple[str, str, dict]:
        spec = self.spec
        language = f" tagged {spec.language}" if spec.language else ""
        system = ("You are the competitor: write the output this task asks for, improving on "
                  "earlier attempts with their feedback. "
                  + FORMAT_HINTS[spec.output_format].format(language=language) + " " + FENCE_NOTE)
        parts = {"task": spec.prompt}
        requirements = [f"- It must contain exactly: {s!r}" for s in spec.required_strings]
        requirements += [f"- It must cover: {c}" for c in spec.required_concepts]
        if spec.json_schema:
            requirements.append(f"- It must be valid against this JSON Schema: "
                                f"{canonical.dumps(spec.json_schema)}")
        if spec.rubric:
            requirements += [f"- Judged on {d.name} (weight {d.weight:g}): {d.description}"
                             for d in spec.rubric]
        if spec.verifier:
            requirements.append("- A verifier program checks it; it must pass.")
        if requirements:
            parts["requirements"] = "\n".join(requirements)
        by_kind = {kind: [e for e in knowledge if e.kind == kind]
                   for kind in ("bullet", "hint", "dead_end")}
        lessons = [f"- {e.summary}" + (f"\n{e.content}" if e.kind == "bullet" and e.content else "")
                   for e in knowledge_entries.ranked(by_kind["bullet"]) + by_kind["hint"]]
        if lessons:
            parts["lessons"] = fence("lessons", "\n".join(lessons))
        if by_kind["dead_end"]:
            parts["dead_ends"] = fence("dead_ends", "\n".join(
                f"- {e.summary}" for e in by_kind["dead_end"][-10:]))
        if self.rounds:
            last = self.rounds[-1]
            parts["previous_attempt"] = (
                f"Round {last.index} scored {last.evaluation.score:.3f}.\n"
                + fence("previous_output", last.output) + "\n"
                + fence("feedback", last.evaluation.feedback or last.evaluation.reasoning))
            best = self.best
            if best is not last and best is not None:
                parts["best_so_far"] = (f"Round {best.index} scored {best.evaluation.score:.3f}:\n"
                                        + fence("best_output", best.output))
        titles = {"task": "Task", "requirements": "Requirements", "lessons":
                  "Lessons from earlier runs", "dead_ends": "Outputs that failed before",
                  "previous_attempt": "Your previous attempt", "best_so_far": "Best so far"}
        user = "\n\n".join(f"## {titles[name]}\n{text}" for name, text in parts.items())
        manifest = {
            "generation": len(self.rounds) + 1, "attempt": 0,
            "components": [{"name": name, "chars": len(text), "tokens": estimate_tokens(text),
                            "sha256": hashlib.sha256(text.encode()).hexdigest()}
                           for name, text in parts.items()],
            "knowledge": {"playbook": [e.id for e in by_kind["bullet"]],
                          "hints": [e.id for e in by_kind["hint"]],
                          "dead_ends": [e.id for e in by_kind["dead_end"]]},
        }
        return system, user, manifest

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
            proposals.append(admission.Proposal(
                kind="bullet", scope=self.scope, source="evidence",
                summary=f"Best output so far scored {best.evaluation.score:.2f}: start from it",
                content=best.output, tags=["best-output", f"score:{best.evaluation.score:.2f}"],
                detail=best.evaluation.feedback, **where))
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
        """The coach's proposed lessons for this task and the curator's verdicts on them."""
        proposed: list = []
        curator_text = ""
        calls: list = []
        summary = "\n".join(
            f"- round {r.index}: score {r.evaluation.score:.3f}"
            + ("" if r.evaluation.passed_verifier is None else
               f", verifier {'passed' if r.evaluation.passed_verifier else 'failed'}")
            + f"; {_first_line(r.evaluation.feedback or r.evaluation.reasoning)}"
            for r in self.rounds)
        coach_text = self._call("coach", (
            "You are the coach. From this run of a task, propose lessons for the next run as "
            'a JSON block {"edits": [{"op": "add_bullet|add_hint|add_dead_end", "text": '
            '"...", "tags": ["..."]}]}. Keep only what the scores support. ' + FENCE_NOTE),
            f"## Task\n{self.spec.prompt}\n\n## Rounds\n{summary}\n\n## Best output\n"
            + fence("best_output", best.output), calls)
        proposed = edits.proposed(coach_text)
        if proposed:
            curator_text = self._call("curator", (
                "You are the curator. For each proposed edit decide accept, merge or reject, "
                'as a JSON block {"decisions": [{"index": 0, "decision": '
                '"accept|merge|reject", "reason": "..."}]}. Reject vague or unsupported '
                "edits."), f"## Proposed edits\n{canonical.dumps(proposed)}", calls)
        return proposed, curator_text

    def _finish(self, status: str, reason: str) -> None:
        run_store.set_status(self.store, self.run_id, status, reason)
        run = run_store.get_run(self.store, self.run_id)
        artifacts.write_report(self.run_dir, run, run_store.generations(self.store, self.run_id),
                               run_store.gate_decisions(self.store, self.run_id))
        self._emit(f"run_{status}", reason=reason, **run_summary(self.store, self.run_id))


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:200]
    return "(no detail)"


def start(store: Store, spec: TaskSpec, task_path: Path, provider: str | None = None,
          model: str | None = None, run_id: str | None = None,
          observer: Callable[[dict], None] | None = None) -> dict:
    """Improve ``spec``: a new run, or the rounds left of ``run_id`` when it exists."""
    existing = run_store.find_run(store, run_id) if run_id else None
    if existing is not None:
        if existing["scenario"] != f"task:{spec.name}":
            raise UsageError(f"run {run_id!r} is a {existing['scenario']!r} run, not task "
                             f"{spec.name!r}")
        stored = run_store.loads(existing["config_json"])
        # the spec the run started with: an edited task file would change the scale (epoch)
        spec = parse(stored["task"], f"the task stored with run {run_id}")
        routes = {role: config.Route(**r) for role, r in stored["routes"].items()}
        settings = config.load()
        providers = build_routes(routes, settings)
    else:
        settings, routes, providers = routes_for(spec, provider, model)
        run_id = run_id or new_run_id()
        run_store.create_run(
            store, run_id=run_id, scenario=f"task:{spec.name}", scenario_ref=str(task_path),
            target_generations=spec.max_rounds, provider=routes["competitor"].provider, seed=0,
            config={"kind": "task", "routes": {r: route.to_dict() for r, route in routes.items()},
                    "task": spec.model_dump(exclude_defaults=True)})
    return TaskRun(store, spec, task_path, run_id, providers, routes, observer).execute()
