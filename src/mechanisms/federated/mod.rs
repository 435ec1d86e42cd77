//! Federated DP-CDA, conventional and CAPE (Saha et al., "Differentially Private Decentralized
//! Dataset Synthesis Through Randomized Mixing with Correlated Noise").
//!
//! S parties (clients) each hold a disjoint partition. Party s makes its own DP-CDA mixes
//! m_s(t, k) (l rows of class k drawn without replacement from its own N_{s,k} rows, averaged,
//! features clipped to ‖x‖₂ ≤ c) and sends m_s(t, k) + noise_s(t, k). The aggregator releases
//! the average (1/S) Σ_s over the parties for every (t, k). Label-free mode: the label of row
//! (t, k) is k.
//!
//! * **Conventional**: noise_s = g_s ~ N(0, τ_s² I), independent across parties. The paper
//!   writes τ_s = √S·τ_pool; here τ_pool is *defined* as the standard deviation of the noise
//!   left in the released average, τ_s/√S, and τ_s is calibrated so that one party's message
//!   meets the target ε (the paper's centralized τ_pool scaled by √S does not: a party's
//!   sampling rate is l/N_{s,k} ≈ S·l/N_k, see `paper_claim`).
//! * **CAPE**: noise_s = e_s + g_s, g_s ~ N(0, τ_g² I) independent, and the e_s jointly
//!   Gaussian with Σ_s e_s = 0 and marginal N(0, τ_e² I) ([`zero_sum`]). In the released
//!   average the e_s cancel.
//!
#![doc = include_str!("PROOF.md")]

pub mod pairwise;
pub mod zero_sum;

use crate::accountant::calibrate::{certify_upward, smallest_z};
use crate::accountant::{EpsDelta, Preset, RdpCurve};
use crate::enums::named_enum;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

named_enum! {
    /// Which federated protocol.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Variant: "variant" {
        /// Correlation-assisted: e_s + g_s with Σ e_s = 0.
        Cape = "cape" ("correlated, cancelling noise"),
        /// Independent noise per party.
        Conventional = "conventional",
    }
}

impl Variant {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        self.as_str()
    }
}

/// Checks the number of parties.
pub fn check_clients(s: usize) -> Result<()> {
    if s < 2 {
        return Err(Error::param(
            "clients",
            s,
            "a federation needs at least 2 parties (use `synth` for one data holder)",
        ));
    }
    Ok(())
}

/// L2 sensitivity of one mix, Δ = 2c/l.
pub fn sensitivity(mix: usize, clip: f64) -> f64 {
    2.0 * clip / mix as f64
}

/// Noise multiplier of view (a): one party's message alone.
pub fn z_client(delta_l2: f64, tau_g: f64, tau_e: f64) -> f64 {
    (tau_g * tau_g + tau_e * tau_e).sqrt() / delta_l2
}

/// Noise multiplier of view (b): the released average over the parties present, whose
/// independent noise stds are `tau_gs`, in a federation of `s_total` parties with correlated
/// level `tau_e` (0 for conventional). With every party present the e_s cancel; with |P| < S
/// present, Σ_P e_s is left, with variance a·|P|(S − |P|)/S (a = τ_e²·S/(S−1)), so the release
/// noise has variance (Σ_P τ_g² + a|P|(S−|P|)/S)/|P|² on sensitivity Δ/|P|.
pub fn z_aggregate(delta_l2: f64, tau_gs: &[f64], tau_e: f64, s_total: usize) -> f64 {
    let p = tau_gs.len() as f64;
    let s = s_total as f64;
    let resid = if s_total > 1 && tau_gs.len() < s_total {
        tau_e * tau_e * s / (s - 1.0) * p * (s - p) / s
    } else {
        0.0
    };
    (tau_gs.iter().map(|t| t * t).sum::<f64>() + resid).sqrt() / delta_l2
}

/// Noise multiplier of the aggregator's joint view of the messages of the parties present
/// (`tau_gs`; the correlated part restricted to the present parties is a(I − 11ᵀ/S)), for a
/// record of the party at position `who` in `tau_gs`: the seedless aggregator, [`z_joint`]
/// with no seeds known.
pub fn z_aggregator(delta_l2: f64, tau_gs: &[f64], tau_e: f64, s_total: usize, who: usize) -> f64 {
    z_joint(delta_l2, tau_gs, tau_e, s_total, who, 0)
}

/// The parties whose pairwise seeds the worst-case aggregator holds, when it holds the seeds
/// of `known` parties other than the target `who` (positions into `tau_gs`, the parties
/// present, in a federation of `s_total`): the missing parties first (their seeds remove
/// nothing the aggregator observes), then the present parties with the largest τ_g. Returns
/// the positions in `tau_gs` that stay unknown (observed with their pairwise noise), `who`
/// included, and n = S − known, the number of parties whose seeds are unknown.
fn unknown_parties(
    tau_gs: &[f64],
    s_total: usize,
    who: usize,
    known: usize,
) -> (Vec<usize>, usize) {
    let missing = s_total.saturating_sub(tau_gs.len());
    let known = known.min(s_total.saturating_sub(1));
    let from_present = known.saturating_sub(missing);
    let mut others: Vec<usize> = (0..tau_gs.len()).filter(|&j| j != who).collect();
    // Largest τ_g first: these are the parties whose noise helps most; knowing them hurts most.
    others.sort_by(|&a, &b| tau_gs[b].total_cmp(&tau_gs[a]).then(a.cmp(&b)));
    let mut unknown: Vec<usize> = others.into_iter().skip(from_present).collect();
    unknown.push(who);
    unknown.sort_unstable();
    (unknown, s_total - known)
}

