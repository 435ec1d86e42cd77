//! Helpers shared by the federated tests.

use super::*;
use crate::data::{read_csv_bytes, CsvOptions, Schema, Table};
use crate::error::Result;
use crate::mechanisms::federated::pairwise::{self, PublicKeyFile, SecretKeyFile};
use crate::mechanisms::federated::Variant;
use crate::preprocess::NormalizeMode;
use crate::rng::ReleaseRng;

/// A table whose feature is the constant 0 with public bounds [−1000, 1000] (so every mix
/// is exactly 0.5 in normalized units and the released value is pure noise × 2000).
pub(super) fn constant_table(n_per_class: usize) -> (Table, Schema) {
    let mut text = String::from("x,y\n");
    for i in 0..2 * n_per_class {
        text.push_str(&format!("0,{}\n", if i % 2 == 0 { "a" } else { "b" }));
    }
    let schema = Schema::from_json(
        r#"{"columns": {"x": {"type": "numeric", "min": -1000, "max": 1000, "integer": false}}}"#,
    )
    .unwrap();
    let t = read_csv_bytes(
        text.as_bytes(),
        &CsvOptions {
            label: Some("y".into()),
            schema: Some(schema.clone()),
            ..CsvOptions::default()
        },
    )
    .unwrap();
    (t, schema)
}

/// `n` rows of a numeric x (0..6), a categorical c (u/v) and a label y (a/b), with no schema:
/// the types and c's levels come from the data (DP normalization releases the levels through
/// its threshold).
pub(super) fn categorical_table(n: usize) -> Table {
    let mut text = String::from("x,c,y\n");
    for i in 0..n {
        let c = if i % 3 == 0 { "u" } else { "v" };
        let y = if i % 2 == 0 { "a" } else { "b" };
        text.push_str(&format!("{},{c},{y}\n", i % 7));
    }
    let opts = CsvOptions {
        label: Some("y".into()),
        ..CsvOptions::default()
    };
    read_csv_bytes(text.as_bytes(), &opts).unwrap()
}

pub(super) fn opts(variant: Variant, t: usize) -> FedOptions {
    FedOptions {
        variant,
        epsilon: 8.0,
        delta: 1e-5,
        mix: 20,
        clip: Some(1.0),
        samples: Some(t),
        normalize: NormalizeMode::Public,
        ..FedOptions::default()
    }
}

pub(super) use crate::mechanisms::gaussian::{ks_crit as crit, ks_normal};

pub(super) struct Party {
    pub key: SecretKeyFile,
    pub public: PublicKeyFile,
}

pub(super) fn parties(n: u32, seed: u64) -> Vec<Party> {
    let mut rng = ReleaseRng::seeded(seed);
    (1..=n)
        .map(|i| {
            let (key, public) = pairwise::keygen(i, &mut rng);
            Party { key, public }
        })
        .collect()
}

/// The public keys of every party but `p`.
pub(super) fn peers_of(ps: &[Party], p: &Party) -> Vec<PublicKeyFile> {
    ps.iter()
        .filter(|q| q.key.party != p.key.party)
        .map(|q| q.public.clone())
        .collect()
}

/// Rows `rows` of a table of 8 integer columns x0..x7 spread evenly over 50..=100, a
/// categorical c that is `p` in 70 % of the rows (else `q`) and a label y (a/b); no schema.
pub(super) fn spread_table(rows: std::ops::Range<usize>) -> Table {
    let mut text = String::from("x0,x1,x2,x3,x4,x5,x6,x7,c,y\n");
    for i in rows {
        for j in 0..8 {
            text.push_str(&format!("{},", 50 + (i * 37 + j * 11) % 51));
        }
        let c = if i % 10 < 7 { "p" } else { "q" };
        text.push_str(&format!("{c},{}\n", if i % 2 == 0 { "a" } else { "b" }));
    }
    let csv = CsvOptions {
        label: Some("y".into()),
        ..CsvOptions::default()
    };
    read_csv_bytes(text.as_bytes(), &csv).unwrap()
}

pub(super) fn contribute_all(
    ps: &[Party],
    o: &FedOptions,
    t: &Table,
    schema: &Schema,
) -> Vec<Contribution> {
    ps.iter()
        .enumerate()
        .map(|(i, p)| {
            let peers = peers_of(ps, p);
            contribute(
                t,
                Some(schema),
                &p.key,
                &peers,
                o,
                &mut ReleaseRng::seeded(100 + i as u64),
            )
            .unwrap()
        })
        .collect()
}

pub(super) fn run(cs: &[Contribution]) -> Result<(Vec<f64>, FedReceipt)> {
    let mut out = Vec::new();
    let r = aggregate(
        cs,
        |_| Ok(()),
        |c| {
            out.push(c[0].parse::<f64>().unwrap());
            Ok(())
        },
    )?;
    Ok((out, r))
}
