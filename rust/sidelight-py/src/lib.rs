//! `sidelight._core`: the thin binding of sidelight-core. Primitive arguments in, plain data out, the
//! GIL released while files are read, and Ctrl-C honoured during long scans.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyKeyboardInterrupt, PyOSError, PyPermissionError,
    PyValueError,
};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use sidelight_core::activity::{Meta, Sink};
use sidelight_core::formats::declared::{
    report_events, Event, KeyPath, LineDecoder, Spec, ToolEntrySpec,
};
use sidelight_core::formats::PRIMARY_KEYS;
use sidelight_core::{
    Activity, Categories, Category, Cursor, Error, Format, Limits, LogEntry, Options, Request, Scan,
};

type CursorTuple = (u64, u64, u64, u64, u64, u64, u64);

/// Scans of fewer new bytes than this run without a watching thread: they end before Ctrl-C matters.
const INTERRUPTIBLE_BYTES: u64 = 64 << 20;

fn to_py_err(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::NotFound(p) => PyFileNotFoundError::new_err((2, message, p.display().to_string())),
        Error::PermissionDenied(p) => {
            PyPermissionError::new_err((13, message, p.display().to_string()))
        }
        Error::IsADirectory(p) => {
            PyIsADirectoryError::new_err((21, message, p.display().to_string()))
        }
        Error::Interrupted => PyKeyboardInterrupt::new_err(message),
        Error::UnknownFormat(_) => PyValueError::new_err(message),
        Error::Io(p, e) => PyOSError::new_err((
            e.raw_os_error().unwrap_or(5),
            message,
            p.display().to_string(),
        )),
    }
}

fn parse_format(name: &str) -> PyResult<Format> {
    Format::parse(name).ok_or_else(|| to_py_err(Error::UnknownFormat(name.to_owned())))
}

fn parse_categories(map: &std::collections::HashMap<String, String>) -> PyResult<Categories> {
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

fn options(categories: Categories, max_line_bytes: usize, text_limit: usize) -> Options {
    Options {
        categories,
        max_line_bytes,
        text_limit,
    }
}

fn cursor_from(t: CursorTuple) -> Cursor {
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

fn cursor_tuple(c: &Cursor) -> CursorTuple {
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

/// Runs `work` on a worker thread with the GIL released, checking for signals while it runs; a
/// signal (Ctrl-C) cancels the work and is raised.
fn run_interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(&AtomicBool) -> T + Send,
) -> PyResult<T> {
    let cancel = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel();
        let cancel = &cancel;
        scope.spawn(move || {
            let _ = tx.send(work(cancel));
        });
        let mut rx = rx;
        loop {
            // The receiver is moved in and back out: a shared reference to it cannot cross threads.
            let (back, received) = py.detach(move || {
                let received = rx.recv_timeout(Duration::from_millis(50));
                (rx, received)
            });
            rx = back;
            match received {
                Ok(value) => return Ok(value),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(PyOSError::new_err(
                        "the scan thread stopped without a result",
                    ));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(signal) = py.check_signals() {
                        cancel.store(true, Ordering::Relaxed);
                        return Err(signal);
                    }
                }
            }
        }
    })
}

/// The kept tool uses as `(name, category, primary_arg, timestamp, lines, old_text, new_text)` tuples.
fn tool_use_list<'py>(py: Python<'py>, a: &Activity) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for t in &a.tool_uses {
        list.append((
            &t.name,
            t.category.name(),
            &t.primary_arg,
            &t.timestamp,
            t.lines,
            &t.old_text,
            &t.new_text,
        ))?;
    }
    Ok(list)
}

fn scan_dict<'py>(py: Python<'py>, path: &str, scan: &Scan) -> PyResult<Bound<'py, PyDict>> {
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
    d.set_item(intern!(py, "tool_uses"), tool_use_list(py, a)?)?;
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

