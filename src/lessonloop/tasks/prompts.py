"""What a task run's models are told: the competitor's prompt (the task, its requirements,
what earlier runs and rounds taught, the answer's format), the schema its answer is held to,
and the coach's and curator's answer schemas. Pure functions of the task and its rounds."""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass

from ..knowledge import edits
from ..knowledge import entries as knowledge_entries
from ..loop.context import FENCE_NOTE, estimate_tokens, fence
from .evaluate import Evaluation
from .spec import TaskSpec

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


@dataclass
class Round:
    """One stored round of a task run: its output and how it was scored."""

    index: int
    output: str
    evaluation: Evaluation


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


def answer_format(spec: TaskSpec, schema: dict | None) -> str:
    """The answer's format with a one-line example (a schema itself goes through the
    endpoint's structured output, not the words)."""
    if spec.output_format == "json" and schema is None:
        return "Only the JSON, nothing before or after it."
    if spec.output_format == "json":
        return f"Only the JSON object, e.g.\n{json_example(schema)}"
    if spec.output_format == "code":
        language = (spec.language or "").lower()
        return f"Only the code, in one fenced block:\n```{language}\n<the code>\n```"
    kind = "Markdown" if spec.output_format == "markdown" else "plain text"
    return f"Only the output itself, in {kind}, e.g.\n<the output, nothing before or after it>"


def competitor_prompt(
    spec: TaskSpec, schema: dict | None, knowledge: list, rounds: list[Round], best: Round | None
) -> tuple[str, str, dict]:
    """The competitor's prompt: a fixed system message, then the task, its requirements,
    what earlier runs and rounds taught, and the answer format, each under a heading."""
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
        kind: [e for e in knowledge if e.kind == kind] for kind in ("bullet", "hint", "dead_end")
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
    if rounds:
        last = rounds[-1]
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
        if best is not last and best is not None:
            parts["best_so_far"] = (
                f"Round {best.index} scored {best.evaluation.score:.3f}:\n"
                + fence("best_output", best.output)
            )
    parts["answer"] = answer_format(spec, schema)
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
        "generation": len(rounds) + 1,
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
