//! Every decoder, and format detection, on arbitrary bytes: no panic, no out-of-bounds read, and the
//! block scanner agrees with itself on where values end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sidelight_core::activity::{Activity, Options};
use sidelight_core::{simd, Format};

fuzz_target!(|data: &[u8]| {
    let options = Options::default();
    for format in Format::ALL {
        let mut activity = Activity::new(&options, 0);
        for line in data.split(|&b| b == b'\n') {
            format.decode(line, &mut activity);
        }
    }
    let _ = Format::guess(data);
    if let Some(end) = simd::container_end(data, 0) {
        assert!(end <= data.len());
    }
    if let Some((end, _)) = simd::string_end(data, 0) {
        assert!(end < data.len() && data[end] == b'"');
    }
});
