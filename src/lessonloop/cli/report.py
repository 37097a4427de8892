"""``report`` and ``compare``: a run's HTML page, and runs compared on the same fresh seeds."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

from .output import fmt, print_json

if TYPE_CHECKING:
    import typer
else:
    from .lazy_typer import typer


def report_command(
    run_id: Annotated[str, typer.Argument(help="Run id (see `lessonloop list`).")],
    open_page: Annotated[bool, typer.Option("--open", help="Open the page in a browser.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help='Print {"path": ...}.')] = False,
) -> None:
    """Write a run's HTML report (runs/<id>/report.html): curves, gate, playbook, cost."""
    from ..app.report import write_html_report

    path = write_html_report(run_id)
    if as_json:
        print_json({"path": str(path)})
    else:
        sys.stdout.write(f"{path}\n")
    if open_page:
        import webbrowser

        if not webbrowser.open(path.resolve().as_uri()):
            sys.stderr.write(f"could not open a browser here: open {path} yourself\n")


def compare_lines(compared: dict) -> list[str]:
    """The comparison as text: what differs, each run, the re-scoring, the verdict."""
    runs = compared["runs"]
    lines = []
    differing = [row for row in compared["settings"] if row["differs"]]
    if differing:
        lines.append("settings that differ:")
        for row in differing:
            values = "  ".join(
                f"{run['run_id']}={value!r}" for run, value in zip(runs, row["values"])
            )
            lines.append(f"  {row['key']}: {values}")
    else:
        lines.append("settings: the same")
    lines.append("runs:")
    for run in runs:
        lines.append(
            f"  {run['run_id']}  {run['status']}  generations {run['generations']}/"
            f"{run['target_generations']}  best {fmt(run['best_score'])}  plays {run['plays']}  "
            f"calls {run['calls']}  cost {fmt(run['cost'])}"
        )
    rescore = compared["rescore"]
    if rescore is not None:
        lines.append(
            f"re-scored on {len(rescore['seeds'])} fresh seeds ({rescore['matches_played']} "
            f"matches, {rescore['method']}):"
        )
        for run in rescore["runs"]:
            lines.append(f"  {run['run_id']}  mean {fmt(run['mean_score'])}")
    lines.append(compared["verdict"])
    return lines


def compare_command(
    run_ids: Annotated[
        list[str], typer.Argument(help="Two or more run ids; the first is the baseline.")
    ],
    html: Annotated[
        str | None, typer.Option("--html", help="Also write the comparison as an HTML page here.")
    ] = None,
    matches: Annotated[
        int, typer.Option("--matches", help="Fresh seeds each best strategy plays.")
    ] = 30,
    salt: Annotated[
        int, typer.Option("--seed", help="Which fresh seeds (the same seed, the same set).")
    ] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Compare runs: settings, curves, and best strategies re-scored on the same fresh seeds."""
    from ..app.compare import compare, write_compare_html

    compared = compare(run_ids, matches=matches, salt=salt)
    written = write_compare_html(compared, html) if html is not None else None
    if as_json:
        print_json({**compared, "html": str(written) if written else None})
        return
    lines = compare_lines(compared)
    if written is not None:
        lines.append(f"page: {written}")
    sys.stdout.write("\n".join(lines) + "\n")
