//! A described (declarative) format on arbitrary lines: no panic, consistent counts, and a split scan
//! that merges to the same activity as one pass (see `common::check_decoder`). The first byte picks the
//! description: Pi's layout or Gemini's (`sidelight_core::formats::declared::samples`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use sidelight_core::formats::declare;
use sidelight_core::formats::declared::samples;
use sidelight_core::{Categories, Format};

mod common;

fn formats() -> &'static [Format; 2] {
    static FORMATS: OnceLock<[Format; 2]> = OnceLock::new();
    FORMATS.get_or_init(|| {
        [
            declare("fuzz-pi-layout", &samples::pi(), Categories::default()).expect("the Pi layout compiles"),
            declare("fuzz-gemini-layout", &samples::gemini(), Categories::default()).expect("the Gemini layout compiles"),
        ]
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    common::check_decoder(formats()[usize::from(which & 1)], rest);
});
