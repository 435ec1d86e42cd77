//! One GMM release on §V-A data (K = 5, d = 3, N = 1000) drawn with `seed`; returns the KL.
use privmix::mechanisms::gmm::{synthetic_paper_data, GmmOptions};
use privmix::pipelines::gmm::release_gmm_data;
use privmix::rng::ReleaseRng;
use wasm_bindgen::prelude::*;

/// Releases with `noise` ("optimized", …) under `adjacency` ("record"/"label") at ε.
#[wasm_bindgen]
pub fn release_kl(adjacency: &str, noise: &str, eps: f64, seed: u64) -> f64 {
    let mut rng = ReleaseRng::seeded(seed);
    let data = synthetic_paper_data(5, 3, 1000, &mut rng);
    let opts = GmmOptions {
        epsilon: eps,
        noise: noise.parse().expect("noise"),
        adjacency: adjacency.parse().expect("adjacency"),
        // A public bound the benchmark chooses (it generated the data).
        bound: Some(
            data.rows
                .iter()
                .map(|r| r.iter().map(|x| x * x).sum::<f64>().sqrt())
                .fold(0.0, f64::max)
                .ceil(),
        ),
        ..GmmOptions::default()
    };
    release_gmm_data(&data, &opts, &mut rng)
        .expect("release")
        .kl
        .expect("the KL is defined for these data")
}