/// Noise multiplier of what an aggregator holding the pairwise seeds of `known` parties (t)
/// sees about a record of the party at position `who` in `tau_gs` (the independent noise stds
/// of the parties present), in a federation of `s_total` parties with correlated level
/// `tau_e` (0: conventional). t = 0 is the seedless aggregator; t = 1 an aggregator that is
/// one of the parties; t = S − 1 the aggregator colluding with every other party.
///
/// Derivation (proof note, "party as aggregator"): the pair terms r_{ab} ~ N(0, v),
/// v = τ_e²/(S−1), are independent. Knowing the seeds of the set J (|J| = t) means knowing
/// every r_{ab} with a or b in J; those parties' messages then carry nothing about the target
/// (its mean is in the target's message only, and their remaining noise is independent of the
/// rest). Subtracting the known terms, party s ∉ J shows m_s + g_s + e'_s with
/// e'_s = Σ_{s' ∉ J, s' ≠ s} ±r_{ss'}: a zero-sum construction over the n = S − t parties
/// outside J, Var(e'_s) = (n−1)v, Cov(e'_s, e'_{s'}) = −v, i.e. covariance a'(I − 11ᵀ/n) with
/// a' = n·v, restricted to the observed (present) parties outside J. Sherman–Morrison with
/// A_j = τ_{g,j}² + a' gives u_sᵀΣ⁻¹u_s = 1/A_s + (a'/n)/A_s² / (1 − (a'/n)Σ_obs 1/A_j), which
/// grows with Σ_obs 1/A_j; so the worst J holds the missing parties first and then the present
/// parties with the largest τ_g (see `unknown_parties`). For n = 1 it is 1/τ_{g,s}²: g_s alone.
pub fn z_joint(
    delta_l2: f64,
    tau_gs: &[f64],
    tau_e: f64,
    s_total: usize,
    who: usize,
    known: usize,
) -> f64 {
    let (obs, n) = unknown_parties(tau_gs, s_total, who, known);
    let v = if s_total > 1 {
        tau_e * tau_e / (s_total as f64 - 1.0)
    } else {
        0.0
    };
    let nf = n as f64;
    let a = nf * v;
    let inv = |j: usize| 1.0 / (tau_gs[j] * tau_gs[j] + a);
    let quad = if a == 0.0 || n <= 1 {
        // n = 1: the block a'(I − 11ᵀ/n) is 0, only g_s is left.
        1.0 / (tau_gs[who] * tau_gs[who])
    } else {
        let sum_inv: f64 = obs.iter().map(|&j| inv(j)).sum();
        // Each (a/n)/A_j < 1/n and |obs| ≤ n, so denom > 0; guard anyway.
        let denom = 1.0 - (a / nf) * sum_inv;
        let iw = inv(who);
        iw + (a / nf) * iw * iw / denom.max(f64::MIN_POSITIVE)
    };
    1.0 / (delta_l2 * quad.sqrt())
}

/// Noise multiplier when all other parties collude with the aggregator: g_s alone.
pub fn z_collusion(delta_l2: f64, tau_g: f64) -> f64 {
    tau_g / delta_l2
}

/// Accounting context shared by all views of one party's records.
#[derive(Debug, Clone)]
pub struct Accounting<'a> {
    /// Sampling rate p_s = l / pool.
    pub sampling_rate: f64,
    /// Compositions (T_k rows of the record's class).
    pub compositions: u64,
    /// δ for the RDP conversion.
    pub delta_rdp: f64,
    /// Orders.
    pub orders: &'a [u32],
    /// Preset.
    pub preset: Preset,
    /// Other releases to compose (DP normalization); None for none.
    pub extra: Option<&'a RdpCurve>,
    /// Pure-ε terms added to the converted ε (basic composition): the categorical levels'
    /// DP threshold, ln(1/(1 − δ_cat)); 0 for none.
    pub threshold_epsilon: f64,
}

