"""Anthropic's Messages API through the official SDK (the ``anthropic`` extra)."""

from __future__ import annotations

import json

from ..config import Route, Settings
from ..errors import ProviderError
from .base import Request
from .hosted import Exchange, HostedProvider, import_sdk

TOOL = "respond"  # structured output: the model must call this tool with the answer as input


class AnthropicProvider(HostedProvider):
    def __init__(self, route: Route, settings: Settings):
        super().__init__(route, settings)
        self.sdk = import_sdk("anthropic")
        # Recent SDKs send the key only as a bearer token; servers built to the documented
        # wire format look for x-api-key, so it goes in both.
        self.client = self.sdk.Anthropic(
            api_key=self.api_key,
            base_url=route.base_url,
            max_retries=0,
            timeout=settings.timeout(None, route),
            default_headers={"x-api-key": self.api_key},
            **self.client_options(),
        )

    def _exchange(self, request: Request, messages: list[dict]) -> Exchange:
        # No temperature: recent SDKs and models no longer take sampling parameters here.
        arguments: dict[str, object] = dict(
            model=self.route.model,
            max_tokens=request.max_tokens,
            system=request.system,
            messages=messages,
            timeout=self.timeout(request),
        )
        if request.json_schema is not None:
            arguments["tools"] = [
                {
                    "name": TOOL,
                    "description": "Give the answer.",
                    "input_schema": request.json_schema,
                }
            ]
            arguments["tool_choice"] = {"type": "tool", "name": TOOL}
        message, retries = self.send(lambda: self.client.messages.create(**arguments))
        content = getattr(message, "content", None)
        if content is None and getattr(message, "usage", None) is not None:
            content = []  # an empty answer is still an answer
        if not isinstance(content, list):  # the SDK hands back what it could not parse
            raise ProviderError(f"{self.where} sent a malformed response: no message content")
        text = "".join(
            getattr(block, "text", "")
            for block in content
            if getattr(block, "type", None) == "text"
        )
        parsed = next(
            (block.input for block in content if getattr(block, "type", None) == "tool_use"), None
        )
        if parsed is not None and not text:
            text = json.dumps(parsed, sort_keys=True)
        usage = getattr(message, "usage", None)
        return Exchange(
            text=text,
            parsed=parsed,
            model=getattr(message, "model", None),
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            retries=retries,
        )

    def _list_models(self):
        return self.client.models.list(limit=20, timeout=5.0)
