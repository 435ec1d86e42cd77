//! CART decision-tree classifier with Gini impurity.
//!
//! At each node and for each feature, at most `max_thresholds` candidate thresholds are taken
//! from quantiles of the node's values (of a deterministic sample of at most
//! [`QUANTILE_SAMPLE`] of them), midway between a quantile and the next larger distinct value.
//! Every row of the node is then binned against the candidates by binary search and the best
//! split is read off the cumulative class counts, so a node of `m` rows costs
//! `O(m · d · log(max_thresholds))` plus a bounded sort per feature. Features with few distinct
//! values (e.g. one-hot columns) get every split between distinct values, i.e. exact CART.

use ndarray::ArrayView2;

use crate::error::{Error, Result};

/// Node values sorted per feature to choose the candidate thresholds (larger nodes are
/// sub-sampled at a fixed stride).
pub const QUANTILE_SAMPLE: usize = 1024;

/// Hyper-parameters of [`DecisionTree::fit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeParams {
    /// Maximum depth (the root is depth 0; `0` gives a single leaf). Default `12`.
    pub max_depth: usize,
    /// Minimum number of training rows in every leaf (`>= 1`). Default `5`.
    pub min_samples_leaf: usize,
    /// Maximum candidate thresholds per feature and node (`>= 1`). Default `64`.
    pub max_thresholds: usize,
}

impl Default for TreeParams {
    fn default() -> Self {
        TreeParams {
            max_depth: 12,
            min_samples_leaf: 5,
            max_thresholds: 64,
        }
    }
}

#[derive(Debug, Clone)]
enum Node {
    Leaf {
        class: u32,
        n_samples: usize,
    },
    /// Rows with `x[feature] <= threshold` go to `left`.
    Split {
        feature: usize,
        threshold: f32,
        left: usize,
        right: usize,
    },
}

/// A fitted CART classification tree.
#[derive(Debug, Clone)]
pub struct DecisionTree {
    nodes: Vec<Node>,
    n_features: usize,
    depth: usize,
}

/// Scratch buffers and inputs shared by the recursive builder.
struct Builder<'a> {
    x: ArrayView2<'a, f32>,
    y: &'a [u32],
    k: usize,
    p: TreeParams,
    nodes: Vec<Node>,
    depth: usize,
    values: Vec<f32>,
    sample: Vec<f32>,
    thresholds: Vec<f32>,
    hist: Vec<u32>,
}

/// Best split found at a node.
struct Split {
    feature: usize,
    threshold: f32,
    score: f64,
}

impl DecisionTree {
    /// Fits a tree on `x` (`n x d`) with labels `y` in `0..n_classes`.
    ///
    /// Errors on empty data, `y.len() != x.nrows()`, a label `>= n_classes`, non-finite
    /// features, or invalid parameters.
    pub fn fit(x: ArrayView2<f32>, y: &[u32], n_classes: usize, p: &TreeParams) -> Result<Self> {
        if p.min_samples_leaf == 0 {
            return Err(Error::param(
                "min_samples_leaf",
                0,
                "use at least 1 row per leaf (e.g. 5)",
            ));
        }
        if p.max_thresholds == 0 {
            return Err(Error::param(
                "max_thresholds",
                0,
                "use at least 1 candidate threshold (e.g. 64)",
            ));
        }
        super::check_xy(x, y, n_classes)?;
        let mut b = Builder {
            x: x.reborrow(),
            y,
            k: n_classes,
            p: p.clone(),
            nodes: Vec::new(),
            depth: 0,
            values: Vec::with_capacity(x.nrows()),
            sample: Vec::with_capacity(QUANTILE_SAMPLE),
            thresholds: Vec::with_capacity(p.max_thresholds),
            hist: Vec::new(),
        };
        let mut idx: Vec<u32> = (0..x.nrows() as u32).collect();
        b.build(&mut idx, 0);
        Ok(DecisionTree {
            nodes: b.nodes,
            n_features: x.ncols(),
            depth: b.depth,
        })
    }

