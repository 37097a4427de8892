"""The promotions page: what each scope serves now (with its rollback target), and every
candidate the gate tried (a coach's context bundle, a trained checkpoint) with its decisions
and its matched trials, folded. Its data is ``dashboard.promotions`` (redacted), escaped here.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from ..app import dashboard
from .answers import parameter
from .pages import esc, number, page, table

OPEN_SHOWN = 10  # candidates shown unfolded (the newest); the rest fold to their one line
DEFAULT = "the default (what was served before any promotion)"


HYPHENATED = re.compile(r"\S{1,40}-\S{1,40}")  # b-a38510532395da0c, held-out: one word each


def words(text: str) -> str:
    """``text`` escaped, each short hyphenated word kept on one line: a browser would break a
    bundle's id after its ``b-``."""
    return "".join(
        f'<span class="nb">{esc(part)}</span>' if HYPHENATED.fullmatch(part) else esc(part)
        for part in re.split(r"(\s+)", text)
    )


def scope_link(scope: str) -> str:
    return f'<a href="/promotions?scope={quote(scope, safe=":")}">{esc(scope)}</a>'


def served_rows(active: list[dict[str, Any]]) -> list[str]:
    """One row per scope and role: the ref served, since when, and what a rollback returns to."""
    rows = []
    for pointer in active:
        chosen = (
            f' (<a href="#candidate-{esc(pointer["candidate_id"])}">'
            f"#{esc(pointer['candidate_id'])}</a>)"
            if pointer["candidate_id"] is not None
            else ""
        )
        before = (
            f"<code>{words(pointer['previous_ref'])}</code>"
            + (
                f" (#{esc(pointer['previous_candidate_id'])})"
                if pointer["previous_candidate_id"] is not None
                else ""
            )
            if pointer["previous_ref"] is not None
            else esc(DEFAULT)
        )
        left = pointer.get("probation_left")
        watched = (  # wraps: the cell keeps its timestamp on one line, not the note
            f' <span class="probation">(on probation: {esc(left)} more '
            f"generation{'s' if left != 1 else ''})</span>"
            if left
            else ""
        )
        rows.append(
            f'<tr class="served" data-scope="{esc(pointer["scope"])}" '
            f'data-role="{esc(pointer["role"])}">'
            f'<td data-label="scope">{scope_link(pointer["scope"])}</td>'
            f'<td data-label="role">{esc(pointer["role"])}</td>'
            f'<td data-label="serves"><code>{words(pointer["ref"])}</code>{chosen}</td>'
            f'<td class="when" data-label="since">{esc(pointer["switched_at"])}{watched}</td>'
            f'<td class="rollback" data-label="rollback target">{before}</td></tr>'
        )
    return rows


def origin(candidate: dict[str, Any]) -> str:
    """Who proposed it: ``coach, run R generation G`` (the run linked), ``train``."""
    words = esc(candidate["source"])
    if candidate["run_id"]:
        words += (
            f', run <a href="/runs/{quote(candidate["run_id"])}">{esc(candidate["run_id"])}</a>'
        )
    if candidate["generation_index"] is not None:
        words += f" generation {esc(candidate['generation_index'])}"
    return words


def decision_rows(decisions: list[dict[str, Any]]) -> list[str]:
    return [
        f'<tr class="decision"><td data-label="action"><b>{esc(d["action"])}</b></td>'
        f'<td data-label="by">{esc(d["actor"])}</td>'
        f'<td data-label="stage">{esc(d["stage"] or "–")}</td>'
        f'<td data-label="statistic">{words(d["statistic"] or "–")}</td>'
        f'<td class="why">{words(d["rationale"])}</td>'
        f'<td class="when" data-label="at">{esc(d["at"])}</td></tr>'
        for d in decisions
    ]


