"""``memory list`` and ``memory search``: how memories are shown. Apart from ``memory.py``,
which builds the Typer group, so that ``fast.py`` can call these without importing Typer."""

from __future__ import annotations

import sys

from .output import print_json


def show(items: list[dict], as_json: bool, empty: str) -> None:
    if as_json:
        print_json(items)
        return
    if not items:
        sys.stdout.write(empty + "\n")
    for item in items:
        score = f" score {item['score']:.2f}" if "score" in item else ""
        sys.stdout.write(
            f"[{item['scope']} {item['id']}] ({item['type']}) {item['summary']}"
            f"  — {item['author']}, seen {item['seen']}{score}\n"
        )


def search_command(query: str, limit: int = 10, scope: str = "all", as_json: bool = False) -> None:
    """``memory search``: memories matching QUERY, best first."""
    from ..memory.service import search_memories

    show(search_memories(query, scope, limit), as_json, "no memory matches")


def list_command(scope: str = "all", as_json: bool = False) -> None:
    """``memory list``: every active memory, most useful first."""
    from ..memory.service import useful_memories

    show(useful_memories(scope), as_json, "no memories yet")