/// Scan the complete lines of `path` after `cursor` and return the activity as a dict.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn scan<'py>(
    py: Python<'py>,
    path: &str,
    format: &str,
    cursor: Option<CursorTuple>,
    categories: std::collections::HashMap<String, String>,
    max_line_bytes: usize,
    text_limit: usize,
    threads: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let format = parse_format(format)?;
    let opts = options(parse_categories(&categories)?, max_line_bytes, text_limit);
    let cursor = cursor.map(cursor_from);
    let file = PathBuf::from(path);
    if let Some(decoder) = external(format) {
        let result = decoder.scan(py, &file, format, cursor.as_ref(), &opts)?;
        return scan_dict(py, path, &result.map_err(to_py_err)?);
    }
    let work = |cancel: &AtomicBool| {
        sidelight_core::scan(
            &file,
            format,
            cursor.as_ref(),
            &opts,
            threads.max(1),
            cancel,
        )
    };
    // A watching thread (for Ctrl-C) costs more than a small scan: small ranges run in this thread.
    let remaining = std::fs::metadata(&file)
        .map(|m| m.len().saturating_sub(cursor.map_or(0, |c| c.offset)))
        .unwrap_or(0);
    let result = if remaining < INTERRUPTIBLE_BYTES {
        py.detach(|| work(&AtomicBool::new(false)))
    } else {
        run_interruptible(py, work)?
    };
    scan_dict(py, path, &result.map_err(to_py_err)?)
}

/// Scans many `(path, format, cursor)` requests in parallel: one result per request, in order.
fn scan_requests(
    py: Python<'_>,
    requests: &[(String, String, Option<CursorTuple>)],
    categories: &std::collections::HashMap<String, std::collections::HashMap<String, String>>,
    max_line_bytes: usize,
    text_limit: usize,
) -> PyResult<Vec<Result<Scan, Error>>> {
    let mut option_sets: Vec<Options> = Vec::new();
    let mut option_index: std::collections::HashMap<Format, usize> =
        std::collections::HashMap::new();
    // A bad format fails its own slot, not the batch. Formats written in Python are scanned apart,
    // in this thread (they need the GIL for every line).
    let mut parsed: Vec<Result<Request, Error>> = Vec::with_capacity(requests.len());
    let mut outside: Vec<Option<Result<Scan, Error>>> = Vec::with_capacity(requests.len());
    for (path, format, cursor) in requests {
        let Some(f) = Format::parse(format) else {
            parsed.push(Err(Error::UnknownFormat(format.clone())));
            outside.push(None);
            continue;
        };
        let index = match option_index.get(&f) {
            Some(&i) => i,
            None => {
                let table = match categories.get(f.name()) {
                    Some(map) => parse_categories(map)?,
                    None => f.categories(),
                };
                option_sets.push(options(table, max_line_bytes, text_limit));
                option_index.insert(f, option_sets.len() - 1);
                option_sets.len() - 1
            }
        };
        let request = Request {
            path: PathBuf::from(path),
            format: f,
            cursor: cursor.map(cursor_from),
            options_index: index,
        };
        if let Some(decoder) = external(f) {
            let result = decoder.scan(
                py,
                &request.path,
                f,
                request.cursor.as_ref(),
                &option_sets[index],
            )?;
            outside.push(Some(result));
            parsed.push(Err(Error::UnknownFormat(String::new())));
            continue;
        }
        outside.push(None);
        parsed.push(Ok(request));
    }
    let valid: Vec<Request> = parsed
        .iter_mut()
        .filter_map(|r| match r {
            Ok(req) => Some(Request {
                path: std::mem::take(&mut req.path),
                format: req.format,
                cursor: req.cursor,
                options_index: req.options_index,
            }),
            Err(_) => None,
        })
        .collect();
    let work = |cancel: &AtomicBool| sidelight_core::scan_many(&valid, &option_sets, cancel);
    // As in `scan`: a few small files are scanned in this thread. Past a few dozen files a stat of
    // each would cost more than the watching thread.
    let small = valid.len() <= 32 && {
        let remaining: u64 = valid
            .iter()
            .map(|r| {
                let size = std::fs::metadata(&r.path).map_or(0, |m| m.len());
                size.saturating_sub(r.cursor.map_or(0, |c| c.offset))
            })
            .sum();
        remaining < INTERRUPTIBLE_BYTES
    };
    let mut results = if small {
        py.detach(|| work(&AtomicBool::new(false)))
    } else {
        run_interruptible(py, work)?
    }
    .into_iter();
    let mut found = Vec::with_capacity(requests.len());
    for (parse, done) in parsed.into_iter().zip(outside) {
        found.push(match (parse, done) {
            (_, Some(result)) => result,
            (Ok(_), None) => results.next().expect("one result per valid request"),
            (Err(e), None) => Err(e),
        });
    }
    Ok(found)
}

