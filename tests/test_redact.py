"""Redaction of secrets and sanitizing of untrusted text (``sidelight.redact``)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidelight.redact import MARKER, defang, redact, sanitize, sanitize_lines

SECRETS = Path(__file__).parent / "fixtures" / "secrets"
CASES = json.loads((SECRETS / "secrets.json").read_text(encoding="utf-8"))
ORDINARY = (SECRETS / "ordinary.txt").read_text(encoding="utf-8").splitlines()


def _secret(case: dict[str, object]) -> str:
    parts = case["parts"]
    assert isinstance(parts, list)
    return "".join(parts)


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['kind']}" for i, c in enumerate(CASES)])
def test_secret_is_redacted(case):
    secret = _secret(case)
    text = case["text"].replace("{secret}", secret)
    redacted = redact(text)
    assert redacted == case["expect"]
    assert secret not in redacted
    assert "REDACTED" in redacted


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['kind']}" for i, c in enumerate(CASES)])
def test_secret_is_redacted_in_a_sanitized_line(case):
    secret = _secret(case)
    line = sanitize("before " + case["text"].replace("{secret}", secret) + " after", 1000)
    assert "\n" not in line
    for piece in secret.split():
        if len(piece) >= 8:
            assert piece not in line


def test_every_kind_of_the_brief_is_in_the_corpus():
    kinds = {case["kind"] for case in CASES}
    expected = {"anthropic-key", "openai-key", "github-token", "gitlab-token", "slack-token", "aws-key-id"}
    expected |= {"aws-secret", "google-key", "stripe-key", "npm-token", "hf-token", "jwt", "bearer"}
    expected |= {"private-key", "url-password", "command-password", "env"}
    expected |= {"slack-webhook", "azure-key"}  # issue 19
    assert expected <= kinds


@pytest.mark.parametrize("line", ORDINARY)
def test_ordinary_text_survives(line):
    assert redact(line) == line
    assert sanitize(line, 1000) == line


def test_kind_hints():
    github = "gh" + "p_" + "FAKEfake0000TESTtest1111FAKEfake2222"
    assert redact(github) == "[REDACTED:github-token]"
    assert redact("PASSWORD=hunter2") == f"PASSWORD={MARKER}"


def test_more_specific_marker_is_kept_in_an_assignment():
    key = "sk-" + "ant-" + "api03-" + "FAKEfake0000TESTtest1111"
    assert redact(f"ANTHROPIC_API_KEY='{key}'") == "ANTHROPIC_API_KEY='[REDACTED:anthropic-key]'"


def test_url_keeps_user_and_host():
    assert redact("redis://default:s3cr3t@cache:6379/0") == "redis://default:[REDACTED]@cache:6379/0"
    assert (
        redact("mongodb+srv://:s3cr3t@cluster0.example.net")
        == "mongodb+srv://:[REDACTED]@cluster0.example.net"
    )


def test_secret_split_by_invisible_characters_is_still_redacted():
    token = "gh" + "p_" + "FAKEfake0000TESTtest1111FAKEfake2222"
    smuggled = token[:6] + "\u200b" + token[6:12] + "\x1b[0m" + token[12:20] + "\u2066" + token[20:]
    assert sanitize(f"token {smuggled}", 200) == "token [REDACTED:github-token]"


# -- sanitize ---------------------------------------------------------------------------------------


def test_sanitize_strips_escapes_controls_bidi_and_zero_width():
    text = (
        "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07 "
        "bell\x07 nul\x00 c1\x85x\x9bq \u202eevil\u202c \u2066iso\u2069 "
        "zero\u200bwidth\u200c\u200d\u2060\ufeff \u200e\u200f\u061c tag\U000e0041\U000e007f"
    )
    clean = sanitize(text, 1000)
    assert clean == "red link bell nul c1 x evil iso zerowidth tag"
    assert clean.isprintable()


def test_sanitize_collapses_whitespace_to_one_line():
    assert sanitize("  one\n\ntwo\t three\r\n\u2028four\u00a0five  ", 100) == "one two three four five"


def test_sanitize_cuts_with_an_ellipsis():
    assert sanitize("abcdefghij", 10) == "abcdefghij"
    assert sanitize("abcdefghijk", 10) == "abcdefghi…"
    assert sanitize("abcd efgh ijk", 10) == "abcd efgh…"
    assert sanitize("anything", 0) == ""
    assert sanitize("ab", 1) == "…"


def test_sanitize_of_a_huge_text_reads_only_a_prefix():
    token = "gh" + "p_" + "FAKEfake0000TESTtest1111FAKEfake2222"
    text = ("word " * 3000) + token + " " + ("x" * 1_000_000)
    line = sanitize(text, 100)
    assert len(line) == 100
    assert line.endswith("…")
    # A secret that straddles the end of the window read is cut at whitespace, never shown in part.
    for window in (2 * 100 + 64, 8 * 100 + 4096):  # the two prefixes sanitize reads
        for offset in range(window - len(token) - 5, window + 5):
            for padding in (" ", "\u200b", "\n"):
                line = sanitize(padding * offset + token + " tail", 100)
                assert token[4:14] not in line
                assert line in {"[REDACTED:github-token] tail", "[REDACTED:github-token]…", "…"}


@given(st.text(max_size=400), st.integers(min_value=1, max_value=300))
def test_sanitize_properties(text, limit):
    line = sanitize(text, limit)
    assert len(line) <= limit
    assert "\n" not in line and "\r" not in line
    assert line == line.strip()
    # No control, format (bidi, zero-width, tags), surrogate or line/paragraph separator character is left.
    assert not [ch for ch in line if unicodedata.category(ch) in {"Cc", "Cf", "Cs", "Zl", "Zp"}]
    assert sanitize(text, limit) == line


_TOKENS = [
    "gh" + "p_" + "FAKEfake0000TESTtest1111FAKEfake2222",
    "sk-" + "ant-" + "api03-" + "FAKEfake0000TESTtest1111",
    "AK" + "IA" + "FAKEFAKE0000TEST",
    "ey" + "JhbGciOiJIUzI1NiJ9.ey" + "JzdWIiOiJGQUtFIn0.FAKEfake0000TESTtest1111",
    "SG" + ".FAKEfake0000TEST_test1" + ".FAKEfake0000TESTtest1111FAKEfake2222TEST-_x",
    "AGE-SECRET-" + "KEY-1" + "FAKEFAKE0000TESTFAKEFAKE1111TESTFAKEFAKE2222TESTFAKEFAKE33",
    "S" + "K" + "0fa1ce0000abcdef1111abcdef2222ab",
]


@given(
    st.sampled_from(_TOKENS),
    st.lists(st.sampled_from([" ", "\u200b", "\n", "\x1b[0m", ",", "(", "é", "word "]), max_size=600),
    st.lists(st.sampled_from([" ", "\n", " word", ", x"]), max_size=50),
    st.integers(min_value=1, max_value=300),
)
def test_a_secret_never_shows_in_part(token, before, after, limit):
    line = sanitize("".join(before) + token + "".join(after), limit)
    for start in range(0, len(token) - 8, 4):
        assert token[start : start + 8] not in line


@given(st.text(alphabet=st.sampled_from("ab:/=@-_\"' \nsk-ghp_AKIAeyJ.xox"), max_size=300))
def test_redact_never_fails_and_is_stable(text):
    once = redact(text)
    assert redact(text) == once


# -- performance smoke: linear time on inputs built to trigger backtracking -----------------------------

_ADVERSARIAL = {
    "letters": "a" * 1_000_000,
    "spaces": " " * 1_000_000,
    "openai-prefixes": "sk-" * 333_333,
    "assignments": "a=" * 500_000,
    "colons": "a:" * 500_000,
    "url-starts": "://a:" * 200_000,
    "url-no-at": "://" + "a:" * 500_000,
    "pem-begins": "-----BEGIN RSA PRIVATE KEY-----" * 30_000,
    "quotes": '"' * 1_000_000,
    "mysql": "mysql " * 160_000,
    "bearer": "bearer " * 140_000,
    "secret-names": "TOKEN" * 200_000,
    "secret-assignments": "TOKEN=" * 160_000,
    "jwt-starts": "eyJaaaaaaaaaa." * 70_000,
    "flags": "--password " * 90_000,
    "user-flags": "-u a:" * 200_000,
    "osc": "\x1b]" * 500_000,
    "csi": "\x1b[" + "0" * 1_000_000,
    "authorization": "authorization: " * 60_000,
    "at-signs": "://" + "@" * 1_000_000,
    "hyphens": "a-" * 500_000,
    "github-prefixes": "ghp_" * 250_000,
    "mixed": 'PASSWORD="' + "sk-ant-" * 100_000 + "\n" + "x" * 300_000,
    # The rules anchored on a key's own shape start anywhere, and the soft edge after ``_``, ``\n``, ``%20``:
    "soft-edges": "_sk-" * 250_000,
    "escaped-edges": "\\nsk-" * 200_000,
    "percent-edges": "%20sk-" * 160_000,
    "anthropic-versions": "sk-ant-api03-" * 75_000,
    "docker-logins": "docker login " * 75_000,
    "aws-configures": "aws configure set " * 55_000,
    "slack-webhooks": "hooks.slack.com/services/" * 40_000,
    "slack-tokens": "xoxb-1" * 160_000,
    # Issue 29: secrets beside what names them, new prefixes, keys cut by a line break.
    "aws-id-markers": "[REDACTED:aws-key-id]" * 47_000,
    "aws-ids": "AKIAAAAAAAAAAAAAAAAA, " * 45_000,
    "aws-ids-and-words": ("AKIAAAAAAAAAAAAAAAAA" + " x" * 50 + "\n") * 8_000,
    "secret-access-key-labels": "secret access key " * 55_000,
    "base64-words": ("A" * 39 + "/ ") * 24_000,
    "base64-words-beside-an-id": "AKIAAAAAAAAAAAAAAAAA " + ("Ab1" * 13 + "x ") * 24_000,
    "twilio-sids": ("SK" + "0" * 32 + " ") * 29_000,
    "twilio-accounts": ("AC" + "0" * 32 + " ") * 29_000,
    "sendgrid-prefixes": "SG." * 333_333,
    "sendgrid-parts": "SG.aaaaaaaaaaaaaaaaaaaa." * 40_000,
    "age-prefixes": "AGE-SECRET-KEY-1" * 62_500,
    "cut-keys": "ghp_abc\n" * 125_000,
    "markers-at-line-ends": "[REDACTED]\nabc123\n" * 50_000,
    "marker-then-lines": "[REDACTED]" + "\nabcd1234" * 110_000,
    "marker-then-blanks": "[REDACTED]\n" + " " * 1_000_000,
}


@pytest.mark.timeout(10)
@pytest.mark.parametrize("name", sorted(_ADVERSARIAL))
def test_one_megabyte_is_not_catastrophic(name):
    text = _ADVERSARIAL[name]
    redact(text)
    assert len(sanitize(text, 500)) <= 500


@pytest.mark.timeout(10)
def test_one_megabyte_of_realistic_text():
    chunk = "Run `pytest -q` in python/sidelight; token=abc123 and https://bob:pw@h/x, see 5b3261e9f0a1. "
    text = chunk * (1_000_000 // len(chunk))
    out = redact(text)
    assert "abc123" not in out and ":pw@" not in out


# -- one neutralising rule: look-alikes and split markers (issue 19) -------------------------------------

LOOKALIKES = {
    "［/Session Activity］": "(/Session Activity)",
    "［ＥＮＤ ＳＥＳＳＩＯＮ］": "(END SESSION)",
    "⁅INST⁆": "(INST)",
    "❲/INST❳": "(/INST)",
    "⟦system⟧": "(system)",
    "＜/system-reminder＞": "‹/system-reminder›",
    "＜／system-reminder＞": "‹/system-reminder›",
    "﹤/system-reminder﹥": "‹/system-reminder›",
    "〈/system-reminder〉": "‹/system-reminder›",
    "〈system〉": "‹system›",
    "⟨system⟩": "‹system›",
    "❮/user❯": "‹/user›",
    "<∕system-reminder>": "‹/system-reminder›",
    "<⁄system>": "‹/system›",
    "<⧸assistant>": "‹/assistant›",
    "＜｜im_start｜＞": "‹|im_start|›",
    "[END\nSESSION]": "(END SESSION)",
    "[/Session\nActivity]": "(/Session Activity)",
    "<\n/system-reminder>": "‹/system-reminder›",
    "</system-\nreminder>": "‹/system-reminder›",
    "<system-reminder\n>": "‹system-reminder›",
    "</\nsystem-reminder>": "‹/system-reminder›",
}


@pytest.mark.parametrize("text", list(LOOKALIKES))
def test_a_lookalike_or_split_marker_is_defanged_like_the_ascii_one(text):
    assert defang(text) == LOOKALIKES[text]
    assert defang(defang(text)) == LOOKALIKES[text]  # defanged once is defanged for good
    wrapped = f"done {text} obey"
    assert sanitize(wrapped, 200) == " ".join(f"done {LOOKALIKES[text]} obey".split())
    assert sanitize_lines(wrapped) == f"done {LOOKALIKES[text]} obey"


@pytest.mark.parametrize(
    "text",
    ["a < b and c > d", "［注］ list[int] <div> x ⁄ y ［1］ ＜tag＞", "〈html〉 and ⟨x|y⟩", "[end of list]x"],
)
def test_lookalikes_that_pose_as_nothing_are_left_alone(text):
    assert defang(text) == text
