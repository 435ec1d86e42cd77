//! The per-class fit of eq. (2): π_k = N_k/N, μ_k the class mean, Σ_k the unbiased class
//! covariance (divisor N_k − 1). Two-pass (mean first) for accuracy.

use super::linalg::{cholesky, Mat};
use crate::error::{Error, Result};

/// One class's fit.
#[derive(Debug, Clone)]
pub struct ClassFit {
    /// N_k.
    pub count: usize,
    /// μ_k.
    pub mean: Vec<f64>,
    /// Σ_k (unbiased).
    pub cov: Mat,
}

/// Fits every class. `rows[i]` is a feature vector of length d, `labels[i] < k`.
/// Errors (naming the class) when a class has fewer than d + 2 rows (the covariance needs
/// N_k ≥ d + 1 to be non-singular, and the sensitivity bounds need N_k ≥ 3) or a singular
/// covariance.
pub fn fit_classes(
    rows: &[Vec<f64>],
    labels: &[usize],
    class_names: &[String],
    d: usize,
) -> Result<Vec<ClassFit>> {
    let fits = fit_classes_any(rows, labels, class_names, d)?;
    check_invertible(&fits, class_names)?;
    Ok(fits)
}

/// [`fit_classes`] without the singular-covariance error (the class-size error stays).
pub fn fit_classes_any(
    rows: &[Vec<f64>],
    labels: &[usize],
    class_names: &[String],
    d: usize,
) -> Result<Vec<ClassFit>> {
    let k = class_names.len();
    let mut counts = vec![0usize; k];
    let mut sums = vec![vec![0.0f64; d]; k];
    for (x, &y) in rows.iter().zip(labels) {
        counts[y] += 1;
        for j in 0..d {
            sums[y][j] += x[j];
        }
    }
    let min_rows = (d + 2).max(3);
    for (c, &n) in counts.iter().enumerate() {
        if n < min_rows {
            return Err(Error::Data(format!(
                "class '{}' has {n} row(s), but a {d}-dimensional Gaussian component needs at least {min_rows} (d + 2): \
                 add rows, merge or drop the class, or reduce the dimension (the pca option with K dimensions, or fewer columns)",
                class_names[c]
            )));
        }
    }
    let means: Vec<Vec<f64>> = sums
        .iter()
        .zip(&counts)
        .map(|(s, &n)| s.iter().map(|v| v / n as f64).collect())
        .collect();
    let mut covs = vec![Mat::zeros(d); k];
    for (x, &y) in rows.iter().zip(labels) {
        let m = &means[y];
        let c = &mut covs[y];
        for i in 0..d {
            let di = x[i] - m[i];
            for j in 0..=i {
                c.a[i * d + j] += di * (x[j] - m[j]);
            }
        }
    }
    let mut out = Vec::with_capacity(k);
    for c in 0..k {
        let mut cov = covs[c].clone();
        let den = (counts[c] - 1) as f64;
        for i in 0..d {
            for j in 0..=i {
                let v = cov.get(i, j) / den;
                cov.set(i, j, v);
                cov.set(j, i, v);
            }
        }
        out.push(ClassFit {
            count: counts[c],
            mean: means[c].clone(),
            cov,
        });
    }
    Ok(out)
}

/// Errors, naming the first class, when a class's covariance is singular (or too badly
/// conditioned for KL and inverses to mean anything).
pub fn check_invertible(fits: &[ClassFit], class_names: &[String]) -> Result<()> {
    match fits
        .iter()
        .position(|f| cholesky(&f.cov).is_none() || !is_well_conditioned(&f.cov))
    {
        None => Ok(()),
        Some(c) => Err(Error::Data(format!(
            "class '{}': its covariance is singular (a feature is constant or features are collinear within the class); \
             drop the redundant column(s) or project with the pca option to K dimensions, K below the rank",
            class_names[c]
        ))),
    }
}

/// Condition number below 1e12 (eigenvalues), so that KL and inverses are meaningful.
fn is_well_conditioned(c: &Mat) -> bool {
    let (lam, _) = super::linalg::sym_eigen(c);
    let max = lam.iter().cloned().fold(f64::MIN, f64::max);
    let min = lam.iter().cloned().fold(f64::MAX, f64::min);
    min > 0.0 && max.is_finite() && min > max * 1e-12
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_matches_hand_computed_values() {
        // class 0: (0,0),(2,0),(0,2),(2,2) → mean (1,1), cov diag(4/3, 4/3), off-diag 0
        let rows = vec![
            vec![0.0, 0.0],
            vec![2.0, 0.0],
            vec![0.0, 2.0],
            vec![2.0, 2.0],
            vec![1.0, 1.0],
            vec![2.0, 3.0],
            vec![3.0, 2.0],
            vec![4.0, 4.0],
        ];
        let labels = vec![0, 0, 0, 0, 1, 1, 1, 1];
        let names = vec!["a".to_string(), "b".to_string()];
        let f = fit_classes(&rows, &labels, &names, 2).unwrap();
        assert_eq!(f[0].count, 4);
        assert_eq!(f[0].mean, vec![1.0, 1.0]);
        assert!((f[0].cov.get(0, 0) - 4.0 / 3.0).abs() < 1e-15);
        assert!(f[0].cov.get(0, 1).abs() < 1e-15);
        // class 1: mean (2.5, 2.5); deviations (-1.5,-1.5),(-.5,.5),(.5,-.5),(1.5,1.5)
        // var = (2.25+.25+.25+2.25)/3 = 5/3; cov = (2.25-.25-.25+2.25)/3 = 4/3
        assert!((f[1].cov.get(0, 0) - 5.0 / 3.0).abs() < 1e-15);
        assert!((f[1].cov.get(1, 0) - 4.0 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn too_few_rows_and_singular_covariance_are_named_errors() {
        let names = vec!["small".to_string(), "flat".to_string()];
        let rows: Vec<Vec<f64>> = (0..10).map(|i| vec![i as f64, (i * i) as f64]).collect();
        let labels = vec![0, 0, 0, 1, 1, 1, 1, 1, 1, 1];
        let e = fit_classes(&rows, &labels, &names, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'small'") && e.contains("3 row(s)"), "{e}");
        // class 'flat' has a constant second feature
        let rows: Vec<Vec<f64>> = (0..12)
            .map(|i| {
                if i < 6 {
                    vec![i as f64, (i * i % 5) as f64]
                } else {
                    vec![i as f64, 1.0]
                }
            })
            .collect();
        let labels: Vec<usize> = (0..12).map(|i| usize::from(i >= 6)).collect();
        let e = fit_classes(&rows, &labels, &names, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("'flat'") && e.contains("singular"), "{e}");
    }
}
