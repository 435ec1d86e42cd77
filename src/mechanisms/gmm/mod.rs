//! DP release of class-conditional Gaussian mixture models (Liu, Scaglione and Peisert,
//! "Differentially Private Distribution Release of Gaussian Mixture Models via KL-Divergence
//! Minimization"), and synthetic rows sampled from a released model.
//!
#![doc = include_str!("PROOF.md")]
// Numeric kernels index several arrays in lock-step, and `!(x <= y)` is used on purpose so
// that NaN fails the check.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

pub mod baselines;
pub mod blockdraw;
pub mod design;
pub mod exactnoise;
pub mod fit;
pub mod kl;
pub mod linalg;
pub mod marginals;
pub mod sdp;
pub mod subspace;
pub mod suffstats;
pub mod weights;
pub mod wishart;

use crate::data::{Column, Table};
use crate::enums::named_enum;
use crate::error::{Error, Result};
use crate::math::DetFloat;
use crate::receipt::{Guarantee, Randomness};
use baselines::GridNoise;
use fit::{fit_classes, ClassFit};
use linalg::{cholesky, sym_eigen, Mat};
use rand::Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

/// The warning every label-level receipt carries.
pub const LOCAL_SENSITIVITY_WARNING: &str = "local sensitivity: not a worst-case DP guarantee";

/// Relative duality gap the SDP must certify.
pub const SDP_TOLERANCE: f64 = 1e-6;

named_enum! {
    /// Which noise to add.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Noise: "noise" {
        /// Algorithm 1: designed colored Gaussian means, Wishart covariances, randomized
        /// weights.
        Optimized = "optimized" ("default"),
        /// i.i.d. Gaussian on all parameters, projected.
        IidGaussian = "iid-gaussian",
        /// i.i.d. Laplace on all parameters, projected.
        IidLaplace = "iid-laplace",
        /// MSE-optimal colored Gaussian on the means, i.i.d. Gaussian elsewhere.
        ColoredGaussian = "colored-gaussian",
    }
}

impl Noise {
    /// CLI spelling.
    pub fn name(self) -> &'static str {
        self.as_str()
    }
}

named_enum! {
    /// The neighbouring relation.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Adjacency: "adjacency" {
        /// Replace one record (features and label), ‖x‖ ≤ B (product default).
        Record = "record" ("default"),
        /// Flip one label (the paper's; local sensitivity).
        Label = "label",
    }
}

/// Options of a release.
#[derive(Debug, Clone)]
pub struct GmmOptions {
    /// Target ε.
    pub epsilon: f64,
    /// δ ∈ (0, 1).
    pub delta: f64,
    /// Noise (default optimized).
    pub noise: Noise,
    /// Adjacency (default record).
    pub adjacency: Adjacency,
    /// Public bound B on ‖x‖₂ in input units; None: the data's largest norm (unprotected
    /// under `record`).
    pub bound: Option<f64>,
    /// Smoothing λ of the weight mapping (default 1e−3).
    pub lambda: f64,
    /// Stopping threshold of Algorithm 1 (default 1e−3).
    pub tolerance: f64,
    /// Project to this many principal components first: on the default release (record
    /// adjacency, `optimized`, Gaussian covariance noise) the basis is a DP release in the
    /// same budget ([`subspace`]); on the other paths it is computed from the data and
    /// declared unprotected. None: no projection.
    pub pca: Option<usize>,
    /// Covariance noise of `optimized` (default: Gaussian, which has a valid guarantee; the
    /// paper's Wishart is available and declared unprotected, see [`CovarianceNoise`]).
    pub covariance_noise: CovarianceNoise,
    /// A public centre c (one entry per feature), chosen without looking at the data: the
    /// release is made of the rows x − c (so B bounds ‖x − c‖) and the means are moved back by
    /// c afterwards (post-processing). None: no shift.
    pub center: Option<Vec<f64>>,
    /// A public box for the sampled rows (one interval per input feature), stored in the model:
    /// rows are drawn from the model truncated to it (post-processing). None: unbounded rows.
    pub support: Option<Support>,
    /// With `support`, on the default release: release each feature's histogram on this many
    /// equal bins of its interval in the same budget ([`marginals`]) and map every sampled
    /// value onto it (instead of drawing within the box). None: no marginals.
    pub marginals: Option<usize>,
    /// The class labels, when they are public (known without looking at the data): the model
    /// has one component per listed class, in this order, and a record with another label
    /// counts in N and belongs to no class. None: the labels are read from the data; the
    /// default release (record adjacency, `optimized`, Gaussian covariances) then releases a
    /// label only when its noisy count clears a DP threshold
    /// ([`weights::label_threshold`]), and the other paths declare the set unprotected.
    pub classes: Option<Vec<String>>,
}

named_enum! {
    /// Covariance noise of the `optimized` mechanism.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum CovarianceNoise: "covariance-noise" {
        /// Σ_k + Wishart_d(I/γ_k, d + 1) (the paper's; the receipt declares its support gap).
        Wishart = "wishart" ("the paper's; not a DP guarantee"),
        /// Σ_k + symmetric Gaussian noise, eigenvalues clipped at σ_k (a valid (ε, δ)
        /// guarantee).
        Gaussian = "gaussian" ("default"),
    }
}

impl Default for GmmOptions {
    fn default() -> Self {
        GmmOptions {
            epsilon: 1.0,
            delta: 1e-5,
            noise: Noise::Optimized,
            adjacency: Adjacency::Record,
            bound: None,
            lambda: 1e-3,
            tolerance: 1e-3,
            pca: None,
            covariance_noise: CovarianceNoise::Gaussian,
            center: None,
            support: None,
            marginals: None,
            classes: None,
        }
    }
}

/// Labelled numeric data in f64.
#[derive(Debug, Clone)]
pub struct GmmData {
    /// Feature column names.
    pub features: Vec<String>,
    /// Label column name.
    pub label: String,
    /// Class names (the label's levels).
    pub classes: Vec<String>,
    /// Rows (length d each).
    pub rows: Vec<Vec<f64>>,
    /// Class index per row.
    pub labels: Vec<usize>,
    /// Rows the CSV reader dropped before the table was built (0 under the keep policy the
    /// api reads with).
    pub rows_dropped: usize,
    /// Records without a label: they count in N and belong to no class (see
    /// [`GmmData::records`]).
    pub unlabelled: usize,
}

