"""The records written out by hand (:mod:`sidelight._fast._record`) behave as the dataclasses they replace.

:data:`BEFORE` is each class as it was declared with ``@dataclass(frozen=..., slots=True)``: its
options and its fields (name, annotation, default; ``dict`` for ``field(default_factory=dict)``). Each
record is compared with a dataclass made from that declaration, for everything a user of the dataclass
could see: fields and parameters, the signature, repr, equality and hash, frozenness, pickling and
copying, ``dataclasses.replace``/``asdict``, pattern matching, slots.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from typing import Any

import pytest

from sidelight import config, plugins, records, types
from sidelight._fast import _record
from sidelight.engine import reads
from sidelight.features import digest, facts
from sidelight.features.recap import handoff

#: No default.
REQUIRED = object()


class CallableDefault:
    """A default that is a function: the dataclass's, compared with the record's by what they return."""

    def __init__(self, function: Any, *args: Any) -> None:
        self.function, self.args = function, args

    def same(self, other: Any) -> bool:
        return callable(other) and other(*self.args) == self.function(*self.args)


#: (module, class, frozen, eq, repr, fields), fields as (name, annotation, default or REQUIRED, or
#: ``dict`` for a default factory): the dataclasses as they were declared.
BEFORE: list[tuple[Any, str, bool, bool, bool, list[tuple[str, str, Any]]]] = [
    (
        records,
        "Session",
        True,
        True,
        True,
        [
            ("key", "str", REQUIRED),
            ("name", "str", REQUIRED),
            ("path", "Path", REQUIRED),
            ("format", "str", REQUIRED),
            ("group", "str", REQUIRED),
            ("resolver", "str", REQUIRED),
            ("id", "str | None", None),
            ("extra_paths", "tuple[Path, ...]", ()),
            ("cursor_file", "Path | None", None),
        ],
    ),
    (
        records,
        "HostEvent",
        True,
        True,
        True,
        [
            ("host", "str", REQUIRED),
            ("event", "EventName", REQUIRED),
            ("session_id", "str | None", None),
            ("transcript_path", "Path | None", None),
            ("cwd", "Path | None", None),
            ("prompt", "str | None", None),
            ("raw", "Mapping[str, Any]", dict),
        ],
    ),
    (
        records,
        "SessionActivity",
        True,
        True,
        True,
        [
            ("session", "Session", REQUIRED),
            ("user_messages", "int", 0),
            ("assistant_messages", "int", 0),
            ("tools", "Mapping[str, int]", dict),
            ("categories", "Mapping[str, int]", dict),
            ("files_touched", "tuple[str, ...]", ()),
            ("first_user_text", "str | None", None),
            ("last_assistant_text", "str | None", None),
            ("first_timestamp", "str | None", None),
            ("last_timestamp", "str | None", None),
            ("first_look", "bool", False),
            ("age_seconds", "float | None", None),
            ("tool_uses", "tuple[ToolUse, ...]", ()),
            ("cwd", "str | None", None),
            ("shared_files", "tuple[str, ...]", ()),
            ("worktree", "str | None", None),
        ],
    ),
    (
        records,
        "SinkEvent",
        False,
        True,
        True,
        [
            ("kind", "str", REQUIRED),
            ("session", "Session", REQUIRED),
            ("timestamp", "str | None", None),
            ("data", "Mapping[str, Any]", dict),
            ("key", "str | None", None),
        ],
    ),
    (
        records,
        "FormatSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("decoder", "str", ""),
            ("categories", "Mapping[str, str]", dict),
            ("injected_markers", "tuple[str, ...]", ()),
            ("description", "str", ""),
            ("layout", "Layout | None", None),
            ("decode", "Callable[[bytes], Iterable[Event] | None] | None", None),
            ("samples", "tuple[Path, ...]", ()),
            ("title_lines", "tuple[tuple[str, str | None, tuple[str, ...]], ...]", ()),
            ("resumes_beside", "bool", False),
            ("subagent", "Callable[[Path], Subagent | None] | None", None),
            ("tool_output", "Callable[[str], str] | None", None),
        ],
    ),
    (
        records,
        "ResolverSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("list_sessions", "Callable[[Settings], Iterable[Session]]", REQUIRED),
            ("current", "Callable[[HostEvent, Settings], Session | None]", REQUIRED),
            ("roots", "Callable[[Settings], Iterable[Path]]", CallableDefault(lambda settings: (), None)),
            ("description", "str", ""),
            (
                "remote_activity",
                "Callable[[Session, Settings, float, bool], Iterable[SessionActivity]] | None",
                None,
            ),
            ("sources", "Callable[[Settings], Iterable[str]] | None", None),
            ("variables", "tuple[str, ...]", ()),
            ("folders", "Callable[[str, Settings], Sequence[Path]] | None", None),
            ("session_at", "Callable[[Path], Session | None] | None", None),
            ("history_paths", "Callable[[Session], Iterable[Path]] | None", None),
            ("handoff_in_workspace", "Callable[[Path, Settings], bool] | None", None),
        ],
    ),
    (
        records,
        "SummarizerSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("summarize", "Callable[[SessionActivity], str | None]", REQUIRED),
            ("description", "str", ""),
        ],
    ),
    (
        records,
        "InjectorSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("read_event", "Callable[[Mapping[str, Any]], HostEvent | None]", REQUIRED),
            ("render", "Callable[[HostEvent, str | None], str | None]", REQUIRED),
            ("description", "str", ""),
            ("not_typed", "Callable[[HostEvent], bool] | None", None),
            ("refuse", "Callable[[HostEvent, str], str | None] | None", None),
        ],
    ),
    (
        records,
        "SinkSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("emit", "Callable[[SinkEvent], None]", REQUIRED),
            ("description", "str", ""),
            ("emit_many", "Callable[[Sequence[SinkEvent]], None] | None", None),
            ("start", "Callable[[Settings, Plugins], None] | None", None),
            ("stop", "Callable[[], None] | None", None),
        ],
    ),
    (
        records,
        "TokenCounterSpec",
        True,
        True,
        True,
        [("name", "str", REQUIRED), ("count", "Callable[[str], int]", REQUIRED), ("description", "str", "")],
    ),
    (
        records,
        "EmbedderSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("embed", "Callable[[Sequence[str]], Sequence[Sequence[float]]]", REQUIRED),
            ("description", "str", ""),
        ],
    ),
    (
        records,
        "ChunkSummarizerSpec",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("summarize", "Callable[[Chunk], str | None]", REQUIRED),
            ("description", "str", ""),
        ],
    ),
    (
        types,
        "Cursor",
        True,
        True,
        True,
        [
            (name, "int", REQUIRED)
            for name in ("offset", "dev", "inode", "head_len", "head_hash", "tail_hash", "last_message")
        ],
    ),
    (types, "MessageCounts", True, False, False, [("user", "int", 0), ("assistant", "int", 0)]),
    (
        types,
        "CategoryCounts",
        True,
        False,
        False,
        [("edit", "int", 0), ("read", "int", 0), ("command", "int", 0), ("other", "int", 0)],
    ),
    (
        types,
        "SkippedLines",
        True,
        False,
        False,
        [("malformed_json", "int", 0), ("invalid_utf8", "int", 0), ("too_long", "int", 0)],
    ),
    (
        types,
        "ToolUse",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("category", "Category", REQUIRED),
            ("primary_arg", "str | None", REQUIRED),
            ("timestamp", "str | None", REQUIRED),
            ("lines", "int | None", None),
            ("old_text", "str | None", None),
            ("new_text", "str | None", None),
            ("result", "str | None", None),
            ("result_error", "bool", False),
        ],
    ),
    (
        types,
        "Activity",
        True,
        True,
        True,
        [
            ("path", "str", REQUIRED),
            ("format", "Format", REQUIRED),
            ("file_size", "int", REQUIRED),
            ("start_offset", "int", REQUIRED),
            ("offset", "int", REQUIRED),
            ("reset", "ResetReason | None", REQUIRED),
            ("cursor", "Cursor", REQUIRED),
            ("pending_bytes", "int", REQUIRED),
            ("lines", "int", REQUIRED),
            ("bytes_consumed", "int", REQUIRED),
            ("messages", "MessageCounts", REQUIRED),
            ("tools", "Mapping[str, int]", REQUIRED),
            ("categories", "CategoryCounts", REQUIRED),
            ("tool_uses", "tuple[ToolUse, ...]", REQUIRED),
            ("files_touched", "tuple[str, ...]", REQUIRED),
            ("first_user_text", "str | None", REQUIRED),
            ("last_user_text", "str | None", REQUIRED),
            ("last_assistant_text", "str | None", REQUIRED),
            ("first_timestamp", "str | None", REQUIRED),
            ("last_timestamp", "str | None", REQUIRED),
            ("session_id", "str | None", REQUIRED),
            ("cwd", "str | None", REQUIRED),
            ("title", "str | None", REQUIRED),
            ("skipped", "SkippedLines", REQUIRED),
            ("entry_types", "Mapping[str, int]", REQUIRED),
        ],
    ),
    (
        types,
        "Entry",
        True,
        True,
        True,
        [
            ("timestamp", "str | None", REQUIRED),
            ("role", "str", REQUIRED),
            ("text", "str | None", REQUIRED),
            ("tool_name", "str | None", REQUIRED),
            ("primary_arg", "str | None", REQUIRED),
            ("result", "str | None", None),
            ("result_error", "bool", False),
        ],
    ),
    (types, "ScanFailure", True, True, True, [("path", "str", REQUIRED), ("error", "Exception", REQUIRED)]),
    (
        config,
        "Settings",
        True,
        True,
        True,
        [
            ("home", "Path", REQUIRED),
            ("state_dir", "Path", REQUIRED),
            ("scope", "str | frozenset[str]", "repository"),
            ("first_look_bytes", "int", 524288),
            ("time_budget", "float", 2.0),
            ("idle_timeout", "float", 1800.0),
            ("claude_dirs", "tuple[Path, ...]", ()),
            ("pi_dir", "Path | None", None),
            ("codex_dir", "Path | None", None),
            ("volute_dirs", "tuple[Path, ...]", ()),
            ("extra", "Mapping[str, Any]", dict),
            ("redis_url", "str | None", None),
            ("host_id", "str | None", None),
            ("fleet_scope", "str", "default"),
            ("handoff_location", "str", "state"),
            ("prompt_budget", "int", 200),
            ("start_budget", "int", 800),
            ("gemini_dir", "Path | None", None),
            ("qwen_dir", "Path | None", None),
            ("copilot_dir", "Path | None", None),
            ("volute_minds_dir", "Path | None", None),
            ("edit_guard", "str", "refuse-once"),
            ("turn_news", "str", "on"),
        ],
    ),
    (plugins, "BrokenPlugin", True, True, True, [("name", "str", REQUIRED), ("error", "str", REQUIRED)]),
    (
        plugins,
        "PluginInfo",
        True,
        True,
        True,
        [
            ("name", "str", REQUIRED),
            ("version", "str | None", REQUIRED),
            ("hooks", "tuple[str, ...]", REQUIRED),
            ("builtin", "bool", REQUIRED),
        ],
    ),
    (
        plugins,
        "EntryPoint",
        True,
        True,
        True,
        [("name", "str", REQUIRED), ("value", "str", REQUIRED), ("dist_info", "str", REQUIRED)],
    ),
    (
        digest,
        "DigestLine",
        True,
        True,
        True,
        [
            ("text", "str", REQUIRED),
            ("last_timestamp", "str | None", None),
            ("age_seconds", "float | None", None),
            ("conflict", "bool", False),
            ("waited", "int", 0),
        ],
    ),
    (
        reads,
        "TranscriptRead",
        False,
        True,
        True,
        [
            ("session", "Session", REQUIRED),
            ("path", "Path", REQUIRED),
            ("cursor", "Cursor | None", REQUIRED),
            ("first_look", "bool", REQUIRED),
            ("pending", "int", 0),
            ("skipped", "int", 0),
        ],
    ),
    (
        facts,
        "Fact",
        True,
        True,
        True,
        [
            ("id", "str", REQUIRED),
            ("text", "str", REQUIRED),
            ("scope", "Scope", REQUIRED),
            ("created", "float", REQUIRED),
            ("confirmed", "float", REQUIRED),
            ("confirmations", "int", 1),
        ],
    ),
    (
        handoff,
        "Delivery",
        True,
        True,
        True,
        [
            ("text", "str", REQUIRED),
            ("session", "str", REQUIRED),
            ("transcript", "str", REQUIRED),
            ("size", "int", REQUIRED),
        ],
    ),
    (
        handoff,
        "Planned",
        True,
        True,
        True,
        [
            ("text", "str | None", None),
            ("cursors", "Mapping[str, Mapping[str, Any]]", dict),
            ("apply", "Callable[[], bool]", CallableDefault(lambda: True)),
        ],
    ),
]

IDS = [f"{module.__name__}.{name}" for module, name, *_ in BEFORE]


def _reference(cls: type, frozen: bool, eq: bool, repr_: bool, declared: list[tuple[str, str, Any]]) -> Any:
    """The dataclass ``cls`` was: same name, module, bases and declaration."""
    spec: list[Any] = []
    for name, annotation, default in declared:
        if default is REQUIRED:
            spec.append((name, annotation))
        elif default is dict:
            spec.append((name, annotation, dataclasses.field(default_factory=dict)))
        elif isinstance(default, CallableDefault):
            spec.append((name, annotation, dataclasses.field(default=default.function)))
        else:
            spec.append((name, annotation, dataclasses.field(default=default)))
    bases = tuple(b for b in cls.__bases__ if b is not object)
    namespace = {"_keys": cls.__dict__["_keys"]} if "_keys" in cls.__dict__ else None  # the counts' keys
    reference = dataclasses.make_dataclass(
        cls.__name__, spec, bases=bases, namespace=namespace, frozen=frozen, eq=eq, repr=repr_, slots=True
    )
    reference.__module__ = cls.__module__
    return reference


def _values(declared: list[tuple[str, str, Any]], salt: str = "") -> dict[str, Any]:
    """A distinct, hashable, picklable value for every field."""
    values: dict[str, Any] = {}
    for i, (name, annotation, _) in enumerate(declared):
        if annotation == "int" or annotation.startswith("int"):
            values[name] = 100 + i + len(salt)
        elif name == "decoder":
            values[name] = "claude-code" + salt
        elif name == "variables":  # names a hook tells a watcher
            values[name] = (f"X{salt}_DIR",)
        else:
            values[name] = f"{name}-{salt}"
    return values


@pytest.mark.parametrize(("module", "name", "frozen", "eq", "repr_", "declared"), BEFORE, ids=IDS)
def test_a_record_is_declared_once_each_in_annotations_slots_and_init(
    module: Any, name: str, frozen: bool, eq: bool, repr_: bool, declared: list[tuple[str, str, Any]]
) -> None:
    cls = getattr(module, name)
    names = [field_name for field_name, _, _ in declared]
    own = inspect.get_annotations(cls)
    annotations = {k: v for k, v in own.items() if not v.startswith("ClassVar")}
    assert list(annotations) == names
    assert sorted(cls.__dict__["__slots__"]) == sorted(names)
    assert list(inspect.signature(cls).parameters) == names
    assert cls.__record_fields__ == tuple(names)
    assert "__dict__" not in dir(cls) and "__weakref__" not in dir(cls)
    assert not any(isinstance(c, type) and "__dict__" in c.__dict__ for c in cls.__mro__[:-1])


@pytest.mark.parametrize(("module", "name", "frozen", "eq", "repr_", "declared"), BEFORE, ids=IDS)
def test_a_record_behaves_as_the_dataclass_it_replaces(
    module: Any, name: str, frozen: bool, eq: bool, repr_: bool, declared: list[tuple[str, str, Any]]
) -> None:
    cls: Any = getattr(module, name)
    ref = _reference(cls, frozen, eq, repr_, declared)

    # what dataclasses says about the class
    assert dataclasses.is_dataclass(getattr(module, name))
    mine, theirs = dataclasses.fields(cls), dataclasses.fields(ref)
    for field, ref_field, (_, _, declared_default) in zip(mine, theirs, declared, strict=True):
        shown = ("name", "type", "init", "repr", "compare", "hash", "kw_only", "default_factory")
        assert [getattr(field, k) for k in shown] == [getattr(ref_field, k) for k in shown]
        if isinstance(declared_default, CallableDefault):
            assert declared_default.same(field.default)
        else:
            assert field.default == ref_field.default
    params, ref_params = cls.__dataclass_params__, ref.__dataclass_params__
    for option in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(params, option) == getattr(ref_params, option), option
    assert cls.__match_args__ == ref.__match_args__

    # the signature: the same parameters, kinds and defaults (a default factory shows as <factory>)
    signature, ref_signature = inspect.signature(cls), inspect.signature(ref)
    for param, ref_param in zip(
        signature.parameters.values(), ref_signature.parameters.values(), strict=True
    ):
        assert (param.name, param.kind, param.annotation) == (
            ref_param.name,
            ref_param.kind,
            ref_param.annotation,
        )
        if callable(ref_param.default) and ref_param.default is not inspect.Parameter.empty:
            assert callable(param.default)
        else:
            assert repr(param.default) == repr(ref_param.default)

    # instances: defaults, repr, equality, hash
    values = _values(declared)
    required = {n: values[n] for n, _, default in declared if default is REQUIRED or n == "decoder"}
    mine_default, ref_default = cls(**required), ref(**required)
    for field_name, _, default in declared:
        got, want = getattr(mine_default, field_name), getattr(ref_default, field_name)
        assert default.same(got) if isinstance(default, CallableDefault) else got == want
    if any(default is dict for _, _, default in declared):
        other = cls(**required)
        shared = [n for n, _, d in declared if d is dict and getattr(other, n) is getattr(mine_default, n)]
        assert shared == []  # a new dict each
    a, b = cls(**values), ref(**values)
    positional = cls(*values.values())
    assert repr(a) == repr(b)
    assert str(a) == str(b)
    assert (a == cls(**values)) == (b == ref(**values))
    assert positional == a if eq else True
    changed = cls(**_values(declared, salt="x"))
    assert (a == changed) == (b == ref(**_values(declared, salt="x")))
    assert (a != changed) == (b != ref(**_values(declared, salt="x")))
    assert (a == b) is False or not eq  # another class
    if cls.__hash__ is None:
        assert ref.__hash__ is None
    else:
        assert hash(a) == hash(b) == hash(cls(**values))

    # frozen: no field can be set or deleted, nor any other attribute
    for field_name in values:
        if frozen:
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"assign to field '{field_name}'"):
                setattr(a, field_name, 1)
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"delete field '{field_name}'"):
                delattr(a, field_name)
    if frozen:
        # (the dataclass raised a TypeError here, from its __setattr__'s `super()` on a class that
        # slots=True had replaced: a CPython bug)
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.something_else = 1
    else:
        first = next(iter(values))
        setattr(a, first, "changed")
        assert getattr(a, first) == "changed"
        setattr(a, first, values[first])
        with pytest.raises(AttributeError):
            a.something_else = 1

    # pickling and copying
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        if not frozen and protocol < 2:  # as a slotted dataclass that is not frozen
            with pytest.raises(TypeError):
                pickle.dumps(a, protocol)
            continue
        again = pickle.loads(pickle.dumps(a, protocol))
        assert type(again) is cls
        assert [getattr(again, n) for n in values] == list(values.values())
    for copied in (copy.copy(a), copy.deepcopy(a)):
        assert type(copied) is cls
        assert [getattr(copied, n) for n in values] == list(values.values())

    # replace and asdict
    first = next(n for n, _, _ in declared)
    for replace in (dataclasses.replace, _record.replace):
        swapped = replace(a, **{first: values[first] if first == "decoder" else "swapped"})
        assert type(swapped) is cls and getattr(a, first) == values[first]
        assert [getattr(swapped, n) for n in list(values)[1:]] == list(values.values())[1:]
        with pytest.raises(TypeError):
            replace(a, no_such_field=1)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert dataclasses.astuple(a) == dataclasses.astuple(b)

    # pattern matching by position
    match a:
        case cls(x):
            assert x == values[first]
        case _:
            pytest.fail("no match")


def test_replace_gives_other_dataclasses_to_dataclasses_replace() -> None:
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0

    assert _record.replace(Point(1, 2), y=3) == Point(1, 3)
    with pytest.raises(TypeError):
        _record.replace(object())


def test_a_record_class_can_be_subclassed_as_a_dataclass() -> None:
    # a plugin may extend a record with a field of its own, as it could extend the dataclass
    @dataclasses.dataclass(frozen=True, slots=True)
    class Tagged(records.SummarizerSpec):
        tag: str = "t"

    tagged = Tagged("name", str, "description", "mine")
    assert [f.name for f in dataclasses.fields(Tagged)] == ["name", "summarize", "description", "tag"]
    assert tagged.tag == "mine" and tagged.name == "name"
    with pytest.raises(dataclasses.FrozenInstanceError):
        tagged.tag = "other"  # type: ignore[misc]


def test_the_records_recursion_guard_in_repr() -> None:
    event = records.SinkEvent("kind", "session")  # type: ignore[arg-type]
    event.data = {"self": event}
    assert repr(event) == (
        "SinkEvent(kind='kind', session='session', timestamp=None, data={'self': ...}, key=None)"
    )


def test_settings_load_makes_the_settings_once() -> None:
    # every setting from the environment, as `replace` one at a time made them
    env = {
        "HOME": "/home/someone",
        "SIDELIGHT_SCOPE": "a, b",
        "SIDELIGHT_FIRST_LOOK_BYTES": "10",
        "SIDELIGHT_TIME_BUDGET": "250ms",
        "SIDELIGHT_IDLE_TIMEOUT": "30m",
        "SIDELIGHT_REDIS_URL": " redis://x ",
        "SIDELIGHT_HOST_ID": "host",
        "SIDELIGHT_FLEET_SCOPE": "fleet",
        "SIDELIGHT_HANDOFF_LOCATION": "Project",
        "SIDELIGHT_PROMPT_BUDGET": "7",
        "SIDELIGHT_START_BUDGET": "9",
        "SIDELIGHT_CONFIG": "/nonexistent/config.toml",
    }
    settings = config.Settings.load(env)
    assert (
        settings.scope,
        settings.first_look_bytes,
        settings.time_budget,
        settings.idle_timeout,
        settings.redis_url,
        settings.host_id,
        settings.fleet_scope,
        settings.handoff_location,
        settings.prompt_budget,
        settings.start_budget,
    ) == (frozenset({"a", "b"}), 10, 0.25, 1800.0, "redis://x", "host", "fleet", "project", 7, 9)
    defaults = config.Settings.load({"HOME": "/home/someone", "SIDELIGHT_CONFIG": "/nonexistent"})
    assert defaults == config.Settings(
        home=defaults.home,
        state_dir=defaults.state_dir,
        claude_dirs=defaults.claude_dirs,
        pi_dir=defaults.pi_dir,
        codex_dir=defaults.codex_dir,
        gemini_dir=defaults.gemini_dir,
        qwen_dir=defaults.qwen_dir,
        copilot_dir=defaults.copilot_dir,
        volute_minds_dir=defaults.volute_minds_dir,
    )


def test_making_the_records_imports_no_dataclasses() -> None:
    code = (
        "import sys\n"
        "import sidelight.records, sidelight.types, sidelight.config, sidelight.plugins, sidelight.formats\n"
        "import sidelight.features.digest, sidelight.engine.reads\n"
        "import sidelight.features.facts, sidelight.features.resume\n"
        "import sidelight.features.recap.handoff\n"
        "print('dataclasses' in sys.modules)\n"
        "import dataclasses\n"
        "print([f.name for f in dataclasses.fields(sidelight.records.Session)][:2])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["False", "['key', 'name']"]
