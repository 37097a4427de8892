"""``typer`` as the command modules' annotations name it, imported when Typer reads them.

Each command is a top-level function whose parameters say their flags and help where they are
declared (``as_json: Annotated[bool, typer.Option("--json", help=...)] = False``). Those
annotations are strings (``from __future__ import annotations``) that only Typer evaluates,
when ``cli/app.py`` registers the command. The inspection commands run without Typer
(``fast.py``) and never evaluate them, so this stand-in imports Typer at its first attribute
access instead of at import: ``status`` and ``list`` stay fast. Standard library only.
"""

from __future__ import annotations

from typing import Any


class _Typer:
    def __getattr__(self, name: str) -> Any:
        import typer

        return getattr(typer, name)


typer = _Typer()
