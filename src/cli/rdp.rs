//! `privmix rdp`: the raw RDP curve of the subsampled Gaussian.

use super::{print_snake, Common};
use clap::Args;
use privmix::api::{self, RdpRequest};
use privmix::error::Result;

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct RdpArgs {
    /// Sampling rate q (mix / pool).
    #[arg(long)]
    sampling_rate: f64,
    /// Noise multiplier z (noise std / L2 sensitivity).
    #[arg(long)]
    noise_multiplier: f64,
    #[command(flatten)]
    pub common: Common,
}

pub(crate) fn run(a: RdpArgs) -> Result<()> {
    let r = api::rdp(&RdpRequest {
        sampling_rate: a.sampling_rate,
        noise_multiplier: a.noise_multiplier,
        preset: a.common.preset(),
        orders: a.common.orders()?,
    })?;
    if a.common.json {
        print_snake(&r)?;
    } else {
        for (o, v) in r.orders.iter().zip(&r.rdp) {
            println!("α = {o:>4}  rdp = {v:.12e}");
        }
    }
    Ok(())
}
