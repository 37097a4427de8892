"""``memory feedback`` and ``memory stats``: each prints what ``app/memory_evidence.py``
answers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .memory import ONE_SCOPE_HELP, SCOPE_HELP
from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


def feedback_command(
    entry_id: Annotated[int, typer.Argument(help="The memory's id (see `memory list`).")],
    verdict: Annotated[str, typer.Argument(help="helped or misled")],
    note: Annotated[str, typer.Option("--note", help="Why (kept in its history).")] = "",
    scope: Annotated[str, typer.Option("--scope", help=ONE_SCOPE_HELP)] = "project",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Say whether a memory helped or misled you; one that mostly misleads leaves recall
    (retired, still in `memory audit` and `memory stats`)."""
    from ..app.memory_evidence import give_feedback

    value = give_feedback(entry_id, verdict, note, scope, source="user")
    if as_json:
        print_json(value)
        return
    sys.stdout.write(
        f"[{scope} {entry_id}] {value['summary']}: {verdict} "
        f"(helped {value['helped']}, misled {value['misled']})\n"
    )
    if value["retired"]:
        sys.stdout.write("it mostly misled: retired from recall (see `memory audit`)\n")


def stats_command(
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "all",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Each memory's uses and evidence: how often it was given to a session, how often it
    helped or misled, when it was last used, its status."""
    from ..app.memory_evidence import memory_stats

    items = memory_stats(scope)
    if as_json:
        print_json(items)
        return
    if not items:
        sys.stdout.write("no memories yet\n")
    for item in items:
        status = "" if item["status"] == "active" else f" [{item['status']}]"
        last = (item["last_used_at"] or "never")[:10]
        sys.stdout.write(
            f"[{item['scope']} {item['id']}] ({item['kind']}) {item['summary']}  — injected "
            f"{item['injected']}, helped {item['helped']}, misled {item['misled']}, last used "
            f"{last}{status}\n"
        )
