//! Fast paths for the CSV reader's hot cell operations, each returning exactly what the std
//! operation it replaces returns (tested against std below).
//!
//! * `parse_f64`: `str::parse::<f64>`, with a direct path for plain decimal integers of
//!   at most 15 digits (`0`, `255`, `-17`: every MNIST pixel), which are exactly
//!   representable, so the result is the same f64 std computes; anything else goes to std.
//! * `trim`: `str::trim`, skipping the Unicode whitespace scan when both ends are ASCII
//!   bytes that are not whitespace.
//! * `parse_number`: `parse_f64`, and, for a file delimited by `;` or tabs, a number written
//!   with a decimal comma (`1,5` = 1.5), as spreadsheets in many locales save them.

/// `v.parse::<f64>()`, faster for short plain integers.
#[inline]
pub fn parse_f64(v: &str) -> Result<f64, std::num::ParseFloatError> {
    let b = v.as_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if !digits.is_empty() && digits.len() <= 15 && digits.iter().all(u8::is_ascii_digit) {
        let mut n: u64 = 0;
        for &c in digits {
            n = n * 10 + u64::from(c - b'0');
        }
        // n < 10^15 < 2^53: exact. "-0" gives -0.0, as std does.
        let x = n as f64;
        return Ok(if neg { -x } else { x });
    }
    v.parse::<f64>()
}

/// A cell read as a number: `parse_f64(v)`, and, with `decimal_comma` (the file's delimiter
/// is `;` or a tab, so a comma cannot separate fields), also a number written with a decimal
/// comma: one comma between two digits and no dot (`1,5`, `-0,25`, `2,5e3`) reads as the
/// same text with a point. Nothing else changes meaning: `1,234.5`, `1,2,3` and `,5` stay
/// text, and with `decimal_comma` unset this is `parse_f64`.
#[inline]
pub fn parse_number(v: &str, decimal_comma: bool) -> Result<f64, std::num::ParseFloatError> {
    match parse_f64(v) {
        Err(e) if decimal_comma => match decimal_comma_at(v) {
            Some(at) => parse_with_point(v, at),
            None => Err(e),
        },
        r => r,
    }
}

/// Where `v`'s decimal comma is, if `v` has exactly one comma, between two ASCII digits, and
/// no dot.
fn decimal_comma_at(v: &str) -> Option<usize> {
    let b = v.as_bytes();
    let at = b.iter().position(|&c| c == b',')?;
    let digit = |i: Option<usize>| i.and_then(|i| b.get(i)).is_some_and(u8::is_ascii_digit);
    let single = !b[at + 1..].contains(&b',') && !b.contains(&b'.');
    (single && digit(at.checked_sub(1)) && digit(Some(at + 1))).then_some(at)
}

/// `v` parsed with the ASCII comma at `at` read as a point: on the stack for a cell of up
/// to 64 bytes (every number a spreadsheet writes), so no cell of a large file allocates.
fn parse_with_point(v: &str, at: usize) -> Result<f64, std::num::ParseFloatError> {
    let mut buf = [0u8; 64];
    match buf.get_mut(..v.len()) {
        Some(b) => {
            b.copy_from_slice(v.as_bytes());
            b[at] = b'.';
            // One ASCII byte replaced by another: still UTF-8.
            std::str::from_utf8(b).map_or_else(|_| v.replacen(',', ".", 1).parse(), str::parse)
        }
        None => v.replacen(',', ".", 1).parse(),
    }
}

/// `v.trim()`, without the Unicode scan when the ends are plain ASCII.
#[inline]
pub fn trim(v: &str) -> &str {
    match (v.as_bytes().first(), v.as_bytes().last()) {
        (Some(&a), Some(&z))
            if a < 0x80 && z < 0x80 && !a.is_ascii_whitespace() && !z.is_ascii_whitespace() =>
        {
            // Unicode White_Space in ASCII is exactly \t \n \x0B \x0C \r and space;
            // is_ascii_whitespace lacks \x0B (vertical tab).
            if a == 0x0B || z == 0x0B {
                v.trim()
            } else {
                v
            }
        }
        _ => v.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn same(v: &str) {
        let a = parse_f64(v);
        let b = v.parse::<f64>();
        match (a, b) {
            (Ok(x), Ok(y)) => assert_eq!(x.to_bits(), y.to_bits(), "{v:?}"),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{v:?}: {a:?} vs {b:?}"),
        }
        assert_eq!(trim(v), v.trim(), "{v:?}");
    }

    #[test]
    fn a_decimal_comma_is_read_only_where_it_can_be_one() {
        let read = |v: &str, dc: bool| parse_number(v, dc).ok();
        for (v, x) in [
            ("1,5", 1.5),
            ("-0,25", -0.25),
            ("+3,0", 3.0),
            ("2,5e3", 2500.0),
            ("12345,678", 12345.678),
        ] {
            assert_eq!(read(v, true), Some(x), "{v:?}");
            assert_eq!(
                read(v, false),
                None,
                "{v:?}: a comma-delimited file keeps it text"
            );
        }
        // Not a decimal comma: no digit on one side, two commas, a dot as well, or text.
        for v in [
            ",5", "5,", "1,2,3", "1,234.5", "1.234,5", "a,5", "1,5x", "1 ,5", ",",
        ] {
            assert_eq!(read(v, true), None, "{v:?}");
        }
        // Everything parse_f64 reads means the same with or without the option.
        for v in ["0", "-17", "1.5", "1e3", "inf", "NaN", "1e400", "  7"] {
            let (a, b) = (parse_number(v, true), parse_f64(v));
            assert_eq!(a.map(f64::to_bits).ok(), b.map(f64::to_bits).ok(), "{v:?}");
        }
    }

    #[test]
    fn equals_std_on_edge_cases() {
        for v in [
            "",
            "-",
            "+",
            "0",
            "-0",
            "+0",
            "00",
            "007",
            "255",
            "-17",
            "1.5",
            "1e3",
            "inf",
            "NaN",
            "nan",
            "-inf",
            "999999999999999",
            "9999999999999999",
            "-999999999999999",
            "12345678901234567890",
            " 1",
            "1 ",
            "\u{b}1",
            "1\u{b}",
            "\u{a0}1",
            "1\u{3000}",
            "١",
            "0x10",
            "1_000",
            "--1",
            "+-1",
            "1.",
            ".5",
            "e5",
            "\t",
            " ",
            "a",
            "NA",
            "?",
        ] {
            same(v);
        }
    }

    #[test]
    fn equals_std_on_random_fields() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
        let alphabet = b"0123456789-+.eE \tx\x0b";
        for _ in 0..300_000 {
            let len = rng.gen_range(0..20);
            let v: String = (0..len)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())] as char)
                .collect();
            same(&v);
            let n: i64 = rng.gen_range(-10i64.pow(16)..10i64.pow(16)) >> rng.gen_range(0..50);
            same(&n.to_string());
        }
    }
}
