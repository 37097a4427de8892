"""``memory edit|supersede|pin|approve|reject``: correct and review memories; each prints what
``app/memory_review.py`` answers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .memory import ONE_SCOPE_HELP
from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


def _line(item: dict) -> str:
    marks = "".join(
        f" [{mark}]"
        for mark in (
            "pinned" if item.get("pinned") else "",
            item["status"] if item.get("status", "active") != "active" else "",
        )
        if mark
    )
    return f"[{item['scope']} {item['id']}] ({item['type']}) {item['summary']}{marks}"


def edit_command(
    entry_id: Annotated[int, typer.Argument(metavar="ID")],
    summary: Annotated[
        str | None, typer.Option("--summary", help="The new one-line summary.")
    ] = None,
    content: Annotated[str | None, typer.Option("--content", help="The new details.")] = None,
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Correct a memory: the new text goes through admission (redaction, caps, dedupe) and the
    memory becomes yours (never overwritten automatically)."""
    from ..app.memory_review import edit_memory

    item = edit_memory(entry_id, summary, content, scope)
    if as_json:
        print_json(item)
    else:
        sys.stdout.write(f"{item['action']} {_line(item)}\n")


def supersede_command(
    old: Annotated[int, typer.Argument(metavar="OLD")],
    by: Annotated[str, typer.Option("--by", help="The memory that replaces it: N or SCOPE:N.")],
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Replace memory OLD by another of its scope: OLD leaves recall and search, keeps its
    history (`memory why OLD` says what replaced it)."""
    from ..app.memory_review import supersede_memory

    value = supersede_memory(old, by, scope)
    if as_json:
        print_json(value)
    else:
        sys.stdout.write(
            f"superseded {_line(value['superseded'])}\n      by {_line(value['by'])}\n"
        )


def pin_command(
    entry_id: Annotated[int, typer.Argument(metavar="ID")],
    unpin: Annotated[bool, typer.Option("--unpin", help="Take the pin off.")] = False,
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Pin a memory: recalled first, never pruned nor retired automatically."""
    from ..app.memory_review import pin_memory

    item = pin_memory(entry_id, scope, pinned=not unpin)
    if as_json:
        print_json(item)
    else:
        sys.stdout.write(f"{item['action']} {_line(item)}\n")


def _review(
    entry_ids: list[int] | None, every: bool, scope: str | None, approve: bool, as_json: bool
) -> None:
    from ..app.memory_review import review_memories
    from ..errors import UsageError

    if every == bool(entry_ids):
        raise UsageError("give memory ids or --all (not both)")
    value = review_memories(None if every else entry_ids, approve, scope)
    if as_json:
        print_json(value)
        return
    [(verdict, items)] = value.items()
    if not items:
        sys.stdout.write("no memories held for review\n")
    for item in items:
        sys.stdout.write(f"{verdict} {_line(item)}\n")


REVIEW_SCOPE_HELP = "project or user [default: project; with --all: both]"


def approve_command(
    entry_ids: Annotated[list[int] | None, typer.Argument(metavar="ID")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every pending memory.")] = False,
    scope: Annotated[str | None, typer.Option("--scope", help=REVIEW_SCOPE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Approve memories held for review (`--review`), confirm stale ones or bring back retired
    ones: they are recalled again."""
    _review(entry_ids, every, scope, True, as_json)


def reject_command(
    entry_ids: Annotated[list[int] | None, typer.Argument(metavar="ID")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every pending memory.")] = False,
    scope: Annotated[str | None, typer.Option("--scope", help=REVIEW_SCOPE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Reject memories held for review: never recalled (kept, marked rejected, for the
    audit)."""
    _review(entry_ids, every, scope, False, as_json)
