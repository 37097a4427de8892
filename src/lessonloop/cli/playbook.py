"""``playbook list|edit|forget|pin|approve|reject SCOPE ...``: a scenario's or task's bullets,
hints and dead ends; each prints what ``app/playbook.py`` answers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer

GROUP_HELP = "A scenario's or task's playbook bullets, hints and dead ends: list, correct, pin."
SCOPE_HELP = "A scenario name (or scenario:NAME), or task:NAME."


def _line(item: dict) -> str:
    marks = " pinned" if item["pinned"] else ""
    if item["status"] != "active":
        marks += f" {item['status']}"
    return (
        f"[{item['id']}] {item['kind']:<8} +{item['helpful']}/-{item['harmful']}{marks}  "
        f"{item['summary']}"
    )


def list_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    every: Annotated[
        bool, typer.Option("--all", help="Retired, superseded and rejected ones too.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """The scope's bullets, hints and dead ends: id, kind, helpful/harmful, pinned, status."""
    from ..app.playbook import list_entries

    items = list_entries(scope, every)
    if as_json:
        print_json(items)
        return
    if not items:
        sys.stdout.write("no playbook entries\n")
    for item in items:
        sys.stdout.write(_line(item) + "\n")


def edit_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    entry_id: Annotated[int, typer.Argument(metavar="ID")],
    summary: Annotated[str | None, typer.Option("--summary", help="The new summary.")] = None,
    content: Annotated[str | None, typer.Option("--content", help="The new details.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Correct an entry (through admission: redaction, caps, dedupe); it becomes yours, so
    runs never overwrite or retire it."""
    from ..app.playbook import edit_entry

    item = edit_entry(scope, entry_id, summary, content)
    if as_json:
        print_json(item)
    else:
        sys.stdout.write(f"{item['action']} {_line(item)}\n")


def forget_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    entry_id: Annotated[int, typer.Argument(metavar="ID")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Delete an entry for good (and its line in the Markdown views)."""
    from ..app.playbook import forget_entry

    gone = forget_entry(scope, entry_id)
    if as_json:
        print_json(gone)
    else:
        sys.stdout.write(f"forgot [{entry_id}] {gone['kind']} {gone['summary']}\n")


def pin_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    entry_id: Annotated[int, typer.Argument(metavar="ID")],
    unpin: Annotated[bool, typer.Option("--unpin", help="Take the pin off.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Pin an entry: its evidence or the coach never retire it."""
    from ..app.playbook import pin_entry

    item = pin_entry(scope, entry_id, pinned=not unpin)
    if as_json:
        print_json(item)
    else:
        sys.stdout.write(f"{item['action']} {_line(item)}\n")


def _review(scope: str, ids: list[int] | None, every: bool, approve: bool, as_json: bool) -> None:
    from ..app.playbook import review_entries
    from ..errors import UsageError

    if every == bool(ids):
        raise UsageError("give entry ids or --all (not both)")
    value = review_entries(scope, None if every else ids, approve)
    if as_json:
        print_json(value)
        return
    [(verdict, items)] = value.items()
    if not items:
        sys.stdout.write("no entries held for review\n")
    for item in items:
        sys.stdout.write(f"{verdict} {_line(item)}\n")


def approve_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    entry_ids: Annotated[list[int] | None, typer.Argument(metavar="ID")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every pending entry.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Approve entries a `--review` run held: runs use them from now on."""
    _review(scope, entry_ids, every, True, as_json)


def reject_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    entry_ids: Annotated[list[int] | None, typer.Argument(metavar="ID")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every pending entry.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Reject entries a `--review` run held: never used (kept, marked, for the audit)."""
    _review(scope, entry_ids, every, False, as_json)
