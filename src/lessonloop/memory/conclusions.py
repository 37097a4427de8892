"""The agent's stated conclusions: what it found, advised or set up, as lessons.

Most of what a session teaches that is not an error or the user's words is in what the agent
wrote to the user: the findings of a search ("**Yes**, the Task tool supports Haiku via the
`model` parameter"), an overview of a code base after a subagent explored it, how to install the
project from its source, a configuration file it created and what it does. Neither the hooks
nor the error pairing read that text; memorize does, from the transcript's ``texts``.

Precision comes first, so each rule needs a structural mark, never a phrase fitted to one
session, and evidence in the calls of the same turn:

- ``findings``: a list under a "Key findings" / "Findings" / "Root cause" label,
  statements that open with a bold **Yes** / **No** (the answer to the user's question), or,
  in the turn's last text, a "Root cause: ..." / "The fix was: ..." line; in a text written
  after the agent used tools in that turn. One memory per answer: the first
  finding is the summary, the others and their details are the content.
- ``overview``: the agent's last text of a turn in which a subagent (``Task``/``Agent``)
  explored, or the agent itself read (three reads or searches at least, no edit), holding a flow
  of at least three steps (``a → b → c``): the summary names the explored code base (a path the
  user or the subagent's prompt gave) and the flow; the content keeps the components it listed.
- ``install``: a command that installs the project from its own source (``cargo install
  --path engine/cli``, ``pip install -e .``, ``uv tool install .``, ``npm link``) that the
  agent gives in a text; never one the user refused. The last such advice of the session wins.
- ``howto``: the user asks how to run, start, build, test or deploy something of the project
  ("how to run the tauri application for snps?") and the agent's answer gives a command that
  names it (``cd apps/desktop && pnpm tauri:dev``); the summary is the user's question
  answered, the content the answer's other commands.
- ``config``: "I've created `.markdownlintrc.json` that disables MD034": the agent created or
  edited that configuration file in the same turn; the summary states what the file does, the
  content what the agent said is still left to do ("you'll need to ... manually").

The content says where a lesson comes from (the agent's research, not a check it ran) so that
a person reading it can weigh it. Everything is already redacted by the transcript reader.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUMMARY_MAX = 120
CONTENT_MAX = 1500
RESEARCH_TOOLS = frozenset({"websearch", "webfetch", "task", "agent"})
SUBAGENT_TOOLS = frozenset({"task", "agent"})
EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "str_replace_based_edit_tool"})


@dataclass
class Conclusion:
    """One lesson from the agent's text: ``kind`` is a memory kind (observation, decision)."""

    kind: str
    summary: str
    content: str
    why: str
    tag: str


# -------------------------------------------------------------------------------------------
# the text's blocks

_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,2}[.)])\s+(.*)$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass
class Block:
    kind: str  # "heading", "para", "item", "code", "table", "blank"
    text: str
    indent: int = 0


def blocks(text: str) -> list[Block]:
    """The Markdown of an answer as blocks: headings, paragraphs, list items (with their
    continuation lines), code blocks and table rows; blank lines kept as separators."""
    out: list[Block] = []
    lines = text.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            body = []
            i += 1
            while i < len(lines) and not _FENCE.match(lines[i]):
                body.append(lines[i])
                i += 1
            out.append(Block("code", "\n".join(body)))
            i += 1
            continue
        if not line.strip():
            out.append(Block("blank", ""))
        elif heading := _HEADING.match(line):
            out.append(Block("heading", heading.group(1)))
        elif line.lstrip().startswith("|"):
            if not re.fullmatch(r"\s*\|[\s:|-]+\|?\s*", line):  # not the |---| line
                out.append(Block("table", line.strip()))
        elif item := _ITEM.match(line):
            out.append(Block("item", item.group(2), len(item.group(1))))
        elif out and out[-1].kind in ("item", "para"):
            out[-1].text += " " + line.strip()
        else:
            out.append(Block("para", line.strip()))
        i += 1
    return out


