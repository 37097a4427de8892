"""How a command group lists its commands in ``--help``: each with its whole first sentence,
wrapped under the terminal's width, where Click would cut it to one line ending in "...". A
reader choosing a command should not have to guess the end of its description."""

from __future__ import annotations

from typer.core import TyperGroup

WHOLE = 10_000  # Click stops at the first sentence's end; no cut before it


class WholeSentences(TyperGroup):
    def format_commands(self, ctx, formatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(WHOLE)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
