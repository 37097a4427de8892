"""The project's one secret redactor.

``redact(text)`` replaces every secret it recognises with ``[REDACTED:<family>]``. It is the
first step of admission (DESIGN §6) and runs before anything is persisted (DESIGN §8.1), always
*before* truncation, so a secret cut short later can never leave a readable prefix behind.

How it stays fast and linear:
- every rule is anchored on a literal ("needle"); needles are found with ``str.find`` /
  ``bytes.find`` (C speed, about 30 scans of the text in all) and a regex is only ``match``-ed
  at those positions; case-insensitive needles are searched in an ASCII-lowered byte copy of
  the text whose positions map 1:1 onto the text;
- every repetition is bounded or possessive, and rules whose regions can be long (PEM blocks,
  key names, values) skip hits inside a region already examined, so no input is quadratic.

Overlapping findings are merged into one span named after the most specific family (the order
of ``FAMILIES``). A pass is repeated until nothing changes (normally one extra, cheap pass), so
``redact(redact(x)) == redact(x)`` holds even when one secret hid the boundary of the next.

Generic ``name = value`` secrets keep the name and lose the value. Values that are clearly not
secrets are left: empty, null/None/true/false, placeholders (``<your-token>``, ``${VAR}``,
``***``), code (``get_password()``, ``os.environ["X"]``, ``settings.token``, a variable passed
on as ``token=token``), type annotations (``password: str``) and markers already in place.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from typing import Any, Callable, Iterator, NamedTuple

__all__ = ["FAMILIES", "MARKER_RE", "find_secrets", "marker", "redact", "redact_obj"]

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


def _has_digit(s: str) -> bool:
    return any(c.isdigit() for c in s)


def _has_upper_and_lower(s: str) -> bool:
    return any(c.isupper() for c in s) and any(c.islower() for c in s)


def _finds(hay: str | bytes, needle: str | bytes) -> Iterator[int]:
    i = hay.find(needle)
    while i != -1:
        yield i
        i = hay.find(needle, i + 1)


class _Scan:
    """One pass's view of the text: the text, an ASCII-lowered byte copy (same positions) for
    case-insensitive needles, and which needles are known to be absent.

    A needle found nowhere in one pass cannot appear in the next unless it occurs inside a
    marker: no needle contains "[" or "]", so an occurrence after replacement lies either inside
    a marker or wholly inside text that was already there. The confirming pass therefore only
    rescans needles that occurred (or that markers contain).
    """

    __slots__ = ("text", "low", "skip", "absent")

    def __init__(self, text: str, skip: frozenset = frozenset()):
        self.text = text
        self.low = text.encode("ascii", "replace").lower()   # one byte per character
        self.skip = skip
        self.absent: set = set()

    def hits(self, needle: str | bytes) -> list[int]:
        """Positions of ``needle``: a str is searched in the text, bytes in the lowered copy."""
        if needle in self.skip:
            self.absent.add(needle)
            return []
        found = list(_finds(self.text if isinstance(needle, str) else self.low, needle))
        if not found:
            self.absent.add(needle)
        return found

    def matches(self, regex: re.Pattern) -> list[re.Match]:
        if regex in self.skip:
            self.absent.add(regex)
            return []
        found = list(regex.finditer(self.text))
        if not found:
            self.absent.add(regex)
        return found


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j == -1 else j


def _line_prefix_blank(text: str, ks: int) -> bool:
    """Only indentation (or a YAML list dash) before position ``ks`` on its line."""
    return text[text.rfind("\n", 0, ks) + 1:ks].strip(" \t-") == ""


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
    line's end: a value whose closing quote was cut off is redacted to the end of its line."""
    end = _line_end(text, start)
    if len(quote) == 2:                                   # \" inside a JSON string
        j = text.find(quote, start, end)
        return end if j == -1 else j
    i = start
    while i < end:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == quote:
            return i
        i += 1
    return end


# --------------------------------------------------------------------------------------------
# Token rules anchored on a literal


