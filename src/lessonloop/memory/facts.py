"""Facts about the project a session shows, for memorize: the commands that build, test, lint
or start it (``project_facts``, from runs that worked; ``project_command`` names a command's
role), what its task runner's recipes run (``recipe_facts``), its own Claude Code hooks and
what they blocked (``project_hooks``), and the permissions its settings ask for
(``permission_facts``).
"""

from __future__ import annotations

import os
import re

from .candidate import Candidate
from .transcript_model import EDIT_TOOLS, SCRIPT_RUNNERS

# what a project command does, by the words of its head (``uv run ty check`` type-checks)
_COMMAND_ROLES = (
    (
        "Type-check",
        {"ty check", "mypy", "pyright", "tsc", "dialyzer", "cargo check", "basedpyright", "pyre"},
    ),
    (
        "Lint",
        {
            "ruff check",
            "ruff",
            "eslint",
            "credo",
            "clippy",
            "flake8",
            "pylint",
            "golangci-lint",
            "biome lint",
            "biome check",
            "lint",
        },
    ),
    ("Format", {"ruff format", "black", "prettier", "cargo fmt", "gofmt", "format", "fmt"}),
    ("Run the tests", {"pytest", "test", "tox", "nox", "jest", "vitest"}),
    ("Build", {"build", "compile"}),
    ("Start the app", {"phx.server", "runserver", "dev", "serve", "start"}),
)


_NOT_PROJECT_COMMANDS = frozenset(
    """rm cp mv cat echo printf ls ll find grep rg git cd mkdir
touch curl wget head tail less more sed awk chmod chown kill pkill sleep which open tee""".split()
)


def project_command(command: str) -> str:
    """ "Type-check with `uv run ty check`" for a command that builds, tests, type-checks,
    lints, formats or runs the project; "" for anything else (``ls``, ``git status``)."""
    from .commands import command_core, command_head, command_key

    core = command_key(command_core(command)).strip()
    head = command_head(command)
    if not core or not head or len(core) > 80 or "\n" in core or "|" in core or "&&" in core:
        return ""
    # the command without the files it was given: the project's command, not this run's
    shown = " ".join(w for w in core.split() if "/" not in w and not re.search(r"test\w*\.\w+$", w))
    words = shown.split()
    if not words or words[0] in _NOT_PROJECT_COMMANDS:
        return ""
    words = words[:4]  # the command's own words, not a late argument that happens to say "build"
    names = {head, *words, *(" ".join(p) for p in zip(words, words[1:]))}
    # the most specific name decides: `ruff format` formats, though `ruff` alone lints
    matched = [(max(map(len, names & known)), -n, role) for n, (role, known) in
               enumerate(_COMMAND_ROLES) if names & known]  # fmt: skip
    return f"{max(matched)[2]} with `{shown}`" if matched else ""


BASH_TIMEOUT_MS = 120_000  # the Bash tool's default timeout (2 minutes)


def timeout_note(transcript, summary: str) -> str:
    """ " Successful runs were given a timeout of 180000 ms ..." when the agent's successful runs of
    the command ``summary`` describes set the Bash tool's ``timeout`` above its default: a slow
    suite the next session should give time too; "" otherwise."""
    longest = 0
    for call in transcript.calls:
        command, timeout = call.input.get("command"), call.input.get("timeout")
        if (
            not call.sidechain
            and call.completed
            and not call.is_error
            and call.name.lower() == "bash"
            and isinstance(timeout, int)
            and isinstance(command, str)
            and project_command(command) == summary
        ):
            longest = max(longest, timeout)
    if longest <= BASH_TIMEOUT_MS:
        return ""
    return (
        f" Successful runs were given a timeout of {longest} ms (the Bash tool's default "
        "is 2 minutes)."
    )


FACT_RUNS = 2  # successful runs of a project command that make it a fact
# roles learned from the agent's own runs: a bare `mix test` or `cargo build` is every project's
# default and teaches nothing; how this project type-checks, lints, formats and starts does
_LEARNED_ROLES = ("Type-check", "Lint", "Format", "Start the app")
# a type-check is the project's own check, once is enough; a lint or format run is often a
# one-off of the agent's choosing (`ruff check --fix`: stored unmatched three times, sets 4, 10)
_LEARNED_ONCE = ("Type-check",)
# the test commands every project of a kind has; any other (`uv run pytest`, `npx vitest run`,
# `cargo nextest run`) says how this project runs its tests
_DEFAULT_TESTS = {
    *("mix test", "cargo test", "go test", "make test", "dotnet test", "rails test"),
    *("npm test", "pnpm test", "yarn test", "bun test", "deno test", "bundle exec"),
    *("swift test", "flutter test", "dart test", "pytest"),
}


