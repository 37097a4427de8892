"""Which lines of a tool's output report an error, most informative first, and the key that is
equal for recurrences of one error.

- ``rank_error_lines`` finds the error and failure lines of an output (exceptions, the last line
  of a traceback, compiler and test-runner failures, ``npm ERR!`` ...); only lines holding one of
  a few keywords are examined (found with ``str.find``), so a long output costs a few scans at C
  speed, not a regex per line, and a huge output is scanned head and tail only. A zero count
  such as "0 failed" is a success summary.
- ``normalize_error`` masks what varies between two occurrences of one error (paths, numbers,
  hex, ids, times, quoted values) so recurrences can be counted.

Whether a tool's result is a failure at all is ``tool_errors``' question.
"""

from __future__ import annotations

import functools
import re

from ..lazyre import lazy as _lazy
from .text_limits import scan_window

__all__ = [
    "BARE_EXCEPTION_LINE",
    "EXCEPTION_LINE",
    "EXIT_CODE_LINE",
    "MAX_ERRORS",
    "NORMALIZED_MAX",
    "last_meaningful_line",
    "line_priority",
    "normalize_error",
    "pick_error_lines",
    "rank_error_lines",
]


NORMALIZED_MAX = 300  # ErrorSignal.normalized
MAX_ERRORS = 5  # error lines kept per call

_TRACEBACK = _lazy(r"^\s*Traceback \(most recent call last\):")
_CHAIN = _lazy(r"^(During handling of the above exception|The above exception was the direct)")
EXCEPTION_LINE = _lazy(
    r"^(?:E\s+|Uncaught\s+|Unhandled\s+|\w+\s+)?(?:[A-Za-z_][\w]*\.)*"
    r"[A-Z]\w*(?:Error|Exception|Exit|Failure|Fault|Interrupt|NotFound|Refused)\b"
    r"(?:\s*\[[^\]]*\])?(?::\s*\S.*|\s*$)"
)
BARE_EXCEPTION_LINE = _lazy(r"^(?:E\s+)?(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception)\s*$")
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
            r"(?i)\bexit(?:ed|ing) with (?:code|status) [1-9]|\breturned non-zero exit status\b|"
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


def line_priority(line: str, stripped: str) -> int | None:
    low = stripped.lower()
    if (
        any(g in low for g in _PREFIX_GUARDS)
        and _ERROR_PREFIX.match(line)
        or ("error ts" in low and _TS_ERROR.search(line))
    ):
        return 0
    for prio, guard, pattern in _LINE_RULES:
        if guard in low and (pattern is None or pattern.search(stripped)):
            return None if prio == 2 and _NOISE.match(line) else prio
    return None


_SKIP = _lazy(
    r"A complete log of this run|Log files were not written|For a full report see|"
    r"^npm (?:ERR!|error)\s*$|^\S+:\d+: \w+$|^-+ generated xml|^=+ warnings summary"
)
_PYTEST_SUMMARY = _lazy(r"^(?:FAILED|ERROR) \S+ - \S")
_NOISE = _lazy(r"^\s*(?:at |File \"|\^+\s*$|~+\s*$|-+\s*$|=+\s*$|\d+ \|)")
EXIT_CODE_LINE = _lazy(r"^\s*(?:Error: )?Exit code (-?\d+)\s*$")

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
    "exiting with",
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
    head = text.find(_TB_HEAD)
    while head >= 0 and len(out) < 50:
        line_start = text.find("\n", head)
        steps = 0
        while line_start >= 0 and steps < 400:
            line_end = text.find("\n", line_start + 1)
            line = text[line_start + 1 : line_end if line_end >= 0 else len(text)]
            if (
                line.strip()
                and not line[:1].isspace()
                and not _CHAIN.match(line)
                and not line.startswith(_TB_HEAD)
            ):
                out.append(line_start + 1)
                break
            line_start, steps = line_end, steps + 1
        head = text.find(_TB_HEAD, head + len(_TB_HEAD))
    return out


def rank_error_lines(text: str) -> list[tuple[int, int, str]]:
    """(priority, position, line) of every error line; lower priority is more informative.

    Only lines holding one of a few keywords are examined (found with ``str.find``), so a long
    output costs a few scans at C speed, not a regex per line.
    """
    text = scan_window(text)
    low = text.lower()
    starts: set[int] = set()
    for keyword in _KEYWORDS:
        found_at, hits = low.find(keyword), 0
        while found_at >= 0 and hits < _MAX_HITS:
            starts.add(text.rfind("\n", 0, found_at) + 1)
            hits += 1
            found_at = low.find(keyword, found_at + len(keyword))
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
        elif stripped.startswith("E ") and EXCEPTION_LINE.match(stripped):
            found.append((0, pos, stripped[1:].strip()))  # pytest's "E   AssertionError: ..."
        elif _PYTEST_SUMMARY.match(stripped):
            found.append((0, pos - 10**9, stripped))  # the short summary line comes first
        elif EXCEPTION_LINE.match(stripped) and not BARE_EXCEPTION_LINE.match(stripped):
            found.append((0, pos, stripped))
        else:
            prio = line_priority(line, stripped)
            if prio is not None:
                found.append((prio, pos, stripped))
    return found


def pick_error_lines(ranked: list[tuple[int, int, str]], limit: int = MAX_ERRORS) -> list[str]:
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


def last_meaningful_line(*texts: str) -> str:
    for text in texts:
        for line in reversed(scan_window(text).splitlines()):
            stripped = line.strip()
            if (
                stripped
                and not EXIT_CODE_LINE.match(stripped)
                and not _NOISE.match(stripped)
                and not _ADVICE.match(stripped)
            ):
                return stripped[:4000]
    return ""


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
    masked = line[:2000]
    masked = _N_QUOTED.sub(_quoted, masked)
    masked = _N_URL.sub("<url>", masked)
    masked = _N_UUID.sub("<id>", masked)
    masked = _N_DATETIME.sub("<time>", masked)
    masked = _N_HEXADDR.sub("<hex>", masked)
    masked = _N_PATH.sub("<path>", masked)
    masked = _N_IP.sub("<ip>", masked)
    masked = _N_HEXID.sub("<id>", masked)
    masked = _N_TMP.sub("<tmp>", masked)
    masked = _N_LONGID.sub("<id>", masked)
    masked = _N_NUM.sub("<n>", masked)
    masked = _N_SPACE.sub(" ", masked.lower()).strip()
    return masked[:NORMALIZED_MAX]


def normalize_error(line: str) -> str:
    """The masked, lowercased form of an error line, equal for recurrences of one error.

    Quoted values, URLs, paths (``path:line:col``), UUIDs and hashes, hex addresses, dates and
    times, IP addresses, temp names and numbers are masked (``<q> <url> <path> <id> <hex> <time>
    <ip> <tmp> <n>``); whitespace is collapsed. Exception types and messages' words stay.
    """
    if not isinstance(line, str):
        return ""
    return _normalize(line[:2000])
