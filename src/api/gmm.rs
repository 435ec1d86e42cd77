//! The DP Gaussian-mixture release: `gmmRelease` / `gmmSample` in JS, `privmix gmm` and
//! `privmix gmm sample` in the CLI.

use super::{check_seed, rng_for, rng_for_seed, DEFAULT_DELTA};
use crate::accountant::{check_delta, check_epsilon};
use crate::data::{read_csv_bytes, CsvOptions, CsvOut, MissingPolicy, Table, TypeInference};
use crate::error::{Error, Result};
use crate::mechanisms::gmm::{self, GmmOptions};
use crate::rng::ReleaseRng;
use serde::{Deserialize, Serialize};

/// How many rows to sample: a number, or `"released"` (as many as the released class counts
/// sum to, a DP number, or N where N is public: see `GmmRelease::default_samples`).
#[derive(Debug, Clone, PartialEq)]
pub enum SampleCount {
    /// A number of rows (checked by [`super::check_rows_of_number`]).
    Rows(f64),
    /// A name (only `"released"` is one).
    Named(String),
}

/// A number or a string; anything else is refused saying what `samples` takes (serde's
/// untagged enums say only that no variant matched).
impl<'de> Deserialize<'de> for SampleCount {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        use serde::de::Visitor;
        struct Count;
        impl Visitor<'_> for Count {
            type Value = SampleCount;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a whole number ≥ 1, or \"released\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<SampleCount, E> {
                Ok(SampleCount::Rows(v as f64))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<SampleCount, E> {
                Ok(SampleCount::Rows(v as f64))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<SampleCount, E> {
                Ok(SampleCount::Rows(v))
            }
            fn visit_str<E: serde::de::Error>(
                self,
                v: &str,
            ) -> std::result::Result<SampleCount, E> {
                Ok(SampleCount::Named(v.to_owned()))
            }
        }
        d.deserialize_any(Count)
    }
}

/// Rows to sample, checked ([`GmmParams::samples`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Samples {
    /// Exactly this many.
    Rows(usize),
    /// As many as the release's `default_samples` (the released counts' total).
    Released,
}

impl Samples {
    /// The checked form of a request's `samples`.
    pub fn of(c: &SampleCount) -> Result<Samples> {
        match c {
            SampleCount::Rows(v) => super::check_rows_of_number(*v).map(Samples::Rows),
            SampleCount::Named(s) if s == "released" => Ok(Samples::Released),
            SampleCount::Named(s) => Err(Error::param(
                "samples",
                s,
                "give a number of rows, or \"released\" for as many as the released class counts sum to",
            )),
        }
    }

    /// The number of rows for `release`.
    pub fn rows(self, release: &gmm::GmmRelease) -> usize {
        match self {
            Samples::Rows(t) => t,
            Samples::Released => release.default_samples,
        }
    }
}