/// A public class list (see [`GmmOptions::classes`]) is usable: not empty, no empty or
/// missing label, no label twice (a `classes` error otherwise).
pub fn check_classes(classes: &[String]) -> Result<()> {
    if classes.is_empty() {
        return Err(Error::param(
            "classes",
            "[]",
            "list at least one class label, or leave classes out to read them from the data",
        ));
    }
    for (i, c) in classes.iter().enumerate() {
        if c.is_empty() || c == crate::data::MISSING_LEVEL {
            return Err(Error::param(
                "classes",
                format!("{c:?}"),
                "a class label must be a non-empty label, not the missing value",
            ));
        }
        if classes[..i].contains(c) {
            return Err(Error::param(
                "classes",
                format!("{c:?}"),
                "this label is listed twice; list each class once",
            ));
        }
    }
    Ok(())
}

impl GmmData {
    /// N: the records read, those without a label included. Public where the adjacency only
    /// replaces a record or flips a label (the paper's design and the baselines, whose
    /// released counts are compositions of it); the default release also covers an added or
    /// removed record and reads N only through its noisy counts.
    pub fn records(&self) -> usize {
        self.rows.len() + self.unlabelled
    }

    /// The data with the public class list `classes` (see [`GmmOptions::classes`]): rows
    /// whose label is not listed become records without a label (they stay in N); a listed
    /// class the data lack has no rows. A list that is empty, repeats a label or holds an
    /// empty label is a `classes` error.
    pub fn with_classes(&self, classes: &[String]) -> Result<GmmData> {
        check_classes(classes)?;
        let index: Vec<Option<usize>> = self
            .classes
            .iter()
            .map(|c| classes.iter().position(|x| x == c))
            .collect();
        let mut out = GmmData {
            features: self.features.clone(),
            label: self.label.clone(),
            classes: classes.to_vec(),
            rows: Vec::with_capacity(self.rows.len()),
            labels: Vec::with_capacity(self.labels.len()),
            rows_dropped: self.rows_dropped,
            unlabelled: self.unlabelled,
        };
        for (row, &y) in self.rows.iter().zip(&self.labels) {
            match index[y] {
                Some(k) => {
                    out.rows.push(row.clone());
                    out.labels.push(k);
                }
                None => out.unlabelled += 1,
            }
        }
        Ok(out)
    }

    /// The same records with `rows` in place of the features: one row per record, in the
    /// coordinates of `k` principal components, features named pc1 … pck.
    pub fn with_component_rows(&self, k: usize, rows: Vec<Vec<f64>>) -> GmmData {
        GmmData {
            features: (1..=k).map(|j| format!("pc{j}")).collect(),
            label: self.label.clone(),
            classes: self.classes.clone(),
            rows,
            labels: self.labels.clone(),
            rows_dropped: self.rows_dropped,
            unlabelled: self.unlabelled,
        }
    }

    /// From a [`Table`] whose label column is set; every other column must be numeric.
    pub fn from_table(table: &Table) -> Result<GmmData> {
        let li = table.label_index.ok_or_else(|| {
            Error::Data("no label column was chosen; give the label column (label)".into())
        })?;
        let (codes, classes) = match &table.columns[li] {
            Column::Categorical { codes, levels } => (codes, levels.clone()),
            Column::Numeric { .. } => {
                return Err(Error::Data(
                    "internal: the label column must be categorical".into(),
                ))
            }
        };
        let mut features = Vec::new();
        let mut cols: Vec<&Vec<f32>> = Vec::new();
        for (i, c) in table.columns.iter().enumerate() {
            if i == li {
                continue;
            }
            match c {
                Column::Numeric { values, .. } => {
                    features.push(table.names[i].clone());
                    cols.push(values);
                }
                Column::Categorical { .. } => {
                    return Err(Error::Data(format!(
                    "column '{}' is categorical, but a Gaussian mixture needs numeric features: \
                         drop the column, or declare it numeric in a schema if it holds numbers",
                    table.names[i]
                )))
                }
            }
        }
        // A record without a label (read as the missing level) belongs to no class: its
        // features are not read, but it counts in N (in the cell of the records without a
        // class), so replacing it by a labelled record is one class gaining a record, which
        // the release's adjacency covers. How many there were is for the owner only.
        let mut classes = classes;
        let missing = classes.iter().position(|c| c == crate::data::MISSING_LEVEL);
        if let Some(m) = missing {
            classes.remove(m);
        }
        let mut rows = Vec::with_capacity(table.n_rows);
        let mut labels = Vec::with_capacity(table.n_rows);
        for (r, &c) in codes.iter().enumerate() {
            let c = c as usize;
            match missing {
                Some(m) if c == m => continue,
                Some(m) if c > m => labels.push(c - 1),
                _ => labels.push(c),
            }
            rows.push(cols.iter().map(|col| f64::from(col[r])).collect());
        }
        if rows.is_empty() && table.n_rows > 0 {
            return Err(Error::Data(format!(
                "label column '{}' is missing in every record ({} read): the Gaussian mixture \
                 has one component per class and learns it from that class's records, so it \
                 needs records with a label; fill in the labels, or choose the column that holds them",
                table.names[li], table.n_rows
            )));
        }
        if features.is_empty() {
            return Err(Error::Data(format!(
                "there are no feature columns besides the label '{}': a Gaussian mixture needs \
                 at least one numeric column to model",
                table.names[li]
            )));
        }
        Ok(GmmData {
            features,
            label: table.names[li].clone(),
            classes,
            rows_dropped: table.rows_dropped,
            unlabelled: table.n_rows - rows.len(),
            rows,
            labels,
        })
    }

    /// Replaces the rows' values by exact f64 parses of the same cells (the [`Table`] stores
    /// f32): `cells[r][j]` is the text of feature j in kept row r. Used by the CLI so that the
    /// reported KL refers to the input exactly as written.
    pub fn with_exact_values(mut self, cells: Vec<Vec<f64>>) -> Result<GmmData> {
        if cells.len() != self.rows.len() || cells.iter().any(|r| r.len() != self.features.len()) {
            return Err(Error::Data(
                "internal: exact values do not match the table".into(),
            ));
        }
        for (a, b) in cells.iter().zip(&self.rows) {
            for (x, y) in a.iter().zip(b) {
                if x.is_nan() && y.is_nan() {
                    continue;
                }
                if !x.is_finite() || (*x as f32) != (*y as f32) {
                    return Err(Error::Data(
                        "internal: exact values disagree with the table".into(),
                    ));
                }
            }
        }
        self.rows = cells;
        Ok(self)
    }

