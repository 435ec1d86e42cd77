//! Generation, decoding and output: each mechanism's synthetic rows, made from the encoded
//! features with the calibrated noise, decoded into the input's columns (indicator columns
//! removed, missing cells written back) and handed to the caller's sinks.
use super::{soft_label_column, Classes, Encoded, Mechanism, Plan, SynthOptions};
use crate::error::Result;
use crate::mechanisms::cda::{self, CdaConfig, Pools};
use crate::mechanisms::dpmix::{self, DpMixConfig, LabelOutput, LabeledRows};
use crate::mechanisms::local::{self, RowRelease};
use crate::mechanisms::projection::{self, Projection};
use crate::preprocess::encode::{room_for_rows, write_number, ChunkedDecode, Decoding};
use crate::preprocess::missing::MissingCodec;
use crate::preprocess::normalize::ColumnMarginal;
use crate::preprocess::FeatureSpace;
use crate::receipt::{BaselineParameters, Parameters};
use crate::rng::ReleaseRng;

/// A sink for the header or for one output row.
pub type CellSink<'s> = &'s mut dyn FnMut(&[String]) -> Result<()>;
/// A sink for the progress fraction.
pub type ProgressSink<'s> = &'s mut dyn FnMut(f64) -> Result<()>;

/// Where a synthesis writes: `header` once with the output column names, `row` for each
/// synthetic row (cells in the input's column order), `progress` with the finished fraction.
/// An error from any of the three stops the run at that call and is returned (a caller
/// cancels by returning [`crate::error::Error::Abort`] from `progress`). The sinks are called
/// once per row, so dynamic dispatch costs nothing measurable and keeps the shipped wasm
/// small.
pub struct Sinks<'s> {
    /// The output column names (called once, before any row).
    pub header: CellSink<'s>,
    /// One synthetic row.
    pub row: CellSink<'s>,
    /// The finished fraction.
    pub progress: ProgressSink<'s>,
}

/// What the generation reads, all fixed before it starts (the accounting plan included).
pub(super) struct Generation<'a> {
    pub mechanism: &'a Mechanism,
    /// The options with `mix` resolved.
    pub opts: &'a SynthOptions,
    pub plan: &'a Plan,
    pub space: &'a FeatureSpace,
    pub missing_codec: &'a MissingCodec,
    pub cls: &'a Classes,
    /// The rows each class gets (DP-CDA, the GMM).
    pub per_class_counts: &'a [usize],
    /// Each class's count: the DP count under the standard adjacency, else the public one
    /// (the GMM's class means divide by it).
    pub class_counts: Vec<f64>,
    /// The scale restored after the noise (rows scaled to a common or public norm).
    pub rescale: Option<f64>,
    pub marginals: &'a [Option<ColumnMarginal>],
    /// Empirical-Bayes shrinkage toward the class means (DP-CDA without label noise).
    pub denoise: bool,
    /// The label's column in the input (DPMix's soft labels replace it).
    pub label_index: usize,
    /// Input rows, classes, encoded dimension, rows requested, T / K.
    pub n: usize,
    pub k: usize,
    pub d: usize,
    pub t: usize,
    pub per_class: usize,
}

/// `row` for cells in the encoded table's columns: writes them in the input's columns
/// (indicator columns removed, missing cells written back).
fn restoring<'a>(
    g: &Generation<'a>,
    row: CellSink<'a>,
) -> impl FnMut(&[String]) -> Result<()> + 'a {
    let codec = g.missing_codec;
    let mut restored: Vec<String> = Vec::with_capacity(codec.names().len() + g.k);
    move |cells: &[String]| row(codec.restored(cells, &mut restored))
}

/// Makes the synthetic rows of `g.mechanism` from `features` (consumed: the real rows are
/// freed as soon as they are not read any more) and writes the header and every row.
pub(super) fn generate_and_emit(
    g: &Generation<'_>,
    features: Encoded,
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
) -> Result<()> {
    match g.mechanism {
        Mechanism::Cda => emit_cda(g, features, rng, out),
        Mechanism::DpMix(o) => {
            let soft = o.labels == LabelOutput::Soft;
            emit_dpmix(g, o.class_wise, soft, features.dense()?, rng, out)
        }
        Mechanism::Local | Mechanism::Projection(_) => {
            emit_baseline(g, features.dense()?, rng, out)
        }
        Mechanism::Gmm(_) => super::gmm_synth::emit(g, features, rng, out),
    }
}

