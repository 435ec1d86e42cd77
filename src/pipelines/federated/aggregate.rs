//! [`aggregate`]: anyone averages the parties' contribution files (any subset of the agreed
//! parties) into the released rows and the receipt.

use super::file::{AgreedParameters, ColumnLayout, Contribution, PartyMarginal};
use super::receipt::{
    accounted_views, aggregator_trust, guarantee, FedAccountant, FedData, FedParameters,
    FedReceipt, PartyInput, ResidualNoise,
};
use crate::accountant::RdpCurve;
use crate::data::natural_cmp;
use crate::error::{Error, Result};
use crate::mechanisms::federated::pairwise::{level_coordinate, numeric_coordinate};
use crate::mechanisms::federated::{check_known, sensitivity, ClaimSizes, Federation, Variant};
use crate::preprocess::encode::{assign_levels, write_number, OTHER};
use crate::preprocess::quantile::{quantile_map, quotas, NumericMarginal, Scores};
use crate::receipt::{Randomness, BUILD_ID, VERSION};

/// [`aggregate`] collecting the output: (header, rows, receipt).
pub fn aggregate_rows(
    contributions: &[Contribution],
) -> Result<(Vec<String>, Vec<Vec<String>>, FedReceipt)> {
    let mut header = Vec::new();
    let mut rows = Vec::new();
    let receipt = aggregate(
        contributions,
        |h| {
            header = h.to_vec();
            Ok(())
        },
        |r| {
            rows.push(r.to_vec());
            Ok(())
        },
    )?;
    Ok((header, rows, receipt))
}

/// Names the first agreed field on which `b` differs from `a`.
fn first_difference(a: &AgreedParameters, b: &AgreedParameters) -> String {
    let va = serde_json::to_value(a).expect("serializes");
    let vb = serde_json::to_value(b).expect("serializes");
    if let (Some(ma), Some(mb)) = (va.as_object(), vb.as_object()) {
        for (key, x) in ma {
            let y = mb.get(key).unwrap_or(&serde_json::Value::Null);
            if x != y {
                let short = |v: &serde_json::Value| {
                    let s = v.to_string();
                    if s.len() > 80 {
                        format!(
                            "{}…",
                            &s[..s.char_indices().nth(77).map_or(s.len(), |(i, _)| i)]
                        )
                    } else {
                        s
                    }
                };
                return format!("'{key}' ({} vs {})", short(x), short(y));
            }
        }
    }
    "their parameters".into()
}

/// Averages the contributions (any subset of the agreed parties), calling `header` once and
/// `row` for each released row; returns the receipt.
pub fn aggregate(
    contributions: &[Contribution],
    header: impl FnOnce(&[String]) -> Result<()>,
    mut row: impl FnMut(&[String]) -> Result<()>,
) -> Result<FedReceipt> {
    let present = check_contributions(contributions)?;
    let agreed = &contributions[0].agreed;
    // Files of earlier versions carry no t: they are held to the product's default, t = 1.
    let known = agreed.aggregator_seeds.unwrap_or(1);
    check_known(known, agreed.parties.len())?;
    let missing: Vec<u32> = agreed
        .parties
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !present.contains(id))
        .collect();
    let (outs, residual) = output_layout(contributions, &missing)?;
    let mixtures = mixtures(contributions, &outs)?;
    header(&agreed.columns)?;
    write_rows(contributions, &outs, &mixtures, &mut row)?;
    let mapped = mixtures.iter().filter(|m| m.is_some()).count();
    let row_by_row: Vec<&str> = outs
        .iter()
        .zip(&mixtures)
        .zip(&agreed.columns)
        .filter(|((o, m), _)| {
            m.is_none()
                && match o {
                    Out::Label => false,
                    Out::Numeric { .. } => true,
                    Out::Categorical { levels, .. } => !levels.is_empty(),
                }
        })
        .map(|(_, name)| name.as_str())
        .collect();
    multi_party_receipt(
        contributions,
        present,
        missing,
        known,
        residual,
        (mapped, &row_by_row),
    )
}

/// Checks that the contributions are intact, agree and come from distinct agreed parties;
/// returns the parties present, sorted.
fn check_contributions(contributions: &[Contribution]) -> Result<Vec<u32>> {
    let first = contributions
        .first()
        .ok_or_else(|| Error::param("inputs", "(none)", "give at least one contribution file"))?;
    for c in contributions {
        c.check(&format!("contribution of party {}", c.party))?;
        if c.context != first.context {
            return Err(Error::Data(format!(
                "the contribution of party {} disagrees with party {} on {}; every party must run `contribute` with the same parameters, input columns, classes and peer keys",
                c.party,
                first.party,
                first_difference(&first.agreed, &c.agreed)
            )));
        }
        if !first.agreed.parties.iter().any(|(id, _)| *id == c.party) {
            return Err(Error::Data(format!(
                "party {} is not one of the agreed parties",
                c.party
            )));
        }
        if c.accounting.tau_e != first.accounting.tau_e || c.rows != first.rows {
            return Err(Error::Data(format!(
                "the contribution of party {} has a different correlated-noise level or row count than party {} (tampered?)",
                c.party, first.party
            )));
        }
        if c.layout.len() != first.agreed.columns.len() {
            return Err(Error::Data(format!(
                "the contribution of party {} has {} column layouts for {} columns",
                c.party,
                c.layout.len(),
                first.agreed.columns.len()
            )));
        }
    }
    let mut present: Vec<u32> = contributions.iter().map(|c| c.party).collect();
    present.sort_unstable();
    if let Some(w) = present.windows(2).find(|w| w[0] == w[1]) {
        return Err(Error::param(
            "inputs",
            w[0],
            "the same party's contribution is given twice; give each party's file once",
        ));
    }
    Ok(present)
}

/// How one output column is made from the parties' coordinates (the union over parties).
enum Out {
    Label,
    Numeric {
        lo: f64,
        hi: f64,
        integer: bool,
        /// per party: (coordinate index, offset, scale)
        parts: Vec<(usize, f64, f64)>,
    },
    Categorical {
        levels: Vec<String>,
        /// per party: coordinate index of each union level, if released there
        parts: Vec<Vec<Option<usize>>>,
    },
}

