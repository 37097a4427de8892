"""The competitor's answer read as strategies: every JSON object in it, numbers just past a
field's bounds clamped, echoes of what was tried refused, the first valid new one kept (and the
other valid candidates, for screening). A model whose answer the scenario refuses is told why
and asked once more; an answer with no JSON goes to the translator. ``Answers`` is the part of
``loop/runner.Runner`` that asks and reads; the functions here need no run."""

from __future__ import annotations

import json
from typing import Any

from .. import canonical, state_block
from ..errors import OffSchemaError
from ..json_blocks import json_objects
from ..providers.base import Completion, Request
from ..scenarios import code
from ..timeutil import utc_now
from . import prompts, seeds
from .context import Context

REPEATS = (
    "the answer repeats the current best or a strategy already tried: change at least one field"
)
SCREEN_CAP = 32  # candidates of one answer screened at most (the first ones)
CLAMP_SLACK = 0.1  # share of a field's range a number may overshoot and still be set to the bound


class Answers:
    """Asking the competitor (and the translator) and reading strategies out of the answers.
    Needs the run's ``scenario``, ``providers`` (metered), ``run`` row and ``position``."""

    scenario: Any
    providers: dict
    run: Any
    position: tuple[int | None, int | None]

    def _attempt_strategies(self, ctx: Context, calls: list) -> tuple[list[dict], str]:
        """The answer's strategies for this attempt: the first valid new one (see
        ``_attempt_strategy``), then every other valid new candidate of the same answer in
        order, up to SCREEN_CAP (several are screened; one goes straight to the gate)."""
        strategy, problem, answer = self._attempt_strategy(ctx, calls)
        if strategy is None:
            return [], problem
        found = [strategy]
        seen = {canonical.dumps(strategy)} | {canonical.dumps(t["strategy"]) for t in ctx.tried}
        if ctx.incumbent:
            seen.add(canonical.dumps(ctx.incumbent["strategy"]))
        for candidate in answer:
            if len(found) >= SCREEN_CAP:
                break
            candidate, _ = clamp_to_bounds(candidate, self.scenario.strategy_schema)
            if canonical.dumps(candidate) in seen:
                continue
            if not code.problems(self.scenario, candidate):  # a broken validate() fails the run
                seen.add(canonical.dumps(candidate))
                found.append(candidate)
        return found, problem

    def _attempt_strategy(self, ctx: Context, calls: list) -> tuple[dict | None, str, list]:
        """The competitor's strategy (the first candidate in its answer that validates), what
        was wrong or repaired, and the answer's candidates (none after a translation or a
        repair: only the first answer is screened). An
        echo of the current best or of this generation's tries is no answer; an answer with
        no JSON at all goes to the translator. A model whose answer the scenario refuses is
        told why and asked once more, within the same attempt."""
        prompt = prompts.competitor(ctx)
        completion = self._call("competitor", ctx, prompt, calls)
        candidates = strategy_candidates(completion)
        if not candidates and completion.text.strip():
            completion = self._call(
                "translator", ctx, prompts.translator(ctx, completion.text), calls
            )
            return (*self._first_valid(strategy_candidates(completion), ctx), [])
        strategy, problem = self._first_valid(candidates, ctx)
        if (
            strategy is None
            and candidates
            and not getattr(self.providers["competitor"], "reads_state", False)
        ):
            seed = seeds.call_seed(self.run["seed"], ctx.generation, ctx.attempt, "repair")
            repair, follow_up = prompts.competitor_repair(
                prompt,
                ctx,
                completion.text,
                candidates[0],
                problem,
                seed,
                repeated=problem == REPEATS,
            )
            completion = self._call("competitor", ctx, repair, calls, follow_up=follow_up)
            strategy, problem = self._first_valid(strategy_candidates(completion), ctx)
            return strategy, problem, []
        return strategy, problem, candidates

    def _first_valid(self, candidates: list[dict], ctx: Context) -> tuple[dict | None, str]:
        """The first candidate the scenario accepts that is new (and what was clamped in it),
        or what was wrong."""
        echoes = {canonical.dumps(t["strategy"]) for t in ctx.tried}
        if ctx.incumbent:
            echoes.add(canonical.dumps(ctx.incumbent["strategy"]))
        problem = "no strategy JSON object found in the answer"
        for candidate in candidates:
            candidate, clamped = clamp_to_bounds(candidate, self.scenario.strategy_schema)
            if canonical.dumps(candidate) in echoes:
                problem = REPEATS
                continue
            problems = code.problems(self.scenario, candidate)  # ScenarioBroken fails the run
            if not problems:
                return candidate, "; ".join(clamped)
            if not problem.startswith("invalid"):  # the first invalid candidate says why
                problem = "invalid strategy: " + "; ".join(map(str, problems))
        return None, problem

    def _call(
        self,
        role: str,
        ctx: Context,
        prompt: prompts.Prompt,
        calls: list,
        follow_up: list[dict] | None = None,
        seed: int | None = None,
    ) -> Completion:
        """One provider call, through the run's budget and onto its ledger (``Metered``, set
        up by the run's lifecycle). An answer that failed its schema is counted too and comes
        back unparsed. ``follow_up``: messages after the prompt (an answer and what was wrong
        with it); ``seed``: the request's seed when not the attempt's (a context trial's)."""
        provider = self.providers[role]
        request = Request(
            role=role,
            system=prompt.system,
            messages=[{"role": "user", "content": prompt.user}, *(follow_up or [])],
            temperature=prompt.temperature,
            max_tokens=prompt.max_tokens,
            json_schema=prompt.schema,
            state=prompt.state,
            # a repair is sampled afresh: under its first seed a model repeats itself
            seed=seed
            if seed is not None
            else seeds.call_seed(
                self.run["seed"],
                ctx.generation,
                ctx.attempt,
                f"{role}-repair" if follow_up else role,
            ),
        )
        self.position = (ctx.generation, ctx.attempt)  # where the ledger puts the call
        try:
            completion = provider.complete(request)
        except OffSchemaError as exc:  # answered, off its schema: an invalid answer
            if exc.completion is None:
                raise
            completion = exc.completion
        shown = "\n\n".join([prompt.system, prompt.user, *(m["content"] for m in follow_up or [])])
        if getattr(provider, "reads_state", False):  # what it acted on
            shown = f"{shown}\n\n{state_block.render(prompt.state)}"
        calls.append(
            {
                "attempt": ctx.attempt,
                "role": role,
                "prompt": shown,
                "output": completion.text,
                "created_at": utc_now(),
            }
        )
        return completion


