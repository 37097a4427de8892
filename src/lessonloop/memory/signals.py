"""Deterministic session signals: tool failures, user feedback, prompt checks.

Hooks call these on every tool call and every prompt, so everything here is standard library,
regex-based and bounded (a huge tool output is scanned head and tail only).

- ``tool_errors`` finds error/failure lines in what a command or tool *reported*, never in file
  contents that were merely read (``Read``/``Grep``/``cat``/``grep``… output is not a failure just
  because it contains "Error"; a zero count such as "0 failed" is a success summary).
- ``normalize_error`` masks what varies between two occurrences of one error (paths, numbers,
  hex, ids, times, quoted values) so recurrences can be counted.
- ``command_key`` is a command without output filters and redirections, to tell a rerun from
  a replacement.
- ``prompt_feedback`` turns what the user says into lessons stated as instructions ("Use pnpm
  instead of npm"; "don't use npm, use pnpm" → "Use pnpm, not npm"), never the trigger phrase
  ("I prefer"), one instruction each. Precision over recall: task requests are not lessons.
- ``prompt_check`` gives the prompt's intent and its vague spots.

Every stored string is redacted (``redact``) before it is capped.
"""

from __future__ import annotations

import functools
import json
import re
from collections import namedtuple

from ..lazyre import lazy as _lazy  # compiled on first use, and only for a text it may match


def redact(text: str) -> str:
    """The one redactor, imported on first use: most tool calls (the ones that succeed) have
    nothing to redact, and their hook process need not load it."""
    from ..safety.redact import redact as redact_text

    return redact_text(text)


__all__ = [
    "ErrorSignal",
    "Feedback",
    "command_core",
    "command_head",
    "command_key",
    "normalize_error",
    "prompt_check",
    "prompt_feedback",
    "subject_of",
    "tool_errors",
]

LINE_MAX = 500  # ErrorSignal.line
SUBJECT_MAX = 300  # ErrorSignal.subject
NORMALIZED_MAX = 300  # ErrorSignal.normalized
MAX_ERRORS = 5  # error lines kept per call
LESSON_MAX = 120  # Feedback.lesson
TEXT_MAX = 300  # Feedback.text
_SCAN_HEAD = 32_000  # a huge output is scanned on its first and last characters only
_SCAN_TAIL = 96_000
_PROMPT_MAX = 50_000  # characters of a prompt analysed (after redaction)


# Named tuples, not dataclasses: importing dataclasses costs a hook ~10 ms.
ErrorSignal = namedtuple("ErrorSignal", "tool line normalized subject")


Feedback = namedtuple("Feedback", "kind lesson text user_scope")


# ===========================================================================================
# small helpers


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def _clean(text: str, limit: int) -> str:
    """Redact first, then cap: a secret is a marker before it can be cut."""
    return _cap(redact(text), limit)


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _window(text: str) -> str:
    """Head and tail of a huge text: errors live at the start (compilers) or the end."""
    if len(text) <= _SCAN_HEAD + _SCAN_TAIL:
        return text
    return text[:_SCAN_HEAD] + "\n" + text[-_SCAN_TAIL:]


# ===========================================================================================
# shell commands: stages, heads, "view-only" commands


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


def command_stages(command: str) -> list[str]:
    """Split a shell command at unquoted ``| && || ; & newline`` (quote-aware, never raises;
    a ``$(...)`` or backtick substitution stays whole)."""
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
    return [s.strip() for s in out if s.strip()]


