//! What the fuzz targets share: decoding one format over arbitrary lines, checked against itself.

use sidelight_core::activity::{Activity, Options};
use sidelight_core::scan::RESULT_ENDS;
use sidelight_core::{recent_entries, simd, Format};

/// The fields of an activity that a split scan must reproduce exactly.
fn summary(a: &Activity) -> impl PartialEq + std::fmt::Debug {
    let mut tools: Vec<_> = a.tools.iter().map(|(k, v)| (k.clone(), *v)).collect();
    tools.sort();
    let mut types: Vec<_> = a.entry_types.iter().map(|(k, v)| (k.clone(), *v)).collect();
    types.sort();
    let uses: Vec<_> = a
        .tool_uses
        .iter()
        .map(|t| (t.name.clone(), t.primary_arg.clone()))
        .collect();
    (
        (
            a.user_messages,
            a.assistant_messages,
            a.categories,
            tools,
            types,
        ),
        (a.skipped, a.files_touched.clone(), uses),
        (
            a.first_user_text.clone(),
            a.last_user_text.clone(),
            a.last_assistant_text.clone(),
            a.session_id.clone(),
            a.cwd.clone(),
            a.title().map(str::to_owned),
            a.last_message,
        ),
        // Not the timestamps: a tool use replayed across the split is stamped by the second part before
        // the merge finds it counted already, so a parallel scan may take its line's timestamp as the
        // first or last one (known, left as it is: it needs a replay straddling an 8 MiB part boundary).
    )
}

/// Decodes every line of `data` as `format`: no panic, counts that add up, and the same result when
/// the lines are read as two parts and merged (as a parallel scan of a large file does).
pub fn check_decoder(format: Format, data: &[u8]) {
    // The first byte picks where the lines are split in two; the rest is the transcript.
    let Some((&split, data)) = data.split_first() else {
        return;
    };
    let options = Options {
        text_limit: 40,
        ..Options::default()
    };
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect();

    let mut whole = Activity::new(&options, 0);
    for line in &lines {
        format.decode(line, &mut whole);
    }
    let tool_total: u64 = whole.tools.values().sum();
    assert_eq!(tool_total, whole.categories.iter().sum::<u64>());
    let decoded: u64 = whole.entry_types.values().sum();
    let skipped = whole.skipped.malformed_json + whole.skipped.invalid_utf8;
    assert!(decoded + skipped <= lines.len() as u64);
    for text in [
        &whole.first_user_text,
        &whole.last_user_text,
        &whole.last_assistant_text,
    ]
    .into_iter()
    .flatten()
    {
        assert!(text.chars().count() <= options.text_limit, "{text:?}");
    }

    let at = usize::from(split) % (lines.len() + 1);
    let mut head = Activity::new(&options, 0);
    for line in &lines[..at] {
        format.decode(line, &mut head);
    }
    let mut tail = Activity::new(&options, 0);
    // A decoder stops reading a line once it holds everything counted, and the session's identity is
    // part of that until it is known, so damage late in a line is noticed (counted as malformed) only
    // while the identity is unknown (docs/activity.md, "Lines"). The second part of a real parallel
    // scan does not know it yet; here it does, so that the comparison is about merging alone.
    tail.session_id.clone_from(&head.session_id);
    tail.cwd.clone_from(&head.cwd);
    for line in &lines[at..] {
        format.decode(line, &mut tail);
    }
    head.merge(tail);
    assert_eq!(summary(&head), summary(&whole), "split at line {at}");

    // Format detection and the block scanner the decoders rely on.
    for line in &lines {
        let _ = Format::guess(line);
    }
    if let Some(end) = simd::container_end(data, 0) {
        assert!(end <= data.len());
    }
    if let Some((end, _)) = simd::string_end(data, 0) {
        assert!(end < data.len() && data[end] == b'"');
    }

    check_entries(format, data, &options);
}

/// The entry reader (`sidelight read`, history) on the same transcript: it asks the decoders for tool
/// results and tree links too, which the counting scan never does. No panic, and every result is cut
/// to its two ends.
fn check_entries(format: Format, data: &[u8], options: &Options) {
    let path = std::env::temp_dir().join(format!(
        "sidelight-fuzz-entries-{}.jsonl",
        std::process::id()
    ));
    std::fs::write(&path, data).expect("the fuzz transcript is written");
    let entries =
        recent_entries(&path, format, 1000, options).expect("the fuzz transcript is read");
    for entry in &entries {
        if let Some(result) = &entry.result {
            assert!(result.chars().count() <= 2 * RESULT_ENDS + 3, "{result:?}");
        }
        assert!(entry.text.as_ref().map_or(0, |t| t.chars().count()) <= options.text_limit);
    }
}
