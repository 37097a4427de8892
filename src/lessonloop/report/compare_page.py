"""The HTML page of a run comparison (``lessonloop compare ... --html FILE``): the verdict in
words, the re-scoring with its confidence intervals, the curves overlaid, and the settings
side by side with the differing ones marked in words as well as colour."""

from __future__ import annotations

import json
import math
from typing import Any

from .page import SCORE_LIMITS, UNSCORED, cards, chart, document, fmt, table
from .svg import DASHES, Series, chart_pair, text


def scored_curve(curve: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """A run's best score per generation from its first scored one (a task round the judge
    could not score holds 0, which is no best score)."""
    scored = [p["generation"] for p in curve if p["decision"] != UNSCORED]
    first = scored[0] if scored else math.inf
    return [(p["generation"], p["score"]) for p in curve if p["generation"] >= first]


def curves_chart(runs: list[dict[str, Any]]) -> str:
    series = [
        Series(run["run_id"], scored_curve(run["curve"]), style=i) for i, run in enumerate(runs)
    ]
    svg = chart_pair(
        chart_id="compare-chart",
        title="Best score per generation, each run",
        description="Each run's validated score (best so far when not validated): "
        + ", ".join(run["run_id"] for run in runs),
        x_label="generation",
        y_label="score",
        y_limits=SCORE_LIMITS,
        series=series,
    )
    legend = (
        '<div class="legend">'
        + "".join(
            f'<span><svg class="swatch" width="26" height="8" viewBox="0 0 26 8" aria-hidden="true">'
            f'<line class="c{s.style % len(DASHES)}" x1="0" x2="26" y1="4" y2="4" stroke-width="2"'
            + (
                f' stroke-dasharray="{DASHES[s.style % len(DASHES)]}"'
                if s.style % len(DASHES)
                else ""
            )
            + f"/></svg>{text(s.name)}</span>"
            for s in series
        )
        + "</div>"
    )
    return chart(svg, legend)


def rescore_section(rescore: dict[str, Any] | None, reason: str | None) -> str:
    if rescore is None:
        return f"<p>Not re-scored: {text(reason)}.</p>"
    means = table(
        ["run", "mean on the shared seeds", "failed seeds"],
        [
            [text(r["run_id"]), text(fmt(r["mean_score"])), text(len(r["failed_seeds"]))]
            for r in rescore["runs"]
        ],
        numeric=(1, 2),
        stacked=True,
    )
    differences = table(
        ["run − first run", "pairs", "mean difference", "95 % CI", "won-lost-tied", "significant"],
        [
            [
                text(f"{c['run_id']} − {c['baseline']}"),
                text(c["pairs"]),
                text(fmt(c["mean"], "+.4f")),
                text(
                    "–"
                    if c["low"] is None
                    else f"{fmt(c['low'], '+.4f')} to {fmt(c['high'], '+.4f')}"
                ),
                text(f"{c['wins']}-{c['losses']}-{c['ties']}"),
                text("yes" if c["significant"] else "no"),
            ]
            for c in rescore["comparisons"]
        ],
        numeric=(1, 2),
        stacked=True,
    )
    return (
        f"<p>Each run's best strategy played on the same {len(rescore['seeds'])} fresh seeds "
        f"({text(rescore['matches_played'])} matches); {text(rescore['method'])}.</p>"
        + means
        + differences
    )


def settings_section(settings: list[dict[str, Any]], run_ids: list[str]) -> str:
    rows, classes = [], []
    for row in settings:
        rows.append(
            [f"<code>{text(row['key'])}</code>", text("differs" if row["differs"] else "same")]
            + [text(json.dumps(value)) for value in row["values"]]
        )
        classes.append("differs" if row["differs"] else "")
    differing = sum(row["differs"] for row in settings)
    return f"<p>{differing} of {len(settings)} settings differ (marked).</p>" + table(
        ["setting", "", *run_ids], rows, row_classes=classes, stacked=True
    )


def runs_table(runs: list[dict[str, Any]]) -> str:
    return table(
        [
            "run",
            "status",
            "generations",
            "best score",
            "best's tournament",
            "plays",
            "calls",
            "cost",
        ],
        [
            [
                text(run["run_id"]),
                text(run["status"]),
                text(f"{run['generations']} of {run['target_generations']}"),
                text(fmt(run["best_score"])),
                text(fmt(run["best_tournament"])),
                text(run["plays"]),
                text(run["calls"]),
                text(fmt(run["cost"], ".4f")),
            ]
            for run in runs
        ],
        numeric=(3, 4, 5, 6, 7),
        stacked=True,
    )


def compare_page(compared: dict[str, Any]) -> str:
    runs = compared["runs"]
    run_ids = [run["run_id"] for run in runs]
    body = [
        f"<h1>Compare {text(', '.join(run_ids))}</h1>",
        f'<p class="verdict">{text(compared["verdict"])}</p>',
        cards(
            [("runs", str(len(runs)))]
            + [(f"best score of {run['run_id']}", fmt(run["best_score"])) for run in runs]
        ),
        "<h2>Best strategies on the same fresh seeds</h2>",
        rescore_section(compared["rescore"], compared["not_rescored"]),
        "<h2>Curves</h2>",
        curves_chart(runs)
        if any(scored_curve(run["curve"]) for run in runs)
        else "<p>No scored generation yet.</p>",
        "<h2>Runs</h2>",
        runs_table(runs),
        "<h2>Settings side by side</h2>",
        settings_section(compared["settings"], run_ids),
        "<h2>Best strategies</h2>",
    ]
    body += [
        f"<h3>{text(run['run_id'])}</h3><pre>"
        f"{text(json.dumps(run['best_strategy'], indent=2, sort_keys=True))}</pre>"
        for run in runs
    ]
    return document("lessonloop compare " + " ".join(run_ids), body)