impl Accounting<'_> {
    /// ε of a subsampled Gaussian with noise multiplier `z` under `preset`.
    pub fn epsilon(&self, z: f64, preset: Preset) -> Result<EpsDelta> {
        let mut c =
            RdpCurve::subsampled_gaussian(self.sampling_rate, z, self.orders, preset.bound())?
                .times(self.compositions);
        if let Some(e) = self.extra {
            c = c.compose(e)?;
        }
        let mut e = c.epsilon(self.delta_rdp, preset.conversion())?;
        if self.threshold_epsilon > 0.0 && e.epsilon.is_finite() {
            // Rounded up: the sum is never below the two terms' exact sum.
            e.epsilon = crate::mechanisms::noise::up(e.epsilon + self.threshold_epsilon);
        }
        Ok(e)
    }

    /// Smallest z meeting `target` with the threshold terms paid first (the callers certify
    /// [`Accounting::epsilon`], which adds them back rounded up, against `target`).
    pub fn smallest_z(&self, target: f64) -> Result<f64> {
        let left = target - self.threshold_epsilon;
        if self.threshold_epsilon > 0.0
            && left.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            return Err(Error::param(
                "epsilon",
                target,
                format!(
                    "the categorical levels' DP threshold alone spends this ε (ln(1/(1 − δ_cat)) = {:.3e}); raise ε or lower δ",
                    self.threshold_epsilon
                ),
            ));
        }
        let cal = smallest_z(left, self.delta_rdp, self.preset.conversion(), |z| {
            let mut c = RdpCurve::subsampled_gaussian(
                self.sampling_rate,
                z,
                self.orders,
                self.preset.bound(),
            )?
            .times(self.compositions);
            if let Some(e) = self.extra {
                c = c.compose(e)?;
            }
            Ok(c)
        })?;
        Ok(cal.z)
    }
}

/// The public correlated-noise level τ_e = z_e·Δ: z_e is the smallest noise multiplier for
/// which `compositions` Gaussian steps without subsampling meet `target` at `delta_rdp`
/// (depends on agreed parameters only).
pub fn public_tau_e(
    delta_l2: f64,
    compositions: u64,
    target: f64,
    delta_rdp: f64,
    orders: &[u32],
    preset: Preset,
) -> Result<f64> {
    let cal = smallest_z(target, delta_rdp, preset.conversion(), |z| {
        Ok(RdpCurve::gaussian(z, orders)?.times(compositions))
    })?;
    Ok(cal.z * delta_l2)
}

/// What every view of a federation depends on besides the parties' own noise: the scheme,
/// one party's message sensitivity, the pairwise noise and the seeds the aggregator holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Federation {
    /// Conventional or CAPE.
    pub variant: Variant,
    /// Δ = 2c/l: how far one party's mix moves when one record is replaced ([`sensitivity`]).
    pub delta_l2: f64,
    /// τ_e: the std of each party's cancelling noise e_s (CAPE; ignored for conventional).
    pub tau_e: f64,
    /// S: the parties in the federation, present or not.
    pub parties: usize,
    /// t: the parties whose pairwise seeds the aggregator holds ([`check_known`]).
    pub known: usize,
}

impl Federation {
    /// τ_e where it is added (CAPE), else 0.
    fn added_tau_e(&self) -> f64 {
        if self.variant == Variant::Cape {
            self.tau_e
        } else {
            0.0
        }
    }
}

/// The smallest τ_g (CAPE) or τ_s (conventional) such that the view of an aggregator holding
/// the pairwise seeds of `known` parties (t; [`z_joint`]), in a federation of `clients` parties
/// that all use it, meets `target`; re-accounted, never overshooting. t = 1 (the aggregator is
/// one of the parties) is the product default; t = 0 assumes a seedless aggregator.
pub fn calibrate_tau_g_for(fed: &Federation, acc: &Accounting, target: f64) -> Result<f64> {
    let &Federation {
        variant,
        delta_l2,
        parties: clients,
        known,
        ..
    } = fed;
    check_clients(clients)?;
    check_known(known, clients)?;
    let z_star = acc.smallest_z(target)?;
    // Parties whose seeds stay unknown, n = S − t, and a' = n·τ_e²/(S−1).
    let n = (clients - known) as f64;
    let tau = match variant {
        Variant::Conventional => z_star * delta_l2,
        Variant::Cape if n <= 1.0 => z_star * delta_l2,
        Variant::Cape => {
            // Solve Δ²·(n x + a)/(n x (x + a)) = 1/z*² for x = τ_g²:
            // c n x² + (c n a − n) x − a = 0 with c = 1/(z*² Δ²).
            let a = fed.tau_e * fed.tau_e * n / (clients as f64 - 1.0);
            let c = 1.0 / (z_star * z_star * delta_l2 * delta_l2);
            let b = c * n * a - n;
            let x = (-b + (b * b + 4.0 * c * n * a).sqrt()) / (2.0 * c * n);
            x.sqrt()
        }
    };
    let te = fed.added_tau_e();
    certify_upward(tau, 1e-9, 200, |tau| {
        let taus = vec![tau; clients];
        let z = z_joint(delta_l2, &taus, te, clients, 0, known);
        Ok((z.is_finite() && acc.epsilon(z, acc.preset)?.epsilon <= target).then_some(tau))
    })?
    .ok_or_else(|| {
        Error::Accountant(format!(
            "federated calibration could not certify ε ≤ {target}; please report this"
        ))
    })
}

