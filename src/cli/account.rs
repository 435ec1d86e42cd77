//! `privmix account`: ε of a mechanism with given noise. The mechanism flags are shared with
//! `privmix calibrate`.

use super::{name_of, print_snake, AccountantArg, Common, MechanismArg};
use clap::Args;
use privmix::api::{self, MechanismRequest};
use privmix::error::Result;

/// The public parameters of a mechanism (`account` and `calibrate`).
#[derive(Args)]
pub(crate) struct MechArgs {
    /// Mechanism: cda (DP-CDA), dpmix, local (local perturbation) or projection (random
    /// projection; accounted exactly like local).
    #[arg(long, value_enum, default_value = "cda")]
    mechanism: MechanismArg,
    /// Pool size n: cda: the class size used for the sampling rate l/n; dpmix: the rows the
    /// mixes are drawn from; local/projection: the input rows.
    #[arg(long)]
    pool: u64,
    /// Mix order l (cda and dpmix).
    #[arg(long)]
    mix: Option<u32>,
    /// L2 clip norm c (cda, local, projection; not used by dpmix, whose features lie in
    /// [0, 1]; default 1).
    #[arg(long)]
    clip: Option<f64>,
    /// cda: label noise σy (paper mode; omit for label-free mode). dpmix: label noise σy
    /// (account: required unless --dim-y 0; calibrate: held fixed, or omit to calibrate a
    /// shared σ = σx = σy).
    #[arg(long)]
    sigma_y: Option<f64>,
    /// dpmix: feature dimension dx (features in [0, 1]^dx).
    #[arg(long)]
    dim_x: Option<u64>,
    /// dpmix: label dimension dy (number of classes; 0 for the class-wise variant, whose
    /// labels carry no noise).
    #[arg(long)]
    dim_y: Option<u64>,
    /// Number of mixes T drawn from the pool (local/projection: rows released, T ≤ n).
    #[arg(long)]
    samples: u64,
    /// δ.
    #[arg(long)]
    pub delta: f64,
    /// Accountant: rdp, or pld (privacy-loss distribution; DP-CDA label-free: ε is the
    /// smaller of the two bounds, and calibrate uses the PLD).
    #[arg(long, value_enum, default_value = "rdp")]
    accountant: AccountantArg,
}

impl MechArgs {
    /// The request these flags make.
    pub fn request(&self, common: &Common) -> Result<MechanismRequest> {
        Ok(MechanismRequest {
            mechanism: Some(name_of(&self.mechanism)),
            pool: self.pool,
            mix: self.mix,
            clip: self.clip,
            sigma_x: None,
            sigma_y: self.sigma_y,
            dim_x: self.dim_x,
            dim_y: self.dim_y,
            samples: self.samples,
            delta: self.delta,
            epsilon: None,
            preset: common.preset(),
            orders: common.orders()?,
            accountant: Some(name_of(&self.accountant)),
        })
    }
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct AccountArgs {
    #[command(flatten)]
    mech: MechArgs,
    /// Feature noise σx.
    #[arg(long)]
    sigma_x: f64,
    #[command(flatten)]
    pub common: Common,
}

pub(crate) fn run(a: AccountArgs) -> Result<()> {
    let r = api::account(&MechanismRequest {
        sigma_x: Some(a.sigma_x),
        ..a.mech.request(&a.common)?
    })?;
    if a.common.json {
        print_snake(&r)?;
    } else {
        println!(
            "ε = {:.6} at δ = {} (order {}, preset {})",
            r.epsilon, r.delta, r.order, r.preset
        );
        if let Some(p) = r.epsilon_pld {
            println!("PLD ε = {p:.6}, RDP ε = {:.6}", r.epsilon_rdp);
        }
    }
    Ok(())
}