class _Rule(NamedTuple):
    needle: str | None          # str.find() this literal; None: scan with regex.finditer
    regex: re.Pattern           # matched at each hit (must start with the needle)
    family: str | Callable[[re.Match], str | None]   # or a judge naming it (None rejects)
    left: frozenset | None = None   # reject a hit preceded by one of these characters
    group: int | str = 0            # the part of the match that is redacted
    url_back: bool = False          # extend the span back over host and scheme


def _sk_family(m: re.Match) -> str | None:
    if m.group("ant"):
        return "anthropic-api-key"
    body = m.group("body")
    if m.group("sub") or (_has_upper_and_lower(body) and (_has_digit(body) or len(body) >= 32)):
        return "openai-api-key"
    return None        # kebab-case words such as sk-learn-compat-layer


def _mixed_body(family: str) -> Callable[[re.Match], str | None]:
    def judge(m: re.Match) -> str | None:
        body = m.group("body")
        return family if _has_digit(body) or _has_upper_and_lower(body) else None
    return judge


_RULES: tuple[_Rule, ...] = (
    _Rule("sk-", re.compile(
        r"sk-(?:(?P<ant>ant-)[A-Za-z0-9_-]{8,1000}+"
        r"|(?P<sub>(?:proj|svcacct|admin|None)-)?+(?P<body>[A-Za-z0-9_-]{8,1000}+))"),
        _sk_family, left=_TOKCH),
    _Rule(None, re.compile(r"gh[pousr]_[A-Za-z0-9]{16,255}+"), "github-token", left=_ALNUM),
    _Rule("github_pat_", re.compile(r"github_pat_[A-Za-z0-9_]{20,255}+"), "github-token",
          left=_ALNUM),
    _Rule(None, re.compile(r"gl(?:pat|ptt|dt|rt|cbt|ft|soat|oas|imt|agent)-[A-Za-z0-9_-]{16,255}+"
                           r"(?:\.[A-Za-z0-9_-]{1,255}+){0,3}+"), "gitlab-token", left=_ALNUM),
    _Rule("hooks.slack.com/", re.compile(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,400}+"),
        "slack-webhook", url_back=True),
    _Rule("discord", re.compile(
        r"discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{5,30}+/[A-Za-z0-9_-]{8,200}+"),
        "discord-webhook", url_back=True),
    _Rule(None, re.compile(r"x(?:ox(?:[abeoprs]|e\.xox[bp])|app-\d)-[A-Za-z0-9-]{10,300}+"),
          "slack-token", left=_ALNUM),
    _Rule("k_live_", re.compile(r"k_live_[A-Za-z0-9]{10,255}+"), "stripe-key"),
    _Rule("k_test_", re.compile(r"k_test_[A-Za-z0-9]{10,255}+"), "stripe-key"),
    _Rule("whsec_", re.compile(r"whsec_[A-Za-z0-9+/=]{10,255}+"), "stripe-key", left=_ALNUM),
    _Rule("npm_", re.compile(r"npm_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
          _mixed_body("npm-token"), left=_ALNUM),
    _Rule("pypi-AgE", re.compile(r"pypi-AgE[A-Za-z0-9_-]{16,1000}+"), "pypi-token", left=_ALNUM),
    _Rule("hf_", re.compile(r"hf_(?P<body>[A-Za-z0-9]{20,255}+)(?![_-])"),
          _mixed_body("huggingface-token"), left=_WORD),
    _Rule("AIza", re.compile(r"AIza[0-9A-Za-z_-]{20,255}+"), "google-api-key", left=_ALNUM),
    _Rule("GOCSPX-", re.compile(r"GOCSPX-[A-Za-z0-9_-]{16,255}+"), "google-oauth", left=_ALNUM),
    _Rule("ya29.", re.compile(r"ya29\.[A-Za-z0-9_-]{20,4000}+"), "google-oauth", left=_ALNUM),
    _Rule(None, re.compile(r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{12,16}+"), "aws-access-key", left=_ALNUM),
    # JWT: header.payload.signature (JWE: up to five parts), or header.payload when cut off.
    _Rule("eyJ", re.compile(
        r"eyJ[A-Za-z0-9_-]{6,8000}+\.(?:eyJ[A-Za-z0-9_-]{0,8000}+(?:\.[A-Za-z0-9_-]{0,8000}+)?+"
        r"|[A-Za-z0-9_-]{4,8000}+\.[A-Za-z0-9_-]{0,8000}+)(?:\.[A-Za-z0-9_-]{1,8000}+){0,2}+"),
        "jwt", left=_TOKCH | {"."}),
)

# Stripe keys are sk_/rk_ + live_/test_: the needle starts one character in.
_STRIPE_NEEDLES = ("k_live_", "k_test_")

# Teams incoming webhooks: <tenant>.webhook.office.com/webhookb2/..., outlook.office(365).com/webhook/...
_TEAMS = re.compile(r"(?:[A-Za-z0-9-]{1,63}\.)?(?:webhook\.office|outlook\.office(?:365)?)\.com"
                    r"/webhook(?:b2)?/[A-Za-z0-9@._/-]{8,600}+")


def _token_rules(sc: _Scan, out: list[Span]) -> None:
    text = sc.text
    for rule in _RULES:
        left, regex = rule.left, rule.regex
        prev_end = -1       # a token right after another one of the same kind is not "inside a word"
        hits: list[int] | list[re.Match]
        hits = sc.matches(regex) if rule.needle is None else sc.hits(rule.needle)
        for hit in hits:
            h = hit if isinstance(hit, int) else hit.start()
            if left is not None and h and h != prev_end and text[h - 1] in left:
                continue    # (checked before matching: keeps a text of repeated needles linear)
            m = regex.match(text, h) if isinstance(hit, int) else hit
            if m is None:
                continue
            family = rule.family if isinstance(rule.family, str) else rule.family(m)
            if family is None:
                continue
            prev_end = m.end()
            s, e = m.span(rule.group)
            if rule.needle in _STRIPE_NEEDLES:           # sk_live_ / rk_test_ ...
                if s < 1 or text[s - 1] not in "sr" or (s >= 2 and text[s - 2] in _ALNUM):
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

_PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,40}?PRIVATE KEY(?: BLOCK)?-----")
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
# URLs with credentials (any scheme), Sentry DSNs, credentials cut off at the end of the text

_AUTHORITY = re.compile(r"[^\s/?#\"'<>\\]{0,1024}+")
_HEX32 = re.compile(r"[0-9a-f]{32}")


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

_AUTHZ = re.compile(
    r"authorization(?:\\?[\"'])?+\]?[ \t]*(?:=>|:=|=|:)[ \t]*(?:[rbuf]{0,2}(\\?[\"'`]))?", re.I)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9_-]{0,30})[ \t]+(?=\S)")
