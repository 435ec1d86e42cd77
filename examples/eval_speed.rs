//! Speed and sanity benchmark of the evaluation models.
//!
//! ```text
//! cargo run --release --example eval_speed [-- --mnist FILE.csv.gz] [--adult DIR]
//! ```
//!
//! Always runs logistic regression on a synthetic 60000 x 784, 10-class problem (plus 10000
//! test rows) and a decision tree on a synthetic 30000 x 106 "Adult-like" table (6 numeric
//! columns, 100 one-hot columns). With `--mnist`, trains logistic regression (and a tree) on
//! the first 8000 rows of an MNIST CSV (`label,px0..px783`, gzip) and tests on the rest. With
//! `--adult`, one-hot encodes UCI Adult (`adult.data`, `adult.test`) and trains both models.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::time::Instant;

use flate2::read::GzDecoder;
use ndarray::{s, Array2};
use privmix::eval::accuracy;
use privmix::eval::logreg::{LogReg, LogRegParams};
use privmix::eval::tree::{DecisionTree, TreeParams};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };

    synthetic_logreg();
    synthetic_tree();
    if let Some(path) = arg("--mnist") {
        mnist(&path);
    }
    if let Some(dir) = arg("--adult") {
        adult(&dir);
    }
}

fn run_logreg(
    name: &str,
    xtr: &Array2<f32>,
    ytr: &[u32],
    xte: &Array2<f32>,
    yte: &[u32],
    k: usize,
) {
    let t = Instant::now();
    let m = LogReg::fit(xtr.view(), ytr, k, &LogRegParams::default()).expect("fit");
    let fit_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let pred = m.predict(xte.view());
    let pred_s = t.elapsed().as_secs_f64();
    let i = m.info();
    println!(
        "{name}: logreg {}x{} -> fit {fit_s:.2} s ({} iterations, {} evaluations, {:.1} ms/eval, stop {:?}, \
         loss {:.5}, |grad| {:.2e} = {:.2e} relative), predict {pred_s:.3} s, test accuracy {:.4}",
        xtr.nrows(),
        xtr.ncols(),
        i.iterations,
        i.evaluations,
        1e3 * fit_s / i.evaluations as f64,
        i.stop,
        i.loss,
        i.grad_norm,
        i.grad_norm / i.initial_grad_norm.max(1.0),
        accuracy(&pred, yte)
    );
}

fn run_tree(name: &str, xtr: &Array2<f32>, ytr: &[u32], xte: &Array2<f32>, yte: &[u32], k: usize) {
    let t = Instant::now();
    let m = DecisionTree::fit(xtr.view(), ytr, k, &TreeParams::default()).expect("fit");
    let fit_s = t.elapsed().as_secs_f64();
    let pred = m.predict(xte.view());
    println!(
        "{name}: tree {}x{} -> fit {fit_s:.2} s (depth {}, {} leaves), test accuracy {:.4}",
        xtr.nrows(),
        xtr.ncols(),
        m.depth(),
        m.n_leaves(),
        accuracy(&pred, yte)
    );
}

/// Gaussian class means (`0.09 * N(0, I)`, features rescaled by random factors) plus unit
/// noise: roughly 90% Bayes accuracy.
fn synthetic_logreg() {
    let (n, n_test, d, k) = (60_000, 10_000, 784, 10);
    let t = Instant::now();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let normal = Normal::new(0.0f32, 1.0).unwrap();
    let means = Array2::from_shape_fn((k, d), |_| 0.09 * normal.sample(&mut rng));
    let scales: Vec<f32> = (0..d)
        .map(|_| 10f32.powf(rng.gen_range(-1.0..2.0)))
        .collect();
    let mut gen = |rows: usize| {
        let y: Vec<u32> = (0..rows).map(|_| rng.gen_range(0..k as u32)).collect();
        let x = Array2::from_shape_fn((rows, d), |(i, j)| {
            scales[j] * (means[[y[i] as usize, j]] + normal.sample(&mut rng)) + 3.0
        });
        (x, y)
    };
    let (xtr, ytr) = gen(n);
    let (xte, yte) = gen(n_test);
    println!(
        "synthetic 60000x784: generated in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    run_logreg("synthetic", &xtr, &ytr, &xte, &yte, k);
}

/// 6 numeric columns and 10 categorical columns of 10 levels each (one-hot), label from a
/// noisy rule over a few of them.
fn synthetic_tree() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let normal = Normal::new(0.0f32, 1.0).unwrap();
    let mut gen = |rows: usize| {
        let mut x = Array2::<f32>::zeros((rows, 106));
        let mut y = Vec::with_capacity(rows);
        for i in 0..rows {
            for j in 0..6 {
                x[[i, j]] = normal.sample(&mut rng) * 10.0 + 40.0;
            }
            let mut cats = [0usize; 10];
            for (g, c) in cats.iter_mut().enumerate() {
                *c = rng.gen_range(0..10);
                x[[i, 6 + 10 * g + *c]] = 1.0;
            }
            let score = (x[[i, 0]] > 45.0) as u32
                + (cats[0] < 3) as u32
                + (x[[i, 1]] < 35.0) as u32
                + (cats[1] == 7) as u32;
            let flip = rng.gen_bool(0.05);
            y.push(u32::from((score >= 2) != flip));
        }
        (x, y)
    };
    let (xtr, ytr) = gen(30_000);
    let (xte, yte) = gen(10_000);
    run_tree("synthetic adult-like", &xtr, &ytr, &xte, &yte, 2);
}

