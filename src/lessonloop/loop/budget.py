"""Call and token budgets (``--max-calls``, ``--max-tokens``) for ``run``, ``improve`` and
``solve``: checked before every provider call; a spent one stops the work cleanly.

``Metered`` wraps a provider so every answered call is checked against the budget first and put
in the usage ledger the moment it returns — an answer that then failed its schema included
(a ``ProviderError`` carries what was answered before it failed; that is recorded and the
error re-raised).
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import LessonloopError, ProviderError, UsageError
from ..providers.base import Completion, Request
from .context import estimate_tokens

LIMIT_MAX = 10**12


class BudgetSpent(LessonloopError):
    """A call or token budget is used up: the work stops cleanly as ``stopped``."""


def check_limits(max_calls: int | None, max_tokens: int | None) -> None:
    """Refuse a budget no command can use, naming the flag."""
    for flag, value in (("--max-calls", max_calls), ("--max-tokens", max_tokens)):
        if value is not None and not 1 <= value <= LIMIT_MAX:
            raise UsageError(f"{flag} must be a positive integer")


class Budget:
    """What may still be spent: ``spent`` starts from what the work already used (a resumed
    run's ledger); ``hint(flag)`` says how to continue once a limit is reached."""

    def __init__(
        self,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        spent: dict | None = None,
        hint: Callable[[str], str] = lambda flag: "",
    ):
        self.limits = {"calls": max_calls, "tokens": max_tokens}
        self.spent = {"calls": 0, "tokens": 0, **(spent or {})}
        self.hint = hint

    def check(self) -> None:
        for what, limit in self.limits.items():
            if limit is not None and self.spent[what] >= limit:
                hint = self.hint(f"--max-{what}")
                raise BudgetSpent(
                    f"{what} budget spent ({self.spent[what]} of {limit} {what})"
                    + (f"; {hint}" if hint else "")
                )

    def add(self, completion: Completion, request: Request) -> None:
        """Count an answered call; an endpoint that reports no usage is estimated, so a token
        budget still holds."""
        self.spent["calls"] += completion.calls
        prompt = request.system + "".join(m.get("content", "") for m in request.messages)
        self.spent["tokens"] += (
            completion.input_tokens
            if completion.input_tokens is not None
            else estimate_tokens(prompt)
        ) + (
            completion.output_tokens
            if completion.output_tokens is not None
            else estimate_tokens(completion.text or "")
        )

    def remaining(self) -> dict[str, int | None]:
        """The limits less what is spent (None: no limit), for work that continues elsewhere."""
        return {
            what: None if limit is None else max(0, limit - self.spent[what])
            for what, limit in self.limits.items()
        }


class Metered:
    """``provider`` behind the budget, with every answered call recorded (``record``)."""

    def __init__(self, provider, budget: Budget, record: Callable[[Completion], None]):
        self.provider, self.budget, self.record = provider, budget, record
        self.name = provider.name
        self.remote = getattr(provider, "remote", False)
        self.reads_state = getattr(provider, "reads_state", False)

    def complete(self, request: Request) -> Completion:
        self.budget.check()
        try:
            completion = self.provider.complete(request)
        except ProviderError as exc:  # answered (and maybe paid for), then failed
            if exc.completion is not None:
                self._count(exc.completion, request)
            raise
        self._count(completion, request)
        return completion

    def _count(self, completion: Completion, request: Request) -> None:
        self.record(completion)
        self.budget.add(completion, request)
