"""The report of an evolve run (the champion, each candidate's speed-up with its bound and the
noise of its timings) and of a mission (each step, the verifier's outcomes, the final diff's
path): their own page, since neither plays rated matches; the usage and settings sections are
the scenario page's. ``details`` reads what the page needs from the kind's own tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from .page import cards, document, fmt, settings_section, table, usage_section
from .svg import text

if TYPE_CHECKING:
    from ..store.db import Store
    from .data import RunReport

KINDS = ("evolve", "mission")


def details(store: Store, run_id: str, kind: str) -> dict[str, Any] | None:
    """The kind's own rows (None for scenario and task runs)."""
    if kind == "evolve":
        from ..evolve import measure
        from ..evolve import store as rows

        found = rows.candidates(store, run_id)
        kept = [c for c in found if c["champion"]]
        champion = kept[-1] if kept else None
        confirmation = None
        if champion is not None and champion["candidate_index"] > 0:
            confirm = rows.pairs(store, run_id, champion["candidate_index"], "confirm")
            if confirm:
                confirmation = measure.reassess(confirm, champion["stats"] or {}).to_dict()
        return {"candidates": found, "champion": champion, "confirmation": confirmation}
    if kind == "mission":
        from ..mission import store as mission_store

        return {
            "mission": mission_store.mission(store, run_id),
            "steps": mission_store.steps(store, run_id),
        }
    return None


def evolve_artifacts(folder: Path) -> dict[str, Path]:
    """An evolve run's files under its folder: the champion's source (named with the
    source's extension: ``champion.c``), ``history.json`` and ``report.md``."""
    champions = sorted(folder.glob("champion.*"))
    found = {
        "champion_source": champions[0] if champions else folder / "champion",
        "history": folder / "history.json",
        "report_md": folder / "report.md",
    }
    return {name: path for name, path in found.items() if path.is_file()}


def _times(noise: dict[str, float] | None, metric: str | None) -> str:
    """One side's measurements in the metric's unit (older runs recorded none: wall time)."""
    from ..evolve.measure import amount

    if not noise:
        return "–"
    return (
        f"min {amount(noise['min'], metric)}, median {amount(noise['median'], metric)}, "
        f"spread {noise['spread']:.1%}"
    )


def _speed(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}x"


def _header(report: RunReport, what: str) -> str:
    run = report.run
    reason = f" ({run['stop_reason']})" if run["stop_reason"] else ""
    return (
        f"<h1>Run {text(run['run_id'])}</h1>"
        f'<p class="sub">{text(what)} <b>{text(run["scenario"])}</b> · status '
        f"<b>{text(run['status'])}</b>{text(reason)} · provider {text(run['provider'])} · "
        f"started {text(run['created_at'])}, updated {text(run['updated_at'])}</p>"
    )


def evolve_page(report: RunReport, found: dict[str, Any]) -> list[str]:
    candidates = found["candidates"][1:]
    champion, confirmation = found["champion"], found["confirmation"]
    decisions = [g["decision"] for g in report.generations]
    recorded = (champion or {}).get("stats") or (candidates[-1]["stats"] if candidates else None)
    metric = (recorded or {}).get("metric")
    body = [
        _header(report, "evolve run"),
        cards(
            [
                (
                    "champion",
                    "the baseline"
                    if champion is None or champion["candidate_index"] == 0
                    else f"generation {champion['candidate_index']}",
                ),
                (
                    "speed-up over the baseline (confirmed on fresh pairs)",
                    _speed(confirmation["speedup"]) if confirmation else "–",
                ),
                (
                    f"its one-sided {confirmation['confidence']:.0%} lower bound"
                    if confirmation
                    else "lower bound",
                    _speed(confirmation["speedup_lower_bound"]) if confirmation else "–",
                ),
                ("candidates done", f"{len(candidates)} of {report.run['target_generations']}"),
                (
                    "champion / rejected / wrong",
                    f"{decisions.count('champion')} / {decisions.count('rejected')} / "
                    f"{decisions.count('wrong')}",
                ),
            ]
        ),
        "<h2>Champion</h2>",
    ]
    if champion is None or champion["candidate_index"] == 0:
        body.append("<p>No candidate was faster than the baseline at the stated confidence.</p>")
    else:
        line = f"Generation {champion['candidate_index']}: " + json.dumps(champion["params"])
        if confirmation:
            line += (
                f"; {confirmation['speedup']:.3f}x the baseline's speed on "
                f"{confirmation['pairs']} fresh interleaved pairs (one-sided "
                f"{confirmation['confidence']:.0%} lower bound "
                f"{confirmation['speedup_lower_bound']:.3f}x; "
                + ("confirmed" if confirmation["faster"] else "NOT confirmed")
                + f"). Baseline: {_times(confirmation['champion_noise'], metric)}; champion: "
                f"{_times(confirmation['candidate_noise'], metric)}."
            )
        else:
            line += " (not yet confirmed against the baseline: the run has not ended)."
        body.append(f"<p>{text(line)}</p>")
    rows = []
    for c in candidates:
        stats = c["stats"] or {}
        rows.append(
            [
                text(c["candidate_index"]),
                f"<code>{text(json.dumps(c['params']))}</code>",
                text(c["status"]),
                text(_speed(c["speedup"])),
                text(_speed(c["speedup_lower_bound"])),
                text(fmt(c["against_index"], "d")),
                text(fmt(stats.get("pairs"), "d")),
                text(_times(stats.get("candidate_noise"), stats.get("metric"))),
                f'<span class="why">{text(c["message"] or "")}</span>',
            ]
        )
    body += [
        "<h2>Candidates</h2>",
        "<p>Each candidate's speed-up is against the champion of its time, timed in "
        "interleaved pairs; the bound is the one-sided lower confidence bound.</p>",
        table(
            [
                "gen",
                "params",
                "status",
                "speed-up",
                "lower bound",
                "vs gen",
                "pairs",
                "its times",
                "message",
            ],
            rows,
            numeric=(0, 3, 4, 5, 6),
            stacked=True,
        )
        if rows
        else "<p>No candidate has finished yet.</p>",
    ]
    files = evolve_artifacts(paths.run_dir(report.run["run_id"])).values()
    if files:
        body.append("<p>Artifacts: " + ", ".join(f"<code>{text(f)}</code>" for f in files) + "</p>")
    return body


