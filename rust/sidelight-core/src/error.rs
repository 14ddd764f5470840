//! The one error type of the core; the binding maps it to Python builtins and `sidelight.errors`.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a path that is no regular file is refused (Python's `sidelight.engine.paths.NOT_REGULAR` says the same).
pub const NOT_REGULAR: &str = "not a regular file (a FIFO, socket or device)";

#[derive(Debug)]
pub enum Error {
    NotFound(PathBuf),
    PermissionDenied(PathBuf),
    IsADirectory(PathBuf),
    /// A FIFO, socket or device where a transcript was expected: refused, never read (reading a FIFO
    /// blocks until a writer comes).
    NotRegularFile(PathBuf),
    /// The caller asked the scan to stop (Ctrl-C).
    Interrupted,
    UnknownFormat(String),
    Io(PathBuf, io::Error),
}

impl Error {
    pub fn io(path: &Path, error: io::Error) -> Error {
        match error.kind() {
            io::ErrorKind::NotFound => Error::NotFound(path.to_owned()),
            io::ErrorKind::PermissionDenied => Error::PermissionDenied(path.to_owned()),
            io::ErrorKind::IsADirectory => Error::IsADirectory(path.to_owned()),
            io::ErrorKind::Interrupted => Error::Interrupted,
            _ => Error::Io(path.to_owned(), error),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotFound(p) => write!(f, "no such file: {}", p.display()),
            Error::PermissionDenied(p) => write!(f, "permission denied: {}", p.display()),
            Error::IsADirectory(p) => {
                write!(f, "is a directory, not a transcript file: {}", p.display())
            }
            Error::NotRegularFile(p) => write!(f, "{NOT_REGULAR}: {}", p.display()),
            Error::Interrupted => write!(f, "scan interrupted"),
            Error::UnknownFormat(name) => {
                write!(
                    f,
                    "unknown format {name:?}; expected one of claude-code, pi, codex"
                )
            }
            Error::Io(p, e) => write!(f, "cannot read {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for Error {}
