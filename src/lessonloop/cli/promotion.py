"""``promotions [--scope S] [--json]``, ``promotions rollback SCOPE``, ``promotions approve ID``
and ``promote [ID | --watch]``: the promotion gate's candidates, trials and decisions, a
rollback or a promotion by hand, an approval the charter asked for, and ambient promotion;
each prints what ``app/promotion.py`` answers."""

from __future__ import annotations

import json
import sys
import time
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
        watched = (
            f"; on probation for {pointer['probation_left']} more "
            f"generation{'s' if pointer['probation_left'] != 1 else ''}"
            if pointer.get("probation_left")
            else ""
        )
        grown = pointer.get("served_ref")
        now = f"; served now: {grown}" if grown and grown != pointer["ref"] else ""
        sys.stdout.write(
            f"active: {pointer['scope']} {pointer['role']} = {pointer['ref']} "
            f"(since {pointer['switched_at']}; rollback target: {before}{watched}{now})\n"
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


def approve_command(
    candidate: Annotated[int, typer.Argument(metavar="ID", help="A candidate's id.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Serve a candidate its trials accepted and the charter held for approval."""
    from ..app.promotion import approve_promotion

    pointer = approve_promotion(candidate)
    if as_json:
        print_json(pointer)
    else:
        sys.stdout.write(
            f"{pointer['scope']} {pointer['role']}: {pointer['ref']} approved and served "
            f"(rollback target: {pointer['previous_ref'] or 'the default'})\n"
        )


def _outcome_line(item: dict[str, Any]) -> str:
    return (
        f"[{item['candidate_id']}] {item['scope']} {item['role']}: {item['action']}"
        f" ({item.get('trials', 0)} trials, {item.get('plays', 0)} plays): {item['reason']}"
    )


def promote_command(
    candidate: Annotated[
        int | None,
        typer.Argument(
            metavar="[ID]",
            help="Serve this candidate by hand (needs --reason). Without it: "
            "trial what waits and promote it under the charter.",
        ),
    ] = None,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why, for a promotion by hand.")
    ] = None,
    scope: Annotated[str | None, typer.Option("--scope", help=SCOPE_HELP)] = None,
    watch: Annotated[
        bool, typer.Option("--watch", help="Keep looking, every --interval seconds, until ^C.")
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", min=1.0, help="Seconds between looks with --watch.")
    ] = 60.0,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Promote candidates: the ones that passed screening (or a checkpoint never trialled) are
    trialled through every stage and served under config.toml's [promotion] charter; or
    serve candidate ID by hand."""
    from ..app.promotion import ambient_pass, promote_by_hand
    from ..errors import UsageError

    if candidate is not None:
        if watch or scope:
            raise UsageError("a promotion by hand takes an ID alone (no --watch or --scope)")
        if reason is None:
            raise UsageError("say why (it is kept with the decision)", field="reason")
        pointer = promote_by_hand(candidate, reason)
        if as_json:
            print_json(pointer)
        else:
            sys.stdout.write(
                f"{pointer['scope']} {pointer['role']}: {pointer['ref']} served by hand "
                f"(rollback target: {pointer['previous_ref'] or 'the default'})\n"
            )
        return
    while True:
        done = ambient_pass(scope)
        if as_json and watch:  # one line a look: a stream a program reads line by line
            sys.stdout.write(json.dumps({"outcomes": done}) + "\n")
        elif as_json:
            print_json({"outcomes": done})
        elif not done:
            sys.stdout.write("nothing waits for a trial\n")
        for item in [] if as_json else done:
            sys.stdout.write(_outcome_line(item) + "\n")
        if not watch:
            return
        sys.stdout.flush()
        time.sleep(interval)
