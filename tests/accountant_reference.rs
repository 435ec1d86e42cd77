//! The accountant against `../shared/reference/rdp_wor_reference.json` (mpmath at 60+ digits,
//! equal to dp_accounting within 1e-13): every entry to 1e-9 relative error (1e-15 absolute
//! below that). The file must be present: a missing reference fails the test, it is not skipped.

use privmix::accountant::{Preset, RdpCurve, WorBound};
use privmix::mechanisms::cda::accounting::CdaPrivacy;
use serde_json::Value;

fn reference() -> Value {
    let path = std::env::var("PRIVMIX_SHARED")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
        .join("reference/rdp_wor_reference.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reference file {} is required: {e}", path.display()));
    serde_json::from_str(&text).expect("reference JSON parses")
}

fn close(got: f64, want: f64) -> bool {
    let diff = (got - want).abs();
    if want.abs() < 1e-15 {
        diff <= 1e-15
    } else {
        diff / want.abs() <= 1e-9
    }
}

#[test]
fn raw_rdp_matches_every_entry_for_both_bounds() {
    let r = reference();
    let rows = r["raw_rdp"].as_array().unwrap();
    assert_eq!(rows.len(), 192);
    let mut checked = 0;
    for row in rows {
        let pool = row["pool"].as_f64().unwrap();
        let mix = row["mix"].as_f64().unwrap();
        let z = row["z"].as_f64().unwrap();
        let order = row["order"].as_u64().unwrap() as u32;
        for (bound, key) in [
            (WorBound::Theorem9, "rdp_paper"),
            (WorBound::Theorem27, "rdp_strengthened"),
        ] {
            let want = row[key].as_f64().unwrap();
            let got = RdpCurve::subsampled_gaussian(mix / pool, z, &[order], bound)
                .unwrap()
                .rdp[0];
            assert!(
                close(got, want),
                "{key} pool={pool} mix={mix} z={z} α={order}: got {got}, want {want}"
            );
            // Rounded towards more privacy loss.
            assert!(
                got >= want * (1.0 - 1e-15),
                "{key}: {got} below the truth {want}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 384);
}

#[test]
fn dp_cda_epsilon_matches_every_entry_for_both_presets() {
    let r = reference();
    let rows = r["dp_cda_epsilon"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let orders_range = row["orders"].as_array().unwrap();
        let (lo, hi) = (
            orders_range[0].as_u64().unwrap() as u32,
            orders_range[1].as_u64().unwrap() as u32,
        );
        let orders: Vec<u32> = (lo..=hi).collect();
        let p = CdaPrivacy {
            pool: row["pool"].as_u64().unwrap(),
            mix: row["mix"].as_u64().unwrap() as u32,
            clip: row["clip"].as_f64().unwrap(),
            sigma_x: row["sigma_x"].as_f64().unwrap(),
            sigma_y: row["sigma_y"].as_f64(),
            samples: row["samples"].as_u64().unwrap(),
        };
        let z = p.noise_multiplier().unwrap();
        assert!(close(z, row["noise_multiplier"].as_f64().unwrap()), "z {z}");
        let delta = row["delta"].as_f64().unwrap();
        for (preset, eps_key, ord_key) in [
            (
                Preset::Default,
                "epsilon_strengthened_improved",
                "order_strengthened_improved",
            ),
            (
                Preset::Paper,
                "epsilon_paper_classic",
                "order_paper_classic",
            ),
        ] {
            let e = p.epsilon(delta, &orders, preset, None).unwrap();
            let want = row[eps_key].as_f64().unwrap();
            assert!(
                close(e.epsilon, want),
                "{eps_key}: got {}, want {want} ({row})",
                e.epsilon
            );
            assert!(
                e.epsilon >= want,
                "{eps_key}: {} below the truth {want}",
                e.epsilon
            );
            assert_eq!(
                u64::from(e.order),
                row[ord_key].as_u64().unwrap(),
                "{ord_key}"
            );
        }
    }
}
