"""``promotions [--scope S] [--json]`` and ``promotions rollback SCOPE``: the promotion gate's
candidates, trials and decisions, and a rollback by hand; each prints what ``app/promotion.py``
answers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer

GROUP_HELP = (
    "Context bundles and trained models tried against what is served: candidates, their "
    "matched trials and decisions; roll back by hand."
)
SCOPE_HELP = "A scenario name (or scenario:NAME), or task:NAME."


def _candidate_line(item: dict[str, Any]) -> str:
    trials = sum(item["trials"].values())
    last = item["decisions"][-1] if item["decisions"] else None
    why = f"  {last['action']} by {last['actor']}: {last['rationale']}" if last else ""
    where = (
        f" (run {item['run_id']}, generation {item['generation_index']})" if item["run_id"] else ""
    )
    return (
        f"[{item['id']}] {item['scope']} {item['role']} {item['kind']} {item['ref']} "
        f"from {item['source']}{where}: {item['status']}, {trials} trials{why}"
    )


def list_command(
    ctx: typer.Context,
    scope: Annotated[str | None, typer.Option("--scope", help=SCOPE_HELP)] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Candidates (newest first) with their trials and decisions, and what is active."""
    if ctx.invoked_subcommand is not None:
        return
    from ..app.promotion import list_promotions

    listed = list_promotions(scope)
    if as_json:
        print_json(listed)
        return
    for pointer in listed["active"]:
        before = pointer["previous_ref"] or "nothing"
        sys.stdout.write(
            f"active: {pointer['scope']} {pointer['role']} = {pointer['ref']} "
            f"(since {pointer['switched_at']}; rollback target: {before})\n"
        )
    if not listed["candidates"]:
        sys.stdout.write("no promotion candidates\n")
    for item in listed["candidates"]:
        sys.stdout.write(_candidate_line(item) + "\n")


def rollback_command(
    scope: Annotated[str, typer.Argument(metavar="SCOPE", help=SCOPE_HELP)],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept with the decision).")],
    role: Annotated[
        str, typer.Option("--role", help="context (the bundle served) or competitor.")
    ] = "context",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Serve again what was active before the last promotion of SCOPE (recorded as yours)."""
    from ..app.promotion import rollback_promotion

    pointer = rollback_promotion(scope, role, reason)
    if as_json:
        print_json(pointer)
    else:
        back = pointer["ref"] or "the default (what was served before any promotion)"
        sys.stdout.write(f"{pointer['scope']} {pointer['role']}: back to {back}\n")
