"""Token counting: a fast deterministic estimate, replaceable by a plugin.

``count_tokens(text)`` estimates how many tokens a BPE tokenizer (the ``cl100k``/``o200k`` family, and
Claude's, which count within a few percent of them) makes of ``text``. It walks the text once with a
regular expression over word pieces, numbers, punctuation and whitespace, the units BPE merges within
and never across, and charges each piece by its length, so English prose and source code both come out
near the real count (calibrated on prose, Python, JSON and shell; see ``tests/test_tokens.py``), where
``len(text) / 4`` is off by a third on code.

A plugin can bring an exact tokenizer through ``sidelight_token_counters``; which counter is used is
chosen by name with ``SIDELIGHT_TOKEN_COUNTER`` or ``token_counter = "NAME"`` in the config file
(default: ``estimate``, the built-in one). An unknown name falls back to the estimate with a warning:
a budget is never left uncounted.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Final

from sidelight._fast.logs import get_logger

if TYPE_CHECKING:
    from collections.abc import Callable

    from sidelight.config import Settings
    from sidelight.plugins import Plugins

__all__ = ["DEFAULT_COUNTER", "ENV_VAR", "count_tokens", "estimate_tokens", "get_counter"]

logger = get_logger(__name__)

#: The built-in counter's name.
DEFAULT_COUNTER: Final = "estimate"
#: The environment variable that names the counter to use.
ENV_VAR: Final = "SIDELIGHT_TOKEN_COUNTER"

# The pieces BPE tokenizers pre-split text into, after the GPT-4 (``cl100k``) split pattern: a run of
# letters with at most one leading non-letter (`` the``, ``.append``, ``_entries``), up to three digits,
# a punctuation run with a leading space and trailing new lines, new lines with the spaces before them,
# and other whitespace. A token never crosses two pieces.
_PIECES: Final = re.compile(
    r"""
      (?:[^\w\r\n]|_)?[^\W\d_]+     # letters, with one leading space, punctuation or underscore
    | \d{1,3}                     # numbers go in groups of up to three digits
    | \ ?(?:[^\s\w]|_)+[\r\n]*     # punctuation run
    | \s*[\r\n]+                  # new lines (with the spaces before them)
    | \s+(?!\S)                   # trailing spaces, indentation
    | \s+
    """,
    re.VERBOSE,
)
_UPPER: Final = re.compile(r"[A-Z][a-z]")


def estimate_tokens(text: str) -> int:
    """The built-in estimate: deterministic, no dependency, a few MB/s.

    Each piece costs what ``cl100k`` charges such a piece on average (measured on prose, Python, Rust,
    TypeScript, JSON transcripts and chat): a word of up to six letters is one token and longer words
    grow slowly; a new line with indentation is two; punctuation runs of three or more split.
    """
    if not text:
        return 0
    total = 0.0
    for match in _PIECES.finditer(text):
        piece = match.group()
        first = piece[-1]
        if first.isalpha():
            letters = len(piece) if piece[0].isalpha() else len(piece) - 1
            if not piece.isascii():
                # Other scripts: about one token per character (CJK and most alphabets outside Latin);
                # accented Latin about one per two letters.
                total += letters if not first.isascii() else max(1.0, letters / 2.0)
                continue
            # camelCase words split where a capital starts a new part; random strings (ids, base64)
            # switch case all the time and cost about a token per two letters.
            humps = len(_UPPER.findall(piece, 1))
            if humps * 4 > letters:
                total += letters / 2.0
                continue
            if letters <= _SHORT_WORD:
                cost = 1.0
            elif letters <= _LONG_WORD:
                cost = 1.0 + (letters - _SHORT_WORD) * 0.075
            else:
                cost = letters / 8.0
            total += max(cost, 1.0 + humps * 0.8)
        elif first.isdigit() or piece[0] in "\r\n" or piece.strip(" \t") == "":
            total += 1.0
        elif not piece.isascii():
            # Symbols outside ASCII (dashes, arrows, emoji): about a token each.
            total += max(1.0, len(piece.strip()) * 1.0)
        else:
            size = len(piece.strip())
            if size <= _SHORT_PUNCT:
                total += 1.0 + max(0, size - 2) * 0.3
            else:
                total += size * 0.6
    return max(1, round(total))


_SHORT_WORD: Final = 6
_LONG_WORD: Final = 14
_SHORT_PUNCT: Final = 5


def count_tokens(text: str, plugins: Plugins | None = None) -> int:
    """How many tokens ``text`` is, by the chosen counter (the built-in estimate without ``plugins``)."""
    if plugins is None:
        return estimate_tokens(text)
    return get_counter(plugins)(text)


def get_counter(
    plugins: Plugins | None = None, name: str | None = None, settings: Settings | None = None
) -> Callable[[str], int]:
    """The counting function named ``name`` (else by ``SIDELIGHT_TOKEN_COUNTER``, the config file's
    ``token_counter``, else the estimate). An unknown name warns and falls back to the estimate."""
    if name is None:
        name = _configured_name(settings)
    if name == DEFAULT_COUNTER or plugins is None:
        return estimate_tokens
    spec = plugins.token_counters().get(name)
    if spec is None:
        known = ", ".join(sorted(plugins.token_counters())) or DEFAULT_COUNTER
        logger.warning("unknown token counter %r (known: %s); using the estimate", name, known)
        return estimate_tokens
    return spec.count


def _configured_name(settings: Settings | None) -> str:
    name = os.environ.get(ENV_VAR, "").strip()
    if name:
        return name
    if settings is None:
        # Reading the config file only when it names a counter: hooks are start-up-time sensitive.
        from sidelight.config import ConfigError, Settings

        try:
            settings = Settings.load()
        except ConfigError:
            return DEFAULT_COUNTER
    value = settings.extra.get("token_counter")
    return str(value).strip() if isinstance(value, str) and value.strip() else DEFAULT_COUNTER