def _learned(summary: str) -> bool:
    """Whether a project command's role (``project_command``) is worth learning from runs."""
    if summary.startswith(_LEARNED_ROLES):
        return True
    if not summary.startswith("Run the tests with `"):
        return False
    words = summary.split("`")[1].split()
    return " ".join(words[:2]) not in _DEFAULT_TESTS and words[0] not in _DEFAULT_TESTS


def project_facts(transcript) -> list[Candidate]:
    """The commands that run the tests (other than a kind's default, ``_DEFAULT_TESTS``),
    type-check, lint, format or start this project, learned from their successful use in the
    session (main chain): run FACT_RUNS times or more, a type-check once, or a server started
    in the background once. Stored once; another session reinforces them."""
    runs: dict[str, int] = {}
    commands: dict[str, str] = {}
    enough: set[str] = set()  # learned from one run
    for call in transcript.calls:
        if (
            call.sidechain
            or call.rejected
            or not call.completed
            or call.is_error
            or call.name.lower() != "bash"
        ):
            continue
        command = call.input.get("command")
        summary = project_command(command) if isinstance(command, str) else ""
        if not _learned(summary):
            continue
        runs[summary] = runs.get(summary, 0) + 1
        commands.setdefault(summary, command)
        background = call.input.get("run_in_background") is True
        if summary.startswith(_LEARNED_ONCE) or (
            background and summary.startswith("Start the app")
        ):
            enough.add(summary)
    learned = [s for s, n in runs.items() if n >= FACT_RUNS or s in enough]
    by_role: dict[str, list[str]] = {}
    for summary in learned:
        by_role.setdefault(summary.split(" with ", 1)[0], []).append(summary)
    found = []
    for role, summaries in by_role.items():
        # one memory a role: a project started as two servers (`pnpm --filter api dev` and
        # `pnpm --filter web dev`) is started by both
        shown = [s.split(" with ", 1)[1] for s in summaries]
        while len(shown) > 1 and len(f"{role} with {' and '.join(shown)}") > 120:
            shown.pop()
        found.append(
            Candidate(
                kind="observation",
                summary=f"{role} with {' and '.join(shown)}",
                tags=["project-fact", "command"],
                content="; ".join(
                    f"Ran successfully {min(runs[s], 99)} time(s) in the session: "
                    f"`{line_within(commands[s], 200)}`"
                    + (f".{note}" if (note := timeout_note(transcript, s)) else "")
                    for s in summaries
                ),
                why="Learned from the project's own successful runs.",
            )
        )
    return found


_CHECK_ROLES = ("Run the tests", "Type-check", "Lint", "Format")
ROUTINE_ROLES = 3  # roles run in a row that make a routine: two (`mix test`, `mix credo`) were
#   every session's habit, stored unmatched five times on the development sets (sets 2-10)


def check_routine(transcript) -> list[Candidate]:
    """The checks the agent runs to finish its work: the last stretch of the main chain with no
    edit in it where commands of ROUTINE_ROLES or more roles (tests, type-check, lint, format)
    all succeeded, in the order run. One memory; each command also stands alone when run often
    enough (``project_facts``)."""
    best: dict[str, str] = {}
    stretch: dict[str, str] = {}
    for call in transcript.calls:
        if call.sidechain or call.rejected or not call.completed:
            continue
        if call.name.lower() in EDIT_TOOLS:
            if len(stretch) >= ROUTINE_ROLES:
                best = stretch
            stretch = {}
            continue
        command = call.input.get("command")
        summary = (
            project_command(command)
            if call.name.lower() == "bash" and isinstance(command, str)
            else ""
        )
        role = next((r for r in _CHECK_ROLES if summary.startswith(r)), "")
        if not role:
            continue
        if call.is_error:
            stretch.pop(role, None)
        else:
            stretch[role] = summary.split(" with ", 1)[1]
    if len(stretch) >= ROUTINE_ROLES:
        best = stretch
    if not best:
        return []
    runs = list(best.values())
    summary = "Checks run before finishing: " + ", ".join(runs)
    if len(summary) > 120:
        return []
    return [
        Candidate(
            kind="observation",
            summary=summary,
            tags=["project-fact", "command"],
            content="With no edit between them the agent ran these checks, each succeeding "
            "(the last such run of the session): "
            + "; ".join(f"{role}: {run}" for role, run in best.items()),
            why="Learned from the project's own successful runs.",
        )
    ]