/// DP-CDA: the numeric features of every row kept and decoded at the end (quantile mapping
/// needs every row's rank), the categorical scores decoded a chunk of rows at a time as the
/// rows are made ([`crate::preprocess::encode::ChunkedDecode`]); on the image path (denoised
/// rows) every row kept and decoded at once.
fn emit_cda(
    g: &Generation<'_>,
    features: Encoded,
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
) -> Result<()> {
    let Sinks {
        header,
        row,
        mut progress,
    } = out;
    let (opts, plan, cls) = (g.opts, g.plan, g.cls);
    header(g.missing_codec.names())?;
    let cfg = CdaConfig {
        mix: opts.mix,
        sigma_x: plan.sigma_x,
        sigma_y: opts.sigma_y,
        per_class: g.per_class_counts.to_vec(),
        clip: opts.clip,
    };
    let rows_total: usize = g.per_class_counts.iter().sum();
    let mut labels: Vec<u32> = room_for_rows(rows_total, 1)?;
    let pools = Pools {
        features: features.rows(),
        d: g.d,
        classes: &cls.members,
    };
    let scale = g.rescale.unwrap_or(1.0);
    if g.denoise && opts.sigma_y.is_none() {
        // The image path: every row is shrunk toward its class's mean first, so the rows are
        // decoded all at once.
        let mut buf: Vec<f32> = room_for_rows(rows_total, g.d)?;
        cda::generate(
            &pools,
            &cfg,
            rng,
            |label, r| {
                buf.extend_from_slice(r);
                labels.push(label as u32);
                Ok(())
            },
            &mut progress,
        )?;
        // The real rows are not read again: free them before decoding.
        drop(features);
        return g.space.decode_batch(
            &mut buf,
            &Decoding {
                scale,
                marginals: g.marginals,
                denoise: Some((&labels[..], plan.sigma_x)),
                classes: Some(&labels[..]),
            },
            &|i| cls.labels[labels[i] as usize].clone(),
            &mut restoring(g, row),
        );
    }
    // Decoded as the rows are made (the same output as `decode_batch` of all of them, but for
    // the categorical columns' chunks beyond the first): the categorical scores are never all
    // held at once.
    let mut dec = g.space.chunked(rows_total, scale, g.marginals, None)?;
    cda::generate(
        &pools,
        &cfg,
        rng,
        |label, r| {
            labels.push(label as u32);
            dec.push(r)
        },
        &mut progress,
    )?;
    drop(features);
    finish_labelled(g, dec, &labels, row)
}

/// Decodes the rows left in `dec`, row i of class `labels[i]`, and writes them in the
/// input's columns.
pub(super) fn finish_labelled(
    g: &Generation<'_>,
    dec: ChunkedDecode<'_>,
    labels: &[u32],
    row: CellSink<'_>,
) -> Result<()> {
    let cls = g.cls;
    dec.finish(
        Some(labels),
        &|i| cls.labels[labels[i] as usize].clone(),
        &mut restoring(g, row),
    )
}

/// DPMix's output columns: the table's, with one probability column per class in place of
/// the label column when the labels are soft.
fn dpmix_columns(g: &Generation<'_>, soft: bool) -> Vec<String> {
    let codec = g.missing_codec;
    if !soft {
        return codec.names().to_vec();
    }
    let mut names = Vec::with_capacity(g.space.names.len() + g.k);
    for (j, name) in codec.names().iter().enumerate() {
        if j == g.label_index {
            names.extend(g.cls.labels.iter().map(|c| soft_label_column(name, c)));
        } else {
            names.push(name.clone());
        }
    }
    names
}

