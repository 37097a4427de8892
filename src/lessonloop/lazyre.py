"""Regular expressions compiled on first use, and only when they may match.

``re.compile`` runs in Python (``re._parser`` and ``re._compiler``): the redactor's and the
signal detector's few hundred patterns cost a hook process 30 ms when compiled at import. A
compiled pattern cannot be kept between processes, so a hook must compile less:

- ``lazy(pattern, flags)`` stands for ``re.compile(pattern, flags)`` and compiles at the first
  use of one of its methods; it then keeps the compiled pattern's bound methods in its slots,
  so every later call costs what a call of a compiled pattern costs. It is no ``re.Pattern``
  (``isinstance`` tells them apart) and compares and hashes by identity.
- A pattern with a *gate* (``regex_gates.GATES``, written by ``python -m lessonloop.lazyre``
  from the patterns of ``GATED_MODULES``) is not compiled for a text it cannot match: the gate
  holds the literals every match starts with (checked by ``match``/``fullmatch``) and the
  literals one of which every match contains (checked by every method), lowered, and a text
  holding none of them gets the no-match answer (None, ``[]``, the text unchanged) at once.
  The prompt detector runs some 70 patterns on a sentence, most of them anchored on words
  ("let's ...", "from now on ..."), and most sentences start with none of those words.

A gate is exact, never a guess: it is derived from the parsed pattern (``derive_gate``) and
looked up by the pattern's exact text and flags, so an edited pattern simply has no gate until
the table is written again (``tests/test_lazyre.py`` says when it is stale). Text is compared
lowered (a case-sensitive pattern's literals are a fortiori present lowered); a text with one
of the four non-ASCII characters that match an ASCII letter under ``re.IGNORECASE`` (or change
length when lowered) skips the gate. After ``GATED_CALLS`` calls a pattern is compiled anyway,
so a long-running process (memorize over a transcript) pays for the gate a bounded number of
times. Standard library only: the hooks import this.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from typing import Any

# what a compiled pattern gives and a LazyPattern forwards (set in its slots at the first use)
_FORWARDED = (
    "match",
    "search",
    "fullmatch",
    "finditer",
    "findall",
    "sub",
    "subn",
    "split",
    "flags",
    "groups",
    "groupindex",
)
# the modules whose patterns get gates (python -m lessonloop.lazyre writes them)
GATED_MODULES = (
    "lessonloop.memory.commands",
    "lessonloop.memory.error_lines",
    "lessonloop.memory.tool_errors",
    "lessonloop.memory.phrasing",
    "lessonloop.memory.lesson_forms",
    "lessonloop.memory.feedback_rules",
    "lessonloop.memory.feedback",
    "lessonloop.memory.prompt_check",
)
GATED_CALLS = 32  # calls through the gate before a pattern is compiled anyway
PREFIX_MAX = 12  # characters of a gate's prefixes
PREFIXES_MAX = 64  # more alternatives than this: no prefix gate
CONTAINS_MAX = 16  # more alternatives than this: no contains gate
CHARSET_MAX = 8  # a character set of more characters is no literal of a gate
# characters that match an ASCII letter under IGNORECASE though not ASCII (İ ı ſ K), the only
# ones that change length when lowered (İ) or lower into ASCII (K): a text with one skips gates
_FOLDS_TO_ASCII = "\u0130\u0131\u017f\u212a"

try:
    from .regex_gates import GATES
except ImportError:  # (not written yet: no pattern has a gate)
    GATES = {}


class LazyPattern:
    """``re.compile(pattern, flags)`` deferred to the first use of its methods or attributes
    (``pattern`` is known without compiling), and skipped while its gate says no match."""

    __slots__ = ("pattern", "_flags", "_gate", "_calls", *_FORWARDED)
    pattern: Any  # the str (or bytes) it was made from: unlike re.Pattern this class is not
    _flags: int  # generic (importing typing costs a hook ~3 ms), so the checker cannot tell which
    _gate: tuple[Any, ...] | None  # (prefixes, contains[, True]): see derive_gate
    _calls: int

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        # (the table's keys are str patterns: a bytes pattern is none of them and gets None)
        self._gate = GATES.get((pattern, flags)) if GATES else None  # type: ignore[arg-type]
        self._calls = 0

    def __getattr__(self, name: str):
        # (called only for a slot not set yet: before the pattern is compiled)
        if name not in _FORWARDED:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        if self._gate is not None and name in _GATED:
            return _GATED[name].__get__(self)
        return self._compile(name)

    def _compile(self, name: str):
        compiled = re.compile(self.pattern, self._flags)
        for attr in _FORWARDED:  # (the gate stays, unused: the slots answer from now on)
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)

    def _may_match(
        self, string: object, pos: int = 0, endpos: int | None = None, anchored: bool = False
    ) -> bool:
        """False only when no match is possible: ``string`` holds none of the gate's literals
        (or, ``anchored`` (a match at ``pos``) or the pattern anchored at the start of the
        string, does not start with one of its prefixes there)."""
        self._calls += 1
        if self._calls > GATED_CALLS or self._gate is None or string.__class__ is not str:
            return True
        if not string.isascii() and any(c in string for c in _FOLDS_TO_ASCII):
            return True
        prefixes, contains = self._gate[:2]
        if len(self._gate) > 2 and not anchored:  # ^ or \A: a match starts at 0 only
            if pos > 0:
                return True  # (re decides: ^ never matches there)
            anchored, pos = True, 0
        if anchored and prefixes:
            pos = max(pos, 0)  # (as re reads a negative pos)
            end = pos + PREFIX_MAX if endpos is None else min(endpos, pos + PREFIX_MAX)
            if not string[pos:end].lower().startswith(prefixes):
                return False
        if contains:
            low = string.lower()
            return any(literal in low for literal in contains)
        return True

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


# the methods a gated pattern has before it is compiled: the no-match answer when the gate
# says so, else the compiled pattern's own
def _match(self, string, pos=0, endpos=sys.maxsize):
    if self._may_match(string, pos, endpos, anchored=True):
        return self._compile("match")(string, pos, endpos)
    return None


def _fullmatch(self, string, pos=0, endpos=sys.maxsize):
    if self._may_match(string, pos, endpos, anchored=True):
        return self._compile("fullmatch")(string, pos, endpos)
    return None


def _search(self, string, pos=0, endpos=sys.maxsize):
    if self._may_match(string, pos, endpos):
        return self._compile("search")(string, pos, endpos)
    return None


def _findall(self, string, pos=0, endpos=sys.maxsize):
    if self._may_match(string, pos, endpos):
        return self._compile("findall")(string, pos, endpos)
    return []


def _finditer(self, string, pos=0, endpos=sys.maxsize):
    if self._may_match(string, pos, endpos):
        return self._compile("finditer")(string, pos, endpos)
    return iter(())


def _sub(self, repl, string, count=0):
    if self._may_match(string):
        return self._compile("sub")(repl, string, count)
    return string


def _subn(self, repl, string, count=0):
    if self._may_match(string):
        return self._compile("subn")(repl, string, count)
    return string, 0


def _split(self, string, maxsplit=0):
    if self._may_match(string):
        return self._compile("split")(string, maxsplit)
    return [string]


_GATED = {
    "match": _match,
    "fullmatch": _fullmatch,
    "search": _search,
    "findall": _findall,
    "finditer": _finditer,
    "sub": _sub,
    "subn": _subn,
    "split": _split,
}


def lazy(pattern: str | bytes, flags: int = 0) -> LazyPattern:
    """``re.compile(pattern, flags)``, compiled on first use (see the module's docstring)."""
    return LazyPattern(pattern, flags)


# -------------------------------------------------------------------------------------------
# deriving gates (python -m lessonloop.lazyre; never at run time: parsing is what costs)


def derive_gate(pattern: str | bytes, flags: int = 0) -> tuple | None:
    """``(prefixes, contains)`` of ``pattern``, lowered: every match starts with one of
    ``prefixes`` and holds one of ``contains`` (None: no such literals); None when neither.
    A third item, True, says every match starts at the start of the string (``^``, ``\\A``)."""
    # re's private parser has no stubs (and is read here only, never at run time)
    from re import _constants as c  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    zero_width = {c.AT, c.ASSERT, c.ASSERT_NOT}
    repeats = {c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT}

    def literal(opcode, operand) -> str | None:
        # an ASCII literal (a non-ASCII one may match other characters under IGNORECASE)
        return chr(operand).lower() if opcode is c.LITERAL and operand < 128 else None

    def charset(opcode, operand) -> set[str] | None:
        """The lowered characters a small set of ASCII literals ([\\/], [a-c]) matches."""
        if opcode is not c.IN:
            return None
        chars: set[str] = set()
        for kind, value in operand:
            if kind is c.LITERAL and value < 128:
                chars.add(chr(value).lower())
            elif kind is c.RANGE and value[1] < 128 and value[1] - value[0] < CHARSET_MAX:
                chars.update(chr(v).lower() for v in range(value[0], value[1] + 1))
            else:  # a negation, a category, non-ASCII
                return None
        return chars if 0 < len(chars) <= CHARSET_MAX else None

    def inner(opcode, operand) -> list | None:
        if opcode is c.SUBPATTERN:
            return list(operand[-1])
        if opcode is c.ATOMIC_GROUP:
            return list(operand)
        return None

    def prefixes(items: list, need: int) -> set[str]:
        """Every match of ``items`` starts with one of these (at most ``need`` long); {""}:
        no constraint."""
        if need == 0 or not items:
            return {""}
        (opcode, operand), rest = items[0], items[1:]
        if opcode in zero_width:
            return prefixes(rest, need)
        char = literal(opcode, operand)
        if char is not None:
            return {char + tail for tail in prefixes(rest, need - 1)}
        chars = charset(opcode, operand)
        if chars is not None:
            tails = prefixes(rest, need - 1)
            found = {ch + tail for ch in chars for tail in tails}
            return {""} if len(found) > PREFIXES_MAX else found
        body = inner(opcode, operand)
        if body is not None:
            return prefixes(body + rest, need)
        if opcode is c.BRANCH:
            found = set()
            for alternative in operand[1]:
                found |= prefixes(list(alternative) + rest, need)
                if "" in found or len(found) > PREFIXES_MAX:
                    return {""}
            return found
        if opcode in repeats:
            low, _, body = operand
            found = prefixes(list(body), need)  # (not followed on past the repeat)
            if low == 0:
                found |= prefixes(rest, need)
            return {""} if "" in found or len(found) > PREFIXES_MAX else found
        return {""}  # a class, any character, a backreference

    def contains(items: list) -> set[str] | None:
        """Every match of ``items`` holds one of these; None: no such literals."""
        choices, run = [], ""
        for opcode, operand in items:
            char = literal(opcode, operand)
            if char is not None:
                run += char
                continue
            if opcode in zero_width:  # (a run goes on over an anchor)
                continue
            if run:
                choices.append({run})
                run = ""
            body = inner(opcode, operand)
            found: set[str] | None
            if body is not None:
                found = contains(body)
            elif opcode is c.BRANCH:
                found = set()
                for alternative in operand[1]:
                    more = contains(list(alternative))
                    if more is None:
                        found = None
                        break
                    found |= more
            elif opcode in repeats and operand[0] >= 1:
                found = contains(list(operand[2]))
            else:
                found = charset(opcode, operand)
            if found:
                choices.append(found)
        if run:
            choices.append({run})
        if not choices:
            return None
        return max(choices, key=lambda s: (min(map(len, s)), -len(s)))

    def at_start(items: list) -> bool:
        """Whether every match starts where the string starts (``^`` without MULTILINE,
        ``\\A``): then every method's match starts with a prefix, not only match's."""
        for opcode, operand in items:
            if opcode is c.AT:
                return operand is c.AT_BEGINNING_STRING or (
                    operand is c.AT_BEGINNING and not parsed.state.flags & c.SRE_FLAG_MULTILINE
                )
            body = inner(opcode, operand)
            if body is not None:
                return at_start(body)
            if opcode is c.BRANCH:
                return all(at_start(list(alternative)) for alternative in operand[1])
            return False
        return False

    def minimal(strings: set[str], within) -> tuple | None:
        """The strings none of which holds another (startswith/in is then just as exact)."""
        kept = sorted(s for s in strings if not any(t != s and within(s, t) for t in strings))
        return tuple(kept) or None

    parsed = _parser.parse(pattern, flags)
    items = list(parsed)
    starts = None
    for need in (PREFIX_MAX, 8, 6, 4, 3, 2):  # (shorter prefixes: fewer alternatives)
        found = prefixes(items, need)
        kept = None if "" in found else minimal(found, str.startswith)
        if kept and len(kept) <= PREFIXES_MAX:
            starts = kept
            break
    held = contains(items)
    holds = None if not held or "" in held else minimal(held, str.__contains__)
    gate = (starts, holds if holds and len(holds) <= CONTAINS_MAX else None)
    if gate == (None, None):
        return None
    return (*gate, True) if starts and at_start(items) else gate


def patterns_of(module) -> list[LazyPattern]:
    """The LazyPatterns a module keeps (in its globals, and in tuples, lists and dicts there)."""
    found, seen = [], set()

    def visit(value, depth: int) -> None:
        if isinstance(value, LazyPattern):
            if id(value) not in seen:
                seen.add(id(value))
                found.append(value)
        elif depth < 3 and isinstance(value, (tuple, list)):
            for item in value:
                visit(item, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for item in value.values():
                visit(item, depth + 1)

    for value in vars(module).values():
        visit(value, 0)
    return found


def gates_table() -> dict:
    """``{(pattern, flags): gate}`` for every pattern of GATED_MODULES that has one."""
    import importlib

    table = {}
    for name in GATED_MODULES:
        for pattern in patterns_of(importlib.import_module(name)):
            gate = derive_gate(pattern.pattern, pattern._flags)
            if gate is not None:
                table[pattern.pattern, pattern._flags] = gate
    return table


def write_gates(path: str | None = None) -> str:
    """Write ``regex_gates.py`` (next to this module); its path."""
    import os

    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), "regex_gates.py")
    lines = [
        '"""Gates of the lazily compiled patterns (see lazyre): written by',
        "``python -m lessonloop.lazyre`` from the patterns themselves; do not edit. A",
        'pattern edited since has no gate here (it is then compiled at its first use)."""',
        "",
        "GATES = {",
    ]
    for (pattern, flags), gate in sorted(gates_table().items(), key=repr):
        lines.append(f"    ({pattern!r}, {int(flags)}):")
        lines.append(f"        {gate!r},")
    lines.append("}")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":  # (the package's own module: its LazyPattern is the one in use)
    from lessonloop.lazyre import write_gates as write

    print(f"wrote {write()}")