/// The spread of the correlated noise Σ_s w_s e_s that a column's weights w over the parties
/// leave uncancelled (the missing parties' weights are 0); none under the conventional variant.
struct Residual {
    variant: Variant,
    parties: usize,
    /// Var of one party's e_s entry times S / (S − 1) (the zero-sum construction).
    a_cov: f64,
}

impl Residual {
    fn std(&self, w_present: &[f64]) -> f64 {
        if self.variant == Variant::Conventional {
            return 0.0;
        }
        let mut w = w_present.to_vec();
        w.resize(self.parties, 0.0);
        let mean = w.iter().sum::<f64>() / self.parties as f64;
        let ss: f64 = w.iter().map(|x| (x - mean).powi(2)).sum();
        (self.a_cov * ss).sqrt()
    }
}

/// The output columns and the noise each leaves uncancelled.
fn output_layout(
    contributions: &[Contribution],
    missing: &[u32],
) -> Result<(Vec<Out>, Vec<ResidualNoise>)> {
    let first = &contributions[0];
    let agreed = &first.agreed;
    let s_total = agreed.parties.len();
    let np = contributions.len() as f64;
    let tau_e = first.accounting.tau_e;
    let res = Residual {
        variant: agreed.variant,
        parties: s_total,
        a_cov: if s_total > 1 {
            tau_e * tau_e * s_total as f64 / (s_total as f64 - 1.0)
        } else {
            0.0
        },
    };
    let mut outs = Vec::new();
    let mut residual = Vec::new();
    let missing_cause = "missing parties' correlated noise does not cancel";
    for (j, name) in agreed.columns.iter().enumerate() {
        let kinds: Vec<&ColumnLayout> = contributions.iter().map(|c| &c.layout[j]).collect();
        let out = match kinds[0] {
            ColumnLayout::Label => Out::Label,
            ColumnLayout::Numeric { .. } => numeric_out(contributions, &kinds, name)?,
            ColumnLayout::Categorical { .. } => categorical_out(contributions, &kinds, name)?,
        };
        match &out {
            Out::Label => {}
            Out::Numeric { parts, .. } => {
                let w: Vec<f64> = parts.iter().map(|p| p.2 / np).collect();
                let r = res.std(&w);
                if r > 1e-9 * w.iter().fold(0.0f64, |m, x| m.max(*x)) {
                    residual.push(ResidualNoise {
                        column: name.clone(),
                        std: r,
                        cause: if missing.is_empty() {
                            "the parties' DP-estimated ranges differ, so their scaled correlated noise does not cancel exactly (give every party a schema with bounds to make it exact)".into()
                        } else {
                            missing_cause.into()
                        },
                    });
                }
            }
            Out::Categorical { levels, parts } => {
                let mut worst = 0.0f64;
                for li in 0..levels.len() {
                    let w: Vec<f64> = parts
                        .iter()
                        .map(|p| if p[li].is_some() { 1.0 / np } else { 0.0 })
                        .collect();
                    worst = worst.max(res.std(&w));
                }
                if worst > 1e-12 {
                    residual.push(ResidualNoise {
                        column: name.clone(),
                        std: worst,
                        cause: if missing.is_empty() {
                            "the parties released different category levels under DP, so the correlated noise of a level some party lacks does not cancel".into()
                        } else {
                            missing_cause.into()
                        },
                    });
                }
            }
        }
        outs.push(out);
    }
    Ok((outs, residual))
}

fn coordinate_index(c: &Contribution, key: &str) -> Option<usize> {
    c.coordinates.iter().position(|x| x == key)
}

/// A numeric output column: the union of the parties' ranges, integer if every party's is,
/// and each party's coordinate with its offset and scale.
fn numeric_out(contributions: &[Contribution], kinds: &[&ColumnLayout], name: &str) -> Result<Out> {
    let first = &contributions[0];
    let key = numeric_coordinate(name);
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    let mut integer = true;
    let mut parts = Vec::new();
    for (c, l) in contributions.iter().zip(kinds) {
        match l {
            ColumnLayout::Numeric {
                offset,
                scale,
                lo: a,
                hi: b,
                integer: i,
            } => {
                lo = lo.min(*a);
                hi = hi.max(*b);
                integer &= *i;
                let idx = coordinate_index(c, &key).ok_or_else(|| {
                    Error::Data(format!("party {}: coordinate '{key}' is missing (damaged contribution)", c.party))
                })?;
                parts.push((idx, *offset, *scale));
            }
            _ => {
                return Err(Error::Data(format!(
                    "party {} treats column '{name}' as categorical and party {} as numeric; each party decided the column's type from its own data: type the column in a schema every party uses (e.g. {{\"{name}\": {{\"type\": \"numeric\"}}}}) and contribute again",
                    c.party, first.party
                )))
            }
        }
    }
    Ok(Out::Numeric {
        lo,
        hi,
        integer,
        parts,
    })
}

/// A categorical output column: the union of the parties' released levels (in natural
/// order) and, per party, the coordinate of each level it released.
fn categorical_out(
    contributions: &[Contribution],
    kinds: &[&ColumnLayout],
    name: &str,
) -> Result<Out> {
    let first = &contributions[0];
    let mut levels: Vec<String> = Vec::new();
    for (c, l) in contributions.iter().zip(kinds) {
        match l {
            ColumnLayout::Categorical { levels: ls } => {
                for x in ls {
                    if !levels.contains(x) {
                        levels.push(x.clone());
                    }
                }
            }
            _ => {
                return Err(Error::Data(format!(
                    "party {} treats column '{name}' as numeric and party {} as categorical; each party decided the column's type from its own data: type the column in a schema every party uses (e.g. {{\"{name}\": {{\"type\": \"numeric\"}}}}) and contribute again",
                    c.party, first.party
                )))
            }
        }
    }
    levels.sort_by(|a, b| natural_cmp(a, b));
    let parts: Vec<Vec<Option<usize>>> = contributions
        .iter()
        .map(|c| {
            levels
                .iter()
                .map(|l| coordinate_index(c, &level_coordinate(name, l)))
                .collect()
        })
        .collect();
    Ok(Out::Categorical { levels, parts })
}