/// Scan many `(path, format, cursor)` requests in parallel; one result or exception per request.
#[pyfunction]
fn scan_many<'py>(
    py: Python<'py>,
    requests: Vec<(String, String, Option<CursorTuple>)>,
    categories: std::collections::HashMap<String, std::collections::HashMap<String, String>>,
    max_line_bytes: usize,
    text_limit: usize,
) -> PyResult<Bound<'py, PyList>> {
    let found = scan_requests(py, &requests, &categories, max_line_bytes, text_limit)?;
    result_list(py, &requests, found, |path, scan| {
        Ok(scan_dict(py, path, scan)?.into_any())
    })
}

/// One item per request: `convert(path, scan)` of its scan, or its exception (an interrupted scan
/// raises instead).
fn result_list<'py>(
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
fn counts_tuple<'py>(py: Python<'py>, scan: &Scan) -> PyResult<Bound<'py, PyTuple>> {
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
        Some(tool_use_list(py, a)?)
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

/// `scan_many` for the watcher: per request a tuple of what it counts (`counts_tuple`), or an
/// exception.
#[pyfunction]
fn scan_many_counts<'py>(
    py: Python<'py>,
    requests: Vec<(String, String, Option<CursorTuple>)>,
    categories: std::collections::HashMap<String, std::collections::HashMap<String, String>>,
    max_line_bytes: usize,
    text_limit: usize,
) -> PyResult<Bound<'py, PyList>> {
    let found = scan_requests(py, &requests, &categories, max_line_bytes, text_limit)?;
    result_list(py, &requests, found, |_path, scan| {
        Ok(counts_tuple(py, scan)?.into_any())
    })
}

/// The last `limit` conversation entries of `path`, oldest first, read backwards in blocks.
#[pyfunction]
fn recent_entries<'py>(
    py: Python<'py>,
    path: &str,
    format: &str,
    limit: usize,
    max_line_bytes: usize,
    text_limit: usize,
) -> PyResult<Bound<'py, PyList>> {
    let format = parse_format(format)?;
    let opts = options(Categories::default(), max_line_bytes, text_limit);
    let file = PathBuf::from(path);
    let entries = if let Some(decoder) = external(format) {
        let found = sidelight_core::recent_entries(&file, format, limit, &opts);
        decoder.raise_pending(py)?;
        found
    } else {
        py.detach(|| sidelight_core::recent_entries(&file, format, limit, &opts))
    }
    .map_err(to_py_err)?;
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

/// An entry of [`read_entries`]: `(kind, timestamp, id, name, text, data, is_error, lines)`.
type LogEntryTuple = (
    &'static str,
    Option<String>,
    Option<u64>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
    u64,
);

