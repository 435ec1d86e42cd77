//! Federated DP-CDA: `federatedSimulate`, `federatedKeygen`, `federatedContribute` and
//! `federatedAggregate` in JS; `privmix federated simulate|keygen|contribute|aggregate` in
//! the CLI.

use super::{
    check_seed, csv_sink, csv_string, csv_write_err, orders_of, preset_of, rng_for_seed, schema_of,
    DEFAULT_DELTA,
};
use crate::accountant::{check_delta, check_epsilon};
use crate::data::{read_csv_bytes, CsvOptions, MissingPolicy, Schema, Table};
use crate::error::{Error, Result};
use crate::mechanisms::federated::check_clients;
use crate::pipelines::federated::{FedOptions, FedReceipt, Partition, Simulation};
use crate::rng::ReleaseRng;
use serde::Deserialize;

/// Options shared by `federatedSimulate` and `federatedContribute`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FedRequest {
    /// Label column.
    pub label: String,
    /// `cape` (default) or `conventional`.
    #[serde(default)]
    pub variant: Option<String>,
    /// Target ε.
    pub epsilon: f64,
    /// δ (default 1e-5).
    #[serde(default)]
    pub delta: Option<f64>,
    /// l (default 4).
    #[serde(default)]
    pub mix: Option<usize>,
    /// Clip norm (default: automatic from the header).
    #[serde(default)]
    pub clip: Option<f64>,
    /// T (required to contribute).
    #[serde(default)]
    pub samples: Option<u64>,
    /// `dp` (default) or `public` (with a schema).
    #[serde(default)]
    pub normalize: Option<String>,
    /// Share of ε for DP normalization.
    #[serde(default)]
    pub normalize_share: Option<f64>,
    /// Schema.
    #[serde(default)]
    pub schema: Option<serde_json::Value>,
    /// Preset.
    #[serde(default)]
    pub preset: Option<String>,
    /// Simulation: number of parties S.
    #[serde(default)]
    pub clients: Option<usize>,
    /// Simulation: `iid` (default) or `skewed`.
    #[serde(default)]
    pub partition: Option<String>,
    /// Multi-party: agreed floor on every party's smallest class (CAPE's gain needs it).
    #[serde(default)]
    pub pool: Option<usize>,
    /// Multi-party: agreed session label.
    #[serde(default)]
    pub session: Option<String>,
    /// t: the aggregator may hold the pairwise seeds of this many parties (default 1: any one
    /// party aggregates; 0: a seedless aggregator, assumed; at most S − 1).
    #[serde(default)]
    pub aggregator_seeds: Option<usize>,
    /// How the columns the schema does not type get their type: `dp` (default: decided under
    /// DP at each party) or `data` (inferred from the data, NOT protected).
    #[serde(default)]
    pub column_types: Option<String>,
    /// RDP orders (default 2..=256).
    #[serde(default)]
    pub orders: Option<Vec<u32>>,
    /// Fixed seed (tests only).
    #[serde(default)]
    pub seed: Option<f64>,
}

/// Checked federated parameters, built once from a [`FedRequest`] by `TryFrom`: every
/// default and every check that needs no data, for the CLI and the bindings alike.
#[derive(Debug, Clone)]
pub struct FedParams {
    /// Label column.
    pub label: String,
    /// The core options.
    pub options: FedOptions,
    /// The schema, if any.
    pub schema: Option<Schema>,
    /// Simulation: the number of parties S (None: not given; a simulation needs it).
    pub clients: Option<usize>,
    /// Simulation: how the rows are split (default iid).
    pub partition: Partition,
    /// Fixed seed (tests only).
    pub seed: Option<u64>,
}

impl TryFrom<&FedRequest> for FedParams {
    type Error = Error;

    fn try_from(r: &FedRequest) -> Result<Self> {
        let d = FedOptions::default();
        let options = FedOptions {
            variant: match &r.variant {
                Some(v) => v.parse()?,
                None => d.variant,
            },
            epsilon: r.epsilon,
            delta: r.delta.unwrap_or(DEFAULT_DELTA),
            mix: r.mix.unwrap_or(d.mix),
            clip: r.clip,
            samples: r.samples.map(super::check_rows).transpose()?,
            normalize: match &r.normalize {
                Some(s) => s.parse()?,
                None => d.normalize,
            },
            normalize_share: r.normalize_share.unwrap_or(d.normalize_share),
            preset: preset_of(&r.preset)?,
            orders: orders_of(&r.orders)?,
            pool: r.pool,
            session: r.session.clone(),
            aggregator_seeds: r.aggregator_seeds.unwrap_or(d.aggregator_seeds),
            column_types: match &r.column_types {
                Some(s) => s.parse()?,
                None => d.column_types,
            },
        };
        check_delta(options.delta)?;
        check_epsilon(options.epsilon)?;
        if let Some(s) = r.clients {
            check_clients(s)?;
        }
        Ok(FedParams {
            label: r.label.clone(),
            options,
            schema: schema_of(&r.schema)?,
            clients: r.clients,
            partition: match &r.partition {
                Some(p) => p.parse()?,
                None => Partition::Iid,
            },
            seed: check_seed(r.seed)?,
        })
    }
}

