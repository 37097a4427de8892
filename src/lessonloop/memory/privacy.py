"""What the user keeps out of memory: ``<private>…</private>`` spans and ``LESSONLOOP_MEMORY=off``.

A private span is never captured nor memorized. Cutting the span out is not enough: the words
around it make a fragment that says something else ("Prefer naming services after" from
"Prefer naming services after <private>our customer Acme</private> in the API"), so the whole
sentence holding a span goes; an unclosed ``<private>`` hides everything after it, and a stray
``</private>`` hides its sentence (the opening tag was lost: the safe reading). ``echoes`` are
the spans' words as they stand in the session, so what the agent repeats of them (its answer,
a question, a command) goes the same way: the transcript reader drops it from every event, a
failed call's capture hook finds the spans in the transcript's prompts (``transcript_echoes``),
and memorize rewrites the session's captures without it (``scrub_captures``).

``LESSONLOOP_MEMORY=off`` (also ``0``, ``false``, ``no``) in a hook's environment turns capture
and memorize off for that session: the capture hooks write nothing and memorize stores nothing.

Standard library only, and light: every capture hook imports it, so its patterns are compiled
on first use (``lazyre`` would load its gates table, which a succeeding call never needs).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a hook's start-up)
if TYPE_CHECKING:
    import re
    from collections.abc import Iterable, Mapping


class _OnFirstUse:
    """``re.compile(pattern)``, compiled when first used (``re`` itself imported then: the
    prompt hook answers without it)."""

    def __init__(self, pattern: str | bytes):
        self._pattern = pattern
        self._compiled: re.Pattern | None = None

    def __getattr__(self, name: str):
        if self._compiled is None:
            import re

            self._compiled = re.compile(self._pattern)
        return getattr(self._compiled, name)


SWITCH = "LESSONLOOP_MEMORY"
OFF = ("off", "0", "false", "no")
ECHO_MIN = 3  # characters: a span shorter than this is no phrase to look for elsewhere
NAME_MIN = 3  # characters of a name inside a span looked for on its own
_PUNCTUATION = ".,;:!?\"'()[]{}<>"

_OPEN = _OnFirstUse(r"(?i)<private(?:\s[^>]*)?>")
_CLOSE = _OnFirstUse(r"(?i)</private\s*>")
_TAG = _OnFirstUse(r"(?i)</?private(?:\s[^>]*)?>")
# a sentence ends at . ! or ? (closing quotes or brackets after it) before whitespace, or at a
# line break; "e.g." and its like end nothing
_END = _OnFirstUse(r"[.!?][\"')\]]*(?=\s)|\n")
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "ms", "dr", "no", "approx")


def memory_off(environ: Mapping[str, str]) -> bool:
    """Whether ``LESSONLOOP_MEMORY`` turns capture and memorize off."""
    return environ.get(SWITCH, "").strip().lower() in OFF


def _is_end(text: str, match: re.Match) -> bool:
    import re

    if match.group() == "\n":
        return True
    word = re.search(r"[\w.]+$", text[: match.start()])
    return not (word and word.group().lower().rstrip(".") in _ABBREVIATIONS)


def _sentence_start(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` starts."""
    start = 0
    for match in _END.finditer(text, 0, at):
        if _is_end(text, match):
            start = match.end()
    return start


def _sentence_end(text: str, at: int) -> int:
    """Where the sentence holding position ``at`` ends (its closing mark included)."""
    for match in _END.finditer(text, at):
        if _is_end(text, match):
            return match.end()
    return len(text)


def _join(left: str, right: str) -> str:
    if left and right and not left[-1].isspace() and not right[0].isspace():
        return f"{left} {right}"
    return left + right


