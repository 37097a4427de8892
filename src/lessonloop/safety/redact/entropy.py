"""Secrets found by looking random: ``<vendor prefix>_<random>`` tokens, and a random token
assigned under a name that is not a secret's (the high-entropy fallback); ``looks_random`` is
the test, shared by the detectors that judge a value by its shape alone.
"""

from __future__ import annotations

import functools
from collections import Counter

from ...lazyre import lazy
from .families import PRIO, Span
from .lexicon import ATTR_CHAIN, KEYCH, SEG
from .text import ALNUM, TOKCH, Scan, escape_before, escape_ends_at

# --------------------------------------------------------------------------------------------
# Prefixed tokens: ``<vendor prefix>_<random>`` on their own, in prose or as an argument
#
# Services mark their keys with a short lower-case prefix ending in "_" (gsk_, r8_, lsv2_pt_,
# pcsk_, lin_api_, glsa_, pscale_tkn_, sbp_, dop_v1_, ...), and new services keep doing so: a
# token shaped like that, whose body looks random (see looks_random), is redacted whole under
# any prefix but the well-known ids' (msg_, toolu_, req_, ...) and digests', and not when the
# body starts with "01" as Anthropic's ids all do (wrkspc_01..., rlg_01...). Hex bodies, which
# ids and digests have too, count under the prefixes known to carry keys only. The prefilter
# wants "_" after a letter or digit and then 16 letters and digits in a row (so snake_case
# words do not qualify). (Prefixes ending in "-" cost twice as much to look for, as "-" is
# everywhere in UUIDs and dates: the ones that matter, pplx- and xai-, are rules of their own.)

# Ids with a well-known prefix, digests named by their algorithm: random, and no secrets.
_ID_PREFIXES = (
    "msg",
    "toolu",
    "srvtoolu",
    "req",
    "call",
    "chatcmpl",
    "cmpl",
    "file",
    "run",
    "thread",
    "asst",
    "batch",
    "evt",
    "cus",
    "sub",
    "prod",
    "price",
    "pi",
    "pm",
    "ch",
    "txn",
    "acct",
    "org",
    "user",
    "proj",
    "resp",
    "fc",
    "rs",
    "step",
    "vs",
    "sess",
    "conv",
    "item",
    "ftjob",
    "img",
    "in",
    "seti",
    "cs",
    "re",
    "po",
    "card",
    "si",
    "src",
    "tok",
    "dpl",
    "prj",
    "team",
    "job",
    "span",
    "trace",
    "gen",
    "vpc",
    "subnet",
    "usr",
    "doc",
    "obj",
    "ws",
    "app",
    "ord",
    "inv",
    "cart",
    "ses",
)
_DIGEST_NAMES = (
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "md5",
    "h1",
    "blake2",
    "blake2b",
    "blake2s",
)


def _not_after(words: tuple[str, ...]) -> str:
    """Look-behinds (one per length) refusing a separator right after one of ``words``."""
    by_length: dict[int, list[str]] = {}
    for word in words:
        by_length.setdefault(len(word), []).append(word)
    return "".join(f"(?<!(?<![A-Za-z0-9])(?:{'|'.join(ws)}).)" for ws in by_length.values())


PREFIX_TAIL = r"(?=[A-Za-z0-9]{16})(?<=[a-z0-9].)" + _not_after(_ID_PREFIXES + _DIGEST_NAMES)
PREFIXED = lazy("_" + PREFIX_TAIL)
_PREFIX_SHAPE = lazy(r"[a-z][a-z0-9]{1,11}(?:[_-][a-z0-9]{1,8}){0,2}[_-]")
_TOKEN_BODY = lazy(r"[A-Za-z0-9_+/=-]{0,400}+")
_HEX_BODY = lazy(r"[0-9a-f]{32,128}")
_HEX_KEY_PREFIXES = frozenset(
    {
        "sbp",
        "shpat",
        "shpss",
        "shpca",
        "shppa",
        "rubygems",
        "dop_v1",
        "doo_v1",
        "dor_v1",
        "lsv2_pt",
        "lsv2_sk",
        "sntryu",
    }
)
_NOT_TOKEN_PREFIXES = frozenset(_ID_PREFIXES) | frozenset(_DIGEST_NAMES) | {"pk"}  # (Stripe's
#                                                                   publishable keys are public)


