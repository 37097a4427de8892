"""What a shell command runs, for telling commands apart: its head (``pytest``, ``npm test``,
``git push``), its key (the command without output filters and redirections, to tell a rerun
from a replacement), the steps before a head, and whether it only looks (``git log``, ``cat``)
or changes something.

Leading ``cd``/``export`` steps, env assignments, wrappers (``sudo``, ``timeout 10``) and runners
(``uv run``, ``npx``, ``python -m``) are skipped. Heuristics over the first 4,000 characters of a
command that never raise: the hooks and memorize call them on every command. The splitting
itself is ``lessonloop.shell``'s.
"""

from __future__ import annotations

import functools
import re

from ..lazyre import lazy as _lazy
from ..shell import command_stages, command_words
from .text_limits import text_or_empty

__all__ = [
    "NEUTRAL_PROGRAMS",
    "command_core",
    "command_head",
    "command_heads",
    "command_key",
    "only_inspects",
    "steps_before",
    "view_programs",
]


_ASSIGN = _lazy(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WRAPPERS = {
    "sudo",
    "time",
    "nice",
    "nohup",
    "env",
    "command",
    "exec",
    "builtin",
    "stdbuf",
    "ionice",
    "caffeinate",
    "xargs",
    "watch",
    "doas",
    "unbuffer",
}
_WRAPPERS_WITH_ARG = {"timeout"}
_RUNNERS = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("bundle", "exec"),
    ("pnpm", "exec"),
    ("npm", "exec"),
    ("yarn", "dlx"),
    ("rye", "run"),
    ("conda", "run"),
    ("pixi", "run"),
}
_LAUNCHERS = {"npx", "bunx", "pnpx", "uvx", "pipx"}
_SUBCOMMANDS = {
    "git",
    "npm",
    "pnpm",
    "yarn",
    "cargo",
    "go",
    "uv",
    "poetry",
    "docker",
    "kubectl",
    "pip",
    "pip3",
    "make",
    "dotnet",
    "mvn",
    "gradle",
    "./gradlew",
    "gradlew",
    "bun",
    "deno",
    "gh",
    "terraform",
    "helm",
    "brew",
    "apt",
    "apt-get",
    "conda",
    "rails",
    "bundle",
    "mix",
    "nx",
    "turbo",
    "rustup",
    "docker-compose",
    "podman",
    "pdm",
    "hatch",
    "tox",
    "nox",
    "just",
    "composer",
    "swift",
    "flutter",
    "dart",
    "alembic",
    "django-admin",
    "manage.py",
    "rake",
    "gem",
    "lerna",
    "systemctl",
    "az",
    "aws",
    "gcloud",
    "firebase",
    "vercel",
    "heroku",
    "supabase",
    "prisma",
    "pre-commit",
}
NEUTRAL_PROGRAMS = {
    "cd",
    "pushd",
    "popd",
    "export",
    "source",
    ".",
    "set",
    "unset",
    "true",
    ":",
    "sleep",
    "echo",
    "printf",
    "clear",
    "alias",
    "mkdir",
    "touch",
    "shopt",
    "trap",
}
_VIEW = {
    "cat",
    "bat",
    "less",
    "more",
    "head",
    "tail",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "strings",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "rg",
    "ag",
    "ack",
    "find",
    "fd",
    "ls",
    "ll",
    "tree",
    "du",
    "df",
    "stat",
    "file",
    "which",
    "type",
    "whereis",
    "printenv",
    "pwd",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "column",
    "awk",
    "gawk",
    "jq",
    "yq",
    "diff",
    "cmp",
    "comm",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "date",
    "whoami",
    "hostname",
    "uname",
    "id",
    "man",
    "curl",
    "wget",
    "tee",
    "fold",
    "fmt",
    "rev",
    "tac",
    "zcat",
    "bzcat",
    "xzcat",
    "journalctl",
    "dmesg",
    "lsof",
    "ps",
    "top",
    "htop",
    "env",
    "locate",
    "history",
    "test",
    "[",
    "[[",
    "base64",
    "md5sum",
    "sha256sum",
    "shasum",
    "cksum",
    "expand",
    "paste",
    "join",
    "look",
    "sed",
    "pbcopy",
    "pbpaste",
    "open",
    "xdg-open",
    "code",
    "tput",
}
# a last argument that asks any program only to show something: ``migrate -path x version``
# (not ``npm version patch``: "version" is not last there)
_VIEW_LAST = {"version", "--version", "status", "help", "--help"}
# sub-commands that only show things
_VIEW_SUB = {
    "git": {
        "commit",
        "log",
        "show",
        "diff",
        "status",
        "grep",
        "blame",
        "branch",
        "remote",
        "ls-files",
        "rev-parse",
        "describe",
        "shortlog",
        "reflog",
        "config",
        "tag",
        "stash",
        "cat-file",
        "ls-tree",
        "whatchanged",
        "help",
        "--version",
        "version",
    },
    "docker": {"logs", "ps", "images", "inspect"},
    "kubectl": {"logs", "get", "describe"},
    "docker-compose": {"logs", "ps"},
    "npm": {"view", "ls", "list", "info", "outdated"},
    "pip": {"show", "list", "freeze"},
    "pip3": {"show", "list", "freeze"},
    "gh": {"pr", "issue", "api", "repo", "run"},
    "cargo": {"tree", "metadata"},
    "systemctl": {"status"},
    "brew": {"info", "list"},
    "uv": {"pip"},
}


