"""The words the detectors judge by: whether a key name is a secret's (``password``, ``API_KEY``,
``stripeSecret``) and which family it names, which needle hits can start such a name at all,
and what values that are not secrets look like (empty and boolean words, placeholders such as
``<your-token>``, ``${VAR}`` or ``***``, templates, code, types and paths).

Over 600 lines because most of it is word lists (data, one word a line); the logic is short.
"""

from __future__ import annotations

import functools
import re

from ...lazyre import LazyPattern, lazy
from .families import MARKER_PREFIX
from .text import LETTERS, RUN_MAX, WORD

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    # the last run each tail pattern found, as (start, end): hits inside it share it (_tail_end)
    TailRuns = dict[LazyPattern, tuple[int, int]]

_KEY_WORDS_BEFORE_KEY = (
    "api",
    "access",
    "private",
    "session",
    "signing",
    "encryption",
    "master",
    "secret",
    "auth",
    "account",
    "sharedaccess",
    "x-api",
    "cf-api",
    "client",
    "subscription",
    "hmac",
    "jwt",
    "deploy",
    "app",
    "consumer",
    "storage",
    "license",
    "priv",
    "cookie",
    "aes",
    "cipher",
    "crypto",
)
KEYCH = WORD | {".", "-"}
AFTER_KEY = frozenset("=:\"'`> \t]\\*_")  # what may follow a key name before its value
KEY_FWD = lazy(r"[A-Za-z0-9_.-]{0,200}+")
KEY_RUN = lazy(r"[A-Za-z0-9_.-]*+")
SEG = lazy(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "passcode", "pwd")
_STRONG = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "passcode",
        "pass",
        "pwd",
        "secret",
        "secrets",
        "token",
        "apikey",
        "accesskey",
        "privatekey",
        "sessionkey",
        "secretkey",
        "authkey",
        "signingkey",
        "encryptionkey",
        "masterkey",
        "credential",
        "credentials",
        "creds",
        "auth",
        "oauth",
        "accountkey",
        "sharedaccesskey",
        "privkey",
        "hmackey",
        "jwtkey",
        "appsecret",
        "cookie",
        "cookies",  # (no needle: in text a cookie needs its Cookie: header; a key here)
    }
)
_STRONG_SUFFIX = (
    "password",
    "passwd",
    "passphrase",
    "passcode",
    "pwd",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "sessionkey",
    "secretkey",
    "authkey",
    "oauth",
)
_STRONG_PREFIX = ("password", "passwd", "secret")
HAS_STRONG_WORD = lazy("|".join(_STRONG_SUFFIX))
_KEY_PAIRS = frozenset(
    {
        "api",
        "access",
        "private",
        "session",
        "signing",
        "encryption",
        "master",
        "secret",
        "auth",
        "client",
        "account",
        "subscription",
        "hmac",
        "jwt",
        "deploy",
        "app",
        "consumer",
        "storage",
        "license",
        "priv",
        "cookie",
        "aes",
        "cipher",
        "crypto",
    }
)
_NOT_SECRET_AFTER = frozenset(
    {
        "count",
        "counts",
        "limit",
        "limits",
        "type",
        "types",
        "url",
        "uri",
        "urls",
        "endpoint",
        "endpoints",
        "path",
        "paths",
        "file",
        "filename",
        "files",
        "dir",
        "folder",
        "len",
        "length",
        "size",
        "name",
        "names",
        "max",
        "min",
        "ttl",
        "timeout",
        "expiry",
        "expires",
        "expiration",
        "exp",
        "lifetime",
        "age",
        "field",
        "fields",
        "param",
        "params",
        "prefix",
        "suffix",
        "format",
        "kind",
        "mode",
        "method",
        "methods",
        "provider",
        "providers",
        "policy",
        "env",
        "var",
        "vars",
        "usage",
        "budget",
        "index",
        "idx",
        "required",
        "enabled",
        "enable",
        "disabled",
        "hint",
        "label",
        "placeholder",
        "help",
        "description",
        "desc",
        "strength",
        "regex",
        "pattern",
        "rotation",
        "reset",
        "retries",
        "attempts",
        "location",
        "backend",
        "algorithm",
        "alg",
        "scheme",
        "version",
        "at",
        "in",
        "seconds",
        "sec",
        "ms",
        "duration",
        "interval",
        "window",
        "rate",
        "style",
        "class",
        "visible",
        "prompt",
        "message",
        "msg",
        "error",
        "errors",
        "status",
        "state",
        "flow",
        "page",
        "form",
        "route",
        "handler",
        "validator",
        "validation",
        "check",
        "changed",
        "updated",
        "created",
        "modified",
        "encoding",
        "bits",
        "complexity",
        "mask",
        "masked",
        "hidden",
        "shown",
        "manager",
        "store",
        "vault",
        "id",
        "ids",
        "domain",
        "domains",
        "issuer",
        "audience",
        "scope",
        "scopes",
        "realm",
        "sock",
        "socket",
        "directory",
        "host",
        "hostname",
        "port",
        "region",
        "user",
        "username",
        "email",
        "callback",
        "redirect",
    }
)
# NAMEpass: DBPASS, adminpass, keytool's -storepass (not "bypass", "compass", "surpass").
_PASS_OWNERS = frozenset(
    {
        "db",
        "admin",
        "root",
        "user",
        "store",
        "key",
        "smtp",
        "mail",
        "ftp",
        "pg",
        "mysql",
        "redis",
        "ldap",
        "vnc",
        "wifi",
        "mq",
        "app",
        "sudo",
        "login",
        "bind",
        "proxy",
        "keystore",
        "truststore",
        "src",
        "dest",
        "srcstore",
        "deststore",
        "srckey",
        "destkey",
        "require",
    }
)  # requirepass
# A "key" that is a file name with its line number after it: auth.py:42, secrets.ts:10:5.
_SOURCE_EXTENSIONS = frozenset(
    {
        "py",
        "pyi",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "go",
        "rb",
        "java",
        "kt",
        "rs",
        "c",
        "cc",
        "cpp",
        "h",
        "hpp",
        "cs",
        "php",
        "swift",
        "scala",
        "sh",
        "lua",
        "ex",
        "exs",
        "erl",
        "dart",
        "vue",
        "svelte",
        "m",
        "mm",
        "pl",
        "r",
        "jl",
        "clj",
        "groovy",
    }
)
# (Words that only precede flags and counts: "reset_password_token" or "use_auth_token" can
# hold a real secret, so "reset"/"use"/"new" are deliberately not here.)
_NOT_SECRET_BEFORE = frozenset(
    {
        "max",
        "min",
        "num",
        "count",
        "total",
        "n",
        "show",
        "hide",
        "has",
        "is",
        "no",
        "skip",
        "require",
        "requires",
        "enable",
        "publishable",
    }
)

