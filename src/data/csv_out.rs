//! CSV output: records of text cells written with the `csv` crate's default dialect, byte for
//! byte (comma, `"` quoting only where needed, quotes doubled, `\n` after each record), by a
//! loop that only looks for the four bytes that force quoting and copies everything else.
//!
//! The synthetic tables are almost all numbers, which never need quotes; `csv::Writer` runs
//! each of their bytes through its per-field state machine: about 1.1 s of a 60k × 784
//! synthesis in wasm (Node's profile), 0.25 s with this writer. The rules, as `csv::Writer`
//! applies them by default (`QuoteStyle::Necessary`, terminator `\n`):
//! * a cell holding `,`, `"`, `\r` or `\n` is written inside `"…"` with each `"` doubled;
//!   every other cell is written as it is;
//! * a record that would otherwise be empty (no cells, or one empty cell) is written as `""`,
//!   so that it still reads back as one record;
//! * every record has as many cells as the first one (otherwise an error, and nothing of the
//!   record is written).
//!
//! `tests` checks the output against `csv::Writer` on random records built from those bytes.
//!
//! [`CsvOut::semicolon`] switches to the dialect of spreadsheets in locales that write decimal
//! commas (what such an input is read as, `data::fastnum::parse_number`): `;` between cells,
//! `;` instead of `,` among the bytes that force quotes, and a cell that is a plain decimal
//! number with a point (`-1.5`, `2.5e3`; digits on both sides of the point) written with a
//! comma instead (`-1,5`, `2,5e3`), except in the header and in the columns named as text (the
//! label, a schema's categorical columns: a level `250.00` keeps its point).

use std::io::{self, Write};

/// Bytes gathered before they are handed to the inner writer.
const FLUSH_AT: usize = 1 << 18;

/// What a run that writes the decimal-comma dialect tells its user (a receipt warning).
pub const SEMICOLON_OUTPUT: &str = "the input is ';'-delimited, so the synthetic CSV is written the same way: ';' between cells and numbers with a decimal comma (1,5), as spreadsheets that save such files read them";

const SPECIAL_COMMA: [bool; 256] = special(b',');
const SPECIAL_SEMICOLON: [bool; 256] = special(b';');

/// The bytes that force a cell holding one into quotes, with `delimiter` between cells.
const fn special(delimiter: u8) -> [bool; 256] {
    let mut t = [false; 256];
    t[delimiter as usize] = true;
    t[b'"' as usize] = true;
    t[b'\r' as usize] = true;
    t[b'\n' as usize] = true;
    t
}

/// Where the point of a plain decimal number is (`[+-]digits.digits`, then an optional
/// exponent `e`/`E`, sign, digits), or `None` for any other cell.
fn decimal_point(cell: &[u8]) -> Option<usize> {
    let digits = |from: usize| {
        cell[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut i = usize::from(matches!(cell.first(), Some(b'+' | b'-')));
    let int = digits(i);
    i += int;
    let point = i;
    if int == 0 || cell.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    let frac = digits(i);
    i += frac;
    if frac == 0 {
        return None;
    }
    if matches!(cell.get(i), Some(b'e' | b'E')) {
        i += 1 + usize::from(matches!(cell.get(i + 1), Some(b'+' | b'-')));
        let exp = digits(i);
        if exp == 0 {
            return None;
        }
        i += exp;
    }
    (i == cell.len()).then_some(point)
}

/// Writes `cells` as one record (no newline) into `out`, which has room for the worst case;
/// returns the bytes written. `SEMI`: the decimal-comma dialect (the module note), in which
/// cell `i` keeps its point where `text[i]` is true (or `text` is too short: the header). One
/// copy per dialect, so the default's loop keeps its constant table and no per-cell branch.
#[inline(always)]
fn fill<const SEMI: bool, S: AsRef<str>>(out: &mut [u8], cells: &[S], text: &[bool]) -> usize {
    let (delimiter, special) = if SEMI {
        (b';', &SPECIAL_SEMICOLON)
    } else {
        (b',', &SPECIAL_COMMA)
    };
    let mut w = 0;
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            out[w] = delimiter;
            w += 1;
        }
        let bytes = cell.as_ref().as_bytes();
        let at = w;
        let mut quote = false;
        for &b in bytes {
            out[w] = b;
            w += 1;
            quote |= special[b as usize];
        }
        if SEMI && !text.get(i).copied().unwrap_or(true) {
            // A number needs no quotes: its comma is not the delimiter.
            if let Some(p) = decimal_point(bytes) {
                out[at + p] = b',';
            }
        }
        if quote {
            w = at;
            out[w] = b'"';
            w += 1;
            for &b in bytes {
                if b == b'"' {
                    out[w] = b'"';
                    w += 1;
                }
                out[w] = b;
                w += 1;
            }
            out[w] = b'"';
            w += 1;
        }
    }
    w
}

