"""Code strategies: a strategy given as Python source, ``{"__code__": "..."}``, for scenarios
that accept it (``accepts_code = True``).

The source never runs in lessonloop's own processes. For each match it runs in the sandbox
(its own process group, limits, scrubbed environment, a deadline), where its
``strategy(context)`` function — or a ``STRATEGY`` dict — turns the match's context (seed and
strategy schema) into the scenario's ordinary parameters, which are validated and played.
"""

from __future__ import annotations

import json
import sys

from ..errors import LessonloopError
from ..safety import sandbox

FIELD = "__code__"
MAX_SOURCE = 64_000
LIMITS = sandbox.Limits(timeout=5.0, memory_mb=512, max_processes=8, file_mb=8, output_bytes=16_000)

_RUNNER = """\
import json, runpy, sys
context = json.load(sys.stdin)
namespace = runpy.run_path("strategy.py", run_name="strategy")
make = namespace.get("strategy")
value = make(context) if callable(make) else namespace.get("STRATEGY")
if not isinstance(value, dict):
    sys.exit("the code must define strategy(context) returning a dict, or a STRATEGY dict")
print(json.dumps(value))
"""


class CodeStrategyError(LessonloopError):
    """The code failed, overran its limits or returned no valid parameters."""


class ScenarioBroken(LessonloopError):
    """The scenario's own ``validate()`` raised, or answered something other than a list of
    problems: the scenario is at fault, not the strategy, so the run (or ``evaluate``) fails
    with the method named, as when every ``play()`` fails, instead of rejecting every
    strategy and "completing" with nothing played."""


def checked_validate(scenario, strategy: dict) -> list[str]:
    """The scenario's problems with ``strategy`` (empty when valid), or ScenarioBroken.

    A ``validate()`` that raises on a strategy off ``strategy_schema`` (a model's string
    where a number belongs) only shows the strategy is wrong: it gets the schema's words.
    Raising on a strategy that matches the schema, or answering anything but a list, is
    the scenario's fault."""
    where = (
        f"scenario {getattr(scenario, 'name', '?')!r} is broken: "
        f"{type(scenario).__name__}.validate()"
    )
    try:
        found = scenario.validate(strategy)
    except Exception as exc:  # noqa: BLE001 - any failure of plugin code is the plugin's
        off_schema = _schema_problems(scenario, strategy)
        if off_schema:
            return off_schema
        raise ScenarioBroken(f"{where} raised {exc.__class__.__name__}: {exc}") from None
    if not isinstance(found, (list, tuple)):
        raise ScenarioBroken(
            f"{where} returned {type(found).__name__}, expected a list of "
            "problems (empty when the strategy is valid)"
        )
    return [str(p) for p in found]


def _schema_problems(scenario, strategy: dict) -> list[str]:
    from .base import schema_problems

    try:
        return schema_problems(strategy, scenario.strategy_schema)
    except Exception:  # noqa: BLE001 - a schema jsonschema refuses says nothing either way
        return []


def is_code(strategy: object) -> bool:
    return isinstance(strategy, dict) and FIELD in strategy


def problems(scenario, strategy: dict) -> list[str]:
    """What is wrong with ``strategy`` for ``scenario``: the shape of a code strategy (its
    parameters are checked per match), or the scenario's own validation (ScenarioBroken when
    that validation itself fails)."""
    if not is_code(strategy):
        return checked_validate(scenario, strategy)
    if not getattr(scenario, "accepts_code", False):
        return [f"scenario {scenario.name!r} does not accept code strategies ({FIELD})"]
    source = strategy[FIELD]
    if set(strategy) != {FIELD} or not isinstance(source, str) or not source.strip():
        return [f'a code strategy is {{"{FIELD}": "<python source>"}} and nothing else']
    if len(source) > MAX_SOURCE:
        return [f"the code is {len(source)} characters; at most {MAX_SOURCE}"]
    return []


def parameters(scenario, strategy: dict, seed: int, limits: sandbox.Limits = LIMITS) -> dict:
    """Run the code for one match in the sandbox and return the parameters it chose."""
    context = {"seed": seed, "strategy_schema": scenario.strategy_schema}
    outcome = sandbox.run(
        [sys.executable, "-I", "-c", _RUNNER],
        stdin=json.dumps(context).encode(),
        files={"strategy.py": strategy[FIELD].encode()},
        limits=limits,
    )
    if not outcome.passed:
        how = outcome.killed or f"exit code {outcome.exit_code}"
        detail = (outcome.stderr.strip().splitlines() or [""])[-1][:300]
        raise CodeStrategyError(f"code strategy stopped ({how}){': ' + detail if detail else ''}")
    lines = outcome.stdout.strip().splitlines()
    try:
        chosen = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        chosen = None
    if not isinstance(chosen, dict):
        raise CodeStrategyError("code strategy printed no parameters (a JSON object)")
    found = checked_validate(scenario, chosen)
    if found:
        raise CodeStrategyError("code strategy chose invalid parameters: " + "; ".join(found))
    return chosen
