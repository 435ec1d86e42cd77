//! PNG and JPEG decoding from bytes, to 8-bit gray or RGB with the alpha channel handled.
//!
//! * PNG: every color type and bit depth (palette and low-bit gray are expanded, 16-bit is
//!   reduced to its high byte, `tRNS` becomes alpha).
//! * JPEG: baseline and progressive (jpeg-decoder), 8-bit gray, YCbCr/RGB and CMYK (converted
//!   naively, (1 − c)(1 − k), as the `image` crate does); 12/16-bit JPEGs are refused.
//!
//! Alpha is either composited on white ([`AlphaMode::White`]) or dropped ([`AlphaMode::Drop`]).

use std::io::Cursor;

use jpeg_decoder::PixelFormat;
use serde::{Deserialize, Serialize};

use crate::enums::named_enum;
use crate::error::{Error, Result};

named_enum! {
    /// What to do with an alpha channel.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum AlphaMode: "alpha" {
        /// Composite the image on a white background (default).
        #[default]
        White = "white" ("composite on white, default"),
        /// Ignore the alpha channel (keep the stored colors).
        Drop = "drop" ("ignore alpha"),
    }
}

/// The image formats read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PNG (signature `89 50 4E 47 0D 0A 1A 0A`).
    Png,
    /// JPEG (starts with `FF D8 FF`).
    Jpeg,
}

/// The format of `bytes` by its magic number, if it is PNG or JPEG.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(Format::Png)
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(Format::Jpeg)
    } else {
        None
    }
}

/// Largest width or height accepted (pixels).
pub const MAX_SIDE: usize = 16_384;
/// Largest number of pixels accepted in one image.
pub const MAX_PIXELS: usize = 64 * 1024 * 1024;

/// What the header says, without decoding the pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Whether the file stores a grayscale image (PNG gray / gray+alpha / all-gray palette,
    /// one-component JPEG).
    pub gray: bool,
}

/// A decoded 8-bit image: `channels` is 1 (gray) or 3 (RGB), interleaved, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// 1 or 3.
    pub channels: usize,
    /// `width · height · channels` bytes.
    pub data: Vec<u8>,
}

fn bad(name: &str, what: impl std::fmt::Display) -> Error {
    Error::Data(format!(
        "{name}: cannot decode the image ({what}); re-save it as PNG or JPEG, or remove it"
    ))
}

fn check_size(name: &str, width: usize, height: usize) -> Result<()> {
    if width == 0 || height == 0 {
        return Err(bad(name, format!("it is {width}×{height} pixels")));
    }
    if width > MAX_SIDE || height > MAX_SIDE || width * height > MAX_PIXELS {
        return Err(Error::Data(format!(
            "{name}: the image is {width}×{height} pixels, larger than the limit of {MAX_SIDE} pixels a side and {MAX_PIXELS} pixels; shrink it first"
        )));
    }
    Ok(())
}

fn png_limits() -> png::Limits {
    png::Limits {
        bytes: MAX_PIXELS * 8 + (1 << 20),
    }
}

fn not_image(name: &str) -> Error {
    Error::Data(format!(
        "{name}: not a PNG or JPEG file (its first bytes are neither); convert it to PNG or remove it"
    ))
}

/// Reads only the header of a PNG or JPEG file.
pub fn header(name: &str, bytes: &[u8]) -> Result<Header> {
    let h = match sniff(bytes) {
        Some(Format::Png) => {
            let reader = png::Decoder::new_with_limits(Cursor::new(bytes), png_limits())
                .read_info()
                .map_err(|e| bad(name, e))?;
            let info = reader.info();
            let gray = match info.color_type {
                png::ColorType::Grayscale | png::ColorType::GrayscaleAlpha => true,
                png::ColorType::Indexed => info
                    .palette
                    .as_ref()
                    .is_some_and(|p| p.chunks_exact(3).all(|c| c[0] == c[1] && c[1] == c[2])),
                png::ColorType::Rgb | png::ColorType::Rgba => false,
            };
            Header {
                width: info.width as usize,
                height: info.height as usize,
                gray,
            }
        }
        Some(Format::Jpeg) => {
            let mut d = jpeg_decoder(bytes);
            d.read_info().map_err(|e| bad(name, e))?;
            let info = d.info().ok_or_else(|| bad(name, "no JPEG header"))?;
            Header {
                width: info.width as usize,
                height: info.height as usize,
                gray: matches!(info.pixel_format, PixelFormat::L8 | PixelFormat::L16),
            }
        }
        None => return Err(not_image(name)),
    };
    check_size(name, h.width, h.height)?;
    Ok(h)
}

fn jpeg_decoder(bytes: &[u8]) -> jpeg_decoder::Decoder<&[u8]> {
    let mut d = jpeg_decoder::Decoder::new(bytes);
    d.set_max_decoding_buffer_size(MAX_PIXELS * 4);
    d
}