/// The distribution a column is mapped onto: the mixture of the parties' DP marginals.
enum Mixture {
    Numeric(NumericMarginal),
    /// One probability per union level and, when a party pooled rare levels, one more for
    /// them (decoded as [`OTHER`]).
    Categorical(Vec<f64>),
}

/// Each column's mixture of the parties' DP marginals, weighted by their row counts (public
/// under the federation's adjacency), where every contribution carries one for it (else None:
/// the column is decoded row by row). Post-processing of the parties' releases.
fn mixtures(contributions: &[Contribution], outs: &[Out]) -> Result<Vec<Option<Mixture>>> {
    let names = &contributions[0].agreed.columns;
    let mut out = Vec::with_capacity(outs.len());
    for (j, o) in outs.iter().enumerate() {
        let marginals: Option<Vec<&PartyMarginal>> = contributions
            .iter()
            .map(|c| c.marginals.get(j).and_then(Option::as_ref))
            .collect();
        let Some(marginals) = marginals else {
            out.push(None);
            continue;
        };
        let mixture = match o {
            Out::Label => None,
            Out::Numeric { .. } => {
                let mut parts = Vec::with_capacity(marginals.len());
                for (c, m) in contributions.iter().zip(&marginals) {
                    let PartyMarginal::Numeric(n) = m else {
                        return Err(damaged_marginal(c, &names[j]));
                    };
                    parts.push((c.accounting.rows_used as f64, n));
                }
                NumericMarginal::mixture(&parts).map(Mixture::Numeric)
            }
            Out::Categorical { levels, .. } if levels.is_empty() => None,
            Out::Categorical { levels, .. } => {
                categorical_mixture(contributions, &marginals, j, levels)?.map(Mixture::Categorical)
            }
        };
        out.push(mixture);
    }
    Ok(out)
}

/// Column `j`'s mixture of the parties' level proportions over the union `levels` (one
/// more entry, the pooled rare levels, when a party has them), weighted by the parties' row
/// counts; None when no party has mass.
fn categorical_mixture(
    contributions: &[Contribution],
    marginals: &[&PartyMarginal],
    j: usize,
    levels: &[String],
) -> Result<Option<Vec<f64>>> {
    let damaged = |c: &Contribution| damaged_marginal(c, &contributions[0].agreed.columns[j]);
    let mut mix = vec![0.0; levels.len() + 1];
    for (c, m) in contributions.iter().zip(marginals) {
        let (PartyMarginal::Categorical { probs }, ColumnLayout::Categorical { levels: own }) =
            (m, &c.layout[j])
        else {
            return Err(damaged(c));
        };
        if !(probs.len() == own.len() || probs.len() == own.len() + 1)
            || probs.iter().any(|q| !(q.is_finite() && *q >= 0.0))
        {
            return Err(damaged(c));
        }
        let total: f64 = probs.iter().sum();
        if total <= 0.0 {
            continue;
        }
        let w = c.accounting.rows_used as f64 / total;
        for (l, q) in own.iter().zip(probs) {
            let u = levels
                .iter()
                .position(|x| x == l)
                .ok_or_else(|| damaged(c))?;
            mix[u] += w * q;
        }
        if probs.len() == own.len() + 1 {
            mix[levels.len()] += w * probs[own.len()];
        }
    }
    if mix[levels.len()] <= 0.0 {
        mix.pop();
    }
    let total: f64 = mix.iter().sum();
    Ok((total > 0.0 && total.is_finite()).then(|| mix.iter().map(|q| q / total).collect()))
}

/// The error for a contribution whose marginal of column `name` does not fit its layout.
fn damaged_marginal(c: &Contribution, name: &str) -> Error {
    Error::Data(format!(
        "party {}: the marginal of column '{name}' does not fit its layout (damaged contribution); ask that party to contribute again",
        c.party
    ))
}

/// A column decoded before the rows are written (mapped onto its mixture).
enum Decoded {
    Numeric(Vec<f64>),
    /// Index into the union levels; `levels.len()` is [`OTHER`].
    Levels(Vec<usize>),
}

