//! The CSV reader.
//!
//! The input is streamed once (never held in memory as a whole when it comes from a file):
//! header, delimiter, ragged/malformed-row checks, missing-value row drops, type inference
//! (or schema checks) and the values themselves, stored as they come (`f32` values or `u32`
//! codes). A column without a schema type is stored as numbers until a cell is not a number;
//! if numbers were stored by then, that column alone is read again in a second pass (the
//! cells' text is needed for its categories). Most inputs are read once.
//!
//! Peak memory is therefore about the size of the final table plus the category
//! dictionaries (columns grow as they are read and are trimmed to size at the end). Gzip
//! input (magic bytes `1f 8b`) is decompressed on the fly; a UTF-8 BOM is stripped; CRLF,
//! LF and CR-only line endings are accepted; fields are trimmed.
//!
//! Error messages name the place as `row R (line L)`: `R` is the 1-based data row (the
//! header is row 0; empty lines are not rows) and `L` the physical line where the row
//! starts, counting CRLF, LF and lone CR as one line break each. The line number is found
//! by re-reading the input up to the row, only when an error is reported.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use super::{
    natural_cmp, Column, ColumnSpec, CsvOptions, MissingPolicy, Table, TypeInference,
    DEFAULT_SOURCE_NAME, MISSING_LEVEL,
};
use crate::error::{Error, Result};

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const BOM: &[u8] = b"\xEF\xBB\xBF";
const CHUNK: usize = 1 << 16;
/// At most this many header names are listed in an error message.
const MAX_NAMES_LISTED: usize = 40;

/// Reads a CSV table from memory (plain or gzip-compressed bytes).
///
///
/// Accepted: gzip-compressed or plain input, a UTF-8 BOM, CRLF/LF/CR line endings,
/// quoted fields, `,`/`;`/tab delimiters (detected from the header), fields trimmed of
/// surrounding whitespace; missing values are `''`, `NA` and `?`. Error messages locate
/// problems as `row R (line L)`: `R` is the 1-based data row (header = row 0), `L` the
/// physical line where that row starts. See [`CsvOptions`] for the options.
pub fn read_csv_bytes(bytes: &[u8], opts: &CsvOptions) -> Result<Table> {
    let src = Source {
        kind: SourceKind::Bytes(bytes),
        name: opts.source_name.clone(),
        max_bytes: opts.max_bytes,
    };
    read_table(&src, opts)
}

/// Reads a CSV table from a file (plain or gzip-compressed), streaming it (once in the usual
/// case; see the module note).
///
/// If `opts.source_name` is the default (`"input"`) or empty, error messages name the
/// file by its file name. A file that cannot be opened gives [`Error::Io`] with the path.
pub fn read_csv_path(path: &Path, opts: &CsvOptions) -> Result<Table> {
    let name = if opts.source_name.is_empty() || opts.source_name == DEFAULT_SOURCE_NAME {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string())
    } else {
        opts.source_name.clone()
    };
    let src = Source {
        kind: SourceKind::Path(path),
        name,
        max_bytes: opts.max_bytes,
    };
    read_table(&src, opts)
}

/// A byte stream the reader can read from: [`Read`], and `Send` natively (the parser reads
/// on a second thread there).
#[cfg(not(target_arch = "wasm32"))]
pub trait ByteStream: Read + Send {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Read + Send + ?Sized> ByteStream for T {}
/// A byte stream the reader can read from: [`Read`] (the wasm build parses on one thread).
#[cfg(target_arch = "wasm32")]
pub trait ByteStream: Read {}
#[cfg(target_arch = "wasm32")]
impl<T: Read + ?Sized> ByteStream for T {}

/// Opens a [`read_csv_stream`] input at its start, each time it is called.
pub type OpenStream<'a> = dyn Fn() -> io::Result<Box<dyn ByteStream + 'a>> + 'a;

/// Reads a CSV table, as [`read_csv_bytes`] does, from a stream of `len` bytes that `open`
/// opens from its start (plain or gzip-compressed). The input is never held whole: the
/// browser build reads a file the user chose a slice at a time, so its memory holds the
/// table, not the file's bytes as well. `open` is called again where a second pass or an
/// error's line number needs it.
pub fn read_csv_stream<'a>(open: &'a OpenStream<'a>, len: u64, opts: &CsvOptions) -> Result<Table> {
    let src = Source {
        kind: SourceKind::Stream { open, len },
        name: opts.source_name.clone(),
        max_bytes: opts.max_bytes,
    };
    read_table(&src, opts)
}

// ---------------------------------------------------------------------------------------
// Byte sources
// ---------------------------------------------------------------------------------------

enum SourceKind<'a> {
    Bytes(&'a [u8]),
    Path(&'a Path),
    Stream { open: &'a OpenStream<'a>, len: u64 },
}

struct Source<'a> {
    kind: SourceKind<'a>,
    name: String,
    max_bytes: u64,
}

/// Failures of the byte pipeline, carried through `io::Error` so the csv crate passes them on.
#[derive(Debug)]
enum Fault {
    TooLarge,
    Gzip(String),
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::TooLarge => write!(f, "input larger than the limit"),
            Fault::Gzip(m) => write!(f, "gzip: {m}"),
        }
    }
}

impl std::error::Error for Fault {}

/// Counts decompressed bytes and fails once more than `max` have been produced.
struct Limit<R> {
    inner: R,
    seen: u64,
    max: u64,
}

impl<R: Read> Read for Limit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen += n as u64;
        if self.seen > self.max {
            return Err(io::Error::other(Fault::TooLarge));
        }
        Ok(n)
    }
}

/// Tags errors of the gzip decoder so they can be reported as corrupt data.
struct GzRead<R>(R);

impl<R: Read> Read for GzRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0
            .read(buf)
            .map_err(|e| io::Error::other(Fault::Gzip(e.to_string())))
    }
}

/// Quote state of the raw byte stream, mirroring csv-core's default rules: a quote opens a
/// quoted field only at the start of a field; `""` inside a quoted field is an escaped quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QState {
    FieldStart,
    Unquoted,
    Quoted,
    QuoteInQuoted,
}

/// Passes bytes through while tracking [`QState`], so an unterminated quote can be detected
/// at the end of the input (the csv crate silently accepts it).
struct QuoteTrack<R> {
    inner: R,
    delim: u8,
    state: QState,
    enabled: bool,
}

impl<R: Read> Read for QuoteTrack<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.enabled {
            let d = self.delim;
            let mut s = self.state;
            for &b in &buf[..n] {
                let end = b == d || b == b'\n' || b == b'\r';
                s = match s {
                    QState::FieldStart | QState::Unquoted if end => QState::FieldStart,
                    QState::FieldStart if b == b'"' => QState::Quoted,
                    QState::FieldStart | QState::Unquoted => QState::Unquoted,
                    QState::Quoted if b == b'"' => QState::QuoteInQuoted,
                    QState::Quoted => QState::Quoted,
                    QState::QuoteInQuoted if b == b'"' => QState::Quoted,
                    QState::QuoteInQuoted if end => QState::FieldStart,
                    QState::QuoteInQuoted => QState::Unquoted,
                };
            }
            self.state = s;
        }
        Ok(n)
    }
}

/// Finds the delimiter from the header line: counts `,`, `;` and tab outside quotes up to
/// the first line break after some content. Returns true once the header line is complete.
#[derive(Default)]
struct HeaderScan {
    in_quotes: bool,
    started: bool,
    counts: [usize; 3],
}

impl HeaderScan {
    fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if self.in_quotes {
                if b == b'"' {
                    self.in_quotes = false;
                }
                continue;
            }
            match b {
                b'\r' | b'\n' if self.started => return true,
                b'\r' | b'\n' => {}
                b'"' => {
                    self.in_quotes = true;
                    self.started = true;
                }
                b',' => self.counts[0] += 1,
                b';' => self.counts[1] += 1,
                b'\t' => self.counts[2] += 1,
                _ => {}
            }
            if b != b'\r' && b != b'\n' {
                self.started = true;
            }
        }
        false
    }

    /// Most frequent candidate; ties prefer `,` then `;` then tab; none found: `,`.
    fn delimiter(&self) -> u8 {
        const CANDIDATES: [u8; 3] = [b',', b';', b'\t'];
        let mut best = 0;
        for i in 1..3 {
            if self.counts[i] > self.counts[best] {
                best = i;
            }
        }
        CANDIDATES[best]
    }
}

