"""Whether the redactor could find anything in a text, answered without importing it.

Loading the redactor costs a hook process ~7 ms, and most prompts hold none of its triggers:
for them ``redact(text)`` is ``text`` (its prefilter finds no trigger and returns the text as
it is). ``may_hold_secret`` asks the prefilter's questions (``safety/redact/prefilter.py``,
``_scan_text``) with the standard library and conservatively: a literal whose presence the
prefilter confirms with a regex counts here on its own. So it is True for every text the
prefilter finds a trigger in (and for some it finds none in); False means the redactor would
return the text unchanged. The tables below are the prefilter's own
(tests/memory/test_secret_free.py derives them from it and fails when they drift).

``redact`` is the capture hooks' gate: the real redactor unless the text is provably free of
secrets and no session's known secrets can be active (the redactor is not loaded yet: a
session's ``KnownSecrets`` is entered only through it).
"""

from __future__ import annotations

import re
import sys

# Needles searched in the lowered text: the key names' (a run of one is a trigger by itself),
# the low searches' literals (every match holds one) and the cookie needle.
LOW_LITERALS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "auth",
    "cred",
    "key",
    "bearer",
    "basic",
    "sig=",
    "signature=",
    "identified",
    "cookie",
)
# Needles searched in the text: the token rules' literals (every match of a search group holds
# one), the literals the others need (``_WITHIN``'s, ``login(``).
TEXT_LITERALS = (
    "://",
    ".com/",
    "AC0",
    "AC1",
    "AC2",
    "AC3",
    "AC4",
    "AC5",
    "AC6",
    "AC7",
    "AC8",
    "AC9",
    "ACCA",
    "ACa",
    "ACb",
    "ACc",
    "ACd",
    "ACe",
    "ACf",
    "ABIA",
    "AIza",
    "AKIA",
    "ASIA",
    "GOCSPX-",
    "GR1348941",
    "LS0tLS1CRUdJTi",
    "LTAI",
    "Private-",
    "SG.",
    "SK0",
    "SK1",
    "SK2",
    "SK3",
    "SK4",
    "SK5",
    "SK6",
    "SK7",
    "SK8",
    "SK9",
    "SKa",
    "SKb",
    "SKc",
    "SKd",
    "SKe",
    "SKf",
    "api_org_",
    "dckr_pat_",
    "eyJ",
    "ghp_",
    "gho_",
    "ghr_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "glagent-",
    "glcbt-",
    "gldt-",
    "glffct-",
    "glft-",
    "glimt-",
    "gloas-",
    "glpat-",
    "glptt-",
    "glrt-",
    "glsoat-",
    "glwt-",
    "hf_",
    "k_live_",
    "k_test_",
    "login(",
    "pplx-",
    "pypi-AgE",
    "sk-",
    "whsec_",
    "xai-",
    "xapp-",
    "xox",
    "ya29.",
)
# The prefilter's searches without literals (the prefix-token and the dashed-id rules'), its
# short flags and the entropy fallback's candidate: searched as the prefilter searches them
# (each starts with the character it is looked for after).
PATTERNS = (
    r"_(?:(?<=npm_)|(?=[A-Za-z0-9]{16})(?<=[a-z0-9].)(?<!(?<![A-Za-z0-9])(?:msg|req|run|evt|"
    r"cus|sub|txn|org|img|src|tok|dpl|prj|job|gen|vpc|usr|doc|obj|app|ord|inv|ses|md5).)"
    r"(?<!(?<![A-Za-z0-9])(?:toolu|batch|price|ftjob|trace).)(?<!(?<![A-Za-z0-9])"
    r"(?:srvtoolu|chatcmpl).)(?<!(?<![A-Za-z0-9])(?:call|cmpl|file|asst|prod|acct|user|proj|"
    r"resp|step|sess|conv|item|seti|card|team|span|cart|sha1).)(?<!(?<![A-Za-z0-9])"
    r"(?:thread|subnet|sha224|sha256|sha384|sha512|blake2).)(?<!(?<![A-Za-z0-9])"
    r"(?:pi|pm|ch|fc|rs|vs|in|cs|re|po|si|ws|h1).)(?<!(?<![A-Za-z0-9])(?:blake2b|blake2s).))",
    r"\-(?:\-\-\-\-|[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z])"
    r"(?<=(?<![0-9A-Za-z-])[0-9a-f]{32}-.{17}))",
    r"-(?:(?<=(?<!\S)-)([paPwkSu])|(?<=(?<!\S)--)u|(stdin))",
    r"[:=]>?[ \t]*+(?:[rbuf]{0,2}\\?[\"'`])?+[A-Za-z0-9+/_.~-]{24}",
)
_FIRSTS = ("_", "-", "-", ":=")  # (the characters each pattern can start with)
_COMPILED: dict[int, re.Pattern] = {}  # (compiled on first use: most texts need none)

_ENGINE = "lessonloop.safety.redact.engine"


def may_hold_secret(text: str) -> bool:
    """False only when the redactor's prefilter finds no trigger in ``text`` (then ``redact``
    returns it unchanged); True otherwise, and for some texts it finds none in."""
    low = text.lower()
    for literal in LOW_LITERALS:
        if literal in low:
            return True
    for literal in TEXT_LITERALS:
        if literal in text:
            return True
    for index, first in enumerate(_FIRSTS):
        if any(c in text for c in first):
            pattern = _COMPILED.get(index)
            if pattern is None:
                pattern = _COMPILED[index] = re.compile(PATTERNS[index])
            if pattern.search(text):
                return True
    return False


def redact(text: str) -> str:
    """``safety.redact.redact(text)``, without loading the redactor when its answer is ``text``:
    the text holds no trigger and no session's known secrets are active (none can be before
    the redactor is loaded)."""
    if _ENGINE not in sys.modules and not may_hold_secret(text):
        return text
    from ..safety.redact import redact as redact_text

    return redact_text(text)
