//! sidelight-core: offset-based tailing of agent transcripts (JSONL) and activity counting.
//!
//! Plain Rust, no Python: `rust/sidelight-py` binds it as `sidelight._core`. The counting contract
//! is `docs/activity.md` at the repository root.

pub mod activity;
pub mod entries;
pub mod error;
pub mod formats;
pub mod json;
pub mod scan;
pub mod simd;
pub mod tail;

pub use activity::{
    Activity, Categories, Category, Options, ToolUse, FILES_TOUCHED_KEPT, TOOL_USES_KEPT,
};
pub use entries::{read_entries, Chunk, Limits, LogEntry};
pub use error::Error;
pub use formats::Format;
pub use scan::{
    detect_format, file_cursor, file_identities, recent_entries, scan, scan_many, tail_offset,
    Cursor, Entry, Request, Reset, Scan,
};