/// What [`read_entries`] returns: `(entries, next_offset, lines_read, lines_skipped, first_timestamp,
/// last_timestamp)`.
type EntryChunk = (
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

/// The entries of the complete lines of `path` from `start_offset` on, in order, in one chunk.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn read_entries(
    py: Python<'_>,
    path: &str,
    format: &str,
    start_offset: u64,
    max_entries: usize,
    max_bytes: usize,
    max_line_bytes: usize,
    text_limit: usize,
    result_limit: usize,
) -> PyResult<EntryChunk> {
    let format = parse_format(format)?;
    let limits = Limits {
        max_entries: max_entries.max(1),
        max_bytes: max_bytes.max(1),
        max_line_bytes,
        text_limit,
        result_limit,
    };
    let file = PathBuf::from(path);
    let never = AtomicBool::new(false);
    let work = || sidelight_core::read_entries(&file, format, start_offset, &limits, &never);
    let chunk = if let Some(decoder) = external(format) {
        let found = work();
        decoder.raise_pending(py)?;
        found
    } else {
        py.detach(work)
    }
    .map_err(to_py_err)?;
    let entries = chunk.entries.into_iter().map(log_entry_tuple).collect();
    Ok((
        entries,
        chunk.next_offset,
        chunk.lines_read,
        chunk.lines_skipped,
        chunk.first_timestamp,
        chunk.last_timestamp,
    ))
}

/// The format of `path` judged from its first lines, or None.
#[pyfunction]
fn detect_format(py: Python<'_>, path: &str) -> PyResult<Option<&'static str>> {
    let file = PathBuf::from(path);
    let found = py
        .detach(|| sidelight_core::detect_format(&file))
        .map_err(to_py_err)?;
    Ok(found.map(Format::name))
}

/// A cursor for `path` at `offset` (moved back to the start of the line it falls in).
#[pyfunction]
fn file_cursor(py: Python<'_>, path: &str, offset: u64) -> PyResult<CursorTuple> {
    let file = PathBuf::from(path);
    let cursor = py
        .detach(|| sidelight_core::file_cursor(&file, offset))
        .map_err(to_py_err)?;
    Ok(cursor_tuple(&cursor))
}

/// The offset of the first line that starts within the last `max_bytes` bytes of `path`.
#[pyfunction]
fn tail_offset(py: Python<'_>, path: &str, max_bytes: u64) -> PyResult<u64> {
    let file = PathBuf::from(path);
    py.detach(|| sidelight_core::tail_offset(&file, max_bytes))
        .map_err(to_py_err)
}

/// A line decoder written in Python: `decode(line: bytes)` returns the line's events (tuples
/// `(kind, text, timestamp, id, name, arguments, primary, is_error)`, see `sidelight.formats.Event`;
/// a tuple without the last field, as events were before results, is read too) or `None`;
/// raising `ValueError` (or any `Exception`) counts the line as malformed.
struct PyDecoder {
    name: String,
    decode: Py<PyAny>,
    /// Set when the callback raised something that is not an `Exception` (Ctrl-C): the scan stops.
    cancel: AtomicBool,
    pending: std::sync::Mutex<Option<PyErr>>,
}

type EventTuple = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    bool,
);

/// An event tuple of seven fields (no `is_error`).
type ShortEventTuple = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn event_tuple(item: &Bound<'_, PyAny>) -> PyResult<EventTuple> {
    item.extract::<EventTuple>().or_else(|error| {
        let (kind, text, timestamp, id, name, arguments, primary) =
            item.extract::<ShortEventTuple>().map_err(|_| error)?;
        Ok((kind, text, timestamp, id, name, arguments, primary, false))
    })
}

fn event_from(tuple: EventTuple) -> Option<Event> {
    let (kind, text, timestamp, id, name, arguments, primary, is_error) = tuple;
    Some(match kind.as_str() {
        "type" => Event::Type(text?),
        "session_id" => Event::SessionId(text?),
        "cwd" => Event::Cwd(text?),
        "title" => Event::Title(text?),
        "user" => Event::User {
            text: text?,
            timestamp,
        },
        "assistant" => Event::Assistant {
            text,
            timestamp,
            id,
        },
        "tool" => Event::Tool {
            name: name?,
            arguments,
            primary,
            id,
            timestamp,
        },
        "result" => Event::Result { id, is_error, text },
        _ => return None,
    })
}

impl PyDecoder {
    fn events(&self, py: Python<'_>, line: &[u8]) -> PyResult<Option<Vec<Event>>> {
        let out = self.decode.call1(py, (PyBytes::new(py, line),))?;
        let out = out.bind(py);
        if out.is_none() {
            return Ok(Some(Vec::new()));
        }
        let mut events = Vec::new();
        for item in out.try_iter()? {
            match event_from(event_tuple(&item?)?) {
                Some(event) => events.push(event),
                None => return Ok(None),
            }
        }
        Ok(Some(events))
    }

