//! How every decoder reads a line: whether its object ends well, how a value that may end the reading
//! is read, and why a line was not decoded.

use crate::json::{Flow, Reader};
use crate::simd;

/// Checks what follows a line's object (nothing but whitespace when it was read to its end, or at least
/// a closing brace at the end of the line when reading stopped early), and that what was read is UTF-8.
pub(super) fn line_end(r: &mut Reader<'_>, stopped: bool) -> Result<(), Bad> {
    let read = if stopped {
        if !r.bytes.trim_ascii_end().ends_with(b"}") {
            return Err(Bad::Malformed);
        }
        &r.bytes[..r.i]
    } else {
        r.ws();
        if r.i != r.bytes.len() {
            return Err(Bad::Malformed);
        }
        r.bytes
    };
    // Only the bytes read are checked: what was skipped unread never reaches a count or a text.
    simdutf8::basic::from_utf8(read)
        .map(|_| ())
        .map_err(|_| Bad::InvalidUtf8)
}

/// Why a line was not decoded.
pub(super) enum Bad {
    Malformed,
    InvalidUtf8,
}

/// Reads the object value at the reader with `read`, and says whether `read` stopped early. Then, unless
/// `may_stop_line` says nothing after it is needed, the rest of the object is stepped over so that the
/// line can be read on.
pub(super) fn object_value<'a>(
    r: &mut Reader<'a>,
    may_stop_line: bool,
    read: impl FnOnce(&mut Reader<'a>) -> Option<Flow>,
) -> Option<bool> {
    r.ws();
    let start = r.i;
    if read(r)? == Flow::Continue {
        return Some(false);
    }
    if !may_stop_line {
        r.i = simd::container_end(r.bytes, start)?;
    }
    Some(true)
}
