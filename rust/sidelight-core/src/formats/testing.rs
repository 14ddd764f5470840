//! What the decoders' tests share: a category table, a counting run, and a sink that keeps results.

use super::Format;
use crate::activity::{
    hash64, Activity, Categories, Category, Meta, Options, Sink, Text, ToolCall,
};
use crate::json::RawStr;

pub(super) fn options() -> Options {
    let map = [
        ("bash", Category::Command),
        ("edit", Category::Edit),
        ("write", Category::Edit),
    ]
    .map(|(k, v)| (k.to_owned(), v));
    let mut categories: Vec<(String, Category)> = map.to_vec();
    categories.push(("apply_patch".to_owned(), Category::Edit));
    categories.push(("exec_command".to_owned(), Category::Command));
    Options {
        categories: Categories::new(categories),
        ..Options::default()
    }
}

pub(super) fn run(format: Format, lines: &[&str]) -> Activity {
    let mut a = Activity::new(&options(), 0);
    for line in lines {
        format.decode(line.as_bytes(), &mut a);
    }
    a
}

/// A sink that keeps the tool results and tree links a reader is given.
#[derive(Default)]
pub(super) struct Results {
    pub(super) tools: Vec<(Option<u64>, String)>,
    pub(super) results: Vec<(Option<u64>, bool, Option<String>)>,
    pub(super) links: Vec<(u64, Option<u64>)>,
    pub(super) prompts: Vec<String>,
}

impl Sink for Results {
    fn wants_results(&self) -> bool {
        true
    }
    fn tool_result(&mut self, id: Option<u64>, is_error: bool, text: Option<Text<'_>>) {
        let text = text.map(|t| match t {
            Text::Raw(raw) => raw.decode(),
            Text::Joined(s) => s,
        });
        self.results.push((id, is_error, text));
    }
    fn entry_link(&mut self, id: u64, parent: Option<u64>) {
        self.links.push((id, parent));
    }
    fn entry_type(&mut self, _ty: Option<&RawStr<'_>>) {}
    fn meta(&mut self, _which: Meta, _value: &RawStr<'_>) {}
    fn prompt(&mut self, text: Text<'_>, _ts: Option<&RawStr<'_>>) {
        self.prompts.push(text.trimmed(100));
    }
    fn assistant(&mut self, _id: Option<u64>, _ts: Option<&RawStr<'_>>) {}
    fn assistant_text(&mut self, _text: &RawStr<'_>, _ts: Option<&RawStr<'_>>) {}
    fn tool_use(&mut self, tool: ToolCall<'_>, _ts: Option<&RawStr<'_>>) {
        self.tools.push((tool.id, tool.name.to_owned()));
    }
    fn malformed(&mut self) {
        panic!("a line the test wrote well was malformed");
    }
    fn invalid_utf8(&mut self) {
        panic!("a line the test wrote well was not UTF-8");
    }
}

pub(super) fn results(format: Format, lines: &[&str]) -> Results {
    let mut sink = Results::default();
    for line in lines {
        format.decode(line.as_bytes(), &mut sink);
    }
    sink
}

pub(super) fn h(id: &str) -> Option<u64> {
    Some(hash64(id.as_bytes()))
}