fn read_some(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match r.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

impl<'a> Source<'a> {
    /// Opens the decompressed, size-limited byte stream (BOM not yet stripped).
    fn open(&self) -> Result<Box<dyn ByteStream + 'a>> {
        let raw: Box<dyn ByteStream + 'a> = match self.kind {
            SourceKind::Bytes(b) => {
                if b.starts_with(&GZIP_MAGIC) {
                    Box::new(GzRead(MultiGzDecoder::new(b)))
                } else {
                    if b.len() as u64 > self.max_bytes {
                        return Err(self.too_large(Some(b.len() as u64)));
                    }
                    Box::new(b)
                }
            }
            SourceKind::Path(p) => {
                let file = File::open(p).map_err(|e| Error::io(p.display().to_string(), e))?;
                self.buffered(file, |f| {
                    f.metadata().map(|m| m.len()).map_err(|e| self.map_io(e))
                })?
            }
            SourceKind::Stream { open, len } => {
                self.buffered(open().map_err(|e| self.map_io(e))?, |_| Ok(len))?
            }
        };
        Ok(Box::new(Limit {
            inner: raw,
            seen: 0,
            max: self.max_bytes,
        }))
    }

    /// `r` buffered, and decompressed when it starts with gzip's magic; plain, its size
    /// (`len`) checked against the limit first.
    fn buffered<R: ByteStream + 'a>(
        &self,
        r: R,
        len: impl FnOnce(&R) -> Result<u64>,
    ) -> Result<Box<dyn ByteStream + 'a>> {
        let mut br = BufReader::with_capacity(CHUNK, r);
        if br
            .fill_buf()
            .map_err(|e| self.map_io(e))?
            .starts_with(&GZIP_MAGIC)
        {
            return Ok(Box::new(GzRead(MultiGzDecoder::new(br))));
        }
        let len = len(br.get_ref())?;
        if len > self.max_bytes {
            return Err(self.too_large(Some(len)));
        }
        Ok(Box::new(br))
    }

    /// The input's size in bytes when it is known before reading (not for gzip).
    fn size_hint(&self) -> Option<u64> {
        match self.kind {
            SourceKind::Bytes(b) => (!b.starts_with(&GZIP_MAGIC)).then_some(b.len() as u64),
            SourceKind::Path(p) => {
                let mut magic = [0u8; 2];
                let mut f = File::open(p).ok()?;
                let n = read_some(&mut f, &mut magic).ok()?;
                if n == 2 && magic == GZIP_MAGIC {
                    return None;
                }
                Some(f.metadata().ok()?.len())
            }
            SourceKind::Stream { open, len } => {
                let mut magic = [0u8; 2];
                let n = read_some(&mut open().ok()?, &mut magic).ok()?;
                (!(n == 2 && magic == GZIP_MAGIC)).then_some(len)
            }
        }
    }

    /// Opens the stream ready for the csv parser: BOM stripped, delimiter detected.
    fn open_csv(&self) -> Result<(Box<dyn ByteStream + 'a>, u8)> {
        let mut r = self.open()?;
        let mut prefix = Vec::new();
        let mut chunk = vec![0u8; CHUNK];
        let mut scan = HeaderScan::default();
        loop {
            let n = read_some(&mut r, &mut chunk).map_err(|e| self.map_io(e))?;
            if n == 0 {
                break;
            }
            prefix.extend_from_slice(&chunk[..n]);
            if scan.feed(&chunk[..n]) {
                break;
            }
        }
        if prefix.starts_with(BOM) {
            prefix.drain(..BOM.len());
        }
        Ok((Box::new(Cursor::new(prefix).chain(r)), scan.delimiter()))
    }

    /// 1-based physical line on which the record starting at `byte` (offset after the BOM)
    /// begins. Re-reads the input; `None` if that fails.
    fn line_at(&self, byte: u64) -> Option<u64> {
        let mut r = self.open().ok()?;
        let mut buf = vec![0u8; CHUNK];
        let mut line = 1u64;
        let mut prev_cr = false;
        let mut pos = 0u64; // offset after the BOM
        let mut first = true;
        loop {
            let n = read_some(&mut r, &mut buf).ok()?;
            if n == 0 {
                return Some(line);
            }
            let mut start = 0;
            if first {
                first = false;
                if buf[..n].starts_with(BOM) {
                    start = BOM.len();
                }
            }
            for &b in &buf[start..n] {
                // The csv crate reports the position before skipped empty lines, so keep
                // counting line breaks that directly follow `byte`.
                if pos >= byte && b != b'\r' && b != b'\n' {
                    return Some(line);
                }
                if b == b'\r' || (b == b'\n' && !prev_cr) {
                    line += 1;
                }
                prev_cr = b == b'\r';
                pos += 1;
            }
        }
    }

    /// "name: row R (line L)" (or "name: header (line L)" for row 0).
    fn at(&self, row: usize, byte: Option<u64>) -> String {
        let line = byte.and_then(|b| self.line_at(b));
        let what = if row == 0 {
            "header".to_string()
        } else {
            format!("row {row}")
        };
        match line {
            Some(l) => format!("{}: {what} (line {l})", self.name),
            None => format!("{}: {what}", self.name),
        }
    }

    fn row_err(&self, row: usize, byte: Option<u64>, msg: impl fmt::Display) -> Error {
        Error::Data(format!("{}: {msg}", self.at(row, byte)))
    }

    fn cell_err(&self, row: usize, byte: Option<u64>, col: &str, msg: impl fmt::Display) -> Error {
        Error::Data(format!("{}, column '{col}': {msg}", self.at(row, byte)))
    }

    fn too_large(&self, size: Option<u64>) -> Error {
        let max = self.max_bytes;
        let what = match size {
            Some(s) => format!("the input is {s} bytes ({}), over", human(s)),
            None => "the decompressed input exceeds".to_string(),
        };
        Error::Data(format!(
            "{}: {what} the limit of {max} bytes ({}); subsample the rows (e.g. keep a random subset of lines) or raise the size limit",
            self.name,
            human(max)
        ))
    }

    fn map_io(&self, e: io::Error) -> Error {
        match e.get_ref().and_then(|inner| inner.downcast_ref::<Fault>()) {
            Some(Fault::TooLarge) => self.too_large(None),
            Some(Fault::Gzip(m)) => Error::Data(format!(
                "{}: the gzip data is corrupt or truncated ({m}); re-compress the file or provide it uncompressed",
                self.name
            )),
            None => match self.kind {
                SourceKind::Path(p) => Error::io(p.display().to_string(), e),
                SourceKind::Bytes(_) | SourceKind::Stream { .. } => {
                    Error::io(self.name.clone(), e)
                }
            },
        }
    }

    fn csv_err(&self, e: csv::Error) -> Error {
        match e.into_kind() {
            csv::ErrorKind::Io(io) => self.map_io(io),
            csv::ErrorKind::Utf8 { pos, err } => {
                let row = pos.as_ref().map(|p| p.record() as usize).unwrap_or(0);
                self.row_err(
                    row,
                    pos.map(|p| p.byte()),
                    format_args!(
                        "field {} is not valid UTF-8 text; save the file with UTF-8 encoding",
                        err.field() + 1
                    ),
                )
            }
            other => Error::Data(format!("{}: malformed CSV: {other:?}", self.name)),
        }
    }

    /// Streams the records (header = index 0) to `f`, with the delimiter and the start byte
    /// of each record. With `check_quotes`, an unterminated quoted field is reported before
    /// its record is handed on. Returns the delimiter.
    fn for_each_record(
        &self,
        check_quotes: bool,
        mut f: impl FnMut(u8, usize, Option<u64>, &csv::StringRecord) -> Result<()>,
    ) -> Result<u8> {
        let (rdr, delim) = self.reader(check_quotes)?;
        let mut f =
            |row: usize, byte: Option<u64>, rec: &csv::StringRecord| f(delim, row, byte, rec);
        #[cfg(not(target_arch = "wasm32"))]
        if !self.records_pipelined(rdr, check_quotes, &mut f)? {
            // No second thread could be started (nothing was read): read on this one.
            let (rdr, _) = self.reader(check_quotes)?;
            self.records_in_order(rdr, check_quotes, &mut f)?;
        }
        #[cfg(target_arch = "wasm32")]
        self.records_in_order(rdr, check_quotes, &mut f)?;
        Ok(delim)
    }

    /// The csv reader over the input, and the delimiter.
    #[allow(clippy::type_complexity)]
    fn reader(
        &self,
        check_quotes: bool,
    ) -> Result<(csv::Reader<QuoteTrack<Box<dyn ByteStream + 'a>>>, u8)> {
        let (input, delim) = self.open_csv()?;
        let tracked = QuoteTrack {
            inner: input,
            delim,
            state: QState::FieldStart,
            enabled: check_quotes,
        };
        let rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .delimiter(delim)
            .buffer_capacity(CHUNK)
            .from_reader(tracked);
        Ok((rdr, delim))
    }

    /// [`Source::for_each_record`] on one thread (wasm32; natively when no thread can be
    /// started, and the tests' reference).
    fn records_in_order<R: Read>(
        &self,
        mut rdr: csv::Reader<QuoteTrack<R>>,
        check_quotes: bool,
        f: &mut impl FnMut(usize, Option<u64>, &csv::StringRecord) -> Result<()>,
    ) -> Result<()> {
        let mut cur = csv::StringRecord::new();
        let mut next = csv::StringRecord::new();
        let mut have = rdr.read_record(&mut cur).map_err(|e| self.csv_err(e))?;
        let mut index = 0usize;
        while have {
            let more = rdr.read_record(&mut next).map_err(|e| self.csv_err(e))?;
            let byte = cur.position().map(|p| p.byte());
            if !more && check_quotes && rdr.get_ref().state == QState::Quoted {
                return Err(self.unterminated(index, byte));
            }
            f(index, byte, &cur)?;
            std::mem::swap(&mut cur, &mut next);
            have = more;
            index += 1;
        }
        Ok(())
    }

    fn unterminated(&self, index: usize, byte: Option<u64>) -> Error {
        self.row_err(
            index,
            byte,
            "a quoted field is never closed (unterminated '\"'), so the rest of the file was read as one field; close the quote, and write quotes inside quoted fields as \"\"",
        )
    }

    /// [`Source::for_each_record`] natively: a second thread splits the records (and
    /// decompresses) while the calling thread runs `f`, batch by batch. Everything `f` sees
    /// and every error are as in the one-thread loop: a record is handed to `f` only once
    /// the next one has been read (a read error comes before `f` sees the record in front
    /// of it), and the last one only after the unterminated-quote check. `Ok(false)`: no
    /// thread could be started, and nothing was read.
    #[cfg(not(target_arch = "wasm32"))]
    fn records_pipelined<R: Read + Send>(
        &self,
        mut rdr: csv::Reader<QuoteTrack<R>>,
        check_quotes: bool,
        f: &mut impl FnMut(usize, Option<u64>, &csv::StringRecord) -> Result<()>,
    ) -> Result<bool> {
        use std::sync::mpsc;
        /// Records per batch.
        const BATCH: usize = 256;
        let (full_tx, full_rx) = mpsc::sync_channel::<(Vec<csv::StringRecord>, usize)>(2);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<csv::StringRecord>>();
        std::thread::scope(|scope| {
            // Returns whether the input ends inside a quoted field.
            let parser = std::thread::Builder::new()
                .name("privmix-csv".into())
                .spawn_scoped(scope, move || -> std::result::Result<bool, csv::Error> {
                    loop {
                        let mut batch = empty_rx
                            .try_recv()
                            .unwrap_or_else(|_| vec![csv::StringRecord::new(); BATCH]);
                        let mut len = 0;
                        let mut failed = None;
                        while len < BATCH {
                            match rdr.read_record(&mut batch[len]) {
                                Ok(true) => len += 1,
                                Ok(false) => break,
                                Err(e) => {
                                    failed = Some(e);
                                    break;
                                }
                            }
                        }
                        // The records read before a failure still go out (all but the last of
                        // them reach `f`, as in the one-thread loop).
                        if len > 0 && full_tx.send((batch, len)).is_err() {
                            return Ok(false); // the caller stopped
                        }
                        if let Some(e) = failed {
                            return Err(e);
                        }
                        if len < BATCH {
                            return Ok(rdr.get_ref().state == QState::Quoted);
                        }
                    }
                });
            let Ok(parser) = parser else {
                return Ok(false);
            };
            let mut held: Option<csv::StringRecord> = None;
            let mut index = 0usize;
            let mut outcome = Ok(());
            for (mut batch, len) in full_rx.iter() {
                for rec in batch[..len].iter_mut() {
                    if let Some(prev) = held.as_mut() {
                        outcome = f(index, prev.position().map(|p| p.byte()), prev);
                        if outcome.is_err() {
                            break;
                        }
                        index += 1;
                        std::mem::swap(prev, rec);
                    } else {
                        held = Some(std::mem::take(rec));
                    }
                }
                if outcome.is_err() {
                    break;
                }
                // Back for reuse; the parser may be done with it already.
                let _ = empty_tx.send(batch);
            }
            // Ends the parser if `f` stopped early (its next send fails).
            drop(full_rx);
            let parsed = parser
                .join()
                .map_err(|_| Error::Internal("the CSV reader thread panicked".into()))?;
            outcome?;
            let quoted = parsed.map_err(|e| self.csv_err(e))?;
            if let Some(last) = held {
                let byte = last.position().map(|p| p.byte());
                if check_quotes && quoted {
                    return Err(self.unterminated(index, byte));
                }
                f(index, byte, &last)?;
            }
            Ok(true)
        })
    }
}