def _words(stage: str, limit: int = 12) -> list[str]:
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
_NEUTRAL = {
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
    words = _words(stage, 16)
    i = 0
    while i < len(words):
        w = words[i]
        p = _program(w)
        if _ASSIGN.match(w) or w in ("(", "{", "!", "then", "do", "else", "if", "while"):
            i += 1
        elif p in _WRAPPERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif p in _WRAPPERS_WITH_ARG:
            i += 1
            while i < len(words) and (words[i].startswith("-") or words[i][:1].isdigit()):
                i += 1
        elif p in _LAUNCHERS:
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 1
        elif i + 1 < len(words) and (p, words[i + 1]) in _RUNNERS:
            i += 2
            while i < len(words) and words[i].startswith("-"):
                i += 1
        else:
            break
    return words[i:]


def _first_arg(args: list[str]) -> str:
    for a in args:
        if not a.startswith("-") and not _ASSIGN.match(a) and a not in ("2>&1", ">", ">>", "<"):
            return a
    return ""


def _stage_head(args: list[str]) -> str:
    if not args:
        return ""
    prog = _program(args[0])
    rest = args[1:]
    if re.fullmatch(r"python[0-9.]*|py|pypy[0-9.]*", prog):
        if "-m" in rest:
            k = rest.index("-m")
            if k + 1 < len(rest):
                return _stage_head(rest[k + 1 :])
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
        command = _str(command).strip()
        for stage in command_stages(command[:4000]):
            args = _argv(stage)
            if args and _program(args[0]) not in _NEUTRAL:
                at = command.find(stage)
                return command[at:] if at >= 0 else command
        return command
    except Exception:  # noqa: BLE001
        return _str(command)


@functools.lru_cache(maxsize=1024)
def _command_head(command: str) -> str:
    for stage in command_stages(command[:4000]):
        args = _argv(stage)
        if args and _program(args[0]) not in _NEUTRAL:
            return _stage_head(args)
    return ""


@functools.lru_cache(maxsize=1024)
def command_heads(command: str) -> tuple[str, ...]:
    """The heads of every stage that runs something, in order: ``terraform init && terraform
    plan`` runs ``terraform init`` then ``terraform plan`` (command_head is the first)."""
    try:
        heads = (
            _stage_head(args)
            for args in map(_argv, command_stages(_str(command)[:4000]))
            if args and _program(args[0]) not in _NEUTRAL
        )
        return tuple(dict.fromkeys(h for h in heads if h))
    except Exception:  # noqa: BLE001
        return ()


def steps_before(command: str, head: str) -> str:
    """The stages of ``command`` that run something before its first stage with ``head``,
    joined by ``&&`` (``docker compose up -d db`` in ``docker compose up -d db && alembic
    upgrade head``, for "alembic upgrade"); "" when there are none."""
    steps = []
    for stage in command_stages(_str(command)[:4000]):
        args = _argv(stage)
        if args and _program(args[0]) not in _NEUTRAL:
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
        return _command_head(_str(command)[:4000])
    except Exception:  # noqa: BLE001 - a heuristic must never break a hook
        return ""


_REDIRECT = _lazy(r"^(?:\d*>&\d+|(?:\d*>>?|&>>?|<)(\S*))$")  # group 1 "": the target follows


def command_key(command: str) -> str:
    """The command as run, for telling a rerun from a different command: its stages without
    output filters (``| tail -5``) and redirections (``2>&1``), so ``pytest -q 2>&1 | tail`` and
    ``pytest -q`` compare equal (``cd``/``export`` steps stay: they may be what changed)."""
    try:
        stages = command_stages(_str(command)[:4000])
        kept = [s for s in stages if not _is_filter(_argv(s))] or stages
        parts: list[str] = []
        for stage in kept:
            words: list[str] = []
            skip_next = False
            for w in _words(stage, 64):
                m = _REDIRECT.match(w)
                if skip_next or m:
                    skip_next = bool(m) and m.group(1) == ""  # "> file": the file goes too
                    continue
                words.append(w)
            parts.append(" ".join(words))
        return " && ".join(p for p in parts if p)
    except Exception:  # noqa: BLE001
        return _str(command).strip()


def _is_filter(args: list[str]) -> bool:
    """A stage that only shows or filters output (``tail``, ``grep``), not a ``cd``-like step."""
    return bool(args) and _program(args[0]) not in _NEUTRAL and _stage_is_view(args)


def _stage_is_view(args: list[str]) -> bool:
    if not args:
        return True
    prog = _program(args[0])
    if prog in _NEUTRAL:
        return True
    if prog == "sed":
        return not any(a.startswith("-i") or a == "--in-place" for a in args[1:])
    if prog in _VIEW_SUB:
        return _first_arg(args[1:]) in _VIEW_SUB[prog]
    return prog in _VIEW or len(args) > 1 and args[-1] in _VIEW_LAST


@functools.lru_cache(maxsize=1024)
def _view_programs(command: str) -> tuple[bool, frozenset[str]]:
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


# Of _NEUTRAL, those that change nothing worth crediting (the rest change the shell or files:
# export, source, mkdir, ...). A `cd` prefixes most commands an agent runs, so it is no fix.
_ONLY_LOOK = {"true", ":", "sleep", "echo", "printf", "clear", "cd", "pushd", "popd"}


def _writes_a_file(args: list[str]) -> bool:
    """Whether a stage sends output into a file (``> out.txt``, ``>>log``; not ``2>&1``,
    ``> /dev/null`` or ``< in``)."""
    for a, b in zip(args, args[1:] + [""]):
        m = _REDIRECT.match(a)
        if (
            m
            and m.group(1) is not None
            and not a.startswith("<")
            and (m.group(1) or b) not in ("", "/dev/null")
        ):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def only_inspects(command: str) -> bool:
    """Whether every stage of ``command`` leaves everything as it was: what ran before a rerun
    that worked is credited with the fix unless it only looked (``git remote -v`` looks; ``git
    remote set-url``, ``git commit``, ``export X=1``, ``mkdir``, ``tee`` and ``> file`` do not).
    (_view_programs asks whether a command's output is only something shown.)"""
    for stage in command_stages(command[:4000]):
        args = _argv(stage)
        if not args:
            continue
        program = _program(args[0])
        if (
            program in _NEUTRAL
            and program not in _ONLY_LOOK
            or not _stage_is_view(args)
            or program == "tee"
            or program == "git"
            and _git_changes(args)
            or _writes_a_file(args)
        ):
            return False
    return True


# ===========================================================================================
# error lines

_TRACEBACK = _lazy(r"^\s*Traceback \(most recent call last\):")
_CHAIN = _lazy(r"^(During handling of the above exception|The above exception was the direct)")
_EXC = _lazy(
    r"^(?:E\s+|Uncaught\s+|Unhandled\s+|\w+\s+)?(?:[A-Za-z_][\w]*\.)*"
    r"[A-Z]\w*(?:Error|Exception|Exit|Failure|Fault|Interrupt|NotFound|Refused)\b"
    r"(?:\s*\[[^\]]*\])?(?::\s*\S.*|\s*$)"
)
_EXC_BARE = _lazy(r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception)\s*$")
_TS_ERROR = _lazy(r"\berror TS\d+:")
_ERROR_PREFIX = _lazy(
    r"^\s*(?:[\w./\\~@+-]+:(?:\d+:){0,2}\s*)?(?:\w[\w-]*:\s+)?"
    r"(?:fatal error|error|fatal|panic|critical)(?:\[[\w-]+\])?\s*(?::|!)\s*\S",
    re.I,
)
# (priority, lowercase substring that must occur, regex that must then match or None), best first.
# The substring test runs at C speed, so most lines never reach a regex.
_LINE_RULES = [
    (prio, guard, _lazy(rx) if rx else None)
    for prio, guard, rx in [
        (0, "command not found", None),
        (0, "no such file or directory", None),
        (0, "cannot find module", None),
        (0, "panicked at", None),
        (0, "permission denied", None),
        (0, "segmentation fault", None),
        (0, "not found", r"^\S+:(?: [^:\s]+:){0,3} not found$"),
        (1, "npm err!", r"^npm ERR! (?!\s*$)"),
        (1, "npm error", r"^npm error \S"),
        (1, "err_pnpm_", None),
        (1, "core dumped", None),
        (1, "undefined reference to", None),
        (1, "failed", r"^FAILED\b|::\S+ FAILED\b|\btest result: FAILED\b|\bBUILD FAILED\b"),
        (
            1,
            "error",
            r"^ERROR\b(?! *$)|::\S+ ERROR\b|^\[ERROR\]|"
            r"\b(?:AssertionError|ModuleNotFoundError|ImportError|SyntaxError)\b",
        ),
        (1, "fail", r"^FAIL\s+\S|^FAILURE:"),
        (1, "assertion failed", None),
        (1, "connection refused", None),
        (1, "eaddrinuse", None),
        (1, "enoent", r"\bENOENT\b"),
        (1, "eacces", r"\bEACCES\b"),
        (1, "cannot open", None),
        (1, "could not ", r"(?i)\bcould not (?:find|resolve|connect|open|load)\b"),
        (1, "unable to ", r"(?i)\bunable to (?:find|resolve|connect|open|locate|access)\b"),
        # a zero count ("0 failed", "0 errors") is a success summary, never a failure
        (
            2,
            "fail",
            r"\b[1-9]\d* failed\b|(?i:\bcommand failed\b|\bfailed with exit code\b|"
            r"\bbuild failed\b|\bcompilation failed\b|"
            r"\bfailed to (?:compile|build|start|connect|load|install|resolve)\b)",
        ),
        (
            2,
            "error",
            r"\b[1-9]\d* errors?\b(?=.*\b(?:passed|in \d|failed)\b)|"
            r"(?:^|\s)ERROR(?:\]|:)|^Error\b",
        ),
        (2, "***", r"^make(?:\[\d+\])?: \*\*\*"),
        (
            2,
            "exit",
            r"(?i)\bexited with (?:code|status) [1-9]|\breturned non-zero exit status\b|"
            r"\bnon-zero exit\b",
        ),
        (2, "non-zero", None),
        (2, "killed", r"^Killed$"),
        (2, "timed out", None),
        (2, "fatal", r"^FATAL\b|(?:^|\s)FATAL(?:\]|:)"),
        (2, "critical", r"^CRITICAL\b|(?:^|\s)CRITICAL(?:\]|:)"),
        (2, "npm err!", None),
    ]
]
_PREFIX_GUARDS = ("error", "fatal", "panic", "critical")


def _line_priority(line: str, stripped: str) -> int | None:
    low = stripped.lower()
    if (
        any(g in low for g in _PREFIX_GUARDS)
        and _ERROR_PREFIX.match(line)
        or ("error ts" in low and _TS_ERROR.search(line))
    ):
        return 0
    for prio, guard, rx in _LINE_RULES:
        if guard in low and (rx is None or rx.search(stripped)):
            return None if prio == 2 and _NOISE.match(line) else prio
    return None


_SKIP = _lazy(
    r"A complete log of this run|Log files were not written|For a full report see|"
    r"^npm (?:ERR!|error)\s*$|^\S+:\d+: \w+$|^-+ generated xml|^=+ warnings summary"
)
_PYTEST_SUMMARY = _lazy(r"^(?:FAILED|ERROR) \S+ - \S")
_NOISE = _lazy(r"^\s*(?:at |File \"|\^+\s*$|~+\s*$|-+\s*$|=+\s*$|\d+ \|)")
_EXIT_LINE = _lazy(r"^\s*(?:Error: )?Exit code (-?\d+)\s*$")
_TOOL_ERROR_TAG = _lazy(r"</?tool_use_error>")
# exit status 1 of these means "no match" / "differs", not failure
_BENIGN_EXIT1 = {
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "rg",
    "ag",
    "ack",
    "diff",
    "cmp",
    "test",
    "[",
    "[[",
    "which",
    "find",
    "comm",
    "false",
    "git diff",
    "git grep",
}


_KEYWORDS = (
    "error",
    "fail",
    "fatal",
    "exception",
    "not found",
    "no such",
    "denied",
    "panic",
    "segmentation",
    "core dumped",
    "undefined reference",
    "cannot",
    "could not",
    "unable to",
    "refused",
    "eaddrinuse",
    "enoent",
    "eacces",
    "killed",
    "timed out",
    "non-zero",
    "exit code",
    "exited with",
    "***",
    "critical",
    "assert",
    "abort",
    "npm err",
    "interrupt",
    "** (",
)
_TB_HEAD = "Traceback (most recent call last)"
_MAX_HITS = 300  # per keyword: a flood of identical lines cannot make a scan slow


def _traceback_ends(text: str) -> list[int]:
    """Start offsets of the exception lines that end Python tracebacks."""
    out: list[int] = []
    i = text.find(_TB_HEAD)
    while i >= 0 and len(out) < 50:
        j = text.find("\n", i)
        steps = 0
        while j >= 0 and steps < 400:
            k = text.find("\n", j + 1)
            line = text[j + 1 : k if k >= 0 else len(text)]
            if (
                line.strip()
                and not line[:1].isspace()
                and not _CHAIN.match(line)
                and not line.startswith(_TB_HEAD)
            ):
                out.append(j + 1)
                break
            j, steps = k, steps + 1
        i = text.find(_TB_HEAD, i + len(_TB_HEAD))
    return out


def _rank_lines(text: str) -> list[tuple[int, int, str]]:
    """(priority, position, line) of every error line; lower priority is more informative.

    Only lines holding one of a few keywords are examined (found with ``str.find``), so a long
    output costs a few scans at C speed, not a regex per line.
    """
    text = _window(text)
    low = text.lower()
    starts: set[int] = set()
    for kw in _KEYWORDS:
        i, hits = low.find(kw), 0
        while i >= 0 and hits < _MAX_HITS:
            starts.add(text.rfind("\n", 0, i) + 1)
            hits += 1
            i = low.find(kw, i + len(kw))
    tb_ends = _traceback_ends(text) if _TB_HEAD in text else []
    tb_set = set(tb_ends)
    starts.update(tb_ends)
    found: list[tuple[int, int, str]] = []
    for pos in sorted(starts):
        end = text.find("\n", pos)
        line = text[pos : end if end >= 0 else len(text)].rstrip()
        if len(line) > 4000:
            line = line[:4000]
        stripped = line.strip()
        if not stripped or _TRACEBACK.match(line):
            continue
        if pos in tb_set:
            found.append((0 if pos == tb_ends[-1] else 1, pos, stripped))
            continue
        if stripped.startswith("=="):
            stripped = stripped.strip("= ")
        if _SKIP.search(stripped):
            continue
        if stripped.startswith("** (") and ")" in stripped[4:80]:
            found.append((0, pos, stripped))  # Elixir: "** (RuntimeError) ..."
        elif stripped.startswith("E ") and _EXC.match(stripped):
            found.append((0, pos, stripped[1:].strip()))  # pytest's "E   AssertionError: ..."
        elif _PYTEST_SUMMARY.match(stripped):
            found.append((0, pos - 10**9, stripped))  # the short summary line comes first
        elif _EXC.match(stripped) and not _EXC_BARE.match(stripped):
            found.append((0, pos, stripped))
        else:
            prio = _line_priority(line, stripped)
            if prio is not None:
                found.append((prio, pos, stripped))
    return found


def _pick(ranked: list[tuple[int, int, str]], limit: int = MAX_ERRORS) -> list[str]:
    out, seen = [], set()
    for _, _, line in sorted(ranked, key=lambda t: (t[0], t[1])):
        key = normalize_error(line)
        if key in seen:
            continue
        seen.add(key)
        out.append(line)
        if len(out) >= limit:
            break
    return out


# advice after an error ("hint: Use -f ...") and a bare path listed under it say what to do or
# where, not what went wrong: no key for the error
_ADVICE = _lazy(r"^(?:hint|note|help|tip|suggestion)\s*:|^\(use \"|^[\w.~-]*/[\w./~-]*/?$", re.I)


def _last_line(*texts: str) -> str:
    for text in texts:
        for line in reversed(_window(text).splitlines()):
            s = line.strip()
            if s and not _EXIT_LINE.match(s) and not _NOISE.match(s) and not _ADVICE.match(s):
                return s[:4000]
    return ""


# -------------------------------------------------------------------------------------------
# tool kinds and subjects

_BASH_TOOLS = {
    "bash",
    "bashoutput",
    "shell",
    "powershell",
    "run_shell_command",
    "execute_command",
    "exec_command",
    "terminal",
}
# tools whose results are file or web contents, or prose: only a flagged failure counts
_READ_TOOLS = {
    "read",
    "grep",
    "glob",
    "ls",
    "notebookread",
    "webfetch",
    "websearch",
    "task",
    "agent",
    "todoread",
    "todowrite",
    "exitplanmode",
    "listmcpresourcestool",
    "readmcpresourcetool",
    "read_file",
    "view",
    "search",
    "skill",
    "slashcommand",
}
# tools whose response objects echo file contents (never scanned, only flags and "error")
_EDIT_TOOLS = {
    "edit",
    "write",
    "multiedit",
    "notebookedit",
    "str_replace_based_edit_tool",
    "write_file",
    "create_file",
}
_PATH_KEYS = ("file_path", "notebook_path", "path", "filePath", "file", "url", "uri")


def tool_kind(tool: str) -> str:
    t = tool.strip().lower()
    if t in _BASH_TOOLS:
        return "bash"
    if t in _READ_TOOLS:
        return "read"
    if t in _EDIT_TOOLS:
        return "edit"
    return "other"


def _summary(tool_input: object) -> str:
    if isinstance(tool_input, str):
        return tool_input
    if not isinstance(tool_input, dict):
        return ""
    parts = []
    for k, v in list(tool_input.items())[:8]:
        if isinstance(v, (str, int, float, bool)):
            parts.append(f"{k}={str(v)[:120]}")
        elif isinstance(v, (list, dict)):
            parts.append(f"{k}=<{type(v).__name__} of {len(v)}>")
    return " ".join(parts)


def subject_of(tool_name: str, tool_input: object) -> str:
    """What a call was about: the Bash command, or the file/url, or a short input summary.

    Redacted, then capped at 300 characters.
    """
    try:
        tool = _str(tool_name)
        if isinstance(tool_input, dict):
            if tool_kind(tool) == "bash" or "command" in tool_input:
                cmd = tool_input.get("command")
                if isinstance(cmd, list):
                    cmd = " ".join(str(c) for c in cmd)
                if isinstance(cmd, str) and cmd.strip():
                    return _clean(cmd.strip()[: SUBJECT_MAX + 4096], SUBJECT_MAX)
            for key in _PATH_KEYS:
                v = tool_input.get(key)
                if isinstance(v, str) and v.strip():
                    if tool.lower() == "grep" and isinstance(tool_input.get("pattern"), str):
                        return _clean(
                            f"{tool_input['pattern']} in {v}"[: SUBJECT_MAX + 4096], SUBJECT_MAX
                        )
                    return _clean(v.strip()[: SUBJECT_MAX + 4096], SUBJECT_MAX)
            if isinstance(tool_input.get("pattern"), str):
                return _clean(tool_input["pattern"][: SUBJECT_MAX + 4096], SUBJECT_MAX)
        return _clean(_summary(tool_input)[: SUBJECT_MAX + 4096], SUBJECT_MAX)
    except Exception:  # noqa: BLE001
        return ""


# -------------------------------------------------------------------------------------------
# response shapes


def block_text(value: object, depth: int = 0) -> str:
    """Text of a string, a list of content blocks, or a {"text"}/{"content"} object."""
    if depth > 4:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [block_text(v, depth + 1) for v in value[:200]]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict):
        if value.get("type") in ("image", "document"):
            return ""
        for key in ("text", "content", "output", "result", "message"):
            if key in value:
                t = block_text(value[key], depth + 1)
                if t:
                    return t
    return ""


class _Response:
    """A tool response in the few shapes detection cares about (mutable while parsed)."""

    __slots__ = ("stdout", "stderr", "text", "error", "flagged", "exit_code")

    def __init__(self) -> None:
        self.stdout = self.stderr = ""
        self.text = ""  # a tool's own result text (non-Bash), or Bash output not split
        self.error = ""  # an explicit error message
        self.flagged = False  # is_error / isError / success false
        self.exit_code: int | None = None


def _parse_response(kind: str, response: object) -> _Response:
    r = _Response()
    if response is None:
        return r
    if isinstance(response, str):
        r.text = response
    elif isinstance(response, list):
        r.text = block_text(response)
    elif isinstance(response, dict):
        for key in ("is_error", "isError"):
            if response.get(key) is True:
                r.flagged = True
        if response.get("success") is False or response.get("ok") is False:
            r.flagged = True
        status = response.get("status")
        if isinstance(status, str) and status.lower() in ("failed", "error", "failure"):
            r.flagged = True
        err = response.get("error")
        if isinstance(err, str) and err.strip():
            r.error = err
        elif isinstance(err, dict):
            r.error = block_text(err) or _cap(json.dumps(err, default=str)[:2000], 2000)
        for key in ("exit_code", "returncode", "exitCode", "exit_status", "returnCode"):
            code = _int(response.get(key))
            if code is not None:
                r.exit_code = code
                break
        if kind == "bash" or "stdout" in response or "stderr" in response:
            r.stdout = _str(response.get("stdout")) or block_text(response.get("output"))
            r.stderr = _str(response.get("stderr"))
            if not r.stdout and not r.stderr and kind == "bash":
                r.text = block_text(response.get("content"))
        elif kind == "other":
            r.text = (
                block_text(response.get("content"))
                or block_text(response.get("result"))
                or block_text(response.get("output"))
            )
        elif kind == "read" and r.flagged:
            r.text = block_text(response.get("content"))
        # "edit": response objects echo file contents; only flags and "error" count
        if r.flagged and not r.text and not r.error:
            r.text = block_text(response.get("content")) or block_text(response.get("message"))
    return r


