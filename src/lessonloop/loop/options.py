"""A scenario run's options: what ``run`` may set, checked once, fixed when the run is
created (a resumed run keeps its own, except the budgets, which are limits and may be raised).
Apart from the engine so that the use cases can check a request without importing it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import UsageError
from .context import TOKEN_BUDGET


@dataclass
class RunOptions:
    """Settings fixed when a run is created; a resumed run keeps its own."""

    provider: str | None = None  # --provider; None: from config, environment or "local"
    model: str | None = None  # --model
    matches: int = 5
    seed: int = 0
    max_retries: int = 2
    min_delta: float = 0.002
    match_timeout: float = 10.0
    workers: int = 0
    knowledge: bool = True  # playbook, hints and dead ends in the context (--no-knowledge)
    carry_incumbent: bool = True  # start from the best known strategy (--no-incumbent)
    context_budget: int = TOKEN_BUDGET
    start_incumbent: dict | None = None  # fixed when the run is created, so resume agrees
    routes: dict | None = None  # role -> {provider, model, base_url}, resolved at creation
    max_calls: int | None = None  # budget: provider calls for the whole run (--max-calls)
    max_tokens: int | None = None  # budget: input + output tokens (--max-tokens)
    review: bool = False  # what the run learns is held as pending until approved (--review)
    # coach edits served only after winning matched trials (--context-trials): off, screen, full;
    # a new run without the flag gets screen with the offline competitor, else off (creation.py)
    context_trials: str = "off"

    def check(self) -> RunOptions:
        """Reject values no run can use, naming the option at fault (``UsageError.field``)."""
        if not 1 <= self.matches <= MAX_MATCHES:
            raise UsageError(f"must be between 1 and {MAX_MATCHES}", field="matches")
        if not 0 <= self.max_retries <= MAX_RETRIES:
            raise UsageError(f"must be between 0 and {MAX_RETRIES}", field="max_retries")
        if not (math.isfinite(self.min_delta) and 0 <= self.min_delta < 1):
            raise UsageError("must be a number in [0, 1)", field="min_delta")
        if not (math.isfinite(self.match_timeout) and 0 < self.match_timeout <= MAX_TIMEOUT):
            raise UsageError(
                f"must be between 0 and {MAX_TIMEOUT:g} seconds", field="match_timeout"
            )
        if not 0 <= self.workers <= MAX_WORKERS:
            raise UsageError(f"must be between 0 (automatic) and {MAX_WORKERS}", field="workers")
        if not 0 <= self.seed <= MAX_SEED:
            raise UsageError("must be a non-negative 64-bit integer", field="seed")
        if not 200 <= self.context_budget <= 1_000_000:
            raise UsageError("must be between 200 and 1000000 tokens", field="context_budget")
        if self.context_trials not in CONTEXT_TRIALS:
            raise UsageError(f"must be one of {', '.join(CONTEXT_TRIALS)}", field="context_trials")
        for name in BUDGETS:
            value = getattr(self, name)
            if value is not None and not 1 <= value <= 10**12:
                raise UsageError("must be a positive integer", field=name)
        return self


MAX_ITERATIONS = 100_000
MAX_MATCHES = 1_000
MAX_RETRIES = 20
MAX_TIMEOUT = 3600.0
MAX_WORKERS = 64
MAX_SEED = 2**63 - 1  # a seed is a non-negative 64-bit integer
FLAGS = {"carry_incumbent": "--no-incumbent/--fresh", "knowledge": "--no-knowledge/--fresh"}
CONTEXT_TRIALS = ("off", "screen", "full")  # --context-trials (loop/trials.py: OFF, SCREEN, FULL)
BUDGETS = ("max_calls", "max_tokens")  # limits, not semantics: a resumed run may raise them


def check_iterations(iterations: int) -> None:
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise UsageError(f"must be between 1 and {MAX_ITERATIONS}", field="iterations")
