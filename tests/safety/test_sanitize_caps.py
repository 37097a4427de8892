"""sanitize(): invisible and reordering characters go; cap(): codepoint-safe truncation."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessonloop.safety import (
    CONTENT_MAX,
    FAMILIES,
    HOW_MAX,
    SUMMARY_MAX,
    TRUNCATION_MARKER,
    WHY_MAX,
    cap,
    clean,
    sanitize,
)
from lessonloop.safety.redact import MARKER_RE

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BIDI = [
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
]
ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\ufeff", "\u2060"]
C0 = [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"] + ["\x7f"]
C1 = [chr(c) for c in range(0x80, 0xA0)]
TAGS = [chr(c) for c in range(0xE0000, 0xE0080)]  # invisible "tag" characters
REMOVED = set(BIDI + ZERO_WIDTH + C0 + C1 + TAGS + ["\r"])


# --------------------------------------------------------------------------------------------
# sanitize


def test_trojan_source_bidi_controls_are_removed():
    # the classic "Trojan Source" comment: RLO ... LRI hides the real order of the code
    text = 'access_level = "user\u202e \u2066// Check if admin\u2069 \u2066"'
    assert sanitize(text) == 'access_level = "user // Check if admin "'


@pytest.mark.parametrize("ch", BIDI + ZERO_WIDTH + C0 + C1 + TAGS[::31])
def test_each_removed_character(ch):
    assert sanitize(f"a{ch}b") == "ab"


def test_tab_and_newline_stay_and_crlf_becomes_lf():
    assert sanitize("a\tb\nc") == "a\tb\nc"
    assert sanitize("one\r\ntwo\rthree\n\rfour") == "one\ntwo\nthree\n\nfour"


def test_nfc_normalization_and_ordinary_unicode_kept():
    assert sanitize("Cafe\u0301") == "Café"
    assert sanitize("e\u200b\u0301") == "é"  # composes once the zero-width char is gone
    kept = "日本語 • emoji 😀 👍🏽 🇫🇷 — “quotes” ½ Ω"
    assert sanitize(kept) == unicodedata.normalize("NFC", kept)


def test_sanitize_rejects_non_strings():
    with pytest.raises(TypeError):
        sanitize(None)  # type: ignore[arg-type]


_DIRTY = st.lists(
    st.one_of(
        st.text(max_size=12),
        st.sampled_from(sorted(REMOVED)),
        st.sampled_from(["\r\n", "\u0301", "e\u0301", "\u212b", "A\u030a"]),
    ),
    max_size=20,
).map("".join)


@SETTINGS
@given(_DIRTY)
def test_sanitize_is_idempotent_and_leaves_nothing_removable(text):
    once = sanitize(text)
    assert sanitize(once) == once
    assert not (set(once) & REMOVED)
    assert unicodedata.is_normalized("NFC", once)


@SETTINGS
@given(st.text())
def test_sanitize_only_deletes_and_normalizes(text):
    expected = unicodedata.normalize(
        "NFC",
        "".join(c for c in text.replace("\r\n", "\n").replace("\r", "\n") if c not in REMOVED),
    )
    assert sanitize(text) == expected


# --------------------------------------------------------------------------------------------
# cap


def test_constants():
    assert (SUMMARY_MAX, CONTENT_MAX, WHY_MAX, HOW_MAX) == (120, 4096, 1024, 1024)
    assert TRUNCATION_MARKER == "…[truncated]"


def test_short_text_is_unchanged_and_long_text_gets_the_marker():
    assert cap("hello", 5) == "hello"
    out = cap("x" * 200, SUMMARY_MAX)
    assert len(out) == SUMMARY_MAX and out.endswith(TRUNCATION_MARKER)
    assert out == "x" * (SUMMARY_MAX - len(TRUNCATION_MARKER)) + TRUNCATION_MARKER
    assert cap("abcdef", 5, marker="~") == "abcd~"


def test_limit_smaller_than_the_marker_gives_a_bare_prefix():
    assert cap("abcdefghijklmnopqrstuvwxyz", 3) == "abc"
    assert cap("hello world", 10) == "hello worl"  # the 12-char marker does not fit
    assert cap("abc", 0) == ""
    with pytest.raises(ValueError):
        cap("abc", -1)


def test_never_splits_a_surrogate_pair():
    text = "ab" + "\ud83d\ude00" * 5  # surrogate pairs as separate code points
    for limit in range(len("…[truncated]"), len(text)):
        out = cap(text, limit)
        body = out[: -len("…[truncated]")]
        assert not body or not ("\ud800" <= body[-1] <= "\udbff"), (limit, out)


def test_never_splits_a_combining_sequence():
    text = "ne\u0301e\u0301e\u0301e\u0301" + "z" * 20  # decomposed é: cut before the base
    for limit in range(13, 22):
        body = cap(text, limit, marker="~")[:-1]
        assert body == text[: len(body)]
        assert text[len(body)] not in "\u0301", (limit, body)


def test_keeps_emoji_zwj_sequences_and_flags_whole():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = "go " + family + " " + "\U0001f1eb\U0001f1f7" * 3 + " end"
    for limit in range(1, len(text)):
        body = cap(text, limit, marker="~")
        body = body[:-1] if body.endswith("~") else body
        assert text.startswith(body)
        rest = text[len(body) :]
        assert not rest or not (rest[0] == "\u200d" or body.endswith("\u200d")), (limit, body)
        ri = 0
        while ri < len(body) and "\U0001f1e6" <= body[len(body) - 1 - ri] <= "\U0001f1ff":
            ri += 1
        assert ri % 2 == 0, (limit, body)


def test_never_leaves_half_a_redaction_marker():
    text = "token is [REDACTED:github-token] and more text after it"
    start = text.index("[REDACTED")
    for limit in range(start + 1, start + len("[REDACTED:github-token]") + len("…[truncated]") + 1):
        out = cap(text, limit)
        assert "[REDACTED:github-token]" in out or "[REDACTED" not in out, (limit, out)
        assert len(out) <= limit


_MARKERS = st.sampled_from([f"[REDACTED:{f}]" for f in FAMILIES])
_PIECES = st.one_of(
    st.text(max_size=15),
    _MARKERS,
    st.sampled_from(
        [
            "\ud83d\ude00",
            "e\u0301",
            "\u0301\u0302",
            "\U0001f469\u200d\U0001f4bb",
            "\U0001f1eb\U0001f1f7",
            "\U0001f44d\U0001f3fd",
            "\u2764\ufe0f",
            "[REDACTED:",
            "]",
            "\u200d",
        ]
    ),
)


def _lone_surrogate(s: str) -> bool:
    i = 0
    while i < len(s):
        c = s[i]
        if "\ud800" <= c <= "\udbff":
            if i + 1 >= len(s) or not ("\udc00" <= s[i + 1] <= "\udfff"):
                return True
            i += 2
            continue
        if "\udc00" <= c <= "\udfff":
            return True
        i += 1
    return False


@SETTINGS
@given(
    st.lists(_PIECES, max_size=20).map("".join),
    st.integers(min_value=0, max_value=200),
    st.sampled_from([TRUNCATION_MARKER, "…", "", " [cut]"]),
)
def test_cap_properties(text, limit, marker):
    out = cap(text, limit, marker)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text
        return
    if len(marker) <= limit:
        assert out.endswith(marker)
        body = out[: len(out) - len(marker)]
    else:
        body = out
    assert text.startswith(body)  # a prefix of the input
    assert not _lone_surrogate(body)  # (the input has none)
    k = len(body)
    for m in MARKER_RE.finditer(text):  # no broken [REDACTED:...] token
        assert not (m.start() < k < m.end()), (text, k)
    if 0 < k < len(text):  # (cutting at 0 is always safe)
        nxt = text[k]
        assert unicodedata.combining(nxt) == 0 and unicodedata.category(nxt) not in (
            "Mn",
            "Me",
            "Mc",
        )
        assert nxt != "\u200d" and not (k and text[k - 1] == "\u200d")


def test_clean_redacts_before_it_cuts():
    key = "ghp_" + "Zq7" * 12
    text = "note: " + "a" * 100 + " " + key + " rest"
    out = clean(text, SUMMARY_MAX)
    assert len(out) <= SUMMARY_MAX
    assert "ghp_" not in out and "Zq7" not in out
    assert clean("a\u202eb token=abc123") == "ab token=[REDACTED:generic-secret]"


def test_clean_catches_a_key_hidden_by_an_invisible_character():
    key = "ghp_" + "Zq7" * 12
    hidden = key[:6] + "\u200b" + key[6:]
    assert clean(f"token {hidden}") == "token [REDACTED:github-token]"
    assert clean(f"x\u202e{key}") == "x[REDACTED:github-token]"


@pytest.mark.parametrize(
    "key",
    [
        "ghp_" + "Zq7Yw2" * 6,
        "sk-ant-api03-"
        + "4oalekmTEcdcS97tlxob-Fi7ilfIiM9TIFz6cjaQs8Wvgj_ujBsdSosN6f1JfwItMt7fXS_R78f8v44LJpx13pn-WGySnAA",
        "xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "AKIA" + "QWERTYUIOPASDFGH",
    ],
)
@pytest.mark.parametrize("invisible", ["\u200b", "\u2060", "\x00", "\x1b"])
def test_no_slice_of_a_key_survives_an_invisible_character_anywhere_in_it(key, invisible):
    for split in range(1, len(key)):
        out = clean(f"see {key[:split]}{invisible}{key[split:]} here")
        assert not any(key[i : i + 12] in out for i in range(len(key) - 11)), (split, out)
