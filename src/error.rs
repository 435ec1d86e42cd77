//! One error type for the whole crate. Every message names the offending value and the fix,
//! because it is shown verbatim to a user (CLI stderr, a JS `Error` in the browser).
//!
//! An error has a [`kind`](Error::kind) (what JS reads as `error.name`) and, for a bad
//! parameter, a parameter identity ([`Param`]): the canonical snake_case name of the option
//! (`sigma_x`). Core messages never name a CLI flag or a JS key; the front ends render the
//! identity their way ([`Error::render`]): `--sigma-x` in the CLI, `sigmaX` in JS.

/// Crate-wide result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, as a category a program can test (JS: `error.name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A parameter is missing, out of range or inconsistent with another (`ParameterError`).
    Parameter,
    /// The input data cannot be used as given (`DataError`).
    Data,
    /// The operation was stopped by its caller (`AbortError`).
    Abort,
    /// A bug or an environment failure (`InternalError`).
    Internal,
}

impl ErrorKind {
    /// The JS error name: `ParameterError`, `DataError`, `AbortError` or `InternalError`.
    pub fn js_name(self) -> &'static str {
        match self {
            ErrorKind::Parameter => "ParameterError",
            ErrorKind::Data => "DataError",
            ErrorKind::Abort => "AbortError",
            ErrorKind::Internal => "InternalError",
        }
    }
}

/// A parameter's identity: its canonical snake_case name (`sigma_x`), whatever form it was
/// given in (`--sigma-x`, `sigma-x`, `sigmaX` and `sigma_x` all give `sigma_x`). The library's
/// own messages (`Display`) keep the spelling it was given, without leading dashes.
#[derive(Debug, Clone)]
pub struct Param {
    id: String,
    shown: String,
}

impl PartialEq for Param {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for Param {}

impl std::hash::Hash for Param {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.id.hash(state)
    }
}

impl Param {
    /// The identity of `name`, normalized to snake_case.
    pub fn new(name: &str) -> Self {
        let shown = name.trim_start_matches('-');
        let mut s = String::with_capacity(name.len() + 4);
        for c in shown.chars() {
            match c {
                '-' => s.push('_'),
                c if c.is_ascii_uppercase() => {
                    if !s.is_empty() && !s.ends_with('_') {
                        s.push('_');
                    }
                    s.push(c.to_ascii_lowercase());
                }
                c => s.push(c),
            }
        }
        Param {
            id: s,
            shown: shown.to_string(),
        }
    }

    /// The canonical name (`sigma_x`).
    pub fn as_str(&self) -> &str {
        &self.id
    }

    /// The CLI flag (`--sigma-x`).
    pub fn flag(&self) -> String {
        format!("--{}", self.id.replace('_', "-"))
    }

    /// The JS option key (`sigmaX`).
    pub fn js_key(&self) -> String {
        let mut out = String::with_capacity(self.id.len());
        let mut upper = false;
        for c in self.id.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                out.push(c.to_ascii_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        }
        out
    }
}

/// The spelling the library's own messages use (as given, without leading dashes).
impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// How a front end names parameters in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamStyle {
    /// The library's own spelling, as in `Display`.
    Canonical,
    /// Command-line flags (`--sigma-x`).
    Cli,
    /// JS option keys (`sigmaX`).
    Js,
}

impl ParamStyle {
    /// `p` rendered in this style.
    pub fn name(self, p: &Param) -> String {
        match self {
            ParamStyle::Canonical => p.to_string(),
            ParamStyle::Cli => p.flag(),
            ParamStyle::Js => p.js_key(),
        }
    }
}

/// Everything that can go wrong, with a message fit for an end user.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A user-supplied parameter is out of range.
    #[error("invalid {param} = {value}: {fix}")]
    Parameter {
        /// Which parameter (rendered at the edge: `--sigma-x`, `sigmaX`).
        param: Param,
        /// The offending value, formatted.
        value: String,
        /// What to do instead.
        fix: String,
    },
    /// A problem at a specific place of an input table (1-based data row, header excluded).
    #[error("{source_name}: row {row}, column '{column}': {message}")]
    Cell {
        /// File name or "input".
        source_name: String,
        /// 1-based data row (the header is row 0).
        row: usize,
        /// Column name.
        column: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A problem with the input data as a whole (empty file, missing column, tiny class...).
    #[error("{0}")]
    Data(String),
    /// The accountant cannot give a finite, trustworthy answer for the parameters given.
    #[error("accountant: {0}")]
    Accountant(String),
    /// File system errors, with the path.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The caller stopped the operation (a progress callback asked to stop).
    #[error("aborted: {0}")]
    Abort(String),
    /// A bug: an invariant of the library does not hold.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// Shorthand for [`Error::Parameter`]; `name` may be given in any style (`sigma_x`,
    /// `sigma-x`, `sigmaX`).
    pub fn param(
        name: impl AsRef<str>,
        value: impl std::fmt::Display,
        fix: impl Into<String>,
    ) -> Self {
        Error::Parameter {
            param: Param::new(name.as_ref()),
            value: short_number(value.to_string()),
            fix: fix.into(),
        }
    }

    /// Shorthand for [`Error::Io`].
    /// An operating-system "not found" says nothing about what to do; it becomes "there is no
    /// file or folder at this path; check the path" (same kind).
    pub fn io(path: impl Into<String>, source: std::io::Error) -> Self {
        let source =
            if source.kind() == std::io::ErrorKind::NotFound && source.raw_os_error().is_some() {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "there is no file or folder at this path; check the path",
                )
            } else {
                source
            };
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The error's category.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Parameter { .. } | Error::Accountant(_) => ErrorKind::Parameter,
            Error::Cell { .. } | Error::Data(_) | Error::Io { .. } => ErrorKind::Data,
            Error::Abort(_) => ErrorKind::Abort,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The parameter at fault, if the error is about one.
    pub fn param_id(&self) -> Option<&Param> {
        match self {
            Error::Parameter { param, .. } => Some(param),
            _ => None,
        }
    }

    /// The message with the parameter named in `style` (`invalid --mix = 0: ...` in the CLI,
    /// `invalid mix = 0: ...` in JS).
    pub fn render(&self, style: ParamStyle) -> String {
        match self {
            Error::Parameter { param, value, fix } => {
                format!("invalid {} = {value}: {fix}", style.name(param))
            }
            other => other.to_string(),
        }
    }
}