fn human(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.2} GiB", b / GIB)
    } else if b >= MIB {
        format!("{:.1} MiB", b / MIB)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// Whether a trimmed cell is a missing-value token (see [`super::MISSING_TOKENS`]).
pub(crate) fn is_missing(v: &str) -> bool {
    // No token starts with a digit: most numeric cells are answered by their first byte.
    if v.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    v.is_empty()
        || v.len() <= 9
            && super::MISSING_TOKENS
                .iter()
                .any(|t| !t.is_empty() && v.eq_ignore_ascii_case(t))
}

/// A cell's value read as a number.
enum Num {
    Finite(f64),
    NonFinite,
    OutOfRange,
    NotNumber,
}

fn classify(v: &str, decimal_comma: bool) -> Num {
    // Same result as `v.parse::<f64>()`, faster for plain integers; with `decimal_comma`
    // (a `;`- or tab-delimited file) "1,5" is 1.5 as well.
    match super::fastnum::parse_number(v, decimal_comma) {
        Err(_) => Num::NotNumber,
        Ok(x) if x.is_nan() => Num::NonFinite,
        // "1e400" parses as infinity but was written as a (huge) number.
        Ok(x) if x.is_infinite() && v.to_ascii_lowercase().contains("inf") => Num::NonFinite,
        Ok(x) if !(x as f32).is_finite() => Num::OutOfRange,
        Ok(x) => Num::Finite(x),
    }
}

fn msg_non_finite(v: &str) -> String {
    format!(
        "value '{v}' is not a finite number; replace it with an empty cell to mark it missing, or declare the column categorical in a schema"
    )
}

fn msg_out_of_range(v: &str) -> String {
    format!(
        "value '{v}' is outside the 32-bit float range (about ±3.4e38); rescale the column, or declare it categorical in a schema"
    )
}

pub(crate) fn list_names(names: &[String]) -> String {
    let shown: Vec<&str> = names
        .iter()
        .take(MAX_NAMES_LISTED)
        .map(String::as_str)
        .collect();
    let mut s = shown.join(", ");
    if names.len() > MAX_NAMES_LISTED {
        s.push_str(&format!(", ... ({} columns in all)", names.len()));
    }
    s
}

// ---------------------------------------------------------------------------------------
// The reader (pass 1, and pass 2 for columns typed late)
// ---------------------------------------------------------------------------------------

/// What a kept column becomes.
#[derive(Debug, Clone)]
enum Kind {
    /// Schema says numeric: values are checked as they come.
    SchemaNumeric { integer: Option<bool> },
    /// Categorical (label, or schema): `categories` fixes the leading levels.
    Categorical { categories: Option<Vec<String>> },
    /// No schema entry: inferred in pass 1.
    Infer,
}

/// First problem value of an inferred column, reported only if the column ends up numeric.
struct Bad {
    row: usize,
    byte: Option<u64>,
    message: String,
}

struct InferState {
    numeric: bool,
    integral: bool,
    bad: Option<Bad>,
}

/// The final type of a kept column.
enum Final {
    Numeric { integer: bool },
    Categorical { categories: Option<Vec<String>> },
}

/// A column's cells as pass 1 reads them.
enum Store {
    /// Numbers (`NaN` for a missing or unusable cell under the keep policy). For an inferred
    /// column this is a guess that holds until a cell is not a number; `only_missing` says
    /// whether every value so far came from a missing cell (then the guess can still turn
    /// into a categorical column without reading the rows again).
    Numeric {
        values: Vec<f32>,
        only_missing: bool,
    },
    Categorical(Codes),
    /// An inferred column that turned out categorical after numbers had been stored: its
    /// cells are read again in pass 2.
    Deferred,
}

/// Category codes in order of first appearance (sorted into levels at the end).
struct Codes {
    codes: Vec<u32>,
    map: HashMap<String, u32>,
    seen: Vec<String>,
}

impl Codes {
    fn new() -> Self {
        Codes {
            codes: Vec::new(),
            map: HashMap::new(),
            seen: Vec::new(),
        }
    }

    /// Appends the code of `v`; None when there are more than u32::MAX levels.
    fn push(&mut self, v: &str) -> Option<()> {
        let code = match self.map.get(v) {
            Some(&c) => c,
            None => {
                let c = u32::try_from(self.seen.len()).ok()?;
                self.seen.push(v.to_string());
                self.map.insert(v.to_string(), c);
                c
            }
        };
        self.codes.push(code);
        Some(())
    }
}

/// Rows after which the columns reserve room for the rows the input's size suggests, so that
/// they do not grow by doubling: in wasm32 every doubling copies the column and can leave the
/// freed block unused, which costs time and peak memory.
const ESTIMATE_AFTER: usize = 256;

/// The error for a column with more than 2^32 distinct values.
fn too_many_levels(src: &Source<'_>, name: &str) -> Error {
    Error::Data(format!(
        "{}: column '{name}' has more than 2^32 distinct values; declare it ignored in a schema",
        src.name
    ))
}

/// Pass 1 of [`read_table`]: the header's plan, each kept column's type inference and
/// values, and the record counts.
#[derive(Default)]
struct Pass1 {
    names: Vec<String>,
    /// Header field index of each kept column.
    active: Vec<usize>,
    kinds: Vec<Kind>,
    label_index: Option<usize>,
    infer: Vec<InferState>,
    stores: Vec<Store>,
    /// Missing cells per kept column (counted where records with one are dropped).
    missing_counts: Vec<usize>,
    n_records: usize,
    n_kept: usize,
    dropped: usize,
    /// The file is delimited by `;` or tabs: numbers may be written with a decimal comma.
    decimal_comma: bool,
}

impl Pass1 {
    /// After [`ESTIMATE_AFTER`] rows: reserve room for the rows a `size`-byte input holds
    /// (`at` bytes read so far).
    fn reserve(&mut self, size: u64, at: u64, row: usize) {
        if at > 0 && self.n_kept > 0 {
            // Bytes per record so far (the header and rows 1..row), records in all with
            // 2 % to spare (a record takes at least two bytes, which caps the estimate),
            // times the share of the data rows kept so far.
            let per = at as f64 / row as f64;
            let rows = ((size as f64 / per) * 1.02).min(size as f64 / 2.0 + 1.0);
            let want = (rows * self.n_kept as f64 / (row - 1) as f64) as usize;
            for st in &mut self.stores {
                match st {
                    Store::Numeric { values, .. } => {
                        values.reserve_exact(want.saturating_sub(values.len()))
                    }
                    Store::Categorical(c) => {
                        c.codes.reserve_exact(want.saturating_sub(c.codes.len()))
                    }
                    Store::Deferred => {}
                }
            }
        }
    }

    /// The header: the columns kept, their kinds and the label.
    fn header(
        &mut self,
        src: &Source<'_>,
        rec: &csv::StringRecord,
        opts: &CsvOptions,
    ) -> Result<()> {
        self.names = rec.iter().map(|s| s.trim().to_string()).collect();
        let plan = plan_columns(src, &self.names, opts)?;
        self.active = plan.0;
        self.kinds = plan.1;
        self.label_index = plan.2;
        self.infer = Vec::with_capacity(self.active.len());
        self.infer.extend(self.active.iter().map(|_| InferState {
            numeric: true,
            integral: true,
            bad: None,
        }));
        self.stores = self
            .kinds
            .iter()
            .map(|k| match k {
                Kind::Categorical { .. } => Store::Categorical(Codes::new()),
                Kind::SchemaNumeric { .. } | Kind::Infer => Store::Numeric {
                    values: Vec::new(),
                    only_missing: true,
                },
            })
            .collect();
        self.missing_counts = vec![0; self.active.len()];
        Ok(())
    }

    /// One data record: its field count, missing cells (dropped, kept or an error), and each
    /// kept column's value.
    fn record(
        &mut self,
        src: &Source<'_>,
        opts: &CsvOptions,
        row: usize,
        byte: Option<u64>,
        rec: &csv::StringRecord,
    ) -> Result<()> {
        let keep = opts.missing == MissingPolicy::Keep;
        self.n_records = row;
        if rec.len() != self.names.len() {
            return Err(src.row_err(
                row,
                byte,
                format_args!(
                    "found {} fields, expected {} (the header has {} columns); check for an unquoted delimiter inside a value or a missing or extra field",
                    rec.len(),
                    self.names.len(),
                    self.names.len()
                ),
            ));
        }
        // Dropping or refusing records with a missing value looks at every cell first (and
        // counts the missing ones per column for the all-dropped error); keeping them (the
        // pipeline's policy) needs no such pass: the cells are read once, below.
        if !keep
            && self.drops_record(src, rec, (row, byte), opts.missing == MissingPolicy::Error)?
        {
            self.dropped += 1;
            return Ok(());
        }
        self.n_kept += 1;
        for (k, &f) in self.active.iter().enumerate() {
            let v = super::fastnum::trim(rec.get(f).unwrap_or(""));
            if keep && is_missing(v) {
                match &mut self.stores[k] {
                    Store::Numeric { values, .. } => values.push(f32::NAN),
                    Store::Categorical(c) => c
                        .push(MISSING_LEVEL)
                        .ok_or_else(|| too_many_levels(src, &self.names[f]))?,
                    Store::Deferred => {}
                }
                continue;
            }
            // The value this cell gives a numeric column (NaN: unusable, kept as missing).
            let number = match &self.kinds[k] {
                Kind::Categorical { .. } => f32::NAN,
                // Unparsable cells of a numeric column are missing values. No error can
                // depend on one record's value: a non-integral value in an "integer"
                // column is kept (outputs are rounded) and text becomes missing.
                Kind::SchemaNumeric { .. } if keep => match classify(v, self.decimal_comma) {
                    Num::Finite(x) => x as f32,
                    _ => f32::NAN,
                },
                Kind::SchemaNumeric { integer } => {
                    let col = &self.names[f];
                    schema_number(src, (row, byte), col, *integer, v, self.decimal_comma)?
                }
                // A column already known not to be numeric takes no number.
                Kind::Infer if !self.infer[k].numeric => f32::NAN,
                Kind::Infer => match classify(v, self.decimal_comma) {
                    // Kept as missing: a non-finite or out-of-range cell is no error here.
                    Num::NonFinite | Num::OutOfRange if keep => f32::NAN,
                    num => infer_cell(&mut self.infer[k], &mut self.stores[k], num, v, row, byte),
                },
            };
            match &mut self.stores[k] {
                Store::Numeric {
                    values,
                    only_missing,
                } => {
                    values.push(number);
                    *only_missing = false;
                }
                Store::Categorical(c) => c
                    .push(v)
                    .ok_or_else(|| too_many_levels(src, &self.names[f]))?,
                Store::Deferred => {}
            }
        }
        Ok(())
    }

    /// Whether the record at (row, byte) has a missing cell, so that it is dropped; with
    /// `refuse` (the missing-value policy `Error`) that is an error naming the cell. Counts
    /// the missing cells per column for the all-dropped error.
    fn drops_record(
        &mut self,
        src: &Source<'_>,
        rec: &csv::StringRecord,
        (row, byte): (usize, Option<u64>),
        refuse: bool,
    ) -> Result<bool> {
        let mut first_missing = None;
        for (k, &f) in self.active.iter().enumerate() {
            if is_missing(super::fastnum::trim(rec.get(f).unwrap_or(""))) {
                self.missing_counts[k] += 1;
                first_missing.get_or_insert(k);
            }
        }
        let Some(k) = first_missing else {
            return Ok(false);
        };
        if refuse {
            let v = super::fastnum::trim(rec.get(self.active[k]).unwrap_or(""));
            return Err(src.cell_err(
                row,
                byte,
                &self.names[self.active[k]],
                format_args!(
                    "missing value '{v}'; fill it in, or let rows with missing values be dropped (the default missing-value policy)"
                ),
            ));
        }
        Ok(true)
    }
}

/// A cell `v` (read as `num`) of a column whose type is being inferred and still numeric:
/// its number (NaN when it is not one). Text turns the column categorical (its numbers so
/// far are not the cells' text: without any, only missing cells so far, the column starts
/// its codes here; else it is read again in pass 2). The first non-finite or out-of-range
/// value is remembered for the error a numeric column gets.
fn infer_cell(
    st: &mut InferState,
    store: &mut Store,
    num: Num,
    v: &str,
    row: usize,
    byte: Option<u64>,
) -> f32 {
    let message = match num {
        Num::Finite(x) => {
            st.integral &= crate::math::fract(x) == 0.0;
            return x as f32;
        }
        Num::NotNumber => {
            st.numeric = false;
            st.bad = None;
            *store = match store {
                Store::Numeric {
                    values,
                    only_missing: true,
                } => {
                    let mut c = Codes::new();
                    for _ in 0..values.len() {
                        c.push(MISSING_LEVEL);
                    }
                    Store::Categorical(c)
                }
                _ => Store::Deferred,
            };
            return f32::NAN;
        }
        Num::NonFinite => msg_non_finite(v),
        Num::OutOfRange => msg_out_of_range(v),
    };
    if st.bad.is_none() {
        st.bad = Some(Bad { row, byte, message });
    }
    f32::NAN
}

/// A cell of a column the schema declares numeric, read strictly (the missing-value policy
/// is not `Keep`): a number, an integer where the schema says so, or an error naming the
/// cell and the fix.
fn schema_number(
    src: &Source<'_>,
    (row, byte): (usize, Option<u64>),
    col: &str,
    integer: Option<bool>,
    v: &str,
    decimal_comma: bool,
) -> Result<f32> {
    match classify(v, decimal_comma) {
        Num::Finite(x) => {
            if integer == Some(true) && crate::math::fract(x) != 0.0 {
                return Err(src.cell_err(row, byte, col, format_args!(
                    "value '{v}' is not an integer, but the schema declares this column \"integer\": true; fix the value or set \"integer\": false"
                )));
            }
            Ok(x as f32)
        }
        Num::NonFinite => Err(src.cell_err(row, byte, col, msg_non_finite(v))),
        Num::OutOfRange => Err(src.cell_err(row, byte, col, msg_out_of_range(v))),
        Num::NotNumber => Err(src.cell_err(row, byte, col, format_args!(
            "value '{v}' is not a number, but the schema declares this column numeric; fix the value, leave the cell empty to mark it missing, or declare the column categorical"
        ))),
    }
}

fn read_table(src: &Source<'_>, opts: &CsvOptions) -> Result<Table> {
    if let Some(schema) = &opts.schema {
        schema.validate()?;
    }
    // ---- Pass 1: checks, types and (in the usual case) the values ----------------------
    let mut pass = Pass1::default();
    let size = src.size_hint();
    let delimiter = src.for_each_record(true, |delim, row, byte, rec| {
        if let (ESTIMATE_AFTER, Some(size), Some(at)) = (row, size, byte) {
            pass.reserve(size, at, row);
        }
        if row == 0 {
            pass.decimal_comma = delim != b',';
            return pass.header(src, rec, opts);
        }
        pass.record(src, opts, row, byte, rec)
    })?;
    let Pass1 {
        names,
        active,
        kinds,
        label_index,
        infer,
        mut stores,
        missing_counts,
        n_records,
        n_kept,
        dropped,
        decimal_comma: _,
    } = pass;
    let keep = opts.missing == MissingPolicy::Keep;
    check_rows_kept(
        src,
        &names,
        &active,
        &missing_counts,
        n_records,
        n_kept,
        dropped,
    )?;
    let finals = final_kinds(src, &names, &active, kinds, infer)?;
    // ---- Pass 2, only for columns typed categorical after numbers were stored -----------
    read_deferred(src, keep, &names, &active, &mut stores, n_records, n_kept)?;
    let mut columns = Vec::with_capacity(stores.len());
    for (store, fin) in stores.into_iter().zip(finals) {
        columns.push(finish_column(store, fin)?);
    }
    Ok(Table {
        names: active.iter().map(|&f| names[f].clone()).collect(),
        columns,
        n_rows: n_kept,
        rows_dropped: dropped,
        label_index,
        delimiter,
    })
}

/// The errors for a file with no header, no data rows, or every data row dropped for a
/// missing value (naming the columns with the most missing cells).
fn check_rows_kept(
    src: &Source<'_>,
    names: &[String],
    active: &[usize],
    missing_counts: &[usize],
    n_records: usize,
    n_kept: usize,
    dropped: usize,
) -> Result<()> {
    if names.is_empty() {
        return Err(Error::Data(format!(
            "{}: the file is empty; expected a header row and at least one data row",
            src.name
        )));
    }
    if n_records == 0 {
        return Err(Error::Data(format!(
            "{}: the header was found but there are no data rows; expected at least one data row below the header",
            src.name
        )));
    }
    if n_kept == 0 {
        let mut worst: Vec<(usize, &str)> = missing_counts
            .iter()
            .zip(active)
            .filter(|(&c, _)| c > 0)
            .map(|(&c, &f)| (c, names[f].as_str()))
            .collect();
        worst.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        let listed: Vec<String> = worst
            .iter()
            .take(5)
            .map(|(c, n)| format!("'{n}' ({c} rows)"))
            .collect();
        return Err(Error::Data(format!(
            "{}: all {dropped} data rows were dropped because they have a missing value ('', NA or ?); columns with missing values: {}. Fill in the missing values, or exclude such columns with {{\"type\": \"ignore\"}} in a schema",
            src.name,
            listed.join(", ")
        )));
    }
    Ok(())
}

/// Each kept column's final type: the schema's, or the one inferred in pass 1 (an error for
/// an inferred numeric column with a non-finite or out-of-range value).
fn final_kinds(
    src: &Source<'_>,
    names: &[String],
    active: &[usize],
    kinds: Vec<Kind>,
    mut infer: Vec<InferState>,
) -> Result<Vec<Final>> {
    let mut finals = Vec::with_capacity(kinds.len());
    for (k, kind) in kinds.into_iter().enumerate() {
        finals.push(match kind {
            Kind::SchemaNumeric { integer } => Final::Numeric {
                integer: integer.unwrap_or(infer[k].integral),
            },
            Kind::Categorical { categories } => Final::Categorical { categories },
            Kind::Infer => {
                let st = &mut infer[k];
                if !st.numeric {
                    Final::Categorical { categories: None }
                } else if let Some(bad) = st.bad.take() {
                    return Err(src.cell_err(bad.row, bad.byte, &names[active[k]], bad.message));
                } else {
                    Final::Numeric {
                        integer: st.integral,
                    }
                }
            }
        });
    }
    Ok(finals)
}

/// Pass 2: reads again the columns that turned out categorical after numbers were stored
/// for them, refusing an input that changed between the passes.
fn read_deferred(
    src: &Source<'_>,
    keep: bool,
    names: &[String],
    active: &[usize],
    stores: &mut [Store],
    n_records: usize,
    n_kept: usize,
) -> Result<()> {
    let deferred: Vec<usize> = (0..stores.len())
        .filter(|&k| matches!(stores[k], Store::Deferred))
        .collect();
    if !deferred.is_empty() {
        let changed = || {
            Error::Data(format!(
                "{}: the input changed while it was being read (it is read twice); read it again once it is complete",
                src.name
            ))
        };
        let mut codes: Vec<Codes> = deferred.iter().map(|_| Codes::new()).collect();
        let mut kept2 = 0usize;
        let mut records2 = 0usize;
        src.for_each_record(false, |_, row, _byte, rec| {
            if row == 0 {
                let same =
                    rec.len() == names.len() && rec.iter().zip(names).all(|(a, b)| a.trim() == b);
                return if same { Ok(()) } else { Err(changed()) };
            }
            records2 = row;
            if rec.len() != names.len() {
                return Err(changed());
            }
            if !keep
                && active
                    .iter()
                    .any(|&f| is_missing(super::fastnum::trim(rec.get(f).unwrap_or(""))))
            {
                return Ok(());
            }
            if kept2 >= n_kept {
                return Err(changed());
            }
            kept2 += 1;
            for (c, &k) in codes.iter_mut().zip(&deferred) {
                let v = super::fastnum::trim(rec.get(active[k]).unwrap_or(""));
                let v = if keep && is_missing(v) {
                    MISSING_LEVEL
                } else {
                    v
                };
                c.push(v)
                    .ok_or_else(|| too_many_levels(src, &names[active[k]]))?;
            }
            Ok(())
        })?;
        if kept2 != n_kept || records2 != n_records {
            return Err(changed());
        }
        for (c, &k) in codes.into_iter().zip(&deferred) {
            stores[k] = Store::Categorical(c);
        }
    }
    Ok(())
}

/// Decides, from the header, which columns are kept and how each is typed.
/// Returns (header field index per kept column, kind per kept column, label index in the
/// kept columns).
fn plan_columns(
    src: &Source<'_>,
    names: &[String],
    opts: &CsvOptions,
) -> Result<(Vec<usize>, Vec<Kind>, Option<usize>)> {
    let empty: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|(_, n)| n.is_empty())
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if !empty.is_empty() {
        return Err(Error::Data(format!(
            "{}: the header has empty column names (column {}); give every column a name in the first row",
            src.name,
            empty.join(", ")
        )));
    }
    let mut seen = HashSet::new();
    let mut dups: Vec<&str> = Vec::new();
    for n in names {
        if !seen.insert(n.as_str()) && !dups.contains(&n.as_str()) {
            dups.push(n);
        }
    }
    if !dups.is_empty() {
        let listed: Vec<String> = dups.iter().map(|d| format!("'{d}'")).collect();
        return Err(Error::Data(format!(
            "{}: duplicate column names in the header: {}; rename them so every name is unique",
            src.name,
            listed.join(", ")
        )));
    }
    if let Some(label) = &opts.label {
        if !names.contains(label) {
            return Err(Error::Data(format!(
                "{}: label column '{label}' not found; the header has: {} (names are case-sensitive)",
                src.name,
                list_names(names)
            )));
        }
    }
    if let Some(schema) = &opts.schema {
        schema.check_header(&src.name, names, opts.label.as_deref())?;
    }
    let schema_cols = opts.schema.as_ref().map(|s| &s.columns);
    let mut active = Vec::new();
    let mut kinds = Vec::new();
    let mut label_index = None;
    for (i, name) in names.iter().enumerate() {
        let spec = schema_cols.and_then(|c| c.get(name));
        let is_label = opts.label.as_deref() == Some(name.as_str());
        let kind = match (spec, is_label) {
            (Some(ColumnSpec::Categorical { categories }), _) => Kind::Categorical {
                categories: categories.clone(),
            },
            // The label, untyped (a schema declaring it numeric or "ignore" was refused by
            // `check_header`).
            (_, true) => Kind::Categorical { categories: None },
            (Some(ColumnSpec::Ignore), false) => continue,
            (Some(ColumnSpec::Numeric { integer, .. }), false) => {
                Kind::SchemaNumeric { integer: *integer }
            }
            // Deferred: kept as raw tokens until the caller decides the type (under DP).
            (None, false) if opts.types == TypeInference::Deferred => {
                Kind::Categorical { categories: None }
            }
            (None, false) => Kind::Infer,
        };
        if is_label {
            label_index = Some(active.len());
        }
        active.push(i);
        kinds.push(kind);
    }
    if active.is_empty() {
        return Err(Error::Data(format!(
            "schema: every column of {} is declared \"ignore\"; keep at least one column",
            src.name
        )));
    }
    Ok((active, kinds, label_index))
}