_ONE_TOKEN_SCHEMES = {"bearer", "basic", "token", "bot", "apikey", "key", "jwt", "dpop",
                      "sso-key", "geniekey", "splunk", "otp"}
_MULTI_SCHEMES = {"digest", "negotiate", "ntlm", "aws4-hmac-sha256", "hoba", "mutual", "vapid",
                  "hmac", "signature", "oauth", "kerberos"}
_CRED = re.compile(r"[^\s\"'`,;]{1,8192}+")


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
        if cm and not _placeholder(cm.group()):
            family = {"bearer": "bearer-token", "basic": "basic-auth"}.get(scheme, "authorization-header")
            out.append((cm.start(), cm.end(), _PRIO[family]))
    elif scheme in _MULTI_SCHEMES:
        s, e = sm.end(), len(text[:end].rstrip())
        if e > s and not _placeholder(text[s:e]):
            out.append((s, e, _PRIO["authorization-header"]))
    else:
        cm = _CRED.match(text, j, end)
        if cm and not _placeholder(cm.group()):
            v = cm.group()
            if quote or (len(v) >= 8 and _has_digit(v)):
                out.append((cm.start(), cm.end(), _PRIO["authorization-header"]))


_BEARER = re.compile(r"bearer[ \t]+([A-Za-z0-9._~+/-]{8,8192}+=*+)", re.I)
_BASIC = re.compile(r"basic[ \t]+([A-Za-z0-9+/]{6,4096}+={0,2}+)(?![A-Za-z0-9+/=])", re.I)
_CURL_USER = re.compile(r"(?:-u|--user)(?:[ \t]+|=)?([\"']?)([^\s:\"'@]{1,256}+):([^\s\"']{1,1024}+)\1")
_SIGNATURE = re.compile(r"(?:sig|[a-z0-9-]{0,20}signature)=([A-Za-z0-9%+/=._-]{16,4000}+)", re.I)


