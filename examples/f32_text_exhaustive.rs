//! Exhaustive check that privmix's fast f32 output text equals Rust's `Display` for every one
//! of the 2^32 f32 bit patterns (the unit test samples 2,000,000 of them).
//!
//! usage: cargo run --release --example f32_text_exhaustive [THREADS]
//! Prints the number of patterns checked and of mismatches (with the first few), and exits
//! with status 1 on any mismatch.
use privmix::preprocess::encode::push_f32_display;
use std::fmt::Write;

fn main() {
    let threads: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4);
    let per = (1u64 << 32) / threads;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                let (lo, hi) = (
                    t * per,
                    if t + 1 == threads {
                        1 << 32
                    } else {
                        (t + 1) * per
                    },
                );
                let (mut a, mut b) = (String::new(), String::new());
                let mut bad = Vec::new();
                let mut count = 0u64;
                for bits in lo..hi {
                    let v = f32::from_bits(bits as u32);
                    a.clear();
                    b.clear();
                    push_f32_display(&mut a, v);
                    let _ = write!(b, "{v}");
                    count += 1;
                    if a != b && bad.len() < 5 {
                        bad.push(format!("{bits:#010x}: {a} vs {b}"));
                    } else if a != b {
                        bad.push(String::new());
                    }
                }
                (count, bad)
            })
        })
        .collect();
    let (mut count, mut bad) = (0u64, Vec::new());
    for h in handles {
        let (c, b) = h.join().expect("thread");
        count += c;
        bad.extend(b);
    }
    println!("checked {count} f32 bit patterns, {} mismatches", bad.len());
    for b in bad.iter().filter(|b| !b.is_empty()).take(10) {
        println!("  {b}");
    }
    if !bad.is_empty() {
        std::process::exit(1);
    }
}