    /// Scans with the GIL held, in one thread; a Ctrl-C raised in the callback is raised here.
    fn scan(
        &self,
        py: Python<'_>,
        file: &std::path::Path,
        format: Format,
        cursor: Option<&Cursor>,
        opts: &Options,
    ) -> PyResult<Result<Scan, Error>> {
        self.cancel.store(false, Ordering::Relaxed);
        let result = sidelight_core::scan(file, format, cursor, opts, 1, &self.cancel);
        self.raise_pending(py)?;
        Ok(result)
    }

    fn raise_pending(&self, _py: Python<'_>) -> PyResult<()> {
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.cancel.store(false, Ordering::Relaxed);
        match pending {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl LineDecoder for PyDecoder {
    fn name(&self) -> &str {
        &self.name
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn decode(&self, line: &[u8], sink: &mut dyn Sink) -> bool {
        if self.cancel.load(Ordering::Relaxed) {
            return false;
        }
        Python::attach(|py| match self.events(py, line) {
            Ok(Some(events)) => {
                report_events(&events, &PRIMARY_KEYS, sink);
                true
            }
            Ok(None) => false,
            Err(error) => {
                if !error.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    self.cancel.store(true, Ordering::Relaxed);
                    *self.pending.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                }
                false
            }
        })
    }
}

/// The Python decoder behind an external format.
fn external(format: Format) -> Option<&'static PyDecoder> {
    let Format::External(d) = format else {
        return None;
    };
    d.as_any().downcast_ref::<PyDecoder>()
}

/// Reads a description dict field by field; every error names its field.
struct Fields<'a, 'py> {
    dict: &'a Bound<'py, PyDict>,
    prefix: String,
}

impl Fields<'_, '_> {
    fn error(&self, key: &str, message: &str) -> PyErr {
        PyValueError::new_err(format!("{}{key}: {message}", self.prefix))
    }

    fn get(&self, key: &str) -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(self.dict.get_item(key)?.filter(|v| !v.is_none()))
    }

    fn string(&self, key: &str) -> PyResult<Option<String>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) => v
                .extract::<String>()
                .map(Some)
                .map_err(|_| self.error(key, "expected a string")),
        }
    }

    fn strings(&self, key: &str) -> PyResult<Option<Vec<String>>> {
        match self.get(key)? {
            None => Ok(None),
            Some(v) if v.is_instance_of::<pyo3::types::PyString>() => {
                Err(self.error(key, "expected a list of strings, not a string"))
            }
            Some(v) => v
                .extract::<Vec<String>>()
                .map(Some)
                .map_err(|_| self.error(key, "expected a list of strings")),
        }
    }

    fn path(&self, key: &str) -> PyResult<Option<KeyPath>> {
        self.strings(key)
    }

    fn paths(&self, key: &str) -> PyResult<Vec<KeyPath>> {
        match self.get(key)? {
            None => Ok(Vec::new()),
            Some(v) => v
                .extract::<Vec<Vec<String>>>()
                .map_err(|_| self.error(key, "expected a list of key paths (lists of strings)")),
        }
    }

    fn check_known(&self, known: &[&str]) -> PyResult<()> {
        for key in self.dict.keys() {
            let key: String = key.extract().map_err(|_| {
                PyValueError::new_err(format!("{}fields are named by strings", self.prefix))
            })?;
            if !known.contains(&key.as_str()) {
                return Err(self.error(&key, "unknown field"));
            }
        }
        Ok(())
    }
}

