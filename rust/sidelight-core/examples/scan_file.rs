//! Scans files with the core and prints throughput: `cargo run --release --example scan_file -- FORMAT THREADS FILE...`.
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use sidelight_core::{scan, Format, Options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let format = Format::parse(&args[0]).expect("a format name");
    let threads: usize = args[1].parse().expect("a thread count");
    let options = Options::default();
    let never = AtomicBool::new(false);
    for file in &args[2..] {
        let mut best = f64::MAX;
        let mut size = 0;
        for _ in 0..5 {
            let t = Instant::now();
            let s = scan(Path::new(file), format, None, &options, threads, &never).expect("scan");
            best = best.min(t.elapsed().as_secs_f64());
            size = s.file_size;
        }
        println!("{file}: {:.0} MB/s", size as f64 / best / 1e6);
    }
}