def plain(text: str) -> str:
    """Inline Markdown made plain: no bold or italics, links as their text; code in backticks
    kept as written (a glob's ``**/*.ts`` is no bold)."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        part = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", parts[i])
        part = re.sub(r"\*\*|__", "", part)
        parts[i] = re.sub(r"(?<![\w*])\*(?!\s)([^*]+)(?<!\s)\*(?![\w*])", r"\1", part)
    return " ".join("".join(parts).split())


def sentence(text: str, limit: int = SUMMARY_MAX) -> str:
    """The first sentence of ``text`` (not cut inside backticks), whole and at most ``limit``
    characters, else its first clause (before " - ", " — ", ": "); "" when neither fits."""
    text = plain(text)
    cut, inside = len(text), False
    for k, c in enumerate(text):
        if c == "`":
            inside = not inside
        elif (
            not inside
            and c in ".!?"
            and (k + 1 == len(text) or text[k + 1] == " ")
            and not re.search(r"\b(?:e\.g|i\.e|etc|vs)$", text[:k])
        ):
            cut = k
            break
    first = text[:cut].strip().rstrip(":;,")
    if len(first) <= limit and len(first.split()) >= 3:
        return first
    for mark in (" — ", " - ", ": ", "; "):
        head = first.split(mark, 1)[0].strip()
        if (
            head != first
            and len(head) <= limit
            and len(head.split()) >= 4
            and head.count("`") % 2 == 0
            and head.count("(") == head.count(")")
        ):
            return head
    return ""


def _cap(text: str, limit: int = CONTENT_MAX) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;:") + " ..."


# -------------------------------------------------------------------------------------------
# turns: what the agent did between two prompts of the user


@dataclass
class Turn:
    prompt: str
    calls: list  # main-chain calls of the turn
    texts: list  # main-chain texts of the turn


def turns(transcript) -> list[Turn]:
    """The main chain cut at the user's prompts: each turn's prompt, calls and texts."""
    prompts = sorted((p.index, p.text) for p in transcript.prompts if not p.sidechain)
    items = sorted(
        [(c.index, "call", c) for c in transcript.calls if not c.sidechain]
        + [(t.index, "text", t) for t in transcript.texts if not t.sidechain],
        key=lambda x: x[0],
    )
    out: list[Turn] = [Turn("", [], [])]
    k = 0
    for index, what, item in items:
        while k < len(prompts) and prompts[k][0] < index:
            out.append(Turn(prompts[k][1], [], []))
            k += 1
        (out[-1].calls if what == "call" else out[-1].texts).append(item)
    return [t for t in out if t.calls or t.texts]


def _used(calls: list) -> str:
    """The tools a turn used, for provenance: "WebSearch x3, Bash"."""
    counts: dict[str, int] = {}
    for c in calls:
        counts[c.name] = counts.get(c.name, 0) + 1
    return ", ".join(f"{n} x{k}" if k > 1 else n for n, k in counts.items())


def _ok(call) -> bool:
    return call.completed and not call.is_error and not call.rejected


# -------------------------------------------------------------------------------------------
# findings

# ("Conclusion" is no label here: it heads the wrap-up of work done as often as a finding)
_LABEL = re.compile(
    r"(?:^|\b)(?:key\s+findings|findings|root\s+cause|"
    r"what\s+i\s+found)\b[^.!?]{0,30}:?\s*$",
    re.I,
)
# the state of this session's work ("All 42 tests pass"), not something to remember
_STATUS = re.compile(
    r"\b(?:all (?:the )?(?:tests|checks) pass|tests? (?:now )?pass(?:es|ing)?\b|"
    r"\d+ (?:tests?|passed|failed|failures)\b|is (?:now )?complete\b)",
    re.I,
)
# "**Root cause:** the sandbox was not shared" in the agent's last text of a turn (mid-turn, "the
# fix is ..." is a plan, not a conclusion)
_INLINE = re.compile(
    r"^(?:the\s+)?(?:root\s+cause|key\s+finding|finding|fix)"
    r"(?:\s+(?:was|is))?\s*:\s+(.{12,})$",
    re.I,
)
# "**Yes**, ..." or "**Yes, X is available** ..." (not "**No Blocking**: ...", a benefit)
_ANSWER = re.compile(r"^\*\*(?:yes|no)(?:\*\*|[,.:!])", re.I)
_OPENER = re.compile(r"^yes\b[,.:!]?\s*(?:-\s*)?", re.I)  # (a "No" stays: it is the finding)


def _finding_text(block: Block) -> str:
    """A finding as a lesson: plain, without its "Yes," opener."""
    text = plain(block.text)
    text = _OPENER.sub("", text).strip()
    return text[:1].upper() + text[1:] if text else ""


def _attached(bs: list[Block], i: int) -> list[str]:
    """What belongs to the block at ``i``: when it ends with ":", the code block or the list
    right after it (its details); nothing else."""
    if not plain(bs[i].text).endswith(":"):
        return []
    out = []
    j = i + 1
    while j < len(bs) and bs[j].kind == "blank":
        j += 1
    if j < len(bs) and bs[j].kind == "code":
        return [" ".join(bs[j].text.split())]
    while j < len(bs) and bs[j].kind == "item":
        out.append(plain(bs[j].text))
        j += 1
    return out


def findings(turn: Turn) -> list[Conclusion]:
    found = []
    for text in turn.texts:
        before = [c for c in turn.calls if c.index < text.index]
        if not before:
            continue  # an opinion, not something the agent looked up
        final = not any(c.index > text.index for c in turn.calls)
        bs = blocks(text.text)
        items: list[str] = []
        for i, b in enumerate(bs):
            labelled = b.kind in ("heading", "para") and _LABEL.search(plain(b.text))
            inline = _INLINE.match(plain(b.text)) if b.kind in ("para", "item") and final else None
            if labelled:
                j = i + 1
                while j < len(bs) and bs[j].kind == "blank":
                    j += 1
                while j < len(bs) and bs[j].kind in ("item", "blank"):
                    if bs[j].kind == "item" and bs[j].indent == 0:
                        items.append(_finding_text(bs[j]))
                    j += 1
            elif inline:
                rest = inline.group(1).strip()
                items.append(rest[:1].upper() + rest[1:])
            elif b.kind in ("para", "item") and _ANSWER.match(b.text.strip()):
                line = _finding_text(b)
                details = _attached(bs, i)
                line = f"{line} {'; '.join(details)}" if details else line
                if line not in items:
                    items.append(line)
        items = [x for x in items if x and not _STATUS.search(x)]
        if not items:
            continue
        summary = next((s for s in map(sentence, items) if s), "")
        if not summary:
            continue
        content = (
            f"The agent's findings after using {_used(before)}"
            + (f', asked: "{_cap(" ".join(turn.prompt.split()), 200)}"' if turn.prompt else "")
            + " (what it concluded, not a check it ran):\n- "
            + "\n- ".join(items)
        )
        found.append(
            Conclusion(
                "observation",
                summary,
                _cap(content),
                "The agent's stated findings after research in the session.",
                "finding",
            )
        )
    return found


# -------------------------------------------------------------------------------------------
# overview of a code base, after a subagent explored it

_ARROW = re.compile(r"\s(?:→|->|⇒|=>)\s")
_PATH = re.compile(r"(?<![\w.])(/(?:[\w.-]+/)*[\w.-]+)")


# figures an overview gives in passing ("(~1,850 LOC)", "50 test files"): counted once by a
# subagent, stale after the next commit, so no part of a memory
_FIGURE = re.compile(r"\s*\([^()]*\d[^()]*\)|(?<![\w.])~?\d[\d,.]*\+?\s+(?=[a-z])", re.I)


_NAMED = re.compile(r"^(?:\*\*`?|`)[\w./-]+`?(?:\*\*)?\s*[-—:|]")  # "**cache.py** - ..."


def _component(block: Block) -> str:
    """A listed component: an item or table row that starts with a file or directory name in
    bold or backticks ("**cache.py** - SQLite caching system"), without its figures."""
    text = ""
    if block.kind == "item" and _NAMED.match(block.text):
        text = plain(block.text)
    elif block.kind == "table":
        cells = [c.strip() for c in block.text.strip("|").split("|")]
        if len(cells) >= 2 and re.fullmatch(r"`[\w./-]+`", cells[0]):
            text = f"{cells[0]} - {plain(cells[1])}"
    return " ".join(_FIGURE.sub(" ", text).split())


READ_TOOLS = frozenset({"read", "glob", "grep", "ls"})
EXPLORED = 3  # reads, at least, for a turn without a subagent to count as exploring


def overview(turn: Turn) -> list[Conclusion]:
    agents = [c for c in turn.calls if c.name.lower() in SUBAGENT_TOOLS and _ok(c)]
    if not turn.texts or not turn.calls or turn.calls[-1].index > turn.texts[-1].index:
        return []
    reads = [c for c in turn.calls if c.name.lower() in READ_TOOLS and _ok(c)]
    edited = any(c.name.lower() in EDIT_TOOLS for c in turn.calls)
    if not agents and (len(reads) < EXPLORED or edited):
        return []  # an arrow in an answer is a flow the agent looked at, or none
    bs = blocks(turn.texts[-1].text)
    flow, label = "", ""
    for i, b in enumerate(bs):
        lines = b.text.split("\n") if b.kind == "code" else [b.text]
        for line in lines:
            if len(_ARROW.findall(line)) >= 2:
                flow = plain(line.strip())
                heads = [x.text for x in bs[:i] if x.kind == "heading"]
                label = plain(heads[-1]).lower() if heads else "flow"
                break
        if flow:
            break
    if not flow:
        return []
    asked = (
        " ".join(str(agents[0].input.get(k) or "") for k in ("prompt", "description"))
        if agents
        else ""
    )
    paths = _PATH.findall(f"{turn.prompt} {asked}")
    name = paths[0].rstrip("/").rsplit("/", 1)[-1] if paths else ""
    summary = f"{name} {label}: {flow}" if name else f"This project's {label}: {flow}"
    if len(summary) > SUMMARY_MAX:
        return []
    where = f" explored {paths[0]}" if paths else " explored it"
    if agents:
        how = ", ".join(
            f"{k} {agents[0].input[k]}"
            for k in ("subagent_type", "model")
            if isinstance(agents[0].input.get(k), str)
        )
        parts = [
            f"From the agent's overview after a {agents[0].name} subagent"
            + (f" ({how})" if how else "")
            + f"{where}:"
        ]
    else:
        parts = [f"From the agent's overview after it read {len(reads)} files or searches:"]
    parts += [c for c in map(_component, bs) if c]
    return [
        Conclusion(
            "observation",
            summary,
            _cap("\n- ".join(parts)),
            "The agent's overview of a code base it explored.",
            "overview",
        )
    ]


# -------------------------------------------------------------------------------------------
# installing the project from its source

_INSTALL = re.compile(
    r"(?<![\w-])(?:cargo install (?:--\S+ )*--path \S+|"
    r"(?:uv )?pip3? install (?:-e|--editable) \S+|"
    r"uv tool install (?:--\S+ )*(?:\.|\./\S*|\S+/\S*)(?=\s|$|`)|"
    r"pipx install (?:-e |--editable )?(?:\.|\./\S*)(?=\s|$|`)|"
    r"npm link|npm install -g (?:\.|\./\S*)(?=\s|$|`)|go install \./\S*|mix escript\.install)"
)


def install(transcript, turn_list: list[Turn]) -> list[Conclusion]:
    refused = " ".join(str(c.input.get("command") or "") for c in transcript.calls if c.rejected)
    ran = {str(c.input.get("command") or "") for c in transcript.calls if _ok(c)}
    last = None
    for turn in turn_list:
        for text in turn.texts:
            bs = blocks(text.text)
            for i, b in enumerate(bs):
                for m in _INSTALL.finditer(
                    b.text if b.kind == "code" else " ".join(re.findall(r"`([^`\n]+)`", b.text))
                ):
                    command = " ".join(m.group(0).split())
                    if command in refused:
                        continue
                    last = (command, turn, bs, i)
    if last is None:
        return []
    command, turn, bs, i = last
    summary = f"Install this project from its source with `{command}`"
    if len(summary) > SUMMARY_MAX:
        return []
    lead = [plain(b.text) for b in bs[:i] if b.kind == "para"][:2]
    notes = [plain(b.text) for b in bs if b.kind == "item" and command in b.text]
    done = any(command in r for r in ran)
    content = " ".join(lead + notes) + (
        " (run successfully in the session)"
        if done
        else " (the agent's advice; not run in the session)"
    )
    if turn.prompt:
        content = f'Asked: "{_cap(" ".join(turn.prompt.split()), 200)}". ' + content
    return [
        Conclusion(
            "observation",
            summary,
            _cap(content),
            "How the agent said to install this project from its source.",
            "install",
        )
    ]


# -------------------------------------------------------------------------------------------
# how to run, build or test something of the project, as the user asked and the agent answered

_HOW_TO = re.compile(
    r"^\s*(?:and\s+)?how\s+(?:do\s+(?:i|we|you)\s+|can\s+(?:i|we)\s+|should\s+(?:i|we)\s+|to\s+)"
    r"(run|start|launch|build|test|deploy|release|debug|lint|serve|open)\s+([^?\n]{3,60}?)\s*\??\s*$",
    re.I,
)
_SHELL_LINE = re.compile(r"^(?:\$\s*)?([a-z][\w.+-]*(?:\s+[^#\n]*?)?)\s*(?:#.*)?$")
_NOT_ASKED = frozenset("the a an for of to in on with my our this that it app application".split())


def howto(turn: Turn) -> list[Conclusion]:
    match = _HOW_TO.match(" ".join(turn.prompt.split()))
    if not match or not turn.texts:
        return []
    verb, what = match.group(1).lower(), match.group(2).strip()
    wanted = {w for w in re.findall(r"[a-z0-9]+", what.lower()) if w not in _NOT_ASKED}
    commands: list[str] = []
    chosen = ""
    for block in blocks(turn.texts[-1].text):
        if block.kind != "code":
            continue
        directory = ""  # a `cd` line applies to the commands under it in the same block
        for line in re.sub(r"\\\n\s*", " ", block.text).splitlines():  # (continued lines joined)
            shell = _SHELL_LINE.match(line.strip())
            if not shell or shell.group(1).split()[0] in ("sudo", "echo", "export"):
                continue
            command = " ".join(shell.group(1).split())
            if command.startswith("cd "):
                directory = command
                continue
            full = f"{directory} && {command}" if directory else command
            if full not in commands:
                commands.append(full)
            names = set(re.findall(r"[a-z0-9]+", command.lower()))
            if not chosen and wanted & names:
                chosen = full
    if not chosen:
        return []
    summary = f"To {verb} {what}: `{chosen}`"
    if len(summary) > SUMMARY_MAX or _INSTALL.search(chosen):
        return []  # (an install command is the ``install`` rule's)
    others = [c for c in commands if c != chosen][:6]
    content = (
        f'Asked: "{_cap(" ".join(turn.prompt.split()), 200)}". The agent answered with '
        f"`{chosen}`"
        + (f"; its answer also gave: {'; '.join(f'`{c}`' for c in others)}" if others else "")
        + " (the agent's advice; not run in the session)."
    )
    return [
        Conclusion(
            "observation",
            summary,
            _cap(content),
            "How the agent said to do what the user asked about this project.",
            "howto",
        )
    ]


# -------------------------------------------------------------------------------------------
# a configuration file the agent created, and what it does

_CONFIG_NAME = re.compile(
    r"^(?:\.[\w.-]+|[\w.-]*(?:rc|config|settings)(?:\.[\w]+)?|"
    r"[\w.-]+\.(?:toml|ini|cfg|ya?ml|json))$",
    re.I,
)
_CREATED = re.compile(
    r"I(?:'ve| have)? (?:created|added|set up) (?:a |an |the )?(?:new )?`?([\w.-]+)`?"
    r"(?: (?:config(?:uration)?|settings) )?(?: file)? (?:that|which) ([^.]{5,100})\.",
    re.I,
)
_STILL = re.compile(
    r"\b(?:you(?:'ll| will) (?:still )?need to|still (?:need|have) to|"
    r"must (?:still )?be)\b[^.]*\b(?:manual(?:ly)?|by hand|yourself)\b",
    re.I,
)


def config(turn: Turn) -> list[Conclusion]:
    if not turn.texts:
        return []
    changed = {}
    for c in turn.calls:
        path = str(c.input.get("file_path") or c.input.get("path") or "")
        if c.name.lower() in EDIT_TOOLS and _ok(c) and path:
            changed[path.replace("\\", "/").rsplit("/", 1)[-1]] = path
    found = []
    for text in turn.texts:
        flat = plain(text.text)
        for m in _CREATED.finditer(flat):
            name, does = m.group(1), m.group(2).strip()
            if name not in changed or not _CONFIG_NAME.match(name):
                continue
            summary = f"`{name}` {does}"
            if len(summary) > SUMMARY_MAX:
                continue
            still = [s.strip() for s in re.split(r"(?<=[.!?])\s+", flat) if _STILL.search(s)]
            content = (
                f"The agent created or edited {changed[name]} in the session"
                + (f', asked: "{_cap(" ".join(turn.prompt.split()), 200)}"' if turn.prompt else "")
                + "."
                + (" Still to do, it said: " + " ".join(still) if still else "")
            )
            found.append(
                Conclusion(
                    "decision",
                    summary,
                    _cap(content),
                    "A configuration file the agent set up in the session.",
                    "config",
                )
            )
    return found


# -------------------------------------------------------------------------------------------


def conclusions(transcript) -> list[Conclusion]:
    """Every conclusion of the session's main chain, by the rules above, once each."""
    if transcript is None or not transcript.texts:
        return []
    turn_list = turns(transcript)
    found: list[Conclusion] = []
    for turn in turn_list:
        found += findings(turn) + overview(turn) + config(turn) + howto(turn)
    found += install(transcript, turn_list)
    seen, out = set(), []
    for c in found:
        if c.summary.lower() not in seen:
            seen.add(c.summary.lower())
            out.append(c)
    return out