const SPEC_FIELDS: &[&str] = &[
    "entry_type",
    "timestamp",
    "session_id",
    "session_id_types",
    "cwd",
    "cwd_types",
    "title",
    "title_types",
    "skip_types",
    "skip_keys",
    "skip_flags",
    "message_types",
    "role",
    "user_roles",
    "assistant_roles",
    "message_id",
    "content",
    "block_type",
    "text_blocks",
    "tool_blocks",
    "result_blocks",
    "result_block_id",
    "result_block_error",
    "result_block_content",
    "skip_block_flags",
    "block_text",
    "block_name",
    "block_input",
    "block_id",
    "tool_calls",
    "tool_call_result",
    "tool_entries",
    "result_roles",
    "result_id",
    "result_error",
    "skip_prompt_prefixes",
    "primary_keys",
];

fn spec_from(description: &Bound<'_, PyDict>) -> PyResult<Spec> {
    let f = Fields {
        dict: description,
        prefix: String::new(),
    };
    f.check_known(SPEC_FIELDS)?;
    let d = Spec::default();
    let mut tool_entries = Vec::new();
    if let Some(entries) = f.get("tool_entries")? {
        let list = entries
            .cast::<PyList>()
            .map_err(|_| f.error("tool_entries", "expected a list of dicts"))?;
        for (k, entry) in list.iter().enumerate() {
            let entry = entry
                .cast::<PyDict>()
                .map_err(|_| f.error(&format!("tool_entries[{k}]"), "expected a dict"))?;
            let e = Fields {
                dict: entry,
                prefix: format!("tool_entries[{k}]."),
            };
            e.check_known(&["role", "name", "literal_name", "input", "primary", "id"])?;
            tool_entries.push(ToolEntrySpec {
                role: e.string("role")?.ok_or_else(|| e.error("role", "needed"))?,
                name: e.path("name")?,
                literal_name: e.string("literal_name")?,
                input: e.path("input")?,
                primary: e.path("primary")?,
                id: e.path("id")?,
            });
        }
    }
    // Absent means the default; `None` means none (for the key paths that have a default).
    let path_or = |key: &str, default: Option<KeyPath>| -> PyResult<Option<KeyPath>> {
        if description.contains(key)? {
            f.path(key)
        } else {
            Ok(default)
        }
    };
    Ok(Spec {
        entry_type: path_or("entry_type", d.entry_type)?,
        timestamp: path_or("timestamp", d.timestamp)?,
        session_id: f.path("session_id")?,
        session_id_types: f.strings("session_id_types")?.unwrap_or_default(),
        cwd: f.path("cwd")?,
        cwd_types: f.strings("cwd_types")?.unwrap_or_default(),
        title: f.path("title")?,
        title_types: f.strings("title_types")?.unwrap_or_default(),
        skip_types: f.strings("skip_types")?.unwrap_or_default(),
        skip_keys: f.strings("skip_keys")?.unwrap_or_default(),
        skip_flags: f.paths("skip_flags")?,
        message_types: f.strings("message_types")?.unwrap_or_default(),
        role: path_or("role", d.role)?,
        user_roles: f.strings("user_roles")?.unwrap_or(d.user_roles),
        assistant_roles: f.strings("assistant_roles")?.unwrap_or(d.assistant_roles),
        message_id: f.path("message_id")?,
        content: path_or("content", d.content)?,
        block_type: if description.contains("block_type")? {
            f.string("block_type")?
        } else {
            d.block_type
        },
        text_blocks: f.strings("text_blocks")?.unwrap_or(d.text_blocks),
        tool_blocks: f.strings("tool_blocks")?.unwrap_or_default(),
        result_blocks: f.strings("result_blocks")?.unwrap_or_default(),
        result_block_id: f.path("result_block_id")?.unwrap_or(d.result_block_id),
        result_block_error: path_or("result_block_error", d.result_block_error)?,
        result_block_content: path_or("result_block_content", d.result_block_content)?,
        skip_block_flags: f.strings("skip_block_flags")?.unwrap_or_default(),
        block_text: f.string("block_text")?.unwrap_or(d.block_text),
        block_name: f.string("block_name")?.unwrap_or(d.block_name),
        block_input: f.strings("block_input")?.unwrap_or(d.block_input),
        block_id: f.string("block_id")?.unwrap_or(d.block_id),
        tool_calls: f.path("tool_calls")?,
        tool_call_result: f.path("tool_call_result")?,
        tool_entries,
        result_roles: f.strings("result_roles")?.unwrap_or_default(),
        result_id: f.path("result_id")?,
        result_error: f.path("result_error")?,
        skip_prompt_prefixes: f.strings("skip_prompt_prefixes")?.unwrap_or_default(),
        primary_keys: f.strings("primary_keys")?.unwrap_or(d.primary_keys),
    })
}