/// Options of `gmmRelease` (the JS names of the CLI's `gmm` flags).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GmmRequest {
    /// Label column.
    pub label: String,
    /// Target ε.
    pub epsilon: f64,
    /// δ (default 1e-5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// `optimized` (default), `iid-gaussian`, `iid-laplace` or `colored-gaussian`.
    #[serde(default)]
    pub noise: Option<String>,
    /// `record` (default) or `label`.
    #[serde(default)]
    pub adjacency: Option<String>,
    /// Public bound B on each row's L2 norm.
    #[serde(default)]
    pub bound: Option<f64>,
    /// Project to K principal components first (on the default release a DP basis within the
    /// budget; otherwise computed from the data and declared unprotected).
    #[serde(default)]
    pub pca: Option<usize>,
    /// A public centre, one value per feature: the release is of x − center (B bounds
    /// ‖x − center‖) and the means are moved back (see `GmmOptions::center`).
    #[serde(default)]
    pub center: Option<Vec<f64>>,
    /// A public box for the sampled rows: each feature's lower bound (with `upper`; see
    /// `GmmOptions::support`).
    #[serde(default)]
    pub lower: Option<Vec<f64>>,
    /// Each feature's upper bound (with `lower`).
    #[serde(default)]
    pub upper: Option<Vec<f64>>,
    /// With the box, on the default release: DP feature marginals on this many equal bins of
    /// each feature's interval, in the same budget; sampled values are mapped onto them (see
    /// `GmmOptions::marginals`).
    #[serde(default)]
    pub marginals: Option<usize>,
    /// `gaussian` (default) or `wishart`.
    #[serde(default)]
    pub covariance_noise: Option<String>,
    /// Smoothing λ of the weight mapping (default 1e-3).
    #[serde(default)]
    pub lambda: Option<f64>,
    /// The class labels, when public (see `GmmOptions::classes`); without them the labels
    /// are read from the data and released under a DP threshold.
    #[serde(default)]
    pub classes: Option<Vec<String>>,
    /// Rows to sample from the released model (none by default): a number, or `"released"`
    /// for as many as the released class counts sum to (DP; the page's default).
    #[serde(default)]
    pub samples: Option<SampleCount>,
    /// Grid points of the marginal-density curves for the page (default 0: none).
    #[serde(default)]
    pub marginal_points: Option<usize>,
    /// Fixed seed (tests only).
    #[serde(default)]
    pub seed: Option<f64>,
}

/// The result of [`gmm_release`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GmmReleaseResult {
    /// The released model (the CLI's model JSON).
    pub model: gmm::GmmModel,
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The receipt.
    pub receipt: gmm::GmmReceipt,
    /// Sampled rows as CSV (when `samples` was given).
    pub csv: Option<String>,
    /// How many rows `csv` holds (null without `samples`).
    pub samples: Option<usize>,
    /// Per-feature, per-class marginal densities of the released model on a grid.
    pub marginals: Option<Vec<gmm::MarginalCurves>>,
    /// Computed from the data without protection, for the data owner's eyes only.
    pub private: GmmPrivate,
}

/// The unprotected part of a [`GmmReleaseResult`] (never part of a release).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GmmPrivate {
    /// Exact KL(released ‖ non-private fit); null when that fit has a singular class
    /// covariance (`klUnavailable` says why).
    pub kl: Option<f64>,
    /// Why `kl` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_unavailable: Option<String>,
    /// The marginal curves of the non-private fit.
    pub reference_marginals: Option<Vec<gmm::MarginalCurves>>,
    /// Each feature with cells that were missing or not numbers (they took the public
    /// centre), and how many; omitted when every cell was a number.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filled_cells: Vec<gmm::FilledCells>,
    /// Records without a label, or with one not in `classes` (they count in N and belong to
    /// no class); omitted when 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unlabelled: Option<usize>,
    /// Classes of the data the release left out (their noisy counts did not reach the
    /// labels' threshold); omitted when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes_left_out: Vec<String>,
}

/// Sampled rows as CSV: the model's feature columns, then the label column. The CLI's
/// `gmm --samples` and `gmm sample` write these bytes too.
pub fn gmm_samples_csv(
    model: &gmm::GmmModel,
    samples: usize,
    rng: &mut ReleaseRng,
) -> Result<Vec<u8>> {
    let err = |e: std::io::Error| Error::Data(format!("cannot write the samples: {e}"));
    let mut header = model.output_features();
    let d = header.len();
    header.push(if model.label.is_empty() {
        "label".into()
    } else {
        model.label.clone()
    });
    // The text is made as the rows are drawn, in a buffer reserved up front: a request the
    // memory cannot hold gets an error naming `samples` (1e9 rows was a wasm panic, "capacity
    // overflow"). A number takes about 20 characters; a longer one grows the buffer.
    let label_len = model.classes.iter().map(String::len).max().unwrap_or(0);
    let row_bytes = 20 * d + label_len + 2;
    let mut buf = Vec::new();
    let room = samples
        .checked_mul(row_bytes)
        .is_some_and(|len| buf.try_reserve_exact(len).is_ok());
    if !room {
        let gb = samples as f64 * row_bytes as f64 / 1e9;
        return Err(Error::param(
            "samples",
            samples,
            format!("{samples} rows of {d} numbers need about {gb:.1} GB of memory at once, more than is available here; ask for fewer rows"),
        ));
    }
    let mut w = CsvOut::new(buf);
    w.write_record(&header).map_err(err)?;
    let mut cells: Vec<String> = Vec::with_capacity(d + 1);
    gmm::sample_each(model, samples, rng, |c, r| {
        cells.clear();
        cells.extend(r.iter().map(|x| format!("{x}")));
        cells.push(model.classes[c].clone());
        w.write_record(&cells).map_err(err)
    })?;
    Ok(w.into_bytes())
}

