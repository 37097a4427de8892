"""Role prompts for the scenario loop: words for a model, the same facts as data for ``local``.

Every prompt of a run starts with the same system message (the scenario's rules and the
strategy's fields), so a local server's prefix cache reads it once; the role's task, its
facts and the answer format follow in the user message, short enough for a small model with a
4k-8k window. Roles that answer JSON carry its schema, sent through the endpoint's own
structured-output mechanism; ``state`` is what the offline agent reads instead of the words.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, replace

from .context import FENCE_NOTE, Context, fence, strategy_interface, strategy_words

EDIT_OPS = ("add_bullet", "update_bullet", "remove_bullet", "add_hint", "add_dead_end")
COACH_SCHEMA = {
    "type": "object",
    "properties": {
        "edits": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {
                    "op": {"enum": list(EDIT_OPS)},
                    "id": {"type": "integer"},
                    "text": {"type": "string", "maxLength": 200},
                    "tags": {
                        "type": "array",
                        "maxItems": 4,
                        "items": {"type": "string", "maxLength": 40},
                    },
                },
                "required": ["op", "id", "text", "tags"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["edits"],
    "additionalProperties": False,
}
CURATOR_SCHEMA = {
    "type": "object",
    "properties": {
        "decisions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "index": {"type": "integer", "minimum": 0},
                    "decision": {"enum": ["accept", "merge", "reject"]},
                    "reason": {"type": "string", "maxLength": 120},
                },
                "required": ["index", "decision", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["decisions"],
    "additionalProperties": False,
}
COACH_EXAMPLE_TEXT = "<one sentence the evidence supports>"


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    state: dict  # the same facts as data, for the offline agent
    schema: dict | None = None  # the JSON the answer must be, when it is JSON
    max_tokens: int = 400
    temperature: float = 0.7


def _system(ctx: Context) -> str:
    return (
        f"You help improve a strategy for the game '{ctx.scenario}'.\n\n"
        f"## Rules\n{ctx.description}\n\n## Strategy\n{ctx.schema_text}"
    )


def _user(task: str, facts: dict[str, str], answer: str) -> str:
    body = "\n\n".join(f"## {title}\n{text}" for title, text in facts.items() if text)
    return f"{task}\n\n{body}\n\n## Answer\n{answer}"


ENUM_INTEGERS_UP_TO = 32  # values: a bounded integer range this small is sent as an enum


def strategy_schema(ctx: Context) -> dict | None:
    """The schema a competitor's answer is held to, when strategies are plain parameters.

    Grammar-constrained servers (llama.cpp and those built on it) enforce types and enums but
    not ``minimum``/``maximum``: a small integer range is also given as its enum, so the
    grammar keeps the value in range (the answer is still validated against the scenario)."""
    schema = strategy_interface(ctx.strategy_schema)
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    bounded = {}
    for name, spec in properties.items():
        if (
            isinstance(spec, dict)
            and spec.get("type") == "integer"
            and "enum" not in spec
            and isinstance(spec.get("minimum"), int)
            and isinstance(spec.get("maximum"), int)
            and 0 <= spec["maximum"] - spec["minimum"] < ENUM_INTEGERS_UP_TO
        ):
            spec = {**spec, "enum": list(range(spec["minimum"], spec["maximum"] + 1))}
        bounded[name] = spec
    return {**schema, "properties": bounded}


COMPETITOR_FACTS = {
    "evaluation": "How strategies are judged",
    "incumbent": "Current best",
    "trajectory": "Recent generations (oldest first)",
    "playbook": "Playbook",
    "hints": "Hints",
    "dead_ends": "Dead ends (avoid)",
    "last_analysis": "Last analysis",
    "failure_report": "Last attempt",
}


def competitor(ctx: Context) -> Prompt:
    parts = ctx.components
    facts = {title: parts[name] for name, title in COMPETITOR_FACTS.items() if name in parts}
    task = (
        "Task: propose one new strategy that should score higher than the current best. It "
        "must differ from the current best and from every strategy already tried: change "
        "the fields the evidence says matter. " + FENCE_NOTE
    )
    answer = (
        f"Only the JSON object of the new strategy, every field filled in:\n{ctx.answer_template}"
    )
    # a retry asks again after an answer that failed: sample more boldly
    temperature = min(1.2, 0.9 + 0.15 * ctx.attempt)
    return Prompt(
        _system(ctx),
        _user(task, facts, answer),
        ctx.state(),
        strategy_schema(ctx),
        max_tokens=300,
        temperature=temperature,
    )


REPAIR_GRID = 20  # steps across a number's range in a repair's schema


def repair_schema(ctx: Context, changed: str | None = None, current: object = None) -> dict | None:
    """The strategy schema for a repair, with every bounded number given as a grid of values
    (an enum, which grammar-constrained servers enforce, unlike bounds) and ``changed`` held
    off its ``current`` value: a small model asked to fix an answer in words often writes it
    again."""
    schema = strategy_schema(ctx)
    if schema is None:
        return None
    properties = {}
    for name, spec in schema["properties"].items():
        if (
            isinstance(spec, dict)
            and spec.get("type") == "number"
            and "enum" not in spec
            and isinstance(spec.get("minimum"), (int, float))
            and isinstance(spec.get("maximum"), (int, float))
        ):
            low, high = spec["minimum"], spec["maximum"]
            spec = {
                **spec,
                "enum": [
                    round(low + (high - low) * k / REPAIR_GRID, 6) for k in range(REPAIR_GRID + 1)
                ],
            }
        if name == changed and isinstance(spec, dict):
            choices = spec.get("enum") or ([True, False] if spec.get("type") == "boolean" else [])
            others = [value for value in choices if value != current]
            if others:
                spec = {**spec, "enum": others}
        properties[name] = spec
    return {**schema, "properties": properties}


def competitor_repair(
    prompt: Prompt,
    ctx: Context,
    answer: str,
    candidate: dict,
    problem: str,
    seed: int,
    repeated: bool,
) -> tuple[Prompt, list[dict]]:
    """The competitor's prompt again, with its answer and why it cannot be used, under a schema
    that keeps numbers in range. A small model told only that it repeated the current best
    tends to repeat it again: a ``repeated`` answer must change one field (chosen by ``seed``),
    which the schema holds off its value."""
    why = f"That answer cannot be used: {problem}."
    changed = None
    fields = [
        name
        for name, spec in ((strategy_schema(ctx) or {}).get("properties") or {}).items()
        if isinstance(spec, dict) and "const" not in spec
    ]
    if repeated and fields:
        changed = random.Random(seed).choice(fields)
        why += (
            f" Write a different strategy: give {changed} a new value (it is "
            f"{json.dumps(candidate.get(changed))} now), and change any other field the "
            "evidence supports."
        )
    follow_up = [
        {"role": "assistant", "content": answer},
        {"role": "user", "content": f"{why} Reply with only the JSON object."},
    ]
    schema = repair_schema(ctx, changed, candidate.get(changed) if changed else None)
    return replace(
        prompt, temperature=min(1.2, prompt.temperature + 0.3), schema=schema or prompt.schema
    ), follow_up


def translator(ctx: Context, text: str) -> Prompt:
    task = "Task: the text below describes a strategy. Write that strategy as one JSON object."
    answer = f"Only the JSON object, every field filled in:\n{ctx.answer_template}"
    return Prompt(
        _system(ctx),
        _user(task, {"Text": fence("text", text)}, answer),
        {"role": "translator", "strategy_schema": ctx.interface(), "text": text},
        strategy_schema(ctx),
        max_tokens=300,
        temperature=0.0,
    )


def _outcome_words(outcome: dict) -> str:
    lines = [f"Gate: {outcome.get('decision')} ({outcome.get('rationale') or 'no rationale'})"]
    if outcome.get("incumbent") is not None:
        lines.append(
            f"Current best (score {outcome.get('incumbent_score') or 0:.4f}): "
            f"{strategy_words(outcome['incumbent'])}"
        )
    lines.append(
        f"Challenger (score {outcome.get('challenger_score') or 0:.4f}): "
        f"{strategy_words(outcome.get('challenger'))}"
    )
    dims = outcome.get("challenger_dimensions") or {}
    before = outcome.get("incumbent_dimensions") or {}
    if dims:
        lines.append(
            "Dimensions, challenger vs best: "
            + ", ".join(
                f"{k} {v:.3f}" + (f" vs {before[k]:.3f}" if k in before else "")
                for k, v in dims.items()
            )
        )
    return "\n".join(lines)


def analyst(ctx: Context, outcome: dict) -> Prompt:
    task = (
        "Task: explain what changed between the challenger and the current best and why "
        "the score moved."
    )
    facts = {
        "Outcome": _outcome_words(outcome),
        "Recent generations": "\n".join(ctx.trajectory_lines[-4:]),
    }
    return Prompt(
        _system(ctx),
        _user(task, facts, "Two to four short Markdown bullets."),
        {
            "role": "analyst",
            "generation": ctx.generation,
            "outcome": outcome,
            "strategy_schema": ctx.interface(),
            "trajectory": ctx.trajectory_state(),
        },
        max_tokens=250,
        temperature=0.3,
    )


def coach(ctx: Context, outcome: dict, analysis: str) -> Prompt:
    task = (
        "Task: propose at most 3 lessons for the playbook that this evidence supports, "
        "or none. " + FENCE_NOTE
    )
    facts = {
        "Outcome": _outcome_words(outcome),
        "Analysis": fence("analysis", analysis),
        "Playbook": _playbook(ctx),
    }
    answer = (
        'Only a JSON object {"edits": [...]}, an empty list when nothing is worth keeping. Each '
        f'edit: {{"op": "add_bullet", "id": 0, "text": "{COACH_EXAMPLE_TEXT}", "tags": '
        '["param:<field>"]}. op is one of ' + ", ".join(EDIT_OPS) + "; id is the playbook "
        "entry's number for update_bullet and remove_bullet, else 0. Useful tags: "
        "param:<field>, direction:<field>:up or down, target:<field>=<value>."
    )
    return Prompt(
        _system(ctx),
        _user(task, facts, answer),
        {
            "role": "coach",
            "generation": ctx.generation,
            "outcome": outcome,
            "analysis": analysis,
            "playbook": ctx.playbook_state(),
            "strategy_schema": ctx.interface(),
        },
        COACH_SCHEMA,
        max_tokens=400,
        temperature=0.3,
    )


def curator(ctx: Context, edits: list) -> Prompt:
    task = (
        "Task: decide for each proposed playbook edit: accept, merge or reject. Reject edits "
        "that are vague, contradict stronger evidence, or repeat the playbook."
    )
    listed = "\n".join(f"{i}. {json.dumps(edit, sort_keys=True)}" for i, edit in enumerate(edits))
    answer = (
        'Only a JSON object {"decisions": [{"index": 0, "decision": "accept", "reason": '
        '"<a few words>"}]}, one decision per edit.'
    )
    return Prompt(
        _system(ctx),
        _user(task, {"Proposed edits": listed, "Playbook": _playbook(ctx)}, answer),
        {
            "role": "curator",
            "generation": ctx.generation,
            "edits": edits,
            "playbook": ctx.playbook_state(),
        },
        CURATOR_SCHEMA,
        max_tokens=300,
        temperature=0.0,
    )


def _playbook(ctx: Context) -> str:
    """The playbook as far as the context budget holds it, fenced, for the coach and the
    curator (a small model's window has no room for more)."""
    lines = ctx.playbook_lines[: len(ctx.included_bullets)]
    return fence("playbook", "\n".join(lines) or "(empty)")
