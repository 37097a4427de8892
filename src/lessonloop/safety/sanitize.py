"""Strip characters that hide or reorder text; normalize newlines and Unicode (NFC).

Stored text is later shown to people and injected into prompts, so anything invisible that can
change how it reads is removed: C0/C1 controls (tab and newline stay), bidirectional controls
(the "Trojan Source" family), zero-width characters, and Unicode tag characters (U+E0000–E007F,
used to smuggle invisible instructions to models).
"""

from __future__ import annotations

__all__ = ["sanitize"]

_REMOVED = (
    [c for c in range(0x20) if c not in (0x09, 0x0A)]  # C0 except \t and \n
    + [0x7F]  # DEL
    + list(range(0x80, 0xA0))  # C1
    + list(range(0x202A, 0x202F))  # LRE RLE PDF LRO RLO
    + list(range(0x2066, 0x206A))  # LRI RLI FSI PDI
    + [0x200E, 0x200F, 0x061C]  # LRM RLM ALM
    + [0x200B, 0x200C, 0x200D, 0xFEFF, 0x2060]  # zero-width
    + list(range(0xE0000, 0xE0080))  # tag characters
)
_TABLE = dict.fromkeys(_REMOVED)
_AS_SPACES = dict.fromkeys(_REMOVED, " ")


def sanitize(text: str, as_spaces: bool = False) -> str:
    """``text`` without control, bidi, zero-width and tag characters; ``\\n`` newlines; NFC.
    (``as_spaces``: each such character becomes a space instead, for the redactor, which must
    also see ``x<U+202E>ghp_…`` as a word and a token.)"""
    if not isinstance(text, str):
        raise TypeError(f"sanitize() needs str, not {type(text).__name__}")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.translate(_AS_SPACES if as_spaces else _TABLE)
    if not text.isascii():
        import unicodedata  # (here: hooks import this package and never sanitize)

        text = unicodedata.normalize("NFC", text)
    return text
