"""``solve "goal"``: a model designs a task spec for the goal; it is validated, saved under
``.lessonloop/tasks/`` and shown, and then improved like any task."""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths
from ..errors import LessonloopError, OffSchemaError, ProviderError, UsageError
from ..files import atomic_write
from ..json_blocks import json_objects
from ..providers.base import Provider, Request
from .spec import NAME, TaskSpec, dump, parse

DESIGN_SYSTEM = (
    "You are the designer: you turn a user's goal into a task an agent can be "
    "improved on, scored by a judge with a rubric."
)
DESIGN_MAX_TOKENS = 600
# What the designer answers, through the endpoint's structured output: every field listed is
# required, as a grammar built from the properties (llama.cpp and its kin) makes them anyway.
# The rest of a task (a verifier, a JSON Schema, limits) is left to the user: a designed task
# runs no command a model wrote.
DESIGN_SCHEMA = {
    "type": "object",
    "required": ["name", "prompt", "output_format", "language", "rubric", "required_concepts"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 60},
        "prompt": {"type": "string", "minLength": 1, "maxLength": 2000},
        "output_format": {"enum": ["text", "markdown", "json", "code"]},
        "language": {"type": "string", "maxLength": 30},
        "rubric": {
            "type": "array",
            "minItems": 1,
            "maxItems": 5,
            "items": {
                "type": "object",
                "required": ["name", "weight", "description"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": 60},
                    "weight": {"type": "number", "minimum": 0.1, "maximum": 100},
                    "description": {"type": "string", "maxLength": 300},
                },
            },
        },
        "required_concepts": {
            "type": "array",
            "maxItems": 5,
            "items": {"type": "string", "maxLength": 120},
        },
    },
}
EXAMPLE = (
    '{"name": "<2-4 words>", "prompt": "<what the agent must write>", "output_format": '
    '<"text" or "markdown" or "json" or "code">, "language": "<for code, e.g. python; '
    'else empty>", "rubric": [{"name": "<a quality>", "weight": <1 to 3>, "description": '
    '"<what scores 1>"}], "required_concepts": ["<an idea the output must cover>"]}'
)


def design_prompt(goal: str) -> str:
    return (
        f"Task: design the task for this goal.\n\n## Goal\n{goal.strip()}\n\n## Answer\n"
        f"Only a JSON object with 2 to 4 rubric dimensions, e.g.\n{EXAMPLE}"
    )


def _candidate(text: str) -> object:
    """The spec in a designer's answer: a JSON object, or YAML when there is none."""
    found = json_objects(text)
    if found:
        return found[0]
    import yaml

    body = text.split("```")[1].split("\n", 1)[-1] if text.count("```") >= 2 else text
    try:
        return yaml.safe_load(body)
    except yaml.YAMLError:
        return None


def _tidy(data: object) -> object:
    """Forgive what a model gets wrong in form, not substance: a name with other characters
    (made a valid name), an empty language, empty lists."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    name = data.get("name")
    if isinstance(name, str) and not NAME.match(name):
        cleaned = re.sub(r"[^A-Za-z0-9 _.-]+", " ", name).strip(" _.-")
        cleaned = re.sub(r"\s+", " ", cleaned)[:80].strip()
        if cleaned:
            data["name"] = cleaned
    for key in ("language", "required_concepts", "required_strings"):
        if key in data and data[key] in ("", [], None):
            del data[key]
    return data


def design(
    goal: str, provider: Provider, on_call=lambda completion: None, timeout: float | None = None
) -> TaskSpec:
    """Ask for a spec (held to DESIGN_SCHEMA through structured output); a spec that fails
    validation gets one repair round with the error. Every answered call, an off-schema one
    included, goes to ``on_call``; ``timeout`` None lets the provider take the configured one."""
    if not goal.strip():
        raise UsageError('solve needs a goal, e.g. lessonloop solve "a polite refund reply"')
    messages = [{"role": "user", "content": design_prompt(goal)}]
    problem = ""
    for _ in range(2):
        request = Request(
            role="designer",
            system=DESIGN_SYSTEM,
            messages=messages,
            temperature=0.2,
            max_tokens=DESIGN_MAX_TOKENS,
            json_schema=DESIGN_SCHEMA,
            timeout=timeout,
        )
        try:
            completion = provider.complete(request)
        except ProviderError as exc:  # answered: counted, then repaired like any invalid spec
            if exc.completion is None:
                raise
            if not isinstance(exc, OffSchemaError):
                on_call(exc.completion)
                raise
            completion = exc.completion
        on_call(completion)
        data = completion.parsed if completion.parsed is not None else _candidate(completion.text)
        try:
            return parse(_tidy(data), "the designed task")
        except UsageError as exc:
            problem = exc.message
        messages = [
            *messages,
            {"role": "assistant", "content": completion.text},
            {
                "role": "user",
                "content": f"That task is invalid: {problem}. Reply with "
                "the corrected JSON object only.",
            },
        ]
    raise LessonloopError(f"the designer did not produce a valid task after one repair: {problem}")


def save(spec: TaskSpec, root: Path | None = None) -> Path:
    """``tasks/<slug>.yaml`` under the home; an existing file of another task is not replaced."""
    folder = (root or paths.home()) / "tasks"
    path = folder / f"{spec.slug}.yaml"
    counter = 2
    while path.exists():
        path = folder / f"{spec.slug}-{counter}.yaml"
        counter += 1
    atomic_write(path, dump(spec))
    return path
