"""The conformance checks: decoding invariants for formats, listing invariants for resolvers, the
digest's cap. Each ``check_*`` function returns a list of problems, one line each (empty: conforms).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from sidelight.config import Settings
    from sidelight.plugins import Plugins
    from sidelight.records import FormatSpec, ResolverSpec, Session
    from sidelight.types import Activity

__all__ = [
    "RESULT_ENTRIES",
    "UNKNOWN_ENTRIES",
    "FormatConformance",
    "ResolverConformance",
    "check_digest",
    "check_format",
    "check_plugins",
    "check_resolver",
]

#: Lines a decoder must tolerate between real ones without counting anything: entries of a type it
#: has never seen, and objects that are not entries at all.
UNKNOWN_ENTRIES: tuple[bytes, ...] = (
    b'{"type":"sidelight-conformance-unknown","payload":{"nested":[1,{"role":"user","content":"x"}]}}',
    b'{"sidelight_conformance":true,"items":[],"n":-1.5e3,"ok":null}',
)

#: The fields of a scan that must not change when lines are read in parts, or with unknown ones between.
COUNTED = (
    "messages",
    "tools",
    "categories",
    "files_touched",
    "first_user_text",
    "last_user_text",
    "last_assistant_text",
    "first_timestamp",
    "last_timestamp",
    "session_id",
    "cwd",
    "title",
)


def _counts(activity: Activity) -> dict[str, Any]:
    return {name: getattr(activity, name) for name in COUNTED}


def _merged(first: Activity, second: Activity) -> dict[str, Any]:
    """What one scan of both ranges would say, from a scan of each (the ranges do not share a message)."""
    tools = dict(first.tools)
    for name, n in second.tools.items():
        tools[name] = tools.get(name, 0) + n
    files = dict.fromkeys(first.files_touched)
    files.update(dict.fromkeys(second.files_touched))
    return {
        "messages": type(first.messages)(
            first.messages.user + second.messages.user, first.messages.assistant + second.messages.assistant
        ),
        "tools": tools,
        "categories": type(first.categories)(
            *(
                getattr(first.categories, c) + getattr(second.categories, c)
                for c in ("edit", "read", "command", "other")
            )
        ),
        "files_touched": tuple(files),
        "first_user_text": first.first_user_text or second.first_user_text,
        "last_user_text": second.last_user_text or first.last_user_text,
        "last_assistant_text": second.last_assistant_text or first.last_assistant_text,
        "first_timestamp": first.first_timestamp or second.first_timestamp,
        "last_timestamp": second.last_timestamp or first.last_timestamp,
        "session_id": first.session_id or second.session_id,
        "cwd": first.cwd or second.cwd,
        "title": second.title or first.title,
    }


#: What a scan in parts must count as one scan does. Tool counts are not in it: a cursor remembers the
#: newest message id but not the tool-call ids, so a format whose agent writes a message again with its
#: tool calls (Gemini) counts a call again when the copy falls after the cursor (docs/plugins.md).
SPLIT = tuple(k for k in COUNTED if k not in ("tools", "categories", "files_touched"))


def _diff(
    label: str, got: dict[str, Any], want: dict[str, Any], keys: tuple[str, ...] = COUNTED
) -> list[str]:
    return [
        f"{label}: {key} is {got[key]!r}, expected {want[key]!r}" for key in keys if got[key] != want[key]
    ]


def _complete_lines(data: bytes) -> list[bytes]:
    end = data.rfind(b"\n")
    return [line for line in data[: end + 1].split(b"\n")[:-1] if line.strip()] if end >= 0 else []


def check_format(
    spec: FormatSpec,
    samples: Sequence[Path] | None = None,
    injected_lines: Iterable[str | bytes] = (),
) -> list[str]:
    """The decoding invariants of ``spec`` over sample transcripts (default: ``spec.samples``).

    The format must register (a layout the core compiles); on every sample: no line is malformed;
    a second scan from the cursor finds nothing; reading the file in two parts counts what one scan
    counts; a half-written last line is held back and counted once when complete; unknown entries
    between the lines change no count; no counted text starts with one of ``injected_markers``; a
    format with both a layout and a ``decode`` function counts the same with either, and gives the
    same tool calls the same results (the last :data:`RESULT_ENTRIES` entries). Over all samples
    at least one prompt and one reply must be found (a layout whose paths are wrong finds nothing and
    says nothing). ``injected_lines`` are lines in which sidelight's own injected text appears in this
    format's transcripts: appended to a sample, they must add no message.
    """
    from sidelight.formats import FormatDeclarationError, categories_for, register_format

    name = spec.name
    problems: list[str] = []
    try:
        register_format(spec)
    except FormatDeclarationError as error:
        return [f"format {name}: {error}"]
    from sidelight import _core

    if spec.decoder not in _core.FORMATS and spec.decoder not in _core.declared_formats():
        problems.append(f"format {name}: decoder {spec.decoder!r} is neither built in nor declared")
        return problems
    try:
        categories_for(spec.decoder, spec.categories)
    except ValueError as error:
        problems.append(f"format {name}: categories: {error}")
    files = list(spec.samples if samples is None else samples)
    if not files:
        return problems
    found_user = found_reply = False
    work = Path(tempfile.mkdtemp(prefix="sidelight-conformance-"))
    try:
        for k, sample in enumerate(files):
            try:
                data = Path(sample).read_bytes()
            except OSError as error:
                problems.append(f"format {name}: sample {sample}: {error.strerror or error}")
                continue
            found = _check_sample(spec, Path(sample), data, work / f"s{k}", problems)
            found_user |= found[0]
            found_reply |= found[1]
            for line in injected_lines:
                raw = line.encode() if isinstance(line, str) else line
                problems += _check_injected(spec, Path(sample), data, raw, work / f"i{k}")
        if not found_user:
            problems.append(
                f"format {name}: no sample has a prompt the format finds (check role, user_roles, content)"
            )
        if not found_reply:
            problems.append(
                f"format {name}: no sample has a reply the format finds (check role, assistant_roles)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return problems


def _scan(path: Path, fmt: str, cursor: Any = None) -> Activity:
    from sidelight.engine.scanning import scan

    return scan(path, fmt, cursor, threads=1)


def _check_sample(
    spec: FormatSpec, sample: Path, data: bytes, work: Path, problems: list[str]
) -> tuple[bool, bool]:
    label = f"format {spec.name}: sample {sample.name}"
    fmt = spec.decoder
    full = _scan(sample, fmt)
    if full.skipped.malformed_json or full.skipped.invalid_utf8:
        problems.append(
            f"{label}: {full.skipped.malformed_json} malformed and "
            f"{full.skipped.invalid_utf8} non-UTF-8 lines"
        )
    want = _counts(full)
    again = _scan(sample, fmt, full.cursor)
    if again.lines or again.messages.user or again.messages.assistant or any(again.tools.values()):
        problems.append(f"{label}: a second scan from the cursor read {again.lines} lines again")
    markers = tuple(m for m in spec.injected_markers if m)
    for field in ("first_user_text", "last_user_text", "last_assistant_text"):
        text = getattr(full, field)
        if markers and text and text.lstrip().startswith(markers):
            problems.append(f"{label}: {field} is sidelight's own injected text: {text[:60]!r}")
    lines = _complete_lines(data)
    work.mkdir(parents=True)
    # Two parts: the first half of the lines, then the rest appended.
    if len(lines) >= 2:
        half = len(lines) // 2
        path = work / "parts.jsonl"
        path.write_bytes(b"".join(line + b"\n" for line in lines[:half]))
        first = _scan(path, fmt)
        with path.open("ab") as file:
            file.write(b"".join(line + b"\n" for line in lines[half:]))
        second = _scan(path, fmt, first.cursor)
        if second.reset is not None:
            problems.append(f"{label}: appending lines made the scan start over ({second.reset})")
        problems += _diff(f"{label}, read in two parts", _merged(first, second), want, SPLIT)
    # A half-written last line is held back, then counted once.
    if lines:
        path = work / "partial.jsonl"
        body = b"".join(line + b"\n" for line in lines[:-1])
        last = lines[-1] + b"\n"
        cut = max(1, len(last) // 2)
        path.write_bytes(body + last[:cut])
        first = _scan(path, fmt)
        if first.offset != len(body) or first.pending_bytes != cut:
            problems.append(
                f"{label}: a half-written last line was not held back "
                f"(offset {first.offset}, expected {len(body)}; "
                f"pending {first.pending_bytes}, expected {cut})"
            )
        with path.open("ab") as file:
            file.write(last[cut:])
        second = _scan(path, fmt, first.cursor)
        if second.lines != 1:
            problems.append(f"{label}: the completed last line was read {second.lines} times, expected once")
        problems += _diff(f"{label}, last line completed later", _merged(first, second), want, SPLIT)
    # Unknown entries between the lines change no count.
    path = work / "unknown.jsonl"
    mixed = [UNKNOWN_ENTRIES[0], *(x for line in lines for x in (line, *UNKNOWN_ENTRIES))]
    path.write_bytes(b"".join(line + b"\n" for line in mixed))
    tolerant = _scan(path, fmt)
    problems += _diff(f"{label}, with unknown entries between its lines", _counts(tolerant), want)
    if tolerant.skipped.malformed_json != full.skipped.malformed_json:
        problems.append(f"{label}: unknown entries were counted as malformed lines")
    if spec.layout is not None and spec.decode is not None:
        problems += _check_fallback(spec, sample, want, work)
    return full.messages.user > 0, full.messages.assistant > 0


#: How many of a sample's last entries the results check compares (history reads no more).
RESULT_ENTRIES = 500


def _tool_results(path: Path, fmt: str) -> list[tuple[str | None, str | None, str | None, bool]]:
    """Each tool use among the last entries, with its result as history shows it."""
    from sidelight.engine.scanning import recent_entries

    return [
        (e.tool_name, e.primary_arg, e.result, e.result_error)
        for e in recent_entries(path, fmt, RESULT_ENTRIES)
        if e.role == "tool"
    ]


def _check_fallback(spec: FormatSpec, sample: Path, want: dict[str, Any], work: Path) -> list[str]:
    """The layout and the Python decoder of one format must count the same and find the same results."""
    from sidelight.formats import register_format

    fallback = replace(spec, name=f"{spec.name}--python", decoder="", layout=None, samples=())
    register_format(fallback)
    label = f"format {spec.name}: sample {sample.name}, its decode function against its layout"
    got = _counts(_scan(sample, fallback.decoder))
    problems = _diff(label, got, want)
    by_layout, by_decode = _tool_results(sample, spec.decoder), _tool_results(sample, fallback.decoder)
    if len(by_layout) != len(by_decode):
        problems.append(f"{label}: {len(by_decode)} tool uses in the history, expected {len(by_layout)}")
    for k, (layout, decoded) in enumerate(zip(by_layout, by_decode, strict=False)):
        if layout != decoded:
            problems.append(
                f"{label}: tool use {k + 1} ({layout[0]}) has the result {decoded[2:]!r}, "
                f"expected {layout[2:]!r}"
            )
            break
    return problems


def _check_injected(spec: FormatSpec, sample: Path, data: bytes, line: bytes, work: Path) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    path = work / "injected.jsonl"
    body = b"".join(x + b"\n" for x in _complete_lines(data))
    path.write_bytes(body)
    before = _scan(path, spec.decoder)
    with path.open("ab") as file:
        file.write(line.rstrip(b"\n") + b"\n")
    after = _scan(path, spec.decoder, before.cursor)
    if after.messages.user or after.messages.assistant:
        return [
            f"format {spec.name}: sample {sample.name}: sidelight's injected text was counted as a message: "
            f"{line[:80]!r}"
        ]
    return []


def check_resolver(spec: ResolverSpec, settings: Settings, formats: Iterable[str] | None = None) -> list[str]:
    """The listing invariants of a resolver under ``settings``: it lists without raising, keys and
    names are unique, every path lies inside one of its ``roots``, every session names a known format
    (``formats``, when given) and its own resolver, and ``current`` answers an event with nothing in it
    with ``None`` and an event naming a listed transcript with a listed session (or ``None``)."""
    from sidelight.records import HostEvent

    label = f"resolver {spec.name}"
    try:
        sessions = list(spec.list_sessions(settings))
        roots = [Path(r).resolve() for r in spec.roots(settings)]
    except Exception as error:
        return [f"{label}: listing sessions raised {type(error).__name__}: {error}"]
    problems: list[str] = []
    keys: dict[str, Session] = {}
    names: set[str] = set()
    known = None if formats is None else set(formats)
    for session in sessions:
        if session.key in keys:
            problems.append(f"{label}: two sessions have the key {session.key!r}")
        keys[session.key] = session
        if session.name in names:
            problems.append(f"{label}: two sessions have the name {session.name!r}")
        names.add(session.name)
        if session.resolver != spec.name:
            problems.append(f"{label}: session {session.name} says its resolver is {session.resolver!r}")
        if known is not None and session.format not in known:
            problems.append(f"{label}: session {session.name} has the unknown format {session.format!r}")
        for path in (session.path, *session.extra_paths):
            resolved = Path(path).resolve()
            if not any(resolved.is_relative_to(root) for root in roots):
                problems.append(f"{label}: session {session.name}: {path} is outside its roots")
    try:
        if (
            spec.current(HostEvent(host="sidelight-conformance", event="UserPromptSubmit"), settings)
            is not None
        ):
            problems.append(f"{label}: current() found a session for an event that names none")
        for session in sessions[:20]:
            event = HostEvent(
                host="sidelight-conformance",
                event="UserPromptSubmit",
                session_id=session.id,
                transcript_path=session.path,
            )
            found = spec.current(event, settings)
            if found is not None and found.key not in keys:
                problems.append(
                    f"{label}: current() returned {found.key!r}, which list_sessions() does not list"
                )
    except Exception as error:
        problems.append(f"{label}: current() raised {type(error).__name__}: {error}")
    return problems


def check_digest(plugins: Plugins, settings: Settings, limit: int | None = None) -> list[str]:
    """Every session every resolver lists is scanned and summarized; the digest of them all must stay
    within its cap (``limit``, default 500 characters) and no summarizer may raise."""
    from sidelight.engine.scanning import scan
    from sidelight.features.digest import DEFAULT_LIMIT, DigestLine, render_digest
    from sidelight.records import SessionActivity

    cap = DEFAULT_LIMIT if limit is None else limit
    formats = plugins.formats()
    problems: list[str] = []
    lines: list[DigestLine] = []
    for resolver in plugins.resolvers().values():
        try:
            sessions = list(resolver.list_sessions(settings))
        except Exception:
            continue  # check_resolver says why
        for session in sessions[:50]:
            decoder = formats[session.format].decoder if session.format in formats else session.format
            try:
                activities = [scan(p, decoder, threads=1) for p in (session.path, *session.extra_paths)]
            except (OSError, ValueError) as error:
                problems.append(f"resolver {resolver.name}: session {session.name}: cannot scan: {error}")
                continue
            activity = SessionActivity.merge(session, activities)
            for summarizer in plugins.summarizers().values():
                try:
                    text = summarizer.summarize(activity)
                except Exception as error:
                    problems.append(f"summarizer {summarizer.name}: raised {type(error).__name__}: {error}")
                    continue
                if text is not None and not isinstance(text, str):
                    problems.append(
                        f"summarizer {summarizer.name}: returned {type(text).__name__}, not str or None"
                    )
                    continue
                if text:
                    lines.append(DigestLine(text, activity.last_timestamp, activity.age_seconds))
                    break
    digest = render_digest(lines, limit=cap)
    if digest is not None and len(digest) > cap:
        problems.append(f"digest: {len(digest)} characters, over its cap of {cap}")
    return problems


def check_plugins(plugins: Plugins, settings: Settings, *, digest: bool = True) -> dict[str, list[str]]:
    """The quick checks of ``sidelight plugins --check``: every format (on its shipped samples), every
    resolver, and the digest; problems by the plugin that provides the record."""
    owners: dict[tuple[str, str], str] = {}
    for family in ("formats", "resolvers"):
        hook = getattr(plugins.manager.hook, f"sidelight_{family}")
        for impl in hook.get_hookimpls():
            try:
                for record in impl.function() or ():
                    owners[(family, record.name)] = impl.plugin_name
            except Exception:
                continue
    formats = plugins.formats()  # registers the declared formats: a refused one is a broken plugin
    plugins.resolvers()
    report: dict[str, list[str]] = {}
    for broken in plugins.broken:
        report.setdefault(broken.name, []).append(broken.error)
    for name, spec in formats.items():
        problems = check_format(spec)
        if problems:
            report.setdefault(owners.get(("formats", name), name), []).extend(problems)
    known = set(formats)
    from sidelight import _core

    known.update(_core.FORMATS)
    for name, resolver in plugins.resolvers().items():
        problems = check_resolver(resolver, settings, known)
        if problems:
            report.setdefault(owners.get(("resolvers", name), name), []).extend(problems)
    if digest:
        problems = check_digest(plugins, settings)
        if problems:
            report.setdefault("digest", []).extend(problems)
    return report


class FormatConformance:
    """Subclass in your tests, set ``format`` (a :class:`~sidelight.records.FormatSpec`), optionally
    ``samples`` (default: ``format.samples``) and ``injected_lines``; pytest runs every check."""

    format: ClassVar[FormatSpec]
    samples: ClassVar[Sequence[Path] | None] = None
    injected_lines: ClassVar[Sequence[str | bytes]] = ()

    def test_format_conforms(self) -> None:
        problems = check_format(self.format, self.samples, self.injected_lines)
        assert not problems, "\n".join(problems)

    def test_samples_are_given(self) -> None:
        samples = self.format.samples if self.samples is None else self.samples
        assert samples, (
            f"format {self.format.name}: give sample transcripts (FormatSpec.samples or samples =)"
        )


class ResolverConformance:
    """Subclass in your tests, set ``resolver``, and write the sessions it should find under the
    throwaway HOME in ``make_sessions(home)``; pytest checks the listing and the digest."""

    resolver: ClassVar[ResolverSpec]
    #: The plugin module or object to register in a fresh plugin manager for the digest check.
    plugin: ClassVar[object | None] = None
    #: At least this many sessions must be listed once ``make_sessions`` ran.
    expected_sessions: ClassVar[int] = 1

    def make_sessions(self, home: Path) -> None:
        """Write transcripts under ``home`` where the resolver looks for them."""

    def test_resolver_conforms(self, sidelight_home: Path, sidelight_settings: Settings) -> None:
        self.make_sessions(sidelight_home)
        listed = list(self.resolver.list_sessions(sidelight_settings))
        assert len(listed) >= self.expected_sessions, f"listed {len(listed)} sessions: {listed}"
        problems = check_resolver(self.resolver, sidelight_settings)
        assert not problems, "\n".join(problems)

    def test_digest_within_cap(
        self, sidelight_home: Path, sidelight_settings: Settings, sidelight_plugins: Plugins
    ) -> None:
        self.make_sessions(sidelight_home)
        if self.plugin is not None:
            sidelight_plugins.register(self.plugin)
        problems = check_digest(sidelight_plugins, sidelight_settings)
        assert not problems, "\n".join(problems)