def trials_section(candidate: dict[str, Any]) -> str:
    """The candidate's matched trials, folded: one line of counts per stage until opened."""
    played = candidate["trial_scores"]
    if not played:
        return '<p class="sub">No trial played.</p>'
    stages: dict[str, int] = {}
    for trial in played:
        stages[trial["stage"]] = stages.get(trial["stage"], 0) + 1
    counts = ", ".join(f"{esc(stage)} {count}" for stage, count in stages.items())
    rows = [
        f'<tr class="trial"><td data-label="stage">{esc(t["stage"])}</td>'
        f'<td class=num data-label="seed">{esc(t["seed"])}</td>'
        f'<td class=num data-label="candidate">{number(t["candidate"])}</td>'
        f'<td class=num data-label="incumbent">{number(t["incumbent"])}</td>'
        f'<td class=num data-label="delta">{number(t["delta"], "+.4f")}</td></tr>'
        for t in played
    ]
    return (
        f'<details class="trials" id="trials-{esc(candidate["id"])}"><summary>{len(played)} '
        f"{'trial' if len(played) == 1 else 'trials'} ({counts})</summary>"
        + table(["stage", "seed", "candidate", "incumbent", "delta"], rows, numeric=(1, 2, 3, 4))
        + "</details>"
    )


def candidate_block(candidate: dict[str, Any], unfolded: bool) -> str:
    status = candidate["status"]
    against = candidate["incumbent_ref"]
    decisions = candidate["decisions"]
    return (
        f'<details class="candidate" id="candidate-{esc(candidate["id"])}" '
        f'data-id="{esc(candidate["id"])}"{" open" if unfolded else ""}>'
        f"<summary><b>#{esc(candidate['id'])}</b> {esc(candidate['role'])} "
        f"{esc(candidate['kind'])} <code class=ref>{words(candidate['ref'])}</code> · "
        f'<span class="status st-{esc(status.replace(" ", "-"))}">{esc(status)}</span></summary>'
        f'<p class="sub">scope {scope_link(candidate["scope"])} · from {origin(candidate)} · '
        + (
            f"tried against <code>{words(against)}</code>"
            if against
            else "tried against what was served"
        )
        + f" · proposed {esc(candidate['created_at'])}</p>"
        + (
            table(
                ["decision", "by", "stage", "statistic", "rationale", "at"],
                decision_rows(decisions),
                stacked=True,
            )  # fmt: skip
            if decisions
            else '<p class="sub">No decision yet (pending).</p>'
        )
        + trials_section(candidate)
        + "</details>"
    )


def scope_choice(scopes: list[str], chosen: str | None) -> str:
    """The filter: every scope with candidates (and the one asked for, even with none)."""
    names = sorted({*scopes, *([chosen] if chosen else [])})
    options = "".join(
        f'<option value="{esc(name)}"{" selected" if name == chosen else ""}>{esc(name)}</option>'
        for name in names
    )
    return (
        '<form class="inline" method="get" action="/promotions">'
        f'<label>scope<select name="scope"><option value="">all</option>{options}</select>'
        '</label><button type="submit">Show</button></form>'
    )


def promotions_view(request: Request, token: str) -> Response:
    """``/promotions[?scope=S]``: what ``GET /api/promotions`` answers, as a page."""
    chosen = parameter(request, "scope") or None
    listed = dashboard.promotions(chosen, dashboard.PROMOTIONS_SHOWN)
    candidates, total = listed["candidates"], listed["total"]
    title = f"Promotions of {chosen}" if chosen else "Promotions"
    body = (
        f"<h1>{esc(title)}</h1>"
        '<p class="sub">Candidates (a coach&#39;s context bundle, a checkpoint '
        "<code>lessonloop train</code> fitted) are served only after they win matched trials "
        "against what is served; every trial and decision is kept. Roll back with "
        "<code>lessonloop promotions rollback SCOPE --reason ...</code>.</p>"
        + scope_choice(dashboard.promotion_scopes(), chosen)
        + "<h2>Served now</h2>"
        + (
            table(
                ["scope", "role", "serves", "since", "rollback target"],
                served_rows(listed["active"]),
                table_id="served",
                stacked=True,
            )  # fmt: skip
            if listed["active"]
            else f"<p>Nothing promoted: {esc(DEFAULT)} is served.</p>"
        )
        + f'<h2 id="candidates">Candidates ({total})</h2>'
    )
    if total > len(candidates):
        body += f'<p class="sub">The newest {len(candidates)} of {total}: choose a scope.</p>'
    if not candidates:
        body += (
            "<p>No candidates yet: a run with <code>--context-trials</code> proposes context "
            "bundles, <code>lessonloop train</code> a checkpoint.</p>"
        )
    body += "".join(
        candidate_block(candidate, index < OPEN_SHOWN) for index, candidate in enumerate(candidates)
    )
    return page(f"lessonloop: {title.lower()}", token, f'<div class="promotions">{body}</div>')
