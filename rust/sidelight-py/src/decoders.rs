//! The bridge to line decoders written in Python: a [`PyDecoder`] is registered in the core's format
//! registry as an external format ([`LineDecoder`]), turns the events its callback returns into what a
//! built-in decoder reports, and carries a Ctrl-C raised in the callback back to the caller.

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use sidelight_core::activity::Sink;
use sidelight_core::formats::declared::{report_events, Event, LineDecoder};
use sidelight_core::formats::PRIMARY_KEYS;
use sidelight_core::{Categories, Cursor, Error, Format, Options, Scan};

/// A line decoder written in Python: `decode(line: bytes)` returns the line's events (tuples
/// `(kind, text, timestamp, id, name, arguments, primary, is_error)`, see `sidelight.formats.Event`;
/// a tuple without the last field, as events were before results, is read too) or `None`;
/// raising `ValueError` (or any `Exception`) counts the line as malformed.
pub(crate) struct PyDecoder {
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
    /// Registers `decode` in the core's registry as the decoder of the external format `name`, with
    /// its tool categories. The decoder lives as long as the process, as every registered format.
    pub(crate) fn register(
        name: &str,
        decode: Bound<'_, PyAny>,
        categories: Categories,
    ) -> Result<(), String> {
        let decoder: &'static PyDecoder = Box::leak(Box::new(PyDecoder {
            name: name.to_owned(),
            decode: decode.unbind(),
            cancel: AtomicBool::new(false),
            pending: std::sync::Mutex::new(None),
        }));
        sidelight_core::formats::register(Format::External(decoder), categories)
    }

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
    pub(crate) fn scan(
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

    pub(crate) fn raise_pending(&self, _py: Python<'_>) -> PyResult<()> {
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
pub(crate) fn external(format: Format) -> Option<&'static PyDecoder> {
    let Format::External(d) = format else {
        return None;
    };
    d.as_any().downcast_ref::<PyDecoder>()
}
