"""Secrets under secret-looking names (``password: x``, ``"api_key": "x"``, ``--token x``, a CSV
column, an Authorization header): the key needles' hits become names, and for each name the
value assigned to it is found (quoted, unquoted, after a space, in prose, in a YAML block, as
a call's argument or a named field's value) or judged to be no value (code, a type, prose).

Over 600 lines on purpose: the value forms are one decision read in order (each form's test
excludes the ones before it), and it runs on the hook path, where one more module costs an
import; the rule families themselves are data in ``families.py``.
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
    BLANKS,
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


def _authorization(text: str, hit: int, out: list[Span]) -> None:
    """The credential of an ``Authorization`` header/field whose name starts at ``hit``."""
    if hit and text[hit - 1] in LETTERS:
        return
    header = _AUTHZ.match(text, hit)
    if not header:
        return
    value_pos, quote = header.end(), header.group(1)
    end = close_quote(text, value_pos, quote) if quote else line_end(text, value_pos)
    scheme_match = _SCHEME.match(text, value_pos, end)
    scheme = scheme_match.group(1).lower() if scheme_match else ""
    if scheme in _ONE_TOKEN_SCHEMES:
        credential = _CRED.match(text, scheme_match.end(), end)
        value = esc_cut(credential.group()) if credential else ""
        if (
            value
            and not placeholder(value)
            and not value.startswith(TEMPLATE_START)
            and not value.lower().startswith(("realm=", "charset=", "error="))
        ):  # challenges
            family = {"bearer": "bearer-token", "basic": "basic-auth"}.get(
                scheme, "authorization-header"
            )
            out.append((credential.start(), credential.start() + len(value), PRIO[family]))
    elif scheme in _MULTI_SCHEMES:
        if not quote:
            end = value_limit(text, value_pos)
        cred_start, cred_end = scheme_match.end(), len(text[:end].rstrip())
        if cred_end > cred_start and not placeholder(text[cred_start:cred_end]):
            out.append((cred_start, cred_end, PRIO["authorization-header"]))
    else:
        credential = _CRED.match(text, value_pos, end)
        if (
            scheme_match and credential and credential.end() == scheme_match.end(1)
        ):  # a scheme of its own: SSWS <token>
            credential = _CRED.match(text, scheme_match.end(), end)
            quote = ""  # (then the token must look like one)
        value = esc_cut(credential.group()) if credential else ""
        if (
            value and not placeholder(value) and value.lower() not in _ONE_TOKEN_SCHEMES
        ):  # "Bearer " + t
            if quote or (len(value) >= 8 and has_digit(value)):
                out.append(
                    (
                        credential.start(),
                        credential.start() + len(value),
                        PRIO["authorization-header"],
                    )
                )


def _value_span(
    text: str, key_start: int, key_end: int, key: str, family: str
) -> tuple[int, int] | None:
    """Span of the value assigned to the key ``text[key_start:key_end]``, or None when there is none: where
    it starts and after which separator (_value_start), then what it is (_value_at)."""
    start = _value_start(text, key_start, key_end, key, family)
    if start is None or len(start) == 2:  # no value, or found on the way
        return start
    sep, value_pos, spaced, quoted_key = start
    return _value_at(text, key_start, value_pos, key, family, sep, spaced, quoted_key)


def _value_start(
    text: str, key_start: int, key_end: int, key: str, family: str
) -> tuple[str, int, bool, bool] | tuple[int, int] | None:
    """After the key ``text[key_start:key_end]``: its separator, where its value starts, whether the
    separator has spaces around it and whether the key is quoted; or, for the forms read whole
    on the way (a call's argument, an XML element, prose, SQL), the value's span or None."""
    pos = key_end
    quote = text[key_start - 1] if key_start else ""
    quoted_key = False
    if quote and quote in QUOTES:  # "password": ... / os.environ["TOKEN"] = ...
        if text.startswith(quote, pos):
            pos, quoted_key = pos + 1, True
        elif key_start >= 2 and text[key_start - 2] == "\\" and text.startswith("\\" + quote, pos):
            pos, quoted_key = pos + 2, True
        if quoted_key and text.startswith("]", pos):
            pos += 1
    elif quote == "<" and text.startswith(">", pos):  # <password>x</password>
        end = text.find("<", pos + 1, line_end(text, pos))
        if end > pos + 1 and not placeholder(text[pos + 1 : end].strip()):
            return (pos + 1, end)
        return None
    if text.startswith(("**", "__"), pos):  # **Password:** hunter2
        pos += 2
    if text.startswith("(", pos):  # HTTPBasicAuth("user", "pass")
        if key.lower().endswith(
            ("auth", "credential", "credentials")
        ):  # PlainCredentials("u", "p")
            pair_match = AUTH_PAIR.match(text, pos)
            return (
                pair_match.span(3) if pair_match and not placeholder(pair_match.group(3)) else None
            )
        arg_match = (
            LAST_STRING_ARG.match(text, pos) if SETTER.fullmatch(key.rsplit(".", 1)[-1]) else None
        )
        if arg_match and " " in arg_match.group(2):
            return None  # questionary.password("Enter it:")
        return (
            arg_match.span(2) if arg_match and not placeholder(arg_match.group(2)) else None
        )  # setPassword("x"),
        #                                                             keyring.set_password(s, u, "x")
    named = (
        None if _PLAIN_ASSIGNMENT.match(text, pos) else _named_value(text, key_start, key_end, pos)
    )
    sep_match = None if named is not None else SEP.match(text, pos)
    if named is not None and text[named - 1] == ">":  # <entry key="password">x</entry>
        span = _prose_span(text, named)  # (one word that reads as a secret)
        if span is None:
            return None
        tag_end = text.find("<", span[0], span[1])
        return (span[0], tag_end) if tag_end > span[0] else span if tag_end == -1 else None
    if named is not None:  # {"name": "DB_PASSWORD", "value": "x"}
        sep, value_pos, spaced = "=", named, False
    elif family == "password" and (sql_quote := _SQL_QUOTED.match(text, pos)) is not None:
        return quoted_span(text, sql_quote.end()) or None  # ALTER USER u WITH PASSWORD 'x'
    elif sep_match:
        sep, value_pos = sep_match.group(1), sep_match.end()
        spaced = text[pos] in " \t" and text[value_pos - 1] in " \t"
        if text.startswith(("**", "__"), value_pos) and text[value_pos + 2 : value_pos + 3] in (
            " ",
            "\t",
        ):
            value_pos = BLANKS.match(text, value_pos + 2).end()
    elif (
        key.lower() in ("password", "passwd")
        and BLANKS.match(text, pos)
        and NETRC.search(text, logical_line_start(text, key_start, 256), key_start)
    ):
        sep_match = BLANKS.match(text, pos)  # .netrc: machine h login u password p
        sep, value_pos, spaced = " ", sep_match.end(), False
    elif key.startswith("-"):  # --password hunter2
        sep_match = BLANKS.match(text, pos)
        if not sep_match:
            return None
        sep, value_pos, spaced = " ", sep_match.end(), False
    elif (sep_match := _PROSE_IS.match(text, pos)) is not None:  # "the db password is hunter2",
        return _prose_span(text, sep_match.end())  # "set the password to X"
    elif not key.endswith(".") and (sep_match := BLANKS.match(text, pos)) is not None:
        return _spaced_span(
            text, sep_match.end(), family, key
        )  # "password   X", "aws_secret_access_key K"
    else:
        return None
    return sep, value_pos, spaced, quoted_key


def _value_at(
    text: str,
    key_start: int,
    value_pos: int,
    key: str,
    family: str,
    sep: str,
    spaced: bool,
    quoted_key: bool,
) -> tuple[int, int] | None:
    """The span of the value that starts at ``value_pos`` after the key at ``key_start`` and its separator
    ``sep``: quoted, a structure's credential, or unquoted (_unquoted_value)."""
    text_len = len(text)
    if value_pos >= text_len:
        return None
    key_quote = text[key_start - 1] if key_start else ""
    if (
        key_quote in QUOTES
        and key_quote
        and not quoted_key
        and (
            text.startswith(key_quote, value_pos)
            or (
                text.startswith("\\" + key_quote, value_pos)
                and text[key_start - 2 : key_start - 1] == "\\"
            )
        )
    ):
        return None  # input("Password: "): a prompt's text
    if text[value_pos] in QUOTES and text[value_pos + 1 : value_pos + 2] in (
        "",
        ")",
        ",",
        "]",
        ";",
        "}",
        "+",
        ".",
        "\n",
    ):
        return None  # ask("the admin password:"): it closes
    quoted = quoted_span(text, value_pos)
    if quoted is not None:
        if quoted and family == "generic-secret" and short_word(text[quoted[0] : quoted[1]], key):
            return None  # {"token": "Hello", "logprob": -0.3}
        return quoted or None
    first = text[value_pos]
    if first in "{[(":
        pair_match = AUTH_PAIR.match(text, value_pos) if first == "(" else None
        if pair_match and not placeholder(pair_match.group(3)):  # auth=("user", "pass")
            return pair_match.span(3)
        braced = ODBC_BRACED.match(text, value_pos) if first == "{" else None
        if braced and not placeholder(braced.group()):  # ODBC: PWD={p;w};
            return braced.span(1)
        return None  # a structure: its own keys speak for it
    return _unquoted_value(text, key_start, value_pos, key, family, sep, spaced, quoted_key)


def _unquoted_value(
    text: str,
    key_start: int,
    value_pos: int,
    key: str,
    family: str,
    sep: str,
    spaced: bool,
    quoted_key: bool,
) -> tuple[int, int] | None:
    """The span of an unquoted value at ``value_pos``, or None when it reads as no secret: a template,
    prose, a type, a variable, code, a path, a count."""
    text_len = len(text)
    raw = UNQUOTED_VALUE.match(text, value_pos, value_pos + 4096).group()
    if not raw:
        return None
    rend = value_pos + len(raw)
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
        and (family != "password" or not line_prefix_blank(text, key_start))
    ):
        return None  # prose: "invalid token: expected string"
    if (
        sep == ":"
        and raw[0] == "&"
        and (raw == "&" or raw.startswith(("&mut", "&'")) or TYPE_START.match(raw, 1))
    ):
        return None  # Rust: password: &str, &'a str, &mut
    if sep == ":" and raw in BLOCK:  # YAML block scalar: the indented lines
        return _yaml_block(text, key_start, rend)
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
        equals_at = text.find("=", rend, rend + 201)
        if equals_at == -1 or "\\n" in text[rend:equals_at] or "\\r" in text[rend:equals_at]:
            return None
        default_match = DEFAULT.match(text, rend)
        if not default_match or default_match.end() >= text_len:
            return None
        return _default_span(text, default_match.end())
    if sep == " " and (raw[0] in "-<>|&;" or raw.lower() in STOPWORDS):  # (< a redirect)
        return None
    if family == "generic-secret" and (short_word(raw, key) or _YAML_TAG.fullmatch(raw)):
        return None  # auth: ldap, api_key: !ENV ${API_KEY}
    return _plain_value(text, key_start, value_pos, raw, key, family, sep, spaced)