def _program(word: str) -> str:
    base = word.rsplit("/", 1)[-1] if "/" in word and not word.endswith("/") else word
    return base.lstrip("(").lower() if base else word


def _argv(stage: str) -> list[str]:
    """A stage's words with env assignments, wrappers and runners removed."""
    words = command_words(stage, 16)
    i = 0
    while i < len(words):
        word = words[i]
        program = _program(word)
        if _ASSIGN.match(word) or word in ("(", "{", "!", "then", "do", "else", "if", "while"):
            i += 1
        elif program in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif program in _WRAPPERS_WITH_ARG:
            i += 1
            while i < len(words) and (words[i].startswith("-") or words[i][:1].isdigit()):
                i += 1
        elif program in _LAUNCHERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif i + 1 < len(words) and (program, words[i + 1]) in _RUNNERS:
            i += 2
            while i < len(words) and words[i].startswith("-"):
                i += 1
        else:
            break
    return words[i:]


def _first_arg(args: list[str]) -> str:
    for arg in args:
        if (
            not arg.startswith("-")
            and not _ASSIGN.match(arg)
            and arg not in ("2>&1", ">", ">>", "<")
        ):
            return arg
    return ""


def _stage_head(args: list[str]) -> str:
    if not args:
        return ""
    prog = _program(args[0])
    rest = args[1:]
    if re.fullmatch(r"python[0-9.]*|py|pypy[0-9.]*", prog):
        if "-m" in rest:
            module_flag = rest.index("-m")
            if module_flag + 1 < len(rest):
                return _stage_head(rest[module_flag + 1 :])
        if "-c" in rest:
            return prog + " -c"
        script = _first_arg(rest)
        if script:
            if _program(script) == "manage.py":
                return _stage_head(["manage.py"] + rest[rest.index(script) + 1 :])
            return f"{prog} {_program(script)}"
        return prog
    if prog in ("node", "ruby", "perl", "bash", "sh", "zsh", "deno") and prog not in _SUBCOMMANDS:
        script = _first_arg(rest)
        return f"{prog} {_program(script)}" if script else prog
    if prog in _SUBCOMMANDS or args[0] in _SUBCOMMANDS:
        sub = _first_arg(rest)
        if sub and prog in ("npm", "pnpm", "yarn", "bun") and sub in ("run", "run-script"):
            script = _first_arg(rest[rest.index(sub) + 1 :])
            return f"{prog} run {script}".strip()
        return f"{prog} {sub}".strip() if sub and len(sub) <= 40 else prog
    return prog


def command_core(command: str) -> str:
    """``command`` without its leading ``cd``/``export``/``source`` steps (for display)."""
    try:
        command = text_or_empty(command).strip()
        for stage in command_stages(command[:4000]):
            args = _argv(stage)
            if args and _program(args[0]) not in NEUTRAL_PROGRAMS:
                found_at = command.find(stage)
                return command[found_at:] if found_at >= 0 else command
        return command
    except Exception:  # noqa: BLE001
        return text_or_empty(command)


@functools.lru_cache(maxsize=1024)
def _command_head(command: str) -> str:
    for stage in command_stages(command[:4000]):
        args = _argv(stage)
        if args and _program(args[0]) not in NEUTRAL_PROGRAMS:
            return _stage_head(args)
    return ""


@functools.lru_cache(maxsize=1024)
def command_heads(command: str) -> tuple[str, ...]:
    """The heads of every stage that runs something, in order: ``terraform init && terraform
    plan`` runs ``terraform init`` then ``terraform plan`` (command_head is the first)."""
    try:
        heads = (
            _stage_head(args)
            for args in map(_argv, command_stages(text_or_empty(command)[:4000]))
            if args and _program(args[0]) not in NEUTRAL_PROGRAMS
        )
        return tuple(dict.fromkeys(h for h in heads if h))
    except Exception:  # noqa: BLE001
        return ()


def steps_before(command: str, head: str) -> str:
    """The stages of ``command`` that run something before its first stage with ``head``,
    joined by ``&&`` (``docker compose up -d db`` in ``docker compose up -d db && alembic
    upgrade head``, for "alembic upgrade"); "" when there are none."""
    steps: list[str] = []
    for stage in command_stages(text_or_empty(command)[:4000]):
        args = _argv(stage)
        if args and _program(args[0]) not in NEUTRAL_PROGRAMS:
            if _stage_head(args) == head:
                return " && ".join(steps)
            steps.append(stage)
    return ""


