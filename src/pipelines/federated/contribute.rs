//! [`contribute`]: one party's contribution file from its own data, with its pairwise
//! correlated noise ([`pairwise_noise`]).

use super::file::{
    AgreedParameters, ColumnLayout, Contribution, PartyAccounting, PartyMarginal,
    CONTRIBUTION_FORMAT,
};
use super::options::{check_options, classes_of, clip_of, FedOptions};
use super::records::prepare;
use super::space::{normalize, snap_dp_ranges, tau_e_for, DELTA_CATEGORY_SHARE};
use crate::data::{Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::cda::{self, Mixer};
use crate::mechanisms::federated::pairwise::{
    coordinate_stream, level_coordinate, numeric_coordinate, PublicKeyFile, SecretKeyFile,
};
use crate::mechanisms::federated::zero_sum::PairStreams;
use crate::mechanisms::federated::{
    calibrate_tau_g_for, check_clients, check_known, sensitivity, Accounting, Federation, Variant,
};
use crate::mechanisms::gaussian::Gaussian;
use crate::preprocess::clip::clip_rows;
use crate::preprocess::normalize::{ColumnMarginal, ExtraStats};
use crate::preprocess::{ColumnCodec, FeatureSpace, NormalizeMode};
use crate::rng::ReleaseRng;
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use std::borrow::Cow;

fn coordinate_names(space: &FeatureSpace) -> Vec<String> {
    let mut out = Vec::with_capacity(space.dim);
    for (codec, name) in space.codecs.iter().zip(&space.names) {
        match codec {
            ColumnCodec::Label => {}
            ColumnCodec::Numeric { .. } => out.push(numeric_coordinate(name)),
            ColumnCodec::Categorical { levels, .. } => {
                for l in levels {
                    out.push(level_coordinate(name, l));
                }
            }
        }
    }
    out
}

/// The pairwise correlated noise of party `me` for `rows` rows of each coordinate
/// (column-major: out[j·rows + r]), e_s = Σ_{s'>s} r − Σ_{s'<s} r.
pub fn pairwise_noise(
    me: &SecretKeyFile,
    peers: &[PublicKeyFile],
    context: &[u8],
    coordinates: &[String],
    rows: usize,
    tau_e: f64,
) -> Result<Vec<f64>> {
    let s = peers.len() + 1;
    let keys: Vec<(f64, [u8; 32])> = peers
        .iter()
        .map(|p| {
            Ok((
                if me.party < p.party { 1.0 } else { -1.0 },
                me.pair_key(p, context)?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut out = vec![0f64; coordinates.len() * rows];
    for (j, name) in coordinates.iter().enumerate() {
        let streams = keys
            .iter()
            .map(|(sign, k)| Ok((*sign, coordinate_stream(k, name)?)))
            .collect::<Result<Vec<_>>>()?;
        let mut ps = PairStreams::new(streams, tau_e, s)?;
        for v in &mut out[j * rows..(j + 1) * rows] {
            *v = ps.draw();
        }
    }
    Ok(out)
}

/// A party's id and its X25519 public key (base64).
type PartyKey = (u32, String);

/// The peers other than this party (its own public key among them is ignored: lists are
/// often shared verbatim by all parties) and every party's (id, public key), sorted by id.
fn party_list(
    key: &SecretKeyFile,
    peers: &[PublicKeyFile],
) -> Result<(Vec<PublicKeyFile>, Vec<PartyKey>)> {
    let own = key.public();
    let peers: Vec<PublicKeyFile> = peers
        .iter()
        .filter(|p| !(p.party == own.party && p.x25519.trim() == own.x25519.trim()))
        .cloned()
        .collect();
    let mut parties: Vec<PartyKey> = vec![(key.party, key.x25519.trim().to_string())];
    for p in &peers {
        if parties.iter().any(|(id, _)| *id == p.party) {
            return Err(Error::param(
                "peers",
                p.party,
                "two keys have the same party id; every party needs a distinct party id, and do not list your own key among the peers",
            ));
        }
        if parties.iter().any(|(_, k)| k == p.x25519.trim()) {
            return Err(Error::param(
                "peers",
                p.party,
                "this public key is listed twice (or is your own key)",
            ));
        }
        parties.push((p.party, p.x25519.trim().to_string()));
    }
    parties.sort();
    Ok((peers, parties))
}

/// The layout of a party's feature space in its contribution file.
fn layout_of(space: &FeatureSpace) -> Vec<ColumnLayout> {
    space
        .codecs
        .iter()
        .map(|c| match c {
            ColumnCodec::Label => ColumnLayout::Label,
            ColumnCodec::Numeric {
                offset,
                scale,
                lo,
                hi,
                integer,
                ..
            } => ColumnLayout::Numeric {
                offset: *offset,
                scale: *scale,
                lo: *lo,
                hi: *hi,
                integer: *integer,
            },
            ColumnCodec::Categorical { levels, .. } => ColumnLayout::Categorical {
                levels: levels.clone(),
            },
        })
        .collect()
}

/// The released marginals as the file stores them; empty when none was released.
fn party_marginals(marginals: &[Option<ColumnMarginal>]) -> Vec<Option<PartyMarginal>> {
    if marginals.iter().all(Option::is_none) {
        return Vec::new();
    }
    marginals
        .iter()
        .map(|m| {
            m.as_ref().map(|m| match m {
                ColumnMarginal::Numeric(n) => PartyMarginal::Numeric(n.clone()),
                ColumnMarginal::Categorical(p) => PartyMarginal::Categorical { probs: p.clone() },
            })
        })
        .collect()
}

/// The pool floor this party calibrates for: the agreed one (at most its smallest class, at
/// least l), else its own smallest class.
fn pool_floor(opts: &FedOptions, own_min: usize) -> Result<usize> {
    match opts.pool {
        Some(p) if p > own_min => Err(Error::param(
            "pool",
            p,
            format!("this party's smallest class has only {own_min} rows; the agreed floor must be at most every party's smallest class"),
        )),
        Some(p) if p < opts.mix => Err(Error::param(
            "pool",
            p,
            format!("the pool floor must be at least l = {}", opts.mix),
        )),
        Some(p) => Ok(p),
        None => Ok(own_min),
    }
}

/// This party's independent noise τ_g.
///
/// Without an agreed pool floor a party cannot know how much independent noise the others
/// add (theirs depends on their own class sizes), so it relies on none: its g_s alone meets
/// ε in the aggregator's joint view (Σ ⪰ τ_{g,s}² u_s u_sᵀ, so the others' noise only
/// helps). With `--pool`, every party calibrates for the same floor and they rely on each
/// other (`federation`), which is what makes CAPE's release less noisy.
fn party_tau_g(opts: &FedOptions, federation: Federation, acc: &Accounting<'_>) -> Result<f64> {
    if opts.pool.is_some() {
        return calibrate_tau_g_for(&federation, acc, opts.epsilon);
    }
    let alone = Federation {
        variant: Variant::Conventional,
        tau_e: 0.0,
        known: 0,
        ..federation
    };
    calibrate_tau_g_for(&alone, acc, opts.epsilon)
}

/// The parameters every party must agree on (their digest is the run's context).
fn agreed_parameters(
    opts: &FedOptions,
    table: &Table,
    schema: Option<&Schema>,
    class_labels: &[String],
    clip: f64,
    t: usize,
    parties: Vec<PartyKey>,
) -> AgreedParameters {
    AgreedParameters {
        protocol: CONTRIBUTION_FORMAT.into(),
        variant: opts.variant,
        epsilon: opts.epsilon,
        delta: opts.delta,
        mix: opts.mix,
        clip,
        samples: t,
        preset: opts.preset,
        orders: opts.orders.clone(),
        normalize: match opts.normalize {
            NormalizeMode::Public => "public".into(),
            _ => "dp".into(),
        },
        normalize_share: opts.normalize_share,
        pool: opts.pool,
        session: opts.session.clone(),
        aggregator_seeds: Some(opts.aggregator_seeds),
        columns: table.names.clone(),
        label: table.names[table.label_index.expect("checked")].clone(),
        classes: class_labels.to_vec(),
        schema: schema.cloned(),
        parties,
    }
}

/// A party's options: the common checks, no exact (data) normalization, and the agreed T,
/// which is returned.
fn check_party_options(opts: &FedOptions) -> Result<usize> {
    check_options(opts)?;
    if opts.normalize == NormalizeMode::Data {
        return Err(Error::param(
            "normalize",
            "data",
            "a party's exact statistics would be revealed to the aggregator; use dp (default) or public with a schema",
        ));
    }
    opts.samples.ok_or_else(|| {
        Error::param(
            "samples",
            "(none)",
            "every party must use the same T; give the sample count T",
        )
    })
}

/// Makes this party's contribution from its own `table` (label column set). The caller must
/// then record `contribution.context` in the key's `used_contexts` (and save the key): a key is
/// refused for a context it already contributed to.
pub fn contribute<'a>(
    table: impl Into<Cow<'a, Table>>,
    schema: Option<&Schema>,
    key: &SecretKeyFile,
    peers: &[PublicKeyFile],
    opts: &FedOptions,
    rng: &mut ReleaseRng,
) -> Result<Contribution> {
    let t = check_party_options(opts)?;
    let records = prepare(table, schema, opts, rng)?;
    let table = &records.table;
    let (peers, parties) = party_list(key, peers)?;
    let peers = &peers[..];
    check_clients(parties.len())?;
    let clients = parties.len();
    check_known(opts.aggregator_seeds, clients)?;
    let (class_labels, classes) = classes_of(table)?;
    let k = class_labels.len();
    let sizes: Vec<usize> = classes.iter().map(Vec::len).collect();
    cda::check_pools(&sizes, &class_labels, opts.mix)?;
    cda::check_samples(t as u64, k as u64)?;
    let pool = pool_floor(opts, *sizes.iter().min().expect("a class"))?;
    let clip = clip_of(table, opts);
    let agreed = agreed_parameters(opts, table, schema, &class_labels, clip, t, parties);
    let context = agreed.digest();
    if key.used_contexts.contains(&context) {
        return Err(Error::param(
            "key",
            format!("of party {}", key.party),
            "this key already contributed to a run with exactly these parameters; its correlated noise would repeat. Make fresh keys (keygen) or agree on a new session label",
        ));
    }

    // The marginals, where their noise leaves them worth it on this party's own rows
    // (`plan_extras`), in the same release as the ranges: the aggregator maps the averaged
    // rows onto the parties' mixture of them.
    let want = ExtraStats {
        marginals: true,
        mean_norm: false,
    };
    let mut norm = normalize(table, schema, opts, records.types_z(), want, rng)?;
    let borrowed = snap_dp_ranges(&mut norm.space, &norm.report);
    norm.report.warnings.extend(borrowed);
    let d = norm.space.dim;
    let mut features = norm.space.encode(table)?;
    clip_rows(&mut features, d, clip)?;
    let per_class = t / k;
    let rows = per_class * k;
    let delta_l2 = sensitivity(opts.mix, clip);
    let acc = norm.accounting(opts, pool, per_class);
    // τ_e at the public δ (not this party's δ_rdp, which depends on its column types).
    let tau_e = tau_e_for(
        opts,
        delta_l2,
        per_class,
        opts.delta * (1.0 - DELTA_CATEGORY_SHARE),
    )?;
    let tau_g = party_tau_g(opts, opts.federation(delta_l2, tau_e, clients), &acc)?;

    // Mixes plus independent noise, row-major.
    let mixer = Mixer::new(&features, d, opts.mix, Gaussian::new("tau-g", tau_g)?);
    let mut values = vec![0f64; rows * d];
    for r in 0..rows {
        mixer.draw(&classes[r % k], &mut values[r * d..(r + 1) * d], rng);
    }
    drop(features);
    let coordinates = coordinate_names(&norm.space);
    if opts.variant == Variant::Cape {
        let e = pairwise_noise(key, peers, context.as_bytes(), &coordinates, rows, tau_e)?;
        for j in 0..d {
            for r in 0..rows {
                values[r * d + j] += e[j * rows + r];
            }
        }
    }
    let mut bytes = Vec::with_capacity(values.len() * 4);
    for v in &values {
        bytes.extend_from_slice(&(*v as f32).to_le_bytes());
    }
    let layout = layout_of(&norm.space);
    let mut c = Contribution {
        format: CONTRIBUTION_FORMAT.into(),
        party: key.party,
        context,
        agreed,
        layout,
        coordinates,
        rows,
        accounting: PartyAccounting {
            pool,
            class_counts: sizes,
            rows_used: table.n_rows,
            rows_dropped: table.rows_dropped,
            missing_encoded: true,
            types_from_data: records.types_from_data(),
            normalization_noise_multiplier: norm.z,
            delta_rdp: norm.delta_rdp,
            threshold_epsilon: norm.threshold_epsilon(),
            tau_g,
            tau_e,
        },
        normalization: serde_json::to_value(&norm.report).expect("serializes"),
        column_types: serde_json::to_value(&records.decisions).expect("serializes"),
        marginals: party_marginals(&norm.marginals),
        // A seeded key makes every derived noise reproducible: the contribution is seeded too.
        seeded: rng.seed().is_some() || key.seeded,
        values: B64.encode(&bytes),
        integrity: String::new(),
    };
    c.integrity = c.compute_integrity();
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::parties;
    use super::*;

    #[test]
    fn pairwise_noise_cancels_to_floating_point_precision() {
        let ps = parties(4, 7);
        let coords = vec!["n:x".to_string(), "c:z=u".to_string()];
        let mut sum = vec![0f64; 2 * 500];
        let mut sq = 0.0;
        for p in &ps {
            let peers: Vec<PublicKeyFile> = ps
                .iter()
                .filter(|q| q.key.party != p.key.party)
                .map(|q| q.public.clone())
                .collect();
            let e = pairwise_noise(&p.key, &peers, b"ctx", &coords, 500, 3.0).unwrap();
            sq += e.iter().map(|v| v * v).sum::<f64>();
            for (s, v) in sum.iter_mut().zip(&e) {
                *s += v;
            }
        }
        let max = sum.iter().fold(0f64, |m, v| m.max(v.abs()));
        assert!(max < 1e-13 * 3.0 * 4.0, "{max}");
        // Not trivially zero: per-party variance ≈ τ_e² = 9 (4000 draws, ±15%).
        let var = sq / 4000.0;
        assert!((var - 9.0).abs() < 1.35, "{var}");
    }
}
