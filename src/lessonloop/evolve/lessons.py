"""What an evolve run teaches, through the one admission gate (``knowledge/admission.py``), in
the scope ``evolve:<spec name>``: what made it better (the champion's changes from the
baseline, with its confirmed gain and bound) and dead ends (a parameter value or range whose
every candidate was wrong, other wrong candidates, candidates slower than the baseline).

Used next time: the offline tuner tries the champions' parameters first (``seeds``), and a
model route's prompt shows the lessons (``shown``). Admission redacts, caps and deduplicates
them (numbers are not words to it, so a run that finds the same again reinforces them)."""

from __future__ import annotations

import difflib
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from .measure import bound_words, label
from .params import Param

if TYPE_CHECKING:
    from ..knowledge.admission import Outcome, Proposal
    from ..store.db import Store
    from .spec import Loaded

SHOWN = 8  # lessons a model's prompt shows
LISTED = 5  # candidates one dead end lists
DIFF_CHARS = 3000
BAD = ("incorrect", "crashed", "refused", "rejected")


def scope(loaded: Loaded) -> str:
    return f"evolve:{loaded.spec.name}"


def changes(params: dict, baseline: dict) -> str:
    """``A=1, B='x'``: the values that differ from the baseline's."""
    changed = [f"{k}={v!r}" for k, v in params.items() if baseline.get(k) != v]
    return ", ".join(changed) or "the baseline's values"


def _what(candidate: dict, baseline: dict) -> str:
    if candidate["params"].get("written_by"):
        return f"the model-written source of generation {candidate['candidate_index']}"
    return changes(candidate["params"], baseline)


def _diff(loaded: Loaded, candidate: dict) -> str:
    """A candidate's changes from the baseline as a unified diff (capped), or its params."""
    if not candidate["params"].get("written_by"):
        return "params: " + json.dumps(candidate["params"], sort_keys=True)
    try:
        text = Path(candidate["source_path"]).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    lines = difflib.unified_diff(
        loaded.source.splitlines(keepends=True),
        text.splitlines(keepends=True),
        "baseline",
        f"generation {candidate['candidate_index']}",
    )
    return "".join(lines)[:DIFF_CHARS]


def _regions(params: list[Param], tuned: list[dict]) -> list[tuple[str, list[dict]]]:
    """Parameter values (a choice) or ranges (a number beyond every correct candidate's)
    where every candidate tried was wrong, with those candidates."""
    found = []
    correct = [c for c in tuned if c["status"] not in BAD]
    wrong = [c for c in tuned if c["status"] in BAD]
    for param in params:
        name = param.name
        if param.kind == "choice":
            for value in param.choices:
                tried = [c for c in tuned if c["params"].get(name) == value]
                if len(tried) >= 2 and all(c["status"] in BAD for c in tried):
                    found.append((f"{name}={value!r}", tried))
            continue
        if not correct or not wrong:
            continue
        top = max(c["params"][name] for c in correct)
        bottom = min(c["params"][name] for c in correct)
        above = [c for c in wrong if c["params"][name] > top]
        below = [c for c in wrong if c["params"][name] < bottom]
        for region, members in ((f"{name} > {top!r}", above), (f"{name} < {bottom!r}", below)):
            if len(members) >= 2:
                found.append((region, members))
    return found


