//! `privmix calibrate`: the smallest noise meeting a target ε.

use super::account::MechArgs;
use super::{print_snake, Common};
use clap::Args;
use privmix::api::{self, CalibrateDetail, MechanismRequest};
use privmix::error::Result;

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct CalibrateArgs {
    #[command(flatten)]
    mech: MechArgs,
    /// Target ε.
    #[arg(long)]
    epsilon: f64,
    #[command(flatten)]
    pub common: Common,
}

pub(crate) fn run(a: CalibrateArgs) -> Result<()> {
    let r = api::calibrate(&MechanismRequest {
        epsilon: Some(a.epsilon),
        ..a.mech.request(&a.common)?
    })?;
    if a.common.json {
        return print_snake(&r);
    }
    println!(
        "σx = {:.9} gives ε = {:.6} ≤ {} at δ = {} (preset {})",
        r.sigma_x, r.epsilon, r.target_epsilon, r.delta, r.preset
    );
    if let Some(p) = r.epsilon_pld {
        println!(
            "calibrated by the PLD accountant: PLD ε = {p:.6}, RDP ε = {:.6}",
            r.epsilon_rdp
        );
    }
    if let CalibrateDetail::DpMix {
        sigma_y: Some(sy),
        shared_sigma,
        ..
    } = r.detail
    {
        let shared = if shared_sigma {
            " (shared with σx)"
        } else {
            ""
        };
        println!("σy = {sy:.9}{shared}");
    }
    Ok(())
}