def _plain_value(
    text: str,
    key_start: int,
    value_pos: int,
    raw: str,
    key: str,
    family: str,
    sep: str,
    spaced: bool,
) -> tuple[int, int] | None:
    """The span of the unquoted value ``raw`` at ``value_pos`` once it reads as one (_unquoted_value):
    cut where a next parameter starts, without trailing punctuation, and not code, a variable,
    a working directory, a count, a path or a type; a password runs on over its words."""
    value = raw
    if ";" in value or "&" in value:
        cut = CUT.search(value)
        if cut:
            value = value[: cut.start()]  # Password=x;Database=y  /  ?token=x&user=y
    stripped = value.rstrip(TRAIL)
    trailing, value = value[len(stripped) :], stripped
    if not value or (value != raw and placeholder(value)) or value.lower() in CODE_WORDS:
        return None
    if CALL.match(raw) or ATTR_CHAIN.fullmatch(value.rstrip("!")) and _code_name(value.rstrip("!")):
        return None  # get_password(), os.environ[...], cfg.pw
    if IDENT.fullmatch(value) and (spaced or trailing[:1] in (",", ")")) and _variable_name(value):
        lowered = value.lower()
        if (
            "_" in value
            or lowered == key.lower().strip("-")
            or lowered in VAR_NAMES
            or HAS_STRONG_WORD.search(lowered)
        ):
            return None  # password = password: a variable
    if key.lower().strip("-") in ("pwd", "oldpwd") and value[:1] in ("/", "~", "."):
        return None  # the shell's working directory
    if key.lower() == "pass" and value.isdigit():
        return None  # "pass: 3  fail: 1" is a count
    if family != "password":
        if len(value) <= 6 and value.replace(":", "").isdigit():
            return None  # a count, a line number (auth.go:88)
        if PATH_VALUE.fullmatch(value) and not looks_random(value) or NAME_PATH.fullmatch(value):
            return None  # ..._CREDENTIALS=/home/me/sa.json
        if sep == ":" and PASCAL_TYPE.fullmatch(value) and trailing[:1] in (";", ",", ")", "|"):
            return None  # token: AccessToken;  (a type)
    end = value_pos + len(value)
    if family == "password" and sep == ":" and line_prefix_blank(text, key_start):
        end = len(
            text[: value_limit(text, value_pos)].rstrip()
        )  # "password: correct horse battery"
    elif (
        family == "password"
        and sep == "="
        and (words := PASSPHRASE_TAIL.match(text, end, value_limit(text, value_pos)))
        and (line_prefix_blank(text, key_start) or text[:key_start].rstrip().endswith("export"))
    ):
        end = words.end()  # .env/INI: DB_PASSWORD=open sesame 42
    return (value_pos, end)


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