/// A number whose decimal text runs long (f64's `Display` writes 1e-300 with 300 zeros) in
/// exponent form; other values as they are. Rewritten as text (no float parsing, which would
/// add core's decimal-to-float code to every wasm build).
fn short_number(text: String) -> String {
    if text.len() <= 24 {
        return text;
    }
    let (sign, body) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text.as_str()),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) {
        return text;
    }
    let digits = format!("{int}{frac}");
    let Some(first) = digits.bytes().position(|c| c != b'0') else {
        return text;
    };
    let exp = int.len() as i64 - 1 - first as i64;
    let sig = digits[first..].trim_end_matches('0');
    let mantissa = if sig.len() > 1 {
        format!("{}.{}", &sig[..1], &sig[1..])
    } else {
        sig.to_string()
    };
    format!("{sign}{mantissa}e{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_identity_is_rendered_per_front_end() {
        for given in ["sigma_x", "--sigma-x", "sigma-x", "sigmaX"] {
            let p = Param::new(given);
            assert_eq!(p.as_str(), "sigma_x", "from {given}");
            assert_eq!(p.flag(), "--sigma-x");
            assert_eq!(p.js_key(), "sigmaX");
        }
        assert_eq!(Param::new("normalizeShare").flag(), "--normalize-share");
        assert_eq!(Param::new("epsilon").js_key(), "epsilon");
        let e = Error::param("sigmaX", -1, "give a positive number");
        assert_eq!(e.kind(), ErrorKind::Parameter);
        assert_eq!(e.param_id().map(Param::as_str), Some("sigma_x"));
        assert_eq!(
            e.render(ParamStyle::Cli),
            "invalid --sigma-x = -1: give a positive number"
        );
        assert_eq!(
            e.render(ParamStyle::Js),
            "invalid sigmaX = -1: give a positive number"
        );
        assert_eq!(Error::Data("x".into()).kind(), ErrorKind::Data);
        assert_eq!(Error::Data("x".into()).param_id(), None);
        assert_eq!(ErrorKind::Abort.js_name(), "AbortError");
        // A tiny or huge number is written in exponent form, not with hundreds of digits.
        let e = Error::param("epsilon", 1e-300, "x");
        assert_eq!(e.render(ParamStyle::Js), "invalid epsilon = 1e-300: x");
        for (x, want) in [
            (1.25e300, "1.25e300"),
            (-3.5e-40, "-3.5e-40"),
            (1e25, "1e25"),
        ] {
            assert_eq!(
                Error::param("x", x, "y").render(ParamStyle::Js),
                format!("invalid x = {want}: y")
            );
        }
        let e = Error::param("mix", "a value that is long but not a number at all", "y");
        assert!(e.to_string().contains("not a number at all"), "{e}");
        let e = Error::param("samples", 1e12 as u64, "x");
        assert_eq!(
            e.render(ParamStyle::Js),
            "invalid samples = 1000000000000: x"
        );
    }

    #[test]
    fn a_missing_file_is_said_with_the_fix_and_other_errors_keep_their_text() {
        let os = std::fs::File::open("/no/such/privmix/file.csv").unwrap_err();
        assert_eq!(os.kind(), std::io::ErrorKind::NotFound);
        let e = Error::io("/no/such/privmix/file.csv", os);
        assert_eq!(
            e.to_string(),
            "/no/such/privmix/file.csv: there is no file or folder at this path; check the path"
        );
        // A message written for the case (not the OS's) is kept, as is every other kind.
        let own = std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the folder 'x' does not exist",
        );
        assert_eq!(
            Error::io("x/y", own).to_string(),
            "x/y: the folder 'x' does not exist"
        );
        let denied = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "denied");
        assert_eq!(Error::io("p", denied).to_string(), "p: denied");
    }
}