/// Averages the parties' rows in original units and decodes them: the columns with a
/// mixture of DP marginals all rows at once (numeric: quantile mapping; categorical: levels
/// in the mixture's proportions, [`assign_levels`]), the others row by row (numeric: into
/// the union of the ranges; categorical: the level with the highest score).
fn write_rows(
    contributions: &[Contribution],
    outs: &[Out],
    mixtures: &[Option<Mixture>],
    row: &mut impl FnMut(&[String]) -> Result<()>,
) -> Result<()> {
    let agreed = &contributions[0].agreed;
    let np = contributions.len() as f64;
    let k = agreed.classes.len();
    let rows = contributions[0].rows;
    let vals: Vec<Vec<f32>> = contributions.iter().map(|c| c.decode_values()).collect();
    let dims: Vec<usize> = contributions.iter().map(|c| c.coordinates.len()).collect();
    let numeric = |parts: &[(usize, f64, f64)], r: usize| -> f64 {
        let mut sum = 0.0;
        for (p, (idx, off, sc)) in parts.iter().enumerate() {
            sum += off + f64::from(vals[p][r * dims[p] + idx]) * sc;
        }
        sum / np
    };
    let score = |parts: &[Vec<Option<usize>>], li: usize, r: usize| -> f64 {
        let mut sum = 0.0;
        for (p, idx) in parts.iter().enumerate() {
            if let Some(i) = idx[li] {
                sum += f64::from(vals[p][r * dims[p] + i]);
            }
        }
        sum
    };
    let decoded: Vec<Option<Decoded>> = outs
        .iter()
        .zip(mixtures)
        .map(|(out, mixture)| match (out, mixture) {
            (Out::Numeric { parts, .. }, Some(Mixture::Numeric(m))) => {
                let mut v: Vec<f64> = (0..rows).map(|r| numeric(parts, r)).collect();
                quantile_map(&mut v, m);
                Some(Decoded::Numeric(v))
            }
            (Out::Categorical { levels, parts }, Some(Mixture::Categorical(probs))) => {
                let w = levels.len();
                let mut s = Vec::with_capacity(rows * w);
                for r in 0..rows {
                    s.extend((0..w).map(|li| score(parts, li, r) as f32));
                }
                let codes = assign_levels(Scores::contiguous(&s, w), Some(quotas(probs, rows)));
                Some(Decoded::Levels(codes))
            }
            _ => None,
        })
        .collect();
    let mut cells: Vec<String> = vec![String::new(); agreed.columns.len()];
    for r in 0..rows {
        let label = &agreed.classes[r % k];
        for ((cell, out), dec) in cells.iter_mut().zip(outs).zip(&decoded) {
            cell.clear();
            match (out, dec) {
                (Out::Label, _) => cell.push_str(label),
                (Out::Numeric { integer, .. }, Some(Decoded::Numeric(v))) => {
                    write_number(cell, v[r], *integer);
                }
                (
                    Out::Numeric {
                        lo,
                        hi,
                        integer,
                        parts,
                    },
                    _,
                ) => {
                    write_number(cell, numeric(parts, r).clamp(*lo, *hi), *integer);
                }
                (Out::Categorical { levels, .. }, Some(Decoded::Levels(codes))) => {
                    cell.push_str(levels.get(codes[r]).map_or(OTHER, String::as_str));
                }
                (Out::Categorical { levels, parts }, _) => {
                    if levels.is_empty() {
                        cell.push_str(crate::preprocess::encode::SUPPRESSED);
                        continue;
                    }
                    let mut best = (f64::NEG_INFINITY, 0usize);
                    for li in 0..levels.len() {
                        let sum = score(parts, li, r);
                        if sum > best.0 {
                            best = (sum, li);
                        }
                    }
                    cell.push_str(&levels[best.1]);
                }
            }
        }
        super::records::blank_missing(&mut cells);
        row(&cells)?;
    }
    Ok(())
}

/// Each contribution's accounting inputs (its pool, τ_g, class counts and normalization
/// curve) for [`account_parties`].
fn party_inputs(contributions: &[Contribution], orders: &[u32]) -> Result<Vec<PartyInput>> {
    contributions
        .iter()
        .map(|c| {
            let curve =
                RdpCurve::gaussian_or_zero(c.accounting.normalization_noise_multiplier, orders)?;
            Ok(PartyInput {
                party: c.party,
                pool: c.accounting.pool,
                tau_g: c.accounting.tau_g,
                class_counts: c.accounting.class_counts.clone(),
                norm_curve: curve,
                delta_rdp: c.accounting.delta_rdp,
                threshold_epsilon: c.accounting.threshold_epsilon,
            })
        })
        .collect()
}

/// The warnings each party's contribution was given (its column-type and normalization
/// reports', which the receipt also holds per party), each once, with the parties that gave
/// it: the release is made of every party's rows, so a column a party left on the default
/// range [0, 1], say, is wrong in the output, and whoever aggregates must be told.
fn party_warnings(contributions: &[Contribution]) -> Vec<String> {
    let mut given: Vec<(&str, Vec<u32>)> = Vec::new();
    // The column-type warnings first, then the normalization's, each in party order.
    let reports = (contributions.iter().map(|c| (c.party, &c.column_types)))
        .chain(contributions.iter().map(|c| (c.party, &c.normalization)));
    for (party, report) in reports {
        let list = report.get("warnings").and_then(|w| w.as_array());
        for w in list.into_iter().flatten().filter_map(|w| w.as_str()) {
            match given.iter_mut().find(|(m, _)| *m == w) {
                Some((_, parties)) => parties.push(party),
                None => given.push((w, vec![party])),
            }
        }
    }
    given
        .into_iter()
        .map(|(w, parties)| {
            let names: Vec<String> = parties.iter().map(u32::to_string).collect();
            match names.len() {
                1 => format!("party {}: {w}", names[0]),
                _ => format!("parties {}: {w}", names.join(", ")),
            }
        })
        .collect()
}

/// A multi-party receipt's warnings: missing parties, a missed target, CAPE without an agreed
/// pool, noise that did not cancel, a seeded contribution.
fn multi_party_warnings(
    agreed: &AgreedParameters,
    epsilon: f64,
    missing: &[u32],
    residual: bool,
    seeded: bool,
    (mapped, row_by_row): (usize, &[&str]),
) -> Vec<String> {
    let mut warnings = Vec::new();
    if mapped > 0 {
        warnings.push(format!("{mapped} column(s) are mapped onto the mixture of the parties' DP marginals (released with their ranges, weighted by their row counts; numeric: quantile mapping; categorical: levels in DP proportions; post-processing), so the released rows keep the columns' scale and proportions although rows longer than c were clipped"));
    }
    if !row_by_row.is_empty() {
        let shown = 5;
        let mut names = row_by_row[..row_by_row.len().min(shown)].join(", ");
        if row_by_row.len() > shown {
            names.push_str(&format!(" and {} more", row_by_row.len() - shown));
        }
        warnings.push(format!("{} column(s) are decoded row by row ({names}), as not every party released their DP marginals (too few rows at a party for their noise, or public or `data` normalization): rows longer than c were clipped, so numeric values lean toward their range's minimum, and each row gets its highest-scoring categorical level, so levels are not in the data's proportions", row_by_row.len()));
    }
    if !missing.is_empty() {
        warnings.push(format!(
            "parties {:?} did not contribute: their correlated noise does not cancel, so the result is noisier (see residual_noise); privacy does not suffer (the views are accounted over the parties present)",
            missing
        ));
    }
    if epsilon > agreed.epsilon {
        warnings.push(format!(
            "the target ε = {} is NOT met (ε = {epsilon:.4}); a contribution was not made by this version's calibration",
            agreed.epsilon
        ));
    }
    if agreed.variant == Variant::Cape && agreed.pool.is_none() {
        warnings.push("no agreed pool size: each party's independent noise alone protects its records (it cannot rely on the others' noise without knowing their class sizes), so the release is as noisy as the conventional scheme's; agree on a pool size (pool; at most every party's smallest class) to get CAPE's gain".into());
    }
    if residual && missing.is_empty() {
        warnings.push("some correlated noise did not cancel (residual_noise): it is data-independent, so privacy does not suffer, but the output is noisier there; give every party the same schema with bounds to make it exact".into());
    }
    if seeded {
        warnings.push("seeded, not for release: a contribution used a fixed seed".into());
    }
    warnings
}