    /// Exact f64 values of the feature cells of the CSV `bytes` (plain or gzip) that
    /// [`GmmData::from_table`] read as f32, in the same row order: every record with a label is
    /// a row, and a missing or unparsable cell is NaN, as the reader keeps them. Use with
    /// [`GmmData::with_exact_values`], which checks that every value agrees with the table.
    pub fn exact_values_from_csv(&self, bytes: &[u8], delimiter: u8) -> Result<Vec<Vec<f64>>> {
        use std::io::Read;
        let owned;
        let mut b = bytes;
        if b.starts_with(&[0x1f, 0x8b]) {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(b)
                .read_to_end(&mut out)
                .map_err(|e| Error::Data(format!("gzip: {e}")))?;
            owned = out;
            b = &owned;
        }
        if b.starts_with(b"\xEF\xBB\xBF") {
            b = &b[3..];
        }
        let mut rdr = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(true)
            .flexible(true)
            .from_reader(b);
        let header: Vec<String> = rdr
            .headers()
            .map_err(|e| Error::Data(format!("csv: {e}")))?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let idx: Vec<usize> = self
            .features
            .iter()
            .map(|f| {
                header
                    .iter()
                    .position(|h| h == f)
                    .ok_or_else(|| Error::Data(format!("csv: no column '{f}'")))
            })
            .collect::<Result<_>>()?;
        let label = header.iter().position(|h| *h == self.label);
        let mut rows = Vec::with_capacity(self.rows.len());
        for rec in rdr.records() {
            let rec = rec.map_err(|e| Error::Data(format!("csv: {e}")))?;
            // Every record with a label is a row, as in `from_table`; a missing, unparsable or
            // out-of-f32 cell is NaN, as in the table.
            if label.is_some_and(|li| crate::data::is_missing(rec.get(li).unwrap_or("").trim())) {
                continue;
            }
            let row: Vec<f64> = idx
                .iter()
                .map(|&i| {
                    let v = rec.get(i).unwrap_or("").trim();
                    if crate::data::is_missing(v) {
                        return f64::NAN;
                    }
                    crate::data::fastnum::parse_number(v, delimiter != b',')
                        .ok()
                        .filter(|x| x.is_finite() && (*x as f32).is_finite())
                        .unwrap_or(f64::NAN)
                })
                .collect();
            rows.push(row);
        }
        Ok(rows)
    }

    /// The rows with every missing (NaN) cell set to the public centre: `center[j]` when a
    /// centre of the right length is given, else 0. A fixed, data-independent map of each
    /// record, so replace-one neighbours stay replace-one neighbours and N is unchanged; a
    /// missing cell then adds nothing along its axis once the rows are centred. `None` when
    /// no cell is missing.
    /// The number of missing (NaN) cells in each feature column, in feature order.
    pub fn missing_counts(&self) -> Vec<usize> {
        let mut n = vec![0usize; self.dim()];
        for r in &self.rows {
            for (c, x) in n.iter_mut().zip(r) {
                *c += usize::from(x.is_nan());
            }
        }
        n
    }

    pub fn with_missing_filled(&self, center: Option<&[f64]>) -> Option<GmmData> {
        if !self.rows.iter().flatten().any(|x| x.is_nan()) {
            return None;
        }
        let center = center.filter(|c| c.len() == self.dim());
        let mut out = self.clone();
        for r in &mut out.rows {
            for (j, x) in r.iter_mut().enumerate() {
                if x.is_nan() {
                    *x = center.map_or(0.0, |c| c[j]);
                }
            }
        }
        Some(out)
    }

    /// Number of features d.
    pub fn dim(&self) -> usize {
        self.features.len()
    }
}

/// A (released or reference) labelled GMM, in input units. The JSON form is
/// `{"classes":[..],"weights":[..],"means":[[..]],"covariances":[[[..]]],"features":[..],"label":".."}`;
/// `weights[k]`, `means[k]`, `covariances[k]` belong to `classes[k]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GmmModel {
    /// Class names.
    pub classes: Vec<String>,
    /// Mixture weights (positive, sum 1).
    pub weights: Vec<f64>,
    /// Component means.
    pub means: Vec<Vec<f64>>,
    /// Component covariances (symmetric positive definite).
    pub covariances: Vec<Vec<Vec<f64>>>,
    /// Feature names (columns of sampled rows).
    #[serde(default)]
    pub features: Vec<String>,
    /// Label column name of sampled rows.
    #[serde(default)]
    pub label: String,
    /// With `--pca`: the means and covariances are in principal-component coordinates
    /// z = components·(x − center), and sampled rows are mapped back to x = center + componentsᵀ z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
    /// A public box the sampled rows keep to (given with the release, e.g. each column's known
    /// range): each row is drawn from its class's Gaussian conditioned on the box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support: Option<Support>,
    /// DP feature marginals (`marginals`): each sampled value is mapped onto its feature's
    /// released histogram, which replaces drawing within the box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marginals: Option<marginals::FeatureMarginals>,
}

/// A public box, one interval per feature of the sampled rows (input units): the rows are
/// drawn from the model truncated to it (post-processing of the release: no privacy cost).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Support {
    /// Lower bound of each feature.
    pub lower: Vec<f64>,
    /// Upper bound of each feature (each above its lower bound).
    pub upper: Vec<f64>,
}

impl Support {
    /// Checks that the box has one finite interval `lower < upper` per feature of `features`.
    /// Errors name `lower` or `upper` and the feature.
    pub fn check(&self, features: &[String]) -> Result<()> {
        let d = features.len();
        for (key, v) in [("lower", &self.lower), ("upper", &self.upper)] {
            if v.len() != d {
                return Err(Error::param(
                    key,
                    format!("{} values", v.len()),
                    format!(
                        "give one value per feature column ({d}: {})",
                        features.join(", ")
                    ),
                ));
            }
            if let Some(j) = v.iter().position(|x| !x.is_finite()) {
                return Err(Error::param(
                    key,
                    v[j],
                    format!("the bound of {} must be a finite number", features[j]),
                ));
            }
        }
        if let Some(j) = (0..d).position(|j| self.lower[j] >= self.upper[j]) {
            return Err(Error::param(
                "upper",
                self.upper[j],
                format!(
                    "the upper bound of {} must be above its lower bound {}",
                    features[j], self.lower[j]
                ),
            ));
        }
        Ok(())
    }

    fn contains(&self, row: &[f64]) -> bool {
        row.iter()
            .zip(self.lower.iter().zip(&self.upper))
            .all(|(x, (lo, hi))| lo <= x && x <= hi)
    }
}

