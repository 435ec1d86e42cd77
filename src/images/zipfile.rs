//! A small ZIP reader and writer (PKWARE APPNOTE 6.3), written here instead of using the
//! `zip` crate to keep the wasm build small (it is tested against that crate).
//!
//! * Reading: the central directory (found through the end-of-central-directory record,
//!   ZIP64 included), entries stored (method 0) or deflated (method 8), CRC-32 checked.
//!   Encrypted entries and other methods (bzip2, LZMA, zstd...) are refused with a message.
//! * Writing: stored entries (PNG data is already compressed), UTF-8 names, a fixed
//!   timestamp (1980-01-01, so equal inputs give equal bytes), ZIP64 end records when there
//!   are more than 65,535 entries.

use std::io::{Read, Write};

use crate::error::{Error, Result};

const LOCAL: u32 = 0x0403_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const EOCD: u32 = 0x0605_4b50;
const EOCD64: u32 = 0x0606_4b50;
const EOCD64_LOCATOR: u32 = 0x0706_4b50;

fn u16_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?) as u64)
}
fn u32_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u32::from_le_bytes(b.get(i..i + 4)?.try_into().ok()?) as u64)
}
fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// One entry of the central directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Name as stored (UTF-8, or CP437 read as lossy UTF-8).
    pub name: String,
    flags: u64,
    method: u64,
    crc: u32,
    compressed: u64,
    size: u64,
    local_offset: u64,
}

impl Entry {
    /// Whether this entry is a folder.
    pub fn is_dir(&self) -> bool {
        self.name.ends_with('/')
    }
    /// Uncompressed size as recorded.
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// A ZIP archive in memory.
pub struct Archive<'a> {
    bytes: &'a [u8],
    /// The entries, in central-directory order.
    pub entries: Vec<Entry>,
    source: &'a str,
}

impl<'a> Archive<'a> {
    /// Parses the central directory. `source` names the archive in errors.
    pub fn new(bytes: &'a [u8], source: &'a str) -> Result<Self> {
        let broken = |what: &str| {
            Error::Data(format!(
                "{source}: not a readable ZIP archive ({what}); re-create it with a standard zip tool"
            ))
        };
        // The end record is in the last 22 + 65,535 (comment) bytes.
        let lo = bytes.len().saturating_sub(22 + 65_535);
        let eocd = (lo..=bytes.len().saturating_sub(22))
            .rev()
            .find(|&i| u32_at(bytes, i) == Some(EOCD as u64))
            .ok_or_else(|| broken("no end-of-central-directory record"))?;
        let mut count = u16_at(bytes, eocd + 10).unwrap_or(0);
        let mut cd_size = u32_at(bytes, eocd + 12).unwrap_or(0);
        let mut cd_offset = u32_at(bytes, eocd + 16).unwrap_or(0);
        if count == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF {
            let loc = eocd
                .checked_sub(20)
                .filter(|&l| u32_at(bytes, l) == Some(EOCD64_LOCATOR as u64))
                .ok_or_else(|| broken("ZIP64 locator missing"))?;
            let at = u64_at(bytes, loc + 8).ok_or_else(|| broken("ZIP64 locator"))? as usize;
            if u32_at(bytes, at) != Some(EOCD64 as u64) {
                return Err(broken("ZIP64 end record missing"));
            }
            count = u64_at(bytes, at + 32).ok_or_else(|| broken("ZIP64 end record"))?;
            cd_size = u64_at(bytes, at + 40).ok_or_else(|| broken("ZIP64 end record"))?;
            cd_offset = u64_at(bytes, at + 48).ok_or_else(|| broken("ZIP64 end record"))?;
        }
        let cd_end = cd_offset
            .checked_add(cd_size)
            .filter(|&e| e <= bytes.len() as u64)
            .ok_or_else(|| broken("central directory outside the file"))?;
        if count > cd_size / 46 + 1 {
            return Err(broken("entry count larger than the central directory"));
        }
        let mut entries = Vec::with_capacity(count as usize);
        let mut p = cd_offset as usize;
        for _ in 0..count {
            if u32_at(bytes, p) != Some(CENTRAL as u64) || p as u64 + 46 > cd_end {
                return Err(broken("damaged central directory"));
            }
            let h = |o: usize| u16_at(bytes, p + o).unwrap_or(0);
            let w = |o: usize| u32_at(bytes, p + o).unwrap_or(0);
            let (flags, method) = (h(8), h(10));
            let crc = w(16) as u32;
            let (mut compressed, mut size) = (w(20), w(24));
            let (n, e, c) = (h(28) as usize, h(30) as usize, h(32) as usize);
            let mut local_offset = w(42);
            let name_bytes = bytes
                .get(p + 46..p + 46 + n)
                .ok_or_else(|| broken("damaged central directory"))?;
            let name = String::from_utf8_lossy(name_bytes).into_owned();
            let extra = bytes
                .get(p + 46 + n..p + 46 + n + e)
                .ok_or_else(|| broken("damaged central directory"))?;
            // ZIP64 extended information: present fields replace the 0xFFFFFFFF ones, in order.
            let mut x = 0;
            while x + 4 <= extra.len() {
                let id = u16_at(extra, x).unwrap_or(0);
                let len = u16_at(extra, x + 2).unwrap_or(0) as usize;
                if id == 1 {
                    let mut q = x + 4;
                    for field in [&mut size, &mut compressed, &mut local_offset] {
                        if *field == 0xFFFF_FFFF {
                            *field = u64_at(extra, q).ok_or_else(|| broken("ZIP64 field"))?;
                            q += 8;
                        }
                    }
                }
                x += 4 + len;
            }
            entries.push(Entry {
                name,
                flags,
                method,
                crc,
                compressed,
                size,
                local_offset,
            });
            p += 46 + n + e + c;
        }
        Ok(Archive {
            bytes,
            entries,
            source,
        })
    }

