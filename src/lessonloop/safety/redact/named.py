"""Secrets under secret-looking names (``password: x``, ``"api_key": "x"``, ``--token x``, a CSV
column, an Authorization header): the key needles' hits become names, and for each name the
value assigned to it is found (quoted, unquoted, after a space, in prose, in a YAML block, as
a call's argument or a named field's value) or judged to be no value (code, a type, prose).
"""

from __future__ import annotations

import re

from ...lazyre import lazy
from .entropy import looks_random
from .families import MARKER_PREFIX, PRIO, Span
from .lexicon import (
    AFTER_KEY,
    ATTR_CHAIN,
    AUTH_PAIR,
    BLOCK,
    CALL,
    CODE_WORDS,
    CUT,
    DEFAULT,
    DIGIT_THEN_LOWER,
    HAS_STRONG_WORD,
    HUMPS,
    IDENT,
    KEY_FWD,
    KEY_RUN,
    KEYCH,
    LAST_STRING_ARG,
    NAME_PATH,
    NETRC,
    ODBC_BRACED,
    PASCAL_TYPE,
    PASSPHRASE_TAIL,
    PATH_VALUE,
    SEP,
    SETTER,
    STOPWORDS,
    STR_PREFIX,
    STR_PREFIX_CHARS,
    STRONG_RUN,
    TEMPLATE_START,
    TRAIL,
    TYPE_START,
    TYPE_WORDS,
    UNQUOTED_VALUE,
    VAR_NAMES,
    WS,
    key_family,
    key_hit_ok,
    placeholder,
    strong_hit,
)
from .text import (
    ALNUM,
    KEY_NEEDLES,
    LETTERS,
    QUOTES,
    WORD,
    Scan,
    close_quote,
    esc_cut,
    has_digit,
    line_end,
    line_prefix_blank,
    logical_line_start,
    value_limit,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (hooks import this)
if TYPE_CHECKING:
    from .lexicon import TailRuns

# --------------------------------------------------------------------------------------------
# Authorization headers (Bearer, Basic and curl -u in free text, signed URLs: shaped.schemes)

_AUTHZ = lazy(
    r"authorization(?:\\?[\"'])?+\]?[ \t]*(?:=>|:=|=|:)[ \t]*(?:[rbuf]{0,2}(\\?[\"'`]))?", re.I
)
_SCHEME = lazy(r"([A-Za-z][A-Za-z0-9_-]{0,30})[ \t]+(?=\S)")
_ONE_TOKEN_SCHEMES = {
    "bearer",
    "basic",
    "token",
    "bot",
    "apikey",
    "key",
    "jwt",
    "dpop",
    "sso-key",
    "geniekey",
    "splunk",
    "otp",
}
_MULTI_SCHEMES = {
    "digest",
    "negotiate",
    "ntlm",
    "aws4-hmac-sha256",
    "hoba",
    "mutual",
    "vapid",
    "hmac",
    "signature",
    "oauth",
    "kerberos",
}
_CRED = lazy(r"[^\s\"'`,;]{1,8192}+")


def _authorization(text: str, h: int, out: list[Span]) -> None:
    """The credential of an ``Authorization`` header/field whose name starts at ``h``."""
    if h and text[h - 1] in LETTERS:
        return
    m = _AUTHZ.match(text, h)
    if not m:
        return
    j, quote = m.end(), m.group(1)
    end = close_quote(text, j, quote) if quote else line_end(text, j)
    sm = _SCHEME.match(text, j, end)
    scheme = sm.group(1).lower() if sm else ""
    if scheme in _ONE_TOKEN_SCHEMES:
        cm = _CRED.match(text, sm.end(), end)
        v = esc_cut(cm.group()) if cm else ""
        if (
            v
            and not placeholder(v)
            and not v.startswith(TEMPLATE_START)
            and not v.lower().startswith(("realm=", "charset=", "error="))
        ):  # challenges
            family = {"bearer": "bearer-token", "basic": "basic-auth"}.get(
                scheme, "authorization-header"
            )
            out.append((cm.start(), cm.start() + len(v), PRIO[family]))
    elif scheme in _MULTI_SCHEMES:
        if not quote:
            end = value_limit(text, j)
        s, e = sm.end(), len(text[:end].rstrip())
        if e > s and not placeholder(text[s:e]):
            out.append((s, e, PRIO["authorization-header"]))
    else:
        cm = _CRED.match(text, j, end)
        if sm and cm and cm.end() == sm.end(1):  # a scheme of its own: SSWS <token>
            cm = _CRED.match(text, sm.end(), end)
            quote = ""  # (then the token must look like one)
        v = esc_cut(cm.group()) if cm else ""
        if v and not placeholder(v) and v.lower() not in _ONE_TOKEN_SCHEMES:  # "Bearer " + t
            if quote or (len(v) >= 8 and has_digit(v)):
                out.append((cm.start(), cm.start() + len(v), PRIO["authorization-header"]))


def _value_span(text: str, ks: int, ke: int, key: str, family: str) -> tuple[int, int] | None:
    """Span of the value assigned to the key ``text[ks:ke]``, or None when there is none: where
    it starts and after which separator (_value_start), then what it is (_value_at)."""
    start = _value_start(text, ks, ke, key, family)
    if start is None or len(start) == 2:  # no value, or found on the way
        return start
    sep, j, spaced, quoted_key = start
    return _value_at(text, ks, j, key, family, sep, spaced, quoted_key)


def _value_start(
    text: str, ks: int, ke: int, key: str, family: str
) -> tuple[str, int, bool, bool] | tuple[int, int] | None:
    """After the key ``text[ks:ke]``: its separator, where its value starts, whether the
    separator has spaces around it and whether the key is quoted; or, for the forms read whole
    on the way (a call's argument, an XML element, prose, SQL), the value's span or None."""
    i = ke
    q = text[ks - 1] if ks else ""
    quoted_key = False
    if q and q in QUOTES:  # "password": ... / os.environ["TOKEN"] = ...
        if text.startswith(q, i):
            i, quoted_key = i + 1, True
        elif ks >= 2 and text[ks - 2] == "\\" and text.startswith("\\" + q, i):
            i, quoted_key = i + 2, True
        if quoted_key and text.startswith("]", i):
            i += 1
    elif q == "<" and text.startswith(">", i):  # <password>x</password>
        end = text.find("<", i + 1, line_end(text, i))
        if end > i + 1 and not placeholder(text[i + 1 : end].strip()):
            return (i + 1, end)
        return None
    if text.startswith(("**", "__"), i):  # **Password:** hunter2
        i += 2
    if text.startswith("(", i):  # HTTPBasicAuth("user", "pass")
        if key.lower().endswith(
            ("auth", "credential", "credentials")
        ):  # PlainCredentials("u", "p")
            tm = AUTH_PAIR.match(text, i)
            return tm.span(3) if tm and not placeholder(tm.group(3)) else None
        am = LAST_STRING_ARG.match(text, i) if SETTER.fullmatch(key.rsplit(".", 1)[-1]) else None
        if am and " " in am.group(2):
            return None  # questionary.password("Enter it:")
        return am.span(2) if am and not placeholder(am.group(2)) else None  # setPassword("x"),
        #                                                             keyring.set_password(s, u, "x")
    named = None if _PLAIN_ASSIGNMENT.match(text, i) else _named_value(text, ks, ke, i)
    m = None if named is not None else SEP.match(text, i)
    if named is not None and text[named - 1] == ">":  # <entry key="password">x</entry>
        span = _prose_span(text, named)  # (one word that reads as a secret)
        if span is None:
            return None
        lt = text.find("<", span[0], span[1])
        return (span[0], lt) if lt > span[0] else span if lt == -1 else None
    if named is not None:  # {"name": "DB_PASSWORD", "value": "x"}
        sep, j, spaced = "=", named, False
    elif family == "password" and (q := _SQL_QUOTED.match(text, i)) is not None:
        return quoted_span(text, q.end()) or None  # ALTER USER u WITH PASSWORD 'x'
    elif m:
        sep, j = m.group(1), m.end()
        spaced = text[i] in " \t" and text[j - 1] in " \t"
        if text.startswith(("**", "__"), j) and text[j + 2 : j + 3] in (" ", "\t"):
            j = WS.match(text, j + 2).end()
    elif (
        key.lower() in ("password", "passwd")
        and WS.match(text, i)
        and NETRC.search(text, logical_line_start(text, ks, 256), ks)
    ):
        m = WS.match(text, i)  # .netrc: machine h login u password p
        sep, j, spaced = " ", m.end(), False
    elif key.startswith("-"):  # --password hunter2
        m = WS.match(text, i)
        if not m:
            return None
        sep, j, spaced = " ", m.end(), False
    elif (m := _PROSE_IS.match(text, i)) is not None:  # "the db password is hunter2",
        return _prose_span(text, m.end())  # "set the password to X"
    elif not key.endswith(".") and (m := WS.match(text, i)) is not None:
        return _spaced_span(text, m.end(), family, key)  # "password   X", "aws_secret_access_key K"
    else:
        return None
    return sep, j, spaced, quoted_key


def _value_at(
    text: str, ks: int, j: int, key: str, family: str, sep: str, spaced: bool, quoted_key: bool
) -> tuple[int, int] | None:
    """The span of the value that starts at ``j`` after the key at ``ks`` and its separator
    ``sep``: quoted, a structure's credential, or unquoted (_unquoted_value)."""
    n = len(text)
    if j >= n:
        return None
    q = text[ks - 1] if ks else ""
    if (
        q in QUOTES
        and q
        and not quoted_key
        and (
            text.startswith(q, j)
            or (text.startswith("\\" + q, j) and text[ks - 2 : ks - 1] == "\\")
        )
    ):
        return None  # input("Password: "): a prompt's text
    if text[j] in QUOTES and text[j + 1 : j + 2] in ("", ")", ",", "]", ";", "}", "+", ".", "\n"):
        return None  # ask("the admin password:"): it closes
    quoted = quoted_span(text, j)
    if quoted is not None:
        if quoted and family == "generic-secret" and short_word(text[quoted[0] : quoted[1]], key):
            return None  # {"token": "Hello", "logprob": -0.3}
        return quoted or None
    c = text[j]
    if c in "{[(":
        tm = AUTH_PAIR.match(text, j) if c == "(" else None
        if tm and not placeholder(tm.group(3)):  # auth=("user", "pass")
            return tm.span(3)
        bm = ODBC_BRACED.match(text, j) if c == "{" else None
        if bm and not placeholder(bm.group()):  # ODBC: PWD={p;w};
            return bm.span(1)
        return None  # a structure: its own keys speak for it
    return _unquoted_value(text, ks, j, key, family, sep, spaced, quoted_key)


def _unquoted_value(
    text: str, ks: int, j: int, key: str, family: str, sep: str, spaced: bool, quoted_key: bool
) -> tuple[int, int] | None:
    """The span of an unquoted value at ``j``, or None when it reads as no secret: a template,
    prose, a type, a variable, code, a path, a count."""
    n = len(text)
    raw = UNQUOTED_VALUE.match(text, j, j + 4096).group()
    if not raw:
        return None
    rend = j + len(raw)
    if raw.startswith(TEMPLATE_START) or placeholder(raw):
        return None  # ${{ secrets.X }}, {{ .Values.x }}, $(cmd)
    if (
        sep == ":"
        and raw.isalpha()
        and raw.islower()
        and key.replace(" ", "").isalpha()
        and not quoted_key
        and text[rend : rend + 1] == " "
        and text[rend + 1 : rend + 2].isalpha()
        and (family != "password" or not line_prefix_blank(text, ks))
    ):
        return None  # prose: "invalid token: expected string"
    if (
        sep == ":"
        and raw[0] == "&"
        and (raw == "&" or raw.startswith(("&mut", "&'")) or TYPE_START.match(raw, 1))
    ):
        return None  # Rust: password: &str, &'a str, &mut
    if sep == ":" and raw in BLOCK:  # YAML block scalar: the indented lines
        return _yaml_block(text, ks, rend)
    if (
        sep == ":"
        and TYPE_START.match(raw)
        and (
            raw.lower().rstrip(",;:=)") in TYPE_WORDS
            or not raw[0].islower()
            or "[" in raw
            or "|" in raw
        )
    ):
        # token: str = "abc"  -> the default (not from the next line of JSON text). The "=" of a
        # DEFAULT match is the first one, and no \n or \r escape ends after it.
        eq = text.find("=", rend, rend + 201)
        if eq == -1 or "\\n" in text[rend:eq] or "\\r" in text[rend:eq]:
            return None
        dm = DEFAULT.match(text, rend)
        if not dm or dm.end() >= n:
            return None
        return _default_span(text, dm.end())
    if sep == " " and (raw[0] in "-<>|&;" or raw.lower() in STOPWORDS):  # (< a redirect)
        return None
    if family == "generic-secret" and (short_word(raw, key) or _YAML_TAG.fullmatch(raw)):
        return None  # auth: ldap, api_key: !ENV ${API_KEY}
    return _plain_value(text, ks, j, raw, key, family, sep, spaced)


def _plain_value(
    text: str, ks: int, j: int, raw: str, key: str, family: str, sep: str, spaced: bool
) -> tuple[int, int] | None:
    """The span of the unquoted value ``raw`` at ``j`` once it reads as one (_unquoted_value):
    cut where a next parameter starts, without trailing punctuation, and not code, a variable,
    a working directory, a count, a path or a type; a password runs on over its words."""
    v = raw
    if ";" in v or "&" in v:
        cm = CUT.search(v)
        if cm:
            v = v[: cm.start()]  # Password=x;Database=y  /  ?token=x&user=y
    stripped = v.rstrip(TRAIL)
    trailing, v = v[len(stripped) :], stripped
    if not v or (v != raw and placeholder(v)) or v.lower() in CODE_WORDS:
        return None
    if CALL.match(raw) or ATTR_CHAIN.fullmatch(v.rstrip("!")) and _code_name(v.rstrip("!")):
        return None  # get_password(), os.environ[...], cfg.pw
    if IDENT.fullmatch(v) and (spaced or trailing[:1] in (",", ")")) and _variable_name(v):
        lv = v.lower()
        if (
            "_" in v
            or lv == key.lower().strip("-")
            or lv in VAR_NAMES
            or HAS_STRONG_WORD.search(lv)
        ):
            return None  # password = password: a variable
    if key.lower().strip("-") in ("pwd", "oldpwd") and v[:1] in ("/", "~", "."):
        return None  # the shell's working directory
    if key.lower() == "pass" and v.isdigit():
        return None  # "pass: 3  fail: 1" is a count
    if family != "password":
        if len(v) <= 6 and v.replace(":", "").isdigit():
            return None  # a count, a line number (auth.go:88)
        if PATH_VALUE.fullmatch(v) and not looks_random(v) or NAME_PATH.fullmatch(v):
            return None  # ..._CREDENTIALS=/home/me/sa.json
        if sep == ":" and PASCAL_TYPE.fullmatch(v) and trailing[:1] in (";", ",", ")", "|"):
            return None  # token: AccessToken;  (a type)
    end = j + len(v)
    if family == "password" and sep == ":" and line_prefix_blank(text, ks):
        end = len(text[: value_limit(text, j)].rstrip())  # "password: correct horse battery"
    elif (
        family == "password"
        and sep == "="
        and (words := PASSPHRASE_TAIL.match(text, end, value_limit(text, j)))
        and (line_prefix_blank(text, ks) or text[:ks].rstrip().endswith("export"))
    ):
        end = words.end()  # .env/INI: DB_PASSWORD=open sesame 42
    return (j, end)


# A secret's name given where its value follows: as a name field's value, as the first argument
# of a call that takes a name and a value, or as an environment variable with a fallback.
_NAMED_FORMS = tuple(
    (lazy(before + r"\\?[\"']?[\w/.-]{0,60}\Z"), lazy(value))
    for before, value in (
        (
            r"\b(?i:name|key|variable)\\?[\"']?[ \t]*[:=]?[ \t]*",  # {"name": "X", "value": "v"}
            r"\\?[\"']?(?:[ \t]*+,[ \t]*+\\?\"\w{1,20}\\?\"[ \t]*+:[ \t]*+\\?\"[^\"\\]{0,40}+\\?\")?"  # ("Type": "x")
            r"[ \t]*+[,;{]?(?:\s|\\[nrt]){0,40}+\\?[\"']?(?i:value|default)\\?[\"']?[ \t]*[:=][ \t]*",
        ),
        (
            r"[\"']",  # terraform output -json
            r"\\?[\"']?[ \t]*:[ \t]*\{[^{}\n]{0,80}?\\?[\"']value\\?[\"'][ \t]*:[ \t]*",
        ),
        (
            r"\b(?:get|getenv|setdefault|[Ss]et|[Aa]dd|setRequestProperty|setHeader|header|put|"
            r"getProperty|getOrDefault|setProperty|[Ss]etenv|putenv|define)\([ \t]*",  # getenv("X", "v"),
            #                                                            PHP's define('DB_PASSWORD', 'v')
            r"\\?[\"']?[ \t]*,[ \t]*(?=\\?[\"'])",
        ),
        (r"\benv\.", r"[ \t]*(?:\|\||\?\?)[ \t]*(?=\\?[\"'])"),  # process.env.X || "v"
        (
            r"<\w[\w.:-]{0,40}[ \t]+(?i:name|key)=\\?[\"']",
            r"(?:\\?[\"'])?[ \t]*>",
        ),  # <entry key="X">v</
    )
)


# KEY=..., "key": ... (most keys): no named form, unless a nested {"value": ...} follows.
_PLAIN_ASSIGNMENT = lazy(r"\\?[\"']?[ \t]*+[=:](?![ \t]*+\{)")


def _named_value(text: str, ks: int, ke: int, i: int) -> int | None:
    """Where the value of the name ``text[ks:ke]`` (its value may follow from ``i``) starts in
    one of _NAMED_FORMS, or None."""
    for before, value in _NAMED_FORMS:  # (the value's lead first: it seldom matches)
        m = value.match(text, i)
        if m and before.search(text, max(0, ks - 80), ke):
            return m.end()
    return None


_SQL_QUOTED = lazy(r"[ \t]+(?=')")  # SQL: PASSWORD 'x'
_PROSE_IS = lazy(
    r"(?:[ \t]+(?:for|of|on)(?:[ \t]+[\w.@-]{1,40}){1,4}?(?=[ \t]+(?:is|was)[ \t]))?"
    r"[ \t]+(?:(?:is|was)[ \t]+(?:set[ \t]+to[ \t]+|now[ \t]+)?|to[ \t]+)"
)
_PROSE_VALUE = lazy(r"(\\?[\"'`])?([^\s\"'`\\]{6,256}+)")
_VERSION = lazy(
    r"v?\d+(?:\.\d+)+[\w.+-]*|\d+(?:st|nd|rd|th)"  # auth v2.1.0,
    r"|[a-z0-9]+-[a-z]+(?:ed|ing)"  # base64-encoded,
    r"|(?i:sha\d{1,3}|md5|bcrypt|argon2\w{0,2}|scrypt|pbkdf2\w{0,12})"
)  # sha256


_HEX_KEY = lazy(
    r"(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{20,128}|"  # an API key in
    r"(?=[0-9A-F]*[A-F])(?=[0-9A-F]*[0-9])[0-9A-F]{20,128}|"  # hex, or a UUID
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)


_YAML_TAG = lazy(r"![A-Za-z_]{1,30}")


def _code_name(v: str) -> bool:
    """Whether ``v``, an identifier or a dotted chain of them, is shaped like names in code
    (``settings.db_password``, ``cfg.pw``, ``s3.Client``), not like a secret that happens to
    fit the same characters (``m4ple.Syrup42``, Vault's ``s.PbLtvfkymKhbtWQ4UO3XCoNq``): no
    digit runs on into lower case letters, and no part of 12 characters or more looks random."""
    if DIGIT_THEN_LOWER.search(v.split(".", 1)[0]):
        return False  # (self.oauth2token, ctx.k8sClient stay)
    return not any(
        len(part) >= 12
        and has_digit(part)
        and looks_random(part)
        and sum(map(len, HUMPS.findall(part))) <= len(part) / 2  # (Ed25519PrivateKey)
        for part in v.split(".")
    )


def _variable_name(v: str) -> bool:
    """An identifier in one case style (``user_password``, ``DB_PASS``, ``dbPassword``) rather
    than a password with an underscore in it (``dragonFly_88``, ``Summer_2024``)."""
    core = v.strip("_")  # (_private, __dunder__)
    return _code_name(v) and (
        "_" not in core or core.islower() or core.isupper() or not core.rsplit("_", 1)[1].isdigit()
    )  # (DB_PASSWORD_v2)


def short_word(v: str, key: str) -> bool:
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
    if span is None or "=" in text[span[0] : span[1]]:
        return None  # (another assignment: request_id=...)
    v = text[span[0] : span[1]]
    return span if family == "password" or looks_random(v) or _HEX_KEY.fullmatch(v) else None


def _prose_span(text: str, j: int) -> tuple[int, int] | None:
    """The value in "… password is X": X when it reads as a secret, not as a word: six
    characters or more with a digit or with the case changing three times or more ("is
    incorrect", "is JWT-based" stay), and not code or a placeholder."""
    m = _PROSE_VALUE.match(text, j)
    if not m:
        return None
    value = m.group(2).rstrip(TRAIL)
    letters = [c.isupper() for c in value if c.isalpha()]
    case_changes = sum(a != b for a, b in zip(letters, letters[1:]))
    if (
        len(value) < 6
        or not (has_digit(value) or case_changes >= 3)
        or _VERSION.fullmatch(value)
        or value.startswith(TEMPLATE_START)
        or placeholder(value)
        or CALL.match(value)
        or ATTR_CHAIN.fullmatch(value)
        and _code_name(value)
    ):
        return None
    return (m.start(2), m.start(2) + len(value))


def quoted_span(text: str, j: int) -> tuple[int, int] | tuple[()] | None:
    """For a string starting at ``j`` (quote, JSON-escaped quote, or Python's ``r"``/``b'``/
    ``f"`` prefixes and a quote): the span of its value, or ``()`` when that value is empty or
    a placeholder; None when no string starts there."""
    if text[j] in STR_PREFIX_CHARS:
        pm = STR_PREFIX.match(text, j)
        if pm:
            j = pm.end()
    c = text[j]
    if not (c in QUOTES or (c == "\\" and text[j + 1 : j + 2] in ('"', "'"))):
        return None
    quote = text[j : j + 2] if c == "\\" else c
    start = j + len(quote)
    end = close_quote(text, start, quote)
    v = text[start:end]
    return (start, end) if v and not placeholder(v) else ()


def _default_span(text: str, j: int) -> tuple[int, int] | None:
    """The default value after a type annotation (``token: str = "abc"``)."""
    quoted = quoted_span(text, j)
    if quoted is not None:
        return quoted or None
    raw = UNQUOTED_VALUE.match(text, j, j + 4096).group()
    v = raw.rstrip(TRAIL)
    if not v or placeholder(v) or CALL.match(raw) or ATTR_CHAIN.fullmatch(v) or IDENT.fullmatch(v):
        return None
    return (j, j + len(v))


def _yaml_block(text: str, ks: int, after: int) -> tuple[int, int] | None:
    """The lines of a YAML block scalar (``password: |``): those indented past the key."""
    indent = ks - (text.rfind("\n", 0, ks) + 1)
    pos = line_end(text, after) + 1
    first, last, n = pos, None, len(text)
    while pos < n:
        le = line_end(text, pos)
        line = text[pos:le]
        body = line.lstrip(" \t")
        if body and len(line) - len(body) <= indent:
            break
        if body:
            last = le
        pos = le + 1
    return None if last is None else (first, last)


_B64CH = ALNUM | {"+", "/", "_", "-"}


def _in_random_run(text: str, ks: int, ke: int) -> bool:
    """Whether the key ``text[ks:ke]`` is part of a random base64 run (a digest, a blob)."""
    i, lim = ks, max(0, ks - 200)
    while i > lim and text[i - 1] in _B64CH:
        i -= 1
    run = text[i:ke].rstrip("=")
    return len(run) >= 24 and looks_random(run)


_PATHCH = WORD | {".", "-", "/", "~", "@", "+"}


def _file_path_before(text: str, ks: int, ke: int) -> bool:
    """Whether the name ``text[ks:ke]`` ends a file path (PATH_VALUE: ``/etc/passwd``,
    ``~/.config/token``): before a colon, an error line's file, not a key. (``/pass:x`` alone, as Windows' cmdkey
    takes it, stays a key, as do ``example.com/api-token`` and an SSM parameter's quoted
    ``"/prod/db_password"``.)"""
    i, lim = ks - 1, max(0, ks - 512)
    while i > lim and text[i - 1] in _PATHCH:
        i -= 1
    return PATH_VALUE.fullmatch(text, i, ke) is not None


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
        if value and not placeholder(value):
            s += len(fields[column]) - len(fields[column].lstrip())
            spans.append((s, s + len(value)))
    return spans, (first, le)


def generic(sc: Scan, out: list[Span]) -> None:
    text = sc.text
    hits = []
    tails: TailRuns  # (a declaration only: no code runs for it)
    strong_run, tails = STRONG_RUN.get, {}
    for needle in KEY_NEEDLES:
        size, api_key = len(needle), needle == b"key"
        for s, e in sc.key_runs(needle):
            h = s - size
            strong = strong_run(text[h:e])
            if strong is None:
                strong = strong_hit(text, h, e, size, tails)
            if strong and (not api_key or key_hit_ok(text, h)):
                hits.append((h, e))
    if not hits:
        return
    hits.sort()
    low = sc.low
    authorization = "authorization" if low.__class__ is str else b"authorization"
    n = len(text)
    done, rows = -1, (0, 0)
    for h, e in hits:
        if h < done:
            continue
        # (the key goes on past the letters after its needle, or they were too many to count)
        ke = KEY_FWD.match(text, h).end() if text[e : e + 1] in KEYCH else e
        done = ke
        if ke >= n or text[ke] not in AFTER_KEY and text[ke] not in "\r\n,(":
            continue  # no separator: prose, or a 200+ char run
        if low.startswith(authorization, h):
            _authorization(text, h, out)
        if h and text[h - 1] in KEYCH:
            ks = h - KEY_RUN.match(text[max(0, h - 48) : h][::-1]).end()  # the key's start
        else:
            ks = h
        if h - ks == 48:
            lim = max(0, h - 200)
            while ks > lim and text[ks - 1] in KEYCH:
                ks -= 1
            if ks == lim and ks and text[ks - 1] in KEYCH:
                continue  # no real key is 200 characters long
        if (
            ks < h
            and ks
            and text[ks - 1] == "\\"
            and text[ks] in "nrt"
            and not (ks > 1 and text[ks - 2] == "\\")
        ):
            ks += 1  # "\napi_key=..." in JSON: not "napi_key"
        if ks >= 10 and text.startswith(MARKER_PREFIX, ks - 10):
            continue  # a family name inside a marker
        if ke - ks == 3 and ks >= 2 and text[ks - 1] == " " and text[ks - 2] in LETTERS:
            w = ks - 1  # "API key: ...", "Secret key = ..."
            while w > 0 and ks - w < 16 and text[w - 1] in LETTERS:
                w -= 1
            ks = w
        key = text[ks:ke]
        family = key_family(key.strip(".-"))
        if family is None:
            continue
        if (text[ke] in "\r\n," or (ks and text[ks - 1] == ",")) and not (
            rows[0] <= ks < rows[1]
        ):  # (a table's rows are no headers)
            column, rows = _csv_column(text, ks, ke)  # user,password \n app,hunter2
            if column:
                out.extend((s, e, PRIO[family]) for s, e in column)
                continue
            if text[ke] in "\r\n," and _named_value(text, ks, ke, ke) is None:
                continue  # "- name: DB_PASSWORD\n  value: x" goes on
        if text[ke] in " \t" and not key.startswith("-"):
            j = WS.match(text, ke).end()
            c = text[j : j + 1]
            if (
                c != "="
                and c != ":"
                and key.lower() not in ("password", "passwd")
                and not _PROSE_IS.match(text, ke)
                and not _spaced_span(text, j, family, key)
                and not (
                    text.startswith(("||", "??"), j)  # process.env.KEY || "x"
                    and _named_value(text, ks, ke, ke) is not None
                )
            ):
                continue  # prose: "the token expired"
        if (ke - ks >= 24 or ks and text[ks - 1] in "+/") and _in_random_run(text, ks, ke):
            continue  # "Pwd" inside base64: no key name
        if text[ke] == ":" and ks and text[ks - 1] == "/" and _file_path_before(text, ks, ke):
            continue  # "grep: /etc/passwd: Permission denied"
        span = _value_span(text, ks, ke, key, family)
        if span and span[1] > span[0]:
            out.append((span[0], span[1], PRIO[family]))
            done = max(done, span[1])