fn mnist(path: &str) {
    let mut text = String::new();
    GzDecoder::new(File::open(path).expect("open MNIST file"))
        .read_to_string(&mut text)
        .expect("gunzip");
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    let d = header.split(',').count() - 1;
    let mut labels = Vec::new();
    let mut values = Vec::new();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let mut it = line.split(',');
        labels.push(it.next().unwrap().trim().parse::<u32>().expect("label"));
        values.extend(it.map(|v| v.trim().parse::<f32>().expect("pixel")));
    }
    let n = labels.len();
    let x = Array2::from_shape_vec((n, d), values).expect("rectangular CSV");
    let split = 8000.min(n * 4 / 5);
    let (xtr, xte) = (
        x.slice(s![..split, ..]).to_owned(),
        x.slice(s![split.., ..]).to_owned(),
    );
    let (ytr, yte) = (&labels[..split], &labels[split..]);
    run_logreg("mnist-10k", &xtr, ytr, &xte, yte, 10);
    run_tree("mnist-10k", &xtr, ytr, &xte, yte, 10);
    // Worst-case timing at full MNIST size: the 8000 training rows tiled to 64000, with a
    // little pixel noise so that rows are not exact copies (real, ill-conditioned features).
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let reps = 8;
    let big = Array2::from_shape_fn((split * reps, d), |(i, j)| {
        let v = xtr[[i % split, j]];
        if v > 0.0 {
            (v + rng.gen_range(-8.0f32..8.0)).clamp(0.0, 255.0)
        } else {
            0.0
        }
    });
    let ybig: Vec<u32> = (0..split * reps).map(|i| ytr[i % split]).collect();
    run_logreg("mnist-8k tiled x8", &big, &ybig, &xte, yte, 10);
}

/// Ad hoc one-hot encoding of UCI Adult (categories from the training file; unseen ones
/// encode as all zeros).
fn adult(dir: &str) {
    const NUMERIC: [usize; 6] = [0, 2, 4, 10, 11, 12];
    let read = |name: &str| -> Vec<Vec<String>> {
        let f = File::open(format!("{dir}/{name}")).expect("open Adult file");
        BufReader::new(f)
            .lines()
            .map(|l| l.expect("read"))
            .map(|l| {
                l.split(',')
                    .map(|v| v.trim().trim_end_matches('.').to_string())
                    .collect::<Vec<_>>()
            })
            .filter(|r| r.len() == 15 && r[0] != "age")
            .collect()
    };
    let train = read("adult.data");
    let test = read("adult.test");
    let mut levels: Vec<Vec<String>> = vec![Vec::new(); 14];
    for r in &train {
        for c in (0..14).filter(|c| !NUMERIC.contains(c)) {
            if !levels[c].contains(&r[c]) {
                levels[c].push(r[c].clone());
            }
        }
    }
    let width: usize = (0..14)
        .map(|c| {
            if NUMERIC.contains(&c) {
                1
            } else {
                levels[c].len()
            }
        })
        .sum();
    let encode = |rows: &[Vec<String>]| {
        let mut x = Array2::<f32>::zeros((rows.len(), width));
        let mut y = Vec::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            let mut j = 0;
            for c in 0..14 {
                if NUMERIC.contains(&c) {
                    x[[i, j]] = r[c].parse().expect("numeric");
                    j += 1;
                } else {
                    if let Some(p) = levels[c].iter().position(|l| *l == r[c]) {
                        x[[i, j + p]] = 1.0;
                    }
                    j += levels[c].len();
                }
            }
            y.push(u32::from(r[14] == ">50K"));
        }
        (x, y)
    };
    let (xtr, ytr) = encode(&train);
    let (xte, yte) = encode(&test);
    run_tree("adult", &xtr, &ytr, &xte, &yte, 2);
    run_logreg("adult", &xtr, &ytr, &xte, &yte, 2);
}