/// Draws per row before [`sample_each`] gives up on a box its class's component (almost) never
/// reaches. A component with a share p of its mass in the box fails a row with probability
/// (1 − p)^10,000: e^−10 ≈ 4.5e−5 at p = 0.1 %, below 1e−40 at p = 1 %.
pub const SUPPORT_MAX_DRAWS: usize = 10_000;

/// A PCA projection: a DP basis with a zero centre on the default release ([`subspace`]),
/// else computed from the non-private data (declared unprotected).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// Mean of the input rows (zeros for the DP basis, whose second moment is uncentred).
    pub center: Vec<f64>,
    /// K orthonormal rows of length d (leading eigenvectors of the pooled covariance, or of
    /// the released second moment).
    pub components: Vec<Vec<f64>>,
    /// The input's feature names (columns of sampled rows).
    pub features: Vec<String>,
}

impl GmmModel {
    /// Checks shapes, weights (positive, finite, summing to 1 within 1e−9) and covariances
    /// (finite, symmetric, positive definite). Errors name the class.
    pub fn validate(&self) -> Result<()> {
        let k = self.classes.len();
        if k == 0 {
            return Err(Error::Data("model: no classes".into()));
        }
        if self.weights.len() != k || self.means.len() != k || self.covariances.len() != k {
            return Err(Error::Data(format!(
                "model: {k} classes but {} weights, {} means and {} covariances",
                self.weights.len(),
                self.means.len(),
                self.covariances.len()
            )));
        }
        let d = self.means[0].len();
        if d == 0 {
            return Err(Error::Data("model: means have no coordinates".into()));
        }
        if !self.features.is_empty() && self.features.len() != d {
            return Err(Error::Data(format!(
                "model: {} feature names for {d}-dimensional means",
                self.features.len()
            )));
        }
        let sum: f64 = self.weights.iter().sum();
        if self.weights.iter().any(|w| !(*w > 0.0 && w.is_finite())) || (sum - 1.0).abs() > 1e-9 {
            return Err(Error::Data(format!(
                "model: weights must be positive and sum to 1 (sum = {sum})"
            )));
        }
        for c in 0..k {
            let name = &self.classes[c];
            if self.means[c].len() != d || self.means[c].iter().any(|x| !x.is_finite()) {
                return Err(Error::Data(format!(
                    "model: class '{name}': the mean must have {d} finite coordinates"
                )));
            }
            let cov = &self.covariances[c];
            if cov.len() != d || cov.iter().any(|r| r.len() != d) {
                return Err(Error::Data(format!(
                    "model: class '{name}': the covariance must be {d}×{d}"
                )));
            }
            let m = Mat::from_rows(cov);
            if !m.is_symmetric() || cholesky(&m).is_none() {
                return Err(Error::Data(format!(
                    "model: class '{name}': the covariance must be finite, symmetric and positive definite"
                )));
            }
        }
        if let Some(p) = &self.projection {
            let dd = p.center.len();
            if p.components.len() != d
                || p.components.iter().any(|r| r.len() != dd)
                || p.features.len() != dd
                || p.center
                    .iter()
                    .chain(p.components.iter().flatten())
                    .any(|x| !x.is_finite())
            {
                return Err(Error::Data(format!(
                    "model: the projection must have {d} finite components of the center's length, and one feature name per input column"
                )));
            }
        }
        if let Some(s) = &self.support {
            s.check(&self.output_features())
                .map_err(|e| Error::Data(format!("model: support: {e}")))?;
        }
        if let Some(m) = &self.marginals {
            m.check(self.output_features().len())?;
        }
        Ok(())
    }

    /// Column names of sampled rows (input features when the model has a projection).
    pub fn output_features(&self) -> Vec<String> {
        let names = match &self.projection {
            Some(p) => p.features.clone(),
            None => self.features.clone(),
        };
        let d = match &self.projection {
            Some(p) => p.center.len(),
            None => self.means.first().map_or(0, |m| m.len()),
        };
        if names.len() == d {
            names
        } else {
            (0..d).map(|j| format!("x{j}")).collect()
        }
    }

    fn cov_mats(&self) -> Vec<Mat> {
        self.covariances.iter().map(|c| Mat::from_rows(c)).collect()
    }
}

/// KL(released ‖ reference) of two labelled GMMs with the same classes, from their numbers.
pub fn model_kl(released: &GmmModel, reference: &GmmModel) -> f64 {
    kl::kl_gmm(
        &released.weights,
        &released.means,
        &released.cov_mats(),
        &reference.weights,
        &reference.means,
        &reference.cov_mats(),
    )
}

/// The non-private eq. (2) fit of the data as given (unbiased covariances). For the data
/// owner's own use (KL, plots): NOT private, never part of a release.
pub fn reference_model(data: &GmmData) -> Result<GmmModel> {
    let fits = fit_classes(&data.rows, &data.labels, &data.classes, data.dim())?;
    Ok(model_of_fits(data, &fits))
}

/// The labelled GMM of per-class fits of `data`.
pub(crate) fn model_of_fits(data: &GmmData, fits: &[ClassFit]) -> GmmModel {
    let n = data.rows.len() as f64;
    GmmModel {
        classes: data.classes.clone(),
        weights: fits.iter().map(|f| f.count as f64 / n).collect(),
        means: fits.iter().map(|f| f.mean.clone()).collect(),
        covariances: fits.iter().map(|f| f.cov.to_rows()).collect(),
        features: data.features.clone(),
        label: data.label.clone(),
        projection: None,
        support: None,
        marginals: None,
    }
}

/// Checks `k` principal components of `d` input features: 1 ≤ k ≤ d ≤
/// [`MAX_PCA_INPUT_DIM`]. Errors name `pca`.
pub fn check_pca_dims(k: usize, d: usize) -> Result<()> {
    if k == 0 || k > d {
        return Err(Error::param(
            "pca",
            k,
            format!("the number of components must be between 1 and the number of features ({d})"),
        ));
    }
    if d > MAX_PCA_INPUT_DIM {
        return Err(Error::param(
            "pca",
            k,
            format!("PCA accepts at most {MAX_PCA_INPUT_DIM} input features (got {d})"),
        ));
    }
    Ok(())
}

/// Largest input dimension accepted with `pca` (the eigen-decomposition is O(d³)).
pub const MAX_PCA_INPUT_DIM: usize = 1024;