# the first line a task runner printed is the command its recipe ran when it reads as one
_ECHOED_COMMAND = re.compile(r"^[a-z][\w.+-]*(?: [^\n]{0,100})?$")
_NOT_ECHOED = re.compile(
    r"^(?:make(?:\[\d+\])?|error|warning|info|note|running|nothing|"
    r"usage)\b|:\s|^\w+:$",
    re.I,
)


def recipe_facts(transcript) -> list[Candidate]:
    """What this project's task runner recipes run, learned from their successful use: `just
    check` printed `cargo llvm-cov --fail-under-lines 100` before running it. One memory per
    runner, its recipes in the order first run."""
    from .commands import command_core, command_key

    recipes: dict[str, dict[str, str]] = {}
    for call in transcript.calls:
        if call.sidechain or call.is_error or not call.echoed:
            continue
        invoked = command_key(command_core(call.input.get("command", ""))).strip()
        if invoked.split(" ", 1)[0] in SCRIPT_RUNNERS:
            continue  # a package script: script_facts
        words = invoked.split()
        first = call.echoed.strip().split("\n", 1)[0].strip()
        if (
            len(words) != 2
            or not _ECHOED_COMMAND.match(first)
            or _NOT_ECHOED.search(first)
            or first.split()[0] == words[0]
        ):
            continue
        recipes.setdefault(words[0], {}).setdefault(words[1], first)
    found = []
    for runner, ran in recipes.items():
        fact = _what_runs(
            runner,
            ran,
            f"This project's {runner} recipes: ",
            "",
            f"Each ran successfully in the session and {runner} printed the command first.",
        )
        found += [fact] if fact else []
    return found


def _what_runs(runner: str, ran: dict[str, str], head: str, lead: str, why: str):
    """One memory for a runner's recipes or scripts: "`just check` runs `cargo llvm-cov`; ...",
    as many as fit 120 characters in the summary, all of them in the content; None when not
    even one fits."""
    pairs = [f"`{runner} {name}` runs `{command}`" for name, command in ran.items()]
    while len(head + "; ".join(pairs)) > 120 and len(pairs) > 1:
        pairs.pop()
    summary = head + "; ".join(pairs)
    if len(summary) > 120:
        return None
    return Candidate(
        kind="observation",
        summary=summary,
        tags=["project-fact", "command"],
        content=lead
        + "; ".join(f"`{runner} {name}` runs `{line_within(c, 200)}`" for name, c in ran.items()),
        why=why,
    )


# npm, pnpm and yarn print the script they run: "> pmsynapse@0.1.0 build:all /path" then
# "> turbo run build && cargo build --workspace --release"
# "> pkg@1.0.0 test /path\n> vitest run" (npm 8 and earlier) or "> test\n> vitest run" (npm 9+)
_NPM_LIFECYCLE = frozenset({"test", "start", "stop", "restart"})
_SCRIPT_ECHO = re.compile(
    r"^> (?:(?:@[\w.-]+/)?[\w.-]+@\S+ )?([\w:.-]+)(?: \S+)?[ \t]*\n> ([^\n]{3,200})$", re.M
)
# mise prints each task it runs (its dependencies' too): "[test] $ go test ./..."
_TASK_ECHO = re.compile(r"^\[([\w:.-]+)\] \$ ([^\n]{3,200})$", re.M)


def script_facts(transcript) -> list[Candidate]:
    """What this project's package scripts (or mise tasks) run, as the runner printed it when the
    session ran them (whether the run then passed or failed: the script is what it is).
    Scripts that only call a tool of their own name (``tauri`` → ``tauri``) or one bare word
    (``dev`` → ``vite``) say nothing a later session needs."""
    from .commands import command_head

    scripts: dict[str, dict[str, str]] = {}
    for call in transcript.calls:
        command = call.input.get("command")
        runner = (command_head(command) if isinstance(command, str) else "").split(" ", 1)[0]
        if call.sidechain or not call.completed or runner not in SCRIPT_RUNNERS:
            continue
        echo = _TASK_ECHO if runner == "mise" else _SCRIPT_ECHO
        for name, runs in echo.findall(call.result or call.echoed):
            runs = runs.strip()
            if len(runs.split()) < 2 or runs.split()[0] == name:
                continue
            # npm runs its own scripts only through `npm run` (its lifecycle ones either way),
            # mise its tasks through `mise run`; the last printing wins: a session may change
            # a script (the rename it fixed)
            named = runner == "npm" and name not in _NPM_LIFECYCLE or runner == "mise"
            scripts.setdefault(runner, {})[f"run {name}" if named else name] = runs
    found = []
    for runner, ran in scripts.items():
        fact = _what_runs(
            runner,
            ran,
            "",
            f"The project's {'tasks' if runner == 'mise' else 'package scripts'}, as {runner} "
            "printed them when the session ran them: ",
            f"{runner} printed each one's command when the session ran it.",
        )
        found += [fact] if fact else []
    return found


