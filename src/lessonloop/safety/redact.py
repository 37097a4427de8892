"""The project's one secret redactor.

``redact(text)`` replaces every secret it recognises with ``[REDACTED:<family>]``. It is the
first step of admission (DESIGN §6) and runs before anything is persisted (DESIGN §8.1), always
*before* truncation, so a secret cut short later can never leave a readable prefix behind.

Families: provider and vendor tokens by their shape (Anthropic, OpenAI, GitHub, GitLab, Slack,
Stripe, SendGrid, Mailgun, Twilio, npm, PyPI, Hugging Face, Google, AWS, Alibaba), webhooks
(Slack, Discord, Teams), Sentry DSNs, JWTs, private-key blocks (PEM, OpenSSH, EC, PGP; also
inside one JSON line; in base64 as Kubernetes stores them), PuTTY key files (.ppk, whole),
credentials in URLs, Authorization/Bearer/Basic/curl -u credentials, password flags (mysql -p,
mongosh -p, redis-cli -a), signed URLs, secrets under secret-looking names (``password: x``,
``"api_key": "x"``, ``--token x``, ``api_key   <random>``, SQL ``PASSWORD 'x'``), a secret's name
given as a field's or an argument's value with its value next to it (``{"name": "DB_PASSWORD",
"value": "x"}``, ``os.environ.get("DB_PASSWORD", "x")``, ``process.env.API_KEY || "x"``) and a
high-entropy fallback: a random-looking token assigned under any other name (see _looks_random
for what counts, and what never does: ids, digests, UUIDs, paths, code). A token right after an
escape (``\\n``, ``\\u003d``, ``%3D``) is a token, not the tail of a word.

How it stays fast and linear:
- every rule is anchored on a literal ("needle") or a regex that starts with one; a prefilter
  finds which needles occur at all (about 30 C-speed searches of the text, each from its
  needles' rarest character; with ahocorasick-rs installed, two Aho-Corasick passes find the
  literals and only the patterns whose literals occur are searched) and the full pass skips
  every rule whose needles do not, so ordinary text costs little and text without any needle
  is returned as it is; lines seen again (prompts repeat theirs) cost a dictionary lookup;
- a regex is only ``match``-ed at needle positions; case-insensitive needles are searched in a
  lowered copy of the text whose positions map 1:1 onto the text;
- every repetition is bounded or possessive, and rules whose regions can be long (PEM blocks,
  key names, values) skip hits inside a region already examined, so no input is quadratic.

Overlapping findings are merged into one span named after the most specific family (the order
of ``FAMILIES``). A pass is repeated until nothing changes (normally one extra pass, over the
lines that hold new markers only), so ``redact(redact(x)) == redact(x)`` holds even when one
secret hid the boundary of the next.

Within one session a secret found once is a secret everywhere: inside ``with known:`` (a
session's ``KnownSecrets``) ``redact`` remembers the values it replaced and replaces their bare
occurrences too (``DB_PASSWORD=x`` in one command, ``x`` alone in a later log line); a session
keeps only salted digests of them between processes (see ``KnownSecrets``).

Generic ``name = value`` secrets keep the name and lose the value. Values that are clearly not
secrets are left: empty, null/None/true/false, placeholders (``<your-token>``, ``${VAR}``,
``***``), code (``get_password()``, ``os.environ["X"]``, ``settings.token``, a variable passed
on as ``token=token``), type annotations (``password: str``) and markers already in place.
Transcripts are JSON lines, so a value also ends at a ``\\n``, ``\\t`` or ``\\"`` escape and
at the quote closing its JSON string: the other lines of the string survive and the JSON line
stays valid.
"""

from __future__ import annotations

import contextvars
import functools
import re
from collections import Counter, namedtuple

from ..lazyre import LazyPattern, lazy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this module)
if TYPE_CHECKING:
    from typing import Any, Callable, Iterable, Iterator

__all__ = ["FAMILIES", "MARKER_RE", "KnownSecrets", "bare_worthy", "find_secrets", "marker",
           "redact", "redact_obj"]

# Most specific first: when findings overlap, the merged span takes the earliest family here.
FAMILIES: tuple[str, ...] = (
    "private-key",
    "anthropic-api-key",
    "openai-api-key",
    "github-token",
    "gitlab-token",
    "slack-webhook",
    "discord-webhook",
    "teams-webhook",
    "slack-token",
    "stripe-key",
    "sendgrid-key",
    "mailgun-key",
    "twilio-key",
    "npm-token",
    "pypi-token",
    "huggingface-token",
    "google-api-key",
    "google-oauth",
    "aws-access-key",
    "aws-secret-key",
    "azure-storage-key",
    "sentry-dsn",
    "cloudflare-token",
    "jwt",
    "url-signature",
    "url-credentials",
    "bearer-token",
    "basic-auth",
    "authorization-header",
    "password",
    "generic-secret",
)
_PRIO = {family: i for i, family in enumerate(FAMILIES)}

MARKER_PREFIX = "[REDACTED:"
MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]{1,40}\]")
_MAX_PASSES = 6

Span = tuple[int, int, int]          # start, end, family priority


def marker(family: str) -> str:
    return f"[REDACTED:{family}]"


# --------------------------------------------------------------------------------------------
# Small helpers

_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ALNUM = _LETTERS | frozenset("0123456789")
_WORD = _ALNUM | {"_"}
_TOKCH = _WORD | {"-"}              # base64url / token characters
_HOSTCH = _ALNUM | {".", "-"}
_SCHEMECH = _ALNUM | {"+", ".", "-"}
_QUOTES = "\"'`"


# sre looks for a pattern's first character and stops at each occurrence of it to try the rest,
# so a literal is searched from its rarest character (the ones before it checked by a
# look-behind). Characters from rare to common in transcripts (English, code, JSON):
_RARITY = ("*|#@$!?`QV<X+%GJzZW;KHFBYLU>DMCq[]PjNIAROSExT{}()=k/vwb9yg876f5h34_,m2-01puc:l.di"
           "\\raos\"nte ")


def _rare_first(needle: str, folded: bool = False) -> tuple[str, int]:
    """A regex matching ``needle`` from its rarest character on, and that character's offset in
    ``needle`` (where the match starts). ``folded``: it searches lowered text (where "k" also
    stands for "K")."""
    def rank(c: str) -> int:
        r = _RARITY.find(c) % (len(_RARITY) + 1)                # (not listed: common)
        return max(r, _RARITY.find(c.upper()) % (len(_RARITY) + 1)) if folded else r
    i = min(range(len(needle)), key=lambda k: rank(needle[k]))
    pattern = re.escape(needle[i:])
    return (pattern + "(?<=%s)" % re.escape(needle) if i else pattern), i


@functools.lru_cache(maxsize=None)
def _hit_finder(needle: str | bytes, in_str: bool) -> Callable[[str | bytes], list[int]]:
    """A function giving the positions of every occurrence of ``needle`` (the overlapping ones
    of a needle such as "-----" too). ``in_str``: it searches a str (a bytes needle: the lowered
    text as a str). str.find skips ahead by about the needle's length, so it finds long needles
    faster than the regex engine, which finds short ones from their rarest character."""
    word = needle if needle.__class__ is str else needle.decode()
    if len(word) >= 5:
        lit = word if in_str else word.encode()

        def positions(hay: str | bytes) -> list[int]:
            found, i = [], hay.find(lit)
            while i != -1:
                found.append(i)
                i = hay.find(lit, i + 1)
            return found
        return positions
    pattern, i = _rare_first(word, folded=word is not needle)
    if any(word[:k] == word[-k:] for k in range(1, len(word))):      # it can overlap itself:
        pattern = re.escape(word[i]) + ("(?<=%s)" % re.escape(word[:i + 1]) if i else "")
        if word[i + 1:]:                                             # consume one character
            pattern += "(?=%s)" % re.escape(word[i + 1:])
    finditer = re.compile(pattern if in_str else pattern.encode()).finditer
    return lambda hay: [m.start() - i for m in finditer(hay)]


def _has_digit(s: str) -> bool:
    return any(c.isdigit() for c in s)


def _has_upper_and_lower(s: str) -> bool:
    return any(c.isupper() for c in s) and any(c.islower() for c in s)


class _Scan:
    """One pass's view of the text: the text, a lowered copy (same positions) for
    case-insensitive needles, and which needles are known to be absent.

    ``skip`` holds the needles known to be absent before the pass starts: those the prefilter
    did not find in the text, and in a confirming pass those the first pass found nowhere. A
    needle found nowhere in one pass cannot appear in the next unless it occurs inside a
    marker: no needle contains "[" or "]", so an occurrence after replacement lies either inside
    a marker or wholly inside text that was already there. The confirming pass therefore only
    rescans needles that occurred (or that markers contain).
    """

    __slots__ = ("text", "_low", "skip", "absent", "known")

    def __init__(self, text: str, skip: frozenset = frozenset(), low: str | None = None,
                 known: dict | None = None):
        self.text = text
        self._low = low
        self.skip = skip
        self.absent: set = set()
        self.known = known            # key needles' runs (see key_runs), found by the prefilter

    @property
    def low(self) -> str | bytes:
        """The text lowered with one character per character: ``str.lower()`` when the text is
        ASCII, else its ASCII-lowered bytes (anything else becomes "?")."""
        if self._low is None:
            self._low = (self.text.lower() if self.text.isascii()
                         else self.text.encode("ascii", "replace").lower())
        return self._low

    def hits(self, needle: str | bytes) -> list[int]:
        """Positions of ``needle``: a str is searched in the text, bytes in the lowered copy."""
        if needle in self.skip:
            return []
        hay = self.text if needle.__class__ is str else self.low
        found = _hit_finder(needle, hay.__class__ is str)(hay)
        if not found:
            self.absent.add(needle)
        return found

    def key_runs(self, needle: bytes) -> list[tuple[int, int]]:
        """The hits of a key needle (in the lowered copy) as the span of the ASCII letters right
        after each (at most _RUN_MAX of them): ``(end of the needle, end of the letters)``."""
        if needle in self.skip:
            return []
        if self.known and needle in self.known:
            return self.known[needle]
        low = self.low
        finditer = _KEY_RUNS[needle][low.__class__ is bytes].finditer
        runs = [m.span(1) for m in finditer(low)]
        if not runs:
            self.absent.add(needle)
        return runs

    def matches(self, regex: re.Pattern) -> list[re.Match]:
        if regex in self.skip:
            return []
        found = list(regex.finditer(self.text))
        if not found:
            self.absent.add(regex)
        return found

    def next_skip(self) -> frozenset:
        return (self.skip | self.absent) - _needles_in_markers()


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j == -1 else j


def _line_prefix_blank(text: str, ks: int) -> bool:
    """Only indentation (or a YAML list dash) before position ``ks`` on its line (a ``\\n``
    escape in JSON-escaped text starts a line too)."""
    while True:                        # (256 characters at a time: a line can be long)
        lo = max(0, ks - 256)
        ls = text.rfind("\n", lo, ks) + 1 or lo
        k = text.rfind("\\n", ls, ks)
        if text[ls if k == -1 else k + 2:ks].strip(" \t-"):
            return False
        if k != -1 or ls != lo or lo == 0:
            return True
        ks = lo


# JSON-escaped text (transcripts are JSON lines): a value never runs on over a \n, \r, \t or \"
# escape, nor over the quote that closes the JSON string it sits in.
_ESC_SAFE = lazy(r"(?:[^\\]|\\[^nrt\"])*+")
_ESC_NL_SAFE = lazy(r"(?:[^\\\n]|\\[^nr\n])*+")
_JSON_QUOTE = lazy(r'\\.|"')


def _escape_before(text: str, i: int) -> bool:
    """Whether ``text[i]`` is the letter of a \\n, \\r or \\t escape (JSON-escaped text)."""
    return (i > 0 and text[i - 1] == "\\" and text[i] in "nrt"
            and not (i > 1 and text[i - 2] == "\\"))


_HEX = frozenset("0123456789abcdefABCDEF")


def _escape_ends_at(text: str, h: int) -> bool:
    """Whether an escape ends just before ``text[h]``: \\n, \\r or \\t (JSON), \\u003d
    (JSON, Go) or %3D (URL). Its last character is a letter or digit, yet it is no part of the
    word that follows, so a token there still starts a token."""
    if h >= 2 and _escape_before(text, h - 1):
        return True
    if h >= 6 and text[h - 6] == "\\" and text[h - 5] == "u" and _HEX.issuperset(text[h - 4:h]):
        return True
    return h >= 3 and text[h - 3] == "%" and _HEX.issuperset(text[h - 2:h])


def _logical_line_start(text: str, i: int, limit: int) -> int:
    """Start of the line holding ``i`` (after a newline or a \\n escape), at most ``limit``
    characters back."""
    lo = max(0, i - limit)
    ls = text.rfind("\n", lo, i) + 1 or lo
    k = text.rfind("\\n", ls, i)
    return ls if k == -1 else k + 2


def _esc_cut(v: str) -> str:
    """``v`` up to its first \\n, \\r, \\t or \\" escape (or a trailing lone backslash)."""
    return v[:_ESC_SAFE.match(v).end()] if "\\" in v else v


def _value_limit(text: str, i: int) -> int:
    """Where a value that runs "to the end of its line" from ``i`` ends: the line's end, or in
    JSON-escaped text the first \\n or \\r escape, or the closing quote of the JSON string
    that ``i`` is inside of."""
    end = _line_end(text, i)
    if text.find("\\", i, end) != -1:
        end = _ESC_NL_SAFE.match(text, i, end).end()
    if text.find('"', i, end) != -1:
        ls = text.rfind("\n", 0, i) + 1
        inside = sum(1 for q in _JSON_QUOTE.findall(text, ls, i) if q == '"') % 2
        if inside:
            for m in _JSON_QUOTE.finditer(text, i, end):
                if m.group() == '"':
                    return m.start()
    return end


def _url_back(text: str, s: int) -> int:
    """Extend a match that starts inside a URL's host back over the host and the scheme."""
    i, lim = s, max(0, s - 100)
    while i > lim and text[i - 1] in _HOSTCH:
        i -= 1
    if text.startswith("://", i - 3):
        j, lim = i - 3, max(0, i - 35)
        while j > lim and text[j - 1] in _SCHEMECH:
            j -= 1
        if j < i - 3:
            return j
    return i


def _close_quote(text: str, start: int, quote: str) -> int:
    """Index of the closing ``quote`` on the same line (backslash escapes honoured), else the
    line's end: a value whose closing quote was cut off is redacted to the end of its line
    (in JSON-escaped text, to the end of its JSON string: see _value_limit)."""
    j = text.find(quote, start)
    if j != -1 and text.find("\n", start, j) == -1 and (len(quote) == 2
                                                       or text.find("\\", start, j) == -1):
        return j                          # the common case, without a look at the whole line
    if len(quote) == 2:                                   # \" inside a JSON string
        return _value_limit(text, start)
    end = _line_end(text, start)
    i = start
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i
        i += 1
    return _value_limit(text, start)


# --------------------------------------------------------------------------------------------
# Token rules anchored on a literal


# (a named tuple made by collections, not typing.NamedTuple: typing costs a hook 3 ms)
_Rule = namedtuple("_Rule", "needle regex family left group url_back",
                   defaults=(None, 0, False))
# needle: str | None     str.find() this literal; None: scan with regex.finditer
# regex: LazyPattern     matched at each hit (must start with the needle)
# family: str | Callable[[re.Match], str | None]   or a judge naming it (None rejects)
# left: frozenset | None  reject a hit preceded by one of these characters
# group: int | str        the part of the match that is redacted
# url_back: bool          extend the span back over host and scheme


def _sk_family(m: re.Match) -> str | None:
    if m.group("ant"):
        return "anthropic-api-key"
    body = m.group("body")
    if m.group("sub") or (_has_upper_and_lower(body) and (_has_digit(body) or len(body) >= 32)):
        return "openai-api-key"
    return None        # kebab-case words such as sk-learn-compat-layer


def _b64_private_key(b64: str) -> bool:
    """Whether base64 text (wrapped or not) holds a PEM private key's BEGIN line."""
    import base64  # (on first use: most processes never decode)
    import binascii

    flat = re.sub(r"\\[rn]|\s", "", b64).rstrip("=")
    try:
        return b"PRIVATE KEY-----" in base64.b64decode(flat[:len(flat) - len(flat) % 4])
    except (binascii.Error, ValueError):
        return False


def _mixed_body(family: str) -> Callable[[re.Match], str | None]:
    def judge(m: re.Match) -> str | None:
        body = m.group("body")
        return family if _has_digit(body) or _has_upper_and_lower(body) else None
    return judge