/// Projects `data` onto its `k` leading principal components (pooled covariance of all
/// rows, eigen-decomposed by Jacobi). The basis is a function of the non-private data.
pub fn pca_project(data: &GmmData, k: usize) -> Result<(GmmData, Projection)> {
    let d = data.dim();
    check_pca_dims(k, d)?;
    let n = data.rows.len();
    if n < 2 {
        return Err(Error::Data("PCA needs at least 2 rows".into()));
    }
    let mut center = vec![0.0; d];
    for r in &data.rows {
        for j in 0..d {
            center[j] += r[j] / n as f64;
        }
    }
    let mut cov = Mat::zeros(d);
    for r in &data.rows {
        for i in 0..d {
            let di = r[i] - center[i];
            if di == 0.0 {
                continue;
            }
            for j in 0..=i {
                cov.a[i * d + j] += di * (r[j] - center[j]);
            }
        }
    }
    for i in 0..d {
        for j in 0..=i {
            let v = cov.get(i, j) / (n - 1) as f64;
            cov.set(i, j, v);
            cov.set(j, i, v);
        }
    }
    let (lam, v) = sym_eigen(&cov);
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| {
        lam[b]
            .partial_cmp(&lam[a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let components: Vec<Vec<f64>> = order[..k]
        .iter()
        .map(|&c| (0..d).map(|i| v.get(i, c)).collect())
        .collect();
    let rows = data
        .rows
        .iter()
        .map(|r| {
            components
                .iter()
                .map(|comp| {
                    comp.iter()
                        .zip(r)
                        .zip(&center)
                        .map(|((a, x), m)| a * (x - m))
                        .sum()
                })
                .collect()
        })
        .collect();
    Ok((
        data.with_component_rows(k, rows),
        Projection {
            center,
            components,
            features: data.features.clone(),
        },
    ))
}

/// How a group of released numbers is protected.
#[derive(Debug, Clone, Serialize)]
pub struct ProtectedItem {
    /// Which numbers.
    pub what: String,
    /// The mechanism.
    pub how: String,
    /// Its ε (per class where it says so).
    pub epsilon: f64,
    /// Its δ.
    pub delta: f64,
}

/// The budget split.
#[derive(Debug, Clone, Serialize)]
pub struct GmmBudget {
    /// ε of the weights.
    pub epsilon_weights: f64,
    /// Per class (in `classes` order): ε of the mean.
    pub epsilon_means: Vec<f64>,
    /// Per class: ε accounted for the covariance.
    pub epsilon_covariances: Vec<f64>,
    /// δ of the weights, means and covariances.
    pub delta_weights: f64,
    /// δ of the means (total over the two classes a neighbour can change).
    pub delta_means: f64,
    /// δ of the covariances.
    pub delta_covariances: f64,
    /// How they compose.
    pub composition: String,
}

/// SDP certificate of one class.
#[derive(Debug, Clone, Serialize)]
pub struct SdpCertificate {
    /// Class.
    pub class: String,
    /// Certified relative duality gap.
    pub relative_gap: f64,
    /// Feasibility inflation applied.
    pub inflation: f64,
    /// max v ᵀX⁻¹v after inflation (≤ 1).
    pub max_constraint: f64,
    /// Iterations.
    pub iterations: usize,
}

/// Release parameters.
#[derive(Debug, Clone, Serialize)]
pub struct GmmParameters {
    /// Noise.
    pub noise: Noise,
    /// Adjacency.
    pub adjacency: Adjacency,
    /// Target ε.
    pub target_epsilon: f64,
    /// Bound B on ‖x‖₂ (input units).
    pub bound: f64,
    /// "given" or "data (largest row norm)".
    pub bound_source: String,
    /// Clipping statement.
    pub clipping: String,
    /// Smoothing λ.
    pub lambda: f64,
    /// Algorithm 1 stopping threshold.
    pub tolerance: f64,
    /// Algorithm 1 iterations (optimized only).
    pub design_iterations: usize,
    /// SDP certificates (label adjacency / colored-gaussian).
    pub sdp: Vec<SdpCertificate>,
    /// Wishart degrees of freedom (d + 1).
    pub wishart_dof: usize,
    /// Which branch of the weight mapping was drawn ("noisy counts" or "uniform (λ)").
    pub weights_branch: String,
    /// Principal components kept (`--pca`), if any.
    pub pca: Option<usize>,
    /// Covariance noise of `optimized`.
    pub covariance_noise: CovarianceNoise,
    /// The grids and scales of the exact noise, one entry per released group (per class
    /// where the scale depends on the class).
    pub noise_grids: Vec<NoiseGrid>,
}

/// One exactly sampled noise: the released numbers are `grid`·(integer).
#[derive(Debug, Clone, Serialize)]
pub struct NoiseGrid {
    /// Which released numbers.
    pub what: String,
    /// "discrete Gaussian" or "discrete Laplace".
    pub noise: &'static str,
    /// The grid (a power of two; 1 for counts), in the released statistic's units (unit ball).
    pub grid: f64,
    /// The noise's standard deviation (Gaussian) or scale b (Laplace), same units.
    pub scale: f64,
}

impl NoiseGrid {
    pub(crate) fn of(what: impl Into<String>, n: &GridNoise) -> NoiseGrid {
        NoiseGrid {
            what: what.into(),
            noise: n.kind(),
            grid: n.grid(),
            scale: match n {
                GridNoise::Gaussian(g) => g.sigma_units() * g.grid(),
                GridNoise::Laplace(l) => l.scale_units() * l.grid(),
            },
        }
    }

    pub(crate) fn counts(eps0: f64) -> Result<NoiseGrid> {
        Ok(NoiseGrid {
            what: "class counts".into(),
            noise: "discrete Laplace",
            grid: 1.0,
            scale: weights::count_noise(eps0)?.scale(),
        })
    }
}

/// Facts about the input.
#[derive(Debug, Clone, Serialize)]
pub struct GmmDataReport {
    /// N, where it is public: every record read, those without a label included (they
    /// belong to no class). Omitted by the default release, whose adjacency also adds or
    /// removes a record, so N is private there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows_used: Option<usize>,
    /// Rows the CSV reader dropped (0 under the api's keep policy; declared unprotected
    /// otherwise).
    pub rows_dropped: usize,
    /// Feature columns.
    pub features: Vec<String>,
    /// Label column.
    pub label: String,
    /// Classes in model order.
    pub classes: Vec<String>,
}

/// The GMM privacy receipt.
#[derive(Debug, Clone, Serialize)]
pub struct GmmReceipt {
    /// ε of the release.
    pub epsilon: f64,
    /// δ of the release.
    pub delta: f64,
    /// "gmm".
    pub mechanism: &'static str,
    /// What the guarantee covers.
    pub guarantee: Guarantee,
    /// Which numbers are protected how.
    pub protected: Vec<ProtectedItem>,
    /// The ε/δ split.
    pub budget: GmmBudget,
    /// Parameters.
    pub parameters: GmmParameters,
    /// Input facts.
    pub data: GmmDataReport,
    /// Randomness.
    pub randomness: Randomness,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Library version.
    pub version: &'static str,
    /// Build id.
    pub build_id: &'static str,
}

impl GmmReceipt {
    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("receipt serializes")
    }
}

/// Owner-only: a feature whose missing or non-numeric cells took the public centre.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FilledCells {
    /// The feature's name.
    pub feature: String,
    /// How many of its cells were filled.
    pub cells: usize,
}

fn is_zero(x: &usize) -> bool {
    *x == 0
}

/// A release: the model, its exact KL to the non-private fit, (ε, δ) and the receipt.
#[derive(Debug, Clone, Serialize)]
pub struct GmmRelease {
    /// The released model.
    pub model: GmmModel,
    /// Exact KL(released ‖ non-private eq. 2 fit of the input as read), for the data owner;
    /// None when that fit has a singular class covariance (the default release does not
    /// need the fit; `kl_unavailable` says why).
    pub kl: Option<f64>,
    /// Why `kl` is None.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kl_unavailable: Option<String>,
    /// For the data owner only (computed from the data without protection, never part of
    /// the release): each feature with cells that were missing or not numbers, and how many;
    /// those cells took the public centre. Empty when every cell was a number.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub filled_cells: Vec<FilledCells>,
    /// For the data owner only: records without a label (they count in N and belong to no
    /// class). 0 when every record has one.
    #[serde(skip_serializing_if = "is_zero")]
    pub unlabelled: usize,
    /// Classes of the data the release left out (labels read from the data whose noisy count
    /// did not reach the threshold); for the data owner only, not part of the release.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes_left_out: Vec<String>,
    /// The non-private fit `kl` compares with ([`reference_model`] of the input as read; of
    /// the projected data under `--pca`), for the data owner's own plots; None exactly when
    /// `kl` is. Never part of the release, so never serialized.
    #[serde(skip)]
    pub reference: Option<GmmModel>,
    /// ε.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The receipt.
    pub receipt: GmmReceipt,
    /// How many rows to sample when no number is asked for: the released class counts'
    /// total Σ Ñ_k where the release has DP counts (post-processing), N where N is public
    /// (the baselines).
    #[serde(skip)]
    pub default_samples: usize,
}

/// Samples `t` labelled rows from a (validated) model: each row's class is drawn from the
/// weights, its features from that class's Gaussian (mapped back to the input's features when
/// the model has a PCA projection), conditioned on the model's public box when it has one.
/// Post-processing of a release.
/// Returns (class index per row, rows).
pub fn sample<R: Rng + ?Sized>(
    model: &GmmModel,
    t: usize,
    rng: &mut R,
) -> Result<(Vec<usize>, Vec<Vec<f64>>)> {
    let mut classes = Vec::new();
    let mut rows = Vec::new();
    sample_each(model, t, rng, |k, row| {
        classes.push(k);
        rows.push(row.to_vec());
        Ok(())
    })?;
    Ok((classes, rows))
}

/// Each class's (weight, per-feature means, per-feature standard deviations) in the output's
/// coordinates: through the projection when the model has one (x = c + Vᵀy, so
/// var(x_j) = ‖(L_kᵀ v_j)‖² with v_j feature j's loadings and L_k the Cholesky factor).
fn output_marginals(model: &GmmModel, ls: &[Mat]) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let d = model.means[0].len();
    (0..model.weights.len())
        .map(|k| {
            let (mean, var): (Vec<f64>, Vec<f64>) = match &model.projection {
                None => (
                    model.means[k].clone(),
                    (0..d).map(|j| model.covariances[k][j][j]).collect(),
                ),
                Some(p) => {
                    let dd = p.center.len();
                    let mean = (0..dd)
                        .map(|j| {
                            p.center[j]
                                + (0..d)
                                    .map(|c| p.components[c][j] * model.means[k][c])
                                    .sum::<f64>()
                        })
                        .collect();
                    let var = (0..dd)
                        .map(|j| {
                            (0..d)
                                .map(|c| {
                                    (c..d)
                                        .map(|a| p.components[a][j] * ls[k].get(a, c))
                                        .sum::<f64>()
                                        .powi(2)
                                })
                                .sum()
                        })
                        .collect();
                    (mean, var)
                }
            };
            (
                model.weights[k],
                mean,
                var.into_iter().map(|v: f64| v.max(0.0).sqrt()).collect(),
            )
        })
        .collect()
}