    /// Decompresses entry `i`, reading at most `limit` bytes (more is an error naming the
    /// limit), and checks its CRC-32.
    pub fn read(&self, i: usize, limit: u64) -> Result<Vec<u8>> {
        let e = &self.entries[i];
        let source = self.source;
        let fail = |what: String| {
            Error::Data(format!(
                "{source}: '{}' cannot be read ({what}); re-create the archive with a standard zip tool",
                e.name
            ))
        };
        if e.flags & 1 != 0 {
            return Err(Error::Data(format!(
                "{source}: '{}' is encrypted; make the ZIP without a password",
                e.name
            )));
        }
        let at = e.local_offset as usize;
        if u32_at(self.bytes, at) != Some(LOCAL as u64) {
            return Err(fail("no local header".into()));
        }
        let n = u16_at(self.bytes, at + 26).unwrap_or(0) as usize;
        let x = u16_at(self.bytes, at + 28).unwrap_or(0) as usize;
        let start = at + 30 + n + x;
        let data = usize::try_from(e.compressed)
            .ok()
            .and_then(|len| self.bytes.get(start..start.checked_add(len)?))
            .ok_or_else(|| fail("data outside the file".into()))?;
        let mut out = Vec::with_capacity(e.size.min(limit).min(1 << 24) as usize);
        match e.method {
            0 => {
                let cap = usize::try_from(limit).map_or(usize::MAX, |l| l.saturating_add(1));
                out.extend_from_slice(&data[..data.len().min(cap)])
            }
            8 => {
                flate2::read::DeflateDecoder::new(data)
                    .take(limit.saturating_add(1))
                    .read_to_end(&mut out)
                    .map_err(|err| fail(err.to_string()))?;
            }
            m => {
                return Err(Error::Data(format!(
                    "{source}: '{}' uses compression method {m} (e.g. bzip2, LZMA or zstd); re-create the ZIP with the standard deflate method",
                    e.name
                )))
            }
        }
        if out.len() as u64 > limit {
            return Err(Error::Data(format!(
                "{source}: '{}' decompresses to more than {limit} bytes; use fewer or smaller images",
                e.name
            )));
        }
        let mut crc = flate2::Crc::new();
        crc.update(&out);
        if crc.sum() != e.crc || out.len() as u64 != e.size {
            return Err(fail("CRC or size mismatch: the archive is damaged".into()));
        }
        Ok(out)
    }
}

struct Written {
    name: String,
    crc: u32,
    size: u64,
    offset: u64,
}

/// Writes a ZIP of stored entries to any `Write`, entry by entry.
pub struct Writer<W: Write> {
    out: W,
    at: u64,
    written: Vec<Written>,
}

const DOS_DATE_1980_01_01: u16 = (1 << 5) | 1;