/// A CSV record writer over `W` (see the module note).
#[derive(Debug)]
pub struct CsvOut<W: Write> {
    inner: W,
    buf: Vec<u8>,
    cells_per_record: Option<usize>,
    /// The decimal-comma dialect (`;`) instead of the default: the names of the columns
    /// written as text.
    semicolon: Option<Vec<String>>,
    /// Per column, whether it is written as text (from the header, the first record).
    text: Vec<bool>,
}

impl<W: Write> CsvOut<W> {
    /// A writer into `inner`.
    pub fn new(inner: W) -> Self {
        CsvOut {
            inner,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            cells_per_record: None,
            semicolon: None,
            text: Vec::new(),
        }
    }

    /// The decimal-comma dialect (`;` between cells, decimal commas; see the module note)
    /// instead of the default, for a writer that has written nothing yet: its first record is
    /// the header, and the columns it names in `text_columns` keep their cells as they are.
    pub fn semicolon(&mut self, text_columns: &[String]) {
        self.semicolon = Some(text_columns.to_vec());
    }

    /// Writes one record.
    pub fn write_record<S: AsRef<str>>(&mut self, cells: &[S]) -> io::Result<()> {
        match self.cells_per_record {
            None => self.cells_per_record = Some(cells.len()),
            Some(n) if n != cells.len() => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "found a record with {} cells, but the first record has {n}",
                        cells.len()
                    ),
                ))
            }
            Some(_) => {}
        }
        // Room for the worst case (every byte a doubled quote, every cell quoted, a comma
        // each, `""` and the newline), then one pass per cell that copies and looks for the
        // bytes that force quotes; a cell that has one is written again, quoted.
        let room = cells
            .iter()
            .map(|c| 2 * c.as_ref().len() + 3)
            .sum::<usize>()
            + 3;
        let base = self.buf.len();
        self.buf.resize(base + room, 0);
        let out = &mut self.buf[base..];
        let mut w = match &self.semicolon {
            None => fill::<false, S>(out, cells, &[]),
            Some(names) if self.text.is_empty() => {
                // The header: written as it is; it says which columns are text.
                let header = cells.iter().map(|c| names.iter().any(|n| n == c.as_ref()));
                self.text = header.collect();
                fill::<true, S>(out, cells, &[])
            }
            Some(_) => fill::<true, S>(out, cells, &self.text),
        };
        if w == 0 {
            out[..2].copy_from_slice(b"\"\"");
            w = 2;
        }
        out[w] = b'\n';
        self.buf.truncate(base + w + 1);
        if self.buf.len() >= FLUSH_AT {
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Hands everything written so far to the inner writer and returns it (not flushed).
    pub fn into_inner(mut self) -> io::Result<W> {
        self.inner.write_all(&self.buf)?;
        Ok(self.inner)
    }
}

impl CsvOut<Vec<u8>> {
    /// The bytes written.
    pub fn into_bytes(self) -> Vec<u8> {
        // Writing into a Vec cannot fail.
        let CsvOut { mut inner, buf, .. } = self;
        inner.extend_from_slice(&buf);
        inner
    }
}

/// Bytes held as pieces, one per write (each flush of a [`CsvOut`], about 256 KiB): an output
/// that grows without reallocating and copying what it holds (a growing `Vec` briefly holds
/// its old and its new buffer, up to three times the bytes), and that its reader can take
/// piece by piece.
#[derive(Debug, Default)]
pub struct Pieces {
    pieces: Vec<Vec<u8>>,
    len: usize,
}

impl Pieces {
    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no byte is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pieces, in order.
    pub fn into_pieces(self) -> Vec<Vec<u8>> {
        self.pieces
    }

    /// The bytes in one buffer.
    pub fn concat(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len);
        for p in self.pieces {
            out.extend_from_slice(&p);
        }
        out
    }
}