_WHEN_HOOK = {
    "Stop": "When the agent stops",
    "SubagentStop": "When a subagent stops",
    "PreCompact": "Before a compaction",
    "SessionStart": "At session start",
    "UserPromptSubmit": "On each prompt",
}
_EDIT_TOOLS = {"Edit", "MultiEdit", "Write", "NotebookEdit"}
_SAYS_NOTHING = {"echo", "printf", "tee", "true", ":", "cat"}


def hook_command(command: str) -> str:
    """What a hook command does, for a summary: `uv run pytest 2>&1` → `uv run pytest`; a
    script → its file name; `bash -c '...; uv run pyright | tee ...'` → `uv run pyright`."""
    import shlex

    from .commands import command_key

    text = command.strip()
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    if len(words) >= 3 and os.path.basename(words[0]) in ("bash", "sh", "zsh") and words[1] == "-c":
        for stage in re.split(r"\s*(?:;|&&|\|\||\|)\s*", words[2]):
            head = stage.split()[0] if stage.split() else ""
            if head and head not in _SAYS_NOTHING and not head.startswith(("/dev/", ">")):
                text = stage
                break
    key = command_key(text) or text
    first = key.split()[0] if key.split() else ""
    if "/" in first and len(key.split()) == 1:
        key = os.path.basename(first)
    return line_within(key, 60)


def _hook_reason(feedback: str) -> str:
    """The first sentence of a hook's feedback that says why it blocked (not a heading)."""
    for line in feedback.replace("\\n", "\n").splitlines():
        line = line.strip()
        if (
            line
            and not line.startswith(("#", "-", "*", "`"))
            and not line.endswith((":", "..."))
            and len(line) <= 80
        ):
            return line.rstrip(".")
    return ""


def _hook_when(event: str) -> str:
    """When a hook runs, in words: "PostToolUse:Edit" (or MultiEdit, Write) → "After each edit"."""
    name, _, matcher = event.partition(":")
    if name == "PostToolUse" and matcher in _EDIT_TOOLS:
        return "After each edit"
    if name in ("PostToolUse", "PreToolUse") and matcher:
        return f"{'After' if name == 'PostToolUse' else 'Before'} each `{matcher}` call"
    return _WHEN_HOOK.get(name, f"On {name}")


def project_hooks(transcript) -> list[Candidate]:
    """The project's own Claude Code hooks, from what Claude Code reported of them: what runs
    after edits and when the agent stops (so the agent need not run it again), and what a hook
    blocked the agent for (so it does that first next time)."""
    from .commands import command_key

    runs: dict[str, list[str]] = {}  # when it runs -> the commands
    events: dict[str, list[str]] = {}  # when it runs -> the hook events (PostToolUse:Edit)
    blocks: dict[tuple[str, str, str], list[str]] = {}
    last: dict[tuple[str, str, str], int] = {}  # where each block's last time stands
    for hook in transcript.hooks:
        shown = hook_command(hook.command)
        if not shown:
            continue
        if hook.feedback:
            reason = _hook_reason(hook.feedback)
            what = "the agent"
            if hook.blocked is not None:  # a PreToolUse hook refused this call
                command = hook.blocked.input.get("command")
                stage = (
                    re.split(r"\s*(?:&&|;|\|\|?)\s*", command)[-1]
                    if isinstance(command, str)
                    else ""
                )
                words = command_key(stage).split()
                what = f"`{' '.join(words[:2])}`" if words else f"`{hook.blocked.name}`"
            reasons = blocks.setdefault((hook.event, shown, what), [])
            if reason and reason not in reasons:
                reasons.append(reason)
            last[(hook.event, shown, what)] = hook.index
        else:
            when = _hook_when(hook.event)
            if hook.event not in events.setdefault(when, []):
                events[when].append(hook.event)
            if shown not in runs.setdefault(when, []):
                runs[when].append(shown)
    found = []
    for when, commands in runs.items():
        shown_list: list[str] = []
        for command in commands:
            trial = shown_list + [f"`{command}`"]
            if len(f"{when}, project hooks run {', '.join(trial)}") > 120:
                break
            shown_list = trial
        if not shown_list:
            continue
        verb = "a project hook runs" if len(shown_list) == 1 else "project hooks run"
        found.append(
            Candidate(
                kind="observation",
                summary=f"{when}, {verb} {', '.join(shown_list)}",
                tags=["project-fact", "hook"],
                content=f"{when} ({', '.join(events[when])}), Claude Code ran these project "
                "hooks successfully in the session: " + ", ".join(f"`{c}`" for c in commands),
                why="Reported by Claude Code as the project's own hooks.",
            )
        )
    for (event, shown, what), reasons in blocks.items():
        summary = f"The {event} hook `{shown}` blocks {what}"
        for reason in reasons:
            longer = summary + ("; " if ": " in summary else ": ") + reason
            if len(longer) > 120:
                break
            summary = longer
        after = _after_block(transcript, last.get((event, shown, what), -1))
        found.append(
            Candidate(
                kind="observation",
                summary=summary,
                tags=["project-fact", "hook"],
                content=f"The {event} hook `{shown}` blocked {what}: " + "; ".join(reasons) + after,
                why="The project's hook refused to let the agent go on until this was done.",
            )
        )
    return found


