//! Resuming from any cursor a state file could hold (a stale, corrupt or hand-edited one) on any file
//! content: the scan never panics, either resumes exactly where the cursor says or reports a reset, and
//! always ends on a line boundary. The entry points that place cursors (`file_cursor`, `tail_offset`)
//! land on line starts, and the backward reader and format detection accept anything.
#![no_main]

use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use sidelight_core::activity::{hash64, Options};
use sidelight_core::{
    detect_format, file_cursor, recent_entries, scan, tail_offset, Cursor, Format, Scan,
};

fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    for (i, b) in bytes.iter().skip(at).take(8).enumerate() {
        w[i] = *b;
    }
    u64::from_le_bytes(w)
}

fn at_line_start(content: &[u8], offset: u64) -> bool {
    offset == 0 || content.get(offset as usize - 1) == Some(&b'\n')
}

fuzz_target!(|data: &[u8]| {
    // 24 bytes of cursor material, then the file content.
    if data.len() < 24 {
        return;
    }
    let (material, content) = data.split_at(24);
    let dir = std::env::temp_dir().join(format!("sidelight-fuzz-cursor-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.jsonl");
    std::fs::write(&path, content).unwrap();
    let size = content.len() as u64;
    let format = Format::ALL[usize::from(material[0]) % 3];
    let options = Options {
        max_line_bytes: [16, 200, 64 << 20][usize::from(material[1]) % 3],
        ..Options::default()
    };
    let never = AtomicBool::new(false);

    let real = file_cursor(&path, 0).unwrap();
    let offset = word(material, 2) % (size + 2);
    // How much of the cursor is real: identity, head hash and tail hash each true or garbage.
    let flags = material[10];
    let head_len = if flags & 1 != 0 {
        size.min(4096)
    } else {
        word(material, 11) % (size + 2)
    };
    let tail_len = offset.min(64);
    let cursor = Cursor {
        offset,
        dev: if flags & 2 != 0 {
            real.dev
        } else {
            word(material, 12)
        },
        inode: if flags & 2 != 0 {
            real.inode
        } else {
            word(material, 13)
        },
        head_len,
        head_hash: match content.get(..head_len as usize) {
            Some(head) if flags & 4 != 0 => hash64(head),
            _ => word(material, 14),
        },
        tail_hash: match content.get((offset - tail_len) as usize..offset as usize) {
            Some(tail) if flags & 8 != 0 => hash64(tail),
            _ => word(material, 15),
        },
        last_message: word(material, 16),
    };
    let s: Scan = scan(&path, format, Some(&cursor), &options, 1, &never).expect("scan");
    match s.reset {
        None => assert_eq!(s.start_offset, offset),
        Some(_) => assert_eq!(s.start_offset, 0),
    }
    assert!(s.cursor.offset <= size && s.cursor.offset >= s.start_offset);
    // The scan stops just after a newline, or where it started (a mid-line offset from a corrupt cursor
    // reads on to the next newline, so that is a newline too when anything was read).
    assert!(s.cursor.offset == s.start_offset || content[s.cursor.offset as usize - 1] == b'\n');
    assert!(!content[s.cursor.offset as usize..].contains(&b'\n'));
    // Resuming from the cursor the scan returned reads nothing new.
    let again = scan(&path, format, Some(&s.cursor), &options, 1, &never).expect("rescan");
    assert_eq!((again.reset, again.activity.lines), (None, 0));

    let placed = file_cursor(&path, offset).unwrap();
    assert!(placed.offset <= offset.min(size) && at_line_start(content, placed.offset));
    let max_bytes = word(material, 17) % (size + 2);
    let t = tail_offset(&path, max_bytes).unwrap();
    assert!(t <= size && at_line_start(content, t));
    let limit = usize::from(material[18]) % 8;
    let entries = recent_entries(&path, format, limit, &options).unwrap();
    assert!(entries.len() <= limit);
    let _ = detect_format(&path).unwrap();
});