/// How the GMM release reads its CSV: every record kept (a missing or unparsable cell is
/// read as missing, never a dropped row, which would change N) and no type taken
/// from the data (the features are numeric by the release's definition; see
/// [`gmm_data_exact`]).
pub fn gmm_csv_options(label: &str) -> CsvOptions {
    CsvOptions {
        label: Some(label.to_string()),
        missing: MissingPolicy::Keep,
        types: TypeInference::Deferred,
        ..CsvOptions::default()
    }
}

/// The GMM input of a table read from `csv` with [`gmm_csv_options`]: every column but the
/// label numeric, a missing or unparsable cell NaN (the release fills it with the public
/// centre), with the cells' exact f64 values (the table stores f32) so that `kl` refers to the
/// input as written. When the exact values cannot be read, the f32 values are used and the
/// reason is returned as a warning.
pub fn gmm_data_exact(mut table: Table, csv: &[u8]) -> Result<(gmm::GmmData, Option<String>)> {
    crate::data::decide::features_as_numeric(&mut table);
    let data = gmm::GmmData::from_table(&table)?;
    let delimiter = table.delimiter;
    drop(table);
    match data
        .exact_values_from_csv(csv, delimiter)
        .and_then(|v| data.clone().with_exact_values(v))
    {
        Ok(d) => Ok((d, None)),
        Err(e) => Ok((
            data,
            Some(format!("using the f32 values of the input ({e})")),
        )),
    }
}

const BOX_NEEDS_BOTH: &str =
    "a box for the sampled rows needs both lower and upper (one value per feature each)";

/// Checked GMM release parameters, built once from a [`GmmRequest`].
#[derive(Debug, Clone)]
pub struct GmmParams {
    /// Label column.
    pub label: String,
    /// The release options, defaults applied.
    pub options: GmmOptions,
    /// Rows to sample from the released model.
    pub samples: Option<Samples>,
    /// Grid points of the marginal curves (0: none).
    pub marginal_points: usize,
    /// Fixed seed (tests only).
    pub seed: Option<u64>,
}

impl TryFrom<&GmmRequest> for GmmParams {
    type Error = Error;

    fn try_from(r: &GmmRequest) -> Result<Self> {
        check_epsilon(r.epsilon)?;
        let delta = r.delta.unwrap_or(DEFAULT_DELTA);
        check_delta(delta)?;
        let d = GmmOptions::default();
        let options = GmmOptions {
            epsilon: r.epsilon,
            delta,
            noise: match &r.noise {
                Some(s) => s.parse()?,
                None => d.noise,
            },
            adjacency: match &r.adjacency {
                Some(s) => s.parse()?,
                None => d.adjacency,
            },
            bound: r.bound,
            lambda: r.lambda.unwrap_or(d.lambda),
            pca: r.pca,
            marginals: r.marginals,
            center: r.center.clone(),
            classes: r.classes.clone(),
            support: match (&r.lower, &r.upper) {
                (Some(lower), Some(upper)) => Some(gmm::Support {
                    lower: lower.clone(),
                    upper: upper.clone(),
                }),
                (None, None) => None,
                (Some(_), None) => return Err(Error::param("upper", "(missing)", BOX_NEEDS_BOTH)),
                (None, Some(_)) => return Err(Error::param("lower", "(missing)", BOX_NEEDS_BOTH)),
            },
            covariance_noise: match &r.covariance_noise {
                Some(s) => s.parse()?,
                None => d.covariance_noise,
            },
            ..d
        };
        Ok(GmmParams {
            label: r.label.clone(),
            options,
            samples: r.samples.as_ref().map(Samples::of).transpose()?,
            marginal_points: r.marginal_points.unwrap_or(0),
            seed: check_seed(r.seed)?,
        })
    }
}

