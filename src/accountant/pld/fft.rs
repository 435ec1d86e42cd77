//! A small iterative radix-2 complex FFT (pure Rust, no dependencies), with the componentwise
//! error bound the accountant charges.
//!
//! Twiddles are computed once per size with `libm::sincos` (the same bits natively and in
//! wasm32). Every output of a radix-2 transform is a sum over a unique butterfly path, so with
//! each butterfly exact up to a relative error η (complex multiply-add with a twiddle accurate
//! to a few ulps: η ≤ 8u, Higham, *Accuracy and Stability of Numerical Algorithms*, §24.1) the
//! computed ŷ satisfies the componentwise bound
//! |ŷ_k − y_k| ≤ ((1 + η)^{log₂ L} − 1) · Σ_j |x_j|. [`entry_error_bound`] returns this with
//! η = 16u (twice the textbook constant).

/// Unit roundoff of f64.
pub const U: f64 = f64::EPSILON / 2.0;

/// A planned transform of length `n` (a power of two).
#[derive(Debug, Clone)]
pub struct Fft {
    n: usize,
    log2: u32,
    /// e^{−2πik/n} for k < n/2: (cos, −sin).
    tw_re: Vec<f64>,
    tw_im: Vec<f64>,
}

/// Componentwise error bound of one transform of length `n` on an input of ℓ1 norm `l1`.
pub fn entry_error_bound(n: usize, l1: f64) -> f64 {
    let log2 = n.max(2).trailing_zeros() as f64;
    let eta = 16.0 * U;
    // (1+η)^m − 1 ≤ m·η·(1 + m·η) for m·η ≤ 1.
    let m = log2 + 1.0;
    m * eta * (1.0 + m * eta) * l1
}

impl Fft {
    /// Plans a transform of length `n`; `n` must be a power of two ≥ 2.
    pub fn new(n: usize) -> Self {
        assert!(n >= 2 && n.is_power_of_two());
        let half = n / 2;
        let mut tw_re = Vec::with_capacity(half);
        let mut tw_im = Vec::with_capacity(half);
        for k in 0..half {
            // Reduce the angle to [0, π) exactly through k/n (a dyadic rational).
            let a = 2.0 * std::f64::consts::PI * (k as f64) / (n as f64);
            let (s, c) = libm::sincos(a);
            tw_re.push(c);
            tw_im.push(-s);
        }
        Fft {
            n,
            log2: n.trailing_zeros(),
            tw_re,
            tw_im,
        }
    }

    /// Length of the transform.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false (a plan has length ≥ 2).
    pub fn is_empty(&self) -> bool {
        false
    }

    fn bit_reverse(&self, re: &mut [f64], im: &mut [f64]) {
        let n = self.n;
        let shift = usize::BITS - self.log2;
        for i in 0..n {
            let j = i.reverse_bits() >> shift;
            if j > i {
                re.swap(i, j);
                im.swap(i, j);
            }
        }
    }

    /// In-place forward transform y_k = Σ_j x_j e^{−2πijk/n}.
    pub fn forward(&self, re: &mut [f64], im: &mut [f64]) {
        self.run(re, im, false);
    }

    /// In-place inverse transform x_j = (1/n) Σ_k y_k e^{2πijk/n}.
    pub fn inverse(&self, re: &mut [f64], im: &mut [f64]) {
        self.run(re, im, true);
        let s = 1.0 / self.n as f64; // exact: n is a power of two
        for v in re.iter_mut() {
            *v *= s;
        }
        for v in im.iter_mut() {
            *v *= s;
        }
    }

    fn run(&self, re: &mut [f64], im: &mut [f64], inverse: bool) {
        let n = self.n;
        assert!(re.len() == n && im.len() == n);
        self.bit_reverse(re, im);
        let sign = if inverse { -1.0 } else { 1.0 };
        let mut len = 2;
        while len <= n {
            let half = len / 2;
            let step = n / len;
            for start in (0..n).step_by(len) {
                for k in 0..half {
                    let wr = self.tw_re[k * step];
                    let wi = sign * self.tw_im[k * step];
                    let (a, b) = (start + k, start + k + half);
                    let (xr, xi) = (re[b], im[b]);
                    let tr = xr * wr - xi * wi;
                    let ti = xr * wi + xi * wr;
                    re[b] = re[a] - tr;
                    im[b] = im[a] - ti;
                    re[a] += tr;
                    im[a] += ti;
                }
            }
            len *= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let n = x.len();
        let mut re = vec![0.0; n];
        let mut im = vec![0.0; n];
        for k in 0..n {
            for (j, &v) in x.iter().enumerate() {
                let a = -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                re[k] += v * a.cos();
                im[k] += v * a.sin();
            }
        }
        (re, im)
    }

    #[test]
    fn matches_the_naive_dft_and_inverts() {
        let n = 64;
        let x: Vec<f64> = (0..n).map(|i| ((i * 37 % 11) as f64) / 7.0 - 0.3).collect();
        let (nr, ni) = naive(&x);
        let f = Fft::new(n);
        let mut re = x.clone();
        let mut im = vec![0.0; n];
        f.forward(&mut re, &mut im);
        let l1: f64 = x.iter().map(|v| v.abs()).sum();
        for k in 0..n {
            assert!((re[k] - nr[k]).abs() < 1e-12 * l1, "{k}");
            assert!((im[k] - ni[k]).abs() < 1e-12 * l1, "{k}");
        }
        f.inverse(&mut re, &mut im);
        for j in 0..n {
            assert!((re[j] - x[j]).abs() < 1e-14 * l1);
            assert!(im[j].abs() < 1e-14 * l1);
        }
    }

    #[test]
    fn circular_convolution() {
        // (1 + 2t)(3 + t^3) mod t^4 - 1 = 3 + 6t + 0t^2 + t^3 + 2t^4 → 2 wraps to index 0.
        let f = Fft::new(4);
        let mut ar = vec![1.0, 2.0, 0.0, 0.0];
        let mut ai = vec![0.0; 4];
        let mut br = vec![3.0, 0.0, 0.0, 1.0];
        let mut bi = vec![0.0; 4];
        f.forward(&mut ar, &mut ai);
        f.forward(&mut br, &mut bi);
        let mut cr: Vec<f64> = (0..4).map(|k| ar[k] * br[k] - ai[k] * bi[k]).collect();
        let mut ci: Vec<f64> = (0..4).map(|k| ar[k] * bi[k] + ai[k] * br[k]).collect();
        f.inverse(&mut cr, &mut ci);
        let want = [5.0, 6.0, 0.0, 1.0];
        for k in 0..4 {
            assert!((cr[k] - want[k]).abs() < 1e-12, "{k}: {}", cr[k]);
        }
    }

    #[test]
    fn error_bound_covers_a_large_transform() {
        let n = 1 << 12;
        let x: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.37).sin().abs()).collect();
        let l1: f64 = x.iter().sum();
        let f = Fft::new(n);
        let mut re = x.clone();
        let mut im = vec![0.0; n];
        f.forward(&mut re, &mut im);
        // Check a few entries against a compensated naive sum.
        for &k in &[0usize, 1, 17, 2047, 4095] {
            let (mut sr, mut si) = (0.0f64, 0.0f64);
            for (j, &v) in x.iter().enumerate() {
                let a = -2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                sr += v * a.cos();
                si += v * a.sin();
            }
            let e = ((re[k] - sr).powi(2) + (im[k] - si).powi(2)).sqrt();
            assert!(e <= entry_error_bound(n, l1), "{k}: {e}");
        }
    }
}
