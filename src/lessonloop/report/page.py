"""The HTML page of one run: one self-contained file (inline CSS and SVG, no script, nothing
fetched), readable at 1280x800 and on a narrow window.

Every value reaches the page through ``svg.text`` (HTML escaping of element text and
attributes alike); the store's text is already redacted, so this is the only other rule.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

from .data import RunReport
from .svg import DASHES, Marker, Series, chart_pair, legend_swatch, text

DECISION_SHAPES = {
    "advance": "advance",
    "rollback": "rollback",
    "retry": "retry",
    "judge_failed": "failed",
}
UNSCORED = "judge_failed"  # a task round's decision when the judge gave no verdict
SCORE_LIMITS = (0.0, 1.0)  # scores and dimension means: their axis stops there while they do
GATE_OPEN_MAX = 60  # decisions shown unfolded; a longer history starts folded
DECISION_WORDS = {
    "advance": "advance (kept: the new incumbent)",
    "rollback": "rollback (the incumbent stays)",
    "retry": "retry (another attempt in the same generation)",
    "failed": "not scored (the judge gave no verdict)",
}
# A task run (``improve``) decides per round whether its output is the new best: its own
# words for the decisions it stores as advance / rollback / judge_failed (tasks/improve.py).
TASK_DECISION_NAMES = {"advance": "new best", "rollback": "best kept", UNSCORED: "not scored"}
TASK_DECISION_WORDS = {
    "advance": "new best (the best output so far)",
    "rollback": "best kept (the round was no better)",
    "failed": "not scored (the judge gave no verdict)",
}

STYLE = """
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--c0:#0072b2;--c1:#d55e00;
--c2:#009e73;--c3:#cc79a7;--c4:#e69f00;--c5:#56b4e9;--advance:#00875a;--rollback:#c0392b;
--retry:#b07800}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink)}
main{max-width:1120px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:1.5rem;margin:.2em 0 .1em;overflow-wrap:anywhere}
h2{font-size:1.15rem;margin:1.6em 0 .5em;border-bottom:1px solid var(--line);padding-bottom:.2em}
.sub{color:var(--muted);margin:0 0 .8em;overflow-wrap:anywhere}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 10px}
.card b{display:block;font-size:1.2rem}
.card span{color:var(--muted);font-size:.85rem}
.chart-wrap{border:1px solid var(--line);border-radius:6px;margin:.4em 0}
svg.chart{display:block;width:100%;height:auto}
svg.chart text{font-size:12px;fill:var(--ink)}
svg.chart .axis-label{font-size:13px;font-weight:600}
svg.chart.narrow text,svg.chart.narrow .axis-label{font-size:13px}
svg.chart.narrow{display:none}
@media (max-width:759.98px){svg.chart.wide{display:none}svg.chart.narrow{display:block}}
svg.chart .grid line{stroke:#eaeef2}
svg.chart .axis line{stroke:#57606a}
svg.chart .lane{stroke:var(--line);stroke-dasharray:2 2}
svg.chart .lane-label{fill:var(--muted)}
.line{stroke:var(--c0)}
.c0{stroke:var(--c0);fill:var(--c0)}.c1{stroke:var(--c1);fill:var(--c1)}
.c2{stroke:var(--c2);fill:var(--c2)}.c3{stroke:var(--c3);fill:var(--c3)}
.c4{stroke:var(--c4);fill:var(--c4)}.c5{stroke:var(--c5);fill:var(--c5)}
polyline.line{fill:none}
svg.chart text.end-label{stroke:none}
.m-advance{fill:var(--advance);stroke:#fff;stroke-width:1}
.m-rollback{fill:#fff;stroke:var(--rollback);stroke-width:1.8}
.m-retry{fill:#fff;stroke:var(--retry);stroke-width:1.6}
.m-failed{fill:none;stroke:#444;stroke-width:2}
.m-dot{fill:var(--c0)}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;color:var(--muted);font-size:.9rem;margin:.2em 0}
.legend span{white-space:nowrap}
.swatch{vertical-align:-2px;margin-right:4px}
.dash{display:inline-block;width:26px;vertical-align:middle;margin-right:4px;border-top:2.5px solid var(--c0)}
.dash.c1{border-top:2px dashed var(--c1)}
.table-wrap{overflow-x:auto;margin:.6em 0}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--card);position:sticky;top:0}
.gate :is(td,th):nth-child(-n+2),.gate :is(td,th):nth-child(4),.gate :is(td,th):nth-child(6),
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.why{overflow-wrap:anywhere;min-width:16em}
tr.differs td{background:#fff8c5}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:8px 10px;
overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85rem}
ul.entries{padding-left:1.2em}ul.entries li{margin:.25em 0;overflow-wrap:anywhere}
.decision{white-space:nowrap}.g-advance{color:var(--advance)}.g-rollback{color:var(--rollback)}
.g-retry{color:var(--retry)}
.counts{color:var(--muted);font-size:.85rem;white-space:nowrap}
.tag{font-size:.75rem;border:1px solid var(--line);border-radius:8px;padding:0 6px;color:var(--muted)}
.verdict{font-size:1.05rem;background:var(--card);border-left:4px solid var(--c0);padding:8px 12px}
footer{color:var(--muted);font-size:.8rem;margin-top:2em}
@media (max-width:600px){main{padding:10px}h1{font-size:1.2rem}
.table-wrap table.stack thead{display:none}
.table-wrap table.stack tr{display:flex;flex-wrap:wrap;gap:0 12px;padding:6px 0;
border-bottom:1px solid var(--line)}
.table-wrap table.stack td{display:block;border:0;padding:1px 0;text-align:left;min-width:0;
overflow-wrap:break-word}
.table-wrap table.stack td:last-child{flex-basis:100%}
table.stack td[data-label]::before,.gate td::before,.task-gate td::before{color:var(--muted)}
table.stack td[data-label]::before{content:attr(data-label) " "}
.gate td:nth-child(1)::before{content:"gen "}.gate td:nth-child(2)::before{content:"attempt "}
.gate td:nth-child(4)::before{content:"paired Δ "}
.gate td:nth-child(5)::before{content:"won-lost "}.gate td:nth-child(6)::before{content:"pairs "}
.task-gate td:nth-child(1)::before{content:"round "}
.task-gate td:nth-child(3)::before{content:"Δ vs the best round "}}
"""


def fmt(value: object, spec: str = ".4f") -> str:
    if value is None:
        return "–"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, spec)
    return str(value)


def document(title: str, body: Iterable[str]) -> str:
    """A whole page: the one style sheet, the body parts, and a footer."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{STYLE}</style></head><body><main>"
        + "".join(body)
        + "<footer>Written by lessonloop from its store (text redacted when stored). "
        "One file: no script, nothing fetched.</footer></main></body></html>\n"
    )


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    numeric: Sequence[int] = (),
    row_classes: Sequence[str] | None = None,
    css: str = "",
    stacked: bool = False,
) -> str:
    """A table whose cells are already HTML (escape them before); ``numeric`` columns align right.
    ``stacked``: on a narrow window each row is one block, its cells side by side as they fit,
    each named by its column, the last one as wide as the window (no column a few letters
    wide, no row cut off on the right). A table of hundreds of rows names its cells in the
    style sheet instead (``css`` "gate stack")."""
    head = "".join(
        f'<th{" class=num" if i in numeric else ""} scope="col">{text(h)}</th>'
        for i, h in enumerate(headers)
    )
    labels = [f' data-label="{text(h)}"' if stacked and h else "" for h in headers]
    body = []
    for index, cells in enumerate(rows):
        marked = f' class="{row_classes[index]}"' if row_classes and row_classes[index] else ""
        body.append(
            f"<tr{marked}>"
            + "".join(
                f"<td{' class=num' if i in numeric else ''}{labels[i] if i < len(labels) else ''}>"
                f"{cell}</td>"
                for i, cell in enumerate(cells)
            )
            + "</tr>"
        )
    css = " ".join(name for name in (css, "stack" if stacked else "") if name)
    classes = f' class="{css}"' if css else ""
    return (
        f'<div class="table-wrap"><table{classes}><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def shape_of(decision: str) -> str:
    return DECISION_SHAPES.get(decision, "dot")


GLYPHS = {"advance": "▲", "rollback": "▽", "retry": "□", "failed": "✕", "dot": "◇"}


def decision_cell(decision: str, is_task: bool = False) -> str:
    """A decision in a table: its marker's shape as a character (a table of 900 decisions
    stays small), then its word (a task round's in the task's words)."""
    shape = shape_of(decision)
    word = TASK_DECISION_NAMES.get(decision, decision) if is_task else decision
    return f'<span class="decision g-{shape}">{GLYPHS[shape]} {text(word)}</span>'


def cards(items: Sequence[tuple[str, str]]) -> str:
    return (
        '<div class="cards">'
        + "".join(
            f'<div class="card"><b>{text(value)}</b><span>{text(label)}</span></div>'
            for label, value in items
        )
        + "</div>"
    )


def chart(svg: str, legend: str = "") -> str:
    return f'<div class="chart-wrap">{svg}</div>{legend}'


def score_legend(report: RunReport, has_retries: bool) -> str:
    first = "validated score (the incumbent)" if report.validated else "best score so far"
    second = "round score" if report.is_task else "tournament score (the challenger)"
    present = {shape_of(g["decision"]) for g in report.generations}
    if has_retries:
        present.add("retry")
    shapes = [shape for shape in (*DECISION_WORDS, "dot") if shape in present]
    words = TASK_DECISION_WORDS if report.is_task else DECISION_WORDS
    items = [
        f'<span><i class="dash"></i>{text(first)}</span>',
        f'<span><i class="dash c1"></i>{text(second)}</span>',
    ] + [f"<span>{legend_swatch(shape)}{text(words.get(shape, shape))}</span>" for shape in shapes]
    return '<div class="legend">' + "".join(items) + "</div>"


def score_chart(report: RunReport) -> str:
    """The score per generation: the kept strategy's line, the challenger's points shaped by
    the gate's decision (hover: its rationale), and each retry in the lane below. A round the
    judge could not score (``judge_failed``, stored as 0) is no score: its cross sits in the
    lane, off both lines, and the kept line starts at the first scored round."""
    gens = report.generations
    scored = [g for g in gens if g["decision"] != UNSCORED]
    first = scored[0]["generation"] if scored else math.inf
    kept_name = "validated" if report.validated else "best so far"
    kept = [
        (g["generation"], g["validated"] if report.validated else g["best"])
        for g in gens
        if g["generation"] >= first
    ]
    played_name = "round score" if report.is_task else "tournament"
    played = [(g["generation"], g["tournament"]) for g in scored]
    step = "round" if report.is_task else "generation"
    # markers shrink as generations crowd the plot; the rare advances stay big and on top
    size = max(2.2, min(5.5, 280 / max(1, len(gens))))
    markers = []
    for generation in gens:
        kept_value = generation["validated"] if report.validated else generation["best"]
        brief = (
            f"{step} {generation['generation']}: {generation['decision']} — not scored"
            if generation["decision"] == UNSCORED
            else f"{step} {generation['generation']}: {generation['decision']} — {played_name} "
            f"{fmt(generation['tournament'])}, {kept_name} {fmt(kept_value)}"
            + (f", {generation['attempts']} attempts" if generation["attempts"] > 1 else "")
        )
        markers.append(
            Marker(
                x=generation["generation"],
                y=generation["tournament"],
                lane=0 if generation["decision"] == UNSCORED else None,
                kind=shape_of(generation["decision"]),
                css="gen-point",
                size=max(size, 4.5) if generation["decision"] == "advance" else size,
                on_top=generation["decision"] == "advance",
                title=f"{brief}. {generation['rationale']}",
                brief=brief,
                attributes={
                    "data-generation": generation["generation"],
                    "data-decision": generation["decision"],
                },
            )
        )
    retries = [d for d in report.decisions if d["decision"] == "retry"]
    markers += [
        Marker(
            x=d["generation"],
            y=None,
            kind="retry",
            lane=d["attempt"],
            css="retry-mark",
            size=min(4.0, size),
            title=f"{step} {d['generation']} attempt {d['attempt'] + 1}: retry. {d['rationale']}",
            brief=f"{step} {d['generation']} attempt {d['attempt'] + 1}: retry",
            attributes={"data-generation": d["generation"], "data-attempt": d["attempt"]},
        )
        for d in retries
    ]
    svg = chart_pair(
        chart_id="score-chart",
        title=f"Score per {step}",
        description=(
            f"{len(gens)} {step}s. A line of the {kept_name} score, and the "
            f"{played_name} of each {step} marked by the gate's decision: "
            + (
                "a triangle up for a new best, a hollow triangle down when the best was kept."
                if report.is_task
                else "a triangle up for advance, a hollow triangle down for rollback, a hollow "
                "square for a retry."
            )
        ),
        x_label=step,
        y_label="score",
        y_limits=SCORE_LIMITS,
        series=[
            Series(kept_name, kept, style=0, width=2.5, above_markers=True),
            Series(played_name, played, style=1, width=1.4 if len(gens) <= 60 else 0.7),
        ],
        markers=markers,
        lane_label="retries" if retries else ("no score" if len(scored) < len(gens) else None),
    )
    return chart(svg, score_legend(report, bool(retries)))


def elo_chart(report: RunReport) -> str:
    points = [(g["generation"], g["elo"]) for g in report.generations]
    svg = chart_pair(
        chart_id="elo-chart",
        title="Elo per generation",
        description="The incumbent's Elo rating after each generation.",
        x_label="generation",
        y_label="Elo",
        series=[Series("Elo", points, style=0, width=2.2)],
    )
    return chart(svg)


def dimensions_chart(report: RunReport) -> str:
    step = "round" if report.is_task else "generation"
    names = sorted({name for g in report.generations for name in g["dimensions"]})
    series = [
        Series(
            name,
            [
                (g["generation"], g["dimensions"][name])
                for g in report.generations
                if isinstance(g["dimensions"].get(name), (int, float))
            ],
            style=index,
            width=1.8,
        )
        for index, name in enumerate(names)
    ]
    svg = chart_pair(
        chart_id="dimensions-chart",
        title=f"Dimensions per {step}",
        description=f"Each scoring dimension's mean for the {step}'s challenger: "
        + ", ".join(names),
        x_label=step,
        y_label="dimension mean",
        y_limits=SCORE_LIMITS,
        series=series,
    )
    legend = (
        '<div class="legend">'
        + "".join(
            f'<span><svg class="swatch" width="26" height="8" viewBox="0 0 26 8" aria-hidden="true">'
            f'<line class="c{s.style % 6}" x1="0" x2="26" y1="4" y2="4" stroke-width="2"'
            + (f' stroke-dasharray="{dash}"' if (dash := _dash(s.style)) else "")
            + f"/></svg>{text(s.name)}</span>"
            for s in series
        )
        + "</div>"
    )
    return chart(svg, legend)


def _dash(style: int) -> str:
    return DASHES[style % len(DASHES)]


def summary_cards(report: RunReport) -> str:
    gens, usage = report.generations, report.usage["totals"]
    counts = dict.fromkeys(("advance", "rollback", "retry"), 0)
    for decision in report.decisions:
        counts[decision["decision"]] = counts.get(decision["decision"], 0) + 1
    best = report.best
    best_value = (best["validated"] if report.validated else best["tournament"]) if best else None
    done = f"{len(gens)} of {report.run['target_generations']}"
    decided = f"{counts['advance']} / {counts['rollback']} / {counts['retry']}"
    decided_label = "advance / rollback / retry"
    if report.is_task:
        decided = f"{counts['advance']} / {counts['rollback']} / {counts.get(UNSCORED, 0)}"
        decided_label = " / ".join(TASK_DECISION_NAMES.values())
    if report.is_task:
        second = ("best round", fmt(best["generation"], "d") if best else "–")
    else:
        second = ("its tournament mean", fmt(best["tournament"]) if best else "–")
    items = [
        ("best score (validated)" if report.validated else "best score", fmt(best_value)),
        second,
        ("rounds done" if report.is_task else "generations done", done),
        (decided_label, decided),
        ("provider calls", fmt(usage["calls"], "d")),
        ("tokens in / out", f"{usage['input_tokens']} / {usage['output_tokens']}"),
        ("cost", fmt(usage["cost"], ".4f")),
    ]
    if not report.is_task:
        items.insert(2, ("Elo now", fmt(gens[-1]["elo"], ".1f") if gens else "–"))
        items.append(("matches played", fmt(report.usage["plays_total"], "d")))
    return cards(items)


def best_section(report: RunReport) -> str:
    best = report.best
    if best is None:
        return "<p>No strategy has advanced yet.</p>"
    if report.is_task:
        output = (
            (best["strategy"] or {}).get("output", "") if isinstance(best["strategy"], dict) else ""
        )
        return (
            f"<p>Round {text(best['generation'])}, score {text(fmt(best['tournament']))}.</p>"
            f"<pre>{text(output)}</pre>"
        )
    scores = (
        f"validated score {fmt(best['validated'])} (tournament mean {fmt(best['tournament'])})"
        if report.validated
        else f"mean score {fmt(best['tournament'])}"
    )
    carried = best.get("carried_from")
    where = (
        f"The incumbent this run started from (run {carried['run_id']}, generation "
        f"{carried['generation']}): none of its own has advanced"
        if carried
        else f"Generation {best['generation']}"
    )
    return (
        f"<p>{text(where)}, {text(scores)}.</p>"
        f"<pre>{text(json.dumps(best['strategy'], indent=2, sort_keys=True))}</pre>"
    )


def rounds_section(report: RunReport) -> str:
    """A task run's rounds: score, decision, verifier, and the feedback the next round got."""
    rows = []
    for generation in report.generations:
        verifier = generation["dimensions"].get("verifier")
        rows.append(
            [
                text(generation["generation"]),
                text(fmt(generation["tournament"])),
                decision_cell(generation["decision"], is_task=True),
                text("–" if verifier is None else ("passed" if verifier else "FAILED")),
                f"<details><summary>feedback</summary><pre>{text(generation.get('feedback', ''))}</pre></details>"
                f"<details><summary>output</summary><pre>{text(generation.get('output', ''))}</pre></details>",
            ]
        )
    return table(
        ["round", "score", "decision", "verifier", "verifier / judge feedback"],
        rows,
        numeric=(0, 1),
        stacked=True,
    )


def gate_table(report: RunReport) -> str:
    if report.is_task:
        return task_gate_table(report)
    rows = [
        [
            text(d["generation"]),
            text(d["attempt"] + 1),
            decision_cell(d["decision"]),
            text(fmt(d["mean_delta"], "+.4f")),
            text(f"{d['wins']}-{d['losses']}"),
            text(fmt(d["pairs"], "d")),
            f'<span class="why">{text(d["rationale"])}</span>',
        ]
        for d in report.decisions
    ]
    return table(
        ["gen", "attempt", "decision", "paired Δ", "won-lost", "pairs", "rationale"],
        rows,
        css="gate stack",  # numbers and labels by the style sheet: no attribute on 900 rows
    )


def task_gate_table(report: RunReport) -> str:
    """A task run's decisions: one per round, against the best round so far (no tournament:
    no pairs, no won-lost)."""
    rows = [
        [
            text(d["generation"]),
            decision_cell(d["decision"], is_task=True),
            text(fmt(d["mean_delta"], "+.4f")),
            f'<span class="why">{text(d["rationale"])}</span>',
        ]
        for d in report.decisions
    ]
    return table(
        ["round", "decision", "Δ vs the best round", "rationale"],
        rows,
        numeric=(0, 2),
        css="task-gate stack",
    )


def gate_section(report: RunReport) -> str:
    """Every gate decision; a long history starts folded (the chart shows it at a glance)."""
    if not report.decisions:
        return "<p>No decision yet.</p>"
    count = len(report.decisions)
    state = " open" if count <= GATE_OPEN_MAX else ""
    return (
        f"<details{state}><summary>{count} decisions, each with the statistic it decided on"
        f"</summary>{gate_table(report)}</details>"
    )


def entries_list(entries: list[dict[str, Any]], hidden: int, empty: str) -> str:
    if not entries:
        return f"<p>{text(empty)}</p>"
    items = []
    for entry in entries:
        counts = f"+{entry['helpful']} / −{entry['harmful']}, seen {entry['seen']}"
        mine = ' <span class="tag">this run</span>' if entry["from_run"] else ""
        content = f"<br><code>{text(entry['content'])}</code>" if entry["content"] else ""
        items.append(
            f"<li>[{text(entry['id'])}] {text(entry['summary'])} "
            f'<span class="counts">({text(counts)})</span>{mine}{content}</li>'
        )
    more = f"<p>… and {hidden} more.</p>" if hidden else ""
    return f'<ul class="entries">{"".join(items)}</ul>{more}'


def promotions_section(report: RunReport) -> str:
    """The candidate bundles the run's coach edits made: trials per stage, status, and the last
    decision with its statistic (``lessonloop promotions`` has every trial)."""
    rows = []
    for item in report.promotions:
        last = item["decisions"][-1] if item["decisions"] else None
        counts = ", ".join(f"{stage} {n}" for stage, n in item["trials"].items()) or "none"
        why = (
            f"{text(last['action'])} by {text(last['actor'])}: {text(last['rationale'])}"
            if last
            else ""
        )
        rows.append(
            [
                text(item["generation_index"]),
                f"{text(item['kind'])} <code>{text(item['ref'])}</code>",
                text(counts),
                f"<strong>{text(item['status'])}</strong>",
                why,
            ]
        )
    return (
        '<p class="sub">Each coach edit the curator accepted made a candidate bundle, served '
        "only if it won its matched trials (<code>lessonloop promotions</code> lists every "
        "trial).</p>"
        + table(["gen", "candidate", "trials", "status", "last decision"], rows, stacked=True)
    )


def knowledge_section(report: RunReport) -> str:
    knowledge = report.knowledge
    return (
        f'<p class="sub">Scope <code>{text(knowledge["scope"])}</code> as it stands now '
        "(shared by every run of it); evidence is helpful / harmful counts. "
        '<span class="tag">this run</span> marks what this run wrote or confirmed.</p>'
        "<h3>Playbook</h3>"
        + entries_list(knowledge["playbook"], knowledge["playbook_hidden"], "No playbook bullets.")
        + "<h3>Hints</h3>"
        + entries_list(knowledge["hints"], knowledge["hints_hidden"], "No hints.")
        + "<h3>Dead ends</h3>"
        + entries_list(knowledge["dead_ends"], knowledge["dead_ends_hidden"], "No dead ends.")
    )


def usage_section(report: RunReport) -> str:
    usage = report.usage
    rows = [
        [
            text(role["role"]),
            text(role["calls"]),
            text(role["retries"]),
            text(role["input_tokens"]),
            text(role["output_tokens"]),
            text(fmt(role["cost"], ".4f")),
            text(fmt(role["latency_ms"] / 1000, ".2f")),
        ]
        for role in usage["roles"]
    ]
    totals = usage["totals"]
    rows.append(
        [
            "<b>total</b>",
            text(totals["calls"]),
            text(totals["retries"]),
            text(totals["input_tokens"]),
            text(totals["output_tokens"]),
            text(fmt(totals["cost"], ".4f")),
            text(fmt(totals["latency_ms"] / 1000, ".2f")),
        ]
    )
    calls = table(
        ["role", "calls", "retries", "input tokens", "output tokens", "cost", "latency s"],
        rows,
        numeric=(1, 2, 3, 4, 5, 6),
        stacked=True,
    )
    if not usage["plays"]:
        return calls
    plays = ", ".join(f"{phase} {count}" for phase, count in usage["plays"].items())
    return calls + f"<p>Matches played: {text(usage['plays_total'])} ({text(plays)}).</p>"


def settings_section(settings: dict[str, Any]) -> str:
    rows = [
        [f"<code>{text(key)}</code>", text(json.dumps(value))] for key, value in settings.items()
    ]
    return table(["setting", "value"], rows, stacked=True)


def run_page(report: RunReport) -> str:
    """The whole report of one run (an evolve run's or a mission's: ``kind_page``)."""
    if report.details is not None:
        from .kind_page import kind_page

        return kind_page(report)
    run = report.run
    reason = f" ({run['stop_reason']})" if run["stop_reason"] else ""
    what = "task" if report.is_task else "scenario"
    body = [
        f"<h1>Run {text(run['run_id'])}</h1>",
        f'<p class="sub">{text(what)} <b>{text(run["scenario"])}</b> · status '
        f"<b>{text(run['status'])}</b>{text(reason)} · provider {text(run['provider'])} · "
        f"seed {text(run['seed'])} · started {text(run['created_at'])}, updated "
        f"{text(run['updated_at'])}</p>",
        summary_cards(report),
    ]
    if not report.generations:
        body.append("<p>No generation has completed yet.</p>")
    else:
        body += ["<h2>Score</h2>", score_chart(report)]
        if not report.is_task:
            body += ["<h2>Elo</h2>", elo_chart(report)]
        if any(g["dimensions"] for g in report.generations):
            body += ["<h2>Dimensions</h2>", dimensions_chart(report)]
    body += [
        "<h2>Best " + ("output" if report.is_task else "strategy") + "</h2>",
        best_section(report),
    ]
    if report.is_task and report.generations:
        body += ["<h2>Rounds and feedback</h2>", rounds_section(report)]
    body += [
        "<h2>Gate history</h2>",
        gate_table(report) if report.decisions else "<p>No decision yet.</p>",
    ]
    if report.promotions:
        body += ["<h2>Promotion trials</h2>", promotions_section(report)]
    body += ["<h2>Playbook, hints and dead ends</h2>", knowledge_section(report)]
    body += ["<h2>Usage and cost</h2>", usage_section(report)]
    body += ["<h2>Settings</h2>", settings_section(report.settings)]
    return document(f"lessonloop run {run['run_id']}", body)