_NON_SECRET_VALUES = frozenset(
    {
        "",
        "null",
        "none",
        "nil",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "undefined",
        "inherit",
        "required",
        "optional",
        "redacted",
        "masked",
        "hidden",
        "n/a",
        "na",
        "tbd",
        "todo",
        "empty",
        "-",
        "~",
        "unset",
        "nan",
        "default",
        "oauth1",
        "oauth2",
        "oidc",
        "saml2",
        "sigv4",
        "x509",
        "test",
        "dummy",
        "fake",
        "example",
        "sample",
    }
)
TYPE_WORDS = frozenset(
    {
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "number",
        "any",
        "secretstr",
        "secretbytes",
        "object",
        "none",
        "optional",
        "char",
        "text",
        "varchar",
    }
)
TYPE_START = lazy(
    r"(?:str|String|string|bytes|int|bool|Optional|Union|Annotated|SecretStr|SecretBytes|Any|"
    r"list|dict|List|Dict|Mapping|Sequence|tuple|Tuple|typing\.\w+|Final|ClassVar)\b"
)
# A file system path (made of names: a random value with slashes is base64), a type's name.
PATH_VALUE = lazy(r"(?:~|\.{1,2})?(?:/[\w.@+-]{1,100}){2,40}/?")
NAME_PATH = lazy(r"[a-z][a-z_-]{0,60}(?:/[a-z][a-z_-]{0,60}){1,10}")  # --secret-id prod/db
PASCAL_TYPE = lazy(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*")
_PLACEHOLDER = lazy(
    r"<[^<>\n]{0,200}>|\$\{.{0,200}\}|\$\(.{0,200}\)|\$[A-Za-z_]\w{0,100}|%[A-Za-z_]\w{0,100}%|"
    r"\{\{.{0,200}\}\}|\{[A-Za-z_][\w.]{0,100}\}|[*•·]{3,50}\w{0,6}|[xX]{3,100}|\.{3,100}|…|"
    r"(?i:your|my)[-_ ].{0,100}|\[REDACTED:.{0,60}|(?i:<redacted>|redacted)|"
    r"\?|\$\d{1,3}|\$[@*#?!]|%s|%\([A-Za-z_]\w{0,100}\)s|:[A-Za-z_]\w{0,100}|"  # shell/SQL parameters
    r"\[[A-Z][A-Z_]{1,20}\]|"  # a tokenizer's [UNK], [SEP]
    r"[\w-]{1,12}(?:\.{3,100}|…|[*•]{3,100})|[A-Za-z_-]{1,12}[xX]{4,100}|"  # sk-..., gho_****,
    #                                                            ghp_XXXX (Q7000XXXx is no placeholder)
    r"(?i:(?:[a-z0-9]{0,8}[-_]){0,2}(?:your|my)[-_ ](?:[a-z]{1,20}[-_ ]){0,3}"  # sk-your-key-here
    r"(?:key|token|secret|password|pass|pwd|api|id|value|here)[a-z]{0,8}(?:[-_ ][a-z]{1,20}){0,3}|"
    r".{0,40}(?:key|token|secret|password|api|value)[-_ ]here|replace[-_ ]?me)",
    re.S,
)
TEMPLATE_START = (MARKER_PREFIX, "${", "{{", "$(", "<%", "{%")
CALL = lazy(r"[A-Za-z_$][\w$]{0,100}+(?:(?:\??\.|::)[A-Za-z_$][\w$]{0,100}+){0,20}+(?:[(\[]|!\()")
ATTR_CHAIN = lazy(r"[A-Za-z_$][\w$]{0,100}+(?:(?:\??\.|::)[A-Za-z_$][\w$]{0,100}+){1,20}+")
IDENT = lazy(r"[A-Za-z_][A-Za-z0-9_]{0,200}")
DIGIT_THEN_LOWER = lazy(r"[0-9][a-z]")
HUMPS = lazy(r"[A-Z][a-z]{2,}|[a-z]{3,}")  # a name's words: Private, Key, base
CODE_WORDS = frozenset(
    {
        "await",
        "new",
        "yield",
        "lambda",
        "not",
        "function",
        "async",
        "typeof",
        "self",
        "this",
        "cls",
        "return",
        "if",
        "else",
        "or",
        "and",
        "in",
        "is",
    }
)
STOPWORDS = frozenset(
    {
        "to",
        "the",
        "a",
        "an",
        "and",
        "or",
        "with",
        "when",
        "if",
        "for",
        "in",
        "on",
        "of",
        "is",
        "as",
        "flag",
        "option",
        "argument",
        "instead",
        "which",
        "that",
        "this",
        "it",
        "but",
        "not",
        "only",
        "here",
        "there",
        "so",
        "then",
        "was",
        "were",
        "are",
        "be",
        "by",
        "from",
        "at",
    }
)
VAR_NAMES = frozenset({"pw", "pwd", "tok", "key", "value", "val", "s", "x", "v"})
SEP = lazy(r"[ \t]*(=>|:=|===|==|=|:(?!:))[ \t]*")
BLANKS = lazy(r"[ \t]+")
SETTER = lazy(r"(?i:(?:set|with)?_?(?:password|passwd|passphrase))")
LAST_STRING_ARG = lazy(
    r"\((?:[ \t]*\\?[\"'][^\"'\n]{0,200}+\\?[\"'][ \t]*,){0,3}+[ \t]*(\\?[\"'])"
    r"((?:[^\"'\n\\]|\\[^\"'\n]){1,200}+)\1[ \t]*\)"
)
AUTH_PAIR = lazy(
    r"\([ \t]*(\\?[\"'])(?:[^\"'\n\\]|\\[^\"'\n]){0,200}+\1[ \t]*,[ \t]*(\\?[\"'])"
    r"((?:[^\"'\n\\]|\\[^\"'\n]){1,500}+)\2[ \t]*\)"
)  # (\" in JSON too)
PASSPHRASE_TAIL = lazy(r"(?:[ \t]+[A-Za-z0-9]{1,40}){1,8}(?=[ \t]*(?:$|\\[nr]|[\r\n]))")
ODBC_BRACED = lazy(r"\{([^{}\n\"':,]{1,200})\}(?=[;\s\"']|$)")
NETRC = lazy(r"(?<!\S)(?:machine|login|default)\s")
# An unquoted value: up to 4096 characters without whitespace or quotes, cut before its first
# \n, \r or \t escape (or a lone backslash at its end): esc_cut(_UNQUOTED match) in one step.
UNQUOTED_VALUE = lazy(r"[^\s\"'`\\]*+(?:\\[^\s\"'`nrt][^\s\"'`\\]*+)*+")
CUT = lazy(r"[;&][A-Za-z_][\w.-]{0,100}=")
DEFAULT = lazy(r"[^\n=]{0,200}?(?<![=!<>])=(?!=)[ \t]*")
BLOCK = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
STR_PREFIX = lazy(r"[rRbBuUfF]{1,2}(?=[\"'])")
STR_PREFIX_CHARS = frozenset("rRbBuUfF")
TRAIL = ".,;:)]}>"


_VENDOR_FAMILIES = {"twilio": "twilio-key", "sendgrid": "sendgrid-key", "mailgun": "mailgun-key"}
_VENDOR_KEY_NAMES = tuple(_VENDOR_FAMILIES)


def _vendor_family(seg: str) -> str:
    return next(f for v, f in _VENDOR_FAMILIES.items() if seg.startswith(v))


def placeholder(value: str) -> bool:
    return _short_placeholder(value) if len(value) <= 64 else _is_placeholder(value)


def _is_placeholder(value: str) -> bool:
    return value.lower() in _NON_SECRET_VALUES or _PLACEHOLDER.fullmatch(value) is not None


_short_placeholder = functools.lru_cache(maxsize=4096)(_is_placeholder)


@functools.lru_cache(maxsize=4096)
def classify(key: str) -> str | None:
    """Family for a secret-looking key name, or None when the name is not a secret's."""
    if "." in key and key.rsplit(".", 1)[1].lower() in _SOURCE_EXTENSIONS:
        return None
    segs = [s.lower() for s in SEG.findall(key)]
    idx = -1
    for pos, seg in enumerate(segs):
        if (
            seg in _STRONG
            or seg.endswith(_STRONG_SUFFIX)
            or (seg.startswith(_STRONG_PREFIX) and not seg.startswith("secretar"))
            or (seg.endswith("pass") and seg[:-4] in _PASS_OWNERS)
        ):
            idx = pos
            break
        if seg in _KEY_PAIRS and pos + 1 < len(segs) and segs[pos + 1] in ("key", "secret"):
            idx = pos + 1
            break
        if seg == "shared" and segs[pos + 1 : pos + 3] == ["access", "key"]:
            idx = pos + 2
            break
        if seg == "dsn" and any(x.startswith("sentry") for x in segs[:pos]):
            idx = pos
            break
    if idx < 0:
        return None
    last = max(
        [idx]
        + [
            i
            for i in range(idx + 1, len(segs))
            if segs[i] in _STRONG or segs[i].endswith(_STRONG_SUFFIX)
        ]
    )
    if (
        segs[last : last + 2] != ["secret", "id"]
        and any(  # (Vault's secret_id is one)
            s in _NOT_SECRET_AFTER for s in segs[last + 1 :]
        )
    ):
        return None  # AUTH_DOMAIN, but AUTH_USER_PASSWORD
    if any(s in _NOT_SECRET_BEFORE for s in segs[:idx]):
        return None
    if segs[last] == "token" and last and segs[last - 1] in ("page", "next", "continuation"):
        return None  # nextPageToken: pagination
    joined = "".join(segs)
    if segs[idx] == "dsn":
        return "sentry-dsn"
    if joined.endswith(("accountkey", "sharedaccesskey")):
        return "azure-storage-key"
    if "cf" in segs or any(s.startswith("cloudflare") for s in segs):
        return "cloudflare-token"
    for seg in segs:
        if seg.startswith(_VENDOR_KEY_NAMES):  # TWILIO_AUTH_TOKEN, SENDGRID_API_KEY
            return _vendor_family(seg)
    if "secretaccesskey" in joined:
        return "aws-secret-key"
    for seg in (segs[idx], segs[last]):
        if seg.endswith("pass") or seg.startswith(_PASSWORD_WORDS) or seg.endswith(_PASSWORD_WORDS):
            return "password"
    return "generic-secret"


def key_hit_ok(text: str, hit: int) -> bool:
    """A "key" hit counts only after a word that makes it a secret's name (api key, ...)."""
    return text[max(0, hit - 14) : hit].lower().rstrip("_- ").endswith(_KEY_WORDS_BEFORE_KEY)


# A hit whose word goes on into another word ("tokens", "passed", "author") cannot make its key
# a secret's name: skipping it loses nothing, since every word that can (password, apikey,
# credentials, ...) holds a needle of its own, and any hit in a key finds the same key.
_WORD_TAIL = lazy(r"[a-z]+")
_UPPER_TAIL = lazy(r"[A-Z]+")


@functools.lru_cache(maxsize=1024)
def _weak_word(word: str) -> bool:
    return not (
        word in _STRONG
        or word.endswith(_STRONG_SUFFIX)
        or (word.startswith(_STRONG_PREFIX) and not word.startswith("secretar"))
        or word.startswith("authorization")
    )  # (see named._authorization)


def _weak_hit(text: str, hit: int, size: int, tails: TailRuns | None = None) -> bool:
    needle_end = hit + size
    next_char = text[needle_end : needle_end + 1]
    if "a" <= next_char <= "z":
        word = text[hit:needle_end]
        if word.islower() or (word[0].isupper() and word[1:].islower()):
            return _weak_word(
                word.lower()
                + _tail(text, needle_end, _tail_end(text, needle_end, _WORD_TAIL, tails))
            )
    elif "A" <= next_char <= "Z":  # TOKENS; TOKENSecret is TOKEN + Secret
        word = text[hit:needle_end]
        if word.isupper():
            end = _tail_end(text, needle_end, _UPPER_TAIL, tails)
            if "a" <= text[end : end + 1] <= "z":
                end -= 1
            return end > needle_end and _weak_word((word + _tail(text, needle_end, end)).lower())
    return False


def _tail_end(text: str, pos: int, run: LazyPattern, tails: TailRuns | None) -> int:
    """Where ``run``'s letters from ``pos`` end. ``tails`` keeps the last run of each kind: the
    hits inside one long run share it (else "tokentoken..." would be rescanned from each)."""
    if tails is not None:
        last = tails.get(run)
        if last is not None and last[0] <= pos < last[1]:
            return last[1]
    end = run.match(text, pos).end()
    if tails is not None:
        tails[run] = (pos, end)
    return end


def _tail(text: str, start: int, end: int) -> str:
    """``text[start:end]`` for _weak_word, a long one by its ends only: _weak_word reads no more than
    a word's first 19 and last 10 characters, and "\\0" keeps it out of _STRONG."""
    return (
        text[start:end]
        if end - start <= 32
        else text[start : start + 16] + "\0" + text[end - 16 : end]
    )


STRONG_RUN: dict[str, bool] = {}  # run of letters: strong (emptied at 4096 runs)


def strong_hit(text: str, hit: int, run_end: int, size: int, tails: TailRuns) -> bool:
    """``not _weak_hit(text, hit, size)`` for a hit whose letters end at ``run_end``."""
    if run_end - hit - size == RUN_MAX and text[run_end : run_end + 1] in LETTERS:
        return not _weak_hit(text, hit, size, tails)
    run = text[hit:run_end]
    if len(STRONG_RUN) >= 4096:
        STRONG_RUN.clear()
    strong = STRONG_RUN[run] = not _weak_hit(run, 0, size)
    return strong


@functools.lru_cache(maxsize=4096)
def key_family(bare: str) -> str | None:
    """classify, except for Authorization (handled by named._authorization)."""
    return None if bare.lower().endswith("authorization") else classify(bare)
