//! `privmix federated simulate|keygen|contribute|aggregate`: federated DP-CDA.

use super::{name_of, print_json, read_text, rng_for, same_file, Common, NormalizeArg, Staged};
use clap::{Args, Subcommand, ValueEnum};
use privmix::api::{FedParams, FedRequest};
use privmix::data::{read_csv_path, CsvOut, Table};
use privmix::error::{Error, Result};
use privmix::mechanisms::federated::pairwise::{PublicKeyFile, SecretKeyFile};
use privmix::pipelines::federated::{aggregate, contribute, simulate, Contribution};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The federated variant.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum VariantArg {
    /// Correlated noise that cancels in the average.
    Cape,
    /// Independent noise at each party.
    Conventional,
}

/// How simulated parties split the rows.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum PartitionArg {
    /// Uniformly at random.
    Iid,
    /// Half of each class at one party.
    Skewed,
}

#[derive(Subcommand)]
pub(crate) enum FedCommand {
    /// Simulate S parties on one CSV and release their aggregate.
    Simulate(FedSimulateArgs),
    /// Make this party's key pair: PATH (private, keep it) and PATH.pub (share it).
    Keygen(FedKeygenArgs),
    /// Make this party's contribution file from its own CSV.
    Contribute(FedContributeArgs),
    /// Average the parties' contribution files into the synthetic CSV and its receipt.
    Aggregate(FedAggregateArgs),
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
struct FedFlags {
    /// cape (correlated noise that cancels in the average) or conventional.
    #[arg(long, value_enum, default_value = "cape")]
    variant: VariantArg,
    /// Input CSV (optionally gzip-compressed).
    #[arg(long)]
    input: PathBuf,
    /// Label column name.
    #[arg(long)]
    label: String,
    /// Target ε.
    #[arg(long)]
    epsilon: f64,
    /// δ.
    #[arg(long)]
    delta: f64,
    /// Mix order l.
    #[arg(long, default_value_t = 4)]
    mix: usize,
    /// L2 clip norm c, in normalized units (default: max(1, √(feature columns)/8)).
    #[arg(long)]
    clip: Option<f64>,
    /// Released rows T; each class gets ⌊T/K⌋.
    #[arg(long)]
    samples: Option<u64>,
    /// Normalization: dp (default) or public (bounds from --schema); simulate also takes data.
    #[arg(long, value_enum, default_value = "dp")]
    normalize: NormalizeArg,
    /// Share of ε spent on DP normalization.
    #[arg(long, default_value_t = 0.1)]
    normalize_share: f64,
    /// Schema JSON overriding column types, bounds and categories.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Fixed seed: for tests only; the receipt then says "seeded, not for release".
    #[arg(long)]
    seed: Option<u64>,
    /// t: the guarantee holds against an aggregator holding the pairwise seeds of t parties
    /// (1: any one party aggregates; 0: a seedless aggregator, assumed; at most S − 1).
    #[arg(long, default_value_t = 1)]
    aggregator_seeds: usize,
    /// Types of columns the schema does not type: dp (default: decided under DP at each
    /// party) or data (inferred from the data, NOT protected).
    #[arg(long, value_enum, default_value = "dp")]
    column_types: super::synth::ColumnTypesArg,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct FedSimulateArgs {
    /// Number of parties S.
    #[arg(long)]
    clients: usize,
    /// iid (default) or skewed (half of each class at one party).
    #[arg(long, value_enum, default_value = "iid")]
    partition: PartitionArg,
    #[command(flatten)]
    params: FedFlags,
    /// Output CSV.
    #[arg(long)]
    output: PathBuf,
    /// Privacy receipt JSON.
    #[arg(long)]
    receipt: PathBuf,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct FedKeygenArgs {
    /// This party's id (distinct within the federation).
    #[arg(long)]
    party: u32,
    /// Private key path; the public key goes to PATH.pub.
    #[arg(long)]
    out: PathBuf,
    /// Fixed seed: for tests only.
    #[arg(long)]
    seed: Option<u64>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
#[command(allow_negative_numbers = true)]
pub(crate) struct FedContributeArgs {
    /// This party's id (must match the key).
    #[arg(long)]
    party: u32,
    /// This party's private key file.
    #[arg(long)]
    key: PathBuf,
    /// The other parties' public key files, comma-separated.
    #[arg(long, value_delimiter = ',')]
    peers: Vec<PathBuf>,
    /// Agreed floor on every party's smallest class size (so all parties calibrate alike).
    #[arg(long)]
    pool: Option<usize>,
    /// Agreed session label (bound into the correlated noise streams).
    #[arg(long)]
    session: Option<String>,
    #[command(flatten)]
    params: FedFlags,
    /// Contribution file to send to the aggregator.
    #[arg(long)]
    output: PathBuf,
}

#[derive(Args)]
pub(crate) struct FedAggregateArgs {
    /// Contribution files, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    inputs: Vec<PathBuf>,
    /// Output CSV.
    #[arg(long)]
    output: PathBuf,
    /// Privacy receipt JSON.
    #[arg(long)]
    receipt: PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

impl FedFlags {
    /// The request these flags make (the seed stays with the CLI, which says it is seeded).
    fn request(&self) -> Result<FedRequest> {
        Ok(FedRequest {
            label: self.label.clone(),
            variant: Some(name_of(&self.variant)),
            epsilon: self.epsilon,
            delta: Some(self.delta),
            mix: Some(self.mix),
            clip: self.clip,
            samples: self.samples,
            normalize: Some(name_of(&self.normalize)),
            normalize_share: Some(self.normalize_share),
            schema: None,
            preset: self.common.preset(),
            clients: None,
            partition: None,
            pool: None,
            session: None,
            aggregator_seeds: Some(self.aggregator_seeds),
            column_types: Some(name_of(&self.column_types)),
            orders: self.common.orders()?,
            seed: None,
        })
    }
}

/// The checked parameters of a federated run (`request` adds the subcommand's own flags) and
/// its table as read: the run decides the column types, then encodes the records
/// (`federated_records`).
fn fed_inputs(
    flags: &FedFlags,
    request: impl FnOnce(&mut FedRequest),
) -> Result<(FedParams, Table)> {
    let mut r = flags.request()?;
    request(&mut r);
    let mut params = FedParams::try_from(&r)?;
    if let Some(path) = &flags.schema {
        params.schema = Some(privmix::data::Schema::from_json(&read_text(path)?)?);
    }
    let table = read_csv_path(&flags.input, &params.csv_options())?;
    Ok((params, table))
}

/// Says how many records had no label (public under the federated adjacency).
fn say_unlabelled(dropped: usize) {
    if dropped > 0 {
        eprintln!("privmix: dropped {dropped} record(s) without a label");
    }
}

fn check_distinct(input: &Path, outputs: &[&Path]) -> Result<()> {
    for (i, o) in outputs.iter().enumerate() {
        if same_file(input, o) {
            return Err(Error::param(
                "output",
                o.display(),
                "the output must not overwrite the input",
            ));
        }
        if outputs[..i].contains(o) {
            return Err(Error::param(
                "receipt",
                o.display(),
                "the receipt and the output must be different files",
            ));
        }
    }
    Ok(())
}

/// Writes a CSV through `fill` and a receipt, atomically.
fn write_csv_and_receipt(
    output: &Path,
    receipt_path: &Path,
    fill: impl FnOnce(
        &mut dyn FnMut(&[String]) -> Result<()>,
    ) -> Result<privmix::pipelines::federated::FedReceipt>,
) -> Result<privmix::pipelines::federated::FedReceipt> {
    let mut staged = Staged::new();
    let (_, out_file) = staged.file(output)?;
    let out_name = output.display().to_string();
    let mut writer = CsvOut::new(out_file);
    let receipt = {
        let mut put = |cells: &[String]| {
            writer
                .write_record(cells)
                .map_err(|e| Error::Data(format!("{out_name}: cannot write: {e}")))
        };
        fill(&mut put)?
    };
    writer
        .into_inner()
        .map_err(|e| Error::Data(format!("{out_name}: cannot write: {e}")))?
        .sync_all()
        .map_err(|e| Error::io(out_name.clone(), e))?;
    let (_, mut rf) = staged.file(receipt_path)?;
    rf.write_all(receipt.to_json().as_bytes())
        .map_err(|e| Error::io(receipt_path.display().to_string(), e))?;
    staged.commit()?;
    Ok(receipt)
}

fn fed_summary(
    r: &privmix::pipelines::federated::FedReceipt,
    output: &Path,
    receipt: &Path,
) -> serde_json::Value {
    json!({
        "epsilon": r.epsilon, "delta": r.delta, "variant": r.variant, "mode": r.mode,
        "meets_target": r.meets_target,
        "aggregator_seeds": r.parameters.aggregator_seeds,
        "epsilon_party_aggregator": r.views.party_aggregator.epsilon,
        "epsilon_client": r.views.client.epsilon, "epsilon_aggregate": r.views.aggregate.epsilon,
        "epsilon_paper_claim": r.views.paper_claim.epsilon,
        "rows": r.parameters.rows_written, "parties_missing": r.parameters.parties_missing,
        "output": output, "receipt": receipt, "seeded": r.seeded,
    })
}

fn print_fed_summary(
    json_out: bool,
    r: &privmix::pipelines::federated::FedReceipt,
    output: &Path,
    receipt: &Path,
) {
    super::print_unprotected(&r.guarantee);
    if json_out {
        print_json(&fed_summary(r, output, receipt));
    } else {
        eprintln!(
            "privmix: wrote {} rows to {} ({} {}, ε = {:.4} against an aggregator holding {} parties' pairwise seeds [client view {:.4}, aggregate view {:.4}], δ = {}); receipt in {}",
            r.parameters.rows_written,
            output.display(),
            r.variant.name(),
            r.mode,
            r.epsilon,
            r.parameters.aggregator_seeds,
            r.views.client.epsilon,
            r.views.aggregate.epsilon,
            r.delta,
            receipt.display()
        );
        for w in &r.warnings {
            eprintln!("privmix: warning: {w}");
        }
    }
}

fn run_fed_simulate(a: FedSimulateArgs) -> Result<()> {
    check_distinct(&a.params.input, &[&a.output, &a.receipt])?;
    let (p, table) = fed_inputs(&a.params, |r| {
        r.clients = Some(a.clients);
        r.partition = Some(name_of(&a.partition));
    })?;
    let simulation = p.simulation()?;
    let mut rng = rng_for(a.params.seed)?;
    let receipt = write_csv_and_receipt(&a.output, &a.receipt, |put| {
        let put = std::cell::RefCell::new(put);
        simulate(
            table,
            p.schema.as_ref(),
            &p.options,
            simulation,
            &mut rng,
            |names| (put.borrow_mut())(names),
            |cells| (put.borrow_mut())(cells),
        )
    })?;
    say_unlabelled(receipt.data.rows_dropped);
    print_fed_summary(a.params.common.json, &receipt, &a.output, &a.receipt);
    Ok(())
}

fn run_fed_keygen(a: FedKeygenArgs) -> Result<()> {
    let mut rng = rng_for(a.seed)?;
    let (secret, public) = privmix::pipelines::federated::keygen(a.party, &mut rng);
    let pub_path = PathBuf::from(format!("{}.pub", a.out.display()));
    for p in [&a.out, &pub_path] {
        if p.exists() {
            return Err(Error::param(
                "out",
                p.display(),
                "the file exists; keys must be fresh, so choose a new path (or delete the old key)",
            ));
        }
    }
    let mut staged = Staged::new();
    let (tmp, mut f) = staged.file(&a.out)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(a.out.display().to_string(), e))?;
    }
    let _ = &tmp;
    f.write_all(secret.as_bytes())
        .map_err(|e| Error::io(a.out.display().to_string(), e))?;
    let (_, mut g) = staged.file(&pub_path)?;
    g.write_all(public.as_bytes())
        .map_err(|e| Error::io(pub_path.display().to_string(), e))?;
    staged.commit()?;
    if a.json {
        print_json(&json!({"party": a.party, "private_key": a.out, "public_key": pub_path}));
    } else {
        eprintln!(
            "privmix: party {}: private key in {} (keep it), public key in {} (share it with the other parties)",
            a.party,
            a.out.display(),
            pub_path.display()
        );
    }
    Ok(())
}

fn run_fed_contribute(a: FedContributeArgs) -> Result<()> {
    let mut key = SecretKeyFile::from_json(&read_text(&a.key)?)?;
    if key.party != a.party {
        return Err(Error::param(
            "party",
            a.party,
            format!(
                "the key {} belongs to party {}; pass your own key or --party {}",
                a.key.display(),
                key.party,
                key.party
            ),
        ));
    }
    if a.peers.is_empty() {
        return Err(Error::param(
            "peers",
            "(none)",
            "list the other parties' public key files: --peers A.pub,B.pub",
        ));
    }
    let peers = a
        .peers
        .iter()
        .map(|p| {
            PublicKeyFile::from_json(&read_text(p)?)
                .map_err(|e| Error::Data(format!("{}: {e}", p.display())))
        })
        .collect::<Result<Vec<_>>>()?;
    check_distinct(&a.params.input, &[&a.output, &a.key])?;
    let (p, table) = fed_inputs(&a.params, |r| {
        r.pool = a.pool;
        r.session = a.session.clone();
    })?;
    let mut rng = rng_for(a.params.seed)?;
    let c = contribute(table, p.schema.as_ref(), &key, &peers, &p.options, &mut rng)?;
    say_unlabelled(c.accounting.rows_dropped);
    key.used_contexts.push(c.context.clone());
    let mut staged = Staged::new();
    let (_, mut f) = staged.file(&a.output)?;
    f.write_all(c.to_json().as_bytes())
        .map_err(|e| Error::io(a.output.display().to_string(), e))?;
    f.sync_all()
        .map_err(|e| Error::io(a.output.display().to_string(), e))?;
    let (ktmp, mut kf) = staged.file(&a.key)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ktmp, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(a.key.display().to_string(), e))?;
    }
    let _ = &ktmp;
    kf.write_all(
        serde_json::to_string_pretty(&key)
            .map_err(|e| Error::Internal(format!("cannot write the key: {e}")))?
            .as_bytes(),
    )
    .map_err(|e| Error::io(a.key.display().to_string(), e))?;
    staged.commit()?;
    // The aggregate's receipt declares it; the party whose types came from its data is told
    // now.
    if c.accounting.types_from_data {
        super::say_unprotected(
            privmix::pipelines::federated::UNPROTECTED_TYPES,
            "the aggregate receipt's",
        );
    }
    // This party's own warnings (its column-type decision's and its normalization's), which
    // its file carries to the aggregator.
    super::print_warnings(
        [&c.column_types["warnings"], &c.normalization["warnings"]]
            .into_iter()
            .filter_map(|w| w.as_array())
            .flatten()
            .filter_map(|w| w.as_str()),
    );
    if a.params.common.json {
        print_json(&json!({
            "party": c.party, "context": c.context, "rows": c.rows, "coordinates": c.coordinates.len(),
            "tau_g": c.accounting.tau_g, "tau_e": c.accounting.tau_e, "pool": c.accounting.pool,
            "output": a.output, "seeded": c.seeded,
        }));
    } else {
        eprintln!(
            "privmix: party {}: wrote its contribution ({} rows × {} coordinates) to {}; send it to the aggregator",
            c.party,
            c.rows,
            c.coordinates.len(),
            a.output.display()
        );
    }
    Ok(())
}

fn run_fed_aggregate(a: FedAggregateArgs) -> Result<()> {
    for i in &a.inputs {
        check_distinct(i, &[&a.output, &a.receipt])?;
    }
    let contributions = a
        .inputs
        .iter()
        .map(|p| Contribution::from_json(&read_text(p)?, &p.display().to_string()))
        .collect::<Result<Vec<_>>>()?;
    let receipt = write_csv_and_receipt(&a.output, &a.receipt, |put| {
        let put = std::cell::RefCell::new(put);
        aggregate(
            &contributions,
            |names| (put.borrow_mut())(names),
            |cells| (put.borrow_mut())(cells),
        )
    })?;
    print_fed_summary(a.json, &receipt, &a.output, &a.receipt);
    Ok(())
}

impl FedCommand {
    /// Whether the output is JSON.
    pub fn json(&self) -> bool {
        match self {
            FedCommand::Simulate(a) => a.params.common.json,
            FedCommand::Keygen(a) => a.json,
            FedCommand::Contribute(a) => a.params.common.json,
            FedCommand::Aggregate(a) => a.json,
        }
    }
}

pub(crate) fn run(c: FedCommand) -> Result<()> {
    match c {
        FedCommand::Simulate(a) => run_fed_simulate(a),
        FedCommand::Keygen(a) => run_fed_keygen(a),
        FedCommand::Contribute(a) => run_fed_contribute(a),
        FedCommand::Aggregate(a) => run_fed_aggregate(a),
    }
}
