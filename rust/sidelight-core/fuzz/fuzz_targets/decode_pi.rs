//! The pi decoder on arbitrary lines: no panic, consistent counts, and a split scan that
//! merges to the same activity as one pass (see `common::check_decoder`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use sidelight_core::Format;

mod common;

fuzz_target!(|data: &[u8]| common::check_decoder(Format::Pi, data));
