"""A model route as the competitor: it writes a whole candidate source, shown the champion's
source, the spec's entry point and metric, the previous candidates' outcomes and the scope's
lessons (all redacted and capped). Its answer must hold one fenced code block; anything else
is a rejected candidate with the reason, never an error."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .measure import label

if TYPE_CHECKING:
    from ..loop.budget import Metered
    from .spec import Loaded

SOURCE_CHARS = 12_000  # of the champion's source shown
SOURCE_MAX = 200_000  # the longest candidate source accepted
MESSAGE_CHARS = 300  # of each previous candidate's message shown
OUTCOMES_SHOWN = 6  # the most recent candidates described
MAX_TOKENS = 4096

SYSTEM = (
    "You make one source file faster (or better by the stated metric) without changing what "
    "it computes. You are shown the current best version; answer with the COMPLETE new "
    "version of the file in ONE fenced code block, and nothing else but a sentence saying "
    "what you changed. Keep every function, name and output the file's callers rely on."
)

_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)


@dataclass
class Written:
    """A model's answer: the candidate's source, or None with the reason it is unusable."""

    source: str | None
    answer: str  # the answer as received, redacted (kept with the candidate's receipt)
    reason: str = ""


def _fenced(text: str, limit: int) -> str:
    from ..safety.redact import redact

    shown = redact(text)
    if len(shown) > limit:
        shown = shown[:limit] + "\n... (cut)\n"
    return f"```\n{shown.rstrip()}\n```"


def prompt(
    loaded: Loaded,
    champion_source: str,
    champion_index: int,
    outcomes: list[dict],
    lessons: list[str],
) -> str:
    """The user message: the task, the champion's source, what was tried, the lessons."""
    from ..safety.redact import redact

    spec = loaded.spec
    bench = spec.benchmark
    gain = label(bench.metric, bench.direction)
    parts = [
        f"File: {spec.source}"
        + (f" (the function `{spec.entry}` is what is measured)" if spec.entry else ""),
        f"Measured by: {bench.metric}, {bench.direction} is better; a new version must win "
        f"a {gain} of at least {bench.min_speedup:g}x over the current best, and pass the "
        "correctness check first.",
        "Correctness: "
        + (
            f"`{spec.correctness.command}` must pass"
            if spec.correctness.command
            else "the same results as the reference implementation on generated inputs"
        ),
    ]
    if loaded.params:  # what the file declares may change: a small model's first lead
        parts.append(
            "Declared tunables: "
            + "; ".join(
                f"{p.name} "
                + (
                    "one of " + ", ".join(map(str, p.choices))
                    if p.kind == "choice"
                    else f"{p.kind} {p.low:g}..{p.high:g}"
                )
                for p in loaded.params
            )
        )
    if lessons:
        parts.append(
            "\nLessons from earlier runs:\n" + "\n".join(f"- {redact(x)}" for x in lessons)
        )
    if outcomes:
        parts.append("\nRecent candidates (most recent last):")
        for c in outcomes[-OUTCOMES_SHOWN:]:
            what = "model-written" if c["params"].get("written_by") else f"params {c['params']}"
            gain_text = "" if c["speedup"] is None else f", {c['speedup']:.2f}x vs the best then"
            message = redact(c["message"] or "")[:MESSAGE_CHARS]
            parts.append(f"- generation {c['candidate_index']} ({what}): {c['status']}{gain_text}"
                         + (f" — {message}" if message else ""))  # fmt: skip
    parts.append(
        f"\nThe current best version (generation {champion_index}):\n"
        + _fenced(champion_source, SOURCE_CHARS)
    )
    parts.append(
        f"\nWrite the complete improved {spec.source} now, in one fenced code block. It must "
        "differ from the version above (an unchanged file is rejected) and stay correct."
    )
    return "\n".join(parts)


def parse(answer: str, loaded: Loaded, champion_source: str) -> Written:
    """The candidate in ``answer``, or the reason there is none."""
    from ..safety.redact import redact

    kept = redact(answer or "")
    blocks = [m.group(1) for m in _FENCE.finditer(answer or "")]
    entry = loaded.spec.entry
    if len(blocks) > 1 and entry:  # the block that holds the entry point, if only one does
        blocks = [b for b in blocks if re.search(rf"\b{re.escape(entry)}\b", b)] or blocks
    if not blocks:
        return Written(None, kept, "the answer holds no fenced code block")
    if len(blocks) > 1:
        return Written(None, kept, f"the answer holds {len(blocks)} code blocks; one was asked")
    source = blocks[0]
    if not source.strip():
        return Written(None, kept, "the code block is empty")
    if len(source) > SOURCE_MAX:
        return Written(None, kept, f"the source is longer than {SOURCE_MAX} characters")
    if source.strip() == champion_source.strip():
        return Written(None, kept, "the same source as the current best")
    if loaded.suffix == ".py":
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            return Written(None, kept, f"not valid Python: {exc.msg} (line {exc.lineno})")
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        if entry and entry not in defined:
            return Written(None, kept, f"the source does not define `{entry}`")
    return Written(source if source.endswith("\n") else source + "\n", kept)


def write(
    metered: Metered,
    loaded: Loaded,
    champion_source: str,
    champion_index: int,
    outcomes: list[dict],
    lessons: list[str],
    generation: int,
) -> Written:
    """One call: the model's candidate (or why its answer is unusable). A spent budget
    (``BudgetSpent``) or a failed endpoint (``ProviderError``) is raised: the run stops,
    resumable, with what it stored."""
    from ..providers.base import Request

    completion = metered.complete(
        Request(
            role="competitor",
            system=SYSTEM,
            messages=[
                {
                    "role": "user",
                    "content": prompt(loaded, champion_source, champion_index, outcomes, lessons),
                }
            ],
            temperature=0.7,
            seed=generation,
            max_tokens=MAX_TOKENS,
        )
    )
    return parse(completion.text or "", loaded, champion_source)
