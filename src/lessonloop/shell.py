"""The project's one shell-command splitter: a command line's stages (split at ``|``, ``&&``,
``||``, ``;``, ``&`` and newlines) and a stage's words.

Two readers use it. The session signals (``memory/commands.py``: what a command runs, whether it
only looks) read a command Claude Code ran: quotes, backslash escapes, ``$(...)`` and backtick
substitutions and redirections (``2>&1``) are honoured. The redactor (``safety/redact/shaped.py``:
which program a ``-u user:password`` flag belongs to) reads any text, a JSON-escaped transcript
line as often as not, where a quote may be an escaped JSON quote and a cut-off quote would hide
the rest of the line: it asks for the stages as written (``honour_quotes=False``), where every
separator character ends a stage. Standard library only (and ``lazyre``): the hooks and the
redactor both load it.
"""

from __future__ import annotations

from .lazyre import lazy

__all__ = ["command_stages", "command_words", "last_stage"]


def _substitution_end(text: str, i: int) -> int:
    """Where the command substitution opening at ``text[i]`` (``$(`` or a backtick) ends: past
    its closing ``)`` (nested ones and quoted text counted) or backtick; the text's end if
    none."""
    if text[i] == "`":
        end = text.find("`", i + 1)
        return len(text) if end == -1 else end + 1
    depth, quote, j = 0, "", i + 1
    while j < len(text):
        c = text[j]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(text)


def command_stages(command: str, plain: bool = False) -> list[str]:
    """Split a shell command at unquoted ``| && || ; & newline`` (quote-aware, never raises;
    a ``$(...)`` or backtick substitution stays whole). ``plain``: every separator character
    ends a stage, quoted or not (see the module's docstring)."""
    return [stage.strip() for stage in _split(command, plain) if stage.strip()]


def last_stage(text: str, plain: bool = False) -> str:
    """The stage the end of ``text`` is in: what follows its last separator ("" right after
    one), stripped. ``plain`` as for command_stages."""
    return _split(text, plain)[-1].strip()


# plain: every separator character ends a stage; two of | and & together are one separator
_PLAIN_SEPARATOR = lazy(r"[|&][|&]|[|&;\n]")


def _split(command: str, plain: bool) -> list[str]:
    """The stages of ``command`` as they stand (not stripped; an empty one after a separator
    that ends the text, or between two, is kept). Plain, the split is a regex's, at C speed:
    the redactor asks at every ``-u`` it finds."""
    if plain:
        stages: list[str] = _PLAIN_SEPARATOR.split(command)
        return stages
    out, buf, quote, i, n = [], [], "", 0, len(command)
    while i < n:
        c = command[i]
        if not quote and (c == "`" or c == "$" and command[i + 1 : i + 2] == "("):
            end = _substitution_end(command, i)
            buf.append(command[i:end])
            i = end
            continue
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            # a line continuation ("\\" then a newline) is a space, not an escaped character
            buf.append(" " if command[i + 1] == "\n" else command[i : i + 2])
            i += 2
            continue
        if c in "'\"":
            quote = c
        elif c in "|&;\n":
            # "2>&1", ">&2" and "&>file" are redirections, not separators
            if c == "&" and (i > 0 and command[i - 1] in "<>" or command[i + 1 : i + 2] == ">"):
                buf.append(c)
                i += 1
                continue
            out.append("".join(buf))
            buf = []
            i += 2 if c in "|&" and command[i + 1 : i + 2] in ("|", "&") else 1
            continue
        buf.append(c)
        i += 1
    out.append("".join(buf))
    return out


def command_words(stage: str, limit: int = 12) -> list[str]:
    """The first words of one stage, quotes removed, a ``$(...)`` substitution kept in its
    word (approximate, never raises)."""
    words, buf, quote, i = [], [], "", 0
    while i < len(stage):
        c = stage[i]
        i += 1
        if not quote and (c == "`" or c == "$" and stage[i : i + 1] == "("):
            end = _substitution_end(stage, i - 1)
            buf.append(stage[i - 1 : end])
            i = end
            continue
        if quote:
            if c == quote:
                quote = ""
            else:
                buf.append(c)
            continue
        if c in "'\"":
            quote = c
        elif c.isspace():
            if buf:
                words.append("".join(buf))
                buf = []
                if len(words) >= limit:
                    return words
        else:
            buf.append(c)
    if buf:
        words.append("".join(buf))
    return words
