"""How the CLI speaks: JSON on stdout, one-line errors on stderr, contract-shaped objects."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def flag(field: str) -> str:
    """The command-line flag that sets a use case's field (``match_timeout`` -> ``--match-timeout``)."""
    return "--" + field.replace("_", "-")


# The use cases that list what exists (``NotFoundError.listing``), as the commands that do it.
LISTING_COMMANDS = {"list_runs": "`lessonloop list`", "list_memories": "`lessonloop memory list`"}


def listing_command(use_case: str) -> str:
    """The command that lists what a ``NotFoundError`` points to (``list_runs`` ->
    ```lessonloop list```)."""
    return LISTING_COMMANDS.get(use_case, use_case)


def error_text(exc: Exception) -> str:
    """A lessonloop error in the CLI's words: the argument at fault named as its flag, the
    listing an unknown name points to as its command."""
    from ..errors import LessonloopError

    return exc.named(flag, listing_command) if isinstance(exc, LessonloopError) else str(exc)


def error_line(message: str, as_json: bool, label: str = "error") -> None:
    """The one line of a failure on stderr: ``{"error": ...}`` with --json, else ``label:
    message`` (``stopped:`` for a stop the user asked for)."""
    from ..errors import one_line

    message = one_line(message)
    if as_json:
        sys.stderr.write(json.dumps({"error": message}) + "\n")
    else:
        sys.stderr.write(f"{label}: {message}\n")
    sys.stderr.flush()


def fmt(value: float | None, spec: str = ".4f") -> str:
    return "n/a" if value is None else format(value, spec)


def generation_line(generation: dict, target: int | None = None) -> str:
    """One human line per generation, shared by run progress, status and watch."""
    index = generation.get("generation_index", generation.get("generation"))
    out_of = f"/{target}" if target else ""
    return (
        f"gen {index}{out_of}  score {fmt(generation.get('mean_score'))}  "
        f"delta {fmt(generation.get('mean_delta'), '+.4f'):>8}  "
        f"{generation.get('gate_decision', ''):<8}  "
        f"elo {fmt(generation.get('elo'), '.1f')}  best {fmt(generation.get('best_score'))}"
    )
