//! `sidelight._core`: the thin binding of sidelight-core. Primitive arguments in, plain data out, the
//! GIL released while files are read, and Ctrl-C honoured during long scans.
//!
//! This file holds the module's functions and its initialisation; `convert` turns core types into
//! Python data and back, `scans` runs the core's scans without the GIL, `decoders` bridges line
//! decoders written in Python, and `spec` reads a format description.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use sidelight_core::{Categories, Format, Limits};

mod convert;
mod decoders;
mod scans;
mod spec;

use convert::{
    counts_tuple, cursor_from, cursor_tuple, entry_chunk, entry_list, options, parse_categories,
    parse_format, result_list, scan_dict, to_py_err, CursorTuple, EntryChunk,
};
use decoders::PyDecoder;
use scans::scan_requests;
use spec::spec_from;

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
    let opts = options(
        parse_categories(&categories)?,
        max_line_bytes,
        text_limit,
        false,
    );
    let cursor = cursor.map(cursor_from);
    let file = PathBuf::from(path);
    let result = scans::scan(py, &file, format, cursor.as_ref(), &opts, threads)?;
    scan_dict(py, path, &result.map_err(to_py_err)?, false)
}

/// Scan many `(path, format, cursor)` requests in parallel; one result or exception per request.
/// `results`: keep each kept command's result (the digest tells a failed command by it).
#[pyfunction]
#[pyo3(signature = (requests, categories, max_line_bytes, text_limit, results=false))]
fn scan_many<'py>(
    py: Python<'py>,
    requests: Vec<(String, String, Option<CursorTuple>)>,
    categories: std::collections::HashMap<String, std::collections::HashMap<String, String>>,
    max_line_bytes: usize,
    text_limit: usize,
    results: bool,
) -> PyResult<Bound<'py, PyList>> {
    let found = scan_requests(
        py,
        &requests,
        &categories,
        max_line_bytes,
        text_limit,
        results,
    )?;
    result_list(py, &requests, found, |path, scan| {
        Ok(scan_dict(py, path, scan, results)?.into_any())
    })
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
    let found = scan_requests(
        py,
        &requests,
        &categories,
        max_line_bytes,
        text_limit,
        false,
    )?;
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
    let opts = options(Categories::default(), max_line_bytes, text_limit, false);
    let file = PathBuf::from(path);
    let entries = scans::recent_entries(py, &file, format, limit, &opts)?.map_err(to_py_err)?;
    entry_list(py, entries)
}

/// The entries of the complete lines of `path` from `start_offset` on, in order, in one chunk.
#[pyfunction]
#[pyo3(signature = (
    path, format, start_offset, max_entries, max_bytes, max_line_bytes, text_limit, result_limit,
    *, sidechain = false
))]
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
    sidechain: bool,
) -> PyResult<EntryChunk> {
    let format = parse_format(format)?;
    let limits = Limits {
        max_entries: max_entries.max(1),
        max_bytes: max_bytes.max(1),
        max_line_bytes,
        text_limit,
        result_limit,
        sidechain,
    };
    let file = PathBuf::from(path);
    let chunk =
        scans::read_entries(py, &file, format, start_offset, &limits)?.map_err(to_py_err)?;
    Ok(entry_chunk(chunk))
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

/// Each path's `(size, inode, device)`, or `None` when it cannot be stat-ed, with the GIL released
/// once for all of them (a stat per path from Python gives the lock up and waits for it back each time,
/// behind the watcher's other threads).
#[pyfunction]
fn file_identities(py: Python<'_>, paths: Vec<PathBuf>) -> Vec<Option<(u64, u64, u64)>> {
    py.detach(|| sidelight_core::file_identities(&paths))
}

/// The offset of the first line that starts within the last `max_bytes` bytes of `path`.
#[pyfunction]
fn tail_offset(py: Python<'_>, path: &str, max_bytes: u64) -> PyResult<u64> {
    let file = PathBuf::from(path);
    py.detach(|| sidelight_core::tail_offset(&file, max_bytes))
        .map_err(to_py_err)
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
    PyDecoder::register(name, decode, table)
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
    // The one table of the built-in formats' tool categories (`sidelight.formats.DEFAULT_CATEGORIES`).
    let defaults = PyDict::new(m.py());
    for format in Format::ALL {
        let table = PyDict::new(m.py());
        for (tool, category) in format.default_tools() {
            table.set_item(*tool, category.name())?;
        }
        defaults.set_item(format.name(), table)?;
    }
    m.add("DEFAULT_CATEGORIES", defaults)?;
    m.add("TOOL_USES_KEPT", sidelight_core::TOOL_USES_KEPT)?;
    m.add("FILES_TOUCHED_KEPT", sidelight_core::FILES_TOUCHED_KEPT)?;
    // The core's word on which user texts a client wrote (every reader decodes through the core; the
    // lists are here for the tests and benchmarks that check against it).
    m.add(
        "SYNTHETIC_PROMPT_PREFIXES",
        PyTuple::new(m.py(), sidelight_core::activity::SYNTHETIC_PROMPT_PREFIXES)?,
    )?;
    // The keys of a tool's arguments that name what it acts on, as the built-in decoders read them:
    // the default of a described format's `primary_keys` (`sidelight.formats.Layout`).
    m.add(
        "PRIMARY_KEYS",
        PyTuple::new(m.py(), sidelight_core::formats::PRIMARY_KEYS)?,
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
    m.add_function(wrap_pyfunction!(file_identities, m)?)?;
    m.add_function(wrap_pyfunction!(declare_format, m)?)?;
    m.add_function(wrap_pyfunction!(register_decoder, m)?)?;
    m.add_function(wrap_pyfunction!(declared_formats, m)?)?;
    Ok(())
}