impl Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !buf.is_empty() {
            self.pieces.push(buf.to_vec());
            self.len += buf.len();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl CsvOut<Pieces> {
    /// The bytes written, as pieces.
    pub fn into_pieces(self) -> Pieces {
        let CsvOut { mut inner, buf, .. } = self;
        if !buf.is_empty() {
            inner.len += buf.len();
            inner.pieces.push(buf);
        }
        inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn ours(records: &[Vec<String>]) -> io::Result<Vec<u8>> {
        let mut w = CsvOut::new(Vec::new());
        for r in records {
            w.write_record(r)?;
        }
        w.into_inner()
    }

    fn theirs(records: &[Vec<String>]) -> Result<Vec<u8>, String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        for r in records {
            w.write_record(r).map_err(|e| e.to_string())?;
        }
        w.into_inner().map_err(|e| e.to_string())
    }

    /// Byte-identical to `csv::Writer` on 20,000 random tables whose cells are drawn from the
    /// bytes that matter (the four special ones, a space, a multi-byte character, digits,
    /// letters), empty cells and records of 0 to 4 cells included; large tables cross the
    /// flush threshold.
    #[test]
    fn matches_the_csv_crate_byte_for_byte() {
        let alphabet = [",", "\"", "\r", "\n", " ", "é", "1", ".", "a", "-"];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for case in 0..20_000 {
            let cells = rng.gen_range(0..5);
            let rows = if case % 1000 == 0 {
                20_000
            } else {
                rng.gen_range(1..6)
            };
            let records: Vec<Vec<String>> = (0..rows)
                .map(|_| {
                    (0..cells)
                        .map(|_| {
                            let len = rng.gen_range(0..5);
                            (0..len)
                                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let want = theirs(&records).unwrap();
            assert_eq!(ours(&records).unwrap(), want, "{records:?}");
            if case % 100 == 0 {
                // The same bytes as pieces (several where the table crosses the threshold).
                let mut w = CsvOut::new(Pieces::default());
                for r in &records {
                    w.write_record(r).unwrap();
                }
                let pieces = w.into_pieces();
                assert_eq!(pieces.len(), want.len());
                if want.len() > 2 * FLUSH_AT {
                    assert!(pieces.pieces.len() >= 2);
                }
                assert_eq!(pieces.concat(), want);
            }
        }
    }

    #[test]
    fn the_records_that_need_care() {
        let s = |r: &[&[&str]]| -> Vec<Vec<String>> {
            r.iter()
                .map(|c| c.iter().map(|x| x.to_string()).collect())
                .collect()
        };
        for records in [
            s(&[&[""]]),
            s(&[&[]]),
            s(&[&["", ""]]),
            s(&[&["a\"b", "x,y"]]),
            s(&[&["\r"], &["\n"]]),
        ] {
            assert_eq!(ours(&records).unwrap(), theirs(&records).unwrap());
        }
        assert_eq!(ours(&s(&[&[""]])).unwrap(), b"\"\"\n");
        assert_eq!(
            ours(&s(&[&["a\"b", "x,y"]])).unwrap(),
            b"\"a\"\"b\",\"x,y\"\n"
        );
    }

    /// The decimal-comma dialect: `;` between cells and among the quote-forcing bytes, plain
    /// decimal numbers with a comma, everything else as it is; read back, the numbers are
    /// the ones written.
    #[test]
    fn the_semicolon_dialect_writes_decimal_commas() {
        let header = [
            "x", "1.5", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11", "code",
        ];
        let cells = [
            "x", "-1.5", "+2.5e3", "0.25E-2", "7", "1.", ".5", "1.5.2", "1.5e", "a;b", "1,5", "",
            "250.00",
        ];
        let mut w = CsvOut::new(Vec::new());
        w.semicolon(&["code".to_string(), "x".to_string()]);
        w.write_record(&header).unwrap();
        w.write_record(&cells).unwrap();
        w.write_record(&[
            "y", "3.75", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "401.9",
        ])
        .unwrap();
        let text = String::from_utf8(w.into_bytes()).unwrap();
        // The header and the text column `code` keep their points; numbers elsewhere do not.
        assert_eq!(
            text,
            "x;1.5;c2;c3;c4;c5;c6;c7;c8;c9;c10;c11;code\n\
             x;-1,5;+2,5e3;0,25E-2;7;1.;.5;1.5.2;1.5e;\"a;b\";1,5;;250.00\n\
             y;3,75;1;2;3;4;5;6;7;8;9;10;401.9\n"
        );
        let t = crate::data::read_csv_bytes(
            text.as_bytes(),
            &crate::data::CsvOptions {
                missing: crate::data::MissingPolicy::Keep,
                ..Default::default()
            },
        )
        .unwrap();
        let col = |j: usize| match &t.columns[j] {
            crate::data::Column::Numeric { values, .. } => values.clone(),
            c => panic!("column {j}: {c:?}"),
        };
        assert_eq!(col(1), [-1.5, 3.75]);
        assert_eq!(col(2), [2500.0, 1.0]);
        assert_eq!(col(3), [0.0025, 2.0]);
    }

    /// A record of another length is refused by both, and leaves nothing of itself behind.
    #[test]
    fn unequal_records_are_an_error() {
        let records = vec![vec!["a".to_string(), "b".into()], vec!["c".into()]];
        assert!(theirs(&records).is_err());
        let mut w = CsvOut::new(Vec::new());
        w.write_record(&records[0]).unwrap();
        let e = w.write_record(&records[1]).unwrap_err();
        assert!(e.to_string().contains("1 cells"), "{e}");
        assert_eq!(w.into_bytes(), b"a,b\n");
    }
}