def _named_value(text: str, key_start: int, key_end: int, pos: int) -> int | None:
    """Where the value of the name ``text[key_start:key_end]`` (its value may follow from ``pos``) starts in
    one of _NAMED_FORMS, or None."""
    for before, value in _NAMED_FORMS:  # (the value's lead first: it seldom matches)
        value_match = value.match(text, pos)
        if value_match and before.search(text, max(0, key_start - 80), key_end):
            return value_match.end()
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


def _code_name(name: str) -> bool:
    """Whether ``name``, an identifier or a dotted chain of them, is shaped like names in code
    (``settings.db_password``, ``cfg.pw``, ``s3.Client``), not like a secret that happens to
    fit the same characters (``m4ple.Syrup42``, Vault's ``s.PbLtvfkymKhbtWQ4UO3XCoNq``): no
    digit runs on into lower case letters, and no part of 12 characters or more looks random."""
    if DIGIT_THEN_LOWER.search(name.split(".", 1)[0]):
        return False  # (self.oauth2token, ctx.k8sClient stay)
    return not any(
        len(part) >= 12
        and has_digit(part)
        and looks_random(part)
        and sum(map(len, HUMPS.findall(part))) <= len(part) / 2  # (Ed25519PrivateKey)
        for part in name.split(".")
    )