/// DPMix (label-mixing or class-wise): each row decoded as it is made; soft labels become
/// one probability column per class in place of the label column.
fn emit_dpmix(
    g: &Generation<'_>,
    class_wise: bool,
    soft: bool,
    features: &[f32],
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
) -> Result<()> {
    let Sinks {
        header,
        row,
        mut progress,
    } = out;
    let (opts, plan, cls, space, codec) = (g.opts, g.plan, g.cls, g.space, g.missing_codec);
    let k = g.k;
    let names = dpmix_columns(g, soft);
    header(&names)?;
    let mut cells = Vec::with_capacity(space.names.len() + k);
    let mut probs = vec![0f64; k];
    let mut out = Vec::with_capacity(names.len());
    let mut emit = |r: &[f32], y: &[f64], cells: &mut Vec<String>| -> Result<()> {
        if soft {
            probs.copy_from_slice(y);
            dpmix::project_to_simplex(&mut probs);
            space.decode_row(r, "", cells);
            codec.restore(cells, &mut out);
            let tail = out.split_off(g.label_index + 1);
            out.pop();
            for p in &probs {
                let mut s = String::new();
                write_number(&mut s, *p, false);
                out.push(s);
            }
            out.extend(tail);
        } else {
            space.decode_row(r, &cls.labels[dpmix::argmax(y)], cells);
            codec.restore(cells, &mut out);
        }
        row(&out)
    };
    if class_wise {
        let cfg = CdaConfig {
            mix: opts.mix,
            sigma_x: plan.sigma_x,
            sigma_y: None,
            per_class: vec![g.per_class; k],
            // Rows in the unit box [0, 1]^d.
            clip: cda::unit_box_radius(g.d),
        };
        let mut onehot = vec![0f64; k];
        cda::generate(
            &Pools {
                features: cda::Rows::Dense(features),
                d: g.d,
                classes: &cls.members,
            },
            &cfg,
            rng,
            |label, r| {
                onehot.iter_mut().for_each(|v| *v = 0.0);
                onehot[label] = 1.0;
                emit(r, &onehot, &mut cells)
            },
            &mut progress,
        )
    } else {
        let sigma_y = match &plan.parameters {
            Parameters::DpMix(p) => p.sigma_y.unwrap_or(plan.sigma_x),
            _ => plan.sigma_x,
        };
        let cfg = DpMixConfig {
            mix: opts.mix,
            sigma_x: plan.sigma_x,
            sigma_y,
            samples: g.t,
        };
        dpmix::generate(
            &LabeledRows {
                features,
                d: g.d,
                labels: &cls.codes,
                k,
            },
            &cfg,
            rng,
            |r, y| emit(r, y, &mut cells),
            &mut progress,
        )
    }
}

/// Local perturbation and random projection: T rows chosen, each perturbed and decoded with
/// its own label.
fn emit_baseline(
    g: &Generation<'_>,
    features: &[f32],
    rng: &mut ReleaseRng,
    out: Sinks<'_>,
) -> Result<()> {
    let Sinks {
        header,
        row,
        mut progress,
    } = out;
    let (opts, plan, cls) = (g.opts, g.plan, g.cls);
    header(g.missing_codec.names())?;
    let chosen = local::select_rows(g.n, g.t, rng)?;
    let mut cells = Vec::with_capacity(g.space.names.len() + g.k);
    let mut out_row = restoring(g, row);
    let mut sink = |i: usize, r: &[f32]| -> Result<()> {
        g.space
            .decode_row(r, &cls.labels[cls.codes[i] as usize], &mut cells);
        out_row(&cells)
    };
    match &plan.parameters {
        Parameters::Baseline(BaselineParameters {
            projection_dim: Some(kd),
            ..
        }) => {
            let proj = Projection::random(g.d, *kd, rng)?;
            projection::generate(
                features,
                &proj,
                &RowRelease {
                    rows: &chosen,
                    clip: opts.clip,
                    sigma: plan.sigma_x,
                },
                rng,
                &mut sink,
                &mut progress,
            )
        }
        _ => local::perturb(
            features,
            g.d,
            &RowRelease {
                rows: &chosen,
                clip: opts.clip,
                sigma: plan.sigma_x,
            },
            rng,
            &mut sink,
            &mut progress,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::room_for_rows;

    #[test]
    fn rows_that_cannot_fit_are_a_samples_error_not_an_abort() {
        let v: Vec<f32> = room_for_rows(1000, 7).unwrap();
        assert!(v.is_empty() && v.capacity() >= 7000);
        // 2^40 rows of 64 values (256 TiB), and a count whose size overflows usize.
        for (rows, width) in [(1usize << 40, 64usize), (usize::MAX / 2, 4)] {
            let e = room_for_rows::<f32>(rows, width).unwrap_err();
            assert_eq!(e.param_id().map(|p| p.as_str()), Some("samples"), "{e}");
            assert!(e.to_string().contains("ask for fewer rows"), "{e}");
        }
    }
}
