//! PLD vs RDP: noise ratios at equal ε and calibration time (native).
//!
//! For each configuration (label-free DP-CDA, c = 1, δ = 1e-5 unless stated) it calibrates σx
//! with today's RDP accountant (WBK Theorem 27 + improved conversion, orders 2..=256) and with
//! the PLD accountant (replace-one within the class; and the standard adjacency), prints both
//! σ, the ratio PLD/RDP, the ε each accountant gives at the other's σ, and the wall time of the
//! PLD calibration (median of 3 runs) beside the RDP calibration's time measured in the same run.

use privmix::accountant::pld::mechanisms::{calibrate_cda, cda, Adjacency};
use privmix::accountant::pld::PldOptions;
use privmix::accountant::{default_orders, Preset};
use privmix::mechanisms::cda::accounting::{calibrate_sigma_x, CdaPrivacy};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let opts = PldOptions::default();
    let orders = default_orders();
    let delta = 1e-5;
    let configs: &[(&str, u64, u32, u64)] = &[
        ("Fashion-MNIST (pool 5978, l=4, T=6000)", 5978, 4, 6000),
        ("q=0.001, T=1e4 (pool 4000, l=4)", 4000, 4, 10_000),
        ("q=0.01, T=1e4 (pool 400, l=4)", 400, 4, 10_000),
        ("T=60000 (pool 5978, l=4)", 5978, 4, 60_000),
    ];
    println!("| config | ε | σ RDP | σ PLD (label kept) | ratio | σ PLD (standard) | ratio | ε_PLD at σ_RDP | t RDP calib (ms) | t PLD calib (ms) |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &(name, pool, mix, samples) in configs {
        for &eps in &[10.0, 1.0] {
            let base = CdaPrivacy {
                pool,
                mix,
                clip: 1.0,
                sigma_x: 1.0,
                sigma_y: None,
                samples,
            };
            let t0 = Instant::now();
            let rdp = calibrate_sigma_x(
                pool,
                mix,
                1.0,
                None,
                samples,
                delta,
                eps,
                &orders,
                Preset::Default,
                None,
            )
            .expect("rdp calibration");
            let t_rdp = t0.elapsed().as_secs_f64() * 1e3;
            let mut times = Vec::new();
            let mut kept = None;
            for _ in 0..3 {
                let t = Instant::now();
                kept = Some(
                    calibrate_cda(&base, Adjacency::LabelKept, eps, delta, &opts).expect("pld"),
                );
                times.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let (s_kept, _) = kept.unwrap();
            let (s_std, _) =
                calibrate_cda(&base, Adjacency::Standard, eps, delta, &opts).expect("pld std");
            let mut at_rdp = base;
            at_rdp.sigma_x = rdp.sigma_x;
            let e_at = cda(&at_rdp, Adjacency::LabelKept)
                .unwrap()
                .epsilon(delta, &opts)
                .unwrap()
                .epsilon;
            println!(
                "| {name} | {eps} | {:.5} | {:.5} | {:.3} | {:.5} | {:.3} | {:.3} | {:.1} | {:.1} |",
                rdp.sigma_x,
                s_kept,
                s_kept / rdp.sigma_x,
                s_std,
                s_std / rdp.sigma_x,
                e_at,
                t_rdp,
                median(times)
            );
        }
    }
}
