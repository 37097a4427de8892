"""The inspection commands and ``run`` without Typer: importing Typer (with Click and Pydantic
under it) costs more than everything ``status`` or ``list`` then does, and reading ``run``'s
twenty options through it took about a tenth of an offline 30-generation run (issue 18), so a
command line that Click would read in one obvious way is read here and handed to the same
function Typer would call.

Anything else (``--help``, an unknown or repeated option, a missing or extra argument, an
attached short value, a value that starts with ``-``, a number Click would have to judge) goes
to Typer, so its output and errors stay exactly Typer's. tests/cli/test_fast.py checks that this
table agrees with the Typer commands and that both paths print the same. Standard library only.
"""

from __future__ import annotations

# command words -> (module under lessonloop.cli, function, positional parameters,
#                   {option: (parameter, the value of a flag, or str/int/float for an option's
#                   value)})
COMMANDS: dict[tuple[str, ...], tuple[str, str, tuple[str, ...], dict[str, tuple[str, object]]]] = {
    ("run",): (
        "run",
        "run",
        ("scenario",),
        {
            "--iterations": ("iterations", int),
            "-n": ("iterations", int),
            "--provider": ("provider", str),
            "--model": ("model", str),
            "--max-calls": ("max_calls", int),
            "--max-tokens": ("max_tokens", int),
            "--matches": ("matches", int),
            "--seed": ("seed", int),
            "--run-id": ("run_id", str),
            "--max-retries": ("max_retries", int),
            "--min-delta": ("min_delta", float),
            "--match-timeout": ("match_timeout", float),
            "--workers": ("workers", int),
            "--no-incumbent": ("no_incumbent", True),
            "--no-knowledge": ("no_knowledge", True),
            "--fresh": ("fresh", True),
            "--context-budget": ("context_budget", int),
            "--review": ("review", True),
            "--context-trials": ("context_trials", str),
            "--json": ("as_json", True),
        },
    ),
    ("status",): ("inspect", "status_command", ("run_id",), {"--json": ("as_json", True)}),
    ("show",): (
        "inspect",
        "show_command",
        ("run_id",),
        {
            "--generation": ("generation", int),
            "-g": ("generation", int),
            "--best": ("best", True),
            "--json": ("as_json", True),
        },
    ),
    ("list",): ("inspect", "list_command", (), {"--json": ("as_json", True)}),
    ("report",): (
        "report",
        "report_command",
        ("run_id",),
        {"--open": ("open_page", True), "--json": ("as_json", True)},
    ),
    ("scenarios",): ("scenarios", "scenarios_command", (), {"--json": ("as_json", True)}),
    ("usage",): (
        "providers",
        "usage_command",
        (),
        {"--run": ("run_id", str), "--json": ("as_json", True)},
    ),
    ("doctor",): (
        "providers",
        "doctor_command",
        (),
        {
            "--provider": ("provider", str),
            "--model": ("model", str),
            "--latency": ("latency", True),
            "--no-latency": ("latency", False),
            "--json": ("as_json", True),
        },
    ),
    ("memory", "list"): (
        "memory",
        "list_command",
        (),
        {"--scope": ("scope", str), "--pending": ("pending", True), "--json": ("as_json", True)},
    ),
    ("memory", "search"): (
        "memory",
        "search_command",
        ("query",),
        {"--limit": ("limit", int), "--scope": ("scope", str), "--json": ("as_json", True)},
    ),
}


def parse(argv: list[str]) -> tuple[str, str, dict[str, object]] | None:
    """``(module, function, keyword arguments)`` for a plain inspection command line; None when
    Typer should read it."""
    for words, (module, function, positional, options) in COMMANDS.items():  # noqa: B007 - used after the break
        if tuple(argv[: len(words)]) == words:
            break
    else:
        return None
    rest = argv[len(words) :]
    values: dict[str, object] = {}
    arguments: list[str] = []
    position = 0
    while position < len(rest):
        token = rest[position]
        position += 1
        if not token.startswith("-"):
            arguments.append(token)
            continue
        name, equals, value = token.partition("=")
        spec = options.get(name)
        if spec is None or (equals and not name.startswith("--")):
            return None
        parameter, kind = spec
        if parameter in values:  # given twice: Click's rules, not ours
            return None
        if kind is str or kind is int or kind is float:
            if not equals:
                if position == len(rest):
                    return None
                value = rest[position]
                position += 1
            if value.startswith("-"):
                return None
            if kind is int:
                if not (value.isascii() and value.isdigit()):
                    return None
                values[parameter] = int(value)
            elif kind is float:  # digits, or digits.digits: what any reader makes of them
                whole, point, part = value.partition(".")
                if not all(
                    d.isascii() and d.isdigit() for d in (whole, *([part] if point else []))
                ):
                    return None
                values[parameter] = float(value)
            else:
                values[parameter] = value
        elif equals:  # a flag given a value
            return None
        else:
            values[parameter] = kind
    if len(arguments) != len(positional):
        return None
    values.update(zip(positional, arguments))
    return module, function, values


def call(parsed: tuple[str, str, dict[str, object]]) -> int:
    """Run a parsed command; its exit code (a function returns one, or None for 0)."""
    import importlib

    module, function, values = parsed
    result = getattr(importlib.import_module(f"{__package__}.{module}"), function)(**values)
    return result if isinstance(result, int) else 0