def _strip_exit_line(text: str) -> tuple[str, int | None]:
    """Claude Code's failed Bash results start with "Exit code N"."""
    head = text[:200].lstrip()
    m = _EXIT_LINE.match(head.split("\n", 1)[0]) if head else None
    if not m:
        return text, None
    rest = head.split("\n", 1)[1] if "\n" in head else ""
    return rest + text[200:] if len(text) > 200 else rest, int(m.group(1))


def _is_tool_error_text(text: str) -> bool:
    """A tool's string result that is itself an error report."""
    head = text.lstrip()[:300]
    if not head:
        return False
    if head.startswith("<tool_use_error>"):
        return True
    first = head.split("\n", 1)[0].strip()
    return bool(
        re.match(r"^(?:error|fatal|failed|failure)\b\s*[:!]", first, re.I)
        or _EXC.match(first)
        and not _EXC_BARE.match(first)
    )


def _first_lines(text: str, limit: int = 2) -> list[tuple[int, int, str]]:
    out = []
    for pos, line in enumerate(_TOOL_ERROR_TAG.sub("", text[:20_000]).splitlines()):
        s = line.strip()
        if s:
            out.append((0, pos, s[:4000]))
            if len(out) >= limit:
                break
    return out


def _bash_lines(command: str, r: _Response) -> list[str]:
    text, code_in_text = _strip_exit_line(r.text) if r.text else ("", None)
    code = r.exit_code if r.exit_code is not None else code_in_text
    view, programs = _view_programs(command[:4000]) if command else (False, frozenset())
    benign = view and code == 1 and bool(programs & _BENIGN_EXIT1 or not programs - _NEUTRAL)
    failed = (r.flagged or (code is not None and code != 0)) and not benign
    ranked: list[tuple[int, int, str]] = []
    if r.error:
        ranked += [(0, -1, line) for _, _, line in _first_lines(r.error, 1)]
    if view:
        # output is file or command contents: only the programs' own complaints count
        if code == 1 and benign:
            return []
        prefixes = tuple(
            f"{p}:"
            for p in programs | {"bash", "sh", "zsh", "/bin/sh", "/bin/bash"}
            if " " not in p
        )
        stderr_ranked = _rank_lines(r.stderr) if r.stderr else []
        ranked += stderr_ranked
        for source in (text, r.stdout) if failed or r.stderr else ():
            for pos, line in enumerate(_window(source).splitlines()):
                s = line.strip()
                if s.startswith(prefixes) and _line_priority(s, s) is not None:
                    ranked.append((0, pos, s[:4000]))
        if failed and not ranked:
            last = _last_line(r.stderr, text) or (f"Exit code {code}" if code is not None else "")
            if last:
                ranked.append((3, 0, last))
    else:
        for source in (r.stderr, r.stdout, text):
            if source:
                ranked += _rank_lines(source)
        if failed and not ranked:
            last = (
                _last_line(r.stderr, text)
                or (f"Exit code {code}" if code is not None else "")
                or _last_line(r.stdout)
            )
            ranked.append((3, 0, last))
    ranked = [t for t in ranked if t[2]]
    if not failed and ranked and all(t[0] >= 2 for t in ranked) and not r.stderr and code is None:
        # weak hints (e.g. "0 errors", "ERROR:" in a program's log) without any failure sign:
        # keep only those that clearly report failures
        ranked = [t for t in ranked if re.search(r"\bfailed\b|\*\*\*|non-zero|Killed", t[2])]
    return _pick(ranked)


def tool_errors(tool_name: str, tool_input: object, tool_response: object) -> list[ErrorSignal]:
    """Error and failure lines a tool call reported (at most 5, most informative first).

    Only from results that failed or report failures: Bash output and exit status, results
    flagged ``is_error``, error strings returned by tools. Never from contents that were read
    (Read/Grep/Glob/WebFetch results, ``cat``/``grep``/``git log`` output). Never raises.
    """
    try:
        return _tool_errors(_str(tool_name) or "tool", tool_input, tool_response)
    except Exception:  # noqa: BLE001 - a hook must never fail because of a payload's shape
        return []


def _tool_errors(tool: str, tool_input: object, tool_response: object) -> list[ErrorSignal]:
    kind = tool_kind(tool)
    if (
        kind == "other"
        and isinstance(tool_input, dict)
        and isinstance(tool_input.get("command"), str)
        and tool.lower().endswith(("bash", "shell", "command"))
    ):
        kind = "bash"
    r = _parse_response(kind, tool_response)
    if kind == "bash":
        command = ""
        if isinstance(tool_input, dict):
            c = tool_input.get("command")
            command = (
                c if isinstance(c, str) else " ".join(map(str, c)) if isinstance(c, list) else ""
            )
        elif isinstance(tool_input, str):
            command = tool_input
        lines = _bash_lines(command, r)
    else:
        if (
            r.text
            and not r.flagged
            and kind != "edit"
            and r.text.lstrip().startswith("<tool_use_error>")
        ):
            r.flagged = True
        if kind in ("other", "edit") and r.text and not r.flagged and _is_tool_error_text(r.text):
            r.flagged = True
        ranked: list[tuple[int, int, str]] = []
        if r.error:
            ranked += _first_lines(r.error, 2)
        if r.flagged:
            body = r.text or r.stderr
            if body:
                ranked += _first_lines(body, 1)
                if kind == "other":
                    ranked += [(p + 1, pos, s) for p, pos, s in _rank_lines(body[:20_000])]
            if not ranked:
                ranked.append((3, 0, f"{tool} failed"))
        lines = _pick(ranked)
    if not lines:
        return []
    subject = subject_of(tool, tool_input)
    out = []
    for line in lines:
        clean = _clean(line[: LINE_MAX + 4096], LINE_MAX)
        out.append(
            ErrorSignal(
                tool=_clean(tool[: 100 + 4096], 100),
                line=clean,
                normalized=normalize_error(clean),
                subject=subject,
            )
        )
    return out


# ===========================================================================================
# normalization

