//! Conversions between the core's types and Python's: errors, format names, category tables and
//! cursors in; a scan's activity, a transcript's recent entries and the entry reader's chunks out, as
//! the dicts and tuples `_core.pyi` describes.

use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyKeyboardInterrupt, PyOSError, PyPermissionError,
    PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use sidelight_core::activity::Meta;
use sidelight_core::{
    Activity, Categories, Category, Chunk, Cursor, Entry, Error, Format, LogEntry, Options, Scan,
};

pub(crate) type CursorTuple = (u64, u64, u64, u64, u64, u64, u64);

pub(crate) fn to_py_err(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::NotFound(p) => PyFileNotFoundError::new_err((2, message, p.display().to_string())),
        Error::PermissionDenied(p) => {
            PyPermissionError::new_err((13, message, p.display().to_string()))
        }
        Error::IsADirectory(p) => {
            PyIsADirectoryError::new_err((21, message, p.display().to_string()))
        }
        // An OSError without an errno: its words are the reason (sidelight.errors.describe says them).
        Error::NotRegularFile(p) => PyOSError::new_err((
            None::<i32>,
            sidelight_core::error::NOT_REGULAR,
            p.display().to_string(),
        )),
        Error::Interrupted => PyKeyboardInterrupt::new_err(message),
        Error::UnknownFormat(_) => PyValueError::new_err(message),
        Error::Io(p, e) => PyOSError::new_err((
            e.raw_os_error().unwrap_or(5),
            message,
            p.display().to_string(),
        )),
    }
}

pub(crate) fn parse_format(name: &str) -> PyResult<Format> {
    Format::parse(name).ok_or_else(|| to_py_err(Error::UnknownFormat(name.to_owned())))
}

pub(crate) fn parse_categories(
    map: &std::collections::HashMap<String, String>,
) -> PyResult<Categories> {
    let mut pairs = Vec::with_capacity(map.len());
    for (tool, category) in map {
        let category = Category::parse(category).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown category {category:?} for tool {tool:?}; expected edit, read, command or other"
            ))
        })?;
        pairs.push((tool.clone(), category));
    }
    Ok(Categories::new(pairs))
}

pub(crate) fn options(
    categories: Categories,
    max_line_bytes: usize,
    text_limit: usize,
    results: bool,
) -> Options {
    Options {
        categories,
        max_line_bytes,
        text_limit,
        results,
    }
}

pub(crate) fn cursor_from(t: CursorTuple) -> Cursor {
    let (offset, dev, inode, head_len, head_hash, tail_hash, last_message) = t;
    Cursor {
        offset,
        dev,
        inode,
        head_len,
        head_hash,
        tail_hash,
        last_message,
    }
}

pub(crate) fn cursor_tuple(c: &Cursor) -> CursorTuple {
    (
        c.offset,
        c.dev,
        c.inode,
        c.head_len,
        c.head_hash,
        c.tail_hash,
        c.last_message,
    )
}

/// The kept tool uses as `(name, category, primary_arg, timestamp, lines, old_text, new_text)` tuples,
/// with `result, result_error` after them when the scan kept results.
fn tool_use_list<'py>(
    py: Python<'py>,
    a: &Activity,
    results: bool,
) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for t in &a.tool_uses {
        let fields = (
            &t.name,
            t.category.name(),
            &t.primary_arg,
            &t.timestamp,
            t.lines,
            &t.old_text,
            &t.new_text,
        );
        if results {
            let (name, category, primary, stamp, lines, old, new) = fields;
            list.append((
                name,
                category,
                primary,
                stamp,
                lines,
                old,
                new,
                &t.result,
                t.result_error,
            ))?;
        } else {
            list.append(fields)?;
        }
    }
    Ok(list)
}

