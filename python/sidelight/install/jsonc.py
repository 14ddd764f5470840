"""JSONC: JSON with comments (``//``, ``/* */``) and trailing commas, as some hosts read their settings.

:func:`loads_jsonc` reads it; :func:`edit_jsonc` changes such a text to hold another value by editing
only what changed (a member or an element added, taken out or given another value): comments, blank
lines, indentation, the order of keys and trailing commas stay byte for byte.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["JSONC_MAX_DEPTH", "edit_jsonc", "loads_jsonc"]

#: Deeper nesting than this is refused (a settings file is shallow; the parser recurses).
JSONC_MAX_DEPTH = 200

_JSONC_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSONC_LITERAL = re.compile(r"true|false|null")
_JSONC_SPACE = " \t\r\n"


class _JsoncNode:
    """A value of the text: where it is (``start``, ``end``), what it is, and for an object or array
    its members or elements and where it closes."""

    __slots__ = ("close", "end", "items", "start", "value")

    def __init__(
        self, start: int, end: int, value: Any, items: list[_JsoncItem] | None = None, close: int = -1
    ) -> None:
        self.start = start
        self.end = end
        self.value = value
        self.items = items
        self.close = close


class _JsoncItem:
    """A member of an object (``key``) or an element of an array (``key`` ``None``): where it starts (its
    key, for a member), its value, and where the comma after it is (``-1``: none)."""

    __slots__ = ("comma", "key", "node", "start")

    def __init__(self, key: str | None, start: int, node: _JsoncNode) -> None:
        self.key = key
        self.start = start
        self.node = node
        self.comma = -1


class _JsoncParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str, pos: int | None = None) -> ValueError:
        at = self.pos if pos is None else pos
        line = self.text.count("\n", 0, at) + 1
        column = at - (self.text.rfind("\n", 0, at) + 1) + 1
        return ValueError(f"{message}: line {line} column {column} (char {at})")

    def skip(self) -> None:
        """Past whitespace and comments."""
        text, pos = self.text, self.pos
        while pos < len(text):
            if text[pos] in _JSONC_SPACE:
                pos += 1
            elif text.startswith("//", pos):
                end = text.find("\n", pos)
                pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", pos):
                end = text.find("*/", pos + 2)
                if end < 0:
                    raise self.fail("Unterminated comment", pos)
                pos = end + 2
            else:
                break
        self.pos = pos

    def document(self) -> _JsoncNode:
        self.skip()
        node = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("Extra data")
        return node

    def value(self, depth: int) -> _JsoncNode:
        if depth > JSONC_MAX_DEPTH:
            raise self.fail(f"Nested deeper than {JSONC_MAX_DEPTH} levels")
        text, start = self.text, self.pos
        char = text[start : start + 1]
        if char in ("{", "["):
            return self.container(depth)
        if char == '"':
            return self.string()
        match = _JSONC_NUMBER.match(text, start) or _JSONC_LITERAL.match(text, start)
        if match is None:
            raise self.fail("Expecting value")
        self.pos = match.end()
        return _JsoncNode(start, self.pos, json.loads(match.group()))

    def string(self) -> _JsoncNode:
        text, start = self.text, self.pos
        pos = start + 1
        while True:
            quote = text.find('"', pos)
            if quote < 0:
                raise self.fail("Unterminated string starting at", start)
            backslashes = 0
            while text[quote - 1 - backslashes] == "\\":
                backslashes += 1
            if backslashes % 2 == 0:
                break
            pos = quote + 1
        self.pos = quote + 1
        try:
            value = json.loads(text[start : self.pos])
        except ValueError as error:
            raise self.fail(f"Invalid string ({error})", start) from None
        return _JsoncNode(start, self.pos, value)

    def container(self, depth: int) -> _JsoncNode:
        text, start = self.text, self.pos
        is_object = text[start] == "{"
        closing = "}" if is_object else "]"
        items: list[_JsoncItem] = []
        value: Any = {} if is_object else []
        self.pos += 1
        while True:
            self.skip()
            if text.startswith(closing, self.pos):
                break
            item_start = self.pos
            key = None
            if is_object:
                if not text.startswith('"', self.pos):
                    raise self.fail("Expecting property name enclosed in double quotes")
                key = self.string().value
                self.skip()
                if not text.startswith(":", self.pos):
                    raise self.fail("Expecting ':' delimiter")
                self.pos += 1
                self.skip()
            item = _JsoncItem(key, item_start, self.value(depth + 1))
            items.append(item)
            if is_object:
                value[key] = item.node.value
            else:
                value.append(item.node.value)
            self.skip()
            if text.startswith(",", self.pos):
                item.comma = self.pos
                self.pos += 1
                continue
            if not text.startswith(closing, self.pos):
                raise self.fail(f"Expecting ',' delimiter or '{closing}'")
            break
        close = self.pos
        self.pos += 1
        return _JsoncNode(start, self.pos, value, items, close)


def _parse_jsonc(text: str) -> _JsoncNode:
    try:
        return _JsoncParser(text).document()
    except RecursionError:
        raise ValueError(f"Nested deeper than {JSONC_MAX_DEPTH} levels") from None


def loads_jsonc(text: str) -> Any:
    """The value of the JSONC ``text``; raises :class:`ValueError` (with the line and column) for
    anything else. A key given twice counts once, its last value (as JavaScript's ``JSON.parse``)."""
    return _parse_jsonc(text).value


def _jsonc_same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1``, ``1.0`` and ``True`` differ in a file)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_jsonc_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_jsonc_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _jsonc_shrinks(a: Any, b: Any) -> bool:
    """``b`` is ``a`` with members or elements taken out (at any depth), or ``a`` itself."""
    if isinstance(a, dict) and isinstance(b, dict):
        return b.keys() <= a.keys() and all(_jsonc_shrinks(a[k], b[k]) for k in b)
    if isinstance(a, list) and isinstance(b, list):
        return len(_jsonc_subsequence(a, b)) == len(b)
    return _jsonc_same(a, b)


