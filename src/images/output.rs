//! Writing images: 8-bit PNG encoding, a ZIP of PNGs in class folders (written entry by
//! entry, stored uncompressed because PNG data is already compressed), and preview grids.

use std::io::Write;

use crate::error::{Error, Result};

/// Appends one PNG chunk (length, type, data, CRC-32 of type and data).
fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(kind);
    crc.update(data);
    out.extend_from_slice(&crc.sum().to_be_bytes());
}

/// Encodes an 8-bit gray (`channels` = 1) or RGB (3) image as a non-interlaced PNG (filter
/// type None on every row, zlib level 6). Written here rather than with the `png` crate's
/// encoder to keep the wasm build small (the deflate coder is flate2's, already linked).
pub fn encode_png(width: usize, height: usize, channels: usize, data: &[u8]) -> Result<Vec<u8>> {
    use flate2::write::ZlibEncoder;
    let row = width * channels;
    if width == 0 || height == 0 || !(channels == 1 || channels == 3) || data.len() != row * height
    {
        return Err(Error::Data(format!(
            "internal: cannot encode a {width}×{height}×{channels} PNG from {} bytes",
            data.len()
        )));
    }
    let mut z = ZlibEncoder::new(
        Vec::with_capacity(data.len() / 2 + 64),
        flate2::Compression::new(6),
    );
    let io = |e: std::io::Error| Error::Data(format!("cannot encode PNG: {e}"));
    for r in data.chunks_exact(row) {
        z.write_all(&[0]).map_err(io)?;
        z.write_all(r).map_err(io)?;
    }
    let idat = z.finish().map_err(io)?;
    let mut out = Vec::with_capacity(idat.len() + 64);
    out.extend_from_slice(b"\x89PNG\r\n\x1a\n");
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&(width as u32).to_be_bytes());
    ihdr.extend_from_slice(&(height as u32).to_be_bytes());
    // bit depth 8; colour type 0 (gray) or 2 (RGB); deflate; adaptive filtering; no interlace
    ihdr.extend_from_slice(&[8, if channels == 1 { 0 } else { 2 }, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &idat);
    chunk(&mut out, b"IEND", &[]);
    Ok(out)
}

/// Rounds and clamps f32 pixels (0..=255 scale) to bytes.
pub fn to_u8(px: &[f32]) -> Vec<u8> {
    px.iter()
        .map(|&v| {
            if v.is_nan() {
                0
            } else {
                v.round().clamp(0.0, 255.0) as u8
            }
        })
        .collect()
}

/// A folder name that is safe inside a ZIP: `/`, `\`, control characters and `:` become `_`;
/// empty, `.` and `..` become `_`.
pub fn safe_folder(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c == ':' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() || s == "." || s == ".." {
        "_".into()
    } else {
        s
    }
}

/// A ZIP of PNG files, written as it goes (stored entries: PNG data is already compressed).
pub struct PngZip<W: Write> {
    zip: super::zipfile::Writer<W>,
}

fn zip_err(e: impl std::fmt::Display) -> Error {
    Error::Data(format!("cannot write the output ZIP: {e}"))
}

impl<W: Write> PngZip<W> {
    /// Starts an archive on `out`.
    pub fn new(out: W) -> Self {
        PngZip {
            zip: super::zipfile::Writer::new(out),
        }
    }

    /// Adds one file.
    pub fn add(&mut self, path: &str, bytes: &[u8]) -> Result<()> {
        self.zip.add(path, bytes).map_err(zip_err)
    }

    /// Files added so far.
    pub fn files(&self) -> usize {
        self.zip.len()
    }

    /// Writes the central directory and returns the sink.
    pub fn finish(self) -> Result<W> {
        self.zip.finish().map_err(zip_err)
    }
}

/// Lays out rows of 8-bit images (each `w × h × c`) as a grid: one grid row per entry of
/// `rows`, with a 1-pixel mid-gray (128) border around and between the images. Short rows are
/// padded with the border colour. Returns the PNG.
pub fn grid_png(rows: &[Vec<Vec<u8>>], w: usize, h: usize, c: usize) -> Result<Vec<u8>> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let nrows = rows.len().max(1);
    let gw = cols * (w + 1) + 1;
    let gh = nrows * (h + 1) + 1;
    let mut canvas = vec![128u8; gw * gh * c];
    for (r, row) in rows.iter().enumerate() {
        for (k, img) in row.iter().enumerate() {
            let x0 = 1 + k * (w + 1);
            let y0 = 1 + r * (h + 1);
            for y in 0..h {
                let src = &img[y * w * c..(y + 1) * w * c];
                let at = ((y0 + y) * gw + x0) * c;
                canvas[at..at + w * c].copy_from_slice(src);
            }
        }
    }
    encode_png(gw, gh, c, &canvas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_png_decodes_to_the_same_pixels() {
        let data: Vec<u8> = (0..6 * 4 * 3).map(|v| (v * 3 % 256) as u8).collect();
        let png = encode_png(6, 4, 3, &data).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(&png));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (6, 4));
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!(&buf[..info.buffer_size()], &data[..]);
    }

    #[test]
    fn folder_names_are_made_safe() {
        assert_eq!(safe_folder("3"), "3");
        assert_eq!(safe_folder("a/b"), "a_b");
        assert_eq!(safe_folder(".."), "_");
        assert_eq!(safe_folder(""), "_");
        assert_eq!(safe_folder("c:\\x"), "c__x");
    }

    #[test]
    fn to_u8_rounds_and_clamps() {
        assert_eq!(
            to_u8(&[-3.0, 0.4, 0.5, 254.6, 300.0, f32::NAN]),
            [0, 0, 1, 255, 255, 0]
        );
    }

    #[test]
    fn grid_places_images_with_borders() {
        let a = vec![0u8; 4]; // 2×2 black
        let b = vec![255u8; 4]; // 2×2 white
        let png = grid_png(&[vec![a.clone(), b], vec![a]], 2, 2, 1).unwrap();
        let mut r = png::Decoder::new(std::io::Cursor::new(&png))
            .read_info()
            .unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        // 2 columns × (2+1) + 1 = 7 wide, 2 rows × 3 + 1 = 7 high
        assert_eq!((info.width, info.height), (7, 7));
        let px = |x: usize, y: usize| buf[y * 7 + x];
        assert_eq!(px(0, 0), 128);
        assert_eq!(px(1, 1), 0);
        assert_eq!(px(4, 2), 255);
        assert_eq!(px(3, 1), 128);
        assert_eq!(px(1, 4), 0);
        assert_eq!(px(4, 4), 128); // padding of the short second row
    }
}
