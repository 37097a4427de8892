"""``knowledge export|import`` and ``skill export``: each prints what ``app/knowledge_share.py``
and ``app/skills.py`` answer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from .output import print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer

KNOWLEDGE_HELP = "Share knowledge between stores: export it as JSONL, import a teammate's."
SKILL_HELP = "Turn what lessonloop learned into a Claude Code Agent Skill."
SCOPE_HELP = "all (the project's store), project, user (your store), a scenario or task:NAME"


def export_command(
    scope: Annotated[str, typer.Option("--scope", help=SCOPE_HELP)] = "all",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write here (default: stdout).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Write entries with their evidence and provenance as versioned JSONL (secrets
    redacted), to import elsewhere with `knowledge import`."""
    from ..app.knowledge_share import export_text, export_to_file

    if output is None:
        sys.stdout.write(export_text(scope))
        return
    written = export_to_file(scope, output)
    if as_json:
        print_json(written)
    else:
        count = written["entries"]
        sys.stdout.write(
            f"exported {count} entr{'y' if count == 1 else 'ies'} to {written['path']}\n"
        )


def import_command(
    file: Annotated[Path, typer.Argument(help="A file `knowledge export` wrote.")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Bring exported entries in through admission (redacted, deduplicated: a repeat
    reinforces, evidence merges by maximum, your own entries are never overwritten). A bad
    line refuses the whole file."""
    from ..app.knowledge_share import import_file

    report = import_file(file)
    if as_json:
        print_json(report)
        return
    sys.stdout.write(
        f"imported {file.name}: {report['added']} added, {report['reinforced']} reinforced, "
        f"{report['unchanged']} already there, {report['skipped']} not active (skipped), "
        f"{report['rejected']} rejected\n"
    )


def skill_export_command(
    scope: Annotated[str, typer.Argument(help="A scenario, task:NAME, project or user.")],
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Skills folder (default: ./.claude/skills)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Write SCOPE's strongest playbook bullets, hints, dead ends or memories, ranked by
    evidence, as DIR/<name>/SKILL.md."""
    from ..app.skills import export_skill

    written = export_skill(scope, output)
    if as_json:
        print_json(written)
    else:
        sys.stdout.write(f"wrote skill {written['name']} to {written['path']}\n")
