"""Any OpenAI-compatible Chat Completions endpoint through the official SDK (the ``openai``
extra): OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter."""

from __future__ import annotations

from ..config import Route, Settings
from ..errors import ProviderError
from .base import Request
from .hosted import Exchange, HostedProvider, import_sdk


class OpenAIProvider(HostedProvider):
    def __init__(self, route: Route, settings: Settings):
        super().__init__(route, settings)
        self.sdk = import_sdk("openai")
        self.client = self.sdk.OpenAI(api_key=self.api_key, base_url=route.base_url,
                                      max_retries=0, timeout=settings.timeout,
                                      **self.client_options())
        # Optional arguments an endpoint refused (400/422 naming them): left out from then on.
        # Reasoning models want max_completion_tokens and no temperature; some local servers
        # know neither seed nor response_format (the schema is then said in words).
        self.refused: set[str] = set()

    def _arguments(self, request: Request) -> dict:
        optional = {"max_tokens": request.max_tokens, "temperature": request.temperature,
                    "seed": request.seed}
        if request.json_schema is not None:
            optional["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "response", "schema": request.json_schema}}
        if "max_tokens" in self.refused:
            optional["max_completion_tokens"] = optional.pop("max_tokens")
        return {name: value for name, value in optional.items()
                if value is not None and name not in self.refused}

    def _exchange(self, request: Request, messages: list[dict]) -> Exchange:
        arguments = self._arguments(request)
        system = request.system
        if request.json_schema is not None and "response_format" not in arguments:
            system = f"{system}\n\n{self.schema_instruction(request.json_schema)}"
        chat = [{"role": "system", "content": system}, *messages] if system else list(messages)
        try:
            response, retries = self.send(lambda: self.client.chat.completions.create(
                model=self.route.model, messages=chat, timeout=self.timeout(request),
                **arguments))
        except ProviderError as exc:
            refused = [name for name in arguments if name in exc.message]
            if exc.status not in (400, 422) or not refused:
                raise
            self.refused.update(refused)
            return self._exchange(request, messages)
        choices = getattr(response, "choices", None)
        message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        if message is None:  # the SDK hands back what it could not parse
            raise ProviderError(f"{self.where} sent a malformed response: no choices")
        text = getattr(message, "content", None) or ""
        usage = getattr(response, "usage", None)
        return Exchange(text=text, model=getattr(response, "model", None),
                        input_tokens=getattr(usage, "prompt_tokens", None),
                        output_tokens=getattr(usage, "completion_tokens", None), retries=retries)

    def _list_models(self):
        return self.client.models.list(timeout=5.0)
