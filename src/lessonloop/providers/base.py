"""The one provider protocol: a request in, a completion out.

Every role (competitor, translator, analyst, coach, curator, judge) calls a provider the same
way, whether it is the offline ``local`` agent, a ``scripted`` replay or a hosted model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass
class Request:
    role: str
    system: str
    messages: list[dict[str, str]]
    model: str | None = None
    temperature: float = 0.7
    max_tokens: int = 2048
    json_schema: dict | None = None
    timeout: float | None = None  # seconds; None: the role's configured or default timeout
    seed: int | None = None
    # The facts of the prompt as data, for an in-process agent (``local``); a model reads the
    # same facts in the messages and never sees this.
    state: dict | None = None

    @property
    def prompt(self) -> str:
        """The text of the last user message: what the role is asked now."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return message.get("content", "")
        return ""


@dataclass
class Completion:
    text: str
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: float = 0.0
    cost: float | None = None  # USD; None when the model's price is unknown
    parsed: Any = field(default=None)  # the validated JSON when the request gave a schema
    calls: int = 1  # requests the endpoint answered (a schema repair makes it two)
    retries: int = 0  # requests retried after a 429, 5xx, timeout or connection error


@runtime_checkable
class Provider(Protocol):
    """``reads_state``: the provider acts on ``Request.state`` rather than the words."""

    name: str

    def complete(self, request: Request) -> Completion: ...