/// Checks t, the number of parties whose pairwise seeds the aggregator is assumed to hold.
pub fn check_known(known: usize, clients: usize) -> Result<()> {
    if known + 1 > clients {
        return Err(Error::param(
            "aggregator-seeds",
            known,
            format!(
                "the aggregator can hold the seeds of at most S − 1 = {} other parties; use 1 (the aggregator is one of the parties, the default) up to {}",
                clients.saturating_sub(1),
                clients.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

/// One accounted view.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ViewReport {
    /// What this view is.
    pub what: String,
    /// The noise protecting the record in this view.
    pub noise: String,
    /// L2 sensitivity of the released quantity.
    pub sensitivity: f64,
    /// Effective noise standard deviation (per coordinate, after whitening).
    pub noise_std: f64,
    /// z = noise_std / sensitivity.
    pub noise_multiplier: f64,
    /// Sampling rate used.
    pub sampling_rate: f64,
    /// Compositions.
    pub compositions: u64,
    /// ε under the receipt's preset.
    pub epsilon: f64,
    /// Order attaining it.
    pub order: u32,
    /// ε under the other preset.
    pub epsilon_other_preset: f64,
}

/// All views of the records of one party.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Views {
    /// (a) one party's message alone.
    pub client: ViewReport,
    /// (b) the released average.
    pub aggregate: ViewReport,
    /// All messages jointly, seen by an aggregator holding no pairwise seed.
    pub aggregator: ViewReport,
    /// All messages plus the pairwise seeds of t parties (t = 1: the aggregator is one of the
    /// parties): the guarantee.
    pub party_aggregator: ViewReport,
    /// Aggregator + all other parties colluding (t = S − 1; not promised unless t = S − 1).
    pub collusion: ViewReport,
}

fn view(acc: &Accounting, what: &str, noise: &str, sensitivity: f64, z: f64) -> Result<ViewReport> {
    let e = acc.epsilon(z, acc.preset)?;
    let o = acc.epsilon(z, acc.preset.other())?;
    Ok(ViewReport {
        what: what.into(),
        noise: noise.into(),
        sensitivity,
        noise_std: z * sensitivity,
        noise_multiplier: z,
        sampling_rate: acc.sampling_rate,
        compositions: acc.compositions,
        epsilon: e.epsilon,
        order: e.order,
        epsilon_other_preset: o.epsilon,
    })
}

/// Accounts every view for the records of party `who` (index into `tau_gs`, the independent
/// noise stds of the parties present) in the federation `fed`.
pub fn views_for(fed: &Federation, tau_gs: &[f64], who: usize, acc: &Accounting) -> Result<Views> {
    let &Federation {
        variant,
        delta_l2,
        parties: s_total,
        known,
        ..
    } = fed;
    let te = fed.added_tau_e();
    let present = tau_gs.len() as f64;
    let tg = tau_gs[who];
    let (client_noise, agg_noise) = match variant {
        Variant::Cape => ("e_s + g_s", "(1/S) Σ_s g_s (the e_s cancel)"),
        Variant::Conventional => ("g_s (τ_s = √S·τ_pool)", "(1/S) Σ_s g_s"),
    };
    let za = z_client(delta_l2, tg, te);
    let zb = z_aggregate(delta_l2, tau_gs, te, s_total);
    let zj = z_aggregator(delta_l2, tau_gs, te, s_total, who);
    let zc = z_collusion(delta_l2, tg);
    let zt = z_joint(delta_l2, tau_gs, te, s_total, who, known);
    let party_what = match known {
        0 => "the aggregator holding no pairwise seed (assumed, not enforced): the guarantee".to_string(),
        1 => "the aggregator is one of the parties (it holds its own pairwise seeds, t = 1) and sees every message: the guarantee".to_string(),
        t => format!("the aggregator holds the pairwise seeds of t = {t} parties and sees every message: the guarantee"),
    };
    Ok(Views {
        client: view(
            acc,
            "(a) one party's message as seen by the aggregator, alone",
            client_noise,
            delta_l2,
            za,
        )?,
        aggregate: view(
            acc,
            "(b) the released aggregate (average over the parties present)",
            if tau_gs.len() < s_total && variant == Variant::Cape {
                "(1/|P|) Σ_P (g_s + e_s): the missing parties' e do not cancel"
            } else {
                agg_noise
            },
            delta_l2 / present,
            zb,
        )?,
        aggregator: view(
            acc,
            "all parties' messages jointly, seen by an aggregator that holds no pairwise seed (cross-check)",
            "joint Gaussian: independent g_s plus the zero-sum e_s (whitened)",
            delta_l2,
            zj,
        )?,
        party_aggregator: view(
            acc,
            &party_what,
            "joint Gaussian: independent g_s plus the pairwise terms whose seeds the aggregator lacks (whitened)",
            delta_l2,
            zt,
        )?,
        collusion: view(
            acc,
            "the aggregator colluding with every other party (they can remove e_s); reported, not promised",
            "g_s only",
            delta_l2,
            zc,
        )?,
    })
}

/// The paper's Theorem 1 claim, computed as printed (labelled as the paper's claim).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PaperClaim {
    /// A sentence saying what this is.
    pub statement: String,
    /// p = lK/N.
    pub sampling_rate: f64,
    /// σ used as the noise (τ_g for CAPE, τ_pool = τ_s/√S for conventional).
    pub sigma: f64,
    /// z = σ / (2c/l) (label-free: the label term is dropped).
    pub noise_multiplier: f64,
    /// T (all rows), as the paper composes.
    pub compositions: u64,
    /// The claimed ε (paper preset: Theorem 9 + classic conversion).
    pub epsilon: f64,
}

/// The sizes the paper's claim is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClaimSizes {
    /// l.
    pub mix: usize,
    /// K.
    pub classes: usize,
    /// N: the rows used, all parties together.
    pub total_rows: usize,
    /// T: the rows written (the paper composes over all of them).
    pub rows_written: u64,
}

/// Computes the paper's claim for a federation whose parties add independent noise `tau_g`.
pub fn paper_claim(
    fed: &Federation,
    tau_g: f64,
    sizes: &ClaimSizes,
    delta: f64,
    orders: &[u32],
) -> Result<PaperClaim> {
    let (variant, delta_l2, clients) = (fed.variant, fed.delta_l2, fed.parties);
    let &ClaimSizes {
        mix,
        classes,
        total_rows,
        rows_written,
    } = sizes;
    let p = ((mix * classes) as f64 / total_rows as f64).min(1.0);
    let sigma = match variant {
        Variant::Cape => tau_g,
        Variant::Conventional => tau_g / (clients as f64).sqrt(),
    };
    let z = sigma / delta_l2;
    let c = RdpCurve::subsampled_gaussian(p, z, orders, Preset::Paper.bound())?.times(rows_written);
    let e = c.epsilon(delta, Preset::Paper.conversion())?;
    Ok(PaperClaim {
        statement: match variant {
            Variant::Cape => "The paper's Theorem 1 as printed (p = lK/N, σ = τ_g, T compositions): the paper's claim, NOT a guarantee; it ignores that each party samples from its own N_{s,k} rows and that the aggregator sees every message".into(),
            Variant::Conventional => "The paper's claim for the conventional scheme (centralized accounting at σ = τ_pool = τ_s/√S, p = lK/N, T compositions): NOT a guarantee; one party's message has sampling rate l/N_{s,k}".into(),
        },
        sampling_rate: p,
        sigma,
        noise_multiplier: z,
        compositions: rows_written,
        epsilon: e.epsilon,
    })
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::accountant::default_orders;

    fn fed(
        variant: Variant,
        delta_l2: f64,
        tau_e: f64,
        parties: usize,
        known: usize,
    ) -> Federation {
        Federation {
            variant,
            delta_l2,
            tau_e,
            parties,
            known,
        }
    }

    #[test]
    fn hand_derived_noise_multipliers() {
        // Δ = 2·1/4 = 0.5. τ_g = 0.3, τ_e = 0.4: client z = 0.5/0.5 = 1.
        let d = sensitivity(4, 1.0);
        assert_eq!(d, 0.5);
        assert!((z_client(d, 0.3, 0.4) - 1.0).abs() < 1e-12);
        // Aggregate of S = 4 parties with τ_g = 0.3: noise 0.3/2 = 0.15 on sensitivity 0.5/4:
        // z = 0.15/0.125 = 1.2 = √(4·0.09)/0.5.
        assert!((z_aggregate(d, &[0.3; 4], 0.4, 4) - 1.2).abs() < 1e-12);
        // One of 4 parties missing: Σ of 3 e's has variance a·3·1/4 = τ_e²·4/3·3/4 = τ_e².
        let zm = z_aggregate(d, &[0.3; 3], 0.4, 4);
        assert!((zm - (3.0 * 0.09 + 0.16f64).sqrt() / 0.5).abs() < 1e-12);
        // …and it is never more informative than the joint view it is computed from.
        assert!(zm >= z_aggregator(d, &[0.3; 3], 0.4, 4, 0));
        // Joint view, homogeneous: 1/z² = Δ²(S x + a)/(S x (x + a)), x = τ_g², a = τ_e² S/(S−1).
        let (s, x, te): (f64, f64, f64) = (4.0, 0.09, 0.4);
        let a = te * te * s / (s - 1.0);
        let want = 1.0 / (d * ((s * x + a) / (s * x * (x + a))).sqrt());
        let got = z_aggregator(d, &[0.3; 4], te, 4, 2);
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // Brute force: invert the 4×4 covariance by Gauss–Jordan and take (Σ⁻¹)_{22}.
        let n = 4;
        let mut m = vec![vec![0.0f64; 2 * n]; n];
        for i in 0..n {
            for j in 0..n {
                m[i][j] = if i == j {
                    x + a * (1.0 - 1.0 / s)
                } else {
                    -a / s
                };
            }
            m[i][n + i] = 1.0;
        }
        for c in 0..n {
            let p = m[c][c];
            for v in m[c].iter_mut() {
                *v /= p;
            }
            for r in 0..n {
                if r != c {
                    let f = m[r][c];
                    let row = m[c].clone();
                    for (v, w) in m[r].iter_mut().zip(row) {
                        *v -= f * w;
                    }
                }
            }
        }
        let brute = 1.0 / (d * m[2][n + 2].sqrt());
        assert!((got - brute).abs() < 1e-9, "{got} vs {brute}");
        // Joint ≥ both views in information: z_joint ≤ z_client and ≤ z_aggregate.
        assert!(got <= z_client(d, 0.3, 0.4) && got <= z_aggregate(d, &[0.3; 4], 0.4, 4));
        // Conventional (τ_e = 0): joint = client = τ_s/Δ.
        assert!((z_aggregator(d, &[0.3, 0.6], 0.0, 2, 0) - 0.6).abs() < 1e-12);
        assert!((z_collusion(d, 0.3) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn heterogeneous_joint_view_matches_brute_force() {
        let d = 0.25;
        let tg = [0.2, 0.5, 0.35];
        let te = 1.3;
        let s = 5usize; // two parties missing: the present block of a(I − 11ᵀ/S)
        let a = te * te * 5.0 / 4.0;
        let n = 3;
        let mut m = vec![vec![0.0f64; 2 * n]; n];
        for i in 0..n {
            for j in 0..n {
                m[i][j] = if i == j {
                    tg[i] * tg[i] + a * (1.0 - 0.2)
                } else {
                    -a * 0.2
                };
            }
            m[i][n + i] = 1.0;
        }
        for c in 0..n {
            let p = m[c][c];
            for v in m[c].iter_mut() {
                *v /= p;
            }
            for r in 0..n {
                if r != c {
                    let f = m[r][c];
                    let row = m[c].clone();
                    for (v, w) in m[r].iter_mut().zip(row) {
                        *v -= f * w;
                    }
                }
            }
        }
        for who in 0..3 {
            let brute = 1.0 / (d * m[who][n + who].sqrt());
            let got = z_aggregator(d, &tg, te, s, who);
            assert!(
                (got - brute).abs() < 1e-9 * brute,
                "{who}: {got} vs {brute}"
            );
        }
    }

    #[test]
    fn views_epsilons_match_direct_accounting() {
        let orders = default_orders();
        let acc = Accounting {
            sampling_rate: 4.0 / 90.0,
            compositions: 100,
            delta_rdp: 1e-5,
            orders: &orders,
            preset: Preset::Default,
            extra: None,
            threshold_epsilon: 0.0,
        };
        let d = sensitivity(4, 1.0);
        let v = views_for(&fed(Variant::Cape, d, 3.0, 10, 0), &[0.4; 10], 0, &acc).unwrap();
        // Hand-derived z for each view, accounted directly with the accountant's pieces.
        let direct = |z: f64| {
            RdpCurve::subsampled_gaussian(4.0 / 90.0, z, &orders, Preset::Default.bound())
                .unwrap()
                .times(100)
                .epsilon(1e-5, Preset::Default.conversion())
                .unwrap()
                .epsilon
        };
        let za = (0.16f64 + 9.0).sqrt() / 0.5;
        let zb = (10.0f64 * 0.16).sqrt() / 0.5;
        assert!((v.client.epsilon - direct(za)).abs() < 1e-12);
        assert!((v.aggregate.epsilon - direct(zb)).abs() < 1e-12);
        assert!((v.aggregate.sensitivity - 0.05).abs() < 1e-15);
        assert!((v.collusion.epsilon - direct(0.8)).abs() < 1e-12);
        assert!(
            v.aggregator.epsilon >= v.client.epsilon && v.aggregator.epsilon >= v.aggregate.epsilon
        );
        assert!(v.collusion.epsilon > v.aggregator.epsilon);
    }

    #[test]
    fn calibration_meets_target_tightly_and_cape_beats_conventional_noise() {
        let orders = default_orders();
        let acc = Accounting {
            sampling_rate: 4.0 / 80.0,
            compositions: 80,
            delta_rdp: 1e-5,
            orders: &orders,
            preset: Preset::Default,
            extra: None,
            threshold_epsilon: 0.0,
        };
        let d = sensitivity(4, 1.0);
        let s = 10;
        let te = public_tau_e(d, 80, 10.0, 1e-5, &orders, Preset::Default).unwrap();
        // τ_e alone (no subsampling) meets the target.
        let e_alone = RdpCurve::gaussian(te / d, &orders)
            .unwrap()
            .times(80)
            .epsilon(1e-5, Preset::Default.conversion())
            .unwrap();
        assert!(e_alone.epsilon <= 10.0);
        let tg = calibrate_tau_g_for(&fed(Variant::Cape, d, te, s, 0), &acc, 10.0).unwrap();
        let ts =
            calibrate_tau_g_for(&fed(Variant::Conventional, d, 0.0, s, 0), &acc, 10.0).unwrap();
        let vc = views_for(&fed(Variant::Cape, d, te, s, 0), &vec![tg; s], 3, &acc).unwrap();
        let vv = views_for(
            &fed(Variant::Conventional, d, 0.0, s, 0),
            &vec![ts; s],
            3,
            &acc,
        )
        .unwrap();
        for v in [&vc, &vv] {
            assert!(
                v.aggregator.epsilon <= 10.0 && v.aggregator.epsilon > 9.99,
                "{}",
                v.aggregator.epsilon
            );
            assert!(v.client.epsilon <= 10.0 && v.aggregate.epsilon <= 10.0);
        }
        // Noise left in the release: τ_g/√S (CAPE) vs τ_s/√S (conventional); CAPE's τ_g is
        // close to τ_s/√S when τ_e ≫ τ_g.
        assert!(tg < ts / 2.5, "{tg} vs {ts}");
        // Slightly less noise breaks the target.
        let less = views_for(
            &fed(Variant::Cape, d, te, s, 0),
            &vec![tg * 0.999; s],
            0,
            &acc,
        )
        .unwrap();
        assert!(less.aggregator.epsilon > 10.0);
    }

    #[test]
    fn paper_claim_uses_global_rate() {
        let orders = default_orders();
        let sizes = ClaimSizes {
            mix: 4,
            classes: 10,
            total_rows: 10000,
            rows_written: 10000,
        };
        let c = paper_claim(
            &fed(Variant::Cape, 0.5, 0.0, 10, 0),
            0.5,
            &sizes,
            1e-5,
            &orders,
        )
        .unwrap();
        assert!((c.sampling_rate - 0.004).abs() < 1e-15);
        assert!((c.noise_multiplier - 1.0).abs() < 1e-12);
        let d = RdpCurve::subsampled_gaussian(0.004, 1.0, &orders, Preset::Paper.bound())
            .unwrap()
            .times(10000)
            .epsilon(1e-5, Preset::Paper.conversion())
            .unwrap();
        assert!((c.epsilon - d.epsilon).abs() < 1e-12);
        let conventional = fed(Variant::Conventional, 0.5, 0.0, 4, 0);
        let v = paper_claim(&conventional, 2.0, &sizes, 1e-5, &orders).unwrap();
        assert!((v.sigma - 1.0).abs() < 1e-12);
        assert!("cape".parse::<Variant>().is_ok());
        assert!("x"
            .parse::<Variant>()
            .unwrap_err()
            .to_string()
            .contains("variant = x"));
        assert!(check_clients(1)
            .unwrap_err()
            .to_string()
            .contains("clients = 1"));
    }

    /// Inverse of a small symmetric positive-definite matrix by Gauss–Jordan.
    fn inverse(a: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let n = a.len();
        let mut m: Vec<Vec<f64>> = a
            .iter()
            .enumerate()
            .map(|(i, row)| {
                let mut r = row.clone();
                r.extend((0..n).map(|j| if i == j { 1.0 } else { 0.0 }));
                r
            })
            .collect();
        for c in 0..n {
            let p = m[c][c];
            assert!(p > 0.0);
            for v in m[c].iter_mut() {
                *v /= p;
            }
            for r in 0..n {
                if r != c {
                    let f = m[r][c];
                    let row = m[c].clone();
                    for (v, w) in m[r].iter_mut().zip(row) {
                        *v -= f * w;
                    }
                }
            }
        }
        m.into_iter().map(|r| r[n..].to_vec()).collect()
    }

    /// Brute force, independent of [`z_joint`]: the latent noises are g_1..g_S (variance τ_g²)
    /// and the pair terms r_{ab}, a < b (variance τ_e²/(S−1)); the aggregator is party `agg`
    /// and observes its own g, every r touching it (its seeds) and the other parties'
    /// messages y_k = g_k + Σ_{b>k} r_{kb} − Σ_{b<k} r_{bk}. Returns the noise multiplier
    /// 1/(Δ·√(uᵀC⁻¹u)) for a record of party `target`, C the observations' covariance.
    fn brute_party_view(
        s: usize,
        tau_g: f64,
        tau_e: f64,
        d: f64,
        agg: usize,
        target: usize,
    ) -> f64 {
        let pairs: Vec<(usize, usize)> = (0..s)
            .flat_map(|a| (a + 1..s).map(move |b| (a, b)))
            .collect();
        let nl = s + pairs.len();
        let mut var = vec![tau_g * tau_g; s];
        var.extend(std::iter::repeat(tau_e * tau_e / (s as f64 - 1.0)).take(pairs.len()));
        // Rows of the observation map M (observations × latents).
        let mut rows: Vec<Vec<f64>> = Vec::new();
        let mut target_row = usize::MAX;
        let mut own_g = vec![0.0; nl];
        own_g[agg] = 1.0;
        rows.push(own_g);
        for (i, &(a, b)) in pairs.iter().enumerate() {
            if a == agg || b == agg {
                let mut r = vec![0.0; nl];
                r[s + i] = 1.0;
                rows.push(r);
            }
        }
        for k in (0..s).filter(|&k| k != agg) {
            let mut r = vec![0.0; nl];
            r[k] = 1.0;
            for (i, &(a, b)) in pairs.iter().enumerate() {
                if a == k {
                    r[s + i] = 1.0;
                } else if b == k {
                    r[s + i] = -1.0;
                }
            }
            if k == target {
                target_row = rows.len();
            }
            rows.push(r);
        }
        let no = rows.len();
        let cov: Vec<Vec<f64>> = (0..no)
            .map(|i| {
                (0..no)
                    .map(|j| (0..nl).map(|l| rows[i][l] * rows[j][l] * var[l]).sum())
                    .collect()
            })
            .collect();
        let inv = inverse(&cov);
        1.0 / (d * inv[target_row][target_row].sqrt())
    }

    #[test]
    fn party_aggregator_view_matches_brute_force_and_calibration_holds_against_it() {
        let orders = default_orders();
        let target = 4.0;
        let acc = Accounting {
            sampling_rate: 4.0 / 80.0,
            compositions: 80,
            delta_rdp: 1e-5,
            orders: &orders,
            preset: Preset::Default,
            extra: None,
            threshold_epsilon: 0.0,
        };
        let d = sensitivity(4, 1.0);
        let te = public_tau_e(d, 80, target, 1e-5, &orders, Preset::Default).unwrap();
        let eps = |z: f64| acc.epsilon(z, Preset::Default).unwrap().epsilon;
        for s in [2usize, 3, 5] {
            // The closed form equals the brute force, for every aggregator and target party.
            for tg in [0.05, 0.3] {
                for agg in 0..s {
                    for target_party in (0..s).filter(|&k| k != agg) {
                        let brute = brute_party_view(s, tg, te, d, agg, target_party);
                        let got = z_joint(d, &vec![tg; s], te, s, target_party, 1);
                        assert!(
                            (got - brute).abs() < 1e-7 * brute,
                            "S={s}: {got} vs {brute}"
                        );
                    }
                }
            }
            // Today's calibration (seedless aggregator) fails against a party as aggregator…
            let tg0 = calibrate_tau_g_for(&fed(Variant::Cape, d, te, s, 0), &acc, target).unwrap();
            let e0 = eps(brute_party_view(s, tg0, te, d, s - 1, 0));
            assert!(e0 > target * 1.05, "S={s}: seedless calibration gives {e0}");
            // …the default calibration (t = 1) meets the target in the brute-force view.
            let tg1 = calibrate_tau_g_for(&fed(Variant::Cape, d, te, s, 1), &acc, target).unwrap();
            let e1 = eps(brute_party_view(s, tg1, te, d, s - 1, 0));
            assert!(e1 <= target && e1 > target - 0.01, "S={s}: {e1}");
            let v = views_for(&fed(Variant::Cape, d, te, s, 1), &vec![tg1; s], 0, &acc).unwrap();
            assert!((v.party_aggregator.epsilon - e1).abs() < 1e-6);
            assert!(v.party_aggregator.epsilon >= v.aggregator.epsilon);
            eprintln!("S = {s}: ε vs a party-aggregator, seedless calibration {e0:.3}, t = 1 calibration {e1:.4}; τ_g {tg0:.4} → {tg1:.4}");
        }
        // S = 2: the party-aggregator sees m_2 + g_2 exactly (the collusion view).
        let tg = 0.2;
        assert!((z_joint(d, &[tg, tg], te, 2, 0, 1) - z_collusion(d, tg)).abs() < 1e-12);
        assert!(check_known(2, 2).is_err() && check_known(1, 2).is_ok());
    }

    #[test]
    fn party_aggregator_with_missing_and_heterogeneous_parties_is_the_worst_seed_set() {
        // S = 5, parties 0..3 present (one missing), t = 2: z_joint must equal the minimum
        // over every seed set J of size 2 (not containing the target) of the brute-force
        // Schur-complement view, computed from the full covariance of the unknown parties.
        let d = 0.5;
        let te = 0.9;
        let s = 5usize;
        let tg = [0.2, 0.7, 0.35, 0.5];
        let v = te * te / 4.0;
        for who in 0..4 {
            let mut worst = f64::INFINITY;
            // J ⊂ {0..5} \ {who}, |J| = 2; index 4 is the missing party.
            for a in 0..s {
                for b in a + 1..s {
                    if a == who || b == who {
                        continue;
                    }
                    let n = (s - 2) as f64;
                    let obs: Vec<usize> = (0..4).filter(|&k| k != a && k != b).collect();
                    let cov: Vec<Vec<f64>> = obs
                        .iter()
                        .map(|&i| {
                            obs.iter()
                                .map(|&j| {
                                    if i == j {
                                        tg[i] * tg[i] + (n - 1.0) * v
                                    } else {
                                        -v
                                    }
                                })
                                .collect()
                        })
                        .collect();
                    let inv = inverse(&cov);
                    let p = obs.iter().position(|&k| k == who).unwrap();
                    worst = worst.min(1.0 / (d * inv[p][p].sqrt()));
                }
            }
            let got = z_joint(d, &tg, te, s, who, 2);
            assert!(
                (got - worst).abs() < 1e-9 * worst,
                "{who}: {got} vs {worst}"
            );
        }
    }
}
