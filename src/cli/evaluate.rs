//! `privmix evaluate`: train on one CSV (e.g. synthetic), test on another (real).

use super::print_json;
use clap::{Args, ValueEnum};
use privmix::data::{read_csv_path, CsvOptions, MissingPolicy};
use privmix::error::{Error, Result};
use privmix::eval::evaluate_tables;
use privmix::eval::Model;
use std::path::PathBuf;

/// The model.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum ModelArg {
    /// Multinomial logistic regression.
    Logreg,
    /// CART.
    Tree,
}

#[derive(Args)]
pub(crate) struct EvaluateArgs {
    /// Training CSV (e.g. synthetic).
    #[arg(long)]
    train: PathBuf,
    /// Test CSV (real held-out data).
    #[arg(long)]
    test: PathBuf,
    /// Label column.
    #[arg(long)]
    label: String,
    /// logreg (multinomial logistic regression) or tree (CART).
    #[arg(long, value_enum, default_value = "logreg")]
    model: ModelArg,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn run(a: EvaluateArgs) -> Result<()> {
    let model: Model = super::name_of(&a.model).parse()?;
    let opts = CsvOptions {
        label: Some(a.label.clone()),
        // Every row counts: a missing number takes the training mean beside an indicator.
        missing: MissingPolicy::Keep,
        ..CsvOptions::default()
    };
    let train = read_csv_path(&a.train, &opts)?;
    let test = read_csv_path(&a.test, &opts)?;
    let r = evaluate_tables(&train, &test, model)?;
    if r.test_rows_unseen_label > 0 {
        eprintln!(
            "privmix: warning: {} of {} test rows have a label the training file does not have ({}); each counts as an error",
            r.test_rows_unseen_label,
            r.test_rows,
            r.unseen_labels
                .iter()
                .map(|l| format!("'{l}'"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if a.json {
        print_json(
            &serde_json::to_value(&r)
                .map_err(|e| Error::Internal(format!("cannot serialize the result: {e}")))?,
        );
    } else {
        println!(
            "accuracy = {:.4} ({} on {} training rows, {} test rows)",
            r.accuracy, r.model, r.train_rows, r.test_rows
        );
    }
    Ok(())
}