def _decodes_to_userpass(b64: str) -> bool:
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
    for h in sc.hits("-u"):
        if h and text[h - 1] == "-":
            h -= 1                                        # --user
            if not text.startswith("--user", h):
                continue
        if h and not text[h - 1].isspace():
            continue
        m = _CURL_USER.match(text, h)
        if m:
            user, pw = m.group(2), m.group(3)
            if not (user.isdigit() and pw.isdigit()) and not _placeholder(pw):
                out.append((m.start(3), m.end(3), _PRIO["basic-auth"]))
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


# --------------------------------------------------------------------------------------------
# Generic key/value secrets: the name stays, the value goes

# (Sentry DSNs need no "dsn" needle: their 32-hex key is caught in the URL itself.)
_KEY_NEEDLES = (b"pass", b"pwd", b"secret", b"token", b"auth", b"cred", b"key")
_KEY_WORDS_BEFORE_KEY = ("api", "access", "private", "session", "signing", "encryption",
                         "master", "secret", "auth", "account", "sharedaccess", "x-api", "cf-api")
_KEYCH = _WORD | {".", "-"}
_AFTER_KEY = frozenset("=:\"'`> \t]\\*_")          # what may follow a key name before its value
_KEY_FWD = re.compile(r"[A-Za-z0-9_.-]{0,200}+")
_SEG = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "passcode", "pwd")
_STRONG = frozenset({
    "password", "passwd", "passphrase", "passcode", "pass", "pwd", "secret", "secrets", "token",
    "apikey", "accesskey", "privatekey", "sessionkey", "secretkey", "authkey", "signingkey",
    "encryptionkey", "masterkey", "credential", "credentials", "creds", "auth", "oauth",
    "accountkey", "sharedaccesskey",
})
_STRONG_SUFFIX = ("password", "passwd", "passphrase", "passcode", "pwd", "secret", "token",
                  "apikey", "accesskey", "privatekey", "sessionkey", "secretkey", "authkey", "oauth")
_STRONG_PREFIX = ("password", "passwd", "secret")
_KEY_PAIRS = frozenset({"api", "access", "private", "session", "signing", "encryption", "master",
                        "secret", "auth", "client", "account"})
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
})
# (Words that only precede flags and counts: "reset_password_token" or "use_auth_token" can
# hold a real secret, so "reset"/"use"/"new" are deliberately not here.)
_NOT_SECRET_BEFORE = frozenset({"max", "min", "num", "count", "total", "n", "show", "hide", "has",
                                "is", "no", "skip", "require", "requires", "enable"})

_NON_SECRET_VALUES = frozenset({
    "", "null", "none", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "inherit",
    "required", "optional", "redacted", "masked", "hidden", "n/a", "na", "tbd", "todo", "empty",
    "-", "~", "unset", "nan", "default",
})
_TYPE_WORDS = frozenset({"str", "string", "bytes", "int", "bool", "number", "any", "secretstr",
                         "secretbytes", "object", "none", "optional", "char", "text", "varchar"})
_TYPE_START = re.compile(
    r"(?:str|String|string|bytes|int|bool|Optional|Union|Annotated|SecretStr|SecretBytes|Any|"
    r"list|dict|List|Dict|Mapping|Sequence|tuple|Tuple|typing\.\w+|Final|ClassVar)\b")
_PLACEHOLDER = re.compile(
    r"<[^<>\n]{0,200}>|\$\{.{0,200}\}|\$\(.{0,200}\)|\$[A-Za-z_]\w{0,100}|%[A-Za-z_]\w{0,100}%|"
    r"\{\{.{0,200}\}\}|\{[A-Za-z_][\w.]{0,100}\}|[*•·]{3,50}\w{0,6}|[xX]{3,100}|\.{3,100}|…|"
    r"(?i:your|my)[-_ ].{0,100}|\[REDACTED:.{0,60}|(?i:<redacted>|redacted)|"
    r"\?|\$\d{1,3}|\$[@*#?!]|%s|%\([A-Za-z_]\w{0,100}\)s|:[A-Za-z_]\w{0,100}",   # shell/SQL parameters
    re.S)