impl<W: Write> Writer<W> {
    /// Starts an archive on `out`.
    pub fn new(out: W) -> Self {
        Writer {
            out,
            at: 0,
            written: Vec::new(),
        }
    }

    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.out.write_all(b)?;
        self.at += b.len() as u64;
        Ok(())
    }

    /// Adds a stored file.
    pub fn add(&mut self, name: &str, data: &[u8]) -> std::io::Result<()> {
        let too_big = || std::io::Error::other("entry or archive beyond 4 GiB");
        let size = u32::try_from(data.len()).map_err(|_| too_big())?;
        if self.at > u32::MAX as u64 {
            return Err(too_big());
        }
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let crc = crc.sum();
        let offset = self.at;
        let mut h = Vec::with_capacity(30 + name.len());
        h.extend_from_slice(&LOCAL.to_le_bytes());
        h.extend_from_slice(&20u16.to_le_bytes()); // version needed
        h.extend_from_slice(&0x0800u16.to_le_bytes()); // UTF-8 name
        h.extend_from_slice(&0u16.to_le_bytes()); // stored
        h.extend_from_slice(&0u16.to_le_bytes()); // time
        h.extend_from_slice(&DOS_DATE_1980_01_01.to_le_bytes());
        h.extend_from_slice(&crc.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&size.to_le_bytes());
        h.extend_from_slice(&(name.len() as u16).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        self.put(&h)?;
        self.put(data)?;
        self.written.push(Written {
            name: name.to_string(),
            crc,
            size: size as u64,
            offset,
        });
        Ok(())
    }

    /// Entries written so far.
    pub fn len(&self) -> usize {
        self.written.len()
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// Writes the central directory and the end records; returns the sink.
    pub fn finish(mut self) -> std::io::Result<W> {
        let cd_offset = self.at;
        let written = std::mem::take(&mut self.written);
        for e in &written {
            let mut h = Vec::with_capacity(46 + e.name.len());
            h.extend_from_slice(&CENTRAL.to_le_bytes());
            h.extend_from_slice(&20u16.to_le_bytes()); // made by
            h.extend_from_slice(&20u16.to_le_bytes()); // needed
            h.extend_from_slice(&0x0800u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&DOS_DATE_1980_01_01.to_le_bytes());
            h.extend_from_slice(&e.crc.to_le_bytes());
            h.extend_from_slice(&(e.size as u32).to_le_bytes());
            h.extend_from_slice(&(e.size as u32).to_le_bytes());
            h.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            h.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
            h.extend_from_slice(&0u32.to_le_bytes()); // external attributes
            h.extend_from_slice(&(e.offset as u32).to_le_bytes());
            h.extend_from_slice(e.name.as_bytes());
            self.put(&h)?;
        }
        let cd_size = self.at - cd_offset;
        let count = written.len() as u64;
        if count > 0xFFFE || self.at > u32::MAX as u64 {
            let eocd64 = self.at;
            let mut h = Vec::with_capacity(76);
            h.extend_from_slice(&EOCD64.to_le_bytes());
            h.extend_from_slice(&44u64.to_le_bytes());
            h.extend_from_slice(&45u16.to_le_bytes());
            h.extend_from_slice(&45u16.to_le_bytes());
            h.extend_from_slice(&[0; 8]); // disk numbers
            h.extend_from_slice(&count.to_le_bytes());
            h.extend_from_slice(&count.to_le_bytes());
            h.extend_from_slice(&cd_size.to_le_bytes());
            h.extend_from_slice(&cd_offset.to_le_bytes());
            h.extend_from_slice(&EOCD64_LOCATOR.to_le_bytes());
            h.extend_from_slice(&0u32.to_le_bytes());
            h.extend_from_slice(&eocd64.to_le_bytes());
            h.extend_from_slice(&1u32.to_le_bytes());
            self.put(&h)?;
        }
        let mut h = Vec::with_capacity(22);
        h.extend_from_slice(&EOCD.to_le_bytes());
        h.extend_from_slice(&[0; 4]);
        let c16 = count.min(0xFFFF) as u16;
        let c16 = if count > 0xFFFE { 0xFFFF } else { c16 };
        h.extend_from_slice(&c16.to_le_bytes());
        h.extend_from_slice(&c16.to_le_bytes());
        h.extend_from_slice(&(cd_size.min(0xFFFF_FFFF) as u32).to_le_bytes());
        h.extend_from_slice(&(cd_offset.min(0xFFFF_FFFF) as u32).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        self.put(&h)?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn by_zip_crate(
        files: &[(&str, &[u8])],
        method: zip::CompressionMethod,
        zip64: bool,
    ) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let o = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .large_file(zip64);
        for (n, b) in files {
            z.start_file(*n, o).unwrap();
            z.write_all(b).unwrap();
        }
        z.finish().unwrap().into_inner()
    }

    #[test]
    fn reads_what_the_zip_crate_writes() {
        let big: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        for method in [
            zip::CompressionMethod::Stored,
            zip::CompressionMethod::Deflated,
        ] {
            for zip64 in [false, true] {
                let z = by_zip_crate(
                    &[("a/b.png", &big), ("é/ü.txt", b"hi"), ("e", b"")],
                    method,
                    zip64,
                );
                let a = Archive::new(&z, "t.zip").unwrap();
                let names: Vec<&str> = a.entries.iter().map(|e| e.name.as_str()).collect();
                assert_eq!(names, ["a/b.png", "é/ü.txt", "e"], "{method:?} {zip64}");
                assert_eq!(a.read(0, 1 << 20).unwrap(), big);
                assert_eq!(a.read(1, 1 << 20).unwrap(), b"hi");
                assert_eq!(a.read(2, 1 << 20).unwrap(), b"");
                let e = a.read(0, 100).unwrap_err().to_string();
                assert!(e.contains("more than 100 bytes"), "{e}");
            }
        }
    }

    #[test]
    fn the_zip_crate_reads_what_we_write() {
        let mut w = Writer::new(Vec::new());
        w.add("3/00000.png", b"first").unwrap();
        w.add("10/00000.png", &[0u8; 3000]).unwrap();
        assert_eq!(w.len(), 2);
        let bytes = w.finish().unwrap();
        let mut z = zip::ZipArchive::new(Cursor::new(&bytes)).unwrap();
        assert_eq!(z.len(), 2);
        let mut s = String::new();
        z.by_name("3/00000.png")
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        assert_eq!(s, "first");
        let mut v = Vec::new();
        z.by_index(1).unwrap().read_to_end(&mut v).unwrap();
        assert_eq!(v, vec![0u8; 3000]);
        // and we read ourselves
        let a = Archive::new(&bytes, "o.zip").unwrap();
        assert_eq!(a.read(0, 10).unwrap(), b"first");
    }

    #[test]
    fn more_than_65535_entries_use_zip64_end_records() {
        let mut w = Writer::new(Vec::new());
        for i in 0..65_540 {
            w.add(&format!("c/{i}"), &[i as u8]).unwrap();
        }
        let bytes = w.finish().unwrap();
        let z = zip::ZipArchive::new(Cursor::new(&bytes)).unwrap();
        assert_eq!(z.len(), 65_540);
        let a = Archive::new(&bytes, "o.zip").unwrap();
        assert_eq!(a.entries.len(), 65_540);
        assert_eq!(a.entries[65_539].name, "c/65539");
        assert_eq!(a.read(65_539, 10).unwrap(), [(65_539u32 % 256) as u8]);
    }

    #[test]
    fn damage_is_reported_not_panicked() {
        let z = by_zip_crate(
            &[("a/b.png", b"hello hello hello")],
            zip::CompressionMethod::Deflated,
            false,
        );
        assert!(Archive::new(b"PK\x03\x04 nope", "x.zip").is_err());
        assert!(Archive::new(b"", "x.zip").is_err());
        // flip a byte in the data: CRC mismatch or inflate error
        let mut bad = z.clone();
        bad[40] ^= 0xFF;
        if let Ok(a) = Archive::new(&bad, "x.zip") {
            let e = a.read(0, 1000).unwrap_err().to_string();
            assert!(e.contains("'a/b.png'") && e.contains("x.zip"), "{e}");
        }
        // every truncation and every single-byte corruption: an error or data, never a panic
        for n in 0..z.len() {
            if let Ok(a) = Archive::new(&z[..n], "x.zip") {
                for i in 0..a.entries.len() {
                    let _ = a.read(i, 1000);
                }
            }
            let mut c = z.clone();
            c[n] = c[n].wrapping_add(77);
            if let Ok(a) = Archive::new(&c, "x.zip") {
                for i in 0..a.entries.len() {
                    let _ = a.read(i, 1000);
                }
            }
        }
    }
}