    /// Predicted class per row.
    ///
    /// # Panics
    /// If `x.ncols()` differs from the number of training features.
    pub fn predict(&self, x: ArrayView2<f32>) -> Vec<u32> {
        assert_eq!(
            x.ncols(),
            self.n_features,
            "DecisionTree::predict: x has {} columns but the tree was trained on {}",
            x.ncols(),
            self.n_features
        );
        x.rows()
            .into_iter()
            .map(|row| {
                let mut i = 0;
                loop {
                    match &self.nodes[i] {
                        Node::Leaf { class, .. } => return *class,
                        Node::Split {
                            feature,
                            threshold,
                            left,
                            right,
                        } => {
                            i = if row[*feature] <= *threshold {
                                *left
                            } else {
                                *right
                            };
                        }
                    }
                }
            })
            .collect()
    }

    /// Depth of the deepest leaf (`0` for a single leaf).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.nodes
            .iter()
            .filter(|n| matches!(n, Node::Leaf { .. }))
            .count()
    }

    /// Number of features the tree was trained on.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Training rows per leaf, in node order.
    pub fn leaf_sizes(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .filter_map(|n| match n {
                Node::Leaf { n_samples, .. } => Some(*n_samples),
                Node::Split { .. } => None,
            })
            .collect()
    }
}

