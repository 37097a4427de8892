"""Search/replace blocks: the answer form small models get right most often (they copy a few
lines and edit them, where a unified diff needs exact prefixes and a whole file invites
fragments). A block names the lines to find and what replaces them::

    FILE: calc.py
    <<<<<<< SEARCH
        return sum(range(1, n))
    =======
        return sum(range(1, n + 1))
    >>>>>>> REPLACE

Forgiving where small models are sloppy: the file may be left out (the one file holding the
lines is used), line numbers copied from the prompt are dropped, lines are matched ignoring
trailing, then leading, whitespace (the replacement is re-indented to match), and one line
may be part of a line (a fix said in prose: `x = 1` should be `x = 2`).
Strict where it matters: the lines must be found exactly once, and the result goes through
``patch`` like any diff (paths stay inside the workspace)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import patch

BLOCK = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.S | re.M,
)
_NUMBERED = re.compile(r"^\s*>?\s*\d+\s?[|:] ?")


@dataclass
class Block:
    file: str | None  # None: not named; the one workspace file holding the lines
    search: list[str]
    replace: list[str]

    def render(self) -> str:
        """The block as stored and shown to the model again."""
        head = f"FILE: {self.file}\n" if self.file else ""
        return (
            f"{head}<<<<<<< SEARCH\n{''.join(s + chr(10) for s in self.search)}=======\n"
            f"{''.join(r + chr(10) for r in self.replace)}>>>>>>> REPLACE"
        )


def _unnumbered(search: list[str], replace: list[str]) -> tuple[list[str], list[str]]:
    """Drop ``12| `` prefixes when every search line has one (copied from a numbered view)."""
    if search and all(_NUMBERED.match(line) for line in search if line.strip()):
        strip = [_NUMBERED.sub("", line, count=1) for line in search]
        fixed = [_NUMBERED.sub("", line, count=1) for line in replace]
        return strip, fixed
    return search, replace


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def parse(answer: str, named: Callable[[str], str | None] = lambda before: None) -> list[Block]:
    """The blocks in ``answer``; ``named(text_before_block)`` finds the file a block names."""
    blocks = []
    for match in BLOCK.finditer(answer):
        search, replace = _unnumbered(match.group(1).splitlines(), match.group(2).splitlines())
        blocks.append(Block(named(answer[: match.start()]), _trim(search), _trim(replace)))
    return blocks


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _locate(lines: list[str], search: list[str]) -> tuple[int, str | None] | None:
    """Where ``search`` occurs once in ``lines`` and the indentation to add to the replacement
    (when only a whitespace-insensitive match found it); None when not found once."""
    for norm in (str.rstrip, str.strip):
        wanted = [norm(s) for s in search]
        found = [
            i
            for i in range(len(lines) - len(search) + 1)
            if [norm(x) for x in lines[i : i + len(search)]] == wanted
        ]
        if len(found) == 1:
            at = found[0]
            return at, None if norm is str.rstrip else _indent(lines[at])
        if found:
            raise patch.PatchFailed(
                f"the SEARCH lines occur {len(found)} times; include more lines to pick one"
            )
    return None


def _reindent(replace: list[str], search: list[str], indent: str | None) -> list[str]:
    """``replace`` moved to ``indent`` (the file's), as its first search line was; None: as
    written (the search lines matched with their indentation)."""
    if indent is None:
        return replace
    old = _indent(search[0]) if search else ""
    out = []
    for line in replace:
        if line.strip() and line.startswith(old):
            line = indent + line[len(old) :]
        elif line.strip():
            line = indent + line.lstrip()
        out.append(line)
    return out


def new_contents(root: Path, blocks: list[Block], names: list[str]) -> dict[str, str]:
    """Each changed file's new content; ``PatchFailed`` naming what did not match."""
    contents: dict[str, str] = {}
    for number, block in enumerate(blocks, 1):
        name = block.file
        if name is None:
            holders = [
                n
                for n in names
                if _locate_safely(patch.split_lines(_read(root, n, contents)), block.search)
                or _inline(_read(root, n, contents), block) is not None
            ]
            if len(holders) != 1:
                raise patch.PatchFailed(
                    f"block {number} names no file (a `FILE: path` line before it) and its "
                    f"SEARCH lines are in {len(holders)} files"
                )
            name = holders[0]
        target = patch.inside(root, name)
        if not block.search:
            if target.is_file() or name in contents:
                raise patch.PatchFailed(f"block {number}: an empty SEARCH only creates a new file")
            contents[name] = "\n".join(block.replace) + "\n"
            continue
        if not target.is_file() and name not in contents:
            raise patch.PatchFailed(f"block {number}: no file {name} in the workspace")
        lines = patch.split_lines(_read(root, name, contents))
        found = _locate(lines, block.search)
        inline = _inline(_read(root, name, contents), block) if found is None else None
        if inline is not None:
            contents[name] = inline
            continue
        if found is None:
            raise patch.PatchFailed(
                f"block {number}: its SEARCH lines are not in {name}; copy them exactly from "
                "the file shown"
            )
        at, indent = found
        lines[at : at + len(block.search)] = _reindent(block.replace, block.search, indent)
        contents[name] = "\n".join(lines) + "\n"
    return contents


def _inline(text: str, block: Block) -> str | None:
    """A one-line edit of part of a line (``x = 1`` to ``x = 2`` inside ``f(x = 1)``), as
    said in prose: ``text`` with it made, when the part occurs exactly once."""
    if len(block.search) != 1 or len(block.replace) != 1:
        return None
    part = block.search[0].strip()
    if not part or text.count(part) != 1:
        return None
    return text.replace(part, block.replace[0].strip())


def _locate_safely(lines: list[str], search: list[str]) -> bool:
    try:
        return bool(search) and _locate(lines, search) is not None
    except patch.PatchFailed:
        return False


def _read(root: Path, name: str, contents: dict[str, str]) -> str:
    if name in contents:
        return contents[name]
    try:
        return patch.read(patch.inside(root, name))[0]
    except (OSError, UnicodeDecodeError):
        return ""