_EXT = (
    r"(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|rs|go|rb|java|kt|c|cc|cpp|h|hpp|cs|php|swift|scala|sh|"
    r"json|ya?ml|toml|ini|cfg|md|txt|log|html|css|scss|vue|svelte|sql|lock|xml|csv|ipynb|so|"
    r"dll|o|a|class|jar|whl|tar|gz|zip|env)"
)
_N_QUOTED = _lazy(
    r"(?<![\w])(?:'([^'\n]{0,300})'|\"([^\"\n]{0,300})\"|`([^`\n]{0,300})`|\u2018([^\u2019\n]{0,300})\u2019"
    r"|\u201c([^\u201d\n]{0,300})\u201d)(?![\w])"
)
_N_URL = _lazy(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s'\"<>]+", re.I)
_N_UUID = _lazy(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_N_DATETIME = _lazy(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b",
    re.I,
)
_N_HEXADDR = _lazy(r"\b0x[0-9a-f]+\b", re.I)
_N_PATH = _lazy(
    r"(?:(?<![\w<])[a-z]:[\\/]|(?<![\w.<>-])(?:~|\.{1,2})?[\\/])[\w.@%+=~-]+(?:[\\/][\w.@%+=~-]*)*"
    r"(?::\d+){0,2}"
    r"|(?<![\w<>/\\.-])[\w.@+-]+(?:[\\/][\w.@+-]+)+[\\/]?(?::\d+){0,2}"
    r"|(?<![\w<>/\\.-])[\w-]+(?:\.[\w-]+)*\." + _EXT + r"\b(?::\d+){0,2}",
    re.I,
)
_N_IP = _lazy(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
_N_HEXID = _lazy(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.I)
_N_TMP = _lazy(r"\b(?:tmp|temp)[\w-]{4,}\b", re.I)
_N_LONGID = _lazy(r"\b(?=[\w-]*\d)(?=[\w-]*[a-z])[\w-]{16,}\b", re.I)
_N_NUM = _lazy(r"(?<![a-z_\d.])-?\d+(?:\.\d+)*", re.I)
_N_SPACE = _lazy(r"\s+")


def _quoted(m: re.Match) -> str:
    inner = next((g for g in m.groups() if g is not None), "")
    if "/" in inner or "\\" in inner or _N_PATH.fullmatch(inner.strip()):
        return "<path>"
    return "<q>"


@functools.lru_cache(maxsize=4096)
def _normalize(line: str) -> str:
    s = line[:2000]
    s = _N_QUOTED.sub(_quoted, s)
    s = _N_URL.sub("<url>", s)
    s = _N_UUID.sub("<id>", s)
    s = _N_DATETIME.sub("<time>", s)
    s = _N_HEXADDR.sub("<hex>", s)
    s = _N_PATH.sub("<path>", s)
    s = _N_IP.sub("<ip>", s)
    s = _N_HEXID.sub("<id>", s)
    s = _N_TMP.sub("<tmp>", s)
    s = _N_LONGID.sub("<id>", s)
    s = _N_NUM.sub("<n>", s)
    s = _N_SPACE.sub(" ", s.lower()).strip()
    return s[:NORMALIZED_MAX]


def normalize_error(line: str) -> str:
    """The masked, lowercased form of an error line, equal for recurrences of one error.

    Quoted values, URLs, paths (``path:line:col``), UUIDs and hashes, hex addresses, dates and
    times, IP addresses, temp names and numbers are masked (``<q> <url> <path> <id> <hex> <time>
    <ip> <tmp> <n>``); whitespace is collapsed. Exception types and messages' words stay.
    """
    if not isinstance(line, str):
        return ""
    return _normalize(line[:2000])


# ===========================================================================================
# prompt feedback

# Verbs an instruction may start with (base forms). A sentence after "always", "never",
# "don't", "from now on", a correction marker... must start with one of them: "the test always
# fails", "never mind", "don't worry" and "from now on it gets harder" are not lessons.
VERBS = frozenset(
    """
use run add write put keep check make call avoid commit push pull test format lint ask include
update create read prefer name import export install pin wrap return raise log document comment
annotate sort split merge rebase squash tag deploy build compile validate escape quote indent
align handle catch throw mock stub patch cache store save load delete remove drop rename move copy
clean refactor reuse extract inline declare define initialize initialise set configure prefix
suffix start end finish close lock sign verify review explain mention reference link cite confirm
wait retry rerun re-run print show output respond reply answer stick go switch follow stay try
limit cap bump upgrade downgrade guard assert expose hide default treat give list group batch
sanitize sanitise redact strip trim normalize normalise convert encode decode serialize parse
benchmark profile measure specify target pass send emit leave touch edit modify change replace be
stage favour favor minimize minimise pick choose select enable disable place separate combine
double-check back type prompt recheck re-read reread open cd activate source seed migrate
generate regenerate scaffold break fix debug spell capitalize lowercase uppercase prepend append
delegate mark label bundle vendor fork clone fetch sync ship release publish announce notify
report tell summarize summarise describe stop create wire gate isolate mutate require echo force
share leak hardcode hard-code skip ignore silence suppress swallow disable bypass amend reset
upload download post reuse memoize iterate loop block await paginate retry throttle
hand let derive point route inject
""".split()
)
AUX = frozenset(
    """is are was were be been being has have had will would can could should shall
may might must does did do 's seems looks feels sounds gets got""".split()
)
PRONOUN_ONLY = frozenset(
    """it this that them these those anything something everything nothing
so too again now then here there me us him her one ones stuff things thing else myself
yourself""".split()
)
# objects that only make sense in the conversation ("option 2", "the first one", "the plan")
_DEICTIC = _lazy(
    r"^(?:(?:the|your|my|our|this|that)\s+)?(?:first|second|third|last|latter|former|previous|"
    r"original|other|current|same|plan|flow|option|version|approach|one|idea|suggestion|proposal|"
    r"solution|way|thing|answer|result|change|fix)\b|^(?:option|version|approach|choice|number|"
    r"plan|variant|v)\s*\w?\d*\b\W*$|^[a-c1-9]\W*$",
    re.I,
)

_PH_OPEN, _PH_CLOSE = "\ue000", "\ue001"
_PLACEHOLDER = _lazy(_PH_OPEN + r"(\d+)" + _PH_CLOSE)
_TAG_BLOCK = _lazy(r"<([A-Za-z][\w-]*)(?:\s[^>]*)?>.*?</\1\s*>", re.S)
_FENCE = _lazy(r"(?:^|\n)[ \t]*(```|~~~)[^\n]*\n.*?(?:\n[ \t]*\1[^\n]*(?=\n|$)|$)", re.S)
_MASK = _lazy(
    r"`[^`\n]{1,400}`"
    r"|(?<![\w/])[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s,;'\"`<>]{0,400}[^\s,;'\"`<>.)]"  # a URL: one word
    r"|(?<![\w\"])\"[^\"\n]{1,400}\"(?![\w])"
    r"|\u201c[^\u201d\n]{1,400}\u201d|\u2018[^\u2019\n]{1,400}\u2019"
    r"|(?<![\w'])'[^'\n]{1,200}'(?![\w'])"
)
_PASTED = _lazy(
    r"^(?:[ ]{4,}|\t|\s*>|\s*\$ |\s*>>> |\s*\.\.\. |\s*#!|\s*\|"
    r"|\s*(?:Traceback \(|File \"|at \S+[ (]|\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}:\d{2}|\[\d"
    r"|\[(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL)\]"
    r"|(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL|CRITICAL)\b"
    r"|npm (?:ERR!|error|warn)|E\s{2,}|[\w./-]+\.\w+:\d+"
    r"|(?:def|class|function|import|from\s+\S+\s+import|#include|package|const|var|public|private"
    r"|protected|fn|func|SELECT|INSERT|UPDATE|CREATE)\s))"
)
_CODE_LINE = _lazy(
    r"(?:[{};]\s*$|=>|\(\);|\)\s*\{|^\s*[}\])]|^\s*#\s*\w+\s*=|^\s*\w+\s*=\s*\S+;?$)"
)
_SENTENCE_SPLIT = _lazy(r"(?<=[.!?])\s+(?=\S)|\s*\n+\s*")
_BULLET = _lazy(r"^\s*(?:[-*\u2022+]|\d{1,2}[.)])\s+")
_TRAIL = _lazy(
    r"(?:[\s,;:]*(?:please|pls|thanks|thank you|thx|ok|okay|ty))*[\s.!;:,\u2014\u2013-]*$", re.I
)
_LEAD = _lazy(
    r"^(?:(?:ok(?:ay)?|so|and|also|oh|hey|btw|by the way|alright|well|one more thing|ugh|argh|sigh|"
    r"uh|um|whoa|oof|"
    r"note|important|fyi|reminder|pls|please|just|and also|oh and|general rule|rule|"
    r"as a rule|in general)\b[\s,:!.\u2014\u2013-]*)+",
    re.I,
)
_MARKER = _lazy(
    r"^(?:(?:(?:no(?:\s+no)*|nope|nah|wrong|incorrect|actually|wait|hmm+|instead|not like that|not quite|"
    r"that's not it|that is not it)\s*(?:[,.!:;\u2014\u2013]|\s-)+\s*)"
    r"|(?:(?:that|this|it)(?:'s| is| was) (?:(?:all|totally|completely) )?(?:wrong|incorrect|not right|"
    r"not correct|not what i (?:asked|wanted|meant|said)(?: for)?)"
    r"|you (?:got it wrong|misunderstood|broke (?:it|this|that))|wrong (?:file|approach|way))"
    r"(?:\s*(?:[,.!:;\u2014\u2013]|\s-)+\s*|\s*$))+",
    re.I,
)
_QUESTION_START = _lazy(
    r"^(?:should|shall|do(?!\s+not\b|n't|nt\b)|does|did|is|are|was|were|why|how|what|where|which|"
    r"who|whom|whose|would|will|am|isn't|aren't|doesn't|didn't|wouldn't|won't|can't|shouldn't|"
    r"have you|has|any idea|is there|are there)\b",
    re.I,
)
_HEDGE = _lazy(
    r"^(?:if|when|unless|maybe|perhaps|probably|possibly|i think|i guess|i wonder|i'm not sure|"
    r"not sure|it seems|apparently|in case|although|though|even if|i suppose|i believe|"
    r"i don't know|i'm wondering|i was wondering|hopefully|ideally)\b",
    re.I,
)
_ONE_OFF = _lazy(
    r"\b(?:for now|right now|this time|for the moment|temporarily|just this once|for this "
    r"(?:one|task|pr|commit|change|file|test|run)|today|yet|in this (?:function|file|test)|"
    r"until)\b",
    re.I,
)
_CONFIRM_PHRASE = (
    r"(?:perfect(?:ly)?|exactly(?: right| what i (?:wanted|needed|meant|asked for))?|"
    r"(?:that|this|it)(?:'s| is) (?:exactly |just |absolutely )?(?:right|correct|it|perfect|"
    r"what i (?:wanted|needed|meant|asked for)|much better|great|good|fine)|"
    r"(?:that|this|it|everything|all) works(?: now| perfectly| great| fine| well)?|"
    r"works (?:now|perfectly|great)|(?:that|this|it)(?: now)? looks (?:good|great|perfect|right)|"
    r"looks (?:good|great|perfect|right)(?: to me)?|lgtm|spot on|nailed it|well done|"
    r"good job|great job|nice work|great work|correct|bingo|you got it|that did it|"
    r"that fixed it|fixed(?: it)?|yes,? exactly|exactly that|much better)"
)
_CONFIRM = _lazy(
    r"^(?:(?:ok(?:ay)?|yes|yep|yeah|yup|great|nice|awesome|cool|thanks|thank you|wow|excellent|"
    r"amazing|sweet|good|right)[\s,!.\u2014\u2013-]+)*"
    + _CONFIRM_PHRASE
    + r"(?:[\s,!.\u2014\u2013-]+(?:"
    + _CONFIRM_PHRASE
    + r"|thanks|thank you|thx|great|nice|"
    r"awesome|now|!))*[\s,!.]*$",
    re.I,
)
_NEGATION = _lazy(
    r"\b(?:not|no|never|n't|but|still|except|almost|however|yet|nearly|"
    r"wrong|broken|fails?|failing|anymore)\b|n't\b",
    re.I,
)
_SUBJECT = _lazy(
    r"^(?:(?:we|you|i want you to|i'd like you to|i would like you to|i need you to|please|"
    r"let's|let us|we'll|we will|we're going to|we are going to|we're gonna|you'll|you will|"
    r"you should|you must|you need to|you have to|we should|we must|we need to|we have to|"
    r"we'd|we would|you'd|always|also|just|make sure to|make sure you)\s+)+",
    re.I,
)
_FROM_NOW = (
    r"(?:from now on|going forward|moving forward|from here on(?: out)?|henceforth|"
    r"in (?:the )?future|for future (?:work|changes|sessions)|for good)"
)
_FROM_NOW_ANY = _lazy(r"\s*\b" + _FROM_NOW + r"\b", re.I)
# "we're moving to chi and dropping gorilla/mux": a decision between two things
_MOVING = _lazy(
    r"^(?:we(?:'re| are)|i'm|i am)\s+(?:moving|switching|migrating|standardi[sz]ing)\s+"
    r"(?:over\s+)?(?:to|on)\s+(.+?)(?:(?:\s+and|,)\s+(?:dropping|ditching|replacing|"
    r"abandoning|leaving|retiring|no more)\s+(.+?))?(?:\s+in new code)?$",
    re.I | re.S,
)
# "I like f-strings better than .format()"; "for CLI output I always want rich tables, not prints"
_LIKE_BETTER = _lazy(
    r"^i\s+(?:really\s+)?(?:like|prefer)\s+(.+?)\s+(?:better|more)\s+than\s+([^,;]+)", re.I | re.S
)
_WANT_NOT = _lazy(
    r"^(?:for\s+([^,]{2,40}?),?\s+)?i\s+(?:always\s+)?want\s+([^,;]+?),\s*not\s+([^,;]+)$",
    re.I | re.S,
)
# "Hard rule in this repo: ...", "Ok, decision on the metric: ...", "Before you commit: ...": a
# short label that says what the rest of the sentence is
_LABEL = _lazy(r"^([^:\u2014\u2013" + _PH_OPEN + r"]{2,60}?)\s*:\s+(.+)$", re.S)
_RULE_LABEL = _lazy(
    r"\b(?:rules?|conventions?|polic(?:y|ies)|style|heads[- ]up|note|reminder|remember|"
    r"standards?|guidelines?|principles?|requirements?|always|never)\b|" + _FROM_NOW,
    re.I,
)
_DECISION_LABEL = _lazy(
    r"\b(?:decision|decided|decide|settle[ds]?|verdict|choice|final call|ruling)\b", re.I
)
_STEP_LABEL = _lazy(r"^(?:before|after|when(?:ever)?)\s+\w", re.I)
_REMEMBER = _lazy(r"^(?:remember|keep in mind|don't forget|note)(?:\s+that)?\s+(?=\w)", re.I)
_SCOPE_LABEL = _lazy(
    r"\b(?:for|in|on)\s+(?:every|all|each|any)\s+(.{2,40}?)\s*(?:" + _FROM_NOW + r")?$", re.I
)
# a rule stated about the project rather than as an instruction: "tests must never call the
# real API", "in this codebase tests are always table-driven", "order ids are UUIDv7"
_MODAL_RULE = _lazy(
    r"\b(?:must|should|shall|needs? to|has to|have to)\s+(?:never|always|not|only)\b"
    r"|\b(?:must|has to|have to)\b(?!\s+(?:have\b|'ve\b|be\s+\w+ing\b))",
    re.I,
)  # ("it
#                                                                             must be failing")
_ALWAYS_NEVER = _lazy(r"\b(?:always|never)\b", re.I)
_IN_PROJECT = _lazy(
    r"^in (?:this|our|the) (?:repo|repository|project|codebase|code base|team|"
    r"service|app)\b",
    re.I,
)
_STATEMENT = _lazy(
    r"^(?:in (?:this|our|the) [\w ]{2,30}?,?\s+)?(?:the\s+|our\s+|all\s+|every\s+)?"
    r"[\w./#<>-]+(?:\s+[\w./#<>-]+){0,6}\s+(?:(?:must|should|shall|need|needs|has|have|"
    r"are|is|go|goes|get|gets|live|lives|stay|stays)\b|(?:always|never)\s+\w)",
    re.I,
)
_DASH_CLAUSE = _lazy(r"\s+[\u2014\u2013]\s+|\s+-\s+")
_FROM_NOW_LEAD = _lazy(r"^" + _FROM_NOW + r"\b[\s,:;\u2014\u2013-]*(.+)$", re.I | re.S)
_FROM_NOW_TRAIL = _lazy(r"^(.+?)[\s,;\u2014\u2013-]+" + _FROM_NOW + r"\s*$", re.I | re.S)
_LETS = _lazy(
    r"^(?:let's|let us|lets|we'll|we will|we're going to|we are going to|"
    r"we're gonna)\s+(go with|stick with|stick to|standardi[sz]e on|"
    r"settle on|adopt|keep using|stay with|use)\s+(.+)$",
    re.I | re.S,
)
# "let's do vite", "let's also migrate to AudioWorklet", "let's keep the file name", "let's make
# it cross-browser": a choice for the project, unlike "let's update the readme" (a task)
_LETS_MORE = _lazy(
    r"^(?:let's|let us|lets)\s+(?:also\s+|just\s+|then\s+|now\s+)?"
    r"(do|switch to|migrate to|move to|keep|make (?:it|this|the \w+))\s+(.+)$",
    re.I | re.S,
)
# "I don't want to make assumptions about people's env", "I'd like to keep it 3 simple files"
_WANT_TO = _lazy(
    r"^(?:but\s+|and\s+|so\s+)?(i|we)(?:\s+(do not|don't|dont)\s+(?:really\s+)?want"
    r"|(?:'d|\s+would)\s+(?:like|prefer)|\s+(?:really\s+)?want)\s+(?:you\s+|us\s+)?to\s+(.+)$",
    re.I | re.S,
)
_WANT_VERBS = frozenset("keep use stick stay avoid".split())
_NO_NEEDED = _lazy(
    r"^no\s+(.{2,50}?)\s+(?:is\s+|are\s+)?(?:needed|required|necessary)$", re.I | re.S
)
# "I deleted config.ru": a fact about the project the user changed themselves
_I_REMOVED = _lazy(
    r"^i\s+(?:have\s+|'ve\s+|just\s+|already\s+)*(deleted|removed|renamed|moved)\s+"
    r"(?:the\s+)?([\w.-]*\w\.\w{1,8}|[\w.-]+/[\w./-]*)(?=$|[\s,;])(.*)$",
    re.I | re.S,
)
# "Run bd show X to see the issue details": how this project's tools are used
_RUN_TO = _lazy(
    r"^(?:please\s+)?run\s+(`?)([a-z][\w.-]*(?:\s+[\w.:/=-]+){0,4}?)\1\s+to\s+"
    r"(see|find|get|list|show|view|look up)\s+(.{4,80})$",
    re.I | re.S,
)
_CLAUSE_CUT = _lazy(
    r"\s*(?:,\s*|\s)(?:but|otherwise|and then|so that|except)\b.*$|\s*[;(].*$", re.I | re.S
)
_CLAUSES = _lazy(r",\s*(?:and|but|so)\s+|\s+but\s+|;\s*", re.I)
_ASSENT = _lazy(
    r"^(?:(?:yes|yeah|yep|ok(?:ay)?|sure|fine|great|good|alright|perfect|cool)"
    r"(?:\s+please)?\s*[,.!]\s*)+(?:and\s+|then\s+|so\s+)?(?=\S)",
    re.I,
)
_PROPERTY = _lazy(
    r"^[\w-]*-[\w-]+$|^\w+(?:able|ible|ive|agnostic|compatible|friendly|safe|proof|"
    r"native|less)$",
    re.I,
)
# "the v3 upgrade is already done", "the GitHub link is <url>": facts the user states so the
# agent does not redo or look up what is known
_ALREADY = _lazy(
    r"^(?:the|our)\s+(.{2,50}?)\s+(?:is|are|was|were|has been|have been)\s+already\s+"
    r"(done|fixed|implemented|merged|finished|complete|completed|in place|upgraded|"
    r"migrated|deployed|installed)$",
    re.I | re.S,
)
_LINK_IS = _lazy(
    r"^(?:the|our)\s+([\w .'-]{2,40}?)\s+(?:is|lives at|is at)\s+("
    + _PH_OPEN
    + r"\d+"
    + _PH_CLOSE
    + r")$",
    re.I | re.S,
)
_STILL_BROKEN = _lazy(
    r"^(.{3,80}?)\s+still\s+(?:does not|doesn't|doesnt|do not|don't|isn't|is not|"
    r"won't|will not)\s+work\b",
    re.I | re.S,
)
# "I changed my mind a bit about it and would like to combine the logic: take the least nested
# path first, but ...": a choice the user revises is a decision by its nature (they thought about
# it twice); the rule is what follows the colon (without one, "I changed my mind and would like
# to see the tests first" is a request for this turn, and the other rules judge it)
_REVISED = _lazy(
    r"\b(?:i|we)(?:'ve| have)? changed (?:my|our) minds?\b([^:?]{0,120}):\s+(.{8,300})$",
    re.I | re.S,
)
_PROJECT_SCOPE = _lazy(
    r"\s+(?:for|in|across)\s+(?:this|the|our)\s+(?:repo|repository|project|codebase|"
    r"app|team)\s*$",
    re.I,
)
_NOT_A_CHOICE = frozenset(
    """next previous other another step steps task tasks part phase section
item question bug issue point one ones rest remaining same""".split()
)
_GENERIC_NEEDS = frozenset(
    """change changes action actions update updates fix fixes more further help
worries worry rush need problem problems reply response answer""".split()
)
# a decision's closing word: "Let's go with X — decided.", "We'll use Y; agreed."
_SAID_SO = _lazy(r"\s*(?:[,;:\u2014\u2013]|\s-)\s*(?:decided|agreed|settled|that's final)$", re.I)
_GO_WITH = _lazy(
    r"^(?:we(?:'re| are|'ll| will)?|i(?:'ll| will)?)\s+(?:go|going)\s+with\s+(.+)$", re.I | re.S
)
_DECIDED = _lazy(
    r"^(?:we|i)(?:'ve| have)?\s+(?:decided|agreed|settled)\s+(?:(to|on|that)\s+)(.+)$"
    r"|^(?:the\s+)?decision(?:\s+is)?\s*[:\u2014\u2013-]\s*(?:to\s+)?(.+)$",
    re.I | re.S,
)
_RULE = _lazy(
    r"^(?:(?:in this (?:repo|repository|project|codebase|code base|team)|here|in general|"
    r"generally),?\s+)?"
    r"(?:(?:you|we)\s+(?:should|must|need to|have to|gotta)\s+|(?:make sure|be sure|remember)"
    r"\s+(?:to|that you|you|that we|we)\s+|we\s+|please\s+)?"
    r"(always|never)\s+(.+)$",
    re.I | re.S,
)
_NEVER_EVER = _lazy(r"^(?:please\s+)?(?:don't|do not|dont)\s+ever\s+(.+)$", re.I | re.S)
_I_ALWAYS = _lazy(r"^i\s+(always|never)\s+(.+)$", re.I | re.S)
_PREFER = _lazy(
    r"^(i|we)(?:'d| would)?\s+(?:really\s+|strongly\s+|much\s+|generally\s+|"
    r"usually\s+)?prefer\s+(.+)$|^(my|our) preference is(?: to)?\s+(.+)$",
    re.I | re.S,
)
_PREFER_BARE = _lazy(
    r"^(?:please\s+)?prefer\s+(.+\s(?:over|rather than|instead of)\s.+)$", re.I | re.S
)
_I_LIKE = _lazy(r"^i\s+(?:really\s+)?(?:like|love)\s+to\s+(.+)$", re.I | re.S)
_DONT = _lazy(r"^(?:please\s+)?(?:don't|do not|dont)\s+(.+)$", re.I | re.S)
_STOP = _lazy(r"^(?:please\s+)?stop\s+(\w+ing)\b(.*)$", re.I | re.S)
_AVOID = _lazy(r"^(?:please\s+)?avoid\s+(.+)$", re.I | re.S)
# "don't use npm here, always use pnpm", "stop using print, use logging": one verb, two objects
_SWAP = _lazy(
    r"^(?:please\s+)?(don't|do not|dont|never|stop)\s+([\w-]+)\s+(.+?)\s*"
    r"(?:[,;]|\s[\u2014\u2013-])\s*(?:and\s+|but\s+)?(?:(?:always|instead|just|rather|"
    r"please)\s+)*([\w-]+)\s+(.+?)(?:\s+instead)?$",
    re.I | re.S,
)
# where a "don't use A in this repo" object ends and its qualifier starts
_QUALIFIER = _lazy(
    r"\s+(?=(?:in|for|when|on|inside|within|during|across|throughout|while|"
    r"everywhere|anywhere)\b)",
    re.I,
)
_RATHER = _lazy(
    r"^(i|we)(?:'d| would)\s+(?:much\s+)?rather\s+(?:(?:you|we)\s+)?(not\s+)?(.+?)"
    r"(?:\s+than\s+(.+))?$",
    re.I | re.S,
)
# a bare contrast stated as a rule: "Use yarn, not npm" (the comma marks the contrast)
_USE_NOT = _lazy(r"^(use|prefer|pick|choose)\s+([^,;]+?),\s*not\s+([^,;]+)$", re.I | re.S)
# "it should be UTC timestamps everywhere, not local time"
_SHOULD_BE = _lazy(
    r"^(?:it|this|that|they|these|those|everything|all)\s+(?:should|must|needs? to|"
    r"has to|have to|ought to)\s+be\s+([^,;]+?),\s*(?:and\s+)?not\s+([^,;]+)$",
    re.I | re.S,
)
# "it should be faster, not slower" names no thing to use
_QUALITIES = frozenset(
    """faster slower better worse bigger smaller simpler shorter longer easier
harder cleaner clearer more less fine ok okay good bad right wrong correct true false possible
enough done different same higher lower""".split()
)
_DO_PREFIX = _lazy(r"^(?:(?:and|also|then|please|always|never|don't|do not|dont)\s+)*", re.I)
# words that tie an object to the task at hand ("use a dict here"): a one-off, not a lesson
_TASK_BOUND = _lazy(r"\b(?:here|there|this|that|these|those|it|now)\b", re.I)
_WHENEVER = _lazy(
    r"^(?:whenever|every time|each time|any ?time)\s+(you|we)\s+([^,]{2,80}),\s*"
    r"(?:please\s+)?(?:(always)\s+|(never)\s+)?(.+)$",
    re.I | re.S,
)
_BEFORE = _lazy(
    r"^(before|after)\s+([^,]{2,60}),\s*(?:please\s+)?(?:you\s+should\s+)?"
    r"(always|never)\s+(.+)$",
    re.I | re.S,
)
_OVER = _lazy(r"^(.+?)\s+(?:over|rather than|instead of|more than|to)\s+(.+)$", re.I | re.S)
_NOT_B = _lazy(
    r"^(Use|Prefer|Keep|Go with|Stick with|Choose|Pick)\s+(.+?)(?<![,\s])\s+not\s+"
    r"(?!(?:be|to|just|only|the\s+other)\b)(.+)$",
    re.S,
)
_AUX_BEFORE_NOT = _lazy(
    r"\b(?:is|are|was|were|do|does|did|should|must|can|will|would|it's|"
    r"that's|could)\s*$",
    re.I,
)
_WORD = _lazy(r"[\w'\-" + _PH_OPEN + _PH_CLOSE + r"]+")


def _mask(text: str) -> tuple[str, list[str]]:
    saved: list[str] = []

    def keep(m: re.Match) -> str:
        saved.append(m.group(0))
        return f"{_PH_OPEN}{len(saved) - 1}{_PH_CLOSE}"

    return _MASK.sub(keep, text), saved


def _unmask(text: str, saved: list[str]) -> str:
    if _PH_OPEN not in text:
        return text
    return _PLACEHOLDER.sub(
        lambda m: saved[int(m.group(1))] if int(m.group(1)) < len(saved) else "", text
    )


def _sentences(text: str) -> list[str]:
    """Sentences of a prompt: code blocks, tags, quoted lines and pasted logs removed."""
    text = _TAG_BLOCK.sub("\n", text)
    text = _FENCE.sub("\n", text)
    out = []
    for line in text.split("\n"):
        if (
            not line.strip()
            or _PASTED.match(line)
            or _CODE_LINE.search(line)
            or _EXC.match(line.strip())
            and not _EXC_BARE.match(line.strip())
        ):
            continue
        line = _BULLET.sub("", line)
        for sentence in _SENTENCE_SPLIT.split(line):
            out.extend(_clauses(sentence))
    return out


_ASIDE = re.compile(r"\s*\(([^()\n]{8,240})\)")
_ASIDE_LEAD = re.compile(r"^(?:but|and|or|also|though)\s+", re.I)


def _clauses(sentence: str) -> list[str]:
    """A sentence, then each aside in it that is a clause (three words or more) as a sentence
    of its own: a task often states its rules there ("Create a library (no Python bindings
    needed)", "(but keep the Justfile)"); "(uuid.NewV7)" stays only in its sentence."""
    main = sentence.strip()
    asides = [_ASIDE_LEAD.sub("", m.group(1).strip()) for m in _ASIDE.finditer(main)]
    return ([main] if main else []) + [aside for aside in asides if len(aside.split()) >= 3]


def _words_of(text: str) -> list[str]:
    return _WORD.findall(text)


def _imperative(rest: str) -> str | None:
    """``rest`` when it reads as an instruction ("run the tests first"), else None."""
    rest = rest.strip(" \t,:;\u2014\u2013-")
    words = _words_of(rest)
    if len(words) < 2:
        return None
    first = words[0].lower()
    if first not in VERBS and not any(part in VERBS for part in first.split("-")):
        return None
    second = words[1].lower()
    if second in AUX or second.endswith("'s") and second != "let's":
        return None
    content = [w for w in words[1:] if w.lower() not in PRONOUN_ONLY]
    if not content or second in ("that", "this", "those", "these") and len(words) <= 3:
        return None  # "delete that file": only meaningful in the conversation
    if any(w.lower() in ("myself", "yourself") for w in words):
        return None  # what the user does, not an instruction
    return rest


def _gerund_base(word: str) -> str | None:
    w = word.lower()
    if not w.endswith("ing") or len(w) < 5:
        return None
    stem = w[:-3]
    for cand in (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else None):
        if cand and cand in VERBS:
            return cand
    return None


def _finish(lesson: str, saved: list[str]) -> str:
    lesson = _unmask(lesson, saved)
    lesson = _TRAIL.sub("", lesson.strip())
    lesson = re.sub(r"\s+", " ", lesson).strip()
    if not lesson:
        return ""
    lesson = lesson[0].upper() + lesson[1:]
    m = _NOT_B.match(lesson)
    if m and not _AUX_BEFORE_NOT.search(m.group(2)):
        lesson = f"{m.group(1)} {m.group(2)}, not {m.group(3)}"
    if len(lesson) > LESSON_MAX:  # a whole clause, never a cut mid-sentence with "…"
        cuts = [
            m.start()
            for m in re.finditer(r"[,;:]\s|\s[\u2014\u2013-]\s", lesson)
            if 40 <= m.start() <= LESSON_MAX
        ]
        lesson = lesson[: cuts[-1]].rstrip(" ,;:-") if cuts else ""
    return lesson


def _strip_subject(rest: str) -> str:
    rest = _SUBJECT.sub("", rest.strip())
    m = re.match(
        r"^(using|sticking with|going with|switching to|moving to)\s+(.+)$", rest, re.I | re.S
    )
    if m:
        verb = {
            "using": "use",
            "sticking with": "stick with",
            "going with": "go with",
            "switching to": "use",
            "moving to": "use",
        }[m.group(1).lower()]
        rest = f"{verb} {m.group(2)}"
    return rest


def _object_ok(text: str, most: int = 8) -> bool:
    """A thing named on its own ("pnpm", "the logging module"), not "it" or "the first one"."""
    words = _words_of(text)
    return (
        0 < len(words) <= most
        and words[0].lower() not in PRONOUN_ONLY
        and not _DEICTIC.match(text.strip())
    )


def _swap_lesson(text: str) -> tuple[str, str] | None:
    """(trigger, "Use pnpm in this repo, not npm") from "don't use npm in this repo, always use
    pnpm": the lesson names what to do first and keeps what it replaces, not the user's wording.
    None when the sentence has another shape; lesson "" when it only makes sense in the
    conversation ("don't use it, use the other one")."""
    m = _SWAP.match(text)
    if not m:
        return None
    trigger, verb, old, verb2, new = (g.strip() for g in m.groups())
    base = _gerund_base(verb) if trigger.lower() == "stop" else verb.lower()
    if base not in VERBS or verb2.lower() != base:
        return None
    if not _object_ok(new) or not _object_ok(old):
        return trigger, ""
    old, *qualifier = _QUALIFIER.split(old, 1)
    if qualifier and qualifier[0].lower() not in new.lower():
        new = f"{new} {qualifier[0]}"
    return trigger, f"{base.capitalize()} {new}, not {old}"


def _decision_body(rest: str) -> str | None:
    rest = _strip_subject(rest)
    rest = re.sub(r"^(?:have\s+|'ve\s+)?(?:decided|agreed)\s+to\s+", "", rest, flags=re.I)
    swapped = _swap_lesson(rest)
    if swapped:
        return swapped[1] or None
    never = re.match(r"^(never|don't ever|do not ever|don't|do not)\s+(.+)$", rest, re.I | re.S)
    if never:
        body = _imperative(never.group(2))
        if not body:
            return None
        word = "Never" if "ever" in never.group(1).lower() else "Don't"
        return f"{word} {body}"
    m = re.match(r"^(go with|stick with|stick to)\s+(.+)$", rest, re.I | re.S)
    if m:
        return rest if _words_of(m.group(2)) and not _DEICTIC.match(m.group(2).strip()) else None
    return _imperative(rest)


def _prefer_lesson(obj: str) -> str | None:
    obj = obj.strip()
    m = re.match(r"^not\s+to\s+(.+)$", obj, re.I | re.S)
    if m:
        body = _imperative(m.group(1))
        return f"Don't {body}" if body else None
    m = re.match(r"^(?:to|that you|that we|you)\s+(.+)$", obj, re.I | re.S)
    if m:
        return _imperative(_strip_subject(m.group(1)))
    words = _words_of(obj)
    if (
        not words
        or words[0].lower() in PRONOUN_ONLY
        or words[0].lower() in ("when", "if", "that", "whatever", "not", "it's", "this", "that's")
        or _DEICTIC.match(obj)
    ):
        return None
    m = _OVER.match(obj)
    if m:
        a, b = m.group(1).strip(), m.group(2).strip()
        base = _gerund_base(_words_of(a)[0]) if _words_of(a) else None
        if base == "use":
            a = a.split(None, 1)[1] if len(a.split(None, 1)) > 1 else a
        elif base:
            return None
        if not a or not b or a.lower() in PRONOUN_ONLY or b.lower() in PRONOUN_ONLY:
            return None
        return f"Use {a} instead of {b}"
    base = _gerund_base(words[0])
    if base == "use" and len(words) > 1:
        return f"Use {obj.split(None, 1)[1]}"
    return f"Prefer {obj}"


# "keep the Justfile - update it to run Rust tests instead": a thing that must stay
_KEEP_THING = _lazy(
    r"^keep\s+((?:the|our|this|these|all|every|my)\s+[^,;:\u2014\u2013-]{2,60}?)"
    r"\s*(?:(?:\s-|[,;:\u2014\u2013])\s*(.{0,100}))?$",
    re.I,
)
_KEEP_NOT = _lazy(
    r"^(?:the|our|this|my)\s+(?:same|good|momentum|pace|conversation)\b|"
    r"\b(?:going|in mind|in sync|track|an eye|up|trying)\b",
    re.I,
)
# "Don't stop until all functions are ported, tests pass, and you have 100% coverage"
_UNTIL_DONE = _lazy(
    r"^(?:don't|do not|never)\s+(?:stop|finish|quit|end)\s+until\s+(.{8,160})$", re.I
)


def _classify(body: str, corrected: bool) -> tuple[str, str, bool] | None:
    """(kind, lesson, user_scope) for one sentence with markers stripped, or None."""
    m = _KEEP_THING.match(body)
    if m and not _KEEP_NOT.search(m.group(1)):
        then = _imperative(m.group(2) or "")
        return ("rule", f"Keep {m.group(1).strip()}" + (f"; {then}" if then else ""), False)
    m = _WHENEVER.match(body)
    if m:
        action = _imperative(m.group(5))
        if action:
            never = "never " if m.group(4) else ""
            return (
                "correction" if corrected else "rule",
                f"When {m.group(1).lower()} {m.group(2).strip()}, {never}{action}",
                False,
            )
        return None
    m = _BEFORE.match(body)
    if m:
        action = _imperative(m.group(4))
        if action:
            never = "never " if m.group(3).lower() == "never" else ""
            return (
                "correction" if corrected else "rule",
                f"{m.group(1).capitalize()} {m.group(2).strip()}, {never}{action}",
                False,
            )
        return None
    m = _FROM_NOW_LEAD.match(body) or _FROM_NOW_TRAIL.match(body)
    if m:
        lesson = _decision_body(m.group(1))
        return ("decision", lesson, False) if lesson else None
    m = _MOVING.match(body)
    if m and _object_ok(m.group(1), 8) and (not m.group(2) or _object_ok(m.group(2), 6)):
        old = f", not {m.group(2).strip()}" if m.group(2) else ""
        return ("decision", f"Use {m.group(1).strip()}{old}", False)
    m = _LIKE_BETTER.match(body)
    if m and _object_ok(m.group(1), 6) and _object_ok(m.group(2), 6):
        return ("preference", f"Use {m.group(1).strip()} instead of {m.group(2).strip()}", True)
    m = _WANT_NOT.match(body)
    if m and _object_ok(m.group(2), 6) and _object_ok(m.group(3), 6):
        where = f" for {m.group(1).strip()}" if m.group(1) else ""
        return ("preference", f"Use {m.group(2).strip()}{where}, not {m.group(3).strip()}", True)
    m = _LETS.match(body)
    if m:
        verb = m.group(1).lower()
        obj = m.group(2).strip()
        named = _DASH_CLAUSE.split(obj, 1)
        if len(named) == 2 and _DEICTIC.match(named[0].strip()):
            obj = named[1].strip()  # "let's go with option B — cursor pagination"
        if (
            not _object_ok(obj, 40)
            or verb == "use"
            and (_TASK_BOUND.search(obj) or re.search(r"\bto\s+\w", obj))
        ):
            return None  # "let's use a dict here", "let's use X to add Y": the task at hand
        head = {"go with": "Go with", "stick with": "Stick with", "stick to": "Stick to"}.get(
            verb, "Use"
        )
        return ("decision", f"{head} {obj}", False)
    m = _I_REMOVED.match(body)
    if m:
        rest = m.group(3).strip(" ,;.")
        if rest and not rest.lower().startswith(
            ("and ", "as ", "so ", "because ", "since ", "which ", "but ")
        ):
            return None  # "I removed x.py from the import list": not the file
        return ("fact", f"`{m.group(2)}` was {m.group(1).lower()} by the user", False)
    m = _RUN_TO.match(body)
    if m:
        words = _words_of(m.group(2))
        if (
            not words
            or words[0].lower()
            in _DETERMINERS
            | PRONOUN_ONLY
            | VERBS - {"make", "test", "build", "format", "lint", "check"}
            or _TASK_BOUND.search(m.group(4))
        ):
            return None  # "run the tests to see", "run it to check that"
        goal = _CLAUSE_CUT.sub("", m.group(4)).strip(" ,.")
        if len(_words_of(goal)) < 2:
            return None
        return ("rule", f"Run `{m.group(2).strip()}` to {m.group(3).lower()} {goal}", False)
    m = _LETS_MORE.match(body)
    if m:
        return _lets_more(m.group(1).lower(), m.group(2))
    m = _WANT_TO.match(body)
    if m:
        return _want_to(m.group(1).lower(), bool(m.group(2)), m.group(3))
    m = _NO_NEEDED.match(body)
    if m:
        words = [w.lower() for w in _words_of(m.group(1))]
        if (
            words
            and len(words) <= 5
            and not set(words) & (_GENERIC_NEEDS | PRONOUN_ONLY)
            and words[0] not in _DETERMINERS
        ):
            return ("decision", f"No {m.group(1).strip()} needed", False)
        return None
    m = _GO_WITH.match(body)
    if m:
        obj = m.group(1).strip()
        if (
            _words_of(obj)
            and _words_of(obj)[0].lower() not in PRONOUN_ONLY
            and not _DEICTIC.match(obj)
        ):
            return ("decision", f"Go with {obj}", False)
        return None
    m = _DECIDED.match(body)
    if m:
        how, obj = m.group(1), m.group(2) or m.group(3)
        if how and how.lower() == "on":
            words = _words_of(obj)
            return (
                ("decision", f"Use {obj}", False)
                if words and words[0].lower() not in PRONOUN_ONLY and not _DEICTIC.match(obj)
                else None
            )
        lesson = _decision_body(obj)
        return ("decision", lesson, False) if lesson else None
    swapped = _swap_lesson(body)
    if swapped:
        trigger, lesson = swapped
        kind = "rule" if trigger.lower() == "never" and not corrected else "correction"
        return (kind, lesson, False) if lesson else None
    m = _RATHER.match(body)
    if m:
        lesson = _rather_lesson(m.group(2), m.group(3), m.group(4))
        return ("preference", lesson, m.group(1).lower() == "i") if lesson else None
    m = _NEVER_EVER.match(body)
    if m:
        action = _imperative(m.group(1))
        return ("correction" if corrected else "rule", f"Never {action}", False) if action else None
    m = _I_ALWAYS.match(body)
    if m:
        action = _imperative(m.group(2))
        if not action:
            return None
        return ("preference", f"Never {action}" if m.group(1).lower() == "never" else action, True)
    m = _RULE.match(body)
    if m:
        action = _imperative(m.group(2))
        if not action:
            return None
        lesson = f"Never {action}" if m.group(1).lower() == "never" else action
        return ("correction" if corrected else "rule", lesson, False)
    m = _PREFER_BARE.match(body)
    if m:
        lesson = _prefer_lesson(m.group(1))
        return ("preference", lesson, False) if lesson and lesson.startswith("Use ") else None
    m = _PREFER.match(body)
    if m:
        who = (m.group(1) or m.group(3) or "").lower()
        lesson = _prefer_lesson(m.group(2) or m.group(4) or "")
        return ("preference", lesson, who in ("i", "my")) if lesson else None
    m = _I_LIKE.match(body)
    if m:
        action = _imperative(m.group(1))
        return ("preference", action, True) if action else None
    m = _DONT.match(body)
    if m:
        action = _imperative(m.group(1))
        return ("correction", f"Don't {action}", False) if action else None
    m = _STOP.match(body)
    if m:
        base = _gerund_base(m.group(1))
        rest = m.group(2).strip()
        if base and _imperative(f"{base} {rest}"):
            return ("correction", f"Stop {m.group(1)} {rest}".strip(), False)
        return None
    m = _AVOID.match(body)
    if m:
        obj = m.group(1).strip()
        words = _words_of(obj)
        if words and words[0].lower() not in PRONOUN_ONLY and (len(words) >= 2 or _PH_OPEN in obj):
            return ("correction", f"Avoid {obj}", False)
        return None
    if corrected:
        action = _imperative(_strip_subject(body))
        if action:
            return ("correction", action, False)
        m = _SHOULD_BE.match(body)
        if (
            m
            and _object_ok(m.group(1))
            and _object_ok(m.group(2))
            and m.group(1).split()[0].lower() not in _QUALITIES
        ):
            return ("correction", f"Use {m.group(1).strip()}, not {m.group(2).strip()}", False)
    m = _USE_NOT.match(body)
    if m and _object_ok(m.group(2), 4) and _object_ok(m.group(3), 4):
        return (
            "preference",
            f"{m.group(1).capitalize()} {m.group(2).strip()}, not {m.group(3).strip()}",
            False,
        )
    return None


def _choice(obj: str, most: int) -> str | None:
    """The object of a choice, cut before a following clause ("the name of the py file but
    change ..." → "the name of the py file"), or None when it names no choice: a pronoun, the
    thing at hand ("this", "here"), the next step of the task."""
    obj = _CLAUSE_CUT.sub("", obj.strip()).strip(" ,.;:!")
    words = [w.lower() for w in _words_of(obj)]
    if not words or len(words) > most or words[0] in PRONOUN_ONLY and len(words) == 1:
        return None
    if set(words) & (_NOT_A_CHOICE | {"here", "there", "now", "this", "that", "these", "those"}):
        return None
    return obj


def _lets_more(verb: str, rest: str) -> tuple[str, str, bool] | None:
    """ "let's do vite" → Use vite; "let's migrate to X" → Migrate to X; "let's keep the file
    name" → Keep the file name; "let's make it cross-browser" → Make it cross-browser."""
    if verb == "do":
        obj = _choice(rest, 3)
        if not obj or _words_of(obj)[0].lower() in _DETERMINERS | VERBS:
            return None  # "let's do it", "let's do the tests": the task at hand
        return ("decision", f"Use {obj}", False)
    if verb == "keep":
        obj = _choice(rest, 10)
        first = _words_of(obj)[0].lower() if obj else ""
        if (
            not obj
            or first.endswith("ing")
            or first in ("in", "on", "going", "trying")
            or len(_words_of(obj)) < 2
        ):
            return None  # "let's keep going", "keep in mind", "keep it"
        return ("decision", f"Keep {obj}", False)
    if verb.startswith("make"):
        obj = _choice(rest, 3)
        if (
            not obj
            or len(_words_of(obj)) != 1
            or not _PROPERTY.match(obj)
            or obj.lower() in _QUALITIES
            or obj.lower() in VERBS
        ):
            return None  # "let's make it work", "let's make it faster"
        return ("decision", f"{verb[0].upper()}{verb[1:]} {obj}", False)
    scope = _PROJECT_SCOPE.search(rest)  # "... for this repo": where the choice holds
    obj = _choice(rest[: scope.start()] if scope else rest, 6)  # switch to / migrate to / move to
    if not obj or _DEICTIC.match(obj):
        return None
    where = f" {scope.group(0).strip()}" if scope else ""
    return ("decision", f"{verb[0].upper()}{verb[1:]} {obj}{where}", False)


def _want_to(who: str, negated: bool, rest: str) -> tuple[str, str, bool] | None:
    """ "I don't want to make assumptions about people's env" → Don't make assumptions about
    people's env; "I'd like to keep it the same 3 simple files" → Keep it the same 3 simple
    files (only choices that last: keep, use, stick, stay, avoid — "I want to fix the bug" is
    the task at hand)."""
    action = _imperative(_CLAUSE_CUT.sub("", rest) if not negated else rest.strip())
    if not action or re.search(
        r"\b(?:here|there|this|that|these|those|now|yet|anymore)\b", action, re.I
    ):
        return None
    if negated:
        return ("preference", f"Don't {action}", False)
    if _words_of(action)[0].lower() not in _WANT_VERBS:
        return None
    return ("preference", action, False)


def _labelled(body: str, corrected: bool) -> tuple[str, str, bool] | None:
    """A rule or decision that the patterns of _classify miss: after a label ("Hard rule in
    this repo: seed everything with random_state=42", "Ok, decision on the metric: ...",
    "Before you commit: ..."), with "from now on" anywhere in it, or stated about the project
    ("tests must never call the real API")."""
    label = None
    remember = _REMEMBER.match(body)  # "remember that all changes have to go through CI"
    if remember:
        label, body = "remember", body[remember.end() :]
    m = _LABEL.match(body) if not remember else None
    if m and len(_words_of(m.group(1))) <= 9:
        label, body = m.group(1).strip(), m.group(2).strip()
    decided = bool(label and _DECISION_LABEL.search(label))
    ruled = bool(label and (_RULE_LABEL.search(label) or _STEP_LABEL.match(label)))
    timeless = bool(_FROM_NOW_ANY.search(body))
    if timeless:
        body = _FROM_NOW_ANY.sub("", body).strip(" ,")
    if not (label or timeless or _MODAL_RULE.search(body) or _IN_PROJECT.match(body)):
        return None
    kind = (
        "correction" if corrected else "decision" if decided or timeless and not ruled else "rule"
    )
    found = (
        _classify(body, corrected) or _classify(_DASH_CLAUSE.split(body, 1)[0], corrected)
        if label or timeless
        else None
    )
    lesson = (
        found[1]
        if found
        else _decision_body(body)
        or _stated(
            body, decided or timeless, decided or ruled or timeless or bool(_IN_PROJECT.match(body))
        )
    )
    if not lesson:
        return None
    if label and (_STEP_LABEL.match(label) or _SCOPE_LABEL.search(label)):
        scope = _SCOPE_LABEL.search(label)
        lead = f"for every {scope.group(1)}" if scope else label
        lesson = f"{lead[0].upper()}{lead[1:]}, {lesson[0].lower()}{lesson[1:]}"
    elif not (label and (decided or ruled) or timeless or found):
        if not (_MODAL_RULE.search(body) or _IN_PROJECT.match(body) and _ALWAYS_NEVER.search(body)):
            return None  # (a bare label, "Next up: ...": no rule in it)
    return kind, lesson, False


_DETERMINERS = frozenset("the this that these those its my your his her their a an".split())


def _stated(body: str, decided: bool, signalled: bool) -> str | None:
    """The rule a statement makes ("Tests must never talk to the real API"; with ``decided``,
    "Order ids are UUIDv7"), up to its first dashed clause unless that one is an instruction
    too; None when it is no statement about a thing (a pronoun for subject) or, unless
    ``signalled`` (a label, "from now on", "in this repo"), about the thing at hand."""
    if not _STATEMENT.match(body) or _words_of(body)[0].lower() in PRONOUN_ONLY | {
        "i",
        "you",
        "he",
        "she",
        "they",
        "we",
    }:
        return None
    if not (decided or signalled or _MODAL_RULE.search(body) or _ALWAYS_NEVER.search(body)):
        return None
    if not signalled and _words_of(body)[0].lower() in _DETERMINERS:
        return None  # "the function should always return a list": the
    #                                           thing at hand, not a rule
    first, *rest = _DASH_CLAUSE.split(body, 1)
    return body if rest and _imperative(_DO_PREFIX.sub("", rest[0])) else first


def _rather_lesson(negated: str | None, action: str, other: str | None) -> str | None:
    """ "I'd rather you use pathlib than os.path" → "Use pathlib instead of os.path"."""
    action = _imperative(action) or ""
    if not action or _TASK_BOUND.search(action) or other and not _object_ok(other):
        return None
    if negated:
        return f"Don't {action}"
    if not other:
        return action
    if action.lower().startswith("use "):
        return f"Use {action[4:]} instead of {other.strip()}"
    return f"{action} rather than {other.strip()}"


def _instructions_only(lesson: str) -> str:
    """The lesson up to its first ";" or dashed clause that is no instruction: in "use the key K
    only in maps; twilio token T; jwt J" only the first clause is a rule ("...; write raw SQL"
    stays), and in "seed everything with 42 — splits, CV — I need runs reproducible" the reason
    goes."""
    parts = re.split(r"(;|\s+[\u2014\u2013]\s+|\s+-\s+)", lesson)  # clause, separator, ...
    kept = parts[0]
    for separator, clause in zip(parts[1::2], parts[2::2]):
        if not _imperative(_DO_PREFIX.sub("", clause.strip())):
            break
        kept += separator + clause
    return kept


def _facts(body: str, saved: list[str]) -> list[str]:
    """Facts the user states about the project's state: "the v3 upgrade is already done", "the
    GitHub link is <url>" (a link only); each part of "X and Y" on its own."""
    out = []
    for part in re.split(r"\s+and\s+", _CLAUSE_CUT.sub("", body))[:4]:
        part = _LEAD.sub("", part.strip(" ,.")).strip()
        m = _ALREADY.match(part)
        if m and len(_words_of(m.group(1))) <= 6 and not _DEICTIC.match(m.group(1)):
            out.append(f"The {m.group(1).strip()} is already {m.group(2).lower()}")
            continue
        m = _LINK_IS.match(part)
        if m:
            index = int(_PLACEHOLDER.match(m.group(2)).group(1))
            if index < len(saved) and saved[index].startswith(("http://", "https://")):
                out.append(f"The {m.group(1).strip()} is {m.group(2)}")
    return out


_NOT_SUPPORTED = _lazy(
    r"^(?:i\s+(?:just\s+|only\s+)?(?:found out|realized|realised|learned|noticed|discovered)\s+"
    r"(?:now\s+)?(?:that\s+)?)?(.{2,60}?)\s+(?:is|are)(?:\s+not|n't)\s+supported\s+(?:by|in|on)\s+"
    r"([\w.+-]+(?:\s[A-Z0-9][\w.+-]*)?)[\s:;,(!.\\]*$",
    re.I,
)
_INSTEAD = _lazy(
    r"\b(?:rewrit|chang|switch|convert|port|mov|migrat|replac)\w*\s+(?:this|it|that|them|"
    r"these)\s+(?:to|with|so it uses)\s+(?:use\s+)?(.{3,60}?)[?.!]*$",
    re.I,
)
_KEEP_GETTING = _lazy(
    r"^(?:i|we)\s+keep\s+(?:getting|hitting|seeing|running into)\s+(.{0,40}?\b(?:errors?|failures?|"
    r"warnings?|exceptions?|crash(?:es)?|timeouts?|panics?))\s+(?:when|whenever)\s+"
    r"(.{5,}?)(?:\s*[\u2014\u2013-]+\s*(?:how|what|why|can|could|is there)\b.*)?[?.!]*$",
    re.I | re.S,
)
_YOU_DESTROYED = _lazy(
    r"^you\s+(?:just\s+|really\s+)?(deleted|removed|wiped|erased|overwrote|nuked|dropped)\s+"
    r"(?:all\s+)?(?:my|our)\s+"
    r"([^\s?!.,]+(?:\s[^\s?!.,]+)?)\s*[?!.]*$",
    re.I,
)
_BASE_VERB = {
    "deleted": "delete",
    "removed": "remove",
    "wiped": "wipe",
    "erased": "erase",
    "overwrote": "overwrite",
    "nuked": "delete",
    "nuke": "delete",
    "dropped": "drop",
}
_PARENTHESES = _lazy(r"\s*\([^()]*\)")
_RELATIVE_END = _lazy(r"\s+(?:that|which|who)\s+[^,;]*$")


def _constraint(sentence: str, following: list[str], saved: list[str]) -> str:
    """A constraint the user found, as a fact: "Chrome does not support it: use proper HTML
    ruby elements instead" (from "I just found out this is not supported by Chrome ... can you
    rewrite this to use proper HTML ruby elements?"); "Build errors happen when MDX files have
    URLs in angle brackets" (from "I keep getting build errors when ..."). "" for none."""
    body = _LEAD.sub("", sentence.strip()).strip()
    m = _NOT_SUPPORTED.match(body) if not body.endswith("?") else None
    if m:
        what, where = m.group(1).strip(), m.group(2).strip()
        if what.lower() not in PRONOUN_ONLY:
            return _finish(f"{where} does not support {what}", saved)
        for later in [f for f in following if _words_of(f)][:3]:
            instead = _INSTEAD.search(later.strip())
            if instead:
                return _finish(
                    f"{where} does not support it: use {instead.group(1)} instead", saved
                )
        return ""
    m = _YOU_DESTROYED.match(body)
    if m:  # the user finding their work destroyed: a rule for every later session
        verb = _BASE_VERB.get(m.group(1).lower(), m.group(1).lower())
        what = _unmask(m.group(2), saved)
        if (
            what.lower() in PRONOUN_ONLY
            or _words_of(what)
            and _words_of(what)[0].lower() in ("whole", "entire")
        ):
            what = what if what.lower() not in PRONOUN_ONLY else ""
        if not what:
            return ""
        shown = f"`{what}`" if re.search(r"[-_/.~]", what) else what
        return f"Never {verb} {shown} without asking the user first"
    m = _KEEP_GETTING.match(body)
    if m:
        what, when = m.group(1).strip(), m.group(2).strip(" ,;")
        lesson = f"{what} happen{'' if what.lower().endswith('s') else 's'} when {when}"
        for shorter in (_PARENTHESES, _RELATIVE_END):  # the condition's core, not a cut
            if len(_unmask(lesson, saved)) > LESSON_MAX:
                lesson = shorter.sub("", lesson)
        return _finish(lesson, saved)
    return ""


def _clause_feedback(body: str, corrected: bool) -> tuple[str, str, bool] | None:
    """A lesson in a later clause of a sentence ("I have both, but I don't want to make
    assumptions about people's env"; "yes please, and let's make it cross-browser"); each clause
    passes the same checks as a sentence."""
    parts = _CLAUSES.split(body)
    for part in parts[1:4]:
        part = _LEAD.sub("", part.strip())
        if not part or _HEDGE.match(part) or _ONE_OFF.search(part) or _QUESTION_START.match(part):
            continue
        found = _classify(part, corrected)
        if found is not None:
            return found
    return None


def prompt_feedback(prompt: str, corrected: bool = False) -> list[Feedback]:
    """Corrections, confirmations, preferences, rules and decisions stated in a prompt.

    Each ``Feedback.lesson`` is the lesson as an instruction ("Use pnpm instead of npm"),
    capitalised, at most 120 characters; "" for a confirmation (or a bare "that's wrong"), which
    the caller pairs with what was confirmed or corrected. Questions, quoted and code text,
    pasted logs, hedged, conditional and one-off ("for now") sentences give nothing. Never
    raises.
    """
    try:
        return _prompt_feedback(prompt, corrected)
    except Exception:  # noqa: BLE001
        return []


def _prompt_feedback(prompt: str, corrected: bool = False) -> list[Feedback]:
    if not isinstance(prompt, str) or not prompt.strip():
        return []
    text = redact(prompt)[:_PROMPT_MAX]
    masked, saved = _mask(text)
    out: list[Feedback] = []
    seen: set[tuple[str, str]] = set()
    pending: str | None = None  # a bare "that's wrong" waiting for the instruction after it

    def emit(kind: str, lesson: str, sentence: str, user_scope: bool) -> None:
        key = (kind, lesson.lower())
        if key in seen:
            return
        seen.add(key)
        out.append(
            Feedback(
                kind=kind,
                lesson=lesson,
                user_scope=user_scope,
                text=_cap(_unmask(sentence, saved).strip(), TEXT_MAX),
            )
        )

    sentences = _sentences(masked)
    for n, sentence in enumerate(sentences):
        constraint = _constraint(sentence, sentences[n + 1 :], saved)
        if constraint and len(_words_of(constraint)) >= 4:
            emit(
                "correction" if constraint.startswith("Never ") else "fact",
                constraint,
                sentence,
                False,
            )
            continue
        if not sentence.strip().endswith("?"):
            for fact in _facts(_SAID_SO.sub("", sentence.strip().rstrip(" .!;:")), saved):
                lesson = _finish(fact, saved)
                if lesson and len(_words_of(lesson)) >= 3:
                    emit("fact", lesson, sentence, False)
        found = _sentence_feedback(sentence, saved, pending is not None or corrected)
        if found is None:
            if pending is not None:
                emit("correction", "", pending, False)
                pending = None
            continue
        kind, lesson, user_scope = found
        if kind == "correction" and not lesson:
            if pending is not None:
                emit("correction", "", pending, False)
            pending = sentence
            continue
        if pending is not None:
            if kind != "confirmation":
                kind = "correction"
            sentence = f"{pending} {sentence}"
            pending = None
        emit(kind, lesson, sentence, user_scope)
    if pending is not None:
        emit("correction", "", pending, False)
    return out


def _sentence_feedback(
    sentence: str, saved: list[str], after_correction: bool
) -> tuple[str, str, bool] | None:
    s = sentence.strip()
    broken = _STILL_BROKEN.match(_LEAD.sub("", s))  # (a question may follow the report)
    if broken and not _QUESTION_START.match(_LEAD.sub("", s)):
        subject = broken.group(1).strip()
        words = _words_of(_PLACEHOLDER.sub("x", subject))
        if (
            words
            and words[0].lower() not in PRONOUN_ONLY | {"i", "you", "he", "she", "we", "they"}
            and len(words) >= 2
        ):
            return ("fact", _finish(f"Open problem: {subject} still does not work", saved), False)
    if not s or s.endswith("?") or _QUESTION_START.match(s):
        return None
    revised = _REVISED.search(s.rstrip(" .!;:\\"))
    if (
        revised
        and len(_words_of(_PLACEHOLDER.sub("x", revised.group(2)))) >= 4
        and not _HEDGE.match(revised.group(2))
        and not _QUESTION_START.match(revised.group(2))
    ):
        lesson = _finish(revised.group(2).strip(), saved)
        if lesson:
            return "decision", lesson, False
    if not _words_of(_PLACEHOLDER.sub("", s)):
        return None  # nothing but quoted or code text
    body = _SAID_SO.sub("", s.rstrip(" .!;:")).rstrip(" .!;:")  # "... — decided."
    assent = _ASSENT.match(body)  # "ok, fine, let's do vite": the choice after the yes
    if assent and len(_words_of(body[assent.end() :])) >= 2:
        body = body[assent.end() :]
    words = _words_of(_PLACEHOLDER.sub("x", body))
    if (
        0 < len(words) <= 12
        and _CONFIRM.match(body)
        and not _NEGATION.search(_PLACEHOLDER.sub("", body))
    ):
        return ("confirmation", "", False)
    body = _LEAD.sub("", body)
    corrected = after_correction
    m = _MARKER.match(body)
    if m:
        corrected = True
        body = _LEAD.sub("", body[m.end() :])
        if not body.strip():
            strong = re.search(
                r"wrong|incorrect|not (?:right|correct|what)|misunderstood|broke|"
                r"not like that|not quite|not it",
                m.group(0),
                re.I,
            )
            return ("correction", "", False) if strong else None
    done = _UNTIL_DONE.match(body)  # ("until" otherwise marks a one-off)
    if done and len(_words_of(done.group(1))) >= 5:  # not "until it works"
        lesson = _finish(f"The work is done only when {done.group(1).strip()}", saved)
        return ("rule", lesson, False) if lesson else None
    if not body or _HEDGE.match(body) and not _WHENEVER.match(body) or _ONE_OFF.search(body):
        return None
    if _QUESTION_START.match(body):
        return None
    found = _classify(body, corrected) or _labelled(body, corrected)
    if found is None:
        found = _clause_feedback(body, corrected)
    if found is None:
        return None
    kind, lesson, user_scope = found
    lesson = _finish(_instructions_only(lesson), saved)
    if not lesson or len(_words_of(lesson)) < 2:
        return None
    return kind, lesson, user_scope


# ===========================================================================================
# prompt check

_INTENTS = [
    (
        "test",
        r"\b(?:write|add|create|generate|run|rerun|re-run|fix)\s+(?:(?:a|an|the|some|more|unit|"
        r"integration|e2e|failing|missing)\s+){0,3}tests?\b|\btest coverage\b|\bunit tests?\b|"
        r"\bcoverage\b|\bpytest\b|\bjest\b|\bvitest\b|\btest suite\b|\bspecs?\b",
    ),
    (
        "review",
        r"\breview\b|\blook over\b|\bcode review\b|\baudit\b|\bcritique\b|\bfeedback on\b|"
        r"\bcheck (?:my|this|the) (?:code|pr|diff|changes|implementation)\b|\bsanity[- ]check\b",
    ),
    (
        "refactor",
        r"\brefactor\w*|\bclean(?:\s|-)?up\b|\brestructur\w+|\brename\b|\bsimplif\w+|"
        r"\breorgani[sz]\w+|\bextract\b|\btidy\b|\bdeduplicate\b|\bdry up\b|\bmodulari[sz]e\b",
    ),
    (
        "fix",
        r"\bfix\w*|\bbugs?\b|\bbroken\b|\berrors?\b|\bfail\w*|\bcrash\w*|\bdoesn'?t work\b|"
        r"\bnot working\b|\bdebug\w*|\brepair\b|\bresolve\b|\bexception\b|\btraceback\b|\bissue\b",
    ),
    (
        "explain",
        r"\bexplain\w*|\bwhat (?:does|is|are|do)\b|\bhow (?:does|do|is|can|would)\b|"
        r"\bwhy (?:does|do|is|are|did)\b|\bunderstand\b|\bwalk me through\b|\bdescribe\b|"
        r"\btell me (?:about|how|why|what)\b|\bwhat's\b",
    ),
    (
        "build",
        r"\badd\b|\bcreate\b|\bimplement\w*|\bbuild\b|\bwrite\b|\bgenerate\b|\bscaffold\b|"
        r"\bset ?up\b|\bnew (?:feature|endpoint|page|component|command)\b|\bsupport for\b|"
        r"\bmake (?:a|an|the|new)\b|\bintegrate\b",
    ),
]
_INTENT_RES = [(name, _lazy(p, re.I)) for name, p in _INTENTS]
_ORDER = {name: i for i, (name, _) in enumerate(_INTENTS)}
_VAGUE = [
    (
        "make it better",
        _lazy(
            r"\b(?:make|get) (?:it|this|that|things) (?:better|nicer|cleaner|"
            r"good|great|faster|work|right|prettier)\b|\bimprove (?:it|this|that|"
            r"things)\b(?!\s+by)",
            re.I,
        ),
    ),
    ("fix it", _lazy(r"\bfix (?:it|this|that|things|everything|stuff)\b", re.I)),
    (
        "doesn't work",
        _lazy(
            r"\b(?:it|this|that)\s+(?:doesn'?t|does not|isn'?t|is not)\s+"
            r"work(?:ing)?\b|\bnot working\b|\b(?:it'?s|is) broken\b",
            re.I,
        ),
    ),
    (
        "etc",
        _lazy(
            r"\betc\b\.?|\band so on\b|\band so forth\b|\bor whatever\b|"
            r"\bstuff like that\b|\band stuff\b",
            re.I,
        ),
    ),
    ("somehow", _lazy(r"\bsomehow\b", re.I)),
    ("something", _lazy(r"\bsomething\b|\bsome kind of\b|\bsomewhere\b", re.I)),
]
_DETAIL = _lazy(
    r"`|\"|'[^'\s]+'|\w+\.\w{1,5}\b|[\w-]+/[\w./-]+|\b\w+(?:Error|Exception)\b|\b[a-z]+_[a-z_]+\b|"
    r"\b[a-z]+[A-Z]\w+\b|\b\d{2,}\b|(?i:\b(?:line|test|function|method|class|file|endpoint|page|"
    r"button|module|command|error|exception|traceback|message|returns?|shows?|says|expected|"
    r"instead|when|after|because)\b)"
)
_SHORT_OK = _lazy(
    r"^(?:/\S+.*|y|n|yes|no|ok|okay|sure|continue|go ahead|go on|proceed|"
    r"thanks|thank you|commit|push|lgtm|stop|undo|retry|done|next)[\s.!]*$",
    re.I,
)


def prompt_check(prompt: str) -> dict:
    """{"intent": fix|build|explain|refactor|test|review|question|other, "vague": [...]}.

    The intent is the one whose keyword comes first in the prompt (a longer match wins a tie);
    a prompt with none is a ``question`` when it asks something, else ``other``. Vague signals
    are fixed labels: "make it better", "fix it", "doesn't work" (these three only without
    details), "etc", "somehow", "something", "short prompt".
    """
    try:
        return _prompt_check(prompt)
    except Exception:  # noqa: BLE001
        return {"intent": "other", "vague": []}


def _prompt_check(prompt: str) -> dict:
    text = prompt if isinstance(prompt, str) else ""
    text = _FENCE.sub(" ", text[:20_000]).strip()
    best = None
    for name, rx in _INTENT_RES:
        m = rx.search(text)
        if m:
            key = (m.start(), -(m.end() - m.start()), _ORDER[name])
            if best is None or key < best[0]:
                best = (key, name)
    if best is not None:
        intent = best[1]
    elif (
        text.rstrip().endswith("?")
        or _QUESTION_START.match(text)
        or re.match(r"^(?:can|could)\b", text, re.I)
    ):
        intent = "question"
    else:
        intent = "other"
    vague: list[str] = []
    words = _words_of(text)
    for label, rx in _VAGUE:
        m = rx.search(text)
        if not m:
            continue
        if label in ("fix it", "doesn't work", "make it better"):
            rest = text[: m.start()] + " " + text[m.end() :]
            if _DETAIL.search(rest) and len(_words_of(rest)) > 3:
                continue
        vague.append(label)
    if len(words) < 4 and text and not _SHORT_OK.match(text) and "short prompt" not in vague:
        vague.append("short prompt")
    return {"intent": intent, "vague": vague}