def proposals(loaded: Loaded, summary: dict, found: list[dict], run_id: str) -> list[Proposal]:
    """The run's lessons: the champion's changes (when confirmed) and its dead ends."""
    from ..knowledge.admission import Proposal

    where = scope(loaded)
    name = loaded.spec.name
    metric = summary["metric"]
    gain = label(metric["name"], metric["direction"])
    short = {"wall": "speed-up", "instructions": "fewer instructions"}.get(
        metric["name"], "better printed number"
    )
    baseline = found[0]["params"]
    tags = ["evolve", f"metric:{metric['name']}"]
    made: list[Proposal] = []

    def add(
        kind: str, text: str, content: str, why: str, extra: list[str], index: int | None
    ) -> None:
        made.append(
            Proposal(
                kind=kind, scope=where, source="evidence", summary=text, content=content,
                why=why, tags=tags + extra, run_id=run_id, generation_index=index,
            )
        )  # fmt: skip

    champion = summary["champion"]
    if champion["generation"] and champion["confirmed"]:
        best = found[champion["generation"]]
        add(
            "bullet",
            f"{_what(best, baseline)}: {champion['speedup_vs_baseline']:.2f}x {short} "
            f"(>= {champion['speedup_lower_bound']:.2f}x); start from it",
            _diff(loaded, best),
            f"evolve {name}: a {champion['speedup_vs_baseline']:.3f}x {gain} over the baseline, "
            f"lower bound {champion['speedup_lower_bound']:.3f}x "
            f"({bound_words(champion['confirmation'])}), confirmed on fresh pairs",
            ["champion"],
            best["candidate_index"],
        )
    tuned = [c for c in found[1:] if not c["params"].get("written_by")]
    explained: set[int] = set()
    for region, members in _regions(loaded.params, tuned):
        explained.update(c["candidate_index"] for c in members)
        add(
            "dead_end",
            f"{region} was wrong in all {len(members)} candidates tried",
            "\n".join(f"params: {json.dumps(c['params'], sort_keys=True)}" for c in members),
            f"evolve {name}, e.g.: {members[0]['message']}",
            ["wrong", "region"],
            members[0]["candidate_index"],
        )
    wrong = [c for c in found[1:] if c["status"] in BAD and c["candidate_index"] not in explained]
    for c in wrong[:LISTED]:
        add(
            "dead_end",
            f"{_what(c, baseline)} was {c['status']}",
            _diff(loaded, c),
            f"evolve {name}: {c['message']}",
            ["wrong"],
            c["candidate_index"],
        )
    slower = [c for c in found[1:] if c["status"] not in BAD and _surely_worse(c)]
    if slower:
        add(
            "dead_end",
            "worse than the baseline: " + "; ".join(_what(c, baseline) for c in slower[:LISTED]),
            "\n".join(_diff(loaded, c) for c in slower[:LISTED])[:DIFF_CHARS],
            f"evolve {name}: correct, but worse than the baseline in {metric['name']} "
            f"({metric['direction']} is better)",
            ["slower"],
            slower[0]["candidate_index"],
        )
    return made


def _surely_worse(candidate: dict) -> bool:
    """Worse than the baseline by more than the spec's margin, and worse than the champion it
    was measured against by more than that margin at the gate's confidence (one look, no
    recheck: the margin keeps a null parameter's 0.97x from counting): a candidate within the noise (a parameter
    that does nothing, say) is no dead end."""
    stats = candidate["stats"] or {}
    if not stats.get("speedup"):
        return False
    margin = math.log(stats.get("min_speedup") or 1.0)
    if (candidate["log_gain_vs_baseline"] or 0.0) >= -margin:
        return False
    mean = math.log(stats["speedup"])
    if stats.get("rule") == "every pair":  # counts: the point estimate is the measure
        return mean < 0
    bound = stats.get("speedup_lower_bound") or 0.0
    if bound <= 0:
        return False  # too few pairs for a bound
    return 2 * mean - math.log(bound) < -margin  # the t interval's upper end: surely slower


def learn(store: Store, loaded: Loaded, summary: dict, found: list[dict]) -> list[Outcome]:
    """Admit the run's lessons (redacted, capped, deduplicated by the gate)."""
    from ..knowledge import admission

    return admission.admit(store, proposals(loaded, summary, found, summary["run_id"]))


def seeds(store: Store, loaded: Loaded) -> list[dict]:
    """Parameter values earlier champions had (newest first) that the source still allows:
    the offline tuner tries them before anything else."""
    from ..errors import UsageError
    from ..knowledge.entries import active

    found: list[dict] = []
    if not loaded.params:
        return found
    for entry in reversed(active(store, scope(loaded), ("bullet",))):
        if "champion" not in entry.tags or not entry.content.startswith("params: "):
            continue
        try:
            values = json.loads(entry.content.removeprefix("params: "))
            checked = {p.name: p.check(values[p.name]) for p in loaded.params}
        except (ValueError, KeyError, TypeError, UsageError):
            continue
        if checked not in found:
            found.append(checked)
    return found


def shown(store: Store, loaded: Loaded) -> list[str]:
    """The lessons a model's prompt shows: the most useful first, summaries only."""
    from ..knowledge.entries import active_top

    entries = active_top(store, scope(loaded), ("bullet", "dead_end"), SHOWN)
    return [f"[{e.kind}] {e.summary}" + (f" ({e.why})" if e.why else "") for e in entries]