/// A scan as a dict; `results`: its tool uses carry their results (the scan kept them).
pub(crate) fn scan_dict<'py>(
    py: Python<'py>,
    path: &str,
    scan: &Scan,
    results: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let a = &scan.activity;
    let d = PyDict::new(py);
    d.set_item(intern!(py, "path"), path)?;
    d.set_item(intern!(py, "format"), scan.format.name())?;
    d.set_item(intern!(py, "file_size"), scan.file_size)?;
    d.set_item(intern!(py, "start_offset"), scan.start_offset)?;
    d.set_item(intern!(py, "offset"), scan.cursor.offset)?;
    d.set_item(intern!(py, "reset"), scan.reset.map(|r| r.name()))?;
    d.set_item(intern!(py, "cursor"), cursor_tuple(&scan.cursor))?;
    d.set_item(intern!(py, "pending_bytes"), scan.pending_bytes())?;
    d.set_item(intern!(py, "bytes_consumed"), scan.bytes_consumed())?;
    d.set_item(intern!(py, "lines"), a.lines)?;
    let messages = PyDict::new(py);
    messages.set_item(intern!(py, "user"), a.user_messages)?;
    messages.set_item(intern!(py, "assistant"), a.assistant_messages)?;
    d.set_item(intern!(py, "messages"), messages)?;
    let tools = PyDict::new(py);
    let mut names: Vec<(&String, &u64)> = a.tools.iter().collect();
    names.sort();
    for (name, n) in names {
        tools.set_item(name, n)?;
    }
    d.set_item(intern!(py, "tools"), tools)?;
    let categories = PyDict::new(py);
    for c in Category::ALL {
        // Interned keys: thousands of results a second, the same few keys each time.
        let key = match c {
            Category::Edit => intern!(py, "edit"),
            Category::Read => intern!(py, "read"),
            Category::Command => intern!(py, "command"),
            Category::Other => intern!(py, "other"),
        };
        debug_assert_eq!(key.to_str().ok(), Some(c.name()));
        categories.set_item(key, a.categories[c as usize])?;
    }
    d.set_item(intern!(py, "categories"), categories)?;
    d.set_item(intern!(py, "tool_uses"), tool_use_list(py, a, results)?)?;
    d.set_item(intern!(py, "files_touched"), &a.files_touched)?;
    d.set_item(intern!(py, "first_user_text"), &a.first_user_text)?;
    d.set_item(intern!(py, "last_user_text"), &a.last_user_text)?;
    d.set_item(intern!(py, "last_assistant_text"), &a.last_assistant_text)?;
    d.set_item(intern!(py, "first_timestamp"), &a.first_timestamp)?;
    d.set_item(intern!(py, "last_timestamp"), &a.last_timestamp)?;
    d.set_item(intern!(py, "session_id"), &a.session_id)?;
    d.set_item(intern!(py, "cwd"), &a.cwd)?;
    d.set_item(intern!(py, "title"), a.title())?;
    let skipped = PyDict::new(py);
    skipped.set_item(intern!(py, "malformed_json"), a.skipped.malformed_json)?;
    skipped.set_item(intern!(py, "invalid_utf8"), a.skipped.invalid_utf8)?;
    skipped.set_item(intern!(py, "too_long"), a.skipped.too_long)?;
    d.set_item(intern!(py, "skipped"), skipped)?;
    let entry_types = PyDict::new(py);
    let mut types: Vec<(&String, &u64)> = a.entry_types.iter().collect();
    types.sort();
    for (ty, n) in types {
        entry_types.set_item(ty, n)?;
    }
    d.set_item(intern!(py, "entry_types"), entry_types)?;
    Ok(d)
}

/// One item per request: `convert(path, scan)` of its scan, or its exception (an interrupted scan
/// raises instead).
pub(crate) fn result_list<'py>(
    py: Python<'py>,
    requests: &[(String, String, Option<CursorTuple>)],
    found: Vec<Result<Scan, Error>>,
    convert: impl Fn(&str, &Scan) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for (request, result) in requests.iter().zip(found) {
        match result {
            Ok(scan) => out.append(convert(&request.0, &scan)?)?,
            Err(Error::Interrupted) => return Err(to_py_err(Error::Interrupted)),
            Err(e) => out.append(to_py_err(e).into_value(py))?,
        }
    }
    Ok(out)
}

