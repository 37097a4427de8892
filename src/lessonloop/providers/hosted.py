"""What every provider behind an HTTP endpoint shares: a key, retries, JSON-schema answers
validated (with one repair round), usage and cost on the completion.

Subclasses say how one exchange goes over their wire format (``_exchange``) and how to ask
the endpoint whether it answers (``check``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from types import ModuleType

from ..config import Route, Settings, is_loopback
from ..errors import OffSchemaError, ProviderError, UsageError
from ..json_blocks import json_objects
from ..scenarios.base import schema_problems
from . import catalog, retry
from .base import Completion, Request


@dataclass
class Exchange:
    """One answered request: what came back and what it used."""

    text: str
    parsed: object = None  # the JSON the endpoint returned natively (tool input, JSON mode)
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    retries: int = 0


def import_sdk(name: str) -> ModuleType:
    """The SDK module, or a one-line install hint when its extra is missing."""
    try:
        return __import__(name)
    except ImportError:
        raise UsageError(
            f"the {name} provider needs its SDK: pip install 'lessonloop[{name}]'"
        ) from None


def _add(first: int | None, second: int | None) -> int | None:
    return None if first is None and second is None else (first or 0) + (second or 0)


class HostedProvider:
    """A provider that reaches a model over HTTP through an official SDK."""

    name = "hosted"
    remote = True  # its calls reach an endpoint (and may cost money): recorded as they return
    sdk: ModuleType  # the official SDK (openai, anthropic): the subclass imports it (import_sdk)

    def __init__(self, route: Route, settings: Settings):
        if not route.model:
            role_hint = "--model, LESSONLOOP_MODEL or LESSONLOOP_<ROLE>_MODEL"
            raise ProviderError(f"provider {route.provider} needs a model name: set {role_hint}")
        settings.check_reachable(route)
        self.route = route
        self.settings = settings
        self.name = route.provider
        key, source = settings.api_key(route)
        variable = catalog.key_variable(route.kind)
        self.key_hint = source or "LESSONLOOP_API_KEY" + (f" or {variable}" if variable else "")
        if key is None:
            if variable and not is_loopback(route.base_url or ""):
                raise ProviderError(
                    f"provider {route.provider} needs an API key: set {self.key_hint}"
                )
            key = "not-needed"  # local servers ignore it; the SDKs insist on one
        self.api_key = key
        self.where = f"{route.provider} at {route.base_url}"
        self.loopback = is_loopback(route.base_url or "")

    def client_options(self) -> dict:
        """Offline, the client must not leave loopback: no proxy from the environment, no
        redirect to another host."""
        if not self.settings.offline:
            return {}
        return {"http_client": self.sdk.DefaultHttpxClient(trust_env=False, follow_redirects=False)}

    def timeout(self, request: Request) -> float:
        return request.timeout or self.settings.timeout(request.role, self.route)

    def send(self, send, max_retries: int | None = None, wait_for_server: bool = True):
        """``send()`` under the one retry policy; the key is scrubbed from any message. A
        loopback server that is down is waited for (``LESSONLOOP_CONNECT_WAIT``)."""
        wait = self.settings.connect_wait if wait_for_server and self.loopback else 0.0
        return retry.call(
            send,
            sdk=self.sdk,
            where=self.where,
            key_hint=self.key_hint,
            model=self.route.model,
            secret=self.api_key,
            connect_wait=wait,
            max_retries=self.settings.max_retries if max_retries is None else max_retries,
        )

    # subclasses ---------------------------------------------------------------------------
    def _exchange(self, request: Request, messages: list[dict]) -> Exchange:
        raise NotImplementedError

    def _list_models(self):
        raise NotImplementedError

    def check(self) -> str:
        """Whether the endpoint answers (with its model list, when it has one); a key it
        rejects is a failure, an endpoint without a model list is not."""
        try:
            page, _ = self.send(self._list_models, max_retries=0, wait_for_server=False)
        except ProviderError as exc:
            if exc.status is not None and exc.status not in (401, 403):
                return f"answers (no model list: {exc.status})"
            raise
        return f"answers; {len(getattr(page, 'data', None) or [])} models listed"

    # the protocol -------------------------------------------------------------------------
    def complete(self, request: Request) -> Completion:
        """One answer; with a schema, validated and repaired once. An answer that still does
        not conform raises OffSchemaError carrying the completion, so its calls are counted."""
        started = time.perf_counter()
        reply = self._exchange(request, request.messages)
        replies = [reply]
        parsed = None
        if request.json_schema is not None:
            parsed, problems = self._conforming(reply, request.json_schema)
            if problems:  # one repair round, then a clear error
                repair = [
                    *request.messages,
                    {"role": "assistant", "content": reply.text},
                    {
                        "role": "user",
                        "content": (
                            "That reply does not match the required JSON Schema: "
                            + "; ".join(problems[:5])
                            + ". Reply again with only the corrected JSON object."
                        ),
                    },
                ]
                try:
                    reply = self._exchange(request, repair)
                except ProviderError as exc:  # the first answer was given: it is counted
                    exc.completion = self._completion(replies, None, started)
                    raise
                replies.append(reply)
                parsed, problems = self._conforming(reply, request.json_schema)
                if problems:
                    raise OffSchemaError(
                        f"{self.where} did not answer JSON matching the schema after one repair "
                        f"attempt: {problems[0]}",
                        self._completion(replies, None, started),
                    )
        return self._completion(replies, parsed, started)

    def _completion(self, replies: list[Exchange], parsed: object, started: float) -> Completion:
        """The last reply, with the calls, tokens and cost of all of them."""
        input_tokens = output_tokens = None
        for reply in replies:
            input_tokens = _add(input_tokens, reply.input_tokens)
            output_tokens = _add(output_tokens, reply.output_tokens)
        model = replies[-1].model or self.route.model
        cost = self.settings.cost((model, self.route.model), input_tokens, output_tokens)
        if cost is None and self.loopback and self.settings.price(model, self.route.model) is None:
            cost = 0.0  # a server on this machine costs nothing unless a price says otherwise
        return Completion(
            text=replies[-1].text,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            latency_ms=(time.perf_counter() - started) * 1000,
            cost=cost,
            parsed=parsed,
            calls=len(replies),
            retries=sum(reply.retries for reply in replies),
        )

    @staticmethod
    def _conforming(reply: Exchange, schema: dict) -> tuple[object, list[str]]:
        """The reply's JSON and what is wrong with it against ``schema`` (empty when fine)."""
        value = reply.parsed
        if value is None:
            try:
                value = json.loads(reply.text)
            except (json.JSONDecodeError, TypeError):
                found = json_objects(reply.text or "")
                if not found:
                    return None, ["the reply holds no JSON object"]
                value = found[0]
        return value, [str(p) for p in schema_problems(value, schema, "reply")]

    @staticmethod
    def schema_instruction(schema: dict) -> str:
        """For endpoints without native structured output: the schema, in words."""
        return (
            "Reply with only one JSON object, no prose, that is valid against this JSON "
            f"Schema:\n{json.dumps(schema, sort_keys=True)}"
        )