def _variable_name(name: str) -> bool:
    """An identifier in one case style (``user_password``, ``DB_PASS``, ``dbPassword``) rather
    than a password with an underscore in it (``dragonFly_88``, ``Summer_2024``)."""
    core = name.strip("_")  # (_private, __dunder__)
    return _code_name(name) and (
        "_" not in core or core.islower() or core.isupper() or not core.rsplit("_", 1)[1].isdigit()
    )  # (DB_PASSWORD_v2)


def short_word(value: str, key: str) -> bool:
    """A short word under a name that often holds one: auth: ldap, {"token": "Hello"}."""
    word = value.strip()
    return (
        len(word) < 8 and word.isalpha() and key.lower().rstrip("\"'").endswith(("auth", "token"))
    )


def _spaced_span(text: str, value_pos: int, family: str, key: str) -> tuple[int, int] | None:
    """The value after a key and whitespace alone: a password that reads as one (see
    _prose_span), or any secret that looks random (prose after "token" or "key" stays). After
    a bare "pass" (a verb too: "pass X-Api-Key ...") only a random one."""
    if key.lower() == "pass":
        family = ""
    span = _prose_span(text, value_pos)
    if span is None or "=" in text[span[0] : span[1]]:
        return None  # (another assignment: request_id=...)
    value = text[span[0] : span[1]]
    return (
        span if family == "password" or looks_random(value) or _HEX_KEY.fullmatch(value) else None
    )


def _prose_span(text: str, value_pos: int) -> tuple[int, int] | None:
    """The value in "… password is X": X when it reads as a secret, not as a word: six
    characters or more with a digit or with the case changing three times or more ("is
    incorrect", "is JWT-based" stay), and not code or a placeholder."""
    found = _PROSE_VALUE.match(text, value_pos)
    if not found:
        return None
    value = found.group(2).rstrip(TRAIL)
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
    return (found.start(2), found.start(2) + len(value))


def quoted_span(text: str, pos: int) -> tuple[int, int] | tuple[()] | None:
    """For a string starting at ``pos`` (quote, JSON-escaped quote, or Python's ``r"``/``b'``/
    ``f"`` prefixes and a quote): the span of its value, or ``()`` when that value is empty or
    a placeholder; None when no string starts there."""
    if text[pos] in STR_PREFIX_CHARS:
        prefix = STR_PREFIX.match(text, pos)
        if prefix:
            pos = prefix.end()
    first = text[pos]
    if not (first in QUOTES or (first == "\\" and text[pos + 1 : pos + 2] in ('"', "'"))):
        return None
    quote = text[pos : pos + 2] if first == "\\" else first
    start = pos + len(quote)
    end = close_quote(text, start, quote)
    value = text[start:end]
    return (start, end) if value and not placeholder(value) else ()