/// Compile a format description and register it under `name` (replacing one of that name).
#[pyfunction]
fn declare_format(
    name: &str,
    description: &Bound<'_, PyDict>,
    categories: std::collections::HashMap<String, String>,
) -> PyResult<()> {
    let table = parse_categories(&categories).map_err(|e| {
        PyValueError::new_err(format!(
            "format {name:?}: categories: {}",
            e.value(description.py())
        ))
    })?;
    let spec = spec_from(description).map_err(|e| {
        PyValueError::new_err(format!("format {name:?}: {}", e.value(description.py())))
    })?;
    sidelight_core::formats::declare(name, &spec, table)
        .map_err(|e| PyValueError::new_err(format!("format {name:?}: {e}")))?;
    Ok(())
}

/// Register `decode(line: bytes) -> events | None` as the line decoder of format `name`.
#[pyfunction]
fn register_decoder(
    name: &str,
    decode: Bound<'_, PyAny>,
    categories: std::collections::HashMap<String, String>,
) -> PyResult<()> {
    let table = parse_categories(&categories).map_err(|e| {
        PyValueError::new_err(format!(
            "format {name:?}: categories: {}",
            e.value(decode.py())
        ))
    })?;
    if name.is_empty() {
        return Err(PyValueError::new_err("format name: must not be empty"));
    }
    if !decode.is_callable() {
        return Err(PyValueError::new_err(format!(
            "format {name:?}: decode: expected a callable"
        )));
    }
    let decoder: &'static PyDecoder = Box::leak(Box::new(PyDecoder {
        name: name.to_owned(),
        decode: decode.unbind(),
        cancel: AtomicBool::new(false),
        pending: std::sync::Mutex::new(None),
    }));
    sidelight_core::formats::register(Format::External(decoder), table)
        .map_err(|e| PyValueError::new_err(format!("format {name:?}: {e}")))?;
    Ok(())
}

/// The names of the formats declared or registered at run time, in registration order.
#[pyfunction]
fn declared_formats() -> Vec<&'static str> {
    sidelight_core::formats::registered()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "FORMATS",
        PyTuple::new(m.py(), Format::ALL.map(Format::name))?,
    )?;
    m.add("TOOL_USES_KEPT", sidelight_core::TOOL_USES_KEPT)?;
    m.add("FILES_TOUCHED_KEPT", sidelight_core::FILES_TOUCHED_KEPT)?;
    // The core's word on which user texts a client wrote (every reader decodes through the core; the
    // lists are here for the tests and benchmarks that check against it).
    m.add(
        "SYNTHETIC_PROMPT_PREFIXES",
        PyTuple::new(m.py(), sidelight_core::activity::SYNTHETIC_PROMPT_PREFIXES)?,
    )?;
    m.add(
        "CODEX_CONTEXT_PREFIXES",
        PyTuple::new(m.py(), sidelight_core::formats::CODEX_CONTEXT_PREFIXES)?,
    )?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(scan_many, m)?)?;
    m.add_function(wrap_pyfunction!(scan_many_counts, m)?)?;
    m.add_function(wrap_pyfunction!(recent_entries, m)?)?;
    m.add_function(wrap_pyfunction!(read_entries, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(file_cursor, m)?)?;
    m.add_function(wrap_pyfunction!(tail_offset, m)?)?;
    m.add_function(wrap_pyfunction!(declare_format, m)?)?;
    m.add_function(wrap_pyfunction!(register_decoder, m)?)?;
    m.add_function(wrap_pyfunction!(declared_formats, m)?)?;
    Ok(())
}