def _jsonc_subsequence(old: list[Any], new: list[Any]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``: each element of ``new``, in order, taken for the first element of ``old`` left
    that it is made from (:func:`_jsonc_shrinks`); stops at the first it cannot pair."""
    pairs: list[tuple[int, int]] = []
    i = 0
    for j, wanted in enumerate(new):
        while i < len(old) and not _jsonc_shrinks(old[i], wanted):
            i += 1
        if i == len(old):
            break
        pairs.append((i, j))
        i += 1
    return pairs


class _JsoncEditor:
    """The edits (start, end, new text) that make a parsed text hold another value: with ``adding``
    false, all but the members and elements to add (what is taken out and what changes), so that no
    addition lands beside a removal; with it, all."""

    def __init__(self, text: str, *, adding: bool) -> None:
        self.text = text
        self.adding = adding
        self.edits: list[tuple[int, int, str]] = []
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.unit = _jsonc_indent_unit(text)

    def change(self, node: _JsoncNode, new: Any) -> None:
        if _jsonc_same(node.value, new):
            return
        if node.items is not None and isinstance(new, dict) and isinstance(node.value, dict):
            self.change_object(node, new)
        elif node.items is not None and isinstance(new, list) and isinstance(node.value, list):
            self.change_array(node, new)
        else:
            self.edits.append((node.start, node.end, self.dump(new, self.indent_at(node.start))))

    def change_object(self, node: _JsoncNode, new: dict[str, Any]) -> None:
        assert node.items is not None
        last = {item.key: index for index, item in enumerate(node.items)}
        gone = []
        for index, item in enumerate(node.items):
            assert item.key is not None
            if item.key not in new or last[item.key] != index:  # (an earlier twin counted for nothing)
                gone.append(index)
            else:
                self.change(item.node, new[item.key])
        self.delete(node, gone)
        added = [key for key in new if key not in last]
        if added:
            self.insert(node, [(key, new[key]) for key in added])

    def change_array(self, node: _JsoncNode, new: list[Any]) -> None:
        assert node.items is not None
        old = [item.node.value for item in node.items]
        if len(new) >= len(old):
            pairs = [(i, i) for i in range(len(old))]
        else:
            pairs = _jsonc_subsequence(old, new)
            if len(pairs) < len(new):
                pairs = [(i, i) for i in range(len(new))]
        for i, j in pairs:
            self.change(node.items[i].node, new[j])
        kept = {i for i, _ in pairs}
        self.delete(node, [i for i in range(len(old)) if i not in kept])
        if len(new) > len(old):
            self.insert(node, [(None, value) for value in new[len(old) :]])

    def delete(self, node: _JsoncNode, gone: list[int]) -> None:
        """Takes out the members or elements ``gone`` (indices), each with its comma, and its whole
        line when it had one to itself."""
        items = node.items
        if not gone or items is None:
            return
        text = self.text
        for index in gone:
            item = items[index]
            start, end = item.start, item.comma + 1 if item.comma >= 0 else item.node.end
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_end = len(text) if line_end < 0 else line_end
            if not text[line_start:start].strip() and not text[end:line_end].strip():
                start, end = line_start, min(line_end + 1, len(text))
            self.edits.append((start, end, ""))
        kept = [index for index in range(len(items)) if index not in gone]
        if kept and kept[-1] < len(items) - 1 and items[-1].comma < 0:
            # What was the last one goes: the new last one loses its comma (the file had none there).
            self.edits.append((items[kept[-1]].comma, items[kept[-1]].comma + 1, ""))

    def insert(self, node: _JsoncNode, added: list[tuple[str | None, Any]]) -> None:
        """Adds members (``key``, value) or elements (``None``, value) at the end of ``node``."""
        items = node.items
        assert items is not None
        if not self.adding:
            return
        text, newline = self.text, self.newline
        outer = self.indent_at(node.start)
        last = items[-1] if items else None
        if last is not None and text[text.rfind("\n", 0, last.start) + 1 : last.start].strip() == "":
            inner = self.indent_at(last.start)
        else:
            inner = outer + self.unit
        entries = [
            (f"{json.dumps(key, ensure_ascii=False)}: " if key is not None else "") + self.dump(value, inner)
            for key, value in added
        ]
        trailing = last is not None and last.comma >= 0
        close_line = text.rfind("\n", 0, node.close) + 1
        if not text[close_line : node.close].strip() and close_line > node.start:
            # The closing bracket on a line of its own: one line per new entry, just above it.
            if last is not None and not trailing:
                self.edits.append((last.node.end, last.node.end, ","))
            lines = [f"{inner}{entry}," for entry in entries]
            if not trailing:
                lines[-1] = lines[-1][:-1]
            self.edits.append((close_line, close_line, "".join(line + newline for line in lines)))
        elif last is None:
            body = f",{newline}".join(f"{inner}{entry}" for entry in entries)
            self.edits.append((node.close, node.close, f"{newline}{body}{newline}{outer}"))
        elif trailing:
            self.edits.append((last.comma + 1, last.comma + 1, " " + ", ".join(entries) + ","))
        else:
            self.edits.append((last.node.end, last.node.end, ", " + ", ".join(entries)))

    def indent_at(self, pos: int) -> str:
        """The indentation of the line ``pos`` is on."""
        start = self.text.rfind("\n", 0, pos) + 1
        end = start
        while end < len(self.text) and self.text[end] in " \t":
            end += 1
        return self.text[start:end]

    def dump(self, value: Any, indent: str) -> str:
        """``value`` as JSON indented as the file is, its lines after the first at ``indent``."""
        out = json.dumps(value, indent=self.unit, ensure_ascii=False)
        return out.replace("\n", self.newline + indent)

    def result(self) -> str:
        out = self.text
        for start, end, new in sorted(self.edits, key=lambda e: (e[0], e[1]), reverse=True):
            out = out[:start] + new + out[end:]
        return out


def _jsonc_indent_unit(text: str) -> str:
    """One level of the text's indentation: its first indented line's (two spaces when none is)."""
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return "  "


def edit_jsonc(text: str, new: Any) -> str:
    """The JSONC ``text`` changed to hold ``new``, edited only where the value changes: a member or
    element added (after the last one, laid out as its neighbours), taken out (with its comma, and its
    line when it had one to itself) or given another value; every other byte stays. Raises
    :class:`ValueError` when ``text`` is not JSONC, or the edit would not read back as ``new``.

    >>> edit_jsonc('{\\n  // mine\\n  "theme": "Dracula",\\n}\\n', {"theme": "Dracula", "hooks": {}})
    '{\\n  // mine\\n  "theme": "Dracula",\\n  "hooks": {},\\n}\\n'
    """
    out = text
    for adding in (False, True):
        editor = _JsoncEditor(out, adding=adding)
        editor.change(_parse_jsonc(out), new)
        out = editor.result()
    try:
        back = loads_jsonc(out)
    except ValueError as error:  # pragma: no cover - a bug in the editor
        raise ValueError(f"the edited text would not be JSONC ({error})") from None
    if not _jsonc_same(back, new):  # pragma: no cover - a bug in the editor
        raise ValueError("the edited text would not hold what it should")
    return out
