//! Size probe: see Cargo.toml.
use privmix::data::{read_csv_bytes, CsvOptions};
use privmix::pipelines::synth::{synthesize, SynthOptions};
use privmix::rng::ReleaseRng;

fn input<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    // SAFETY: the caller passes a valid buffer (this crate is only built to be measured).
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// CSV in (label column `label`), number of synthetic rows out.
#[no_mangle]
pub extern "C" fn synth_csv(ptr: *const u8, len: usize, seed: u64) -> usize {
    let opts = CsvOptions {
        label: Some("label".into()),
        ..CsvOptions::default()
    };
    let Ok(table) = read_csv_bytes(input(ptr, len), &opts) else {
        return 0;
    };
    let mut rows = 0;
    let s = SynthOptions {
        epsilon: Some(1.0),
        ..SynthOptions::default()
    };
    let r = synthesize(
        &table,
        None,
        &s,
        &mut ReleaseRng::seeded(seed),
        |_| Ok(()),
        |c| {
            rows += c.len();
            Ok(())
        },
        |_| Ok(()),
    );
    r.map(|r| rows + r.to_json().len()).unwrap_or(0)
}

/// ZIP of class folders in, size of the synthetic ZIP + previews out.
#[cfg(feature = "images")]
#[no_mangle]
pub extern "C" fn synth_zip(ptr: *const u8, len: usize, seed: u64) -> usize {
    use privmix::images;
    let Ok(set) = images::load_zip(input(ptr, len), &images::ImageOptions::default(), "in.zip")
    else {
        return 0;
    };
    let real = images::preview_grid(&set, 10).map(|p| p.len()).unwrap_or(0);
    let s = SynthOptions {
        epsilon: Some(1.0),
        ..SynthOptions::default()
    };
    images::synthesize_images(&set, &s, &mut ReleaseRng::seeded(seed), |_| Ok(()))
        .map(|o| o.zip.len() + o.preview_png.len() + o.receipt.to_json().len() + real)
        .unwrap_or(0)
}