/// Composites or drops alpha: `src` has `cin` ∈ {1, 2, 3, 4} interleaved channels; the result
/// has 1 (from 1 or 2) or 3 (from 3 or 4).
fn strip_alpha(src: &[u8], cin: usize, alpha: AlphaMode) -> (Vec<u8>, usize) {
    match cin {
        1 | 3 => (src.to_vec(), cin),
        2 | 4 => {
            let cout = cin - 1;
            let mut out = Vec::with_capacity(src.len() / cin * cout);
            for px in src.chunks_exact(cin) {
                let a = u32::from(px[cout]);
                for &c in &px[..cout] {
                    out.push(match alpha {
                        AlphaMode::Drop => c,
                        // round(c·a/255 + 255·(1 − a/255)) in integers
                        AlphaMode::White => {
                            ((u32::from(c) * a + 255 * (255 - a) + 127) / 255) as u8
                        }
                    });
                }
            }
            (out, cout)
        }
        _ => unreachable!("channel counts are 1 to 4"),
    }
}

/// Decodes a PNG or JPEG file to 8-bit gray (1 channel) or RGB (3 channels), as stored.
pub fn decode(name: &str, bytes: &[u8], alpha: AlphaMode) -> Result<Decoded> {
    match sniff(bytes) {
        Some(Format::Png) => {
            let mut dec = png::Decoder::new_with_limits(Cursor::new(bytes), png_limits());
            dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
            let mut reader = dec.read_info().map_err(|e| bad(name, e))?;
            {
                let info = reader.info();
                check_size(name, info.width as usize, info.height as usize)?;
            }
            let size = reader
                .output_buffer_size()
                .ok_or_else(|| bad(name, "the image is too large for memory"))?;
            let mut buf = vec![0u8; size];
            let out = reader.next_frame(&mut buf).map_err(|e| bad(name, e))?;
            if out.bit_depth != png::BitDepth::Eight {
                return Err(bad(
                    name,
                    format!("unexpected bit depth {:?}", out.bit_depth),
                ));
            }
            let cin = match out.color_type {
                png::ColorType::Grayscale => 1,
                png::ColorType::GrayscaleAlpha => 2,
                png::ColorType::Rgb => 3,
                png::ColorType::Rgba => 4,
                png::ColorType::Indexed => return Err(bad(name, "palette was not expanded")),
            };
            let (w, h) = (out.width as usize, out.height as usize);
            buf.truncate(out.buffer_size());
            // next_frame writes rows of exactly w·cin bytes for 8-bit output.
            if buf.len() != w * h * cin {
                return Err(bad(name, "unexpected row layout"));
            }
            let (data, channels) = strip_alpha(&buf, cin, alpha);
            Ok(Decoded {
                width: w,
                height: h,
                channels,
                data,
            })
        }
        Some(Format::Jpeg) => {
            let mut d = jpeg_decoder(bytes);
            d.read_info().map_err(|e| bad(name, e))?;
            let info = d.info().ok_or_else(|| bad(name, "no JPEG header"))?;
            let (w, h) = (info.width as usize, info.height as usize);
            check_size(name, w, h)?;
            let data = d.decode().map_err(|e| bad(name, e))?;
            let (data, channels) = match info.pixel_format {
                PixelFormat::L8 => (data, 1),
                PixelFormat::RGB24 => (data, 3),
                PixelFormat::CMYK32 => (
                    data.chunks_exact(4)
                        .flat_map(|p| {
                            let k = 255 - u32::from(p[3]);
                            [0, 1, 2].map(|i| ((255 - u32::from(p[i])) * k / 255) as u8)
                        })
                        .collect(),
                    3,
                ),
                PixelFormat::L16 => {
                    return Err(Error::Data(format!(
                        "{name}: 12/16-bit JPEGs are not supported; re-save it as an 8-bit JPEG or a PNG"
                    )))
                }
            };
            if data.len() != w * h * channels {
                return Err(bad(name, "unexpected output size"));
            }
            Ok(Decoded {
                width: w,
                height: h,
                channels,
                data,
            })
        }
        None => Err(not_image(name)),
    }
}

/// ITU-R BT.601 luma (the weights of PIL's `convert("L")`).
#[inline]
pub fn luma(r: f32, g: f32, b: f32) -> f32 {
    0.299 * r + 0.587 * g + 0.114 * b
}

impl Decoded {
    /// The pixels as f32 in 0..=255 with `channels` ∈ {1, 3} channels (gray → RGB repeats the
    /// value; RGB → gray takes the BT.601 luma).
    pub fn to_f32(&self, channels: usize) -> Vec<f32> {
        match (self.channels, channels) {
            (a, b) if a == b => self.data.iter().map(|&v| f32::from(v)).collect(),
            (1, 3) => self.data.iter().flat_map(|&v| [f32::from(v); 3]).collect(),
            (3, 1) => self
                .data
                .chunks_exact(3)
                .map(|p| luma(f32::from(p[0]), f32::from(p[1]), f32::from(p[2])))
                .collect(),
            _ => unreachable!("decoded images have 1 or 3 channels"),
        }
    }
}
