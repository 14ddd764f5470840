//! Running the core's scans from Python: the GIL released while they run, Ctrl-C honoured during long
//! ones, and a batch of requests shared between the core's parallel scan and the formats written in
//! Python (scanned in this thread: they need the GIL for every line).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

use sidelight_core::{Chunk, Cursor, Entry, Error, Format, Limits, Options, Request, Scan};

use crate::convert::{cursor_from, options, parse_categories, CursorTuple};
use crate::decoders::external;

/// Scans of fewer new bytes than this run without a watching thread: they end before Ctrl-C matters.
const INTERRUPTIBLE_BYTES: u64 = 64 << 20;

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

/// Scans many `(path, format, cursor)` requests in parallel: one result per request, in order.
pub(crate) fn scan_requests(
    py: Python<'_>,
    requests: &[(String, String, Option<CursorTuple>)],
    categories: &std::collections::HashMap<String, std::collections::HashMap<String, String>>,
    max_line_bytes: usize,
    text_limit: usize,
    results: bool,
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
                option_sets.push(options(table, max_line_bytes, text_limit, results));
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

/// Scans one file: a format written in Python in this thread, a small range with the GIL released,
/// a large one on a worker thread while Ctrl-C is watched for.
pub(crate) fn scan(
    py: Python<'_>,
    file: &Path,
    format: Format,
    cursor: Option<&Cursor>,
    opts: &Options,
    threads: usize,
) -> PyResult<Result<Scan, Error>> {
    if let Some(decoder) = external(format) {
        return decoder.scan(py, file, format, cursor, opts);
    }
    let work = |cancel: &AtomicBool| {
        sidelight_core::scan(file, format, cursor, opts, threads.max(1), cancel)
    };
    // A watching thread (for Ctrl-C) costs more than a small scan: small ranges run in this thread.
    let remaining = std::fs::metadata(file)
        .map(|m| m.len().saturating_sub(cursor.map_or(0, |c| c.offset)))
        .unwrap_or(0);
    if remaining < INTERRUPTIBLE_BYTES {
        Ok(py.detach(|| work(&AtomicBool::new(false))))
    } else {
        run_interruptible(py, work)
    }
}

/// The last `limit` entries of a file: with the GIL released, or held for a format written in Python
/// (a Ctrl-C raised in its decoder is raised here).
pub(crate) fn recent_entries(
    py: Python<'_>,
    file: &Path,
    format: Format,
    limit: usize,
    opts: &Options,
) -> PyResult<Result<Vec<Entry>, Error>> {
    if let Some(decoder) = external(format) {
        let found = sidelight_core::recent_entries(file, format, limit, opts);
        decoder.raise_pending(py)?;
        return Ok(found);
    }
    Ok(py.detach(|| sidelight_core::recent_entries(file, format, limit, opts)))
}

/// The entry reader's next chunk of a file from `start`: with the GIL released, or held for a format
/// written in Python (a Ctrl-C raised in its decoder is raised here).
pub(crate) fn read_entries(
    py: Python<'_>,
    file: &Path,
    format: Format,
    start: u64,
    limits: &Limits,
) -> PyResult<Result<Chunk, Error>> {
    let never = AtomicBool::new(false);
    let work = || sidelight_core::read_entries(file, format, start, limits, &never);
    if let Some(decoder) = external(format) {
        let found = work();
        decoder.raise_pending(py)?;
        return Ok(found);
    }
    Ok(py.detach(work))
}
