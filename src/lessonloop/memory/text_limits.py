"""What every signal detector bounds its text with: the redactor (imported on first use), caps,
and the window a huge output is scanned in.

Hooks call the detectors on every tool call and every prompt: most tool calls (the ones that
succeed) have nothing to redact, and their hook process need not load the redactor. Every
stored string is redacted before it is capped (``redact_and_cap``): a secret is a marker before
it can be cut.
"""

from __future__ import annotations

__all__ = ["cap_text", "redact", "redact_and_cap", "scan_window", "text_or_empty"]


def redact(text: str) -> str:
    """The one redactor, imported on first use: most tool calls (the ones that succeed) have
    nothing to redact, and their hook process need not load it."""
    from ..safety.redact import redact as redact_text

    return redact_text(text)


_SCAN_HEAD = 32_000  # a huge output is scanned on its first and last characters only
_SCAN_TAIL = 96_000


def cap_text(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def redact_and_cap(text: str, limit: int) -> str:
    """Redact first, then cap: a secret is a marker before it can be cut."""
    return cap_text(redact(text), limit)


def text_or_empty(value: object) -> str:
    return value if isinstance(value, str) else ""


def scan_window(text: str) -> str:
    """Head and tail of a huge text: errors live at the start (compilers) or the end."""
    if len(text) <= _SCAN_HEAD + _SCAN_TAIL:
        return text
    return text[:_SCAN_HEAD] + "\n" + text[-_SCAN_TAIL:]