_GL_KINDS = ("pat", "ptt", "dt", "rt", "cbt", "ft", "soat", "oas", "imt", "agent", "ffct", "wt")
_RULES: tuple[_Rule, ...] = (
    _Rule("sk-", lazy(
        r"sk-(?:(?P<ant>ant-)[A-Za-z0-9_-]{8,1000}+"
        r"|(?P<sub>(?:proj|svcacct|admin|None)-)?+(?P<body>[A-Za-z0-9_-]{8,1000}+))"),
        _sk_family, left=_TOKCH),
    _Rule(None, lazy(r"gh[pousr]_[A-Za-z0-9]{16,255}+"), "github-token", left=_ALNUM),
    _Rule("github_pat_", lazy(r"github_pat_[A-Za-z0-9_]{20,255}+"), "github-token",
          left=_ALNUM),
    _Rule(None, lazy(r"gl(?:%s)-" % "|".join(_GL_KINDS) +
                           r"[A-Za-z0-9_-]{16,255}+(?:\.[A-Za-z0-9_-]{1,255}+){0,3}+"),
          "gitlab-token", left=_ALNUM),
    _Rule("GR1348941", lazy(r"GR1348941[A-Za-z0-9_-]{20,255}+"), "gitlab-token", left=_ALNUM),
    _Rule("hooks.slack.com/", lazy(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,400}+"),
        "slack-webhook", url_back=True),
    _Rule("discord", lazy(
        r"discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{5,30}+/[A-Za-z0-9_-]{8,200}+"),
        "discord-webhook", url_back=True),
    _Rule("xox", lazy(r"xox(?:[abeoprs]|e\.xox[bp])-[A-Za-z0-9-]{10,300}+"), "slack-token",
          left=_ALNUM),
    _Rule("xapp-", lazy(r"xapp-\d-[A-Za-z0-9-]{10,300}+"), "slack-token", left=_ALNUM),
    _Rule("k_live_", lazy(r"k_live_[A-Za-z0-9]{10,255}+"), "stripe-key"),
    _Rule("k_test_", lazy(r"k_test_[A-Za-z0-9]{10,255}+"), "stripe-key"),
    _Rule("whsec_", lazy(r"whsec_[A-Za-z0-9+/=]{10,255}+"), "stripe-key", left=_ALNUM),
    # SendGrid: SG.<22>.<43> (base64url); a cut-off second part still counts from 8 characters.
    _Rule("SG.", lazy(r"SG\.(?P<body>[A-Za-z0-9_-]{16,32}+\.[A-Za-z0-9_-]{8,80}+)"),
          _mixed_body("sendgrid-key"), left=_TOKCH | {"."}),
    # Mailgun: key-<32 hex> (pubkey-... is the public validation key: not matched); the newer
    # <32 hex>-<8 hex>-<8 hex> keys are matched by _MAILGUN below.
    _Rule("key-", lazy(r"key-[0-9a-f]{32}(?![0-9A-Za-z])"), "mailgun-key", left=_ALNUM),
    _Rule("npm_", lazy(r"npm_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
          _mixed_body("npm-token"), left=_ALNUM),
    _Rule("dckr_pat_", lazy(r"dckr_pat_[A-Za-z0-9_-]{20,200}+"), "generic-secret",
          left=_ALNUM),
    _Rule("pplx-", lazy(r"pplx-[A-Za-z0-9]{32,100}+"), "generic-secret", left=_ALNUM),
    # Alibaba Cloud AccessKey IDs: LTAI and 12-20 letters and digits
    _Rule("LTAI", lazy(r"LTAI(?P<body>[A-Za-z0-9]{12,20}+)(?![A-Za-z0-9])"),
          _mixed_body("generic-secret"), left=_ALNUM),
    _Rule("xai-", lazy(r"xai-[A-Za-z0-9]{48,120}+"), "generic-secret", left=_ALNUM),
    _Rule("pypi-AgE", lazy(r"pypi-AgE[A-Za-z0-9_-]{16,1000}+"), "pypi-token", left=_ALNUM),
    _Rule("hf_", lazy(r"hf_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
          _mixed_body("huggingface-token"), left=_WORD),
    _Rule("api_org_", lazy(r"api_org_(?P<body>[A-Za-z0-9]{30,255}+)(?![_-])"),
          _mixed_body("huggingface-token"), left=_WORD),
    _Rule("AIza", lazy(r"AIza[0-9A-Za-z_-]{20,255}+"), "google-api-key", left=_ALNUM),
    _Rule("GOCSPX-", lazy(r"GOCSPX-[A-Za-z0-9_-]{16,255}+"), "google-oauth", left=_ALNUM),
    _Rule("ya29.", lazy(r"ya29\.[A-Za-z0-9_-]{20,4000}+"), "google-oauth", left=_ALNUM),
    _Rule(None, lazy(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{12,16}+"), "aws-access-key", left=_ALNUM),
    # JWT: header.payload.signature (JWE: up to five parts), or header.payload when cut off.
    _Rule("eyJ", lazy(
        r"eyJ[A-Za-z0-9_-]{6,8000}+\.(?:eyJ[A-Za-z0-9_-]{0,8000}+(?:\.[A-Za-z0-9_-]{0,8000}+)?+"
        r"|[A-Za-z0-9_-]{4,8000}+\.[A-Za-z0-9_-]{0,8000}+)(?:\.[A-Za-z0-9_-]{1,8000}+){0,2}+"),
        "jwt", left=_TOKCH | {"."}),
    # A PEM block in base64 ("-----BEGIN" is LS0tLS1CRUdJTi): Kubernetes secrets, kubeconfig's
    # client-key-data, `base64 key.pem` wrapped at 76 columns (whole lines that follow, indented
    # in a YAML block too). Only one that holds a private key (certificates are public).
    _Rule("LS0tLS1CRUdJTi", lazy(
        r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{40,100000}+"
        r"(?:(?:\r?\n|\\[rn]){1,2}+[ \t]*+[A-Za-z0-9+/]{4,100000}+(?=[=\r\n\\\"']|$))*+={0,2}+"),
        lambda m: "private-key" if _b64_private_key(m.group()) else None, left=_ALNUM | {"+", "/"}),
)

_RULE_TRIGGERS = tuple((rule.needle or rule.regex, rule) for rule in _RULES)

# Stripe keys are sk_/rk_ + live_/test_: the needle starts one character in.
_STRIPE_NEEDLES = ("k_live_", "k_test_")

# Teams incoming webhooks: <tenant>.webhook.office.com/webhookb2/..., outlook.office(365).com/webhook/...
_TEAMS = lazy(r"(?:[A-Za-z0-9-]{1,63}\.)?(?:webhook\.office|outlook\.office(?:365)?)\.com"
                    r"/webhook(?:b2)?/[A-Za-z0-9@._/-]{8,600}+")


# Mailgun's newer private API keys, <32 hex>-<8 hex>-<8 hex>. Anchored on the "-" that ends the
# 32 hex digits (a leading hex class would be tried at every hex digit of the text).
_MAILGUN = lazy(r"-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z])"
                      r"(?<=(?<![0-9A-Za-z-])[0-9a-f]{32}-.{17})")

# Twilio. An account SID (AC + 32 hex) identifies an account and is not a secret by itself; the
# 32-hex auth token written right after it (Client("AC...", "<token>"), AC...:<token>) is. An
# API key SID (SK + 32 hex) is half of a credential pair and only ever written next to its
# secret, so it is redacted together with a 32-character secret that follows it. Auth tokens
# and API secrets under their own names (TWILIO_AUTH_TOKEN=...) are caught by the key name.
_TWILIO_PAIR = (r"(?![0-9A-Za-z])(?:(?:\\?[\"'`])?+[ \t]*+(?:[,:][ \t]*+)?+(?:\\?[\"'`])?+"
                r"(?P<secret>%s)(?![0-9A-Za-z]))?")
_TWILIO_AC = lazy(r"AC(?<![0-9A-Za-z]..)[0-9a-f]{32}" + _TWILIO_PAIR % "[0-9a-f]{32}")
_TWILIO_SK = lazy(r"SK(?<![0-9A-Za-z]..)[0-9a-f]{32}" + _TWILIO_PAIR % "[A-Za-z0-9]{32}")


def _vendor_pairs(sc: _Scan, out: list[Span]) -> None:
    """Twilio SIDs with their secrets, Mailgun's newer keys."""
    prio = _PRIO["twilio-key"]
    for m in sc.matches(_TWILIO_AC):
        if m.group("secret"):
            out.append((m.start("secret"), m.end("secret"), prio))
    for m in sc.matches(_TWILIO_SK):
        out.append((m.start(), m.end(), prio))
    for m in sc.matches(_MAILGUN):
        out.append((m.start() - 32, m.end(), _PRIO["mailgun-key"]))


def _token_rules(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    skip = sc.skip
    for trigger, rule in _RULE_TRIGGERS:
        if trigger in skip:
            continue
        left, regex = rule.left, rule.regex
        prev_end = -1       # a token right after another one of the same kind is not "inside a word"
        hits: list[int] | list[re.Match]
        hits = sc.matches(regex) if rule.needle is None else sc.hits(rule.needle)
        for hit in hits:
            h = hit if isinstance(hit, int) else hit.start()
            if left is not None and h and h != prev_end and text[h - 1] in left \
                    and not _escape_ends_at(text, h):
                continue    # (checked before matching: keeps a text of repeated needles linear)
            m = regex.match(text, h) if isinstance(hit, int) else hit
            if m is None:
                continue
            family = rule.family if isinstance(rule.family, str) else rule.family(m)
            if family is None or _placeholder(m.group()):   # ghp_XXXX…, sk-...
                continue
            prev_end = m.end()
            s, e = m.span(rule.group)
            if rule.needle in _STRIPE_NEEDLES:           # sk_live_ / rk_test_ ...
                if s < 1 or text[s - 1] not in "sr" or (
                        s >= 2 and text[s - 2] in _ALNUM and not _escape_ends_at(text, s - 1)):
                    continue
                s -= 1
            if rule.url_back:
                s = _url_back(text, s)
            out.append((s, e, _PRIO[family]))
    for h in sc.hits(".com/webhook"):
        lo = max(0, h - 90)
        for m in _TEAMS.finditer(text, lo, min(len(text), h + 700)):
            if m.start() <= h < m.end():
                out.append((_url_back(text, m.start()), m.end(), _PRIO["teams-webhook"]))
                break


# --------------------------------------------------------------------------------------------
# PEM private keys: the whole block; from BEGIN to the end when END was cut off

_PEM_BEGIN = lazy(r"-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = lazy(r"-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_BODY = _ALNUM | set("+/=\\")


def _pem(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    prio = _PRIO["private-key"]
    covered = -1
    ends: list[re.Match] = []
    for i in sc.hits("-----"):
        if i < covered:
            continue
        if text.startswith("BEGIN", i + 5):
            m = _PEM_BEGIN.match(text, i)
            if m:
                e = _PEM_END.search(text, m.end())
                covered = e.end() if e else len(text)
                out.append((i, covered, prio))
        elif text.startswith("END", i + 5):
            m = _PEM_END.match(text, i)
            if m:
                ends.append(m)
                covered = m.end()
    # An END whose BEGIN line was cut off (text truncated from the front): the key body before it.
    for m in ends:
        out.append((_pem_body_start(text, m.start()), m.end(), prio))


def _pem_body_start(text: str, i: int) -> int:
    """Start of the base64 lines (or one JSON-escaped line) that end at ``i``."""
    j, lim = i, max(0, i - 20000)
    while j > lim and text[j - 1] in _PEM_BODY:           # this line, "\\n" escapes included
        j -= 1
    while j > lim and text[j - 1] == "\n":                # whole base64 lines above it
        k = text.rfind("\n", 0, j - 1) + 1
        line = text[k:j - 1].rstrip("\r")
        if len(line) < 4 or any(c not in _PEM_BODY for c in line):
            break
        j = k
    return j


# --------------------------------------------------------------------------------------------
# PuTTY private-key files (.ppk, versions 2 and 3): the whole file from its first line through
# the Private-MAC; from Private-Lines when the first lines were cut off, to the end when the MAC
# was. (Public-Lines are public, but a .ppk is one secret: it goes whole.)

_PUTTY_HEAD = "PuTTY-User-Key-File-"
_PUTTY_PRIVATE = lazy(r"Private-(?:Lines[ \t]*+:[ \t]*+\d{1,5}+|MAC[ \t]*+:[ \t]*+"
                            r"[0-9A-Fa-f]{16,256}+)")
_PUTTY_MAC = lazy(r"Private-MAC[ \t]*+:[ \t]*+[0-9A-Fa-f]{0,256}+")
_PUTTY_REACH = 200_000    # characters between a file's first line, its private lines and MAC


def _putty(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    prio = _PRIO["private-key"]
    covered = 0
    for i in sc.hits("Private-"):
        if i < covered or not _PUTTY_PRIVATE.match(text, i):
            continue
        head = text.rfind(_PUTTY_HEAD, max(covered, i - _PUTTY_REACH), i)
        mac = text.find("Private-MAC", i, i + _PUTTY_REACH)
        covered = _PUTTY_MAC.match(text, mac).end() if mac != -1 else len(text)
        out.append((i if head == -1 else head, covered, prio))


# --------------------------------------------------------------------------------------------
# URLs with credentials (any scheme), Sentry DSNs, credentials cut off at the end of the text

_AUTHORITY = lazy(r"[^\s/?#\"'<>\\]{0,1024}+")
_HEX32 = lazy(r"[0-9a-f]{32}")


def _mask_markers(s: str) -> str:
    return MARKER_RE.sub(lambda m: "\0" * len(m.group()), s) if MARKER_PREFIX in s else s


def _urls(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    n = len(text)
    for p in sc.hits("://"):
        if p == 0 or text[p - 1] not in _SCHEMECH:
            continue
        a = p + 3
        auth_end = _AUTHORITY.match(text, a).end()
        authority = text[a:auth_end]
        at = authority.rfind("@")
        if at < 0:
            # "scheme://user:pass" cut off at the end of the text: what follows ':' is no port.
            c = _mask_markers(authority).find(":")
            if auth_end == n and c > 0:
                rest = authority[c + 1:]
                if rest and not rest.isdigit() and not rest.startswith(MARKER_PREFIX):
                    out.append((a + c + 1, auth_end, _PRIO["url-credentials"]))
            continue
        userinfo = authority[:at]
        if not userinfo or userinfo.startswith(MARKER_PREFIX) and ":" not in _mask_markers(userinfo):
            continue
        colon = _mask_markers(userinfo).find(":")
        if colon >= 0:
            user, pw = userinfo[:colon], userinfo[colon + 1:]
            if _HEX32.fullmatch(user):
                out.append((a, a + at, _PRIO["sentry-dsn"]))   # legacy DSN public:secret
            elif pw and not _placeholder(pw):
                out.append((a + colon + 1, a + at, _PRIO["url-credentials"]))
        elif _HEX32.fullmatch(userinfo):
            out.append((a, a + at, _PRIO["sentry-dsn"]))
        elif len(userinfo) >= 20 and _has_digit(userinfo) and any(c in _LETTERS for c in userinfo):
            out.append((a, a + at, _PRIO["url-credentials"]))   # https://<token>@host


# --------------------------------------------------------------------------------------------
# Authorization headers, Bearer and Basic credentials, curl -u user:pass, signed URLs

_AUTHZ = lazy(
    r"authorization(?:\\?[\"'])?+\]?[ \t]*(?:=>|:=|=|:)[ \t]*(?:[rbuf]{0,2}(\\?[\"'`]))?", re.I)
_SCHEME = lazy(r"([A-Za-z][A-Za-z0-9_-]{0,30})[ \t]+(?=\S)")
_ONE_TOKEN_SCHEMES = {"bearer", "basic", "token", "bot", "apikey", "key", "jwt", "dpop",
                      "sso-key", "geniekey", "splunk", "otp"}
_MULTI_SCHEMES = {"digest", "negotiate", "ntlm", "aws4-hmac-sha256", "hoba", "mutual", "vapid",
                  "hmac", "signature", "oauth", "kerberos"}
_CRED = lazy(r"[^\s\"'`,;]{1,8192}+")


def _authorization(text: str, h: int, out: list[Span]) -> None:
    """The credential of an ``Authorization`` header/field whose name starts at ``h``."""
    if h and text[h - 1] in _LETTERS:
        return
    m = _AUTHZ.match(text, h)
    if not m:
        return
    j, quote = m.end(), m.group(1)
    end = _close_quote(text, j, quote) if quote else _line_end(text, j)
    sm = _SCHEME.match(text, j, end)
    scheme = sm.group(1).lower() if sm else ""
    if scheme in _ONE_TOKEN_SCHEMES:
        cm = _CRED.match(text, sm.end(), end)
        v = _esc_cut(cm.group()) if cm else ""
        if (v and not _placeholder(v) and not v.startswith(_TEMPLATE_START)
                and not v.lower().startswith(("realm=", "charset=", "error="))):   # challenges
            family = {"bearer": "bearer-token", "basic": "basic-auth"}.get(scheme, "authorization-header")
            out.append((cm.start(), cm.start() + len(v), _PRIO[family]))
    elif scheme in _MULTI_SCHEMES:
        if not quote:
            end = _value_limit(text, j)
        s, e = sm.end(), len(text[:end].rstrip())
        if e > s and not _placeholder(text[s:e]):
            out.append((s, e, _PRIO["authorization-header"]))
    else:
        cm = _CRED.match(text, j, end)
        if sm and cm and cm.end() == sm.end(1):          # a scheme of its own: SSWS <token>
            cm = _CRED.match(text, sm.end(), end)
            quote = ""                                   # (then the token must look like one)
        v = _esc_cut(cm.group()) if cm else ""
        if v and not _placeholder(v) and v.lower() not in _ONE_TOKEN_SCHEMES:  # "Bearer " + t
            if quote or (len(v) >= 8 and _has_digit(v)):
                out.append((cm.start(), cm.start() + len(v), _PRIO["authorization-header"]))


_BEARER = lazy(r"bearer[ \t]+([A-Za-z0-9._~+/-]{8,8192}+=*+)", re.I)
_BASIC = lazy(r"basic[ \t]+([A-Za-z0-9+/]{6,4096}+={0,2}+)(?![A-Za-z0-9+/=])", re.I)
_CURL_USER = lazy(r"(?:-u|--user)(?:[ \t]+|=)?(\\?[\"']|)((?:[^\s:\"'\\]|\\[^\s\"']){1,256}+):"
                        r"((?:[^\s\"'\\]|\\[^\s\"']){0,1024}+)\1")          # (\" in JSON too)
# Programs whose -u takes user:group, not user:password: the command a flag belongs to is the
# first word after the last ;, | or & before it (docker exec es01 curl -u ... is curl's).
_CURL_WORDS = lazy(r"(?<![\w.-])(?:curl|wget|http|https|xh)(?![\w.-])")
_USER_GROUP_PROGRAMS = frozenset({"docker", "podman", "nerdctl", "chown", "chgrp", "runuser"})
_COMMAND_WORDS = lazy(r"[^\s;|&]+")


def _user_group_flag(text: str, h: int) -> bool:
    """Whether the -u at ``h`` belongs to a command whose -u takes user:group."""
    start = _logical_line_start(text, h, 300)
    start = max([start] + [text.rfind(c, start, h) + 1 for c in ";|&"])
    words = [m.group().rsplit("/", 1)[-1] for m in _COMMAND_WORDS.finditer(text, start, h)]
    if any(w in ("curl", "wget", "http", "https") for w in words):
        return False                                   # docker exec x curl -u: curl's
    return next((w for w in words if w != "sudo"), None) in _USER_GROUP_PROGRAMS
_SIGNATURE = lazy(r"(?:sig|[a-z0-9-]{0,20}signature)=([A-Za-z0-9%+/=._-]{16,4000}+)", re.I)


def _decodes_to_userpass(b64: str) -> bool:
    import base64  # (on first use: most processes never decode)
    import binascii

    try:
        raw = base64.b64decode(b64 + "=" * (-len(b64) % 4), validate=True)
        s = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return ":" in s and s.isprintable()


def _schemes(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    for h in sc.hits(b"bearer"):
        if h and text[h - 1] in _LETTERS:
            continue
        m = _BEARER.match(text, h)
        if m:
            tok = m.group(1)
            if (len(tok) >= 20 or _has_digit(tok)) and not _placeholder(tok):
                out.append((m.start(1), m.end(1), _PRIO["bearer-token"]))
    for h in sc.hits(b"basic"):
        if h and text[h - 1] in _LETTERS:
            continue
        m = _BASIC.match(text, h)
        if m and _decodes_to_userpass(m.group(1)):
            out.append((m.start(1), m.end(1), _PRIO["basic-auth"]))
    user_group = any(p in text for p in _USER_GROUP_PROGRAMS)
    for h in sc.hits("-u"):
        if h and text[h - 1] == "-":
            h -= 1                                        # --user
            if not text.startswith("--user", h):
                continue
        if h and not text[h - 1].isspace():
            continue
        m = _CURL_USER.match(text, h)
        if m:
            user, pw = m.group(2), _esc_cut(m.group(3))
            if text.startswith(MARKER_PREFIX, m.start(2)):
                continue                                  # (a user already redacted)
            if user.startswith("+"):
                continue                                  # date -u +%H:%M:%S: a format
            if "@" in user and not _CURL_WORDS.search(text, _logical_line_start(text, h, 300), h):
                continue                                  # git push -u git@host:repo, rsync -u u@h:/p
            if not pw and not m.group(1) and _looks_random(user):
                out.append((m.start(2), m.end(2), _PRIO["basic-auth"]))   # -u sk_live_...: (Stripe)
            elif (pw and not (user.isdigit() and pw.isdigit()) and not _placeholder(pw)
                    and not (user_group and _user_group_flag(text, h))):
                out.append((m.start(3), m.start(3) + len(pw), _PRIO["basic-auth"]))
    # Signed URLs: Azure SAS sig=, X-Amz-Signature=, X-Goog-Signature=
    for needle in (b"sig=", b"signature="):
        for h in sc.hits(needle):
            q = h
            if needle == b"signature=":
                while q > 0 and text[q - 1] in _TOKCH and h - q < 20:
                    q -= 1
            if q == 0 or text[q - 1] not in "?&;":
                continue
            m = _SIGNATURE.match(text, q)
            if m:
                out.append((m.start(1), m.end(1), _PRIO["url-signature"]))


# Passwords given as a short flag: ``mysql -pSECRET`` and ``7z a -pSECRET`` (attached: ``-p
# SECRET`` would be mysql's prompt and its database name), ``sshpass -p SECRET``, ``docker login
# -u me -p SECRET``, ``mongosh``/``twine``/``az login``/``psexec -p SECRET``, ``redis-cli -a
# SECRET``, ``zip``/``unzip``/``sqlcmd -P SECRET``, ``ldapsearch -w SECRET``, ``openssl enc -k
# SECRET``. Each group names the flag's letter its programs take.
_FLAG_PROGRAMS = lazy(
    r"(?<![\w.-])(?:(?P<p_attached>mysql\w*|mariadb\w*|7z[az]?)|(?P<a>redis-cli)|(?P<p>sshpass"
    r"|mongosh|mongo|mongodump|mongorestore|mongoexport|mongoimport|twine|psexec(?:64)?"
    r"|(?:docker|podman|nerdctl|buildah|skopeo|helm(?:[ \t]+registry)?|oras|az)[ \t]+"
    r"(?:\S+[ \t]+){0,3}?login)|(?P<P>zip|unzip|sqlcmd|bcp)|(?P<w>ldap(?:search|add|modify|delete"
    r"|passwd|whoami|compare|modrdn|exop))|(?P<k>openssl))"
    r"(?![\w.-])")
_FLAG_VALUE = lazy(r"(\\?[\"'])?((?:[^\s\"'\\]|\\[^\s\"'nrt]){1,256}+)")


def _password_flags(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    programs = list(_FLAG_PROGRAMS.finditer(text))       # (found once: a text of flags stays linear)
    if not programs:
        return
    from bisect import bisect_right  # (here: a hook that finds no flag loads no bisect)

    ends = [m.end() for m in programs]
    for h in (m.start() for m in _PASSWORD_FLAG.finditer(text)):
        k = bisect_right(ends, h) - 1
        if k < 0:
            continue
        program = programs[k]                             # the last one before the flag, on its line
        if (program.start() < _logical_line_start(text, h, 300)
                or any(c in text[program.end():h] for c in ";|&")):
            continue
        letter = program.lastgroup
        if letter[0] != text[h + 1]:
            continue                                      # redis-cli: -a is the password, -p the port
        j = h + 2
        space = _WS.match(text, j)
        if letter == "p_attached":
            if space or j >= len(text):
                continue                                  # mysql -p: it will prompt
        elif space:
            j = space.end()
        elif program.group() != "sshpass":                # (sshpass -pSECRET works too)
            continue
        m = _FLAG_VALUE.match(text, j)
        if not m:
            continue
        value = m.group(2)
        if value.startswith(("-", "$", *_TEMPLATE_START)) or _placeholder(value):
            continue
        out.append((m.start(2), m.end(2), _PRIO["password"]))


# Cookie headers: a session's cookie is its credential. In ``Cookie: a=1; sid=x`` every pair is
# a cookie, in ``Set-Cookie: sid=x; Path=/`` the first; a value goes when its name says session,
# token or auth, or when it looks random (analytics' _ga=GA1.2.123.456 stays).
_COOKIE_HEADER = lazy(r"(set-)?cookie\\?[\"']?[ \t]*:[ \t]*\\?[\"']?")
_COOKIE_PAIR = lazy(r"[ \t]*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}+)=([^;,\s\"'\\]{1,4096}+)")
_SESSION_NAME = lazy(r"(?i:sess|sid|token|auth|jwt|login|remember|csrf|xsrf)")


def _cookies(sc: _Scan, out: list[Span]) -> None:
    text, low = sc.text, sc.low
    done = -1
    for h in sc.hits(b"cookie"):
        if h < done:
            continue                                      # (inside pairs already read)
        m = _COOKIE_HEADER.match(low if low.__class__ is str else text.lower(), h)
        if not m or (h and text[h - 1] in _ALNUM):
            continue
        i = done = m.end()
        while True:
            pair = _COOKIE_PAIR.match(text, i)
            if not pair:
                break
            v = pair.group(2)
            done = pair.end()
            if ((_SESSION_NAME.search(pair.group(1)) and len(v) >= 8 and not v.isdigit()
                 or len(v) >= 24 and _looks_random(v))
                    and not _placeholder(v) and not v.startswith(_TEMPLATE_START)):
                out.append((pair.start(2), pair.end(2), _PRIO["generic-secret"]))
            if m.group(1) or not text.startswith(";", pair.end()):
                break                                     # Set-Cookie: one cookie, then attributes
            i = pair.end() + 1


# A password echoed into a command that reads it from stdin: ``echo 'pw' | sudo -S ...``,
# ``echo "$tok" | docker login -u me --password-stdin``, ``echo 'user:pw' | sudo chpasswd``,
# ``echo pw | passwd --stdin user``. (The "stdin" trigger stands for all of them.)
_ECHO_PIPE = lazy(r"(?:echo|printf)(?:[ \t]+-[neE]{1,3})*[ \t]+(?:'%s(?:\\n)?'[ \t]+)?"
                        r"(\\?[\"']?)([^\s\"'|;&\\]{1,256}+)\1[ \t]*\|[ \t]*((?:[^\n|;&\\]|\\[^nr]){0,300})")
_READS_STDIN = lazy(r"sudo\b.*?[ \t]-[A-Za-z]*S\b|(?:sudo[ \t]+)?\S*chpasswd|.*(?:--password-stdin"
                          r"|passwd[ \t].*--stdin)")


def _piped_passwords(sc: _Scan, out: list[Span]) -> None:
    text, low = sc.text, sc.low
    lines = set()                                         # (the lines where a reader is named)
    for needle in ("stdin", "chpasswd", " -s"):
        lit = needle if low.__class__ is str else needle.encode()
        i = low.find(lit)
        while i != -1:
            lines.add(text.rfind("\n", 0, i) + 1)
            i = low.find(lit, _line_end(text, i))
    for m in (m for ls in sorted(lines) for m in _ECHO_PIPE.finditer(text, ls, _line_end(text, ls))):
        value = m.group(2)
        if value.startswith(("$", *_TEMPLATE_START)) or _placeholder(value):
            continue
        if _READS_STDIN.match(m.group(3)):
            s = m.start(2)
            if "chpasswd" in m.group(3) and ":" in value:
                s += value.index(":") + 1                 # user:password
            out.append((s, m.end(2), _PRIO["password"]))


# A login call's password as its second argument: smtplib's, ftplib's and imaplib's
# ``server.login("me@corp.io", "pw")`` or ``server.login(user, "pw")``.
_LOGIN_CALL = lazy(r"login\([ \t]*(?:\\?[\"'][^\"'\n]{0,200}+\\?[\"']|[\w.\[\]]{1,100}+)[ \t]*,[ \t]*"
                         r"(\\?[\"'])((?:[^\"'\n\\]|\\[^\"'\n]){1,200}+)\1[ \t]*\)")


def _login_calls(sc: _Scan, out: list[Span]) -> None:
    for h in sc.hits("login("):
        m = _LOGIN_CALL.match(sc.text, h)
        if m and not _placeholder(m.group(2)) and not m.group(2).startswith(_TEMPLATE_START):
            out.append((m.start(2), m.end(2), _PRIO["password"]))


# MySQL/MariaDB: CREATE USER 'u'@'h' IDENTIFIED BY 'secret' (also WITH ... BY, BY PASSWORD).
_IDENTIFIED_BY = lazy(r"identified(?:[ \t]+with[ \t]+\w{1,40})?[ \t]+by[ \t]+"
                            r"(?:password[ \t]+)?(\\?['\"])", re.I)


def _sql_identified(sc: _Scan, out: list[Span]) -> None:
    for h in sc.hits(b"identified"):
        m = _IDENTIFIED_BY.match(sc.text, h)
        span = _quoted_span(sc.text, m.start(1)) if m else None
        if span:
            out.append((span[0], span[1], _PRIO["password"]))


# --------------------------------------------------------------------------------------------
# Generic key/value secrets: the name stays, the value goes

# (Sentry DSNs need no "dsn" needle: their 32-hex key is caught in the URL itself.)
_KEY_NEEDLES = (b"pass", b"pwd", b"secret", b"token", b"auth", b"cred", b"key")
_KEY_WORDS_BEFORE_KEY = ("api", "access", "private", "session", "signing", "encryption",
                         "master", "secret", "auth", "account", "sharedaccess", "x-api", "cf-api",
                         "client", "subscription", "hmac", "jwt", "deploy", "app", "consumer",
                         "storage", "license", "priv", "cookie", "aes", "cipher", "crypto")
_KEYCH = _WORD | {".", "-"}
_AFTER_KEY = frozenset("=:\"'`> \t]\\*_")          # what may follow a key name before its value
_KEY_FWD = lazy(r"[A-Za-z0-9_.-]{0,200}+")
_KEY_RUN = lazy(r"[A-Za-z0-9_.-]*+")
_SEG = lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "passcode", "pwd")
_STRONG = frozenset({
    "password", "passwd", "passphrase", "passcode", "pass", "pwd", "secret", "secrets", "token",
    "apikey", "accesskey", "privatekey", "sessionkey", "secretkey", "authkey", "signingkey",
    "encryptionkey", "masterkey", "credential", "credentials", "creds", "auth", "oauth",
    "accountkey", "sharedaccesskey", "privkey", "hmackey", "jwtkey", "appsecret",
    "cookie", "cookies",     # (no needle: in text a cookie needs its Cookie: header; a key here)
})
_STRONG_SUFFIX = ("password", "passwd", "passphrase", "passcode", "pwd", "secret", "token",
                  "apikey", "accesskey", "privatekey", "sessionkey", "secretkey", "authkey", "oauth")
_STRONG_PREFIX = ("password", "passwd", "secret")
_HAS_STRONG_WORD = lazy("|".join(_STRONG_SUFFIX))
_KEY_PAIRS = frozenset({"api", "access", "private", "session", "signing", "encryption", "master",
                        "secret", "auth", "client", "account", "subscription", "hmac", "jwt",
                        "deploy", "app", "consumer", "storage", "license", "priv", "cookie",
                        "aes", "cipher", "crypto"})
_NOT_SECRET_AFTER = frozenset({
    "count", "counts", "limit", "limits", "type", "types", "url", "uri", "urls", "endpoint",
    "endpoints", "path", "paths", "file", "filename", "files", "dir", "folder", "len", "length",
    "size", "name", "names", "max", "min", "ttl", "timeout", "expiry", "expires", "expiration",
    "exp", "lifetime", "age", "field", "fields", "param", "params", "prefix", "suffix", "format",
    "kind", "mode", "method", "methods", "provider", "providers", "policy", "env", "var", "vars",
    "usage", "budget", "index", "idx", "required", "enabled", "enable", "disabled", "hint",
    "label", "placeholder", "help", "description", "desc", "strength", "regex", "pattern",
    "rotation", "reset", "retries", "attempts", "location", "backend", "algorithm", "alg",
    "scheme", "version", "at", "in", "seconds", "sec", "ms", "duration", "interval", "window",
    "rate", "style", "class", "visible", "prompt", "message", "msg", "error",
    "errors", "status", "state", "flow", "page", "form", "route", "handler", "validator",
    "validation", "check", "changed", "updated", "created", "modified", "encoding", "bits",
    "complexity", "mask", "masked", "hidden", "shown", "manager", "store", "vault",
    "id", "ids", "domain", "domains", "issuer", "audience", "scope", "scopes", "realm", "sock",
    "socket", "directory", "host", "hostname", "port", "region", "user", "username", "email",
    "callback", "redirect",
})
# NAMEpass: DBPASS, adminpass, keytool's -storepass (not "bypass", "compass", "surpass").
_PASS_OWNERS = frozenset({"db", "admin", "root", "user", "store", "key", "smtp", "mail", "ftp",
                          "pg", "mysql", "redis", "ldap", "vnc", "wifi", "mq", "app", "sudo",
                          "login", "bind", "proxy", "keystore", "truststore", "src", "dest",
                          "srcstore", "deststore", "srckey", "destkey", "require"})  # requirepass
# A "key" that is a file name with its line number after it: auth.py:42, secrets.ts:10:5.
_SOURCE_EXTENSIONS = frozenset({"py", "pyi", "js", "jsx", "mjs", "cjs", "ts", "tsx", "go", "rb",
                                "java", "kt", "rs", "c", "cc", "cpp", "h", "hpp", "cs", "php",
                                "swift", "scala", "sh", "lua", "ex", "exs", "erl", "dart", "vue",
                                "svelte", "m", "mm", "pl", "r", "jl", "clj", "groovy"})
# (Words that only precede flags and counts: "reset_password_token" or "use_auth_token" can
# hold a real secret, so "reset"/"use"/"new" are deliberately not here.)
_NOT_SECRET_BEFORE = frozenset({"max", "min", "num", "count", "total", "n", "show", "hide", "has",
                                "is", "no", "skip", "require", "requires", "enable",
                                "publishable"})

_NON_SECRET_VALUES = frozenset({
    "", "null", "none", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "inherit",
    "required", "optional", "redacted", "masked", "hidden", "n/a", "na", "tbd", "todo", "empty",
    "-", "~", "unset", "nan", "default", "oauth1", "oauth2", "oidc", "saml2", "sigv4", "x509",
    "test", "dummy", "fake", "example", "sample",
})
_TYPE_WORDS = frozenset({"str", "string", "bytes", "int", "bool", "number", "any", "secretstr",
                         "secretbytes", "object", "none", "optional", "char", "text", "varchar"})
_TYPE_START = lazy(
    r"(?:str|String|string|bytes|int|bool|Optional|Union|Annotated|SecretStr|SecretBytes|Any|"
    r"list|dict|List|Dict|Mapping|Sequence|tuple|Tuple|typing\.\w+|Final|ClassVar)\b")
# A file system path (made of names: a random value with slashes is base64), a type's name.
_PATH_VALUE = lazy(r"(?:~|\.{1,2})?(?:/[\w.@+-]{1,100}){2,40}/?")
_NAME_PATH = lazy(r"[a-z][a-z_-]{0,60}(?:/[a-z][a-z_-]{0,60}){1,10}")   # --secret-id prod/db
_PASCAL_TYPE = lazy(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*")
_PLACEHOLDER = lazy(
    r"<[^<>\n]{0,200}>|\$\{.{0,200}\}|\$\(.{0,200}\)|\$[A-Za-z_]\w{0,100}|%[A-Za-z_]\w{0,100}%|"
    r"\{\{.{0,200}\}\}|\{[A-Za-z_][\w.]{0,100}\}|[*•·]{3,50}\w{0,6}|[xX]{3,100}|\.{3,100}|…|"
    r"(?i:your|my)[-_ ].{0,100}|\[REDACTED:.{0,60}|(?i:<redacted>|redacted)|"
    r"\?|\$\d{1,3}|\$[@*#?!]|%s|%\([A-Za-z_]\w{0,100}\)s|:[A-Za-z_]\w{0,100}|"  # shell/SQL parameters
    r"\[[A-Z][A-Z_]{1,20}\]|"                                    # a tokenizer's [UNK], [SEP]
    r"[\w-]{1,12}(?:\.{3,100}|…|[*•]{3,100})|[A-Za-z_-]{1,12}[xX]{4,100}|"  # sk-..., gho_****,
    #                                                            ghp_XXXX (Q7000XXXx is no placeholder)
    r"(?i:(?:[a-z0-9]{0,8}[-_]){0,2}(?:your|my)[-_ ](?:[a-z]{1,20}[-_ ]){0,3}"  # sk-your-key-here
    r"(?:key|token|secret|password|pass|pwd|api|id|value|here)[a-z]{0,8}(?:[-_ ][a-z]{1,20}){0,3}|"
    r".{0,40}(?:key|token|secret|password|api|value)[-_ ]here|replace[-_ ]?me)",
    re.S)
_TEMPLATE_START = (MARKER_PREFIX, "${", "{{", "$(", "<%", "{%")
_CALL = lazy(r"[A-Za-z_$][\w$]{0,100}+(?:(?:\??\.|::)[A-Za-z_$][\w$]{0,100}+){0,20}+(?:[(\[]|!\()")
_ATTR_CHAIN = lazy(r"[A-Za-z_$][\w$]{0,100}+(?:(?:\??\.|::)[A-Za-z_$][\w$]{0,100}+){1,20}+")
_IDENT = lazy(r"[A-Za-z_][A-Za-z0-9_]{0,200}")
_DIGIT_THEN_LOWER = lazy(r"[0-9][a-z]")
_HUMPS = lazy(r"[A-Z][a-z]{2,}|[a-z]{3,}")       # a name's words: Private, Key, base
_CODE_WORDS = frozenset({"await", "new", "yield", "lambda", "not", "function", "async", "typeof",
                         "self", "this", "cls", "return", "if", "else", "or", "and", "in", "is"})
_STOPWORDS = frozenset({"to", "the", "a", "an", "and", "or", "with", "when", "if", "for", "in",
                        "on", "of", "is", "as", "flag", "option", "argument", "instead", "which",
                        "that", "this", "it", "but", "not", "only", "here", "there", "so", "then",
                        "was", "were", "are", "be", "by", "from", "at"})
_VAR_NAMES = frozenset({"pw", "pwd", "tok", "key", "value", "val", "s", "x", "v"})
_SEP = lazy(r"[ \t]*(=>|:=|===|==|=|:(?!:))[ \t]*")
_WS = lazy(r"[ \t]+")
_SETTER = lazy(r"(?i:(?:set|with)?_?(?:password|passwd|passphrase))")
_LAST_STRING_ARG = lazy(r"\((?:[ \t]*\\?[\"'][^\"'\n]{0,200}+\\?[\"'][ \t]*,){0,3}+[ \t]*(\\?[\"'])"
                              r"((?:[^\"'\n\\]|\\[^\"'\n]){1,200}+)\1[ \t]*\)")
_AUTH_PAIR = lazy(r"\([ \t]*(\\?[\"'])(?:[^\"'\n\\]|\\[^\"'\n]){0,200}+\1[ \t]*,[ \t]*(\\?[\"'])"
                        r"((?:[^\"'\n\\]|\\[^\"'\n]){1,500}+)\2[ \t]*\)")      # (\" in JSON too)
_PASSPHRASE_TAIL = lazy(r"(?:[ \t]+[A-Za-z0-9]{1,40}){1,8}(?=[ \t]*(?:$|\\[nr]|[\r\n]))")
_ODBC_BRACED = lazy(r"\{([^{}\n\"':,]{1,200})\}(?=[;\s\"']|$)")
_NETRC = lazy(r"(?<!\S)(?:machine|login|default)\s")
# An unquoted value: up to 4096 characters without whitespace or quotes, cut before its first
# \n, \r or \t escape (or a lone backslash at its end): _esc_cut(_UNQUOTED match) in one step.
_UNQUOTED_VALUE = lazy(r"[^\s\"'`\\]*+(?:\\[^\s\"'`nrt][^\s\"'`\\]*+)*+")
_CUT = lazy(r"[;&][A-Za-z_][\w.-]{0,100}=")
_DEFAULT = lazy(r"[^\n=]{0,200}?(?<![=!<>])=(?!=)[ \t]*")
_BLOCK = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_STR_PREFIX = lazy(r"[rRbBuUfF]{1,2}(?=[\"'])")
_STR_PREFIX_CHARS = frozenset("rRbBuUfF")
_TRAIL = ".,;:)]}>"


_VENDOR_FAMILIES = {"twilio": "twilio-key", "sendgrid": "sendgrid-key", "mailgun": "mailgun-key"}
_VENDOR_KEY_NAMES = tuple(_VENDOR_FAMILIES)


def _vendor_family(seg: str) -> str:
    return next(f for v, f in _VENDOR_FAMILIES.items() if seg.startswith(v))


def _placeholder(v: str) -> bool:
    return _short_placeholder(v) if len(v) <= 64 else _is_placeholder(v)


def _is_placeholder(v: str) -> bool:
    return v.lower() in _NON_SECRET_VALUES or _PLACEHOLDER.fullmatch(v) is not None


_short_placeholder = functools.lru_cache(maxsize=4096)(_is_placeholder)


@functools.lru_cache(maxsize=4096)
def _classify(key: str) -> str | None:
    """Family for a secret-looking key name, or None when the name is not a secret's."""
    if "." in key and key.rsplit(".", 1)[1].lower() in _SOURCE_EXTENSIONS:
        return None
    segs = [s.lower() for s in _SEG.findall(key)]
    idx = -1
    for i, s in enumerate(segs):
        if (s in _STRONG or s.endswith(_STRONG_SUFFIX)
                or (s.startswith(_STRONG_PREFIX) and not s.startswith("secretar"))
                or (s.endswith("pass") and s[:-4] in _PASS_OWNERS)):
            idx = i
            break
        if s in _KEY_PAIRS and i + 1 < len(segs) and segs[i + 1] in ("key", "secret"):
            idx = i + 1
            break
        if s == "shared" and segs[i + 1:i + 3] == ["access", "key"]:
            idx = i + 2
            break
        if s == "dsn" and any(x.startswith("sentry") for x in segs[:i]):
            idx = i
            break
    if idx < 0:
        return None
    last = max([idx] + [i for i in range(idx + 1, len(segs))
                        if segs[i] in _STRONG or segs[i].endswith(_STRONG_SUFFIX)])
    if segs[last:last + 2] != ["secret", "id"] and any(             # (Vault's secret_id is one)
            s in _NOT_SECRET_AFTER for s in segs[last + 1:]):
        return None                                    # AUTH_DOMAIN, but AUTH_USER_PASSWORD
    if any(s in _NOT_SECRET_BEFORE for s in segs[:idx]):
        return None
    if segs[last] == "token" and last and segs[last - 1] in ("page", "next", "continuation"):
        return None                                    # nextPageToken: pagination
    joined = "".join(segs)
    if segs[idx] == "dsn":
        return "sentry-dsn"
    if joined.endswith(("accountkey", "sharedaccesskey")):
        return "azure-storage-key"
    if "cf" in segs or any(s.startswith("cloudflare") for s in segs):
        return "cloudflare-token"
    for s in segs:
        if s.startswith(_VENDOR_KEY_NAMES):                # TWILIO_AUTH_TOKEN, SENDGRID_API_KEY
            return _vendor_family(s)
    if "secretaccesskey" in joined:
        return "aws-secret-key"
    for s in (segs[idx], segs[last]):
        if s.endswith("pass") or s.startswith(_PASSWORD_WORDS) or s.endswith(_PASSWORD_WORDS):
            return "password"
    return "generic-secret"


def _value_span(text: str, ks: int, ke: int, key: str, family: str) -> tuple[int, int] | None:
    """Span of the value assigned to the key ``text[ks:ke]``, or None when there is none."""
    n = len(text)
    i = ke
    q = text[ks - 1] if ks else ""
    quoted_key = False
    if q and q in _QUOTES:                          # "password": ... / os.environ["TOKEN"] = ...
        if text.startswith(q, i):
            i, quoted_key = i + 1, True
        elif ks >= 2 and text[ks - 2] == "\\" and text.startswith("\\" + q, i):
            i, quoted_key = i + 2, True
        if quoted_key and text.startswith("]", i):
            i += 1
    elif q == "<" and text.startswith(">", i):      # <password>x</password>
        end = text.find("<", i + 1, _line_end(text, i))
        if end > i + 1 and not _placeholder(text[i + 1:end].strip()):
            return (i + 1, end)
        return None
    if text.startswith(("**", "__"), i):                # **Password:** hunter2
        i += 2
    if text.startswith("(", i):                        # HTTPBasicAuth("user", "pass")
        if key.lower().endswith(("auth", "credential", "credentials")):  # PlainCredentials("u", "p")
            tm = _AUTH_PAIR.match(text, i)
            return tm.span(3) if tm and not _placeholder(tm.group(3)) else None
        am = _LAST_STRING_ARG.match(text, i) if _SETTER.fullmatch(key.rsplit(".", 1)[-1]) else None
        if am and " " in am.group(2):
            return None                                # questionary.password("Enter it:")
        return am.span(2) if am and not _placeholder(am.group(2)) else None  # setPassword("x"),
        #                                                             keyring.set_password(s, u, "x")
    named = None if _PLAIN_ASSIGNMENT.match(text, i) else _named_value(text, ks, ke, i)
    m = None if named is not None else _SEP.match(text, i)
    if named is not None and text[named - 1] == ">":   # <entry key="password">x</entry>
        span = _prose_span(text, named)                # (one word that reads as a secret)
        if span is None:
            return None
        lt = text.find("<", span[0], span[1])
        return (span[0], lt) if lt > span[0] else span if lt == -1 else None
    if named is not None:                              # {"name": "DB_PASSWORD", "value": "x"}
        sep, j, spaced = "=", named, False
    elif family == "password" and (q := _SQL_QUOTED.match(text, i)) is not None:
        return _quoted_span(text, q.end()) or None     # ALTER USER u WITH PASSWORD 'x'
    elif m:
        sep, j = m.group(1), m.end()
        spaced = text[i] in " \t" and text[j - 1] in " \t"
        if text.startswith(("**", "__"), j) and text[j + 2:j + 3] in (" ", "\t"):
            j = _WS.match(text, j + 2).end()
    elif key.lower() in ("password", "passwd") and _WS.match(text, i) and _NETRC.search(
            text, _logical_line_start(text, ks, 256), ks):
        m = _WS.match(text, i)                         # .netrc: machine h login u password p
        sep, j, spaced = " ", m.end(), False
    elif key.startswith("-"):                          # --password hunter2
        m = _WS.match(text, i)
        if not m:
            return None
        sep, j, spaced = " ", m.end(), False
    elif (m := _PROSE_IS.match(text, i)) is not None:  # "the db password is hunter2",
        return _prose_span(text, m.end())              # "set the password to X"
    elif not key.endswith(".") and (m := _WS.match(text, i)) is not None:
        return _spaced_span(text, m.end(), family, key)  # "password   X", "aws_secret_access_key K"
    else:
        return None
    if j >= n:
        return None
    q = text[ks - 1] if ks else ""
    if q in _QUOTES and q and not quoted_key and (text.startswith(q, j) or (
            text.startswith("\\" + q, j) and text[ks - 2:ks - 1] == "\\")):
        return None                                    # input("Password: "): a prompt's text
    if text[j] in _QUOTES and text[j + 1:j + 2] in ("", ")", ",", "]", ";", "}", "+", ".", "\n"):
        return None                                    # ask("the admin password:"): it closes
    quoted = _quoted_span(text, j)
    if quoted is not None:
        if quoted and family == "generic-secret" and _short_word(text[quoted[0]:quoted[1]], key):
            return None                                # {"token": "Hello", "logprob": -0.3}
        return quoted or None
    c = text[j]
    if c in "{[(":
        tm = _AUTH_PAIR.match(text, j) if c == "(" else None
        if tm and not _placeholder(tm.group(3)):        # auth=("user", "pass")
            return tm.span(3)
        bm = _ODBC_BRACED.match(text, j) if c == "{" else None
        if bm and not _placeholder(bm.group()):         # ODBC: PWD={p;w};
            return bm.span(1)
        return None                                    # a structure: its own keys speak for it
    raw = _UNQUOTED_VALUE.match(text, j, j + 4096).group()
    if not raw:
        return None
    rend = j + len(raw)
    if raw.startswith(_TEMPLATE_START) or _placeholder(raw):
        return None                                    # ${{ secrets.X }}, {{ .Values.x }}, $(cmd)
    if (sep == ":" and raw.isalpha() and raw.islower() and key.replace(" ", "").isalpha()
            and not quoted_key and text[rend:rend + 1] == " " and text[rend + 1:rend + 2].isalpha()
            and (family != "password" or not _line_prefix_blank(text, ks))):
        return None                                    # prose: "invalid token: expected string"
    if sep == ":" and raw[0] == "&" and (raw == "&" or raw.startswith(("&mut", "&'"))
                                         or _TYPE_START.match(raw, 1)):
        return None                                    # Rust: password: &str, &'a str, &mut
    if sep == ":" and raw in _BLOCK:                   # YAML block scalar: the indented lines
        return _yaml_block(text, ks, rend)
    if sep == ":" and _TYPE_START.match(raw) and (raw.lower().rstrip(",;:=)") in _TYPE_WORDS
                                                   or not raw[0].islower() or "[" in raw or "|" in raw):
        # token: str = "abc"  -> the default (not from the next line of JSON text). The "=" of a
        # _DEFAULT match is the first one, and no \n or \r escape ends after it.
        eq = text.find("=", rend, rend + 201)
        if eq == -1 or "\\n" in text[rend:eq] or "\\r" in text[rend:eq]:
            return None
        dm = _DEFAULT.match(text, rend)
        if not dm or dm.end() >= n:
            return None
        return _default_span(text, dm.end())
    if sep == " " and (raw[0] in "-<>|&;" or raw.lower() in _STOPWORDS):   # (< a redirect)
        return None
    if family == "generic-secret" and (_short_word(raw, key) or _YAML_TAG.fullmatch(raw)):
        return None                                    # auth: ldap, api_key: !ENV ${API_KEY}
    v = raw
    if ";" in v or "&" in v:
        cm = _CUT.search(v)
        if cm:
            v = v[:cm.start()]                         # Password=x;Database=y  /  ?token=x&user=y
    stripped = v.rstrip(_TRAIL)
    trailing, v = v[len(stripped):], stripped
    if not v or (v != raw and _placeholder(v)) or v.lower() in _CODE_WORDS:
        return None
    if _CALL.match(raw) or _ATTR_CHAIN.fullmatch(v.rstrip("!")) and _code_name(v.rstrip("!")):
        return None                                    # get_password(), os.environ[...], cfg.pw
    if _IDENT.fullmatch(v) and (spaced or trailing[:1] in (",", ")")) and _variable_name(v):
        lv = v.lower()
        if ("_" in v or lv == key.lower().strip("-") or lv in _VAR_NAMES
                or _HAS_STRONG_WORD.search(lv)):
            return None                                # password = password: a variable
    if key.lower().strip("-") in ("pwd", "oldpwd") and v[:1] in ("/", "~", "."):
        return None                                    # the shell's working directory
    if key.lower() == "pass" and v.isdigit():
        return None                                    # "pass: 3  fail: 1" is a count
    if family != "password":
        if len(v) <= 6 and v.replace(":", "").isdigit():
            return None                                # a count, a line number (auth.go:88)
        if _PATH_VALUE.fullmatch(v) and not _looks_random(v) or _NAME_PATH.fullmatch(v):
            return None                                # ..._CREDENTIALS=/home/me/sa.json
        if sep == ":" and _PASCAL_TYPE.fullmatch(v) and trailing[:1] in (";", ",", ")", "|"):
            return None                                # token: AccessToken;  (a type)
    end = j + len(v)
    if family == "password" and sep == ":" and _line_prefix_blank(text, ks):
        end = len(text[:_value_limit(text, j)].rstrip())   # "password: correct horse battery"
    elif family == "password" and sep == "=" and (
            words := _PASSPHRASE_TAIL.match(text, end, _value_limit(text, j))) and (
            _line_prefix_blank(text, ks) or text[:ks].rstrip().endswith("export")):
        end = words.end()                              # .env/INI: DB_PASSWORD=open sesame 42
    return (j, end)


# A secret's name given where its value follows: as a name field's value, as the first argument
# of a call that takes a name and a value, or as an environment variable with a fallback.
_NAMED_FORMS = tuple((lazy(before + r"\\?[\"']?[\w/.-]{0,60}\Z"), lazy(value)) for
                     before, value in (
    (r"\b(?i:name|key|variable)\\?[\"']?[ \t]*[:=]?[ \t]*",     # {"name": "X", "value": "v"}
     r"\\?[\"']?(?:[ \t]*+,[ \t]*+\\?\"\w{1,20}\\?\"[ \t]*+:[ \t]*+\\?\"[^\"\\]{0,40}+\\?\")?"  # ("Type": "x")
     r"[ \t]*+[,;{]?(?:\s|\\[nrt]){0,40}+\\?[\"']?(?i:value|default)\\?[\"']?[ \t]*[:=][ \t]*"),
    (r"[\"']",                                                     # terraform output -json
     r"\\?[\"']?[ \t]*:[ \t]*\{[^{}\n]{0,80}?\\?[\"']value\\?[\"'][ \t]*:[ \t]*"),
    (r"\b(?:get|getenv|setdefault|[Ss]et|[Aa]dd|setRequestProperty|setHeader|header|put|"
     r"getProperty|getOrDefault|setProperty|[Ss]etenv|putenv|define)\([ \t]*",  # getenv("X", "v"),
    #                                                            PHP's define('DB_PASSWORD', 'v')
     r"\\?[\"']?[ \t]*,[ \t]*(?=\\?[\"'])"),
    (r"\benv\.", r"[ \t]*(?:\|\||\?\?)[ \t]*(?=\\?[\"'])"),     # process.env.X || "v"
    (r"<\w[\w.:-]{0,40}[ \t]+(?i:name|key)=\\?[\"']", r"(?:\\?[\"'])?[ \t]*>"),  # <entry key="X">v</
))


# KEY=..., "key": ... (most keys): no named form, unless a nested {"value": ...} follows.
_PLAIN_ASSIGNMENT = lazy(r"\\?[\"']?[ \t]*+[=:](?![ \t]*+\{)")


def _named_value(text: str, ks: int, ke: int, i: int) -> int | None:
    """Where the value of the name ``text[ks:ke]`` (its value may follow from ``i``) starts in
    one of _NAMED_FORMS, or None."""
    for before, value in _NAMED_FORMS:       # (the value's lead first: it seldom matches)
        m = value.match(text, i)
        if m and before.search(text, max(0, ks - 80), ke):
            return m.end()
    return None


_SQL_QUOTED = lazy(r"[ \t]+(?=')")               # SQL: PASSWORD 'x'
_PROSE_IS = lazy(r"(?:[ \t]+(?:for|of|on)(?:[ \t]+[\w.@-]{1,40}){1,4}?(?=[ \t]+(?:is|was)[ \t]))?"
                       r"[ \t]+(?:(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+|now[ \t]+)?|to[ \t]+)")
_PROSE_VALUE = lazy(r"(\\?[\"'`])?([^\s\"'`\\]{6,256}+)")
_VERSION = lazy(r"v?\d+(?:\.\d+)+[\w.+-]*|\d+(?:st|nd|rd|th)"        # auth v2.1.0,
                      r"|[a-z0-9]+-[a-z]+(?:ed|ing)"                        # base64-encoded,
                      r"|(?i:sha\d{1,3}|md5|bcrypt|argon2\w{0,2}|scrypt|pbkdf2\w{0,12})")  # sha256


_HEX_KEY = lazy(r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{20,128}|"   # an API key in
                      r"(?=[0-9A-F]*[A-F])(?=[0-9A-F]*[0-9])[0-9A-F]{20,128}|"   # hex, or a UUID
                      r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


_YAML_TAG = lazy(r"![A-Za-z_]{1,30}")


def _code_name(v: str) -> bool:
    """Whether ``v``, an identifier or a dotted chain of them, is shaped like names in code
    (``settings.db_password``, ``cfg.pw``, ``s3.Client``), not like a secret that happens to
    fit the same characters (``m4ple.Syrup42``, Vault's ``s.PbLtvfkymKhbtWQ4UO3XCoNq``): no
    digit runs on into lower case letters, and no part of 12 characters or more looks random."""
    if _DIGIT_THEN_LOWER.search(v.split(".", 1)[0]):
        return False                                   # (self.oauth2token, ctx.k8sClient stay)
    return not any(len(part) >= 12 and _has_digit(part) and _looks_random(part)
                   and sum(map(len, _HUMPS.findall(part))) <= len(part) / 2  # (Ed25519PrivateKey)
                   for part in v.split("."))


def _variable_name(v: str) -> bool:
    """An identifier in one case style (``user_password``, ``DB_PASS``, ``dbPassword``) rather
    than a password with an underscore in it (``dragonFly_88``, ``Summer_2024``)."""
    core = v.strip("_")                                  # (_private, __dunder__)
    return _code_name(v) and ("_" not in core or core.islower() or core.isupper()
                              or not core.rsplit("_", 1)[1].isdigit())   # (DB_PASSWORD_v2)


def _short_word(v: str, key: str) -> bool:
    """A short word under a name that often holds one: auth: ldap, {"token": "Hello"}."""
    w = v.strip()
    return len(w) < 8 and w.isalpha() and key.lower().rstrip("\"'").endswith(("auth", "token"))


def _spaced_span(text: str, j: int, family: str, key: str) -> tuple[int, int] | None:
    """The value after a key and whitespace alone: a password that reads as one (see
    _prose_span), or any secret that looks random (prose after "token" or "key" stays). After
    a bare "pass" (a verb too: "pass X-Api-Key ...") only a random one."""
    if key.lower() == "pass":
        family = ""
    span = _prose_span(text, j)
    if span is None or "=" in text[span[0]:span[1]]:
        return None                                    # (another assignment: request_id=...)
    v = text[span[0]:span[1]]
    return span if family == "password" or _looks_random(v) or _HEX_KEY.fullmatch(v) else None


def _prose_span(text: str, j: int) -> tuple[int, int] | None:
    """The value in "… password is X": X when it reads as a secret, not as a word: six
    characters or more with a digit or with the case changing three times or more ("is
    incorrect", "is JWT-based" stay), and not code or a placeholder."""
    m = _PROSE_VALUE.match(text, j)
    if not m:
        return None
    value = m.group(2).rstrip(_TRAIL)
    letters = [c.isupper() for c in value if c.isalpha()]
    case_changes = sum(a != b for a, b in zip(letters, letters[1:]))
    if (len(value) < 6 or not (_has_digit(value) or case_changes >= 3)
            or _VERSION.fullmatch(value)
            or value.startswith(_TEMPLATE_START) or _placeholder(value)
            or _CALL.match(value) or _ATTR_CHAIN.fullmatch(value) and _code_name(value)):
        return None
    return (m.start(2), m.start(2) + len(value))


def _quoted_span(text: str, j: int) -> tuple[int, int] | tuple[()] | None:
    """For a string starting at ``j`` (quote, JSON-escaped quote, or Python's ``r"``/``b'``/
    ``f"`` prefixes and a quote): the span of its value, or ``()`` when that value is empty or
    a placeholder; None when no string starts there."""
    if text[j] in _STR_PREFIX_CHARS:
        pm = _STR_PREFIX.match(text, j)
        if pm:
            j = pm.end()
    c = text[j]
    if not (c in _QUOTES or (c == "\\" and text[j + 1:j + 2] in ("\"", "'"))):
        return None
    quote = text[j:j + 2] if c == "\\" else c
    start = j + len(quote)
    end = _close_quote(text, start, quote)
    v = text[start:end]
    return (start, end) if v and not _placeholder(v) else ()


def _default_span(text: str, j: int) -> tuple[int, int] | None:
    """The default value after a type annotation (``token: str = "abc"``)."""
    quoted = _quoted_span(text, j)
    if quoted is not None:
        return quoted or None
    raw = _UNQUOTED_VALUE.match(text, j, j + 4096).group()
    v = raw.rstrip(_TRAIL)
    if (not v or _placeholder(v) or _CALL.match(raw) or _ATTR_CHAIN.fullmatch(v)
            or _IDENT.fullmatch(v)):
        return None
    return (j, j + len(v))


def _yaml_block(text: str, ks: int, after: int) -> tuple[int, int] | None:
    """The lines of a YAML block scalar (``password: |``): those indented past the key."""
    indent = ks - (text.rfind("\n", 0, ks) + 1)
    pos = _line_end(text, after) + 1
    first, last, n = pos, None, len(text)
    while pos < n:
        le = _line_end(text, pos)
        line = text[pos:le]
        body = line.lstrip(" \t")
        if body and len(line) - len(body) <= indent:
            break
        if body:
            last = le
        pos = le + 1
    return None if last is None else (first, last)


_B64CH = _ALNUM | {"+", "/", "_", "-"}


def _in_random_run(text: str, ks: int, ke: int) -> bool:
    """Whether the key ``text[ks:ke]`` is part of a random base64 run (a digest, a blob)."""
    i, lim = ks, max(0, ks - 200)
    while i > lim and text[i - 1] in _B64CH:
        i -= 1
    run = text[i:ke].rstrip("=")
    return len(run) >= 24 and _looks_random(run)


_PATHCH = _WORD | {".", "-", "/", "~", "@", "+"}


def _file_path_before(text: str, ks: int, ke: int) -> bool:
    """Whether the name ``text[ks:ke]`` ends a file path (_PATH_VALUE: ``/etc/passwd``,
    ``~/.config/token``): before a colon, an error line's file, not a key. (``/pass:x`` alone, as Windows' cmdkey
    takes it, stays a key, as do ``example.com/api-token`` and an SSM parameter's quoted
    ``"/prod/db_password"``.)"""
    i, lim = ks - 1, max(0, ks - 512)
    while i > lim and text[i - 1] in _PATHCH:
        i -= 1
    return _PATH_VALUE.fullmatch(text, i, ke) is not None


def _key_hit_ok(text: str, h: int) -> bool:
    """A "key" hit counts only after a word that makes it a secret's name (api key, ...)."""
    return text[max(0, h - 14):h].lower().rstrip("_- ").endswith(_KEY_WORDS_BEFORE_KEY)


# A hit whose word goes on into another word ("tokens", "passed", "author") cannot make its key
# a secret's name: skipping it loses nothing, since every word that can (password, apikey,
# credentials, ...) holds a needle of its own, and any hit in a key finds the same key.
_WORD_TAIL = lazy(r"[a-z]+")
_UPPER_TAIL = lazy(r"[A-Z]+")


@functools.lru_cache(maxsize=1024)
def _weak_word(word: str) -> bool:
    return not (word in _STRONG or word.endswith(_STRONG_SUFFIX)
                or (word.startswith(_STRONG_PREFIX) and not word.startswith("secretar"))
                or word.startswith("authorization"))          # (see _authorization)


def _weak_hit(text: str, h: int, size: int, tails: dict | None = None) -> bool:
    e = h + size
    c = text[e:e + 1]
    if "a" <= c <= "z":
        w = text[h:e]
        if w.islower() or (w[0].isupper() and w[1:].islower()):
            return _weak_word(w.lower() + _tail(text, e, _tail_end(text, e, _WORD_TAIL, tails)))
    elif "A" <= c <= "Z":                              # TOKENS; TOKENSecret is TOKEN + Secret
        w = text[h:e]
        if w.isupper():
            end = _tail_end(text, e, _UPPER_TAIL, tails)
            if "a" <= text[end:end + 1] <= "z":
                end -= 1
            return end > e and _weak_word((w + _tail(text, e, end)).lower())
    return False


def _tail_end(text: str, i: int, run: re.Pattern, tails: dict | None) -> int:
    """Where ``run``'s letters from ``i`` end. ``tails`` keeps the last run of each kind: the
    hits inside one long run share it (else "tokentoken..." would be rescanned from each)."""
    if tails is not None:
        last = tails.get(run)
        if last is not None and last[0] <= i < last[1]:
            return last[1]
    end = run.match(text, i).end()
    if tails is not None:
        tails[run] = (i, end)
    return end


def _tail(text: str, i: int, end: int) -> str:
    """``text[i:end]`` for _weak_word, a long one by its ends only: _weak_word reads no more than
    a word's first 19 and last 10 characters, and "\\0" keeps it out of _STRONG."""
    return text[i:end] if end - i <= 32 else text[i:i + 16] + "\0" + text[end - 16:end]


# The prefilter finds each key needle with the ASCII letters right after it (their end, at most
# _RUN_MAX of them): _weak_hit reads nothing beyond those letters and the character after them,
# so whether a hit is strong is kept per run of letters (no needle starts another: the run
# tells its needle). A hit whose letters go on past _RUN_MAX is judged on the text itself.
_RUN_MAX = 32
_RUN_PATTERN = "[a-z]{0,%d}+" % _RUN_MAX   # the ASCII letters after a needle
_KEY_RUNS = {}                      # needle: (str regex, bytes regex)
for _n in _KEY_NEEDLES:
    _p = _rare_first(_n.decode(), folded=True)[0] + "(?=(%s))" % _RUN_PATTERN
    _KEY_RUNS[_n] = (lazy(_p), lazy(_p.encode()))
del _n, _p
assert not any(a != b and a.startswith(b) for a in _KEY_NEEDLES for b in _KEY_NEEDLES)
_STRONG_RUN: dict[str, bool] = {}   # run of letters: strong (emptied at 4096 runs)


def _strong_hit(text: str, h: int, e: int, size: int, tails: dict) -> bool:
    """``not _weak_hit(text, h, size)`` for a hit whose letters end at ``e``."""
    if e - h - size == _RUN_MAX and text[e:e + 1] in _LETTERS:
        return not _weak_hit(text, h, size, tails)
    run = text[h:e]
    if len(_STRONG_RUN) >= 4096:
        _STRONG_RUN.clear()
    strong = _STRONG_RUN[run] = not _weak_hit(run, 0, size)
    return strong


@functools.lru_cache(maxsize=4096)
def _key_family(bare: str) -> str | None:
    """_classify, except for Authorization (handled by _authorization)."""
    return None if bare.lower().endswith("authorization") else _classify(bare)


_CSV_HEADER = lazy(r"[A-Za-z_][\w .-]{0,60}+(?:,[A-Za-z_][\w .-]{0,60}+){1,50}+\r?")
_CSV_ROWS = 1000  # rows read below a header


def _csv_column(text: str, ks: int, ke: int) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """When the key ``text[ks:ke]`` is a column of a CSV header line, the spans of that column's
    values in the rows below it (rows with as many fields, without quotes), and where those
    rows start and end."""
    ls = text.rfind("\n", 0, ks) + 1
    le = text.find("\n", ke)
    le = len(text) if le == -1 else le
    if not _CSV_HEADER.fullmatch(text, ls, le):
        return [], (0, 0)
    width, column = text.count(",", ls, le) + 1, text.count(",", ls, ks)
    spans, first = [], le + 1
    for _ in range(_CSV_ROWS):
        if le >= len(text):
            break
        start, le = le + 1, text.find("\n", le + 1)
        le = len(text) if le == -1 else le
        row = text[start:le].rstrip("\r")
        if row.count(",") != width - 1 or '"' in row:
            le = start - 1
            break
        fields = row.split(",")
        s = start + sum(len(f) + 1 for f in fields[:column])
        value = fields[column].strip()
        if value and not _placeholder(value):
            s += len(fields[column]) - len(fields[column].lstrip())
            spans.append((s, s + len(value)))
    return spans, (first, le)


def _generic(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    hits = []
    strong_run, tails = _STRONG_RUN.get, {}
    for needle in _KEY_NEEDLES:
        size, api_key = len(needle), needle == b"key"
        for s, e in sc.key_runs(needle):
            h = s - size
            strong = strong_run(text[h:e])
            if strong is None:
                strong = _strong_hit(text, h, e, size, tails)
            if strong and (not api_key or _key_hit_ok(text, h)):
                hits.append((h, e))
    if not hits:
        return
    hits.sort()
    low = sc.low
    authorization = _AS_STR[b"authorization"] if low.__class__ is str else b"authorization"
    n = len(text)
    done, rows = -1, (0, 0)
    for h, e in hits:
        if h < done:
            continue
        # (the key goes on past the letters after its needle, or they were too many to count)
        ke = _KEY_FWD.match(text, h).end() if text[e:e + 1] in _KEYCH else e
        done = ke
        if ke >= n or text[ke] not in _AFTER_KEY and text[ke] not in "\r\n,(":
            continue                                   # no separator: prose, or a 200+ char run
        if low.startswith(authorization, h):
            _authorization(text, h, out)
        if h and text[h - 1] in _KEYCH:
            ks = h - _KEY_RUN.match(text[max(0, h - 48):h][::-1]).end()   # the key's start
        else:
            ks = h
        if h - ks == 48:
            lim = max(0, h - 200)
            while ks > lim and text[ks - 1] in _KEYCH:
                ks -= 1
            if ks == lim and ks and text[ks - 1] in _KEYCH:
                continue                               # no real key is 200 characters long
        if ks < h and ks and text[ks - 1] == "\\" and text[ks] in "nrt" and not (
                ks > 1 and text[ks - 2] == "\\"):
            ks += 1                                    # "\napi_key=..." in JSON: not "napi_key"
        if ks >= 10 and text.startswith(MARKER_PREFIX, ks - 10):
            continue                                   # a family name inside a marker
        if ke - ks == 3 and ks >= 2 and text[ks - 1] == " " and text[ks - 2] in _LETTERS:
            w = ks - 1                                 # "API key: ...", "Secret key = ..."
            while w > 0 and ks - w < 16 and text[w - 1] in _LETTERS:
                w -= 1
            ks = w
        key = text[ks:ke]
        family = _key_family(key.strip(".-"))
        if family is None:
            continue
        if (text[ke] in "\r\n," or (ks and text[ks - 1] == ",")) and not (
                rows[0] <= ks < rows[1]):                # (a table's rows are no headers)
            column, rows = _csv_column(text, ks, ke)   # user,password \n app,hunter2
            if column:
                out.extend((s, e, _PRIO[family]) for s, e in column)
                continue
            if text[ke] in "\r\n," and _named_value(text, ks, ke, ke) is None:
                continue                               # "- name: DB_PASSWORD\n  value: x" goes on
        if text[ke] in " \t" and not key.startswith("-"):
            j = _WS.match(text, ke).end()
            c = text[j:j + 1]
            if (c != "=" and c != ":" and key.lower() not in ("password", "passwd")
                    and not _PROSE_IS.match(text, ke) and not _spaced_span(text, j, family, key)
                    and not (text.startswith(("||", "??"), j)       # process.env.KEY || "x"
                             and _named_value(text, ks, ke, ke) is not None)):
                continue                               # prose: "the token expired"
        if (ke - ks >= 24 or ks and text[ks - 1] in "+/") and _in_random_run(text, ks, ke):
            continue                                   # "Pwd" inside base64: no key name
        if text[ke] == ":" and ks and text[ks - 1] == "/" and _file_path_before(text, ks, ke):
            continue                                   # "grep: /etc/passwd: Permission denied"
        span = _value_span(text, ks, ke, key, family)
        if span and span[1] > span[0]:
            out.append((span[0], span[1], _PRIO[family]))
            done = max(done, span[1])


# --------------------------------------------------------------------------------------------
# Prefixed tokens: ``<vendor prefix>_<random>`` on their own, in prose or as an argument
#
# Services mark their keys with a short lower-case prefix ending in "_" (gsk_, r8_, lsv2_pt_,
# pcsk_, lin_api_, glsa_, pscale_tkn_, sbp_, dop_v1_, ...), and new services keep doing so: a
# token shaped like that, whose body looks random (see _looks_random), is redacted whole under
# any prefix but the well-known ids' (msg_, toolu_, req_, ...) and digests', and not when the
# body starts with "01" as Anthropic's ids all do (wrkspc_01..., rlg_01...). Hex bodies, which
# ids and digests have too, count under the prefixes known to carry keys only. The prefilter
# wants "_" after a letter or digit and then 16 letters and digits in a row (so snake_case
# words do not qualify). (Prefixes ending in "-" cost twice as much to look for, as "-" is
# everywhere in UUIDs and dates: the ones that matter, pplx- and xai-, are rules of their own.)

# Ids with a well-known prefix, digests named by their algorithm: random, and no secrets.
_ID_PREFIXES = ("msg", "toolu", "srvtoolu", "req", "call", "chatcmpl", "cmpl", "file", "run",
                "thread", "asst", "batch", "evt", "cus", "sub", "prod", "price", "pi", "pm", "ch",
                "txn", "acct", "org", "user", "proj", "resp", "fc", "rs", "step", "vs", "sess",
                "conv", "item", "ftjob", "img", "in", "seti", "cs", "re", "po", "card", "si", "src",
                "tok", "dpl", "prj", "team", "job", "span", "trace", "gen", "vpc", "subnet", "usr",
                "doc", "obj", "ws", "app", "ord", "inv", "cart", "ses")
_DIGEST_NAMES = ("sha1", "sha224", "sha256", "sha384", "sha512", "md5", "h1", "blake2", "blake2b",
                 "blake2s")


def _not_after(words: tuple[str, ...]) -> str:
    """Look-behinds (one per length) refusing a separator right after one of ``words``."""
    by_length: dict[int, list[str]] = {}
    for w in words:
        by_length.setdefault(len(w), []).append(w)
    return "".join(f"(?<!(?<![A-Za-z0-9])(?:{'|'.join(ws)}).)" for ws in by_length.values())


_PREFIX_TAIL = r"(?=[A-Za-z0-9]{16})(?<=[a-z0-9].)" + _not_after(_ID_PREFIXES + _DIGEST_NAMES)
_PREFIXED = lazy("_" + _PREFIX_TAIL)
_PREFIX_SHAPE = lazy(r"[a-z][a-z0-9]{1,11}(?:[_-][a-z0-9]{1,8}){0,2}[_-]")
_TOKEN_BODY = lazy(r"[A-Za-z0-9_+/=-]{0,400}+")
_HEX_BODY = lazy(r"[0-9a-f]{32,128}")
_HEX_KEY_PREFIXES = frozenset({"sbp", "shpat", "shpss", "shpca", "shppa", "rubygems", "dop_v1",
                               "doo_v1", "dor_v1", "lsv2_pt", "lsv2_sk", "sntryu"})
_NOT_TOKEN_PREFIXES = frozenset(_ID_PREFIXES) | frozenset(_DIGEST_NAMES) | {"pk"}  # (Stripe's
#                                                                   publishable keys are public)


def _prefixed_tokens(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    prio = _PRIO["generic-secret"]
    done = -1
    for sep in (m.start() for m in _PREFIXED.finditer(text)):
        if sep < done:
            continue
        s, lim = sep, max(0, sep - 24)
        while s > lim and (text[s - 1] in _ALNUM or text[s - 1] in "_-"):
            s -= 1
        if s and (text[s - 1] in _TOKCH or text[s - 1] in "./+") and not _escape_ends_at(text, s):
            continue                                   # inside a longer word, path or token
        shape = _PREFIX_SHAPE.match(text, s, sep + 1)
        if shape is None or shape.end() != sep + 1:
            continue
        prefix = text[s:sep]
        if prefix.split("_")[0].split("-")[0] in _NOT_TOKEN_PREFIXES:
            continue                                   # (an id's or a digest's prefix)
        body = _TOKEN_BODY.match(text, sep + 1).group()
        if len(body.rstrip("=")) < 20 or body.startswith("01"):
            continue                                   # (too short; Anthropic's ids: wrkspc_01...)
        if _looks_random(body.rstrip("=")) or (prefix in _HEX_KEY_PREFIXES
                                               and _HEX_BODY.fullmatch(body)):
            done = sep + 1 + len(body)
            out.append((s, done, prio))


# --------------------------------------------------------------------------------------------
# High-entropy fallback: ``name = <random token>`` under any name
#
# A key name that says "secret" is handled above whatever the value. Under any other name a
# value is redacted (as generic-secret) only when it is one random-looking token, which keeps
# code, paths, URLs, ids, digests and prose intact. The candidate must be:
# - the whole value of an assignment (=, :, :=, =>, JSON "key": "value", quoted or not),
#   24 to 256 characters of [A-Za-z0-9+/_.~-] (and base64's = padding at the end);
# - not hex (with . _ / - allowed: commit SHAs, UUIDs, digests, 0x...), not a path (/usr/...,
#   ~/..., ./...), not the rest of a URL (//host/...), not a dotted attribute chain, not an id
#   with a well-known prefix (msg_, toolu_, req_, call_, chatcmpl-, ...), not a digest with its
#   algorithm (sha256-..., sha512-..., md5-..., go.sum's h1:...);
# - made of letters and at least one digit, with upper and lower case letters when shorter than
#   32 characters;
# - random in its shape: the case/digit class changes between neighbouring characters at least
#   0.6 times as often as independent characters with the same class mix would (identifiers,
#   words and version strings change class far less often), at most 70% of the letters (80%
#   for single-case tokens) in word-like runs (Foo, bar, BAZ), and a Shannon entropy of at
#   least min(4.0, log2(len) - 0.9) bits per character (a 24-character sample cannot show much
#   more than 4 bits, so a fixed 4.0 would miss a tenth of real 24-character keys);
# - not base64 of readable text with spaces;
# - and not stored under a name that says what it is when that is not a secret: *_id, uuid,
#   sha, hash, digest, checksum, etag, integrity, signature, fingerprint, commit, nonce,
#   public key, ... (secret names win: private_key_id is handled by the name rule).

# How values that are not secrets start: the rest of a URL, a UUID, a path, an id with a
# well-known prefix, a digest named by its algorithm.
_NOT_SECRET_START = (
    r"//|[0-9a-f]{8}-[0-9a-f]{4}-|(?:~|\.\.?)?/[A-Za-z]?[a-z]{2,}[0-9]?/"
    r"|(?:" + "|".join(_ID_PREFIXES) + r")[_-]"
    r"|(?i:" + "|".join(sorted(_DIGEST_NAMES, key=len, reverse=True)) + r")[-_:=]"
    r"|iVBORw0KGgo|/9j/|R0lGOD|UklGR|JVBERi0|pk_(?:live|test)_")  # images, a PDF; public keys
# (Two patterns, each starting with its literal separator: the regex engine then jumps from one
# ":" or "=" to the next instead of trying the pattern at every character. The length is
# checked before the exclusions, which most values never reach.)
_ENTROPY_TAIL = (
    r">?[ \t]*+(?:[rbuf]{0,2}\\?[\"'`])?+(?=[A-Za-z0-9+/_.~-]{24})"
    r"(?=[a-z0-9+/_.~-]{0,255}+[A-Z]|[A-Za-z0-9+/_.~-]{32})"   # (under 32: needs upper case)
    r"(?!" + _NOT_SECRET_START + r")"
    r"([A-Za-z0-9+/_.~-]{24,256}+={0,3}+)(?=[\s\"'`\\,;)\]}&>|<]|$)")
_ENTROPY_RES = (lazy(":" + _ENTROPY_TAIL), lazy("=" + _ENTROPY_TAIL))
_ENTROPY_ID = lazy(_NOT_SECRET_START)
_HEXISH = lazy(r"(?:0x)?[0-9a-fA-F._/-]+")
_WORDY = lazy(r"[A-Z]?[a-z]{3,}|[A-Z]{3,}(?![a-z])")
_CLASS_RUN = lazy(r"U+|L+|D+")
_ALNUM_RUN = lazy(r"[ULD]+")
_CLASS_OF = str.maketrans({**{c: "U" for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
                           **{c: "L" for c in "abcdefghijklmnopqrstuvwxyz"},
                           **{c: "D" for c in "0123456789"}})
_ENTROPY_SAFE_NAMES = frozenset({
    "id", "ids", "uuid", "guid", "sha", "sha1", "sha256", "sha384", "sha512", "md5", "h1",
    "hash", "hashes", "digest", "checksum", "etag", "integrity", "signature", "sig",
    "fingerprint", "commit", "revision", "rev", "oid", "nonce", "iv", "public", "pub", "pubkey",
    "publickey", "image", "thumbnail", "icon", "avatar", "cursor", "state", "challenge",
    "publishable", "page",
})


def _looks_random(v: str) -> bool:
    """Whether ``v`` (a candidate from _ENTROPY_RES) is a random token; see above."""
    n = len(v)
    if _HEXISH.fullmatch(v) or _ATTR_CHAIN.fullmatch(v):
        return False
    cls = v.translate(_CLASS_OF)
    up, lo, dg = cls.count("U"), cls.count("L"), cls.count("D")
    if not dg or not (up or lo) or (n < 32 and not (up and lo)):
        return False
    alnum = up + lo + dg
    stretches = len(_ALNUM_RUN.findall(cls))
    pairs = alnum - stretches
    changes = len(_CLASS_RUN.findall(cls)) - stretches
    expected = 1.0 - (up * up + lo * lo + dg * dg) / (alnum * alnum)
    if pairs <= 0 or changes < 0.6 * expected * pairs:
        return False
    if sum(map(len, _WORDY.findall(v))) > (0.7 if up and lo else 0.8) * alnum:
        return False
    from math import log2  # (here: most texts have no candidate, and a hook loads no math)

    counts = Counter(v).values()
    entropy = log2(n) - sum(c * log2(c) for c in counts) / n
    if entropy < min(4.0, log2(n) - 0.9):
        return False
    return not _readable_base64(v)


def _readable_base64(v: str) -> bool:
    """Base64 (standard or URL-safe) of printable text with spaces: encoded prose, no key."""
    import base64  # (on first use: most processes never decode)
    import binascii

    if "." in v or "~" in v or ("-" in v or "_" in v) and ("+" in v or "/" in v):
        return False
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4),
                               altchars=b"-_" if ("-" in v or "_" in v) else None, validate=True)
        s = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return " " in s and s.isprintable()


@functools.lru_cache(maxsize=1024)
def _entropy_safe_name(key: str) -> bool:
    return key.lower() in _ENTROPY_SAFE_NAMES or any(s.lower() in _ENTROPY_SAFE_NAMES
                                                     for s in _SEG.findall(key))


def _entropy(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    prio = _PRIO["generic-secret"]
    for m in sc.matches(_ENTROPY_RES[0]) + sc.matches(_ENTROPY_RES[1]):
        if not _looks_random(m.group(1)):
            continue
        i, lim = m.start(), max(0, m.start() - 4)
        while i > lim and text[i - 1] in " \t\"'`\\]":
            i -= 1
        k, lim = i, max(0, i - 100)
        while k > lim and text[k - 1] in _KEYCH:
            k -= 1
        if k < i and _escape_before(text, k):
            k += 1
        if k < i and _entropy_safe_name(text[k:i]):
            continue
        out.append((m.start(1), m.end(1), prio))


# --------------------------------------------------------------------------------------------
# The pass, merging, and the public API


def _collect(text: str, skip: frozenset = frozenset(), low: str | None = None,
             known: dict | None = None) -> tuple[list[Span], frozenset]:
    """One pass: merged spans, and what the next pass over the redacted text may skip (when
    there is one).
    (``low``: ``text.lower()`` when already known and ``text`` is ASCII; ``known``: the key
    needles' runs in it, see _Scan.key_runs.)"""
    sc = _Scan(text, skip, low, known)
    found: list[Span] = []
    for step in _steps_for(skip):
        step(sc, found)
    found = [f for f in found if f[1] > f[0] and not text.startswith(MARKER_PREFIX, f[0])]
    if not found:
        return found, _NOTHING                         # (no next pass)
    return _merged(found), sc.next_skip()


def _merged(found: list[Span]) -> list[Span]:
    """Overlapping spans as one, sorted; a merged span keeps the most specific family."""
    found.sort()
    merged = [found[0]]
    for s, e, p in found[1:]:
        ms, me, mp = merged[-1]
        if s < me:
            merged[-1] = (ms, max(me, e), min(mp, p))
        else:
            merged.append((s, e, p))
    return merged


# Every needle and needle-less regex any pass looks for: no finding is possible without one.
_TRIGGERS: frozenset = frozenset(
    {r.needle for r in _RULES if r.needle} | {r.regex for r in _RULES if not r.needle}
    | {".com/webhook", "-----", "Private-", "://", "-u", "-p", b"bearer", b"basic", b"sig=", b"signature=",
       b"identified", b"stdin", b"cookie", "login(", _PREFIXED}
    | {_TWILIO_AC, _TWILIO_SK, _MAILGUN, *_ENTROPY_RES}
    | set(_KEY_NEEDLES))


# The steps of a pass, each with every trigger it looks for: a step none of whose triggers
# occurs is not run.
_PASS_STEPS = (
    (_token_rules, frozenset({r.needle or r.regex for r in _RULES} | {".com/webhook"})),
    (_vendor_pairs, frozenset({_TWILIO_AC, _TWILIO_SK, _MAILGUN})),
    (_pem, frozenset({"-----"})),
    (_putty, frozenset({"Private-"})),
    (_urls, frozenset({"://"})),
    (_schemes, frozenset({b"bearer", b"basic", "-u", b"sig=", b"signature="})),
    (_password_flags, frozenset({"-p"})),
    (_sql_identified, frozenset({b"identified"})),
    (_piped_passwords, frozenset({b"stdin"})),
    (_cookies, frozenset({b"cookie"})),
    (_login_calls, frozenset({"login("})),
    (_generic, frozenset(_KEY_NEEDLES)),
    (_prefixed_tokens, frozenset({_PREFIXED})),
    (_entropy, frozenset(_ENTROPY_RES)),
)
assert frozenset().union(*(t for _, t in _PASS_STEPS)) == _TRIGGERS


@functools.lru_cache(maxsize=256)
def _steps_for(skip: frozenset) -> tuple:
    return tuple(step for step, triggers in _PASS_STEPS if not triggers <= skip)


# The prefilter: which triggers occur at all. A trigger that does not occur is skipped by the
# full scan, and a text without any is returned untouched.
# "-u" only counts at the start or after whitespace (``curl -u user:pass``, ``--user``), so
# hyphenated words do not send a text down the full scan. Needles that can only match inside a
# ".com/" URL are looked for only when the text has one, "key-" only with "key".
_AS_STR = {n: n.decode() for n in (*_TRIGGERS, b"authorization") if isinstance(n, bytes)}
_COM_NEEDLES = (".com/webhook", "hooks.slack.com/", "discord")
_KEY_DASH = lazy(_rare_first("key-")[0])
# Each pattern starts with a literal character, the rarest one its needles have (see
# _rare_first), and patterns that start with the same character are searched as one: a scan
# costs about as much as the stops at that character. A group that matches counts all its
# triggers as present (the full scan then looks for each).
_GH, _GL, _AKIA = (next(r.regex for r in _RULES if r.regex.pattern.startswith(p))
                   for p in ("gh", "gl", "A(?:KIA"))
# Each entry also names its literals: every match of its pattern holds one of them (None: not
# every match holds a literal). The accelerator (see _load_accelerator) runs a search only when
# one of its literals occurs.
_PRESENCE_IN_TEXT = (
    *((_rare_first(n)[0], (n,), (n,))
      for n in ("-----", "://", "eyJ", "hf_", "npm_", "sk-", "whsec_", "ya29.", "api_org_",
                "pypi-AgE", "LS0tLS1CRUdJTi", "dckr_pat_", "pplx-", "LTAI", "Private-")),
    (r"A(?:Iza|KIA|SIA|BIA|CCA|C[0-9a-f]{32})", ("AIza", _AKIA, _TWILIO_AC),
     ("AIza", "AKIA", "ASIA", "ABIA", "ACCA", *(f"AC{c}" for c in "0123456789abcdef"))),
    (r"G(?:OCSPX-|R1348941)", ("GOCSPX-", "GR1348941"), ("GOCSPX-", "GR1348941")),
    (r"S(?:G\.|K[0-9a-f]{32})", ("SG.", _TWILIO_SK),
     ("SG.", *(f"SK{c}" for c in "0123456789abcdef"))),
    (r"g(?:ithub_pat_|h[pousr]_|l(?:%s)-)" % "|".join(_GL_KINDS), ("github_pat_", _GH, _GL),
     ("github_pat_", *(f"gh{c}_" for c in "pousr"), *(f"gl{k}-" for k in _GL_KINDS))),
    (r"k_(?:live|test)_", ("k_live_", "k_test_"), ("k_live_", "k_test_")),
    (r"x(?:ox|app-|ai-)", ("xox", "xapp-", "xai-"), ("xox", "xapp-", "xai-")),
    (_MAILGUN.pattern, (_MAILGUN,), None),
    ("_" + _PREFIX_TAIL, (_PREFIXED,), None),    # (joining the "_" search above: one more look
)                                                # at each stop)


def _by_first_char(entries: tuple) -> tuple:
    """``(pattern, triggers, literals, c)`` per first character ``c`` of the patterns:
    ``c(?:rest|rest...)`` (a text without ``c`` is not searched: the pattern is not even
    compiled)."""
    groups: dict[str, tuple[list, list, list | None]] = {}
    for pattern, triggers, literals in entries:
        k = 2 if pattern[0] == "\\" else 1                  # (an escaped first character)
        assert k == 2 or pattern[0] not in "()[]{}.^$*+?|", pattern
        rests, trigs, lits = groups.setdefault(pattern[k - 1], ([], [], []))
        rests.append(pattern[k:])
        trigs += triggers
        if literals is None or lits is None:
            groups[pattern[k - 1]] = (rests, trigs, None)
        else:
            lits += literals
    return tuple((lazy(re.escape(c) + "(?:%s)" % "|".join(rests)), tuple(trigs),
                  None if lits is None else frozenset(lits), c)
                 for c, (rests, trigs, lits) in groups.items())


_PRESENCE_IN_LOW = (
    (r"b(?:earer|asic)", (b"bearer", b"basic"), ("bearer", "basic")),
    (r"=(?:(?<=sig=)|(?<=signature=))", (b"sig=", b"signature="), ("sig=", "signature=")),
    (r"identified[ \t]", (b"identified",), ("identified",)),
)
# The key names' needles are found everywhere at once: the generic rule gets their runs.
_KEY_FINDERS = tuple((r, n, n.decode()) for n, (r, _) in _KEY_RUNS.items())
_TEXT_SEARCHES = _by_first_char(_PRESENCE_IN_TEXT)
_LOW_SEARCHES = tuple((lazy(p), t, frozenset(w)) for p, t, w in _PRESENCE_IN_LOW)
assert (frozenset(t for _, ts, _ in _PRESENCE_IN_TEXT + _PRESENCE_IN_LOW for t in ts)
        | frozenset(_COM_NEEDLES)
        | {"key-", "-u", "-p", b"stdin", b"cookie", "login(", _PREFIXED, *_ENTROPY_RES,
           *_KEY_NEEDLES}
        ) == _TRIGGERS


# "-p" (or another letter of _FLAG_PROGRAMS) as a flag of its own, not inside a word or
# "--password" (as _password_flags wants it): the "-p" trigger stands for them all.
_FLAG_LETTERS = "paPwk"                                # (the groups of _FLAG_PROGRAMS)
_PASSWORD_FLAG = lazy(r"-(?<=(?<!\S)-)[%s]" % _FLAG_LETTERS)
assert {name[0] for name in _FLAG_PROGRAMS.pattern.split("(?P<")[1:]} == set(_FLAG_LETTERS)
# The three kinds of flag the prefilter looks for in one pass: "-u" or "--u" at the start or
# after whitespace (curl's user, as _schemes wants it), a password flag of _FLAG_PROGRAMS, and
# those that read a password from stdin (sudo -S, --password-stdin, passwd --stdin).
_SHORT_FLAGS = lazy(r"-(?:(?<=(?<!\S)-)([%sSu])|(?<=(?<!\S)--)u|(stdin))" % _FLAG_LETTERS)
_FLAG_TRIGGER = {**dict.fromkeys(_FLAG_LETTERS, "-p"), "u": "-u", "S": b"stdin", "stdin": b"stdin"}
_FLAG_LITERALS = frozenset({*(f"-{c}" for c in _FLAG_LETTERS + "Su"), "-stdin"})   # (every match
#                                                                                   holds one)


_NOTHING: frozenset = frozenset()


# The accelerator: with ahocorasick-rs installed, one Aho-Corasick pass over an ASCII text and
# one over its lowered copy find every occurrence of the prefilter's literals (and so the key
# needles' runs), where the standard path scans once per literal or group (about 30 scans).
# Each pattern that has literals is still searched to confirm it, so the triggers found are the
# same either way. The capture hooks, which must stay on the standard library, block its import
# (see __main__) and so take the standard path.
_LOW_LITERALS = (*(w for _, _, w in _KEY_FINDERS), *(w for _, _, ws in _LOW_SEARCHES for w in ws),
                 "cookie", "chpasswd")
_TEXT_LITERALS = (*sorted({w for _, _, ws, _ in _TEXT_SEARCHES if ws for w in ws} | _FLAG_LITERALS),
                  ".com/", "login(")
_KEY_OF_WORD = {word: needle for _, needle, word in _KEY_FINDERS}
_LETTER_RUN = lazy(_RUN_PATTERN)
_LONGEST_LITERAL = max(map(len, _LOW_LITERALS + _TEXT_LITERALS))
_WINDOW = 1 << 16


def _load_accelerator(text: str, low: str) -> tuple[set, set, dict] | None:
    """Build the accelerator and scan with it (the first scan loads it, so a process that never
    redacts pays nothing); without a working ahocorasick-rs, turn it off and return None."""
    global _accelerator
    try:
        import ahocorasick_rs

        # (bytes search faster than str; an ASCII text's bytes have the same positions)
        dfa = ahocorasick_rs.Implementation.DFA       # (the fastest to search, measured)
        find_low, find_text = (ahocorasick_rs.BytesAhoCorasick(
            [w.encode() for w in words], implementation=dfa).find_matches_as_indexes
            for words in (_LOW_LITERALS, _TEXT_LITERALS))
    except Exception:                       # (not installed, blocked (see __main__) or broken)
        _accelerator = None
        return None
    key_of, letters, reach = _KEY_OF_WORD.get, _LETTER_RUN.match, _LONGEST_LITERAL - 1

    def windows(data: bytes) -> Iterator[tuple[int, bytes]]:
        """The data a window at a time, each reaching into the next by the longest literal less
        one: a text dense with literals never makes one huge list of matches."""
        if len(data) <= _WINDOW:
            yield 0, data
            return
        for a in range(0, len(data), _WINDOW):
            yield a, data[a:a + _WINDOW + reach]

    def literals_in(text: str, low: str) -> tuple[set, set, dict] | None:
        """The literals in the lowered text, those in the text, and the key needles' runs; None
        for a text that is not ASCII (the standard path takes it)."""
        if not text.isascii():
            return None
        in_low, in_text, known = set(), set(), {}
        for a, window in windows(low.encode()):
            for i, start, end in find_low(window, overlapping=True):
                word = _LOW_LITERALS[i]
                in_low.add(word)
                needle = key_of(word)
                if needle is not None and start < _WINDOW:    # (else the next window's)
                    known.setdefault(needle, []).append((a + end, letters(low, a + end).end()))
        for _, window in windows(text.encode()):
            in_text.update([_TEXT_LITERALS[i] for i, _, _ in find_text(window, overlapping=True)])
        return in_low, in_text, known
    _accelerator = literals_in
    return literals_in(text, low)


_accelerator: Callable[[str, str], tuple[set, set, dict] | None] | None = _load_accelerator


def _scan_line(text: str) -> frozenset:
    """The triggers that occur in ``text`` (bytes needles case-insensitively; needle-less
    regexes that match; an entropy pattern only with a candidate that looks random). Substring
    tests run at C speed, so ordinary text is returned without the full scan."""
    return _scan_text(text)[0]


def _scan_text(text: str) -> tuple[frozenset, str, dict]:
    """_scan_line, the lowered text it used and the key needles' runs in it (see key_runs)."""
    low = text.lower()
    # The literals that occur: substrings of the text itself, or (accelerated) the set of those
    # the accelerator found; "x in" asks the same question of either.
    accelerator = _accelerator              # (read once: another thread may be loading it)
    if accelerator is None or (seen := accelerator(text, low)) is None:
        in_low, in_text = low, text
        known = {needle: [m.span(1) for m in run.finditer(low)]   # (str's search outruns the
                 for run, needle, word in _KEY_FINDERS if word in low}      # regex engine's)
    else:
        in_low, in_text, known = seen
    found = list(known)
    for pattern, triggers, literals in _LOW_SEARCHES:
        if (in_low is low or not literals.isdisjoint(in_low)) and pattern.pattern[0] in low \
                and pattern.search(low):
            found += triggers
    for pattern, triggers, literals, first in _TEXT_SEARCHES:
        if (in_text is text or literals is None
                or not literals.isdisjoint(in_text)) and first in text and pattern.search(text):
            found += triggers
    if ".com/" in in_text:
        found += [n for n in _COM_NEEDLES if n in text]
    if b"key" in found and _KEY_DASH.search(text):
        found.append("key-")
    flags = set()
    if (in_text is text or not _FLAG_LITERALS.isdisjoint(in_text)) and "-" in text:
        for m in _SHORT_FLAGS.finditer(text):   # (one look at each "-" for -u, -p, sudo -S and
            flags.add(_FLAG_TRIGGER[m.group(1) or m.group(2) or "u"])   # --password-stdin)
            if len(flags) == 3:
                break
    found += flags
    if b"stdin" not in flags and b"pass" in found and "chpasswd" in in_low:
        found.append(b"stdin")
    if "cookie" in in_low:
        found.append(b"cookie")
    if "login(" in in_text:
        found.append("login(")
    for r in _ENTROPY_RES:                  # (most texts have no candidate; many have no "=")
        m = r.search(text) if r.pattern[0] in text else None
        while m:
            if _looks_random(m.group(1)):
                found.append(r)
                break
            m = r.search(text, m.end())
    return (frozenset(found) if found else _NOTHING), low, known


# Lines seen before (prompts repeat most of theirs between calls) cost a dictionary lookup.
# Two generations stand in for an LRU cache: when the recent one is full it becomes the old one,
# and a line found in the old one moves back into the recent one.
_CACHED_LINE_CHARS = 4000   # (a scenario's rules are one line of ~2,500); with _LINE_CACHE_SIZE, bounds
#                             the cache at 2 x 4096 lines of at most 4,000 characters
_LINE_CACHE_SIZE = 4096
_LINE_CACHE: dict[str, frozenset] = {}
_LINE_CACHE_OLD: dict[str, frozenset] = {}
_PER_LINE_CHARS = 65536     # a text with a trigger in it gets its lines cached up to this size
# Lines of a multi-line text seen once (by hash): learning a line costs a scan of its own, worth
# it only for a line that comes again (a prompt re-sent with a line or two changed), not for
# every line of every tool output. So a line is learned when it is seen the second time.
_SEEN_LINES: set[int] = set()
_SEEN_LINES_SIZE = 16384


def _remember(line: str, found: frozenset) -> None:
    global _LINE_CACHE, _LINE_CACHE_OLD
    if len(line) <= _CACHED_LINE_CHARS:
        if len(_LINE_CACHE) >= _LINE_CACHE_SIZE:
            _LINE_CACHE_OLD, _LINE_CACHE = _LINE_CACHE, {}
        _LINE_CACHE[line] = found


def _recall(line: str) -> frozenset | None:
    found = _LINE_CACHE.get(line)
    if found is None:
        found = _LINE_CACHE_OLD.get(line)
        if found is not None:
            _remember(line, found)
    return found


def _forget_lines() -> None:
    """Empty the line cache (benchmarks time cold runs)."""
    _LINE_CACHE.clear()
    _LINE_CACHE_OLD.clear()
    _SEEN_LINES.clear()


def _present(text: str) -> frozenset | set:
    """The triggers that occur in ``text``.

    No needle and no needle-less regex spans a newline, so what a text holds is the union of
    what its lines hold: lines seen before are looked up, the others are scanned together.
    """
    return _present_low(text)[0]


def _present_low(text: str) -> tuple[frozenset | set, str | None, dict | None]:
    """_present, and ``text.lower()`` with the key needles' runs in it when they were
    computed on the way."""
    if "\n" not in text:
        found = _recall(text)
        if found is not None:
            return found, None, None
        found, low, known = _scan_text(text)
        _remember(text, found)
        return found, low, known
    get, old = _LINE_CACHE.get, _LINE_CACHE_OLD.get
    acc: set = set()
    fresh = []
    promote = []
    for line in text.split("\n"):
        found = get(line)
        if found is None:
            found = old(line)
            if found is None:
                fresh.append(line)
                continue
            promote.append((line, found))
        if found:
            acc.update(found)
    for line, found in promote:
        _remember(line, found)
    low = known = None
    if len(fresh) <= 4:
        for line in fresh:
            found = _scan_line(line)
            _remember(line, found)
            acc.update(found)
        return acc, low, known
    learn = len(text) <= _PER_LINE_CHARS     # (a prompt, likely to come again)
    first = fresh
    if learn and _SEEN_LINES:
        first = []
        for line in dict.fromkeys(fresh):   # (a line repeated in the text is learned once)
            if hash(line) in _SEEN_LINES:   # seen before: learn it
                found = _scan_line(line)
                _remember(line, found)
                acc.update(found)
            else:
                first.append(line)
    if first:
        joined = "\n".join(first)
        found, low, known = _scan_text(joined)
        acc.update(found)
        if len(joined) != len(text):
            low = known = None              # (positions in the joined lines, not in the text)
        if not found:
            for line in first:
                _remember(line, _NOTHING)
        elif learn:
            if len(_SEEN_LINES) >= _SEEN_LINES_SIZE:
                _SEEN_LINES.clear()
            _SEEN_LINES.update(map(hash, first))
    return acc, low, known


@functools.lru_cache(maxsize=1024)
def _skip_for(present: frozenset) -> frozenset:
    """The triggers a first pass skips: those that do not occur."""
    return _TRIGGERS.difference(present)


def _may_hold_secret(text: str) -> bool:
    """False when no pass could find anything: none of the needles occurs (bytes needles
    case-insensitively) and no needle-less regex matches."""
    return bool(_present(text))


@functools.lru_cache(maxsize=None)
def _needles_in_markers() -> frozenset:
    """Needles and token regexes that occur inside some marker: always rescanned. (Found on
    first use: a process that never finds a secret compiles none of these regexes.)"""
    markers = " ".join(marker(f) for f in FAMILIES)
    low = markers.lower().encode()
    inside = set()
    for n in _TRIGGERS:
        if isinstance(n, (LazyPattern, re.Pattern)):     # (a rule's regex: lazy or compiled)
            hit = n.search(markers) is not None
        elif isinstance(n, bytes):
            hit = n in low
        else:
            hit = n in markers
        if hit:
            inside.add(n)
        assert isinstance(n, (LazyPattern, re.Pattern)) or ("[" not in str(n)
                                                           and "]" not in str(n))
    return frozenset(inside)


def _apply(text: str, spans: list[Span]) -> tuple[str, list[tuple[int, int]]]:
    """The text with the spans replaced by markers, and where those markers now are."""
    parts, pos, out, marks = [], 0, 0, []
    for s, e, p in spans:
        parts.append(text[pos:s])
        m = marker(FAMILIES[p])
        out += s - pos
        marks.append((out, out + len(m)))
        out += len(m)
        parts.append(m)
        pos = e
    parts.append(text[pos:])
    return "".join(parts), marks


def _recheck(text: str, marks: list[tuple[int, int]], skip: frozenset) -> list[Span]:
    """The confirming pass: what a full pass over ``text`` would find, looking only at the
    lines that hold the markers the previous pass put in.

    Everything else is unchanged, and every rule reads one line, except private-key blocks
    (whose BEGIN and END lines a pass never leaves behind: markers cannot form them) and YAML
    block scalars (a key whose indented lines follow it): so a line with a marker is rechecked
    together with the indented lines after it. Each window ends with its newline, so the end
    of a window is never mistaken for the end of the text.
    """
    n = len(text)
    windows: list[list[int]] = []
    for s, e in marks:
        if windows and s < windows[-1][1]:
            continue
        ws = text.rfind("\n", 0, s) + 1
        we = text.find("\n", e)
        we = n if we == -1 else we + 1
        while we < n and text[we] in " \t\n":            # the indented lines after it
            nxt = text.find("\n", we)
            we = n if nxt == -1 else nxt + 1
        if windows and ws <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], we)
        else:
            windows.append([ws, we])
    if sum(we - ws for ws, we in windows) * 2 > n:
        return _collect(text, skip)[0]
    spans: list[Span] = []
    for ws, we in windows:
        spans += [(s + ws, e + ws, p) for s, e, p in _collect(text[ws:we], skip)[0]]
    return spans


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """``(family, start, end)`` of every secret found in one pass over ``text``.

    Overlapping findings are merged. (``redact`` may take a second pass when one secret
    hid the boundary of another; this reports the first.)
    """
    if not isinstance(text, str):
        raise TypeError(f"find_secrets() needs str, not {type(text).__name__}")
    return [(FAMILIES[p], s, e) for s, e, p in _collect(text)[0]]


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<family>]``; inside
    ``with known:`` (a session's ``KnownSecrets``) also every bare occurrence of a secret found
    before in that session, and what it finds is added to ``known``."""
    if not isinstance(text, str):
        raise TypeError(f"redact() needs str, not {type(text).__name__}")
    session = _SESSION.get()
    text = _redact(text, session)
    return session.scrub(text) if session and session.scrubbing else text


def _redact(text: str, session: KnownSecrets | None) -> str:
    present, low, known = _present_low(text)
    if not present:
        return text
    if not text.isascii():
        low = known = None                  # (str.lower() may change non-ASCII lengths)
    spans, skip = _collect(text, _skip_for(frozenset(present)), low, known)
    for done in range(1, _MAX_PASSES + 1):
        if not spans:
            break
        if session is not None:
            session.learn_spans(text, spans)
        text, marks = _apply(text, spans)
        if done < _MAX_PASSES:
            spans = _recheck(text, marks, skip)
    if ("&" in text or "\\u00" in text) and _ENTITY.search(text):
        spans = _encoded_secrets(text)
        if spans:
            text = _apply(text, spans)[0]
    return text


# Quotes and brackets written as HTML entities or \u00XX escapes: {&quot;password&quot;: ...}
# in an HTML test report, \u003cpassword\u003e... in Go's JSON.
_ENTITY_CHARS = {"&quot;": '"', "&#34;": '"', "&#x22;": '"', "&apos;": "'", "&#39;": "'",
                 "&#x27;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&", "\\u0022": '"',
                 "\\u0027": "'", "\\u003c": "<", "\\u003e": ">", "\\u0026": "&", "\\u003d": "="}
_ENTITY = lazy(r"&(?:quot|apos|lt|gt|amp|#34|#39|#x22|#x27);|\\u00(?:22|27|3[cCdDeE]|26)")


def _encoded_secrets(text: str) -> list[Span]:
    """The spans, in ``text``, of the secrets found once its entities and escapes are read as
    the characters they stand for (a span covers the encoded form of what it found)."""
    parts, where, pos = [], [], 0
    for m in _ENTITY.finditer(text):
        parts.append(text[pos:m.start()])
        where.extend(range(pos, m.start()))
        parts.append(_ENTITY_CHARS[m.group().lower()])
        where.append(m.start())
        pos = m.end()
    parts.append(text[pos:])
    where.extend(range(pos, len(text) + 1))            # (and the end, for a span's end)
    return [(where[s], where[e], p) for s, e, p in _collect("".join(parts))[0]]


def _secret_key(key: Any) -> str | None:
    if not isinstance(key, str) or len(key) > 200:
        return None
    k = MARKER_RE.sub(" ", key).strip(" \t\"'.-")
    if k.lower().endswith("authorization"):
        return "authorization-header"
    return _classify(k)


_LOOSE_NAME_FAMILIES = frozenset({"generic-secret", "cloudflare-token", "twilio-key", "sendgrid-key",
                                  "mailgun-key"})


def _secret_value(family: str, key: str, v: Any) -> bool:
    if isinstance(v, str):
        t = v.strip()
        if not t or _placeholder(t) or MARKER_RE.fullmatch(t):
            return False
        if family in _LOOSE_NAME_FAMILIES and _short_word(t, key if isinstance(key, str) else ""):
            return False                               # {"token": "Hello"}: a tokenizer's
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return family == "password" and key.strip().lower() != "pass"
    return False


_ENTROPY_VALUE = lazy(r"[A-Za-z0-9+/_.~-]{24,256}+={0,3}+")


def _random_value_under(key: Any, v: Any) -> bool:
    """The high-entropy fallback in a structure: a random token stored under a name that does
    not say it is an id, a digest, a signature or a public key."""
    return (isinstance(v, str) and _ENTROPY_VALUE.fullmatch(v) is not None
            and _ENTROPY_ID.match(v) is None and _looks_random(v)
            and not (isinstance(key, str) and _entropy_safe_name(key)))


def redact_obj(value: Any) -> Any:
    """A copy of ``value`` with every string inside dicts, lists, tuples and sets redacted.

    A value stored under a secret-looking key (``{"password": "hunter2"}``) is replaced whole:
    in a structure the key is the only context saying the value is a secret. Under generic
    names (token, secret, api_key, ...) that takes a string of 8+ characters without spaces,
    so a tokenizer's ``{"token": "Hello", "logprob": -0.3}`` stays; under password names any
    string, or a number (a PIN), except for a bare ``pass`` count. Under any other name but an
    id's, digest's or signature's, a random token is replaced too (the high-entropy fallback).
    Keys are redacted too. Other objects are returned unchanged.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out = {}
        # {"name": "DB_PASSWORD", "value": ...}: Kubernetes env, AWS parameters, Postman
        named = next((value[f] for f in ("name", "Name", "key", "Key")
                      if isinstance(value.get(f), str)), None)
        named_family = _secret_key(named) if named is not None else None
        for k, v in value.items():
            family = _secret_key(k) or (named_family if k in ("value", "Value") else None)
            if family and _secret_value(family, k, v):
                whole = redact(v).strip() if isinstance(v, str) else ""
                _learn(v, family)
                out[redact_obj(k)] = whole if MARKER_RE.fullmatch(whole) else marker(family)
            elif _random_value_under(k, v):
                _learn(v, "generic-secret")
                out[redact_obj(k)] = marker("generic-secret")
            else:
                out[redact_obj(k)] = redact_obj(v)
        return out
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, tuple):
        items = [redact_obj(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, (set, frozenset)):
        return type(value)(redact_obj(v) for v in value)
    return value


# --------------------------------------------------------------------------------------------
# A session's known secrets: a value found once is a secret wherever it appears in the session

BARE_MIN = 8          # characters: shorter values are too often words, numbers, flags
BARE_MAX = 512
_NOT_WORD = lazy(r"\W")
# what a value looked for bare never holds: whitespace, quotes, brackets, commas (a value the
# rules find ends at them anyway), so that text is searched a run between them at a time
_VALUE_RUN = lazy(r"[^\s\"'`(){}\[\]<>,]{%d,}" % BARE_MIN)
_ESCAPE_END = lazy(r"\\[nrt]|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}")
_SESSION: contextvars.ContextVar = contextvars.ContextVar("lessonloop_known_secrets",
                                                          default=None)


@functools.lru_cache(maxsize=None)
def _blake2b() -> Callable:
    """BLAKE2b, imported on first use, from its own module: ``hashlib`` also loads OpenSSL,
    which costs a capture hook a few milliseconds for nothing."""
    try:
        from _blake2 import blake2b
    except ImportError:                     # (a Python built without it)
        from hashlib import blake2b
    return blake2b


def bare_worthy(value: str) -> bool:
    """Whether a secret found under a key is also redacted where it appears alone: at least
    BARE_MIN characters without whitespace, quotes, brackets or commas; letters alone from 16
    characters and digits alone from 12 only. ``password: postgres`` must not turn every "postgres" of the session into a
    marker, nor ``pin: 20251130`` every date; ``hunter22``, ``pw-5f3a…`` or a token are
    unlikely to be anything but the secret."""
    n = len(value)
    if not BARE_MIN <= n <= BARE_MAX or MARKER_PREFIX in value:
        return False
    if value.isalpha():
        return n >= 16
    if value.isdigit():
        return n >= 12
    return _VALUE_RUN.fullmatch(value) is not None


def _word_at(text: str, i: int) -> bool:
    return 0 <= i < len(text) and (text[i].isalnum() or text[i] == "_")


def _bare_at(text: str, s: int, e: int) -> bool:
    """Whether ``text[s:e]`` stands alone: it cuts no run of letters, digits and underscores
    (a token right after a \\n, \\u003d or %3D escape stands alone too)."""
    return ((not (_word_at(text, s - 1) and _word_at(text, s)) or _escape_ends_at(text, s))
            and not (_word_at(text, e - 1) and _word_at(text, e)))


class KnownSecrets:
    """The secrets found so far in one session, to redact wherever they appear bare.

    ``DB_PASSWORD=pw-5f3a…`` in one command makes ``pw-5f3a…`` a secret in a later log line,
    an error message that becomes a pattern's key, or a sentence that becomes a lesson. Inside
    ``with known:`` every ``redact`` (and ``redact_obj``) adds what it finds (``learn``, when
    ``bare_worthy``) and replaces bare occurrences of what was found before (``scrub``) with
    the marker of the family it was found as.

    Only salted digests persist (``new``: BLAKE2b keyed with ``salt``, per value length), so
    what a session keeps on disk holds no value; a process that saw a value itself holds it
    in memory too and finds it by search, the others hash the text's candidate tokens.
    """

    def __init__(self, salt: bytes, saved: Iterable[tuple[int, str, bytes]] = ()):
        self.salt = bytes(salt)
        self.new: list[tuple[int, str, bytes]] = []     # learned here, not saved yet
        self._digests: dict[int, dict[bytes, str]] = {}  # length: digest: family
        self._values: dict[str, str] = {}               # value: family (this process only)
        self._covered: set[bytes] = set()               # digests of the values held
        self._search: Callable | None = None
        self._unmatched: dict[int, dict[bytes, str]] | None = None
        self._tokens: list[contextvars.Token] = []
        self.scrubbing = True                           # (off while only learning)
        for length, family, digest in saved:
            self._digests.setdefault(int(length), {}).setdefault(bytes(digest), family)

    def __bool__(self) -> bool:
        return bool(self._digests)

    def __len__(self) -> int:
        return sum(map(len, self._digests.values()))

    def __enter__(self) -> KnownSecrets:
        self._tokens.append(_SESSION.set(self))
        return self

    def __exit__(self, *exc_info) -> None:
        _SESSION.reset(self._tokens.pop())

    def digest(self, value: str) -> bytes:
        return _blake2b()(value.encode("utf-8", "surrogatepass"), key=self.salt[:64],
                          digest_size=16).digest()

    def saved(self, salt: bytes | None = None) -> list[tuple[int, str, bytes]]:
        """What to save: ``new``, or under another ``salt`` (another process saved the session's
        salt first) the values this process holds."""
        if salt is None or bytes(salt) == self.salt:
            return list(self.new)
        other = KnownSecrets(salt)
        return [(len(v), f, other.digest(v)) for v, f in self._values.items()]

    def learn(self, value: str, family: str) -> bool:
        """Remember ``value``, found as a secret of ``family``, when it is ``bare_worthy``; True
        when the session did not know it."""
        if value in self._values or not bare_worthy(value):
            return False
        d = self.digest(value)
        self._values[value] = family if family in _PRIO else "generic-secret"
        self._covered.add(d)
        self._search = self._unmatched = None
        known = self._digests.setdefault(len(value), {})
        if d in known:
            return False
        known[d] = self._values[value]
        self.new.append((len(value), known[d], d))
        return True

    def learn_from(self, value: Any) -> None:
        """Learn the secrets the redactor finds in ``value`` (a string or a structure), and
        replace nothing: what an event saw, learned before its captures are redacted."""
        scrubbing, self.scrubbing = self.scrubbing, False
        try:
            with self:
                redact_obj(value)
        finally:
            self.scrubbing = scrubbing

    def learn_spans(self, text: str, spans: Iterable[Span]) -> None:
        """Learn the values of the redactor's findings (a private key's lines excepted)."""
        for s, e, p in spans:
            if p != _PRIO["private-key"] and e - s >= BARE_MIN:
                for piece in text[s:e].split():
                    self.learn(piece.strip(_QUOTES), FAMILIES[p])

    def spans(self, text: str) -> list[Span]:
        """Where known secrets stand bare in ``text``, merged."""
        found: list[Span] = []
        if self._values:
            if self._search is None:
                self._search = re.compile("|".join(
                    map(re.escape, sorted(self._values, key=len, reverse=True)))).search
            m, search = self._search(text), self._search
            while m:
                s, e = m.span()
                if _bare_at(text, s, e):
                    found.append((s, e, _PRIO[self._values[m.group()]]))
                    m = search(text, e)
                else:
                    m = search(text, s + 1)
        if self._unmatched is None:
            self._unmatched = {n: left for n, ds in self._digests.items()
                               if (left := {d: f for d, f in ds.items()
                                            if d not in self._covered})}
        if self._unmatched and len(text) >= BARE_MIN:
            found += self._hashed(text)
        return _merged(found) if len(found) > 1 else found

    def _hashed(self, text: str) -> list[Span]:
        """The candidate tokens of ``text`` whose digest is known: within each run a value
        could lie in (``_VALUE_RUN``), every span of a known length that cuts no word and
        could have been learned (``bare_worthy``)."""
        found: list[Span] = []
        digest, unmatched = self.digest, self._unmatched
        shortest = min(unmatched)
        for m in _VALUE_RUN.finditer(text):
            a, run = m.start(), m.group()
            n = len(run)
            if n < shortest:
                continue
            ends = {0, n}
            for w in _NOT_WORD.finditer(run):
                ends.add(w.start())
                ends.add(w.end())
            starts = ends
            if "\\" in run or "%" in run:
                starts = ends | {e.end() for e in _ESCAPE_END.finditer(run)}
            for length, known in unmatched.items():
                if length > n:
                    continue
                for e in ends.intersection(map(length.__add__, starts)):
                    if bare_worthy(piece := run[e - length:e]) and (d := digest(piece)) in known:
                        found.append((a + e - length, a + e,
                                      _PRIO.get(known[d], _PRIO["generic-secret"])))
        return found

    def scrub(self, text: str) -> str:
        """``text`` with every bare occurrence of a known secret replaced by its marker."""
        spans = self.spans(text)
        return _apply(text, spans)[0] if spans else text


def _learn(value: Any, family: str) -> None:
    """Inside ``with known:``, learn a value a structure keeps under a secret's name."""
    session = _SESSION.get()
    if session is not None and isinstance(value, str):
        for piece in value.split():
            session.learn(piece.strip(_QUOTES), family)