/// Turns pass-2 storage into a column; sorts categorical levels and remaps the codes.
fn finish_column(store: Store, fin: Final) -> Result<Column> {
    match (store, fin) {
        (Store::Numeric { mut values, .. }, Final::Numeric { integer }) => {
            values.shrink_to_fit();
            Ok(Column::Numeric { values, integer })
        }
        (Store::Categorical(c), Final::Categorical { categories }) => {
            let Codes {
                mut codes,
                map,
                seen,
            } = c;
            drop(map);
            codes.shrink_to_fit();
            let levels: Vec<String> = match categories {
                Some(cats) => {
                    let known: HashSet<&str> = cats.iter().map(String::as_str).collect();
                    let mut extra: Vec<&String> = seen
                        .iter()
                        .filter(|s| !known.contains(s.as_str()))
                        .collect();
                    extra.sort_by(|a, b| natural_cmp(a, b));
                    let mut levels = cats.clone();
                    levels.extend(extra.into_iter().cloned());
                    levels
                }
                None => {
                    let mut levels = seen.clone();
                    levels.sort_by(|a, b| natural_cmp(a, b));
                    levels
                }
            };
            let position: HashMap<&str, u32> = levels
                .iter()
                .enumerate()
                .map(|(i, l)| (l.as_str(), i as u32))
                .collect();
            let remap: Vec<u32> = seen
                .iter()
                .map(|s| position.get(s.as_str()).copied().unwrap_or(0))
                .collect();
            for c in &mut codes {
                *c = remap.get(*c as usize).copied().unwrap_or(0);
            }
            Ok(Column::Categorical { codes, levels })
        }
        _ => Err(Error::Internal(
            "the CSV reader stored a column as another type than it decided".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::path::PathBuf;

    use super::*;
    use crate::data::Schema;

    fn read(s: &str) -> Result<Table> {
        read_csv_bytes(s.as_bytes(), &CsvOptions::default())
    }

    fn read_with(s: &str, opts: &CsvOptions) -> Result<Table> {
        read_csv_bytes(s.as_bytes(), opts)
    }

    fn err(s: &str) -> String {
        read(s).expect_err("expected an error").to_string()
    }

    /// The two-thread reader hands `f` the same records (index, start byte, fields) and
    /// ends with the same error as the one-thread loop: across batch boundaries, with a read
    /// error (invalid UTF-8) at any record near one, an unterminated quote at the end, gzip
    /// input, and `f` stopping early.
    #[test]
    fn pipelined_records_match_the_one_thread_loop() {
        type Seen = Vec<(usize, Option<u64>, Vec<String>)>;
        let run = |bytes: &[u8], pipelined: bool, stop_at: Option<usize>| -> (Seen, String) {
            let src = Source {
                kind: SourceKind::Bytes(bytes),
                name: "t.csv".into(),
                max_bytes: u64::MAX,
            };
            let mut seen = Seen::new();
            let mut f = |i: usize, byte: Option<u64>, rec: &csv::StringRecord| -> Result<()> {
                seen.push((i, byte, rec.iter().map(str::to_string).collect()));
                if Some(i) == stop_at {
                    return Err(Error::Data(format!("stop at {i}")));
                }
                Ok(())
            };
            let (rdr, _) = src.reader(true).unwrap();
            let r = if pipelined {
                src.records_pipelined(rdr, true, &mut f)
                    .map(|started| assert!(started))
            } else {
                src.records_in_order(rdr, true, &mut f)
            };
            (seen, r.err().map(|e| e.to_string()).unwrap_or_default())
        };
        let table = |rows: usize| -> Vec<u8> {
            let mut t = b"a,b,c\n".to_vec();
            for i in 0..rows {
                t.extend_from_slice(format!("{i},\"x{i}\",{}\n", i % 7).as_bytes());
            }
            t
        };
        let mut cases: Vec<(Vec<u8>, Option<usize>)> = Vec::new();
        for rows in [0, 1, 254, 255, 256, 257, 511, 1000] {
            cases.push((table(rows), None));
        }
        // Invalid UTF-8 in the record at index `at` (header = 0).
        for at in [1, 255, 256, 257, 512, 513, 700] {
            let mut t = table(1000);
            let line = t
                .split(|&b| b == b'\n')
                .take(at)
                .map(|l| l.len() + 1)
                .sum::<usize>();
            t[line] = 0xff;
            cases.push((t, None));
        }
        let mut open = table(600);
        open.extend_from_slice(b"1,\"never closed,2\n3,4,5\n");
        cases.push((open, None));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&table(3000)).unwrap();
        cases.push((gz.finish().unwrap(), None));
        for stop in [0, 255, 256, 300, 1000] {
            cases.push((table(1000), Some(stop)));
        }
        for (bytes, stop) in &cases {
            let want = run(bytes, false, *stop);
            let got = run(bytes, true, *stop);
            assert_eq!(got, want, "stop {stop:?}");
        }
        // The cases reach what they are meant to: errors at the records, and the full run.
        let errors = cases
            .iter()
            .filter(|(b, s)| !run(b, false, *s).1.is_empty())
            .count();
        assert_eq!(errors, 7 + 1 + 5);
        assert_eq!(run(&table(1000), true, None).0.len(), 1001);
    }

    /// A stream that hands out at most 7 bytes a read (short reads, as a file read slice by
    /// slice gives them).
    struct Dribble<'b>(&'b [u8]);

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(7).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// A stream (opened again from its start as the reader needs it) reads as its bytes do:
    /// the same table, or the same error with the same row and line, for plain, BOM, CRLF,
    /// semicolon and gzip input, a column that turns categorical late, invalid UTF-8, an
    /// unterminated quote, an input over the size limit and an empty one.
    #[test]
    fn a_stream_reads_as_its_bytes_do() {
        let mut body = String::from("a,b,label\n");
        for i in 0..3000 {
            body.push_str(&format!("{},{}.5,{}\n", i % 11, i, ["x", "y"][i % 2]));
        }
        let late = format!("{body}oops,1,x\n");
        let mut bad_utf8 = body.clone().into_bytes();
        bad_utf8[400] = 0xff;
        let gz = gzip(body.as_bytes());
        let cases: Vec<(Vec<u8>, u64)> = vec![
            (body.clone().into_bytes(), u64::MAX),
            (
                format!("\u{feff}{}", body.replace('\n', "\r\n")).into_bytes(),
                u64::MAX,
            ),
            (body.replace(',', ";").into_bytes(), u64::MAX),
            (late.into_bytes(), u64::MAX),
            (gz, u64::MAX),
            (bad_utf8, u64::MAX),
            (b"a,b,label\n1,\"never closed,x\n".to_vec(), u64::MAX),
            (body.clone().into_bytes(), 1000),
            (Vec::new(), u64::MAX),
        ];
        let mut errors = 0;
        for (bytes, max) in &cases {
            let opts = CsvOptions {
                label: Some("label".into()),
                source_name: "s.csv".into(),
                max_bytes: *max,
                ..CsvOptions::default()
            };
            let opens = std::cell::Cell::new(0);
            let open = || -> io::Result<Box<dyn ByteStream + '_>> {
                opens.set(opens.get() + 1);
                Ok(Box::new(Dribble(bytes)))
            };
            let want = read_csv_bytes(bytes, &opts).map_err(|e| e.to_string());
            let got = read_csv_stream(&open, bytes.len() as u64, &opts).map_err(|e| e.to_string());
            assert_eq!(got, want, "{} bytes", bytes.len());
            assert!(opens.get() >= 1);
            errors += usize::from(want.is_err());
        }
        assert_eq!(
            errors, 4,
            "invalid UTF-8, the quote, the limit and the empty input"
        );
    }

    fn with_schema(json: &str) -> CsvOptions {
        CsvOptions {
            schema: Some(Schema::from_json(json).unwrap()),
            ..CsvOptions::default()
        }
    }

    fn num<'t>(t: &'t Table, name: &str) -> (&'t [f32], bool) {
        match &t.columns[t.column_index(name).unwrap()] {
            Column::Numeric { values, integer } => (values, *integer),
            other => panic!("{name} is not numeric: {other:?}"),
        }
    }

    /// (decoded values, levels)
    fn cat<'t>(t: &'t Table, name: &str) -> (Vec<&'t str>, &'t [String]) {
        match &t.columns[t.column_index(name).unwrap()] {
            Column::Categorical { codes, levels } => (
                codes.iter().map(|&c| levels[c as usize].as_str()).collect(),
                levels,
            ),
            other => panic!("{name} is not categorical: {other:?}"),
        }
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn bom_is_stripped() {
        let t = read("\u{FEFF}a,b\n1,x\n").unwrap();
        assert_eq!(t.names, ["a", "b"]);
        assert_eq!(num(&t, "a").0, [1.0]);
        // With another delimiter, in gzip, and with line numbers in errors. (csv-core
        // also strips a BOM; stripping it first keeps delimiter detection and byte
        // offsets independent of that.)
        let gz = gzip("\u{FEFF}a;b\n1;x\n".as_bytes());
        let t = read_csv_bytes(&gz, &CsvOptions::default()).unwrap();
        assert_eq!(t.delimiter, b';');
        assert_eq!(t.names, ["a", "b"]);
        let e = err("\u{FEFF}a;b\n1;x\ninf;y\n");
        assert!(e.contains("row 2 (line 3), column 'a'"), "{e}");
    }

    #[test]
    fn crlf_line_endings() {
        let t = read("a,b\r\n1,x\r\n2,y\r\n").unwrap();
        assert_eq!(t.n_rows, 2);
        assert_eq!(num(&t, "a").0, [1.0, 2.0]);
        assert_eq!(cat(&t, "b").0, ["x", "y"]);
    }

    #[test]
    fn cr_only_line_endings() {
        let t = read("a,b\r1,x\r2,y\r").unwrap();
        assert_eq!(t.n_rows, 2);
        assert_eq!(num(&t, "a").0, [1.0, 2.0]);
        assert_eq!(cat(&t, "b").0, ["x", "y"]);
        // Line numbers count lone CRs too.
        let e = err("a,b\r1,x\r2\r");
        assert!(e.contains("row 2 (line 3)"), "{e}");
    }

    #[test]
    fn quoted_fields_with_delimiters_quotes_and_newlines() {
        let t = read("name,note,n\n\"Smith, J\",\"said \"\"hi\"\"\nthen left\",1\nplain,x,2\n")
            .unwrap();
        assert_eq!(t.n_rows, 2);
        assert_eq!(cat(&t, "name").0, ["Smith, J", "plain"]);
        assert_eq!(cat(&t, "note").0, ["said \"hi\"\nthen left", "x"]);
        // The quoted newline counts as a line: row 2 starts on line 4.
        let e = err("a,b\n\"x\ny\",1\nz,inf\n");
        assert!(e.contains("row 2 (line 4), column 'b'"), "{e}");
    }

    #[test]
    fn fields_are_trimmed() {
        let t = read("a, b\n 1 , x \n2,  y\n").unwrap();
        assert_eq!(t.names, ["a", "b"]);
        assert_eq!(num(&t, "a").0, [1.0, 2.0]);
        assert_eq!(cat(&t, "b").0, ["x", "y"]);
    }

    #[test]
    fn semicolon_and_tab_are_detected() {
        let t = read("a;b;c\n1,5;x;2\n").unwrap();
        assert_eq!(t.delimiter, b';');
        assert_eq!(t.names, ["a", "b", "c"]);
        assert_eq!(num(&t, "a").0, [1.5], "a decimal comma in a ';' file");
        let t = read("a\tb\n1\t2\n").unwrap();
        assert_eq!(t.delimiter, b'\t');
        assert_eq!(num(&t, "b").0, [2.0]);
        // Delimiters inside quotes do not count.
        let t = read("\"a,b,c\";d\n1;2\n").unwrap();
        assert_eq!(t.delimiter, b';');
        assert_eq!(t.names, ["a,b,c", "d"]);
        let t = read("a,b\n1,2\n").unwrap();
        assert_eq!(t.delimiter, b',');
        // No candidate at all: a single column.
        let t = read("only\n1\n2\n").unwrap();
        assert_eq!((t.delimiter, t.n_cols(), t.n_rows), (b',', 1, 2));
    }

    /// Spreadsheets in many locales save `;`-delimited files with decimal commas: such a
    /// column is numeric, typed by the reader, by the schema and under deferred types alike;
    /// in a comma-delimited file a quoted "1,5" stays text.
    #[test]
    fn decimal_commas_are_numbers_where_the_delimiter_is_not_a_comma() {
        let text = "x;y;label\n1,5;2;a\n-0,25;3,75;b\n2;;a\n";
        // The default drops the record with a missing cell.
        let t = read(text).unwrap();
        assert_eq!(num(&t, "x"), (&[1.5, -0.25][..], false));
        assert_eq!(num(&t, "y").0, [2.0, 3.75]);
        let keep = CsvOptions {
            missing: MissingPolicy::Keep,
            ..CsvOptions::default()
        };
        let t = read_with(text, &keep).unwrap();
        assert_eq!(num(&t, "x").0, [1.5, -0.25, 2.0]);
        let y = num(&t, "y").0;
        assert_eq!((y[0], y[1], y[2].is_nan()), (2.0, 3.75, true));
        let tab = read("x\ty\n1,5\t2,0\n").unwrap();
        assert_eq!(
            (num(&tab, "x").0, num(&tab, "y").0),
            (&[1.5f32][..], &[2.0f32][..])
        );
        let opts = with_schema(r#"{"columns": {"x": {"type": "numeric", "integer": false}}}"#);
        assert_eq!(num(&read_with(text, &opts).unwrap(), "x").0, [1.5, -0.25]);
        // Deferred types keep the cells as text; the decision parses them the same way
        // (data::decide's tests).
        let deferred = CsvOptions {
            types: TypeInference::Deferred,
            ..keep
        };
        assert_eq!(read_with(text, &deferred).unwrap().delimiter, b';');
        // Not decimal commas: a comma-delimited file's quoted "1,5", and "1,234.5" anywhere.
        assert_eq!(cat(&read("x,y\n\"1,5\",1\n").unwrap(), "x").0, ["1,5"]);
        assert_eq!(cat(&read("x;y\n1,234.5;1\n").unwrap(), "x").0, ["1,234.5"]);
        // A schema-numeric cell that is not a number is still named.
        let e = read_with("x;y\n1,5;a\n1,2,3;b\n", &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("value '1,2,3' is not a number"), "{e}");
    }

    #[test]
    fn missing_values_drop_rows_and_are_counted() {
        let t = read("a,b\n1,x\n,y\nNA,z\n4,?\n5, w \n6,\n").unwrap();
        assert_eq!(t.n_rows, 2);
        assert_eq!(t.rows_dropped, 4);
        assert_eq!(num(&t, "a").0, [1.0, 5.0]);
        assert_eq!(cat(&t, "b").1, ["w", "x"]);
        // Dropped rows do not take part in type inference.
        let t = read("a,b\n1,x\nhello,?\n").unwrap();
        assert_eq!(num(&t, "a").0, [1.0]);
    }

    #[test]
    fn missing_policy_error_names_row_and_column() {
        let opts = CsvOptions {
            missing: MissingPolicy::Error,
            ..CsvOptions::default()
        };
        let e = read_with("a,b\n1,x\n2,NA\n", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("input: row 2 (line 3), column 'b': missing value 'NA'"),
            "{e}"
        );
        // The fix names the default policy in plain words.
        assert!(
            e.ends_with(
                "let rows with missing values be dropped (the default missing-value policy)"
            ),
            "{e}"
        );
        assert!(read_with("a,b\n1,x\n", &opts).is_ok());
    }

    #[test]
    fn type_inference() {
        let t = read("i,f,c,neg\n1,1.5,a,-3\n2,2,3,1e2\n").unwrap();
        assert_eq!(num(&t, "i"), (&[1.0f32, 2.0][..], true));
        assert_eq!(num(&t, "f"), (&[1.5f32, 2.0][..], false));
        assert_eq!(num(&t, "neg"), (&[-3.0f32, 100.0][..], true));
        assert_eq!(cat(&t, "c").1, ["3", "a"]);
        assert_eq!(t.label_index, None);
    }

    #[test]
    fn every_missing_token_is_missing_and_numbers_are_not() {
        for t in crate::data::MISSING_TOKENS {
            // The first-byte shortcut rests on this.
            assert!(!t.starts_with(|c: char| c.is_ascii_digit()), "{t}");
            assert!(is_missing(t), "{t:?}");
            assert!(is_missing(&t.to_ascii_uppercase()), "{t:?}");
        }
        for v in ["0", "255", "1e3", "-1", ".5", "NAN1", "(missing", "nan?"] {
            assert!(!is_missing(v), "{v:?}");
        }
    }

    /// After 256 rows the columns reserve room from the input's size; a wrong guess (rows
    /// that get longer or shorter later) still gives every row, and no spare room is kept.
    #[test]
    fn row_estimates_that_miss_still_read_every_row() {
        for (first, later) in [("1,2", "123456789.5,x"), ("123456789.5,x", "1,2")] {
            let mut csv = String::from("a,b\n");
            for _ in 0..300 {
                csv += first;
                csv += "\n";
            }
            for _ in 0..2000 {
                csv += later;
                csv += "\n";
            }
            let t = read(&csv).unwrap();
            assert_eq!(t.n_rows, 2300);
            let a = num(&t, "a").0;
            assert_eq!(a.len(), 2300);
            match &t.columns[0] {
                Column::Numeric { values, .. } => assert_eq!(values.capacity(), values.len()),
                c => panic!("{c:?}"),
            }
            let (b, _) = cat(&t, "b");
            assert_eq!(b.len(), 2300);
            assert_eq!(
                b.iter().filter(|v| **v == "x").count(),
                if first == "1,2" { 2000 } else { 300 }
            );
        }
    }

    /// The values are stored in pass 1; a column that turns out categorical after numbers
    /// were stored is read again. Every way a column can end gives the cells as written.
    #[test]
    fn columns_typed_late_keep_every_cell() {
        let keep = CsvOptions {
            missing: MissingPolicy::Keep,
            ..CsvOptions::default()
        };
        // a: numbers, then text (read again); b: only missing cells, then text (no second
        // read needed); c: numbers with missing cells (NaN); d: a non-finite cell, then text
        // (read again: 'inf' is a category); e: text from the first row.
        let t = read_with(
            "a,b,c,d,e\n1,,5,inf,x\n2.5,NA,,1,y\nq,r,7,z,x\n1,s,8,2,\n",
            &keep,
        )
        .unwrap();
        assert_eq!(cat(&t, "a").0, ["1", "2.5", "q", "1"]);
        assert_eq!(cat(&t, "b").0, [MISSING_LEVEL, MISSING_LEVEL, "r", "s"]);
        let (c, integer) = num(&t, "c");
        assert_eq!((c[0], c[2], c[3], integer), (5.0, 7.0, 8.0, true));
        assert!(c[1].is_nan());
        assert_eq!(cat(&t, "d").0, ["inf", "1", "z", "2"]);
        assert_eq!(cat(&t, "e").0, ["x", "y", "x", MISSING_LEVEL]);
        assert_eq!(t.n_rows, 4);
        // Under the default policy the dropped rows are not in any column, whichever pass
        // reads it.
        let t = read("a,b\n1,u\n,v\n2,w\nq,\n3,y\nz,x\n").unwrap();
        assert_eq!((t.n_rows, t.rows_dropped), (4, 2));
        assert_eq!(cat(&t, "a").0, ["1", "2", "3", "z"]);
        assert_eq!(cat(&t, "b").0, ["u", "w", "y", "x"]);
        // From a file, through both passes.
        let dir = std::env::temp_dir().join(format!("privmix-late-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("late.csv");
        std::fs::write(&path, "a,b\n1,2\n2,3\nx,4\n").unwrap();
        let t = read_csv_path(&path, &CsvOptions::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(cat(&t, "a").0, ["1", "2", "x"]);
        assert_eq!(num(&t, "b"), (&[2.0f32, 3.0, 4.0][..], true));
    }

    #[test]
    fn levels_are_in_natural_order() {
        let t = read("v\n10\n2\nb\na\n1.5\n2\n").unwrap();
        let (values, levels) = cat(&t, "v");
        assert_eq!(levels, ["1.5", "2", "10", "a", "b"]);
        assert_eq!(values, ["10", "2", "b", "a", "1.5", "2"]);
    }

    #[test]
    fn non_finite_values_are_errors() {
        let e = err("x,y\n1,a\ninf,b\n");
        assert_eq!(
            e,
            "input: row 2 (line 3), column 'x': value 'inf' is not a finite number; replace it with an empty cell to mark it missing, or declare the column categorical in a schema"
        );
        for bad in ["inf", "-Infinity", "+INF"] {
            let e = err(&format!("x\n1\n2\n{bad}\n"));
            assert!(
                e.contains(&format!("row 3 (line 4), column 'x': value '{bad}'")),
                "{e}"
            );
        }
        // Not every value is numeric: simply categorical.
        let t = read("x\ninf\nfoo\n").unwrap();
        assert_eq!(cat(&t, "x").1, ["foo", "inf"]);
        // NaN and nan are missing-value tokens.
        let t = read("x,y\n1,a\nNaN,b\nnan,c\n").unwrap();
        assert_eq!((t.n_rows, t.rows_dropped), (1, 2));
    }

    #[test]
    fn values_outside_f32_range_are_errors() {
        let e = err("x\n1\n1e39\n");
        assert!(
            e.contains("row 2 (line 3), column 'x': value '1e39'") && e.contains("32-bit"),
            "{e}"
        );
        let e = err("x\n-1e400\n");
        assert!(e.contains("value '-1e400'") && e.contains("32-bit"), "{e}");
        assert!(read("x\n3.4e38\n").is_ok());
    }

    #[test]
    fn ragged_rows_are_errors() {
        let e = err("a,b\n1,2\n3\n");
        assert!(
            e.contains("row 2 (line 3)") && e.contains("found 1 fields, expected 2"),
            "{e}"
        );
        let e = err("a,b\n1,2,3\n");
        assert!(
            e.contains("row 1 (line 2)") && e.contains("found 3 fields, expected 2"),
            "{e}"
        );
        // Empty lines are skipped but counted as lines.
        let e = err("a,b\n\n\n1,2\n3\n");
        assert!(e.contains("row 2 (line 5)"), "{e}");
    }

    #[test]
    fn unterminated_quote_is_an_error() {
        let e = err("a,b\n1,\"oops\n2,3\n");
        assert!(
            e.contains("row 1 (line 2)") && e.contains("never closed"),
            "{e}"
        );
        let e = err("\"a,b\n1,2\n");
        assert!(
            e.contains("header (line 1)") && e.contains("never closed"),
            "{e}"
        );
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let e = read_csv_bytes(b"a,b\n1,x\n2,\xff\xfe\n", &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 2 (line 3)") && e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn empty_input_is_an_error() {
        for input in ["", "\u{FEFF}", "\n\n", "\r\n"] {
            let e = err(input);
            assert_eq!(
                e, "input: the file is empty; expected a header row and at least one data row",
                "{input:?}"
            );
        }
    }

    #[test]
    fn header_only_is_an_error() {
        let e = err("a,b\n");
        assert!(e.contains("no data rows"), "{e}");
    }

    #[test]
    fn all_rows_dropped_is_an_error() {
        let e = err("a,b,c\n1,?,1\nNA,,2\n");
        assert!(e.contains("all 2 data rows were dropped"), "{e}");
        assert!(e.contains("'b' (2 rows), 'a' (1 rows)"), "{e}");
    }

    #[test]
    fn label_column() {
        let opts = CsvOptions {
            label: Some("y".into()),
            ..CsvOptions::default()
        };
        let t = read_with("x,y\n1,10\n2,2\n3, 10 \n", &opts).unwrap();
        assert_eq!(t.label_index, Some(1));
        let (values, levels) = cat(&t, "y");
        assert_eq!(levels, ["2", "10"]);
        assert_eq!(values, ["10", "2", "10"]);
        // A label column with inf is fine: it is categorical.
        assert!(read_with("x,y\n1,inf\n", &opts).is_ok());
    }

    #[test]
    fn label_not_found_is_an_error() {
        let opts = CsvOptions {
            label: Some("Y".into()),
            ..CsvOptions::default()
        };
        let e = read_with("a,b,y\n1,2,3\n", &opts).unwrap_err().to_string();
        assert_eq!(
            e,
            "input: label column 'Y' not found; the header has: a, b, y (names are case-sensitive)"
        );
    }

    #[test]
    fn duplicate_and_empty_header_names_are_errors() {
        let e = err("a,b,a,c,b\n1,2,3,4,5\n");
        assert!(
            e.contains("duplicate column names in the header: 'a', 'b'"),
            "{e}"
        );
        let e = err("a,,c\n1,2,3\n");
        assert!(e.contains("empty column names (column 2)"), "{e}");
    }

    #[test]
    fn schema_overrides_types_and_ignores_columns() {
        let opts = with_schema(
            r#"{"columns": {"zip": {"type": "categorical"}, "id": {"type": "ignore"},
                "n": {"type": "numeric", "integer": false}}}"#,
        );
        let t = read_with("id,zip,n,s\nx1,10,1,a\nx2,9,2,b\n", &opts).unwrap();
        assert_eq!(t.names, ["zip", "n", "s"]);
        assert_eq!(cat(&t, "zip").1, ["9", "10"]);
        assert_eq!(num(&t, "n"), (&[1.0f32, 2.0][..], false));
        // A missing value in an ignored column does not drop the row.
        let t = read_with("id,zip,n,s\n?,10,1,a\n", &opts).unwrap();
        assert_eq!((t.n_rows, t.rows_dropped), (1, 0));
    }

    #[test]
    fn schema_ignoring_every_column_is_an_error() {
        let opts =
            with_schema(r#"{"columns": {"a": {"type": "ignore"}, "b": {"type": "ignore"}}}"#);
        let e = read_with("a,b\n1,2\n", &opts).unwrap_err().to_string();
        assert!(e.contains("every column"), "{e}");
    }

    #[test]
    fn schema_with_unknown_column_is_an_error() {
        let opts =
            with_schema(r#"{"columns": {"Age": {"type": "numeric"}, "zz": {"type": "ignore"}}}"#);
        let e = read_with("age,b\n1,2\n", &opts).unwrap_err().to_string();
        assert!(
            e.contains("not in the header: 'Age', 'zz'") && e.contains("the header has: age, b"),
            "{e}"
        );
    }

    #[test]
    fn schema_numeric_checks_values() {
        let opts = with_schema(r#"{"columns": {"a": {"type": "numeric"}}}"#);
        let e = read_with("a,b\n1,x\nabc,y\n", &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("row 2 (line 3), column 'a': value 'abc' is not a number"),
            "{e}"
        );
        let opts = with_schema(r#"{"columns": {"a": {"type": "numeric", "integer": true}}}"#);
        let e = read_with("a\n1\n2.5\n", &opts).unwrap_err().to_string();
        assert!(
            e.contains("row 2 (line 3), column 'a': value '2.5' is not an integer"),
            "{e}"
        );
        let opts = with_schema(r#"{"columns": {"y": {"type": "numeric"}}}"#);
        let opts = CsvOptions {
            label: Some("y".into()),
            ..opts
        };
        assert!(read_with("y\n1\n", &opts)
            .unwrap_err()
            .to_string()
            .contains("label"));
    }

    #[test]
    fn schema_categories_fix_level_order() {
        let opts = with_schema(
            r#"{"columns": {"s": {"type": "categorical", "categories": ["M", "F", "X"]}}}"#,
        );
        let t = read_with("s\nF\nZ\nM\nA\nF\n", &opts).unwrap();
        let (values, levels) = cat(&t, "s");
        assert_eq!(levels, ["M", "F", "X", "A", "Z"]);
        assert_eq!(values, ["F", "Z", "M", "A", "F"]);
    }

    #[test]
    fn gzip_input() {
        let plain = b"a,b\n1,x\n2,y\n";
        let t = read_csv_bytes(&gzip(plain), &CsvOptions::default()).unwrap();
        assert_eq!(num(&t, "a").0, [1.0, 2.0]);
        // Multi-member gzip (concatenated streams).
        let mut two = gzip(b"a,b\n1,x\n");
        two.extend(gzip(b"2,y\n"));
        let t = read_csv_bytes(&two, &CsvOptions::default()).unwrap();
        assert_eq!(cat(&t, "b").0, ["x", "y"]);
        // Truncated gzip.
        let gz = gzip(&plain.repeat(100));
        let e = read_csv_bytes(&gz[..gz.len() / 2], &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("gzip"), "{e}");
    }

    #[test]
    fn max_bytes_is_enforced() {
        let data = "a,b\n".to_string() + &"1,2\n".repeat(100);
        let opts = CsvOptions {
            max_bytes: 100,
            ..CsvOptions::default()
        };
        let e = read_with(&data, &opts).unwrap_err().to_string();
        assert!(
            e.contains("404 bytes") && e.contains("limit of 100 bytes") && e.contains("subsample"),
            "{e}"
        );
        let e = read_csv_bytes(&gzip(data.as_bytes()), &opts)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("limit of 100 bytes") && e.contains("subsample"),
            "{e}"
        );
        let opts = CsvOptions {
            max_bytes: 404,
            ..CsvOptions::default()
        };
        assert_eq!(read_with(&data, &opts).unwrap().n_rows, 100);
        assert_eq!(
            read_csv_bytes(&gzip(data.as_bytes()), &opts)
                .unwrap()
                .n_rows,
            100
        );
    }

    #[test]
    fn path_input_streams_and_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("people.csv");
        std::fs::write(&path, "age,name\n30,ann\ninf,bob\n").unwrap();
        let e = read_csv_path(&path, &CsvOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("people.csv: row 2 (line 3), column 'age': value 'inf'"),
            "{e}"
        );
        std::fs::write(&path, "age,name\n30,ann\n40,bob\n").unwrap();
        let t = read_csv_path(&path, &CsvOptions::default()).unwrap();
        assert_eq!(num(&t, "age").0, [30.0, 40.0]);
        let gz_path = dir.path().join("people.csv.gz");
        std::fs::write(&gz_path, gzip(b"age,name\n30,ann\n")).unwrap();
        assert_eq!(
            read_csv_path(&gz_path, &CsvOptions::default())
                .unwrap()
                .n_rows,
            1
        );
        let opts = CsvOptions {
            max_bytes: 10,
            ..CsvOptions::default()
        };
        let e = read_csv_path(&path, &opts).unwrap_err().to_string();
        assert!(e.contains("limit of 10 bytes"), "{e}");
    }

    #[test]
    fn missing_file_is_an_io_error() {
        let path = Path::new("/nonexistent/dir/data.csv");
        match read_csv_path(path, &CsvOptions::default()) {
            Err(Error::Io { path, .. }) => assert_eq!(path, "/nonexistent/dir/data.csv"),
            other => panic!("expected Error::Io, got {other:?}"),
        }
    }

    // ---- Real data sets ---------------------------------------------------------------

    /// The shared data folder: `PRIVMIX_DATA_DIR`, else `../shared/data` beside the checkout.
    /// It is part of the project's test fixtures, so a missing file fails the test.
    fn data_file(rel: &str) -> Option<PathBuf> {
        let dir = std::env::var_os("PRIVMIX_DATA_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data"));
        let p = dir.join(rel);
        assert!(
            p.exists(),
            "test data {} is missing (set PRIVMIX_DATA_DIR)",
            p.display()
        );
        Some(p)
    }

    #[test]
    fn real_iris() {
        let Some(p) = data_file("iris.csv") else {
            return;
        };
        let opts = CsvOptions {
            label: Some("species".into()),
            ..CsvOptions::default()
        };
        let t = read_csv_path(&p, &opts).unwrap();
        assert_eq!((t.n_rows, t.n_cols(), t.rows_dropped), (150, 5, 0));
        assert_eq!(t.label_index, Some(4));
        assert_eq!(cat(&t, "species").1, ["setosa", "versicolor", "virginica"]);
        assert!(!num(&t, "sepal_length").1);
        assert_eq!(num(&t, "sepal_length").0[0], 5.1);
        // Without a label, species is inferred categorical too.
        let t = read_csv_path(&p, &CsvOptions::default()).unwrap();
        assert_eq!(cat(&t, "species").1.len(), 3);
    }

    #[test]
    fn real_adult() {
        let Some(p) = data_file("adult/adult.data") else {
            return;
        };
        let opts = CsvOptions {
            label: Some("Y".into()),
            ..CsvOptions::default()
        };
        let t = read_csv_path(&p, &opts).unwrap();
        assert_eq!(t.n_cols(), 15);
        assert_eq!((t.n_rows, t.rows_dropped), (30162, 32561 - 30162));
        assert_eq!(t.names[0], "age");
        assert!(num(&t, "age").1);
        assert_eq!(num(&t, "age").0[0], 39.0);
        assert_eq!(cat(&t, "Y").1, ["<=50K", ">50K"]);
        assert_eq!(cat(&t, "workclass").0[0], "State-gov");
        assert!(!cat(&t, "workclass").1.iter().any(|l| l == "?"));
    }

    #[test]
    fn real_mnist_gzip() {
        let Some(p) = data_file("mnist-10k.csv.gz") else {
            return;
        };
        let t = read_csv_path(&p, &CsvOptions::default()).unwrap();
        assert_eq!((t.n_rows, t.n_cols(), t.rows_dropped), (10000, 785, 0));
        assert!(t
            .columns
            .iter()
            .all(|c| matches!(c, Column::Numeric { integer: true, .. })));
        assert_eq!(num(&t, "label").0[0], 9.0);
        // The same through memory, with a label.
        let bytes = std::fs::read(&p).unwrap();
        let opts = CsvOptions {
            label: Some("label".into()),
            ..CsvOptions::default()
        };
        let t = read_csv_bytes(&bytes, &opts).unwrap();
        assert_eq!(t.label_index, Some(0));
        let levels: Vec<String> = (0..10).map(|d| d.to_string()).collect();
        assert_eq!(cat(&t, "label").1, levels);
    }

    #[test]
    fn real_digits() {
        let Some(p) = data_file("digits-8x8.csv") else {
            return;
        };
        let opts = CsvOptions {
            label: Some("label".into()),
            ..CsvOptions::default()
        };
        let t = read_csv_path(&p, &opts).unwrap();
        assert_eq!(t.n_cols(), 65);
        assert!(t.n_rows > 1000);
        assert_eq!(cat(&t, "label").1.len(), 10);
    }
}