/// [`sample`], handing each row (its class index and its features) to `out` as it is drawn
/// instead of holding them all: the rows of a large request need not fit in memory at once.
pub fn sample_each<R: Rng + ?Sized>(
    model: &GmmModel,
    t: usize,
    rng: &mut R,
    mut out: impl FnMut(usize, &[f64]) -> Result<()>,
) -> Result<()> {
    model.validate()?;
    let d = model.means[0].len();
    let ls: Vec<Mat> = model
        .cov_mats()
        .iter()
        .map(|c| cholesky(c).expect("validated"))
        .collect();
    let mut cum = Vec::with_capacity(model.weights.len());
    let mut s = 0.0;
    for w in &model.weights {
        s += w;
        cum.push(s);
    }
    // One draw of class k's Gaussian, in the output's coordinates.
    let draw = |k: usize, rng: &mut R| -> Vec<f64> {
        let zs: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
        let x: Vec<f64> = (0..d)
            .map(|i| model.means[k][i] + (0..=i).map(|j| ls[k].get(i, j) * zs[j]).sum::<f64>())
            .collect();
        match &model.projection {
            Some(p) => {
                let mut y = p.center.clone();
                for (zj, comp) in x.iter().zip(&p.components) {
                    for (yi, ci) in y.iter_mut().zip(comp) {
                        *yi += zj * ci;
                    }
                }
                y
            }
            None => x,
        }
    };
    let map = model
        .marginals
        .as_ref()
        .map(|m| marginals::MarginalMap::new(m, &output_marginals(model, &ls)));
    for _ in 0..t {
        let u: f64 = rng.gen::<f64>() * s;
        let k = cum.iter().position(|&c| u < c).unwrap_or(cum.len() - 1);
        if let Some(map) = &map {
            // Mapped onto the released marginals, which lie in the box.
            let mut row = draw(k, rng);
            map.apply(&mut row);
            out(k, &row)?;
            continue;
        }
        let row = match &model.support {
            None => draw(k, rng),
            // The class is drawn first, so the classes keep the released weights; the row is
            // then drawn from that class's Gaussian conditioned on the box (rejection).
            Some(box_) => (0..SUPPORT_MAX_DRAWS)
                .map(|_| draw(k, rng))
                .find(|row| box_.contains(row))
                .ok_or_else(|| {
                    Error::Data(format!(
                        "class '{}' of the model puts almost no mass inside the public box (support): none of {SUPPORT_MAX_DRAWS} draws fell inside it; check its lower and upper bounds, or sample without them",
                        model.classes[k]
                    ))
                })?,
        };
        out(k, &row)?;
    }
    Ok(())
}