/// What the watcher counts of one scan, as a tuple (see `scan_many_counts` in `_core.pyi`): fields
/// in a fixed order, and `None` for an empty dict or list, so that a scan of one new line costs a
/// handful of objects rather than a dict of dicts.
pub(crate) fn counts_tuple<'py>(py: Python<'py>, scan: &Scan) -> PyResult<Bound<'py, PyTuple>> {
    let a = &scan.activity;
    let tools = if a.tools.is_empty() {
        None
    } else {
        let tools = PyDict::new(py);
        for (name, n) in &a.tools {
            tools.set_item(name, n)?;
        }
        Some(tools)
    };
    let tool_uses = if a.tool_uses.is_empty() {
        None
    } else {
        Some(tool_use_list(py, a, false)?)
    };
    let files = (!a.files_touched.is_empty()).then_some(&a.files_touched);
    let categories = (
        a.categories[Category::Edit as usize],
        a.categories[Category::Read as usize],
        a.categories[Category::Command as usize],
        a.categories[Category::Other as usize],
    );
    let items: [Bound<'py, PyAny>; 13] = [
        cursor_tuple(&scan.cursor).into_pyobject(py)?.into_any(),
        scan.reset.map(|r| r.name()).into_pyobject(py)?,
        a.lines.into_pyobject(py)?.into_any(),
        a.user_messages.into_pyobject(py)?.into_any(),
        a.assistant_messages.into_pyobject(py)?.into_any(),
        categories.into_pyobject(py)?.into_any(),
        tools.into_pyobject(py)?,
        tool_uses.into_pyobject(py)?,
        files.into_pyobject(py)?,
        a.first_user_text.as_deref().into_pyobject(py)?,
        a.last_user_text.as_deref().into_pyobject(py)?,
        a.last_assistant_text.as_deref().into_pyobject(py)?,
        a.last_timestamp.as_deref().into_pyobject(py)?,
    ];
    PyTuple::new(py, items)
}

/// The entries as `(timestamp, role, text, tool_name, primary_arg, result, result_error)` tuples.
pub(crate) fn entry_list<'py>(
    py: Python<'py>,
    entries: Vec<Entry>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for e in entries {
        out.append(PyTuple::new(
            py,
            [
                e.timestamp.into_pyobject(py)?.into_any(),
                e.role.into_pyobject(py)?.into_any(),
                e.text.into_pyobject(py)?.into_any(),
                e.tool_name.into_pyobject(py)?.into_any(),
                e.primary_arg.into_pyobject(py)?.into_any(),
                e.result.into_pyobject(py)?.into_any(),
                e.result_error.into_pyobject(py)?.to_owned().into_any(),
            ],
        )?)?;
    }
    Ok(out)
}

/// An entry of `read_entries`: `(kind, timestamp, id, name, text, data, is_error, lines)`.
pub(crate) type LogEntryTuple = (
    &'static str,
    Option<String>,
    Option<u64>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
    u64,
);

/// What `read_entries` returns: `(entries, next_offset, lines_read, lines_skipped, first_timestamp,
/// last_timestamp)`.
pub(crate) type EntryChunk = (
    Vec<LogEntryTuple>,
    u64,
    u64,
    u64,
    Option<String>,
    Option<String>,
);

fn log_entry_tuple(entry: LogEntry) -> LogEntryTuple {
    match entry {
        LogEntry::Prompt { text, timestamp } => {
            ("user", timestamp, None, None, Some(text), None, false, 0)
        }
        LogEntry::Reply { text, timestamp } => (
            "assistant",
            timestamp,
            None,
            None,
            Some(text),
            None,
            false,
            0,
        ),
        LogEntry::Tool {
            id,
            name,
            arguments,
            input,
            timestamp,
        } => (
            "tool",
            timestamp,
            id,
            Some(name),
            input,
            arguments,
            false,
            0,
        ),
        LogEntry::Result {
            id,
            is_error,
            text,
            lines,
            details,
        } => (
            "result",
            None,
            id,
            None,
            Some(text),
            details,
            is_error,
            lines,
        ),
        LogEntry::Meta { which, value } => {
            let kind = match which {
                Meta::SessionId => "session_id",
                Meta::Cwd => "cwd",
                _ => "title",
            };
            (kind, None, None, None, Some(value), None, false, 0)
        }
        LogEntry::Marker { marker, timestamp } => {
            (marker.name(), timestamp, None, None, None, None, false, 0)
        }
    }
}

/// A chunk of the entry reader as the tuple `read_entries` returns.
pub(crate) fn entry_chunk(chunk: Chunk) -> EntryChunk {
    let entries = chunk.entries.into_iter().map(log_entry_tuple).collect();
    (
        entries,
        chunk.next_offset,
        chunk.lines_read,
        chunk.lines_skipped,
        chunk.first_timestamp,
        chunk.last_timestamp,
    )
}
