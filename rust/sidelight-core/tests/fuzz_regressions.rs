//! Inputs the fuzz targets in `fuzz/` found, kept as tests (see `make fuzz`).

use sidelight_core::activity::{hash64, Activity, Options};
use sidelight_core::Format;

fn decode(format: Format, lines: &[&str]) -> Activity {
    let mut activity = Activity::new(&Options::default(), 0);
    for line in lines {
        format.decode(line.as_bytes(), &mut activity);
    }
    activity
}

/// decode_claude_code: a message counted in the first part of a parallel scan and seen again in the
/// second made the merged cursor remember it as the newest message, so that the next scan would count
/// the real newest message again when its lines continued past the cursor.
#[test]
fn merge_keeps_the_newest_message_counted() {
    let a = r#"{"type":"assistant","message":{"id":"A","role":"assistant","content":[]}}"#;
    let b = r#"{"type":"assistant","message":{"id":"B","role":"assistant","content":[]}}"#;
    let lines = [a, b, a];
    let whole = decode(Format::ClaudeCode, &lines);
    assert_eq!(
        (whole.assistant_messages, whole.last_message),
        (2, hash64(b"B"))
    );
    for split in 0..=lines.len() {
        let mut head = decode(Format::ClaudeCode, &lines[..split]);
        head.merge(decode(Format::ClaudeCode, &lines[split..]));
        assert_eq!(
            (head.assistant_messages, head.last_message),
            (whole.assistant_messages, whole.last_message),
            "split at {split}"
        );
    }
}

/// The input as the fuzzer minimised it (damaged lines around the replayed id).
#[test]
fn merge_keeps_the_newest_message_counted_fuzzed() {
    let lines = [
        "{\"tyn\":f\u{1},\"message\":{\"id\":\"msg_mock_6c60e9f4aad80000000000004\",\"typece\":null},\"type\":\"assistant\",\"Id\":\"e74\"}",
        "{\"message\":{\"id\":\"to\",\"ae\":null},\"toolI\u{0}\":\"reqm\",\"type\":\"assistant\",\"uuid\":4\"}",
        "{\"es\":AD\"e,\"message\":{\"id\":\"msg_mock_6c60e9f4aad80000000000004\",\"type\":ll},\"sted\":\"5m\",\"type\":\"assistant\",\"uuision\":AD\"}",
    ];
    let whole = decode(Format::ClaudeCode, &lines);
    for split in 0..=lines.len() {
        let mut head = decode(Format::ClaudeCode, &lines[..split]);
        head.merge(decode(Format::ClaudeCode, &lines[split..]));
        assert_eq!(head.last_message, whole.last_message, "split at {split}");
        assert_eq!(head.assistant_messages, whole.assistant_messages);
    }
}

/// decode_claude_code: an entry type written with escapes was counted as "<none>" once a line without
/// a type had been seen, and under its own name before that, so counts depended on line order.
#[test]
fn an_escaped_entry_type_is_counted_under_its_name() {
    let escaped = r#"{"type":"queue-oper\u0061tion","sessionId":"s"}"#;
    let untyped = r#"{"sessionId":"s"}"#;
    for lines in [[escaped, untyped], [untyped, escaped]] {
        let activity = decode(Format::ClaudeCode, &lines);
        assert_eq!(
            activity.entry_types.get("queue-operation"),
            Some(&1),
            "{lines:?}"
        );
        assert_eq!(activity.entry_types.get("<none>"), Some(&1), "{lines:?}");
    }
}