/// The receipt of a multi-party release: the views accounted over the parties present.
fn multi_party_receipt(
    contributions: &[Contribution],
    present: Vec<u32>,
    missing: Vec<u32>,
    known: usize,
    residual: Vec<ResidualNoise>,
    decoding: (usize, &[&str]),
) -> Result<FedReceipt> {
    let first = &contributions[0];
    let agreed = &first.agreed;
    let s_total = agreed.parties.len();
    let k = agreed.classes.len();
    let rows = first.rows;
    let variant = agreed.variant;
    let tau_e = first.accounting.tau_e;
    let delta_l2 = sensitivity(agreed.mix, agreed.clip);
    let parties = party_inputs(contributions, &agreed.orders)?;
    let federation = Federation {
        variant,
        delta_l2,
        tau_e,
        parties: s_total,
        known,
    };
    let rows_used: usize = contributions.iter().map(|c| c.accounting.rows_used).sum();
    let rows_dropped: usize = contributions
        .iter()
        .map(|c| c.accounting.rows_dropped)
        .sum();
    let sizes = ClaimSizes {
        mix: agreed.mix,
        classes: k,
        total_rows: rows_used.max(1),
        rows_written: rows as u64,
    };
    let (views, per_party, epsilon) = accounted_views(
        &federation,
        &sizes,
        first.accounting.tau_g,
        agreed.preset,
        &agreed.orders,
        agreed.delta,
        &parties,
    )?;
    let seeded = contributions.iter().any(|c| c.seeded);
    let mut warnings = party_warnings(contributions);
    warnings.extend(multi_party_warnings(
        agreed,
        epsilon,
        &missing,
        !residual.is_empty(),
        seeded,
        decoding,
    ));
    let normalization = serde_json::Value::Array(
        contributions
            .iter()
            .map(|c| serde_json::json!({"party": c.party, "report": c.normalization}))
            .collect(),
    );
    let column_types = serde_json::Value::Array(
        contributions
            .iter()
            .map(|c| serde_json::json!({"party": c.party, "report": c.column_types}))
            .collect(),
    );
    let types_from_data = contributions.iter().any(|c| c.accounting.types_from_data);
    let mut g = guarantee(variant, "multi-party", known, types_from_data);
    // Files of earlier versions dropped every record with a missing cell: that count is not
    // public, and is declared.
    let old_drops: usize = contributions
        .iter()
        .filter(|c| !c.accounting.missing_encoded)
        .map(|c| c.accounting.rows_dropped)
        .sum();
    if old_drops > 0 {
        g.unprotected.insert(0, format!("rows_dropped ({old_drops}): a contribution of an earlier version dropped the rows with missing values before the mechanism; the count is computed from the raw data"));
    }
    Ok(FedReceipt {
        epsilon,
        delta: agreed.delta,
        mechanism: "federated-dp-cda".into(),
        variant,
        mode: "multi-party".into(),
        meets_target: epsilon <= agreed.epsilon,
        guarantee: g,
        parameters: multi_party_parameters(contributions, present, missing, known),
        views,
        per_party,
        residual_noise: residual,
        accountant: FedAccountant::new(
            agreed.preset,
            &agreed.orders,
            contributions
                .iter()
                .map(|c| c.accounting.delta_rdp)
                .fold(f64::INFINITY, f64::min),
        ),
        normalization,
        column_types,
        data: FedData {
            columns: agreed.columns.clone(),
            label: agreed.label.clone(),
            class_labels: agreed.classes.clone(),
            rows_used,
            rows_dropped,
        },
        seeded,
        randomness: Randomness::of_parties(seeded),
        warnings,
        version: VERSION.into(),
        build_id: BUILD_ID.into(),
    })
}