def _default_span(text: str, value_pos: int) -> tuple[int, int] | None:
    """The default value after a type annotation (``token: str = "abc"``)."""
    quoted = quoted_span(text, value_pos)
    if quoted is not None:
        return quoted or None
    raw = UNQUOTED_VALUE.match(text, value_pos, value_pos + 4096).group()
    value = raw.rstrip(TRAIL)
    if (
        not value
        or placeholder(value)
        or CALL.match(raw)
        or ATTR_CHAIN.fullmatch(value)
        or IDENT.fullmatch(value)
    ):
        return None
    return (value_pos, value_pos + len(value))


def _yaml_block(text: str, key_start: int, after: int) -> tuple[int, int] | None:
    """The lines of a YAML block scalar (``password: |``): those indented past the key."""
    indent = key_start - (text.rfind("\n", 0, key_start) + 1)
    pos = line_end(text, after) + 1
    first, last, text_len = pos, None, len(text)
    while pos < text_len:
        line_stop = line_end(text, pos)
        line = text[pos:line_stop]
        body = line.lstrip(" \t")
        if body and len(line) - len(body) <= indent:
            break
        if body:
            last = line_stop
        pos = line_stop + 1
    return None if last is None else (first, last)


_B64CH = ALNUM | {"+", "/", "_", "-"}


def _in_random_run(text: str, key_start: int, key_end: int) -> bool:
    """Whether the key ``text[key_start:key_end]`` is part of a random base64 run (a digest, a blob)."""
    run_start, lim = key_start, max(0, key_start - 200)
    while run_start > lim and text[run_start - 1] in _B64CH:
        run_start -= 1
    run = text[run_start:key_end].rstrip("=")
    return len(run) >= 24 and looks_random(run)


_PATHCH = WORD | {".", "-", "/", "~", "@", "+"}


def _file_path_before(text: str, key_start: int, key_end: int) -> bool:
    """Whether the name ``text[key_start:key_end]`` ends a file path (PATH_VALUE: ``/etc/passwd``,
    ``~/.config/token``): before a colon, an error line's file, not a key. (``/pass:x`` alone, as Windows' cmdkey
    takes it, stays a key, as do ``example.com/api-token`` and an SSM parameter's quoted
    ``"/prod/db_password"``.)"""
    path_start, lim = key_start - 1, max(0, key_start - 512)
    while path_start > lim and text[path_start - 1] in _PATHCH:
        path_start -= 1
    return PATH_VALUE.fullmatch(text, path_start, key_end) is not None


_CSV_HEADER = lazy(r"[A-Za-z_][\w .-]{0,60}+(?:,[A-Za-z_][\w .-]{0,60}+){1,50}+\r?")
_CSV_ROWS = 1000  # rows read below a header


def _csv_column(
    text: str, key_start: int, key_end: int
) -> tuple[list[tuple[int, int]], tuple[int, int]]:
    """When the key ``text[key_start:key_end]`` is a column of a CSV header line, the spans of that column's
    values in the rows below it (rows with as many fields, without quotes), and where those
    rows start and end."""
    line_start = text.rfind("\n", 0, key_start) + 1
    line_stop = text.find("\n", key_end)
    line_stop = len(text) if line_stop == -1 else line_stop
    if not _CSV_HEADER.fullmatch(text, line_start, line_stop):
        return [], (0, 0)
    width, column = (
        text.count(",", line_start, line_stop) + 1,
        text.count(",", line_start, key_start),
    )
    spans, first = [], line_stop + 1
    for _ in range(_CSV_ROWS):
        if line_stop >= len(text):
            break
        start, line_stop = line_stop + 1, text.find("\n", line_stop + 1)
        line_stop = len(text) if line_stop == -1 else line_stop
        row = text[start:line_stop].rstrip("\r")
        if row.count(",") != width - 1 or '"' in row:
            line_stop = start - 1
            break
        fields = row.split(",")
        value_start = start + sum(len(f) + 1 for f in fields[:column])
        value = fields[column].strip()
        if value and not placeholder(value):
            value_start += len(fields[column]) - len(fields[column].lstrip())
            spans.append((value_start, value_start + len(value)))
    return spans, (first, line_stop)


