//! The tailer against a model: a file is appended to in arbitrary pieces (partial lines, lines past the
//! length limit, blank lines), truncated, rotated, deleted and re-created, or overwritten in place, with
//! scans in between that resume from the previous cursor. Every complete line of the file's current
//! generation is read exactly once, or the scan reports a reset and reads the generation again.
#![no_main]

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use sidelight_core::activity::Options;
use sidelight_core::{scan, Cursor, Format};

fn append(path: &Path, bytes: &[u8]) {
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

/// Nonblank complete lines of `written`: what a reader of the whole generation counts.
fn complete_lines(written: &[u8]) -> u64 {
    let complete = written.iter().filter(|&&b| b == b'\n').count();
    written
        .split(|&b| b == b'\n')
        .take(complete)
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .count() as u64
}

fuzz_target!(|data: &[u8]| {
    let Some((&config, mut rest)) = data.split_first() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("sidelight-fuzz-tail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.jsonl");
    std::fs::write(&path, b"").unwrap();
    let format = Format::ALL[usize::from(config) % 3];
    let options = Options {
        max_line_bytes: [16, 64, 300, 64 << 20][usize::from(config >> 2) % 4],
        ..Options::default()
    };
    let never = AtomicBool::new(false);
    let run = |cursor: Option<&Cursor>| {
        scan(&path, format, cursor, &options, 1, &never).expect("scan of a readable file")
    };

    let mut written: Vec<u8> = Vec::new();
    let mut read = 0u64;
    let mut cursor: Option<Cursor> = None;
    // The generation changed under a cursor that had read something: the next scan must say so.
    let mut reset_due = false;
    let mut generation = 0u32;
    let finish =
        |cursor: &mut Option<Cursor>, read: &mut u64, reset_due: &mut bool, written: &[u8]| {
            let s = run(cursor.as_ref());
            if s.reset.is_some() {
                *read = 0;
                assert_eq!(s.start_offset, 0);
            } else {
                assert!(!*reset_due, "a new generation went unreported");
                assert_eq!(s.start_offset, cursor.map_or(0, |c| c.offset));
            }
            *reset_due = false;
            *read += s.activity.lines;
            // The cursor stops at a line boundary and holds back the partial last line.
            let end = s.cursor.offset as usize;
            assert!(end <= written.len());
            assert!(end == 0 || written[end - 1] == b'\n');
            assert!(!written[end..].contains(&b'\n'));
            assert_eq!(s.pending_bytes(), (written.len() - end) as u64);
            *cursor = Some(s.cursor);
        };

    // Each op is a byte (its kind) and, for an append, a length byte and that many bytes.
    while let Some((&op, tail)) = rest.split_first() {
        rest = tail;
        match op % 9 {
            0..=3 => {
                let Some((&n, tail)) = rest.split_first() else {
                    break;
                };
                let n = usize::from(n).min(tail.len());
                // NUL never appears in appended text, so no generation can begin like another.
                let piece: Vec<u8> = tail[..n].iter().copied().filter(|&b| b != 0).collect();
                rest = &tail[n..];
                append(&path, &piece);
                written.extend_from_slice(&piece);
            }
            4 => finish(&mut cursor, &mut read, &mut reset_due, &written),
            kind => {
                // A new generation starts with a line of its own, so that it differs from the old one
                // even where the filesystem hands out the same inode again.
                generation += 1;
                let header = format!("\0generation {generation}\n").into_bytes();
                match kind {
                    5 => std::fs::write(&path, &header).unwrap(), // truncate in place
                    6 => {
                        std::fs::rename(&path, dir.join("rotated")).unwrap();
                        std::fs::write(&path, &header).unwrap();
                    }
                    7 => {
                        std::fs::remove_file(&path).unwrap();
                        std::fs::write(&path, &header).unwrap();
                    }
                    _ => {
                        // Rewritten in place: the header overwrites the start, the rest stays.
                        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                        std::os::unix::fs::FileExt::write_all_at(&file, &header, 0).unwrap();
                        let mut now = header.clone();
                        now.extend_from_slice(written.get(header.len()..).unwrap_or_default());
                        written = now;
                        reset_due |= cursor.is_some_and(|c| c.offset > 0);
                        continue;
                    }
                }
                written = header;
                reset_due |= cursor.is_some_and(|c| c.offset > 0);
            }
        }
    }
    finish(&mut cursor, &mut read, &mut reset_due, &written);
    assert_eq!(read, complete_lines(&written));
    // A scan from the final cursor reads nothing new.
    let again = run(cursor.as_ref());
    assert_eq!((again.reset, again.activity.lines), (None, 0));
    let _ = std::fs::remove_dir_all(&dir);
});