impl Builder<'_> {
    /// Builds the subtree for the rows `idx` (reordered in place); returns its node index.
    fn build(&mut self, idx: &mut [u32], depth: usize) -> usize {
        self.depth = self.depth.max(depth);
        let m = idx.len();
        let mut counts = vec![0usize; self.k];
        for &i in idx.iter() {
            counts[self.y[i as usize] as usize] += 1;
        }
        let class = super::argmax(counts.iter().map(|&c| c as f64));
        let node_id = self.nodes.len();
        self.nodes.push(Node::Leaf {
            class,
            n_samples: m,
        });
        let pure = counts.contains(&m);
        if depth >= self.p.max_depth || pure || m < 2 * self.p.min_samples_leaf {
            return node_id;
        }
        let parent_score = counts.iter().map(|&c| (c * c) as f64).sum::<f64>() / m as f64;
        let Some(best) = self.best_split(idx) else {
            return node_id;
        };
        if best.score <= parent_score * (1.0 + 1e-12) {
            return node_id;
        }
        // Partition rows: `<= threshold` first.
        let col = self.x.column(best.feature);
        let mut n_left = 0;
        for i in 0..m {
            if col[idx[i] as usize] <= best.threshold {
                idx.swap(i, n_left);
                n_left += 1;
            }
        }
        let (li, ri) = idx.split_at_mut(n_left);
        let left = self.build(li, depth + 1);
        let right = self.build(ri, depth + 1);
        self.nodes[node_id] = Node::Split {
            feature: best.feature,
            threshold: best.threshold,
            left,
            right,
        };
        node_id
    }

    /// Best split of the rows `idx` over all features, maximising
    /// `sum_c L_c^2 / n_L + sum_c R_c^2 / n_R` (equivalently minimising weighted Gini).
    fn best_split(&mut self, idx: &[u32]) -> Option<Split> {
        let m = idx.len();
        let k = self.k;
        let min_leaf = self.p.min_samples_leaf;
        let mut best: Option<Split> = None;
        for f in 0..self.x.ncols() {
            let col = self.x.column(f);
            self.values.clear();
            self.values.extend(idx.iter().map(|&i| col[i as usize]));
            self.candidates();
            let nt = self.thresholds.len();
            if nt == 0 {
                continue;
            }
            self.hist.clear();
            self.hist.resize((nt + 1) * k, 0);
            for (&v, &i) in self.values.iter().zip(idx) {
                let bin = self.thresholds.partition_point(|&t| t < v);
                self.hist[bin * k + self.y[i as usize] as usize] += 1;
            }
            // Right side starts with everything; move bins left one by one.
            let mut left = vec![0u64; k];
            let mut right = vec![0u64; k];
            for bin in self.hist.chunks_exact(k) {
                right.iter_mut().zip(bin).for_each(|(r, &h)| *r += h as u64);
            }
            let mut n_left = 0usize;
            for (b, bin) in self.hist.chunks_exact(k).take(nt).enumerate() {
                for ((l, r), &h) in left.iter_mut().zip(right.iter_mut()).zip(bin) {
                    *l += h as u64;
                    *r -= h as u64;
                    n_left += h as usize;
                }
                let n_right = m - n_left;
                if n_left < min_leaf {
                    continue;
                }
                if n_right < min_leaf {
                    break;
                }
                let sl: u64 = left.iter().map(|c| c * c).sum();
                let sr: u64 = right.iter().map(|c| c * c).sum();
                let score = sl as f64 / n_left as f64 + sr as f64 / n_right as f64;
                if best.as_ref().map_or(true, |bs| score > bs.score) {
                    best = Some(Split {
                        feature: f,
                        threshold: self.thresholds[b],
                        score,
                    });
                }
            }
        }
        best
    }

    /// Fills `self.thresholds` (sorted, distinct) from quantiles of `self.values`.
    fn candidates(&mut self) {
        let m = self.values.len();
        self.sample.clear();
        if m <= QUANTILE_SAMPLE {
            self.sample.extend_from_slice(&self.values);
        } else {
            self.sample
                .extend((0..QUANTILE_SAMPLE).map(|q| self.values[q * m / QUANTILE_SAMPLE]));
        }
        self.sample.sort_unstable_by(f32::total_cmp);
        self.thresholds.clear();
        let s = &self.sample;
        let len = s.len();
        let n_gaps = s.windows(2).filter(|w| w[0] < w[1]).count();
        let midpoint = |lo: f32, hi: f32| {
            let t = lo + (hi - lo) * 0.5;
            if t < hi {
                t
            } else {
                lo
            }
        };
        if n_gaps <= self.p.max_thresholds {
            for w in s.windows(2) {
                if w[0] < w[1] {
                    self.thresholds.push(midpoint(w[0], w[1]));
                }
            }
        } else {
            let t = self.p.max_thresholds;
            for q in 1..=t {
                let v = s[q * len / (t + 1)];
                let next = s.partition_point(|&x| x <= v);
                if next < len {
                    let thr = midpoint(v, s[next]);
                    if self.thresholds.last().map_or(true, |&last| thr > last) {
                        self.thresholds.push(thr);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::accuracy;
    use crate::eval::logreg::{LogReg, LogRegParams};
    use ndarray::{array, Array2};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// XOR of the signs of two uniform features, plus a noise feature.
    fn xor(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x = Array2::from_shape_fn((n, 3), |_| rng.gen_range(-1.0f32..1.0));
        let y = x
            .rows()
            .into_iter()
            .map(|r| u32::from((r[0] > 0.0) ^ (r[1] > 0.0)))
            .collect();
        (x, y)
    }

    #[test]
    fn tree_fits_xor_logreg_cannot() {
        let (xtr, ytr) = xor(2000, 1);
        let (xte, yte) = xor(1000, 2);
        let t = DecisionTree::fit(xtr.view(), &ytr, 2, &TreeParams::default()).unwrap();
        let acc = accuracy(&t.predict(xte.view()), &yte);
        assert!(acc > 0.95, "tree accuracy on XOR {acc}");
        let lr = LogReg::fit(xtr.view(), &ytr, 2, &LogRegParams::default()).unwrap();
        let acc_lr = accuracy(&lr.predict(xte.view()), &yte);
        assert!(acc_lr < 0.7, "logreg should not solve XOR, got {acc_lr}");
    }

    #[test]
    fn tree_respects_max_depth_and_min_samples_leaf() {
        let (x, y) = xor(3000, 3);
        for (max_depth, min_leaf) in [(0, 1), (1, 1), (3, 1), (6, 40), (20, 1), (20, 7)] {
            let p = TreeParams {
                max_depth,
                min_samples_leaf: min_leaf,
                max_thresholds: 16,
            };
            let t = DecisionTree::fit(x.view(), &y, 2, &p).unwrap();
            assert!(t.depth() <= max_depth, "depth {} > {max_depth}", t.depth());
            let sizes = t.leaf_sizes();
            assert_eq!(sizes.iter().sum::<usize>(), 3000);
            assert_eq!(sizes.len(), t.n_leaves());
            assert!(
                sizes.iter().all(|&s| s >= min_leaf),
                "leaf below {min_leaf}: {sizes:?}"
            );
            if max_depth == 20 {
                // Unconstrained by depth: grows until pure or limited by min_samples_leaf.
                assert!(t.depth() > 3);
            }
        }
        // With min_samples_leaf = 1 and enough depth, the training set is fitted exactly.
        let p = TreeParams {
            max_depth: 64,
            min_samples_leaf: 1,
            max_thresholds: 64,
        };
        let t = DecisionTree::fit(x.view(), &y, 2, &p).unwrap();
        assert_eq!(accuracy(&t.predict(x.view()), &y), 1.0);
    }

    #[test]
    fn tree_single_leaf_predicts_majority() {
        let x = array![[0.0f32], [1.0], [2.0], [3.0]];
        let y = [2, 1, 2, 0];
        let p = TreeParams {
            max_depth: 0,
            ..TreeParams::default()
        };
        let t = DecisionTree::fit(x.view(), &y, 3, &p).unwrap();
        assert_eq!(t.predict(x.view()), vec![2; 4]);
        assert_eq!((t.depth(), t.n_leaves()), (0, 1));
    }

    #[test]
    fn tree_thresholds_between_distinct_values() {
        // One-hot style feature: the split must separate 0 from 1 exactly.
        let x = Array2::from_shape_fn((100, 1), |(i, _)| (i % 2) as f32);
        let y: Vec<u32> = (0..100).map(|i| (i % 2) as u32).collect();
        let t = DecisionTree::fit(
            x.view(),
            &y,
            2,
            &TreeParams {
                min_samples_leaf: 1,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            t.predict(array![[0.0f32], [1.0], [0.4], [0.6]].view()),
            vec![0, 1, 0, 1]
        );
        assert_eq!(t.n_leaves(), 2);
    }

    #[test]
    fn tree_many_distinct_values_uses_quantiles() {
        // 5000 distinct values, threshold at 0.3: found up to quantile resolution.
        let n = 5000;
        let x = Array2::from_shape_fn((n, 1), |(i, _)| ((i * 7919) % n) as f32 / n as f32);
        let y: Vec<u32> = x.column(0).iter().map(|&v| u32::from(v > 0.3)).collect();
        let p = TreeParams {
            max_depth: 1,
            min_samples_leaf: 1,
            max_thresholds: 64,
        };
        let t = DecisionTree::fit(x.view(), &y, 2, &p).unwrap();
        let acc = accuracy(&t.predict(x.view()), &y);
        assert!(acc > 0.98, "{acc}");
    }

    #[test]
    fn tree_errors() {
        let x = array![[0.0f32], [1.0]];
        let e = DecisionTree::fit(x.view(), &[0, 3], 2, &TreeParams::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("label 3"), "{e}");
        let p = TreeParams {
            min_samples_leaf: 0,
            ..Default::default()
        };
        let e = DecisionTree::fit(x.view(), &[0, 1], 2, &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("min_samples_leaf = 0"), "{e}");
        let p = TreeParams {
            max_thresholds: 0,
            ..Default::default()
        };
        let e = DecisionTree::fit(x.view(), &[0, 1], 2, &p)
            .unwrap_err()
            .to_string();
        assert!(e.contains("max_thresholds = 0"), "{e}");
        let bad = array![[0.0f32], [f32::NAN]];
        let e = DecisionTree::fit(bad.view(), &[0, 1], 2, &TreeParams::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("NaN"), "{e}");
    }
}
