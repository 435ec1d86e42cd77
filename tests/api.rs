//! The application layer, natively: checked parameters (defaults, cross-parameter rules, the
//! parameter identity of each error), typed responses, and the one `mix: "auto"`.

use privmix::api::{
    self, AccountDetail, AccountedMechanism, CalibrateDetail, MechanismParams, MechanismRequest,
    MixChoice, SynthParams, SynthRequest,
};
use privmix::error::{ErrorKind, ParamStyle};

fn mech(json: &str) -> MechanismRequest {
    serde_json::from_str(json).expect("valid request")
}

/// The parameter an error names, in its canonical form.
fn param_of(e: &privmix::error::Error) -> Option<String> {
    e.param_id().map(|p| p.as_str().to_string())
}

#[test]
fn mechanism_params_apply_defaults_once() {
    let p = MechanismParams::try_from(&mech(r#"{"pool":100,"mix":4,"samples":50,"delta":1e-5}"#))
        .unwrap();
    assert_eq!(
        p.mechanism,
        AccountedMechanism::Cda {
            pool: 100,
            mix: 4,
            clip: 1.0,
            sigma_y: None,
            samples: 50
        }
    );
    assert_eq!(p.orders, privmix::accountant::default_orders());
    assert_eq!(p.preset.name(), "default");
}

#[test]
fn mechanism_rules_name_the_parameter() {
    let cases = [
        // cda needs l.
        (r#"{"pool":100,"samples":50,"delta":1e-5}"#, "mix"),
        // dpmix needs dx and dy.
        (
            r#"{"mechanism":"dpmix","pool":100,"mix":4,"samples":50,"delta":1e-5,"dimY":2}"#,
            "dim_x",
        ),
        (
            r#"{"mechanism":"dpmix","pool":100,"mix":4,"samples":50,"delta":1e-5,"dimX":2}"#,
            "dim_y",
        ),
        // dx only applies to dpmix.
        (
            r#"{"pool":100,"mix":4,"samples":50,"delta":1e-5,"dimX":2}"#,
            "dim_x",
        ),
        // local takes neither l nor σy.
        (
            r#"{"mechanism":"local","pool":100,"mix":4,"samples":50,"delta":1e-5}"#,
            "mix",
        ),
        (
            r#"{"mechanism":"projection","pool":100,"samples":50,"delta":1e-5,"sigmaY":1}"#,
            "sigma_y",
        ),
        (
            r#"{"mechanism":"gan","pool":100,"samples":50,"delta":1e-5}"#,
            "mechanism",
        ),
    ];
    for (json, param) in cases {
        let e = MechanismParams::try_from(&mech(json)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Parameter, "{json}");
        assert_eq!(param_of(&e).as_deref(), Some(param), "{json}: {e}");
        let cli = e.render(ParamStyle::Cli);
        assert!(
            cli.contains(&format!("--{}", param.replace('_', "-"))),
            "{cli}"
        );
        // Core messages name no flag: only the CLI rendering does.
        assert!(!e.to_string().contains("--"), "{e}");
    }
    let e = api::account(&mech(r#"{"pool":100,"mix":4,"samples":50,"delta":1e-5}"#)).unwrap_err();
    assert_eq!(param_of(&e).as_deref(), Some("sigma_x"));
    assert!(e.render(ParamStyle::Js).contains("sigmaX"), "{e}");
}

#[test]
fn every_mechanism_accounts_and_calibrates() {
    for (name, extra) in [
        ("cda", r#""mix":4"#),
        ("dpmix", r#""mix":4,"dimX":10,"dimY":3,"sigmaY":2"#),
        ("local", r#""clip":1"#),
        ("projection", r#""clip":2"#),
    ] {
        let base =
            format!(r#"{{"mechanism":"{name}","pool":10000,"samples":5000,"delta":1e-5,{extra}"#);
        let a = api::account(&mech(&format!(r#"{base},"sigmaX":3}}"#))).unwrap();
        assert_eq!(a.mechanism, name);
        assert!(a.epsilon.is_finite() && a.epsilon > 0.0, "{name}: {a:?}");
        match (&a.detail, name) {
            (AccountDetail::Cda { mode }, "cda") => assert_eq!(*mode, "label-free"),
            (AccountDetail::DpMix { dim_x, .. }, "dpmix") => assert_eq!(*dim_x, 10),
            (AccountDetail::Local { sigma_x, .. }, "local" | "projection") => {
                assert_eq!(*sigma_x, 3.0)
            }
            (d, n) => panic!("{n}: wrong detail {d:?}"),
        }
        // Calibrating to the ε just accounted gives σx ≤ 3 and never overshoots the target.
        let c = api::calibrate(&mech(&format!(r#"{base},"epsilon":{}}}"#, a.epsilon))).unwrap();
        assert!(c.epsilon <= a.epsilon, "{name}: {c:?}");
        assert!(c.sigma_x <= 3.0 * (1.0 + 1e-6), "{name}: {c:?}");
        if name == "dpmix" {
            assert!(matches!(
                c.detail,
                CalibrateDetail::DpMix {
                    shared_sigma: false,
                    ..
                }
            ));
        }
    }
}

#[test]
fn unknown_keys_are_refused_by_serde_with_the_key() {
    let e = serde_json::from_str::<SynthRequest>(r#"{"label":"y","epsilonn":1}"#).unwrap_err();
    let m = e.to_string();
    assert!(
        m.starts_with("unknown field `epsilonn`, expected one of"),
        "{m}"
    );
}

#[test]
fn synth_params_check_everything_before_the_data() {
    let p = SynthParams::try_from(&SynthRequest::default()).unwrap();
    assert_eq!(p.options.delta, 1e-5);
    assert_eq!(p.options.mix, 4);
    assert_eq!(p.options.clip, 1.0);
    assert_eq!(p.options.normalize_share, 0.1);
    assert!(!p.auto_mix);
    let bad: [(&str, &str); 7] = [
        (r#"{"delta":2}"#, "delta"),
        (r#"{"epsilon":-1}"#, "epsilon"),
        (r#"{"mix":"often"}"#, "mix"),
        (r#"{"labels":"soft"}"#, "labels"),
        (r#"{"mechanism":"local","classWise":true}"#, "class_wise"),
        (r#"{"projectionDim":3}"#, "projection_dim"),
        (r#"{"seed":1.5}"#, "seed"),
    ];
    for (json, param) in bad {
        let r: SynthRequest = serde_json::from_str(json).unwrap();
        let e = SynthParams::try_from(&r).unwrap_err();
        assert_eq!(param_of(&e).as_deref(), Some(param), "{json}: {e}");
    }
}

#[test]
fn auto_mix_is_one_choice_for_the_cli_and_js() {
    assert_eq!(MixChoice::parse("auto").unwrap(), MixChoice::auto());
    assert_eq!(MixChoice::parse("3").unwrap(), MixChoice::Fixed(3));
    assert!(MixChoice::parse("three").is_err());
    // Class sizes are public only under the keep-label adjacency.
    let r: SynthRequest =
        serde_json::from_str(r#"{"mix":"auto","epsilon":2,"adjacency":"keep-label"}"#).unwrap();
    let p = SynthParams::try_from(&r).unwrap();
    assert!(p.auto_mix);
    let sizes = [50, 50, 50];
    let opts = p.options_for(&sizes, 150, 4).unwrap();
    // The preview suggests the same order for the same public shape and target.
    let preview = api::preview(
        &serde_json::from_str(
            r#"{"classSizes":[50,50,50],"epsilon":2,"delta":1e-5,"features":4,"mix":"auto"}"#,
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(opts.mix as u32, preview.suggested_mix);
    assert_eq!(preview.mix, preview.suggested_mix);
    // Without a target ε there is nothing to choose against.
    let r: SynthRequest =
        serde_json::from_str(r#"{"mix":"auto","sigmaX":2,"adjacency":"keep-label"}"#).unwrap();
    let e = SynthParams::try_from(&r)
        .unwrap()
        .options_for(&sizes, 150, 4)
        .unwrap_err();
    assert_eq!(param_of(&e).as_deref(), Some("mix"));
    // Under the standard adjacency (default) the class sizes are private: an automatic order
    // needs a public class-size floor, and then depends on no class size.
    let r: SynthRequest = serde_json::from_str(r#"{"mix":"auto","epsilon":2}"#).unwrap();
    let p = SynthParams::try_from(&r).unwrap();
    let e = p.options_for(&sizes, 150, 4).unwrap_err();
    assert_eq!(param_of(&e).as_deref(), Some("mix"));
    let r: SynthRequest =
        serde_json::from_str(r#"{"mix":"auto","epsilon":2,"poolFloor":40}"#).unwrap();
    let p = SynthParams::try_from(&r).unwrap();
    let a = p.options_for(&[50, 50, 50], 150, 4).unwrap().mix;
    let b = p.options_for(&[45, 60, 45], 150, 4).unwrap().mix;
    assert_eq!(a, b);
}

#[test]
fn federated_aggregator_seeds_default_and_identity() {
    let r: api::FedRequest =
        serde_json::from_str(r#"{"label":"y","epsilon":4,"aggregatorSeeds":2}"#).unwrap();
    assert_eq!(r.options().unwrap().0.aggregator_seeds, 2);
    let r: api::FedRequest = serde_json::from_str(r#"{"label":"y","epsilon":4}"#).unwrap();
    // Default t = 1: any one party may aggregate.
    assert_eq!(r.options().unwrap().0.aggregator_seeds, 1);
    // t = S is refused, naming the parameter (CLI: --aggregator-seeds, JS: aggregatorSeeds).
    let mut csv = String::from("a,b,y\n");
    for i in 0..60 {
        csv.push_str(&format!("{},{},{}\n", i % 7, (i * 3) % 5, i % 2));
    }
    let r: api::FedRequest = serde_json::from_str(
        r#"{"label":"y","epsilon":4,"clients":3,"samples":10,"aggregatorSeeds":3,"seed":1}"#,
    )
    .unwrap();
    let e = api::federated_simulate(csv.as_bytes(), &r).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Parameter, "{e}");
    assert_eq!(param_of(&e).as_deref(), Some("aggregator_seeds"), "{e}");
    assert!(
        e.render(ParamStyle::Js)
            .starts_with("invalid aggregatorSeeds = 3:"),
        "{}",
        e.render(ParamStyle::Js)
    );
    assert!(e
        .render(ParamStyle::Cli)
        .starts_with("invalid --aggregator-seeds = 3:"));
}