def clamp_to_bounds(candidate: dict, schema: dict) -> tuple[dict, list[str]]:
    """``candidate`` with numbers just past their field's bounds (by at most CLAMP_SLACK of its
    range) set to the bound, and a note for each. Grammar-constrained servers enforce a
    schema's types but not its bounds, so a small model writes 0.508 for a field that ends at
    0.5; a number far outside (5 for a field from 0 to 1) is no such slip and stays invalid."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return candidate, []
    fixed, notes = dict(candidate), []
    for name, value in candidate.items():
        spec = properties.get(name)
        if (
            not isinstance(spec, dict)
            or spec.get("type") not in ("number", "integer")
            or isinstance(value, bool)
            or not isinstance(value, (int, float))
        ):
            continue
        low, high = spec.get("minimum"), spec.get("maximum")
        if not isinstance(low, (int, float)) or not isinstance(high, (int, float)):
            continue
        bound = low if value < low else high if value > high else None
        if bound is not None and abs(value - bound) <= CLAMP_SLACK * (high - low):
            fixed[name] = bound
            notes.append(f"{name} {value:g} clamped to {bound:g}")
    return fixed, notes


def strategy_candidates(completion: Completion) -> list[dict]:
    """Every JSON object in an answer, the endpoint's parsed JSON first; one that looks like a
    JSON Schema (an echoed interface) is none."""
    found = ([completion.parsed] if isinstance(completion.parsed, dict) else []) + json_objects(
        completion.text or ""
    )
    return [
        c for c in found if not ({"properties", "$schema"} & set(c) or c.get("type") == "object")
    ]


def answer_text(completion: Completion) -> str:
    """The answer as text, its parsed JSON when the endpoint returned some."""
    if isinstance(completion.parsed, dict):
        return json.dumps(completion.parsed)
    return completion.text
