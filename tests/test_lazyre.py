"""Lazily compiled patterns and their gates: a gate never turns a match into no match.

The gates of the signal detector's patterns are checked against the compiled patterns on every
string the memory tests use (prompts, tool outputs, transcript lines), in several cases, with
the non-ASCII letters that match ASCII ones under IGNORECASE, and at several start positions.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from lessonloop import lazyre
from lessonloop.lazyre import LazyPattern, derive_gate, lazy

TESTS = Path(__file__).parent


def _corpus() -> list[str]:
    """Every string constant of the memory tests and every string in the transcript fixtures,
    with their sentences and lines on their own."""
    texts: set[str] = set()
    for path in sorted((TESTS / "memory").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.add(node.value)

    def strings(value) -> None:
        if isinstance(value, str):
            texts.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                strings(item)
        elif isinstance(value, list):
            for item in value:
                strings(item)

    for path in sorted((TESTS / "fixtures" / "claude-code").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                strings(json.loads(line))
            except ValueError:
                pass
    pieces = set()
    for text in texts:
        for line in text.splitlines():
            pieces.add(line.strip())
            pieces.update(s.strip() for s in re.split(r"(?<=[.!?,;:])\s+", line))
    return sorted(t for t in texts | pieces | set(EXTRA) if t)


# what the memory tests' strings hold no match for
EXTRA = (
    "npm error code ENOENT",
    "Killed",
    "CRITICAL: disk full",
    "[CRITICAL] out of memory",
    "the worker exited with code 3",
    "use pnpm, from now on",
    "we use pnpm - decided",
    "please avoid global state",
    "the repo link is \ue0000\ue001",
)


CORPUS = _corpus()  # (EXTRA is read when it is called)
GATED = list(  # (a pattern another module imports is listed once)
    {
        id(p): p
        for name in lazyre.GATED_MODULES
        for p in lazyre.patterns_of(importlib.import_module(name))
        if p._gate is not None
    }.values()
)


def _variants(text: str) -> list[str]:
    # (İ ı ſ K match i, I, s, k under IGNORECASE: a text holding one skips the gate)
    return [
        text,
        text.upper(),
        text.title(),
        text.swapcase(),
        text.replace("s", "\u017f").replace("k", "\u212a").replace("i", "\u0131"),
    ]


def test_the_corpus_is_big_enough_to_mean_something():
    assert len(CORPUS) > 1500 and len(GATED) > 80


def test_the_gates_table_is_up_to_date():
    # (a pattern edited since the table was written has no gate: correct, but slower)
    assert lazyre.gates_table() == lazyre.GATES, "run: python -m lessonloop.lazyre"


@pytest.mark.parametrize("pattern", GATED, ids=lambda p: p.pattern[:40])
def test_a_gate_never_hides_a_match(pattern):
    compiled = re.compile(pattern.pattern, pattern._flags)
    gated = LazyPattern(pattern.pattern, pattern._flags)
    assert gated._gate == pattern._gate
    matched = 0
    for text in CORPUS:
        for variant in _variants(text):
            gated._calls = -(10**9)  # (never compiled on the way)
            if not compiled.search(variant):
                # (nor can a match or fullmatch from any pos: search tries every start, each
                # with the whole string around it, as they do)
                continue
            matched += 1
            assert gated._may_match(variant), variant
            for pos in {0, 1, variant.find(" ") + 1, len(variant) // 2}:
                if compiled.match(variant, pos):
                    assert gated._may_match(variant, pos, None, anchored=True), (variant, pos)
                if compiled.fullmatch(variant, pos):
                    assert gated._may_match(variant, pos, None, anchored=True), (variant, pos)
    assert matched, "nothing in the corpus matches: add a string that does to EXTRA"


@pytest.mark.parametrize(
    "pattern, flags, text, expected",
    [
        (r"^(?:please\s+)?(?:don't|do not)\s+(\w+)", re.I, "Please DON'T push", True),
        (r"^(?:please\s+)?(?:don't|do not)\s+(\w+)", re.I, "do not push", True),
        (r"^(?:please\s+)?(?:don't|do not)\s+(\w+)", re.I, "we do not push", False),
        (r"(.+?)\s+still\s+fails", re.I, "the build STILL fails", True),
        (r"(.+?)\s+still\s+fails", re.I, "the build fails", False),
        (r"\bfix\w*|\bbugs?\b", 0, "a Bug", False),  # case-sensitive: no match
        (r"\bfix\w*|\bbugs?\b", re.I, "a Bug", True),
        (r"^ok\b", re.I, "o\u212a then", True),  # Kelvin sign: K under IGNORECASE
        (r"^yes\b", re.I, "ye\u017f", True),  # long s: s under IGNORECASE
        (r"^x*", 0, "anything", True),  # matches the empty string
        (r"^(?:ok|yes)\b", re.I, "well, ok", False),  # ^: at the start only
        (r"^(?:ok|yes)\b", re.I, "Yes, ok", True),
        (r"(?m)^(?:ok|yes)\b", 0, "well\nok then", True),  # ^ after a newline too
        (r"[\\/]tmp\b", 0, "C:\\tmp\\x", True),
        (r"[\\/]tmp\b", 0, "tmp", False),
    ],
)
def test_gated_calls_give_what_the_compiled_pattern_gives(pattern, flags, text, expected):
    compiled = re.compile(pattern, flags)
    assert (compiled.search(text) is not None) is expected
    gate = derive_gate(pattern, flags)
    for method, args in [
        ("match", (text,)),
        ("search", (text,)),
        ("fullmatch", (text,)),
        ("findall", (text,)),
        ("sub", ("#", text)),
        ("subn", ("#", text)),
        ("split", (text,)),
        ("match", (text, 3)),
        ("match", (text, -2)),
        ("search", (text, 0, 2)),
    ]:
        lazyre.GATES[pattern, int(flags)] = gate
        try:
            gated = lazy(pattern, flags)
        finally:
            del lazyre.GATES[pattern, int(flags)]
        assert gated._gate == gate
        got, want = getattr(gated, method)(*args), getattr(compiled, method)(*args)
        if method in ("match", "search", "fullmatch"):
            assert (got is None) is (want is None) and (got is None or got.span() == want.span())
        else:
            assert got == want
    list(gated.finditer(text))


def test_derived_gates():
    # (a third item: every match starts where the string starts)
    assert derive_gate(r"^(?:please\s+)?(don't|do not|never)\s+(\w+)", re.I) == (
        ("do not", "don't", "never", "please"),
        ("do not", "don't", "never"),
        True,
    )
    assert derive_gate(r"(?m)^(?:ok|okay)\b", re.I) == (("ok",), ("ok",))
    assert derive_gate(r"(.+?)\s+still\s+(?:does not|doesn't)\s+work", re.I) == (None, ("still",))
    assert derive_gate(r"\bok\b|\Ayes", re.I) == (("ok", "yes"), ("ok", "yes"))
    assert derive_gate(r"[\\/]x+[a-c]") == (("/x", "\\x"), ("x",))
    assert derive_gate(r"[^/]x") == (None, ("x",))
    assert derive_gate(r"[\w'-]+") is None
    assert derive_gate(r"(?:abc)?x*") is None  # matches the empty string
    assert derive_gate(r"\u2014 decided") == (None, (" decided",))  # (no non-ASCII literal)


def test_a_lazy_pattern_compiles_once_on_first_use_and_then_is_the_compiled_one():
    p = lazy(r"a(b+)c")
    assert p.pattern == "a(b+)c"
    assert p.search("xxabbc").group(1) == "bb"
    assert p.match.__self__ is re.compile(r"a(b+)c")  # its methods, bound
    assert p.groups == 1 and p.sub("-", "abc") == "-"
    with pytest.raises(AttributeError):
        p.no_such_attribute  # noqa: B018
