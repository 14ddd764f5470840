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
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use sidelight_core::{Categories, Category, Cursor, Error, Format, Options, Request, Scan};

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

fn scan_dict<'py>(py: Python<'py>, path: &str, scan: &Scan) -> PyResult<Bound<'py, PyDict>> {
    let a = &scan.activity;
    let d = PyDict::new(py);
    d.set_item("path", path)?;
    d.set_item("format", scan.format.name())?;
    d.set_item("file_size", scan.file_size)?;
    d.set_item("start_offset", scan.start_offset)?;
    d.set_item("offset", scan.cursor.offset)?;
    d.set_item("reset", scan.reset.map(|r| r.name()))?;
    d.set_item("cursor", cursor_tuple(&scan.cursor))?;
    d.set_item("pending_bytes", scan.pending_bytes())?;
    d.set_item("bytes_consumed", scan.bytes_consumed())?;
    d.set_item("lines", a.lines)?;
    let messages = PyDict::new(py);
    messages.set_item("user", a.user_messages)?;
    messages.set_item("assistant", a.assistant_messages)?;
    d.set_item("messages", messages)?;
    let tools = PyDict::new(py);
    let mut names: Vec<(&String, &u64)> = a.tools.iter().collect();
    names.sort();
    for (name, n) in names {
        tools.set_item(name, n)?;
    }
    d.set_item("tools", tools)?;
    let categories = PyDict::new(py);
    for c in Category::ALL {
        categories.set_item(c.name(), a.categories[c as usize])?;
    }
    d.set_item("categories", categories)?;
    let tool_uses = PyList::empty(py);
    for t in &a.tool_uses {
        tool_uses.append((
            &t.name,
            t.category.name(),
            &t.primary_arg,
            &t.timestamp,
            t.lines,
            &t.old_text,
            &t.new_text,
        ))?;
    }
    d.set_item("tool_uses", tool_uses)?;
    d.set_item("files_touched", &a.files_touched)?;
    d.set_item("first_user_text", &a.first_user_text)?;
    d.set_item("last_user_text", &a.last_user_text)?;
    d.set_item("last_assistant_text", &a.last_assistant_text)?;
    d.set_item("first_timestamp", &a.first_timestamp)?;
    d.set_item("last_timestamp", &a.last_timestamp)?;
    d.set_item("session_id", &a.session_id)?;
    d.set_item("cwd", &a.cwd)?;
    d.set_item("title", a.title())?;
    let skipped = PyDict::new(py);
    skipped.set_item("malformed_json", a.skipped.malformed_json)?;
    skipped.set_item("invalid_utf8", a.skipped.invalid_utf8)?;
    skipped.set_item("too_long", a.skipped.too_long)?;
    d.set_item("skipped", skipped)?;
    let entry_types = PyDict::new(py);
    let mut types: Vec<(&String, &u64)> = a.entry_types.iter().collect();
    types.sort();
    for (ty, n) in types {
        entry_types.set_item(ty, n)?;
    }
    d.set_item("entry_types", entry_types)?;
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

/// Scan many `(path, format, cursor)` requests in parallel; one result or exception per request.
#[pyfunction]
fn scan_many<'py>(
    py: Python<'py>,
    requests: Vec<(String, String, Option<CursorTuple>)>,
    categories: std::collections::HashMap<String, std::collections::HashMap<String, String>>,
    max_line_bytes: usize,
    text_limit: usize,
) -> PyResult<Bound<'py, PyList>> {
    let mut option_sets: Vec<Options> = Vec::new();
    let mut option_index: std::collections::HashMap<Format, usize> =
        std::collections::HashMap::new();
    for f in Format::ALL {
        let map = categories.get(f.name()).cloned().unwrap_or_default();
        option_index.insert(f, option_sets.len());
        option_sets.push(options(parse_categories(&map)?, max_line_bytes, text_limit));
    }
    // A bad format fails its own slot, not the batch.
    let mut parsed: Vec<Result<Request, Error>> = Vec::with_capacity(requests.len());
    for (path, format, cursor) in &requests {
        parsed.push(match Format::parse(format) {
            Some(f) => Ok(Request {
                path: PathBuf::from(path),
                format: f,
                cursor: cursor.map(cursor_from),
                options_index: option_index[&f],
            }),
            None => Err(Error::UnknownFormat(format.clone())),
        });
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
    let out = PyList::empty(py);
    for (request, parse) in requests.iter().zip(parsed) {
        let result = match parse {
            Ok(_) => results.next().expect("one result per valid request"),
            Err(e) => Err(e),
        };
        match result {
            Ok(scan) => out.append(scan_dict(py, &request.0, &scan)?)?,
            Err(Error::Interrupted) => return Err(to_py_err(Error::Interrupted)),
            Err(e) => out.append(to_py_err(e).into_value(py))?,
        }
    }
    Ok(out)
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
    let entries = py
        .detach(|| sidelight_core::recent_entries(&file, format, limit, &opts))
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
            ],
        )?)?;
    }
    Ok(out)
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "FORMATS",
        PyTuple::new(m.py(), Format::ALL.map(Format::name))?,
    )?;
    m.add("TOOL_USES_KEPT", sidelight_core::TOOL_USES_KEPT)?;
    m.add("FILES_TOUCHED_KEPT", sidelight_core::FILES_TOUCHED_KEPT)?;
    m.add_function(wrap_pyfunction!(scan, m)?)?;
    m.add_function(wrap_pyfunction!(scan_many, m)?)?;
    m.add_function(wrap_pyfunction!(recent_entries, m)?)?;
    m.add_function(wrap_pyfunction!(detect_format, m)?)?;
    m.add_function(wrap_pyfunction!(file_cursor, m)?)?;
    m.add_function(wrap_pyfunction!(tail_offset, m)?)?;
    Ok(())
}
