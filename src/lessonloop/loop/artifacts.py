"""Files a run leaves for people and tools: per-generation artifacts and ``report.md``.

Everything here is derived from the database, so a crash between the commit and the files
is repaired on resume by writing them again. Writes are atomic (temp file, then rename).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..errors import unwritable
from ..files import atomic_write
from ..store.runs import best_generation, loads, validated


def generation_dir(run_dir: Path, generation_index: int) -> Path:
    return run_dir / "generations" / str(generation_index)


def has_generation_artifacts(run_dir: Path, generation_index: int) -> bool:
    return (generation_dir(run_dir, generation_index) / "score.json").exists()


def write_generation(run_dir: Path, generation, matches: Iterable) -> None:
    """Write strategy.json, analysis.md, context.json, then score.json atomically.

    score.json is the completion mark: a crash before it means all four are written again on
    resume, so only it needs the rename.
    """
    folder = generation_dir(run_dir, generation["generation_index"])
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "strategy.json").write_text(
            json.dumps(loads(generation["strategy_json"]), indent=2) + "\n", encoding="utf-8"
        )
        (folder / "analysis.md").write_text(generation["analysis"], encoding="utf-8")
        (folder / "context.json").write_text(
            json.dumps(loads(generation["context_json"]), indent=2) + "\n", encoding="utf-8"
        )
    except OSError as exc:  # a full disk: resume writes them again (score.json is not there)
        raise unwritable(folder, exc) from None
    score = {
        "generation_index": generation["generation_index"],
        "mean_score": generation["mean_score"],
        "incumbent_score": generation["incumbent_score"],
        "mean_delta": generation["mean_delta"],
        "best_score": generation["best_score"],
        "validated_score": _column(generation, "validated_score"),
        "elo": generation["elo"],
        "wins": generation["wins"],
        "losses": generation["losses"],
        "ties": generation["ties"],
        "gate_decision": generation["gate_decision"],
        "evaluator_epoch": generation["evaluator_epoch"],
        "dimensions": loads(generation["dimensions_json"]),
        "matches": [
            {
                "attempt": m["attempt"],
                "phase": m["phase"],
                "side": m["side"],
                "seed": m["seed"],
                "score": m["score"],
                "dimensions": loads(m["dimensions_json"]),
                "error": m["error"],
            }
            for m in matches
        ],
    }
    atomic_write(folder / "score.json", json.dumps(score, indent=2) + "\n")


def _column(row, key: str):
    try:
        return row[key]
    except (IndexError, KeyError):
        return None


def _fmt(value: float | None, spec: str = ".4f") -> str:
    return "–" if value is None else format(value, spec)


def write_report(
    run_dir: Path, run, generations: list, decisions: list, promotions: list | None = None
) -> Path:
    """``report.md``: the run, its generations, best strategy, gate history and, when the run
    tried context bundles (``--context-trials``), each candidate's promotion decision."""
    lines = [
        f"# Run {run['run_id']}",
        "",
        f"- Scenario: `{run['scenario']}`",
        f"- Status: **{run['status']}**"
        + (f" ({run['stop_reason']})" if run["stop_reason"] else ""),
        f"- Provider: `{run['provider']}`, seed {run['seed']}",
        f"- Generations: {len(generations)} of {run['target_generations']}",
        "",
        "## Generations",
        "",
        "| gen | score | incumbent | paired delta | W-L-T | gate | Elo | best |",
        "|---:|---:|---:|---:|:---:|:---|---:|---:|",
    ]
    for row in generations:
        lines.append(
            f"| {row['generation_index']} | {_fmt(row['mean_score'])} | {_fmt(row['incumbent_score'])} | "
            f"{_fmt(row['mean_delta'], '+.4f')} | {row['wins']}-{row['losses']}-{row['ties']} | "
            f"{row['gate_decision']} | {row['elo']:.1f} | {_fmt(row['best_score'])} |"
        )
    checked = validated(generations)
    if checked:
        lines += [
            "",
            "Scores are tournament means on the generation's own seeds; *best* is the "
            "incumbent's validated score, its mean on fixed validation seeds that never "
            "choose anything.",
        ]
    best = best_generation(generations)
    lines += ["", "## Best strategy", ""]
    if best is not None:
        score = (
            f"validated score {generations[-1]['best_score']:.4f} (tournament mean "
            f"{best['mean_score']:.4f})"
            if checked
            else f"mean score {best['mean_score']:.4f}"
        )
        lines += [
            f"Generation {best['generation_index']}, {score}:",
            "",
            "```json",
            json.dumps(loads(best["strategy_json"]), indent=2),
            "```",
        ]
    else:
        lines.append("No strategy has advanced yet.")
    lines += ["", "## Gate history", ""]
    for decision in decisions:
        lines.append(
            f"- gen {decision['generation_index']} attempt {decision['attempt']}: "
            f"**{decision['decision']}** — {decision['rationale']}"
        )
    if promotions:
        lines += ["", "## Promotion trials", ""]
        for item in sorted(promotions, key=lambda c: c["id"]):
            trials = sum(item["trials"].values())
            last = item["decisions"][-1] if item["decisions"] else None
            why = f" — {last['rationale']}" if last else ""
            lines.append(
                f"- gen {item['generation_index']}: {item['kind']} `{item['ref']}` from "
                f"{item['source']}, {trials} trials: **{item['status']}**{why}"
            )
    path = run_dir / "report.md"
    atomic_write(path, "\n".join(lines) + "\n")
    return path
