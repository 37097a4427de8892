"""Scoring one output of a task: required strings, the output's format, the verifier in the
sandbox, then the judge. Cheap checks come first and a failure stops there with score 0."""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..json_blocks import json_objects
from ..safety import sandbox
from ..scenarios.base import schema_problems
from .judge import Judge, JudgeFailed
from .spec import TaskSpec

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)


@dataclass
class Evaluation:
    score: float
    passed_verifier: bool | None  # None when the task has no verifier or it did not run
    dimensions: dict[str, float] = field(default_factory=dict)
    reasoning: str = ""
    epoch: str = ""
    feedback: str = ""  # what the next revision should know (verifier report, judge reasoning)
    judge_failed: bool = False
    disagreement: bool = False

    def to_dict(self) -> dict:
        return {
            "score": self.score,
            "passed_verifier": self.passed_verifier,
            "dimensions": self.dimensions,
            "reasoning": self.reasoning,
            "epoch": self.epoch,
        }


def extract(text: str, spec: TaskSpec) -> str:
    """The output inside a model's answer: the JSON object for json, the fenced block for
    code (the one in the task's language first), otherwise the text without a wrapping fence."""
    text = text or ""
    if spec.output_format == "json":
        found = json_objects(text)
        return json.dumps(found[0], indent=2, ensure_ascii=False) + "\n" if found else ""
    blocks = _FENCE.findall(text)
    if spec.output_format == "code" and blocks:
        language = (spec.language or "").lower()
        chosen = next((body for tag, body in blocks if tag.lower() == language), blocks[0][1])
        return chosen.strip() + "\n"
    stripped = text.strip()
    if len(blocks) == 1 and stripped.startswith("```") and stripped.endswith("```"):
        return blocks[0][1].strip() + "\n"
    return stripped + "\n" if stripped else ""


_REPLY_FENCE = re.compile(r"^```", re.M)  # a reply's fence (one inside code is indented)


def _answer(output: str, spec: TaskSpec) -> str:
    """``output`` as given when it already is one (valid JSON for a JSON task, or no fence at
    the start of a line); otherwise the answer inside a reply, as ``improve`` takes it."""
    if spec.output_format == "json":
        try:
            json.loads(output)
            return output
        except json.JSONDecodeError:
            return extract(output, spec)
    return extract(output, spec) if _REPLY_FENCE.search(output) else output


def format_problems(output: str, spec: TaskSpec) -> list[str]:
    if not output.strip():
        return ["the answer held no output"]
    if spec.output_format != "json":
        return []
    try:
        value = json.loads(output)
    except json.JSONDecodeError as exc:
        return [f"the output is not valid JSON: {exc}"]
    return (
        [str(p) for p in schema_problems(value, spec.json_schema, "output")]
        if spec.json_schema
        else []
    )


def verify(spec: TaskSpec, output: str, task_dir: Path) -> sandbox.Outcome:
    """Run the verifier in the sandbox: ``{file}`` names the output file in its working
    directory (otherwise the output arrives on stdin)."""
    assert spec.verifier is not None
    name = f"output.{spec.extension}"
    command = spec.verifier.command.replace("{task_dir}", shlex.quote(str(task_dir))).replace(
        "{python}", shlex.quote(sys.executable)
    )
    data = output.encode("utf-8")
    if "{file}" in command:
        return sandbox.run(
            command.replace("{file}", name),
            files={name: data},
            limits=sandbox.Limits(timeout=spec.verifier.timeout),
        )
    return sandbox.run(command, stdin=data, limits=sandbox.Limits(timeout=spec.verifier.timeout))


def evaluate(
    spec: TaskSpec, output: str, task_dir: Path, judge: Judge | None, epoch: str
) -> Evaluation:
    """Score ``output``. A task with a rubric needs ``judge``; one without is scored by its
    verifier alone (1 when it passes)."""
    missing = [s for s in spec.required_strings if s not in output]
    problems = format_problems(output, spec)
    if missing or problems:
        why = "; ".join(
            problems + ([f"missing required strings: {', '.join(missing)}"] if missing else [])
        )
        return Evaluation(0.0, None, reasoning=why, epoch=epoch, feedback=why)
    passed = None
    feedback = []
    if spec.verifier is not None:
        outcome = verify(spec, output, task_dir)
        passed = outcome.passed
        feedback.append(f"Verifier {'passed' if passed else 'FAILED'}: {outcome.report()}")
        if not passed:
            return Evaluation(
                0.0,
                False,
                reasoning=f"the verifier failed: {outcome.report()}",
                epoch=epoch,
                feedback="\n".join(feedback),
            )
    if judge is None:
        checked = "the verifier passed" if spec.verifier else "the output matches its schema"
        return Evaluation(
            1.0, passed, reasoning=checked, epoch=epoch, feedback="\n".join(feedback) or checked
        )
    try:
        verdict = judge(output)
    except JudgeFailed as exc:
        return Evaluation(
            0.0,
            passed,
            reasoning=exc.message,
            epoch=epoch,
            feedback="\n".join(feedback + [exc.message]),
            judge_failed=True,
        )
    reasoning = verdict.reasoning
    if verdict.disagreement:
        spread = ", ".join(f"{s:.2f}" for s in verdict.sample_scores)
        reasoning = (
            f"[the {verdict.samples} judge samples disagree: {spread}] {reasoning}"
        ).strip()
    feedback.append(
        f"Judge: score {verdict.score:.3f}; "
        + ", ".join(f"{k} {v:.2f}" for k, v in verdict.dimensions.items())
        + f". {reasoning}"
    )
    return Evaluation(
        verdict.score,
        passed,
        verdict.dimensions,
        reasoning,
        epoch,
        "\n".join(feedback),
        disagreement=verdict.disagreement,
    )


def judge_once(
    spec: TaskSpec,
    task_dir: Path,
    output: str,
    open_store: Callable,
    provider: str | None = None,
    model: str | None = None,
) -> Evaluation:
    """``lessonloop judge`` (and the MCP ``judge_output`` tool): score one output (the answer
    inside it when it is a reply, see ``_answer``) with the judge route; a task with a rubric
    and no judge model is refused in one line. The store (``open_store()``, a context manager:
    the verdict cache and the usage ledger) is opened only for a judge, so a refusal or a
    verifier-only task writes nothing. A judge that gives no usable verdict raises
    JudgeFailed (exit 1), saying why."""
    from .. import config
    from ..errors import UsageError
    from ..providers.registry import build
    from ..store import runs as run_store
    from .judge import epoch

    output = _answer(output, spec)
    settings = config.load(flags={"PROVIDER": provider, "MODEL": model})
    route = settings.route("judge")
    if not spec.needs_judge:
        return evaluate(spec, output, task_dir, None, epoch(spec, route))
    if route.kind == "local":
        raise UsageError(
            f"task {spec.name!r} has a rubric, so judging it needs a model: set "
            "--provider or LESSONLOOP_JUDGE_PROVIDER (`lessonloop doctor` shows "
            "the routes)"
        )
    judge_provider = build(route, settings)
    with open_store() as store:
        scorer = Judge(
            spec,
            judge_provider,
            route,
            store,
            on_call=lambda c: run_store.record_call(
                store, None, None, None, "judge", judge_provider.name, c
            ),
        )
        result = evaluate(spec, output, task_dir, scorer, epoch(spec, route))
    if result.judge_failed:  # reported as the failure it is, never as a score of 0
        raise JudgeFailed(result.reasoning)
    return result
