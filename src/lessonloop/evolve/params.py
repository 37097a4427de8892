"""The parameters a source declares (``# lessonloop: param NAME int LO..HI``, ``float LO..HI``,
``choice a,b,c`` or ``bool``, after ``#`` or ``//``) and a candidate: the source with chosen values substituted.

A declaration sits on the assignment it tunes (``BLOCK = 32  # lessonloop: param BLOCK int
8..256``) or on the line just above it; substitution rewrites only that assignment's value, so
a candidate differs from the baseline in nothing else."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from ..errors import UsageError

DECLARATION = re.compile(
    r"(?:#|//)\s*lessonloop:\s*param\s+(?P<name>[A-Za-z_]\w*)\s+(?P<rest>.*?)\s*$"
)
_RANGE = re.compile(r"^(?P<kind>int|float)\s+(?P<low>[-+0-9.eE]+)\s*\.\.\s*(?P<high>[-+0-9.eE]+)$")
_CHOICE = re.compile(r"^choice\s+(?P<values>\S.*)$")


@dataclass(frozen=True)
class Param:
    """One declared parameter: its kind, its range or choices, and the line it sets."""

    name: str
    kind: str  # int, float, choice
    low: float | None
    high: float | None
    choices: tuple
    line: int  # 0-based index of the assignment it tunes
    default: object

    def check(self, value: object) -> object:
        """``value`` if it is one this parameter allows, else a UsageError naming it."""
        if self.kind == "choice":
            if value not in self.choices:
                raise UsageError(f"param {self.name}: {value!r} is not one of {list(self.choices)}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"param {self.name}: {value!r} is not a number")
        if self.kind == "int" and not float(value).is_integer():
            raise UsageError(f"param {self.name}: {value!r} is not an integer")
        assert self.low is not None and self.high is not None
        if not self.low <= value <= self.high:
            raise UsageError(f"param {self.name}: {value!r} is outside {self.low}..{self.high}")
        return int(value) if self.kind == "int" else float(value)


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _assignment(name: str) -> re.Pattern[str]:
    """The line that sets ``name``: ``NAME = v`` (Python, shell), ``const int NAME = v;`` (C and
    its kin, type words first) or ``#define NAME v``; a comment (``#`` or ``//``) may follow."""
    head = (
        rf"\s*#\s*define\s+{re.escape(name)}\s+"
        rf"|\s*(?:[A-Za-z_]\w*[\s*]+)*?{re.escape(name)}\s*(?::[^=]+)?=\s*"
    )
    return re.compile(rf"^(?P<head>{head})(?P<value>[^#;]*?)(?P<tail>\s*;?\s*(?:(?:#|//).*)?)$")


def render(value: object, python: bool) -> str:
    """A value as the source writes it: a Python literal in Python; elsewhere a bare token
    (``1``/``0`` for a bool, a choice's text as it is)."""
    if python:
        return repr(value)
    if isinstance(value, bool):
        return "1" if value else "0"
    return value if isinstance(value, str) else repr(value)


def declared(source: str, where: str = "source") -> list[Param]:
    """The parameters ``source`` declares, in order; a malformed declaration is a UsageError
    naming its line."""
    lines = source.splitlines()
    found: list[Param] = []
    for number, text in enumerate(lines):
        match = DECLARATION.search(text)
        if match is None:
            continue
        name, rest = match["name"], match["rest"]
        at = f"{where} line {number + 1}"
        low = high = None
        choices: tuple = ()
        if rest == "bool":
            kind, choices = "choice", (False, True)
        elif (ranged := _RANGE.match(rest)) is not None:
            kind = ranged["kind"]
            try:
                low, high = float(ranged["low"]), float(ranged["high"])
            except ValueError:
                raise UsageError(f"{at}: param {name}: bad range {rest!r}") from None
            if kind == "int" and not (low.is_integer() and high.is_integer()):
                raise UsageError(f"{at}: param {name}: an int range needs integer bounds")
            if not low < high:
                raise UsageError(f"{at}: param {name}: the range must have LO < HI")
        elif (choice := _CHOICE.match(rest)) is not None:
            kind = "choice"
            choices = tuple(_literal(v.strip()) for v in choice["values"].split(",") if v.strip())
            if len(choices) < 2:
                raise UsageError(f"{at}: param {name}: a choice needs at least two values")
        else:
            raise UsageError(
                f"{at}: param {name}: expected 'int LO..HI', 'float LO..HI', 'choice a,b,c' "
                f"or 'bool', got {rest!r}"
            )
        pattern = _assignment(name)
        target = next(
            (i for i in (number, number + 1) if i < len(lines) and pattern.match(lines[i])), None
        )
        if target is None:
            raise UsageError(f"{at}: param {name}: no assignment '{name} = ...' on it or below it")
        default = _literal(pattern.match(lines[target])["value"].strip())  # type: ignore[index]
        if rest == "bool" and default in (0, 1):  # C's 0/1 is the bool it stands for
            default = bool(default)
        param = Param(name, kind, low, high, choices, target, default)
        try:
            param.check(default)
        except UsageError as exc:
            raise UsageError(f"{at}: {exc} (its value as written)") from None
        if any(p.name == name for p in found):
            raise UsageError(f"{at}: param {name} is declared twice")
        found.append(param)
    return found


def defaults(params: list[Param]) -> dict[str, object]:
    """The values the source has as written: the baseline's parameters."""
    return {p.name: p.default for p in params}


def substitute(
    source: str, params: list[Param], values: dict[str, object], python: bool = True
) -> str:
    """``source`` with each declared parameter's assignment set to ``values[name]`` (written
    as a Python literal, or a bare token in another language)."""
    lines = source.splitlines(keepends=True)
    for param in params:
        value = param.check(values[param.name])
        text = lines[param.line]
        ending = text[len(text.rstrip("\r\n")) :]
        match = _assignment(param.name).match(text.rstrip("\r\n"))
        assert match is not None
        lines[param.line] = f"{match['head']}{render(value, python)}{match['tail']}{ending}"
    return "".join(lines)
