"""Any OpenAI-compatible Chat Completions endpoint through the official SDK (the ``openai``
extra): OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter."""

from __future__ import annotations

import re

from ..config import STRUCTURED_MODES, Route, Settings
from ..errors import ProviderError
from .base import Request
from .hosted import Exchange, HostedProvider, import_sdk

# What each endpoint (base URL) accepted for JSON answers in this process: servers differ
# (vLLM and llama.cpp take a JSON Schema, some only JSON mode, some neither), and a refusal is
# learned once, for every role and model that uses the endpoint.
ACCEPTED: dict[str, str] = {}
_STRUCTURED_REFUSAL = re.compile(r"response_format|json_schema|json_object|schema|grammar", re.I)


class OpenAIProvider(HostedProvider):
    def __init__(self, route: Route, settings: Settings):
        super().__init__(route, settings)
        self.sdk = import_sdk("openai")
        self.client = self.sdk.OpenAI(
            api_key=self.api_key,
            base_url=route.base_url,
            max_retries=0,
            timeout=settings.timeout(None, route),
            **self.client_options(),
        )
        # Optional arguments an endpoint refused (400/422 naming them): left out from then on.
        # Reasoning models want max_completion_tokens and no temperature; some local servers
        # know no seed.
        self.refused: set[str] = set()
        self.configured_mode = settings.structured_output

    @property
    def structured_mode(self) -> str:
        """How this endpoint is asked for JSON: configured, learned, or its native schema."""
        return self.configured_mode or ACCEPTED.get(self.route.base_url or "", "json_schema")

    def _arguments(self, request: Request) -> dict:
        optional: dict[str, object] = {
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "seed": request.seed,
        }
        if request.json_schema is not None and self.structured_mode == "json_schema":
            optional["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": request.json_schema},
            }
        elif request.json_schema is not None and self.structured_mode == "json_object":
            optional["response_format"] = {"type": "json_object"}
        if "max_tokens" in self.refused:
            optional["max_completion_tokens"] = optional.pop("max_tokens")
        return {
            name: value
            for name, value in optional.items()
            if value is not None and name not in self.refused
        }

    def _step_down(self, exc: ProviderError) -> bool:
        """After a refusal of the structured-output request, use the next weaker mode (unless
        one is configured); False when there is none to fall back to."""
        if self.configured_mode or not _STRUCTURED_REFUSAL.search(exc.message):
            return False
        mode = self.structured_mode
        if mode == STRUCTURED_MODES[-1]:
            return False
        ACCEPTED[self.route.base_url or ""] = STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]
        return True

    def _exchange(self, request: Request, messages: list[dict]) -> Exchange:
        arguments = self._arguments(request)
        system = request.system
        if request.json_schema is not None and self.structured_mode != "json_schema":
            system = f"{system}\n\n{self.schema_instruction(request.json_schema)}"
        chat = [{"role": "system", "content": system}, *messages] if system else list(messages)
        try:
            response, retries = self.send(
                lambda: self.client.chat.completions.create(
                    model=self.route.model,
                    messages=chat,
                    timeout=self.timeout(request),
                    **arguments,
                )
            )
        except ProviderError as exc:
            if exc.status not in (400, 422):
                raise
            if "response_format" in arguments and self._step_down(exc):
                return self._exchange(request, messages)
            refused = [
                name for name in arguments if name != "response_format" and name in exc.message
            ]
            if not refused:
                raise
            self.refused.update(refused)
            return self._exchange(request, messages)
        choices = getattr(response, "choices", None)
        message = (
            getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        )
        if message is None:  # the SDK hands back what it could not parse
            raise ProviderError(f"{self.where} sent a malformed response: no choices")
        text = getattr(message, "content", None) or ""
        usage = getattr(response, "usage", None)
        return Exchange(
            text=text,
            model=getattr(response, "model", None),
            input_tokens=getattr(usage, "prompt_tokens", None),
            output_tokens=getattr(usage, "completion_tokens", None),
            retries=retries,
        )

    def _list_models(self):
        return self.client.models.list(timeout=5.0)