/// `gmmRelease`: fits the per-class GMM of a CSV and releases it under (ε, δ)-DP.
pub fn gmm_release(csv: &[u8], r: &GmmRequest) -> Result<GmmReleaseResult> {
    let p = GmmParams::try_from(r)?;
    let table = read_csv_bytes(csv, &gmm_csv_options(&p.label))?;
    let (data, _) = gmm_data_exact(table, csv)?;
    let mut rng = rng_for_seed(p.seed)?;
    let release = crate::pipelines::gmm::release_gmm_data(&data, &p.options, &mut rng)?;
    let samples = p.samples.map(|s| s.rows(&release));
    let csv_out = match samples {
        Some(t) => Some(
            String::from_utf8(gmm_samples_csv(&release.model, t, &mut rng)?)
                .map_err(|_| Error::Internal("the samples are not UTF-8".into()))?,
        ),
        None => None,
    };
    let (marginals, reference_marginals) = match p.marginal_points {
        0 => (None, None),
        points => {
            let reference = match &release.model.projection {
                // Curves are drawn in the model's own coordinates.
                Some(_) => None,
                // The release's own reference fit (none when singular: `kl_unavailable`).
                None => release
                    .reference
                    .as_ref()
                    .map(|r| gmm::all_marginals(r, points))
                    .transpose()?,
            };
            (Some(gmm::all_marginals(&release.model, points)?), reference)
        }
    };
    Ok(GmmReleaseResult {
        model: release.model,
        epsilon: release.epsilon,
        delta: release.delta,
        receipt: release.receipt,
        csv: csv_out,
        samples,
        marginals,
        private: GmmPrivate {
            kl: release.kl,
            kl_unavailable: release.kl_unavailable,
            reference_marginals,
            filled_cells: release.filled_cells,
            unlabelled: (release.unlabelled > 0).then_some(release.unlabelled),
            classes_left_out: release.classes_left_out,
        },
    })
}

/// `gmmLabelThreshold`: the noisy count a class label read from the data must reach to be
/// released by the default GMM release at (ε, δ) (δ default 1e-5); from ε and δ only, so a
/// page can show it before any release. Labels listed with `classes` need none.
pub fn gmm_label_threshold(epsilon: f64, delta: Option<f64>) -> Result<u64> {
    check_epsilon(epsilon)?;
    let delta = delta.unwrap_or(DEFAULT_DELTA);
    check_delta(delta)?;
    let t = gmm::suffstats::labels_threshold(epsilon, delta)?;
    Ok(t.max(0) as u64)
}

/// `gmmSample`: rows sampled from a released model (post-processing).
pub fn gmm_sample(model_json: &str, samples: f64, seed: Option<f64>) -> Result<String> {
    let samples = super::check_rows_of_number(samples)?;
    let mut rng = rng_for(seed)?;
    let model: gmm::GmmModel = serde_json::from_str(model_json)
        .map_err(|e| Error::Data(format!("not a GMM model JSON: {e}")))?;
    model
        .validate()
        .map_err(|e| Error::Data(format!("the model: {e}")))?;
    String::from_utf8(gmm_samples_csv(&model, samples, &mut rng)?)
        .map_err(|_| Error::Internal("the samples are not UTF-8".into()))
}