_TEMPLATE_START = (MARKER_PREFIX, "${", "{{", "$(", "<%", "{%")
_CALL = re.compile(r"[A-Za-z_$][\w$]{0,100}+(?:\??\.[A-Za-z_$][\w$]{0,100}+){0,20}+(?:[(\[]|!\()")
_ATTR_CHAIN = re.compile(r"[A-Za-z_$][\w$]{0,100}+(?:\??\.[A-Za-z_$][\w$]{0,100}+){1,20}+")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")
_CODE_WORDS = frozenset({"await", "new", "yield", "lambda", "not", "function", "async", "typeof",
                         "self", "this", "cls", "return", "if", "else", "or", "and", "in", "is"})
_STOPWORDS = frozenset({"to", "the", "a", "an", "and", "or", "with", "when", "if", "for", "in",
                        "on", "of", "is", "as", "flag", "option", "argument", "instead", "which",
                        "that", "this", "it", "but", "not", "only", "here", "there", "so", "then",
                        "was", "were", "are", "be", "by", "from", "at"})
_VAR_NAMES = frozenset({"pw", "pwd", "tok", "key", "value", "val", "s", "x", "v"})
_SEP = re.compile(r"[ \t]*(=>|:=|==|=|:(?!:))[ \t]*")
_WS = re.compile(r"[ \t]+")
_AUTH_PAIR = re.compile(r"\([ \t]*([\"'])[^\"'\n]{0,200}\1[ \t]*,[ \t]*([\"'])([^\"'\n]{1,500})\2[ \t]*\)")
_NETRC = re.compile(r"(?:^|\s)(?:machine|login|default)\s")
_UNQUOTED = re.compile(r"[^\s\"'`]{1,4096}+")
_CUT = re.compile(r"[;&][A-Za-z_][\w.-]{0,100}=")
_DEFAULT = re.compile(r"[^\n=]{0,200}?(?<![=!<>])=(?!=)[ \t]*")
_BLOCK = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_STR_PREFIX = re.compile(r"[rRbBuUfF]{1,2}(?=[\"'])")
_TRAIL = ".,;:)]}>"


def _placeholder(v: str) -> bool:
    return v.lower() in _NON_SECRET_VALUES or _PLACEHOLDER.fullmatch(v) is not None