impl FedParams {
    /// How a party's input is read: every record kept (the run decides the column types the
    /// schema leaves open, then encodes the missing cells with
    /// [`crate::pipelines::federated::federated_records`]).
    pub fn csv_options(&self) -> CsvOptions {
        CsvOptions {
            label: Some(self.label.clone()),
            schema: self.schema.clone(),
            missing: MissingPolicy::Keep,
            ..CsvOptions::default()
        }
    }

    /// The simulation these parameters describe (S is required).
    pub fn simulation(&self) -> Result<Simulation> {
        let clients = self.clients.ok_or_else(|| {
            Error::param(
                "clients",
                "(none)",
                "give the number of simulated parties, e.g. clients: 10",
            )
        })?;
        Ok(Simulation {
            clients,
            partition: self.partition,
        })
    }

    /// The party's table as read from CSV bytes.
    fn table(&self, csv: &[u8]) -> Result<Table> {
        read_csv_bytes(csv, &self.csv_options())
    }
}

/// `federatedSimulate`: S parties in one process; `{csv, receipt}` with both views.
pub fn federated_simulate(csv: &[u8], r: &FedRequest) -> Result<(String, FedReceipt)> {
    let p = FedParams::try_from(r)?;
    let simulation = p.simulation()?;
    let table = p.table(csv)?;
    let mut rng = rng_for_seed(p.seed)?;
    let w = csv_sink();
    let receipt = crate::pipelines::federated::simulate(
        table,
        p.schema.as_ref(),
        &p.options,
        simulation,
        &mut rng,
        |h| w.borrow_mut().write_record(h).map_err(csv_write_err),
        |row| w.borrow_mut().write_record(row).map_err(csv_write_err),
    )?;
    Ok((csv_string(w)?, receipt))
}

/// `federatedKeygen`: `(secretKey, publicKey)` as JSON texts (keep the first, share the
/// second). The party id comes from JS as a number: a whole number from 0 to 2^32 − 1.
pub fn federated_keygen(party: f64) -> Result<(String, String)> {
    if !(super::whole_at_least(party, 0.0) && party <= f64::from(u32::MAX)) {
        return Err(Error::param(
            "party",
            party,
            "give this party's id, a whole number from 0 to 4294967295 (distinct within the federation)",
        ));
    }
    let mut rng = ReleaseRng::from_entropy()?;
    Ok(crate::pipelines::federated::keygen(party as u32, &mut rng))
}

/// `federatedContribute`: this party's contribution file (JSON) and its secret key updated
/// with the run it was used for (a key is refused for a run it already contributed to).
pub fn federated_contribute(
    csv: &[u8],
    secret_key: &str,
    peers: &[String],
    r: &FedRequest,
) -> Result<(String, String)> {
    use crate::mechanisms::federated::pairwise::{PublicKeyFile, SecretKeyFile};
    let mut key = SecretKeyFile::from_json(secret_key)?;
    if peers.is_empty() {
        return Err(Error::param(
            "peers",
            "(none)",
            "load the other parties' public keys",
        ));
    }
    let peers = peers
        .iter()
        .enumerate()
        .map(|(i, p)| {
            PublicKeyFile::from_json(p)
                .map_err(|e| Error::Data(format!("public key {}: {e}", i + 1)))
        })
        .collect::<Result<Vec<_>>>()?;
    let p = FedParams::try_from(r)?;
    let table = p.table(csv)?;
    let mut rng = rng_for_seed(p.seed)?;
    let c = crate::pipelines::federated::contribute(
        table,
        p.schema.as_ref(),
        &key,
        &peers,
        &p.options,
        &mut rng,
    )?;
    key.used_contexts.push(c.context.clone());
    let key_json = serde_json::to_string_pretty(&key)
        .map_err(|e| Error::Internal(format!("cannot write the key: {e}")))?;
    Ok((c.to_json(), key_json))
}

/// `federatedAggregate`: averages contribution files into `{csv, receipt}`.
pub fn federated_aggregate(contributions: &[String]) -> Result<(String, FedReceipt)> {
    let parsed = contributions
        .iter()
        .enumerate()
        .map(|(i, c)| {
            crate::pipelines::federated::Contribution::from_json(
                c,
                &format!("contribution {}", i + 1),
            )
        })
        .collect::<Result<Vec<_>>>()?;
    let w = csv_sink();
    let receipt = crate::pipelines::federated::aggregate(
        &parsed,
        |h| w.borrow_mut().write_record(h).map_err(csv_write_err),
        |row| w.borrow_mut().write_record(row).map_err(csv_write_err),
    )?;
    Ok((csv_string(w)?, receipt))
}