def _after_block(transcript, index: int) -> str:
    """What satisfied a hook after it last blocked the agent, for a memory's content: the
    files the agent then edited (at most two, with their changed lines) before the user spoke
    again; "" when it edited none or more (no clear evidence). The hook never blocked again."""
    from .error_lessons import changed_lines

    if index < 0:
        return ""
    following = [p.index for p in transcript.prompts if not p.sidechain and p.index > index]
    end = min(following) if following else float("inf")
    edits = [
        c
        for c in transcript.calls
        if not c.sidechain
        and index < c.index < end
        and c.completed
        and not c.is_error
        and not c.rejected
        and c.name.lower() in ("edit", "write", "multiedit")
    ]
    files = list(dict.fromkeys(str(c.input.get("file_path") or "") for c in edits))
    if not edits or len(files) > 2 or not all(files):
        return ""
    shown = []
    for path in files:
        lines = " | ".join(changed_lines(c, 160) for c in edits if c.input.get("file_path") == path)
        shown.append(
            f"`{os.path.basename(path)}`" + (f" ({line_within(lines, 200)})" if lines else "")
        )
    return (
        f". After its last block the agent edited {'; '.join(shown)}, and it did not block again."
    )


def permission_facts(transcript) -> list[Candidate]:
    """What this project's permission settings refused (they outlast the session): commands
    that need approval, tools or paths not granted, directories blocked."""
    from .commands import command_key

    refused: dict[str, list[str]] = {}
    for why, call in transcript.permission_refusals():
        place = re.search(r"(\w+) in '([^']{1,60})' was blocked", call.result)
        if why == "blocked" and place:
            what = f"{place.group(1)} {place.group(2)}"
        elif call.name.lower() == "bash":
            words = command_key(str(call.input.get("command") or "")).split()
            what = " ".join(words[:2] if len(words) > 1 and words[1].startswith("-") else words[:1])
        else:
            path = call.input.get("file_path") or call.input.get("path")
            what = f"{call.name} {path}" if isinstance(path, str) and path else call.name
        if what and what not in refused.setdefault(why, []):
            refused[why].append(line_within(what, 40))
    heads = {
        "approval": ("needs", "need", "approval here (refused without it)"),
        "not granted": ("needs", "need", "a permission not granted here"),
        "blocked": ("was", "were", "blocked: outside the allowed working directories"),
    }
    found = []
    for why, items in refused.items():
        one, many, rest = heads[why]
        shown: list[str] = []
        for item in items:
            trial = shown + [f"`{item}`"]
            if len(", ".join(trial)) + len(many) + len(rest) + 2 > 120:
                break
            shown = trial
        if not shown:
            continue
        verb = one if len(shown) == 1 else many
        found.append(
            Candidate(
                kind="observation",
                summary=f"{', '.join(shown)} {verb} {rest}",
                tags=["project-fact", "permission"],
                content="Refused by Claude Code's permission settings in this session: "
                + ", ".join(f"`{i}`" for i in items),
                why="Permission settings outlast the session: do not try again without asking.",
            )
        )
    return found


def line_within(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word to ``limit`` characters (for content, not summaries)."""
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    return line[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + " ..."