def _classify(key: str) -> str | None:
    """Family for a secret-looking key name, or None when the name is not a secret's."""
    segs = [s.lower() for s in _SEG.findall(key)]
    idx = -1
    for i, s in enumerate(segs):
        if (s in _STRONG or s.endswith(_STRONG_SUFFIX)
                or (s.startswith(_STRONG_PREFIX) and not s.startswith("secretar"))):
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
    if any(s in _NOT_SECRET_AFTER for s in segs[idx + 1:]):
        return None
    if any(s in _NOT_SECRET_BEFORE for s in segs[:idx]):
        return None
    joined = "".join(segs)
    if segs[idx] == "dsn":
        return "sentry-dsn"
    if joined.endswith(("accountkey", "sharedaccesskey")):
        return "azure-storage-key"
    if "cf" in segs or any(s.startswith("cloudflare") for s in segs):
        return "cloudflare-token"
    if "secretaccesskey" in joined:
        return "aws-secret-key"
    s = segs[idx]
    if s == "pass" or s.startswith(_PASSWORD_WORDS) or s.endswith(_PASSWORD_WORDS):
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
    m = _SEP.match(text, i)
    if m:
        sep, j = m.group(1), m.end()
        spaced = m.group(0)[0] in " \t" and m.group(0)[-1] in " \t"
        if text.startswith(("**", "__"), j) and text[j + 2:j + 3] in (" ", "\t"):
            j = _WS.match(text, j + 2).end()
    elif key.lower() in ("password", "passwd") and _NETRC.search(
            text, text.rfind("\n", 0, ks) + 1, ks) and _WS.match(text, i):
        m = _WS.match(text, i)                         # .netrc: machine h login u password p
        sep, j, spaced = " ", m.end(), False
    elif key.startswith("-"):                          # --password hunter2
        m = _WS.match(text, i)
        if not m:
            return None
        sep, j, spaced = " ", m.end(), False
    else:
        return None
    if j >= n:
        return None
    pm = _STR_PREFIX.match(text, j)
    if pm:
        j = pm.end()
    c = text[j]
    if c in _QUOTES or (c == "\\" and text[j + 1:j + 2] in ("\"", "'")):
        quote = text[j:j + 2] if c == "\\" else c
        start = j + len(quote)
        end = _close_quote(text, start, quote)
        v = text[start:end]
        if not v or _placeholder(v):
            return None
        return (start, end)
    if c in "{[(":
        tm = _AUTH_PAIR.match(text, j) if c == "(" else None
        if tm and not _placeholder(tm.group(3)):        # auth=("user", "pass")
            return tm.span(3)
        return None                                    # a structure: its own keys speak for it
    um = _UNQUOTED.match(text, j)
    if not um:
        return None
    raw = um.group()
    if raw.startswith(_TEMPLATE_START) or _placeholder(raw):
        return None                                    # ${{ secrets.X }}, {{ .Values.x }}, $(cmd)
    if (sep == ":" and raw.isalpha() and raw.islower() and key.replace(" ", "").isalpha()
            and not quoted_key and text[um.end():um.end() + 1] == " "
            and text[um.end() + 1:um.end() + 2].isalpha() and not _line_prefix_blank(text, ks)):
        return None                                    # prose: "invalid token: expected string"
    if sep == ":" and raw in _BLOCK:                   # YAML block scalar: the indented lines
        return _yaml_block(text, ks, um.end())
    if sep == ":" and _TYPE_START.match(raw) and (raw.lower().rstrip(",;:=)") in _TYPE_WORDS
                                                   or not raw[0].islower() or "[" in raw or "|" in raw):
        dm = _DEFAULT.match(text, um.end())            # token: str = "abc"  -> the default
        return _default_span(text, dm.end()) if dm and dm.end() < n else None
    if sep == " " and (raw.startswith("-") or raw.lower() in _STOPWORDS):
        return None
    v = raw
    cm = _CUT.search(v)
    if cm:
        v = v[:cm.start()]                             # Password=x;Database=y  /  ?token=x&user=y
    stripped = v.rstrip(_TRAIL)
    trailing, v = v[len(stripped):], stripped
    if not v or _placeholder(v) or v.lower() in _CODE_WORDS:
        return None
    if _CALL.match(raw) or _ATTR_CHAIN.fullmatch(v.rstrip("!")):
        return None                                    # get_password(), os.environ[...], cfg.pw
    if _IDENT.fullmatch(v) and (spaced or trailing[:1] in (",", ")")):
        lv = v.lower()
        if ("_" in v or lv == key.lower().strip("-") or lv in _VAR_NAMES
                or any(w in lv for w in _STRONG_SUFFIX)):
            return None                                # password = password: a variable
    if key.lower().strip("-") in ("pwd", "oldpwd") and v[:1] in ("/", "~", "."):
        return None                                    # the shell's working directory
    if key.lower() == "pass" and v.isdigit():
        return None                                    # "pass: 3  fail: 1" is a count
    end = j + len(v)
    if family == "password" and sep == ":" and _line_prefix_blank(text, ks):
        end = len(text[:_line_end(text, j)].rstrip())  # "password: correct horse battery"
    return (j, end)


