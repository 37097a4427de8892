"""One registry of providers, chosen by a spec string such as ``local`` or ``scripted:FILE``."""

from __future__ import annotations

import os

from ..errors import UsageError
from .base import Provider

AVAILABLE = ("local", "scripted")
PLANNED = ("anthropic", "openai", "ollama", "vllm")


def get_provider(spec: str) -> Provider:
    """Build the provider named by ``spec``; unknown names get a one-line list of valid ones."""
    name, _, argument = spec.partition(":")
    name = name.strip().lower()
    if name == "local":
        from .local import LocalProvider

        return LocalProvider()
    if name == "scripted":
        from .scripted import ScriptedProvider

        path = argument or os.environ.get("LESSONLOOP_SCRIPT", "")
        if not path:
            raise UsageError(
                "the scripted provider needs a response file: --provider scripted:FILE.json "
                "(or set LESSONLOOP_SCRIPT)"
            )
        return ScriptedProvider.from_file(path)
    if name in PLANNED:
        raise UsageError(
            f"provider {name!r} is not available in this version yet; "
            f"use one of: {', '.join(AVAILABLE)}"
        )
    raise UsageError(f"unknown provider {spec!r}; valid providers: {', '.join(AVAILABLE)}")
