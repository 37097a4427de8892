"""``solve "goal"``: a model designs a task spec for the goal; it is validated, saved under
``.lessonloop/tasks/`` and shown, and then improved like any task."""

from __future__ import annotations

import json
from pathlib import Path

from .. import paths
from ..errors import LessonloopError, UsageError
from ..files import atomic_write
from ..json_blocks import json_objects
from ..providers.base import Provider, Request
from .spec import TaskSpec, dump, parse

DESIGN_SYSTEM = (
    "You are the designer. Turn the user's goal into a task specification that an agent can be "
    "improved on. Reply with one JSON object with these fields: name (short, letters, digits, "
    "spaces, '-', '_'), prompt (what the agent must produce), output_format (text, markdown, "
    "json or code), optionally language (for code), rubric (a list of {name, weight, "
    "description} dimensions a judge scores from 0 to 1), required_strings, required_concepts, "
    "reference, threshold (0-1), max_rounds. Add a verifier {command, timeout} only when a "
    "shell command can check the output objectively ({file} is the output's file name)."
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


def design(goal: str, provider: Provider, on_call=lambda completion: None) -> TaskSpec:
    """Ask for a spec; a spec that fails validation gets one repair round with the error."""
    if not goal.strip():
        raise UsageError("solve needs a goal, e.g. lessonloop solve \"a polite refund reply\"")
    messages = [{"role": "user", "content": f"Goal: {goal}"}]
    schema = TaskSpec.model_json_schema()
    problem = ""
    for _ in range(2):
        completion = provider.complete(Request(role="designer", system=DESIGN_SYSTEM,
                                               messages=messages))
        on_call(completion)
        data = completion.parsed if completion.parsed is not None else _candidate(completion.text)
        try:
            return parse(data, "the designed task")
        except UsageError as exc:
            problem = exc.message
        messages = [*messages, {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": f"That spec is invalid: {problem}. Reply with "
                                                f"the corrected JSON object. Fields: "
                                                f"{json.dumps(sorted(schema['properties']))}"}]
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