/// Each class's marginal density of feature `feature` on `grid` (paper Fig. 7/9):
/// `out[k][g] = N(grid[g]; μ_k[feature], Σ_k[feature][feature])`.
pub fn marginal_densities(model: &GmmModel, feature: usize, grid: &[f64]) -> Result<Vec<Vec<f64>>> {
    model.validate()?;
    let d = model.means[0].len();
    if feature >= d {
        return Err(Error::param(
            "feature",
            feature,
            format!("the model has {d} features (0-based index < {d})"),
        ));
    }
    Ok((0..model.classes.len())
        .map(|k| {
            let m = model.means[k][feature];
            let v = model.covariances[k][feature][feature];
            let norm = 1.0 / (2.0 * std::f64::consts::PI * v).sqrt();
            grid.iter()
                .map(|x| norm * (-(x - m) * (x - m) / (2.0 * v)).dexp())
                .collect()
        })
        .collect())
}

/// One feature's marginal curves (for the browser's Fig. 7/9 plot).
#[derive(Debug, Clone, Serialize)]
pub struct MarginalCurves {
    /// Feature name.
    pub feature: String,
    /// Grid (feature units).
    pub grid: Vec<f64>,
    /// `density[k][g]`: class k's marginal density at `grid[g]`, classes in model order.
    pub density: Vec<Vec<f64>>,
}

/// Every feature's marginal densities per class on a `points`-point grid (see
/// [`marginal_grid`]); in the model's coordinates (principal components with `--pca`).
pub fn all_marginals(model: &GmmModel, points: usize) -> Result<Vec<MarginalCurves>> {
    model.validate()?;
    let d = model.means[0].len();
    (0..d)
        .map(|j| {
            let grid = marginal_grid(model, j, points)?;
            let density = marginal_densities(model, j, &grid)?;
            Ok(MarginalCurves {
                feature: model
                    .features
                    .get(j)
                    .cloned()
                    .unwrap_or_else(|| format!("x{j}")),
                grid,
                density,
            })
        })
        .collect()
}

