"""Tasks: judge one output of an agent task."""

from __future__ import annotations


def judge_output(
    task: str, output: str, provider: str | None = None, model: str | None = None
) -> dict:
    """Score one output of a task (its verifier offline; a rubric needs a judge model)."""
    from ..tasks import evaluate
    from ..tasks import spec as task_spec
    from .stores import writing

    spec, path = task_spec.read(task)
    return evaluate.judge_once(
        spec, path.parent, output, lambda: writing(exclusive=False), provider, model
    ).to_dict()