def generic(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    hits = []
    tails: TailRuns  # (a declaration only: no code runs for it)
    strong_run, tails = STRONG_RUN.get, {}
    for needle in KEY_NEEDLES:
        size, api_key = len(needle), needle == b"key"
        for run_start, run_end in scan.key_runs(needle):
            hit = run_start - size
            strong = strong_run(text[hit:run_end])
            if strong is None:
                strong = strong_hit(text, hit, run_end, size, tails)
            if strong and (not api_key or key_hit_ok(text, hit)):
                hits.append((hit, run_end))
    if not hits:
        return
    hits.sort()
    low = scan.low
    authorization = "authorization" if low.__class__ is str else b"authorization"
    text_len = len(text)
    done, rows = -1, (0, 0)
    for hit, run_end in hits:
        if hit < done:
            continue
        # (the key goes on past the letters after its needle, or they were too many to count)
        key_end = (
            KEY_FWD.match(text, hit).end() if text[run_end : run_end + 1] in KEYCH else run_end
        )
        done = key_end
        if key_end >= text_len or text[key_end] not in AFTER_KEY and text[key_end] not in "\r\n,(":
            continue  # no separator: prose, or a 200+ char run
        if low.startswith(authorization, hit):
            _authorization(text, hit, out)
        if hit and text[hit - 1] in KEYCH:
            key_start = (
                hit - KEY_RUN.match(text[max(0, hit - 48) : hit][::-1]).end()
            )  # the key's start
        else:
            key_start = hit
        if hit - key_start == 48:
            lim = max(0, hit - 200)
            while key_start > lim and text[key_start - 1] in KEYCH:
                key_start -= 1
            if key_start == lim and key_start and text[key_start - 1] in KEYCH:
                continue  # no real key is 200 characters long
        if (
            key_start < hit
            and key_start
            and text[key_start - 1] == "\\"
            and text[key_start] in "nrt"
            and not (key_start > 1 and text[key_start - 2] == "\\")
        ):
            key_start += 1  # "\napi_key=..." in JSON: not "napi_key"
        if key_start >= 10 and text.startswith(MARKER_PREFIX, key_start - 10):
            continue  # a family name inside a marker
        if (
            key_end - key_start == 3
            and key_start >= 2
            and text[key_start - 1] == " "
            and text[key_start - 2] in LETTERS
        ):
            word_start = key_start - 1  # "API key: ...", "Secret key = ..."
            while (
                word_start > 0 and key_start - word_start < 16 and text[word_start - 1] in LETTERS
            ):
                word_start -= 1
            key_start = word_start
        key = text[key_start:key_end]
        family = key_family(key.strip(".-"))
        if family is None:
            continue
        if (text[key_end] in "\r\n," or (key_start and text[key_start - 1] == ",")) and not (
            rows[0] <= key_start < rows[1]
        ):  # (a table's rows are no headers)
            column, rows = _csv_column(text, key_start, key_end)  # user,password \n app,hunter2
            if column:
                out.extend((s, e, PRIO[family]) for s, e in column)
                continue
            if text[key_end] in "\r\n," and _named_value(text, key_start, key_end, key_end) is None:
                continue  # "- name: DB_PASSWORD\n  value: x" goes on
        if text[key_end] in " \t" and not key.startswith("-"):
            value_pos = BLANKS.match(text, key_end).end()
            next_char = text[value_pos : value_pos + 1]
            if (
                next_char != "="
                and next_char != ":"
                and key.lower() not in ("password", "passwd")
                and not _PROSE_IS.match(text, key_end)
                and not _spaced_span(text, value_pos, family, key)
                and not (
                    text.startswith(("||", "??"), value_pos)  # process.env.KEY || "x"
                    and _named_value(text, key_start, key_end, key_end) is not None
                )
            ):
                continue  # prose: "the token expired"
        if (
            key_end - key_start >= 24 or key_start and text[key_start - 1] in "+/"
        ) and _in_random_run(text, key_start, key_end):
            continue  # "Pwd" inside base64: no key name
        if (
            text[key_end] == ":"
            and key_start
            and text[key_start - 1] == "/"
            and _file_path_before(text, key_start, key_end)
        ):
            continue  # "grep: /etc/passwd: Permission denied"
        span = _value_span(text, key_start, key_end, key, family)
        if span and span[1] > span[0]:
            out.append((span[0], span[1], PRIO[family]))
            done = max(done, span[1])
