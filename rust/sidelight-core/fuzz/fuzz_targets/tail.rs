//! Scanning a file written in arbitrary pieces, with scans in between, reads every complete line once.
#![no_main]

use std::io::Write;
use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use sidelight_core::activity::Options;
use sidelight_core::{scan, Format};

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("sidelight-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("t.jsonl");
    let _ = std::fs::write(&path, b"");
    let options = Options { max_line_bytes: 64, ..Options::default() };
    let never = AtomicBool::new(false);
    let mut cursor = None;
    let mut lines = 0;
    // The first byte of each piece says how long it is.
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        let n = (n as usize).min(tail.len());
        let (piece, after) = tail.split_at(n);
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(piece).unwrap();
        let s = scan(&path, Format::ClaudeCode, cursor.as_ref(), &options, 1, &never).unwrap();
        assert!(s.reset.is_none());
        lines += s.activity.lines;
        cursor = Some(s.cursor);
        rest = after;
    }
    let written = std::fs::read(&path).unwrap();
    let complete = written.split(|&b| b == b'\n').count() - 1;
    let expected = written
        .split(|&b| b == b'\n')
        .take(complete)
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .count() as u64;
    assert_eq!(lines, expected);
});