/// The parameters of a multi-party release's receipt.
fn multi_party_parameters(
    contributions: &[Contribution],
    present: Vec<u32>,
    missing: Vec<u32>,
    known: usize,
) -> FedParameters {
    let first = &contributions[0];
    let agreed = &first.agreed;
    let s_total = agreed.parties.len();
    let k = agreed.classes.len();
    let rows = first.rows;
    let per_class = rows / k;
    let tau_release = contributions
        .iter()
        .map(|c| c.accounting.tau_g.powi(2))
        .sum::<f64>()
        .sqrt()
        / contributions.len() as f64;
    FedParameters {
        clients: s_total,
        aggregator_seeds: known,
        aggregator_trust: aggregator_trust(known),
        parties_present: present,
        parties_missing: missing,
        mix: agreed.mix,
        clip: agreed.clip,
        sensitivity: sensitivity(agreed.mix, agreed.clip),
        tau_e: first.accounting.tau_e,
        tau_release,
        target_epsilon: agreed.epsilon,
        samples_requested: agreed.samples,
        samples_per_class: per_class,
        rows_written: rows,
        classes: k,
        feature_dim: first.coordinates.len(),
        partition: None,
        pool_floor: agreed.pool,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{
        constant_table, contribute_all, crit, ks_normal, opts, parties, peers_of, run, spread_table,
    };
    use super::*;
    use crate::mechanisms::federated::pairwise::{self, PublicKeyFile};
    use crate::pipelines::federated::{contribute, FedOptions};
    use crate::rng::ReleaseRng;
    use base64::engine::general_purpose::STANDARD as B64;
    use base64::Engine;

    /// The contributions of two parties (keys from `key_seed`; party i's table `table(i)`,
    /// no schema, its run seeded `run_seed + i`) at the defaults but ε = 4, l = 4, T = 200.
    fn two_parties_at_defaults(
        key_seed: u64,
        run_seed: u64,
        table: impl Fn(usize) -> crate::data::Table,
    ) -> Vec<Contribution> {
        let o = FedOptions {
            epsilon: 4.0,
            mix: 4,
            samples: Some(200),
            ..FedOptions::default()
        };
        let ps = parties(2, key_seed);
        ps.iter()
            .enumerate()
            .map(|(i, p)| {
                let peer = ps[1 - i].public.clone();
                let mut rng = ReleaseRng::seeded(run_seed + i as u64);
                contribute(table(i), None, &p.key, &[peer], &o, &mut rng).unwrap()
            })
            .collect()
    }

    /// Each party releases its columns' DP marginals with its ranges, and the aggregator maps
    /// the averaged rows onto their mixture: although every row longer than c was clipped
    /// (shrunk toward the range's minimum), each numeric column keeps its mean and range and
    /// the categorical column its proportions. The same files without their marginals (as
    /// an earlier version wrote them) still aggregate, row by row, and then x0's mean comes
    /// out far from 75.
    #[test]
    fn the_parties_dp_marginals_keep_the_columns_scale_and_proportions() {
        let o = FedOptions {
            variant: Variant::Cape,
            epsilon: 8.0,
            mix: 4,
            samples: Some(3000),
            pool: Some(1000),
            ..FedOptions::default()
        };
        let ps = parties(3, 21);
        let cs: Vec<Contribution> = ps
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let table = spread_table(i * 12_000..(i + 1) * 12_000);
                let mut rng = ReleaseRng::seeded(60 + i as u64);
                contribute(table, None, &p.key, &peers_of(&ps, p), &o, &mut rng).unwrap()
            })
            .collect();
        for c in &cs {
            assert_eq!(c.marginals.iter().filter(|m| m.is_some()).count(), 9);
        }
        let decoded = |cs: &[Contribution]| {
            let (_, rows, r) = aggregate_rows(cs).unwrap();
            assert!(r.epsilon <= 8.0 && r.meets_target, "{}", r.epsilon);
            assert_eq!(rows.len(), 3000);
            assert!(rows.iter().all(|r| r[9] == "a" || r[9] == "b"));
            let mean = |j: usize| {
                rows.iter()
                    .map(|r| r[j].parse::<f64>().unwrap())
                    .sum::<f64>()
                    / 3000.0
            };
            let p = rows.iter().filter(|r| r[8] == "p").count() as f64 / 3000.0;
            let means: Vec<f64> = (0..8).map(mean).collect();
            let inside = (0..8).all(|j| {
                rows.iter()
                    .all(|r| (0.0..=200.0).contains(&r[j].parse::<f64>().unwrap()))
            });
            (means, p, inside, r.warnings)
        };
        let (means, p, inside, warnings) = decoded(&cs);
        for (j, m) in means.iter().enumerate() {
            // Real mean 75; the marginals' noise moves it by well under 1.
            assert!((m - 75.0).abs() < 3.0, "x{j}: mean {m}");
        }
        assert!(inside);
        assert!((p - 0.7).abs() < 0.05, "share of p: {p}");
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("9 column(s) are mapped onto the mixture")),
            "{warnings:?}"
        );
        assert!(!warnings.iter().any(|w| w.contains("row by row")));
        // Without the marginals: decoded row by row, the rows' shrinkage shows.
        let old: Vec<Contribution> = cs
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.marginals.clear();
                c.integrity = c.compute_integrity();
                c
            })
            .collect();
        let (means, _, _, warnings) = decoded(&old);
        assert!((means[0] - 75.0).abs() > 10.0, "x0: mean {}", means[0]);
        assert!(!warnings.iter().any(|w| w.contains("mixture")));
        assert!(
            warnings.iter().any(|w| w
                .starts_with("9 column(s) are decoded row by row (x0, x1, x2, x3, x4 and 4 more)")),
            "{warnings:?}"
        );
    }

    /// The categorical threshold's ε term travels in each contribution file and the
    /// aggregator charges it: two parties with a categorical column under DP normalization;
    /// the file states ln(1/(1 − δ/10)) and the receipt's ε is at least the view's RDP ε
    /// plus that term (each view's ε includes it), within the target.
    #[test]
    fn the_categorical_threshold_travels_and_is_charged() {
        let t = super::super::testutil::categorical_table(600);
        let cs = two_parties_at_defaults(3, 40, |_| t.clone());
        let exact = -(-1e-6f64).ln_1p();
        for c in &cs {
            let term = c.accounting.threshold_epsilon;
            assert!(term >= exact && term <= exact * (1.0 + 1e-9), "{term}");
        }
        let (_, r) = run(&cs).unwrap();
        assert!(r.epsilon <= 4.0 && r.meets_target, "{}", r.epsilon);
        let without = cs[0].accounting.threshold_epsilon;
        let v = &r.views.party_aggregator;
        let orders = crate::accountant::default_orders();
        let curve = crate::accountant::RdpCurve::gaussian_or_zero(
            cs[0].accounting.normalization_noise_multiplier,
            &orders,
        )
        .unwrap();
        let acc = crate::mechanisms::federated::Accounting {
            sampling_rate: v.sampling_rate,
            compositions: v.compositions,
            delta_rdp: cs[0].accounting.delta_rdp,
            orders: &orders,
            preset: crate::accountant::Preset::Default,
            extra: Some(&curve),
            threshold_epsilon: 0.0,
        };
        let e0 = acc
            .epsilon(v.noise_multiplier, crate::accountant::Preset::Default)
            .unwrap()
            .epsilon;
        assert!(
            v.epsilon >= e0 + without,
            "{} < {e0} + {without}",
            v.epsilon
        );
        // No schema: each party decided its types under DP, and its file's data-path noise
        // multiplier composes that decision with its histograms; nothing is declared.
        for c in &cs {
            assert!(!c.accounting.types_from_data);
            let hist = c.normalization["dp_histogram"]["noise_multiplier"].as_f64();
            let types_z = c.column_types["noise_multiplier"].as_f64();
            assert!(hist.is_some() && types_z.is_some());
            assert_eq!(
                c.accounting.normalization_noise_multiplier,
                super::super::space::combined_z(hist, types_z)
            );
        }
        let types = super::super::receipt::UNPROTECTED_TYPES;
        assert!(!r.guarantee.unprotected.iter().any(|u| u == types));
        assert_eq!(r.column_types.as_array().map(Vec::len), Some(2));
    }

    /// Each party decides the types the schema leaves open from its own data (under DP):
    /// where one party's column holds text and another's numbers, the decisions differ and
    /// the aggregation is refused, naming the column and the fix; `column_types` says what
    /// each party decided.
    #[test]
    fn parties_whose_type_decisions_differ_are_refused() {
        let table = |numbers: bool| {
            let mut text = String::from("x,c,y\n");
            for i in 0..600 {
                let c = if numbers {
                    (i % 5).to_string()
                } else {
                    ["u", "v", "w"][i % 3].to_string()
                };
                text.push_str(&format!("{},{c},{}\n", i % 7, ["a", "b"][i % 2]));
            }
            crate::data::read_csv_bytes(
                text.as_bytes(),
                &crate::data::CsvOptions {
                    label: Some("y".into()),
                    missing: crate::data::MissingPolicy::Keep,
                    ..Default::default()
                },
            )
            .unwrap()
        };
        let cs = two_parties_at_defaults(5, 60, |i| table(i == 1));
        let kind = |c: &Contribution| c.column_types["columns"][1]["kind"].clone();
        assert_eq!(kind(&cs[0]), "categorical");
        assert_eq!(kind(&cs[1]), "numeric");
        let e = run(&cs).unwrap_err().to_string();
        assert!(e.contains("column 'c'"), "{e}");
        assert!(
            e.contains("type the column in a schema every party uses"),
            "{e}"
        );
    }

    /// A file of an earlier version (no `missing_encoded`) dropped its records with missing
    /// cells: a count the labels do not give, so the receipt declares it. This version's files
    /// drop only records without a label (public) and declare nothing.
    #[test]
    fn rows_dropped_by_an_earlier_version_are_declared() {
        let (t, schema) = constant_table(50);
        let o = FedOptions {
            mix: 5,
            ..opts(Variant::Cape, 40)
        };
        let ps = parties(2, 2);
        let mut cs = contribute_all(&ps, &o, &t, &schema);
        assert!(cs.iter().all(|c| c.accounting.missing_encoded));
        let (_, r) = run(&cs).unwrap();
        assert!(r.guarantee.unprotected.is_empty(), "{:?}", r.guarantee);
        cs[1].accounting.missing_encoded = false;
        cs[1].accounting.rows_dropped = 2;
        cs[1].integrity = cs[1].compute_integrity();
        let (_, r) = run(&cs).unwrap();
        assert!(
            r.guarantee.unprotected[0]
                .starts_with("rows_dropped (2): a contribution of an earlier version"),
            "{:?}",
            r.guarantee
        );
    }

    #[test]
    fn residual_std_is_zero_when_every_party_is_present_and_tau_over_2_with_one_of_3_missing() {
        let tau = 0.8;
        let res = Residual {
            variant: Variant::Cape,
            parties: 3,
            a_cov: tau * tau * 3.0 / 2.0,
        };
        assert!(res.std(&[1.0 / 3.0; 3]).abs() < 1e-15);
        // w = (1/2, 1/2, 0): Σ (w − 1/3)² = 1/6, so the std is √(τ²·3/2·1/6) = τ/2.
        assert!((res.std(&[0.5, 0.5]) - tau / 2.0).abs() < 1e-15);
        let conventional = Residual {
            variant: Variant::Conventional,
            ..res
        };
        assert_eq!(conventional.std(&[0.5, 0.5]), 0.0);
    }
    #[test]
    fn multi_party_aggregate_cancels_and_accounts() {
        let (t, schema) = constant_table(1000);
        let o = FedOptions {
            pool: Some(1000),
            ..opts(Variant::Cape, 2000)
        };
        let ps = parties(3, 1);
        let cs = contribute_all(&ps, &o, &t, &schema);
        let (mut xs, r) = run(&cs).unwrap();
        assert_eq!(xs.len(), 2000);
        // One party's message alone: 0.5 + e_s + g_s, marginal N(0.5, τ_e² + τ_g²) (KS, α = 1e-6).
        let a = &cs[0].accounting;
        let mut m: Vec<f64> = cs[0]
            .decode_values()
            .iter()
            .map(|&v| f64::from(v) - 0.5)
            .collect();
        let d1 = ks_normal(&mut m, (a.tau_e * a.tau_e + a.tau_g * a.tau_g).sqrt());
        assert!(d1 < crit(m.len()), "message KS {d1}");
        assert!(ks_normal(&mut m, a.tau_g) > crit(m.len()));
        // Conventional: 0.5 + g_s, marginal N(0.5, τ_s²).
        let oc = FedOptions {
            variant: Variant::Conventional,
            session: Some("c".into()),
            ..o.clone()
        };
        let cc = contribute_all(&ps, &oc, &t, &schema);
        let ac = &cc[1].accounting;
        assert_eq!(ac.tau_e, 0.0);
        let mut g: Vec<f64> = cc[1]
            .decode_values()
            .iter()
            .map(|&v| f64::from(v) - 0.5)
            .collect();
        let d2 = ks_normal(&mut g, ac.tau_g);
        assert!(d2 < crit(g.len()), "conventional message KS {d2}");
        let (h, rows, r_again) = aggregate_rows(&cs).unwrap();
        assert_eq!(h, ["x", "y"]);
        assert_eq!(rows.len(), 2000);
        assert_eq!(r_again.epsilon, r.epsilon);
        // A key that already contributed to this context is refused.
        let mut used = ps[0].key.clone();
        used.used_contexts.push(cs[0].context.clone());
        let peers: Vec<PublicKeyFile> = ps[1..].iter().map(|q| q.public.clone()).collect();
        let e = contribute(
            &t,
            Some(&schema),
            &used,
            &peers,
            &o,
            &mut ReleaseRng::seeded(9),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("already contributed"), "{e}");
        assert!(r.residual_noise.is_empty(), "{:?}", r.residual_noise);
        assert!(r.meets_target && r.epsilon <= 8.0);
        let sd = 2000.0 * r.parameters.tau_release;
        let d = ks_normal(&mut xs, sd);
        assert!(d < crit(2000), "KS {d} sd {sd}");
        assert!((r.parameters.tau_release - cs[0].accounting.tau_g / 3f64.sqrt()).abs() < 1e-12);
        // A missing party: reported, noisier, views over the two present.
        let (mut xs2, r2) = run(&cs[..2]).unwrap();
        assert_eq!(r2.parameters.parties_missing, vec![3]);
        // The release is a post-processing of the joint view: its ε (with the uncancelled e
        // counted as noise) is no larger; the joint view is a post-processing of the view of a
        // party as aggregator (t = 1), which is the headline.
        assert!(r2.views.aggregate.epsilon <= r2.views.aggregator.epsilon * (1.0 + 1e-9));
        assert!(r2.views.client.epsilon <= r2.views.aggregator.epsilon * (1.0 + 1e-9));
        assert!(r2.views.aggregator.epsilon <= r2.views.party_aggregator.epsilon * (1.0 + 1e-9));
        assert_eq!(r2.parameters.aggregator_seeds, 1);
        assert_eq!(r2.epsilon, r2.views.party_aggregator.epsilon);
        assert!(r2.warnings.iter().any(|w| w.contains("did not contribute")));
        let res = &r2.residual_noise[0];
        // Residual = −e_3/2 in normalized units × 2000: std 2000·τ_e/2.
        assert!(
            (res.std - 2000.0 * cs[0].accounting.tau_e / 2.0).abs() < 1e-6 * res.std,
            "{}",
            res.std
        );
        let spread = (xs2.iter().map(|v| v * v).sum::<f64>() / xs2.len() as f64).sqrt();
        assert!(spread > 2.0 * sd, "{spread} vs {sd}");
        assert!(ks_normal(&mut xs2, sd) > crit(2000));
        assert!((r2.views.aggregate.sensitivity - 0.05).abs() < 1e-15);
    }

    #[test]
    fn tampered_mismatched_and_duplicate_contributions_are_rejected() {
        let (t, schema) = constant_table(50);
        let o = opts(Variant::Cape, 40);
        let o = FedOptions { mix: 5, ..o };
        let ps = parties(3, 2);
        let cs = contribute_all(&ps, &o, &t, &schema);
        // Round trip through JSON keeps integrity.
        let back = Contribution::from_json(&cs[0].to_json(), "c1").unwrap();
        assert_eq!(back, cs[0]);
        // A changed value: integrity fails.
        let mut bad = cs[1].clone();
        let mut bytes = B64.decode(&bad.values).unwrap();
        bytes[0] ^= 1;
        bad.values = B64.encode(bytes);
        let e = run(&[cs[0].clone(), bad]).unwrap_err().to_string();
        assert!(
            e.contains("integrity check failed") && e.contains("party 2"),
            "{e}"
        );
        // Edited parameters with a recomputed integrity: the digest no longer matches.
        let mut bad = cs[1].clone();
        bad.agreed.epsilon = 40.0;
        bad.integrity = bad.compute_integrity();
        let e = run(&[cs[0].clone(), bad]).unwrap_err().to_string();
        assert!(e.contains("digest does not match"), "{e}");
        // An honest party run with other parameters: named field.
        let o2 = FedOptions {
            epsilon: 5.0,
            ..o.clone()
        };
        let other = contribute_all(&ps, &o2, &t, &schema);
        let e = run(&[cs[0].clone(), other[1].clone()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("disagrees") && e.contains("'epsilon'") && e.contains("8.0 vs 5.0"),
            "{e}"
        );
        // Different T.
        let o3 = FedOptions {
            samples: Some(60),
            ..o.clone()
        };
        let other = contribute_all(&ps, &o3, &t, &schema);
        let e = run(&[cs[0].clone(), other[2].clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'samples'"), "{e}");
        // Twice the same party.
        let e = run(&[cs[0].clone(), cs[0].clone()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("twice"), "{e}");
        assert!(run(&[]).is_err());
    }

    /// A party's own contribution checks its keys and T: its own key among the peers is
    /// ignored, alone it is no federation, another key with its id and a missing T are
    /// rejected.
    #[test]
    fn contributing_checks_the_keys_and_the_samples() {
        let (t, schema) = constant_table(50);
        let o = FedOptions {
            mix: 5,
            ..opts(Variant::Cape, 40)
        };
        let ps = parties(3, 2);
        let cs = contribute_all(&ps, &o, &t, &schema);
        // Own key among the peers is ignored: same contribution context as without it.
        let all: Vec<PublicKeyFile> = ps.iter().map(|q| q.public.clone()).collect();
        let c = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &all,
            &o,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap();
        assert_eq!(c.context, cs[0].context);
        // Alone (only own key): not a federation.
        let e = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &[ps[0].public.clone()],
            &o,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("clients = 1"), "{e}");
        // Another key claiming this party's id.
        let (_, imp) = pairwise::keygen(1, &mut ReleaseRng::seeded(77));
        let e = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &[imp],
            &o,
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("same party id"), "{e}");
        // T is required.
        let e = contribute(
            &t,
            Some(&schema),
            &ps[0].key,
            &[ps[1].public.clone()],
            &FedOptions { samples: None, ..o },
            &mut ReleaseRng::seeded(1),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("samples"), "{e}");
    }
}