/// An evenly spaced grid of `points` values covering every class's μ ± 4σ of `feature`.
pub fn marginal_grid(model: &GmmModel, feature: usize, points: usize) -> Result<Vec<f64>> {
    model.validate()?;
    let d = model.means[0].len();
    if feature >= d || points < 2 {
        return Err(Error::param(
            "feature",
            feature,
            format!("need a feature index < {d} and at least 2 grid points"),
        ));
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for k in 0..model.classes.len() {
        let m = model.means[k][feature];
        let s = model.covariances[k][feature][feature].sqrt();
        lo = lo.min(m - 4.0 * s);
        hi = hi.max(m + 4.0 * s);
    }
    Ok((0..points)
        .map(|i| lo + (hi - lo) * i as f64 / (points - 1) as f64)
        .collect())
}

/// Draws a dataset as in the paper's §V-A: weights ~ Dirichlet(1, …, 1) over K classes,
/// means ~ U[−10, 10]^d, covariances ~ Wishart_d(I, d + 1), then N labelled rows (every class
/// gets at least d + 2 rows, redrawing the weights otherwise). For tests and benchmarks.
pub fn synthetic_paper_data<R: Rng + ?Sized>(k: usize, d: usize, n: usize, rng: &mut R) -> GmmData {
    use rand_distr::{Distribution, Exp1};
    loop {
        let e: Vec<f64> = (0..k).map(|_| Exp1.sample(rng)).collect();
        let s: f64 = e.iter().sum();
        let w: Vec<f64> = e.iter().map(|x| x / s).collect();
        let means: Vec<Vec<f64>> = (0..k)
            .map(|_| (0..d).map(|_| rng.gen_range(-10.0..10.0)).collect())
            .collect();
        let chols: Vec<Mat> = (0..k)
            .map(|_| {
                let w = wishart::sample_wishart(d, d + 1, 1.0, rng).expect("valid");
                cholesky(&w).unwrap_or_else(|| Mat::eye(d, 1.0))
            })
            .collect();
        let mut rows = Vec::with_capacity(n);
        let mut labels = Vec::with_capacity(n);
        for _ in 0..n {
            let u: f64 = rng.gen();
            let mut acc = 0.0;
            let mut c = k - 1;
            for (j, wj) in w.iter().enumerate() {
                acc += wj;
                if u < acc {
                    c = j;
                    break;
                }
            }
            let zs: Vec<f64> = (0..d).map(|_| rng.sample(StandardNormal)).collect();
            rows.push(
                (0..d)
                    .map(|i| means[c][i] + (0..=i).map(|j| chols[c].get(i, j) * zs[j]).sum::<f64>())
                    .collect(),
            );
            labels.push(c);
        }
        let mut counts = vec![0usize; k];
        for &l in &labels {
            counts[l] += 1;
        }
        if counts.iter().all(|&c| c >= d + 2) {
            return GmmData {
                features: (0..d).map(|j| format!("x{j}")).collect(),
                label: "class".into(),
                classes: (0..k).map(|j| format!("c{j}")).collect(),
                rows,
                labels,
                rows_dropped: 0,
                unlabelled: 0,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ReleaseRng;

    #[test]
    fn sampling_follows_the_model() {
        let model = GmmModel {
            classes: vec!["a".into(), "b".into()],
            weights: vec![0.25, 0.75],
            means: vec![vec![0.0, 0.0], vec![10.0, -5.0]],
            covariances: vec![
                vec![vec![1.0, 0.5], vec![0.5, 2.0]],
                vec![vec![0.5, 0.0], vec![0.0, 0.5]],
            ],
            features: vec!["x".into(), "y".into()],
            label: "l".into(),
            projection: None,
            support: None,
            marginals: None,
        };
        let mut rng = ReleaseRng::seeded(4);
        let (cls, rows) = sample(&model, 100_000, &mut rng).unwrap();
        let n_a = cls.iter().filter(|&&c| c == 0).count() as f64;
        // binomial sd = sqrt(1e5·0.25·0.75) ≈ 137; 6 sd
        assert!((n_a - 25_000.0).abs() < 6.0 * 137.0);
        let a: Vec<&Vec<f64>> = rows
            .iter()
            .zip(&cls)
            .filter(|(_, &c)| c == 0)
            .map(|(r, _)| r)
            .collect();
        let m1 = a.iter().map(|r| r[1]).sum::<f64>() / a.len() as f64;
        let cov01 = a.iter().map(|r| r[0] * r[1]).sum::<f64>() / a.len() as f64;
        assert!(m1.abs() < 6.0 * (2.0f64 / a.len() as f64).sqrt());
        assert!((cov01 - 0.5).abs() < 0.05);
        let dens = marginal_densities(&model, 0, &[0.0, 10.0]).unwrap();
        assert!((dens[0][0] - 1.0 / (2.0 * std::f64::consts::PI).sqrt()).abs() < 1e-12);
        assert!((dens[1][1] - 1.0 / (std::f64::consts::PI).sqrt()).abs() < 1e-12);
        let all = all_marginals(&model, 7).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all[1].feature, "y");
        assert_eq!(all[1].density.len(), 2);
        // a density integrates to ≈ 1 over μ ± 4σ (trapezoid on a fine grid)
        let fine = all_marginals(&model, 2001).unwrap();
        for k in 0..2 {
            let g = &fine[0].grid;
            let area: f64 = (1..g.len())
                .map(|i| {
                    0.5 * (fine[0].density[k][i] + fine[0].density[k][i - 1]) * (g[i] - g[i - 1])
                })
                .sum();
            assert!(area > 0.999 && area < 1.0001, "{area}");
        }
        let grid = marginal_grid(&model, 0, 5).unwrap();
        assert_eq!(grid.len(), 5);
        assert!(grid[0] <= -4.0 && grid[4] >= 10.0 + 4.0 * 0.5f64.sqrt());
    }

    fn boxed_model(support: Option<Support>) -> GmmModel {
        GmmModel {
            classes: vec!["a".into(), "b".into()],
            weights: vec![0.25, 0.75],
            means: vec![vec![0.0, 0.0], vec![3.0, 0.0]],
            covariances: vec![
                vec![vec![1.0, 0.0], vec![0.0, 4.0]],
                vec![vec![1.0, 0.0], vec![0.0, 1.0]],
            ],
            features: vec!["x".into(), "y".into()],
            label: "l".into(),
            projection: None,
            support,
            marginals: None,
        }
    }

    /// With a public box, every row lies inside it, the classes keep the released weights
    /// (the class is drawn before the rejection), and a class's rows follow its Gaussian
    /// conditioned on the box: class a's x (N(0, 1) cut to [−1, 2]; the covariance is
    /// diagonal, so the coordinates stay independent) passes a KS test against the truncated
    /// normal CDF at α = 1e-6 (fixed seed). Sampling without rejection, or clamping into the
    /// box, fails it (the plain N(0, 1) CDF is 0.16 away at x = −1).
    #[test]
    fn sampling_within_a_support_follows_the_truncated_model() {
        use crate::mechanisms::gaussian::{ks_crit, normal_cdf};
        let support = Support {
            lower: vec![-1.0, -10.0],
            upper: vec![2.0, 10.0],
        };
        let model = boxed_model(Some(support.clone()));
        model.validate().unwrap();
        let (cls, rows) = sample(&model, 40_000, &mut ReleaseRng::seeded(11)).unwrap();
        assert!(rows.iter().all(|r| support.contains(r)));
        let n_a = cls.iter().filter(|&&c| c == 0).count() as f64;
        // binomial sd = sqrt(4e4·0.25·0.75) ≈ 86.6; 6 sd
        assert!((n_a - 10_000.0).abs() < 6.0 * 86.6, "{n_a}");
        let mut xs: Vec<f64> = rows
            .iter()
            .zip(&cls)
            .filter(|(_, &c)| c == 0)
            .map(|(r, _)| r[0])
            .collect();
        xs.sort_by(f64::total_cmp);
        let (lo, hi) = (normal_cdf(-1.0), normal_cdf(2.0));
        let n = xs.len() as f64;
        let d = xs.iter().enumerate().fold(0.0f64, |d, (i, &x)| {
            let f = (normal_cdf(x) - lo) / (hi - lo);
            d.max((f - i as f64 / n).abs())
                .max(((i + 1) as f64 / n - f).abs())
        });
        assert!(d < ks_crit(xs.len()), "KS {d} ≥ {}", ks_crit(xs.len()));
        // Without a box the same model reaches outside it.
        let (_, free) = sample(&boxed_model(None), 1_000, &mut ReleaseRng::seeded(11)).unwrap();
        assert!(free.iter().any(|r| !support.contains(r)));
    }

    #[test]
    fn a_support_is_checked_and_an_unreachable_one_is_an_error() {
        let names = ["x".to_string(), "y".to_string()];
        let bad = |lower: Vec<f64>, upper: Vec<f64>| {
            Support { lower, upper }
                .check(&names)
                .unwrap_err()
                .to_string()
        };
        assert!(bad(vec![0.0], vec![1.0, 1.0]).contains("lower"));
        assert!(bad(vec![0.0, f64::NAN], vec![1.0, 1.0]).contains("finite"));
        let e = bad(vec![0.0, 2.0], vec![1.0, 2.0]);
        assert!(e.contains("upper") && e.contains("y"), "{e}");
        // A tampered model's box is refused when the model is read.
        let mut m = boxed_model(Some(Support {
            lower: vec![0.0, 0.0],
            upper: vec![1.0],
        }));
        assert!(m.validate().unwrap_err().to_string().contains("support"));
        // Class b (mean 3, sd 1) never reaches x ≤ −10: an error naming the class.
        m.support = Some(Support {
            lower: vec![-11.0, -1.0],
            upper: vec![-10.0, 1.0],
        });
        m.weights = vec![1e-9, 1.0 - 1e-9];
        let e = sample(&m, 1, &mut ReleaseRng::seeded(1))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("class 'b'") && e.contains("lower and upper"),
            "{e}"
        );
    }
}