def _drop_sentences(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` without the sentences that hold any of ``spans`` (sorted, from the start)."""
    out, kept_from = [], 0
    for start, end in spans:
        opening = _sentence_start(text, start)
        standalone = _is_standalone(text, opening, start, end)
        start = max(opening, kept_from)
        if start >= len(text) or end < kept_from:
            continue
        out.append(text[kept_from:start])
        kept_from = max(kept_from, end if standalone else _sentence_end(text, max(end - 1, start)))
    out.append(text[kept_from:])
    result = ""
    for part in out:
        result = _join(result, part)
    return result.strip()


def _is_standalone(text: str, opening: int, start: int, end: int) -> bool:
    """Whether the span ``text[start:end]`` is whole sentences of its own: it opens a sentence
    and what it hides ends one ("Dashboards use Grafana. <private>The client is Acme.</private>
    I prefer dark mode." keeps the sentence after it)."""
    inner = _TAG.sub("", text[start:end]).rstrip(" \t\"')]")
    return not text[opening:start].strip() and inner.endswith((".", "!", "?"))


def _private_spans(text: str) -> list[tuple[int, int]]:
    """Each private span as (start, end), tags included; an unclosed one runs to the end."""
    spans, at = [], 0
    while True:
        opened = _OPEN.search(text, at)
        closed = _CLOSE.search(text, at)
        if closed and (opened is None or closed.start() < opened.start()):
            spans.append((closed.start(), closed.end()))  # a stray closing tag
            at = closed.end()
            continue
        if opened is None:
            return spans
        closed = _CLOSE.search(text, opened.end())
        end = closed.end() if closed else len(text)
        spans.append((opened.start(), end))
        if closed is None:
            return spans
        at = end


def strip(text: str, echoes: Iterable[str] = ()) -> str:
    """``text`` without its private sentences, nor those that repeat an ``echo`` (see the
    module docstring); the text itself when it has neither."""
    if not isinstance(text, str) or not text:
        return text
    spans = _private_spans(text) if "<" in text else []
    for echo in echoes:
        if echo:
            import re

            pattern = r"(?<!\w)" + r"\s+".join(map(re.escape, echo.split())) + r"(?!\w)"
            spans += [m.span() for m in re.finditer(pattern, text, re.I)]
    if not spans:
        return text
    return _drop_sentences(text, sorted(spans))


def untagged(text: str) -> str:
    """``text`` with its ``<private>`` tags (not what they hold) turned to spaces: what the
    session's secrets are learned from, so a value that ends where a span does is the value
    (only salted digests of it are kept)."""
    return _TAG.sub(" ", text) if isinstance(text, str) and "<" in text else text


def echoes(text: str) -> list[str]:
    """The words inside ``text``'s private spans, to find them where the session repeats them:
    each span whole, and each name in it (a capitalized word past its first, a word with a
    capital inside or a digit: "Acme" of "our customer Acme"), lowercased, one space between
    words."""
    if not isinstance(text, str) or "<" not in text:
        return []
    found: list[str] = []
    for start, end in _private_spans(text):
        words = _TAG.sub(" ", text[start:end]).split()
        names = [
            w.strip(_PUNCTUATION)
            for i, w in enumerate(words)
            if len(w.strip(_PUNCTUATION)) >= NAME_MIN and _is_name(w.strip(_PUNCTUATION), i)
        ]
        for echo in (" ".join(words).lower(), *(n.lower() for n in names)):
            if len(echo) >= ECHO_MIN and echo not in found:
                found.append(echo)
    return found


def _is_name(word: str, index: int) -> bool:
    return (
        any(c.isdigit() for c in word)
        or any(c.isupper() for c in word[1:])
        or (index > 0 and word[0].isupper())
    )


_IN_BYTES = _OnFirstUse(rb"(?i)<private[\s>]")


def transcript_echoes(path: str | None) -> list[str]:
    """``echoes`` of the user's prompts in a Claude Code transcript, for a capture hook that
    sees a command's output but not the prompts: the file is searched as bytes, mapped rather
    than read (50 MB in about 50 ms), and only its lines that hold a ``<private`` tag are read
    as events."""
    import mmap

    if not path:
        return []
    try:
        with open(path, "rb") as handle:
            data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, TypeError, ValueError):  # (an empty file cannot be mapped)
        return []
    found: list[str] = []
    with data:
        hit = _IN_BYTES.search(data)
        while hit:
            start = data.rfind(b"\n", 0, hit.start()) + 1
            end = data.find(b"\n", hit.end())
            end = len(data) if end < 0 else end
            for echo in echoes(_prompt_of(data[start:end])):
                if echo not in found:
                    found.append(echo)
            hit = _IN_BYTES.search(data, end)
    return found


def _prompt_of(line: bytes) -> str:
    """The user's words in one transcript line (a user event's text), or ""."""
    import json

    try:
        event = json.loads(line)
    except ValueError:
        return ""
    message = event.get("message") if isinstance(event, dict) else None
    if event.get("type") != "user" or not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(
        b["text"]
        for b in parts
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def scrub_captures(folder: str | os.PathLike, echoes: Iterable[str]) -> None:
    """Rewrite the session's captures (``*.jsonl``) without what repeats a private span: a
    failed command's output the capture hook took before memorize knew the session's private
    words."""
    from . import capture

    echoes = tuple(echoes)
    capture.rewrite_all(folder, lambda text: strip(text, echoes))


def strip_value(value: object, echoes: Iterable[str]) -> object:
    """A structure (a tool call's input) with every string ``strip``-ped of ``echoes`` and of
    private spans."""
    from . import capture

    echoes = tuple(echoes)
    return capture.clean_strings(value, lambda text: strip(text, echoes))