def mission_page(report: RunReport, found: dict[str, Any]) -> list[str]:
    mission, steps = found["mission"] or {}, found["steps"]
    passed = [s for s in steps if s["applied"] and s["verifier_exit"] == 0]
    body = [
        _header(report, "mission"),
        cards(
            [
                ("verifier", "passed" if passed else "not passed"),
                ("steps done", f"{len(steps)} of {mission.get('max_steps', '?')}"),
                ("model calls", fmt(sum(s["calls"] for s in steps), "d")),
                ("verifier exit at the start", fmt(mission.get("initial_exit"), "d")),
                ("refused steps", fmt(sum(1 for s in steps if s["refused"]), "d")),
            ]
        ),
        "<h2>Goal</h2>",
        f"<pre>{text(mission.get('goal', ''))}</pre>",
        f"<p>Verifier <code>{text(mission.get('verifier', ''))}</code> on a copy of "
        f"<code>{text(mission.get('source_dir', ''))}</code>; the final diff: "
        f"<code>{text(paths.run_dir(report.run['run_id']) / 'mission.diff')}</code>"
        + (
            f" (apply it with <code>lessonloop mission apply {text(report.run['run_id'])}</code>)"
            if report.run["status"] == "succeeded"
            else ""
        )
        + ".</p>",
    ]
    rows = []
    for step in steps:
        state = "refused" if step["refused"] else "applied" if step["applied"] else "not applied"
        ran = step["verifier_output"] is not None
        verdict = (
            "–"
            if not ran
            else "passed"
            if step["verifier_exit"] == 0
            else f"failed (exit {fmt(step['verifier_exit'], 'd')})"
        )
        rows.append(
            [
                text(step["step_index"]),
                text(step["kind"]),
                text(state),
                text(verdict),
                f'<span class="why">{text(step["message"])}</span>'
                f"<details><summary>proposal</summary><pre>{text(step['proposal'])}</pre></details>"
                + (
                    f"<details><summary>verifier output</summary>"
                    f"<pre>{text(step['verifier_output'])}</pre></details>"
                    if ran
                    else ""
                ),
            ]
        )
    body += [
        "<h2>Steps</h2>",
        table(
            ["step", "kind", "change", "verifier", "what it did"], rows, numeric=(0,), stacked=True
        )
        if rows
        else "<p>No step yet.</p>",
    ]
    if mission.get("initial_output"):
        body += [
            "<details><summary>the verifier's output at the start</summary>"
            f"<pre>{text(mission['initial_output'])}</pre></details>"
        ]
    return body


def kind_page(report: RunReport) -> str:
    """The whole report of an evolve run or a mission."""
    found = report.details or {}
    if report.run["kind"] == "evolve":
        body = evolve_page(report, found)
    else:
        body = mission_page(report, found)
    body += ["<h2>Usage and cost</h2>", usage_section(report)]
    body += ["<h2>Settings</h2>", settings_section(report.settings)]
    return document(f"lessonloop run {report.run['run_id']}", body)