def _default_span(text: str, j: int) -> tuple[int, int] | None:
    """The default value after a type annotation (``token: str = "abc"``)."""
    pm = _STR_PREFIX.match(text, j)
    if pm:
        j = pm.end()
    c = text[j]
    if c in _QUOTES:
        end = _close_quote(text, j + 1, c)
        v = text[j + 1:end]
        return (j + 1, end) if v and not _placeholder(v) else None
    um = _UNQUOTED.match(text, j)
    if not um:
        return None
    v = um.group().rstrip(_TRAIL)
    if (not v or _placeholder(v) or _CALL.match(um.group()) or _ATTR_CHAIN.fullmatch(v)
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


def _key_hit_ok(low: bytes, h: int, needle: bytes) -> bool:
    if needle != b"key":
        return True
    before = low[max(0, h - 14):h].rstrip(b"_- ").decode("ascii", "replace")
    return before.endswith(_KEY_WORDS_BEFORE_KEY)


def _generic(sc: _Scan, out: list[Span]) -> None:
    text, low = sc.text, sc.low
    hits = []
    for needle in _KEY_NEEDLES:
        hits.extend(h for h in sc.hits(needle) if _key_hit_ok(low, h, needle))
    if not hits:
        return
    hits.sort()
    n = len(text)
    done = -1
    for h in hits:
        if h < done:
            continue
        ke = _KEY_FWD.match(text, h).end()
        done = ke
        if ke >= n or text[ke] not in _AFTER_KEY:
            continue                                   # no separator: prose, or a 200+ char run
        if low.startswith(b"authorization", h):
            _authorization(text, h, out)
        ks, lim = h, max(0, h - 200)
        while ks > lim and text[ks - 1] in _KEYCH:
            ks -= 1
        if ks == lim and ks and text[ks - 1] in _KEYCH:
            continue                                   # no real key is 200 characters long
        if text.startswith(MARKER_PREFIX, ks - len(MARKER_PREFIX)):
            continue                                   # a family name inside a marker
        if ke - ks == 3 and ks >= 2 and text[ks - 1] == " " and text[ks - 2] in _LETTERS:
            w = ks - 1                                 # "API key: ...", "Secret key = ..."
            while w > 0 and ks - w < 16 and text[w - 1] in _LETTERS:
                w -= 1
            ks = w
        key = text[ks:ke]
        bare = key.strip(".-")
        if bare.lower().endswith("authorization"):
            continue                                   # handled by _authorization
        family = _classify(bare)
        if family is None:
            continue
        span = _value_span(text, ks, ke, key, family)
        if span and span[1] > span[0]:
            out.append((span[0], span[1], _PRIO[family]))
            done = max(done, span[1])


# --------------------------------------------------------------------------------------------
# The pass, merging, and the public API


def _collect(text: str, skip: frozenset = frozenset()) -> tuple[list[Span], frozenset]:
    """One pass: merged spans, and what the next pass over the redacted text may skip."""
    sc = _Scan(text, skip)
    found: list[Span] = []
    _token_rules(sc, found)
    _pem(sc, found)
    _urls(sc, found)
    _schemes(sc, found)
    _generic(sc, found)
    found = [f for f in found if f[1] > f[0] and not text.startswith(MARKER_PREFIX, f[0])]
    next_skip = frozenset(sc.absent) - _IN_MARKERS
    if not found:
        return found, next_skip
    found.sort()
    merged = [found[0]]
    for s, e, p in found[1:]:
        ms, me, mp = merged[-1]
        if s < me:
            merged[-1] = (ms, max(me, e), min(mp, p))
        else:
            merged.append((s, e, p))
    return merged, next_skip


# Every needle and needle-less regex any pass looks for: no finding is possible without one.
_TRIGGERS: frozenset = frozenset(
    {r.needle for r in _RULES if r.needle} | {r.regex for r in _RULES if not r.needle}
    | {".com/webhook", "-----", "://", "-u", b"bearer", b"basic", b"sig=", b"signature="}
    | set(_KEY_NEEDLES))


# "-u" only counts at the start or after whitespace (``curl -u user:pass``, ``--user``): as a
# regex it does not send every hyphenated word down the full scan.
_STR_NEEDLES = tuple(sorted(n for n in _TRIGGERS if isinstance(n, str) and n != "-u"))
_FOLDED_NEEDLES = tuple(sorted(n.decode() for n in _TRIGGERS if isinstance(n, bytes)))
_NEEDLELESS = tuple(n for n in _TRIGGERS if isinstance(n, re.Pattern))
_CURL_USER_FLAG = re.compile(r"(?:^|\s)--?u")


def _may_hold_secret(text: str) -> bool:
    """False when no pass could find anything: none of the needles occurs (bytes needles
    case-insensitively) and no needle-less regex matches.

    No needle and no needle-less regex spans a newline, so the test runs line by line, and a
    line seen before (prompts repeat most of theirs between calls) costs a dictionary lookup.
    """
    return any(_line_may_hold_secret(line) if len(line) <= _CACHED_LINE_CHARS
               else _scan_line(line) for line in text.split("\n"))


_CACHED_LINE_CHARS = 2000  # bounds the cache's memory at a few megabytes


def _scan_line(line: str) -> bool:
    """Substring tests run at C speed, so ordinary text is returned without the full scan."""
    if any(n in line for n in _STR_NEEDLES) or ("-u" in line and _CURL_USER_FLAG.search(line)):
        return True
    low = line.lower()
    return any(n in low for n in _FOLDED_NEEDLES) or any(r.search(line) for r in _NEEDLELESS)


_line_may_hold_secret = functools.lru_cache(maxsize=4096)(_scan_line)


def _needles_in_markers() -> frozenset:
    """Needles and token regexes that occur inside some marker: always rescanned."""
    markers = " ".join(marker(f) for f in FAMILIES)
    low = markers.lower().encode()
    inside = set()
    for n in _TRIGGERS:
        if isinstance(n, re.Pattern):
            hit = n.search(markers) is not None
        elif isinstance(n, bytes):
            hit = n in low
        else:
            hit = n in markers
        if hit:
            inside.add(n)
        assert isinstance(n, re.Pattern) or ("[" not in str(n) and "]" not in str(n))
    return frozenset(inside)


_IN_MARKERS = _needles_in_markers()


def _apply(text: str, spans: list[Span]) -> str:
    parts, pos = [], 0
    for s, e, p in spans:
        parts.append(text[pos:s])
        parts.append(marker(FAMILIES[p]))
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


def find_secrets(text: str) -> list[tuple[str, int, int]]:
    """``(family, start, end)`` of every secret found in one pass over ``text``.

    Overlapping findings are merged. (``redact`` may take a second pass when one secret
    hid the boundary of another; this reports the first.)
    """
    if not isinstance(text, str):
        raise TypeError(f"find_secrets() needs str, not {type(text).__name__}")
    return [(FAMILIES[p], s, e) for s, e, p in _collect(text)[0]]


def redact(text: str) -> str:
    """``text`` with every recognised secret replaced by ``[REDACTED:<family>]``."""
    if not isinstance(text, str):
        raise TypeError(f"redact() needs str, not {type(text).__name__}")
    if not _may_hold_secret(text):
        return text
    skip: frozenset = frozenset()
    for _ in range(_MAX_PASSES):
        spans, skip = _collect(text, skip)
        if not spans:
            break
        text = _apply(text, spans)
    return text


def _secret_key(key: Any) -> str | None:
    if not isinstance(key, str) or len(key) > 200:
        return None
    k = MARKER_RE.sub(" ", key).strip(" \t\"'.-")
    if k.lower().endswith("authorization"):
        return "authorization-header"
    return _classify(k)


def _secret_value(family: str, key: str, v: Any) -> bool:
    if isinstance(v, str):
        t = v.strip()
        if not t or _placeholder(t) or MARKER_RE.fullmatch(t):
            return False
        if family in ("generic-secret", "cloudflare-token"):
            return len(t) >= 8 and not any(c.isspace() for c in t)
        return True
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return family == "password" and key.strip().lower() != "pass"
    return False


def redact_obj(value: Any) -> Any:
    """A copy of ``value`` with every string inside dicts, lists, tuples and sets redacted.

    A value stored under a secret-looking key (``{"password": "hunter2"}``) is replaced whole:
    in a structure the key is the only context saying the value is a secret. Under generic
    names (token, secret, api_key, ...) that takes a string of 8+ characters without spaces,
    so a tokenizer's ``{"token": "Hello", "logprob": -0.3}`` stays; under password names any
    string, or a number (a PIN), except for a bare ``pass`` count. Keys are redacted too.
    Other objects are returned unchanged.
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            family = _secret_key(k)
            out[redact_obj(k)] = marker(family) if family and _secret_value(family, k, v) \
                else redact_obj(v)
        return out
    if isinstance(value, list):
        return [redact_obj(v) for v in value]
    if isinstance(value, tuple):
        items = [redact_obj(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, (set, frozenset)):
        return type(value)(redact_obj(v) for v in value)
    return value