def command_head(command: str) -> str:
    """The kind of command: ``pytest``, ``npm test``, ``git push``, ``python app.py``.

    Leading ``cd``/``export``/env assignments, wrappers (``sudo``, ``timeout 10``) and runners
    (``uv run``, ``npx``, ``python -m``) are skipped. "" when there is nothing to run.
    """
    try:
        return _command_head(text_or_empty(command)[:4000])
    except Exception:  # noqa: BLE001 - a heuristic must never break a hook
        return ""


_REDIRECT = _lazy(r"^(?:\d*>&\d+|(?:\d*>>?|&>>?|<)(\S*))$")  # group 1 "": the target follows


def command_key(command: str) -> str:
    """The command as run, for telling a rerun from a different command: its stages without
    output filters (``| tail -5``) and redirections (``2>&1``), so ``pytest -q 2>&1 | tail`` and
    ``pytest -q`` compare equal (``cd``/``export`` steps stay: they may be what changed)."""
    try:
        stages = command_stages(text_or_empty(command)[:4000])
        kept = [s for s in stages if not _is_filter(_argv(s))] or stages
        parts: list[str] = []
        for stage in kept:
            words: list[str] = []
            skip_next = False
            for word in command_words(stage, 64):
                m = _REDIRECT.match(word)
                if skip_next or m:
                    skip_next = bool(m) and m.group(1) == ""  # "> file": the file goes too
                    continue
                words.append(word)
            parts.append(" ".join(words))
        return " && ".join(p for p in parts if p)
    except Exception:  # noqa: BLE001
        return text_or_empty(command).strip()


def _is_filter(args: list[str]) -> bool:
    """A stage that only shows or filters output (``tail``, ``grep``), not a ``cd``-like step."""
    return bool(args) and _program(args[0]) not in NEUTRAL_PROGRAMS and _stage_is_view(args)


def _stage_is_view(args: list[str]) -> bool:
    if not args:
        return True
    prog = _program(args[0])
    if prog in NEUTRAL_PROGRAMS:
        return True
    if prog == "sed":
        return not any(a.startswith("-i") or a == "--in-place" for a in args[1:])
    if prog in _VIEW_SUB:
        return _first_arg(args[1:]) in _VIEW_SUB[prog]
    return prog in _VIEW or len(args) > 1 and args[-1] in _VIEW_LAST


@functools.lru_cache(maxsize=1024)
def view_programs(command: str) -> tuple[bool, frozenset[str]]:
    """(all stages only show things or echo what they were given, the programs named)."""
    programs, view = set(), True
    for stage in command_stages(command[:4000]):
        args = _argv(stage)
        if args:
            programs.add(_program(args[0]))
            if _program(args[0]) == "git":
                programs.add(f"git {_first_arg(args[1:])}")
        if not _stage_is_view(args):
            view = False
    return view, frozenset(programs)


def _git_changes(args: list[str]) -> bool:
    """Whether a git stage of _VIEW_SUB's changes something after all: ``git commit``, and the
    listing sub-commands given something to do (``git remote set-url``, ``git branch -D x``,
    ``git stash`` or ``stash pop``, ``git config user.name x``, ``git tag v1``)."""
    sub = _first_arg(args[1:])
    words = [a for a in args[args[1:].index(sub) + 2 :] if not a.startswith("-")] if sub else []
    if sub == "config":
        return len(words) > 1 or any(
            a.startswith("--unset") or a in ("--add", "--replace-all") for a in args
        )
    if sub == "stash":
        return not words or words[0] not in ("list", "show")
    if sub == "remote":
        return bool(words) and words[0] not in ("show", "get-url")
    return sub == "commit" or sub in ("branch", "tag") and bool(words)


# Of NEUTRAL_PROGRAMS, those that change nothing worth crediting (the rest change the shell or files:
# export, source, mkdir, ...). A `cd` prefixes most commands an agent runs, so it is no fix.
_ONLY_LOOK = {"true", ":", "sleep", "echo", "printf", "clear", "cd", "pushd", "popd"}


def _writes_a_file(args: list[str]) -> bool:
    """Whether a stage sends output into a file (``> out.txt``, ``>>log``; not ``2>&1``,
    ``> /dev/null`` or ``< in``)."""
    for word, following in zip(args, args[1:] + [""]):
        m = _REDIRECT.match(word)
        if (
            m
            and m.group(1) is not None
            and not word.startswith("<")
            and (m.group(1) or following) not in ("", "/dev/null")
        ):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def only_inspects(command: str) -> bool:
    """Whether every stage of ``command`` leaves everything as it was: what ran before a rerun
    that worked is credited with the fix unless it only looked (``git remote -v`` looks; ``git
    remote set-url``, ``git commit``, ``export X=1``, ``mkdir``, ``tee`` and ``> file`` do not).
    (view_programs asks whether a command's output is only something shown.)"""
    for stage in command_stages(command[:4000]):
        args = _argv(stage)
        if not args:
            continue
        program = _program(args[0])
        if (
            program in NEUTRAL_PROGRAMS
            and program not in _ONLY_LOOK
            or not _stage_is_view(args)
            or program == "tee"
            or program == "git"
            and _git_changes(args)
            or _writes_a_file(args)
        ):
            return False
    return True