def prefixed_tokens(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    prio = PRIO["generic-secret"]
    done = -1
    for sep in (m.start() for m in PREFIXED.finditer(text)):
        if sep < done:
            continue
        start, lim = sep, max(0, sep - 24)
        while start > lim and (text[start - 1] in ALNUM or text[start - 1] in "_-"):
            start -= 1
        if (
            start
            and (text[start - 1] in TOKCH or text[start - 1] in "./+")
            and not escape_ends_at(text, start)
        ):
            continue  # inside a longer word, path or token
        shape = _PREFIX_SHAPE.match(text, start, sep + 1)
        if shape is None or shape.end() != sep + 1:
            continue
        prefix = text[start:sep]
        if prefix.split("_")[0].split("-")[0] in _NOT_TOKEN_PREFIXES:
            continue  # (an id's or a digest's prefix)
        body = _TOKEN_BODY.match(text, sep + 1).group()
        if len(body.rstrip("=")) < 20 or body.startswith("01"):
            continue  # (too short; Anthropic's ids: wrkspc_01...)
        if looks_random(body.rstrip("=")) or (
            prefix in _HEX_KEY_PREFIXES and _HEX_BODY.fullmatch(body)
        ):
            done = sep + 1 + len(body)
            out.append((start, done, prio))


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
    r"|iVBORw0KGgo|/9j/|R0lGOD|UklGR|JVBERi0|pk_(?:live|test)_"
)  # images, a PDF; public keys
# (Two patterns, each starting with its literal separator: the regex engine then jumps from one
# ":" or "=" to the next instead of trying the pattern at every character. The length is
# checked before the exclusions, which most values never reach.)
_ENTROPY_TAIL = (
    r">?[ \t]*+(?:[rbuf]{0,2}\\?[\"'`])?+(?=[A-Za-z0-9+/_.~-]{24})"
    r"(?=[a-z0-9+/_.~-]{0,255}+[A-Z]|[A-Za-z0-9+/_.~-]{32})"  # (under 32: needs upper case)
    r"(?!" + _NOT_SECRET_START + r")"
    r"([A-Za-z0-9+/_.~-]{24,256}+={0,3}+)(?=[\s\"'`\\,;)\]}&>|<]|$)"
)
ENTROPY_RES = (lazy(":" + _ENTROPY_TAIL), lazy("=" + _ENTROPY_TAIL))
# What every match of ENTROPY_RES starts with: a separator, then 24 characters of a value. It
# compiles in ~0.4 ms where ENTROPY_RES take ~5 ms, and most texts (a traceback, a prompt) have
# none: a hook process then never compiles them.
ENTROPY_CANDIDATE = lazy(r"[:=]>?[ \t]*+(?:[rbuf]{0,2}\\?[\"'`])?+[A-Za-z0-9+/_.~-]{24}")
ENTROPY_ID = lazy(_NOT_SECRET_START)
_HEXISH = lazy(r"(?:0x)?[0-9a-fA-F._/-]+")
_WORDY = lazy(r"[A-Z]?[a-z]{3,}|[A-Z]{3,}(?![a-z])")
_CLASS_RUN = lazy(r"U+|L+|D+")
_ALNUM_RUN = lazy(r"[ULD]+")
_CLASS_OF = str.maketrans(
    {
        **dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "U"),
        **dict.fromkeys("abcdefghijklmnopqrstuvwxyz", "L"),
        **dict.fromkeys("0123456789", "D"),
    }
)
_ENTROPY_SAFE_NAMES = frozenset(
    {
        "id",
        "ids",
        "uuid",
        "guid",
        "sha",
        "sha1",
        "sha256",
        "sha384",
        "sha512",
        "md5",
        "h1",
        "hash",
        "hashes",
        "digest",
        "checksum",
        "etag",
        "integrity",
        "signature",
        "sig",
        "fingerprint",
        "commit",
        "revision",
        "rev",
        "oid",
        "nonce",
        "iv",
        "public",
        "pub",
        "pubkey",
        "publickey",
        "image",
        "thumbnail",
        "icon",
        "avatar",
        "cursor",
        "state",
        "challenge",
        "publishable",
        "page",
    }
)


def looks_random(token: str) -> bool:
    """Whether ``token`` (a candidate from ENTROPY_RES) is a random token; see above."""
    size = len(token)
    if _HEXISH.fullmatch(token) or ATTR_CHAIN.fullmatch(token):
        return False
    cls = token.translate(_CLASS_OF)
    upper, lower, digits = cls.count("U"), cls.count("L"), cls.count("D")
    if not digits or not (upper or lower) or (size < 32 and not (upper and lower)):
        return False
    alnum = upper + lower + digits
    stretches = len(_ALNUM_RUN.findall(cls))
    pairs = alnum - stretches
    changes = len(_CLASS_RUN.findall(cls)) - stretches
    expected = 1.0 - (upper * upper + lower * lower + digits * digits) / (alnum * alnum)
    if pairs <= 0 or changes < 0.6 * expected * pairs:
        return False
    if sum(map(len, _WORDY.findall(token))) > (0.7 if upper and lower else 0.8) * alnum:
        return False
    from math import log2  # (here: most texts have no candidate, and a hook loads no math)

    counts = Counter(token).values()
    entropy = log2(size) - sum(c * log2(c) for c in counts) / size
    if entropy < min(4.0, log2(size) - 0.9):
        return False
    return not _readable_base64(token)


def _readable_base64(token: str) -> bool:
    """Base64 (standard or URL-safe) of printable text with spaces: encoded prose, no key."""
    import base64  # (on first use: most processes never decode)
    import binascii

    if (
        "." in token
        or "~" in token
        or ("-" in token or "_" in token)
        and ("+" in token or "/" in token)
    ):
        return False
    try:
        raw = base64.b64decode(
            token + "=" * (-len(token) % 4),
            altchars=b"-_" if ("-" in token or "_" in token) else None,
            validate=True,
        )
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return False
    return " " in decoded and decoded.isprintable()


@functools.lru_cache(maxsize=1024)
def entropy_safe_name(key: str) -> bool:
    return key.lower() in _ENTROPY_SAFE_NAMES or any(
        s.lower() in _ENTROPY_SAFE_NAMES for s in SEG.findall(key)
    )


def entropy_values(scan: Scan, out: list[Span]) -> None:
    text = scan.text
    prio = PRIO["generic-secret"]
    for found in scan.matches(ENTROPY_RES[0]) + scan.matches(ENTROPY_RES[1]):
        if not looks_random(found.group(1)):
            continue
        value_start, lim = found.start(), max(0, found.start() - 4)
        while value_start > lim and text[value_start - 1] in " \t\"'`\\]":
            value_start -= 1
        key_start, lim = value_start, max(0, value_start - 100)
        while key_start > lim and text[key_start - 1] in KEYCH:
            key_start -= 1
        if key_start < value_start and escape_before(text, key_start):
            key_start += 1
        if key_start < value_start and entropy_safe_name(text[key_start:value_start]):
            continue
        out.append((found.start(1), found.end(1), prio))
