//! Finding the labelled images in a list of (path, bytes) files or in a ZIP archive.
//!
//! The class of an image is the name of the folder that directly contains it, so
//! `digits/3/a.png`, `3/a.png` and `digits/train/3/a.png` are all class `3`. Skipped, silently:
//! folders named `__MACOSX`, names starting with a dot (at any level), folders, and files whose
//! extension is not `.png`, `.jpg` or `.jpeg` (any case). Errors name the file and the fix.

use super::zipfile;
use crate::error::{Error, Result};

/// An image file with its class folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelledFile {
    /// Path as given, with `/` separators.
    pub path: String,
    /// The folder directly containing the file.
    pub class: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
}

/// Whether the file name has an image extension we read.
pub fn is_image_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".png") || lower.ends_with(".jpg") || lower.ends_with(".jpeg")
}

/// Path components of `path` (`\` is treated as `/`; empty and `.` components dropped).
fn components(path: &str) -> Vec<&str> {
    path.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// Whether a path is ignored: `__MACOSX` anywhere, or a component starting with a dot.
fn ignored(parts: &[&str]) -> bool {
    parts.iter().any(|c| *c == "__MACOSX" || c.starts_with('.'))
}

/// Keeps the image files of `files`, each with its class folder, sorted by path.
///
/// Errors: no image file at all; an image with no folder; a folder that holds images and also
/// class folders; fewer than two classes.
pub fn labelled_files(files: Vec<(String, Vec<u8>)>, source: &str) -> Result<Vec<LabelledFile>> {
    let total = files.len();
    let mut out = Vec::new();
    let mut skipped_other = 0usize;
    for (path, bytes) in files {
        let parts = components(&path);
        if parts.is_empty() || ignored(&parts) {
            continue;
        }
        let name = parts[parts.len() - 1];
        if !is_image_name(name) {
            skipped_other += 1;
            continue;
        }
        if parts.len() < 2 {
            return Err(Error::Data(format!(
                "{source}: image '{path}' is not inside a class folder; put every image in a folder named after its class, e.g. 3/{name} (or digits/3/{name})"
            )));
        }
        out.push(LabelledFile {
            class: parts[parts.len() - 2].to_string(),
            path: parts.join("/"),
            bytes,
        });
    }
    if out.is_empty() {
        return Err(Error::Data(format!(
            "{source}: no PNG or JPEG images found ({total} entries, {skipped_other} non-image files); give a ZIP or folder laid out as <class>/<image>.png"
        )));
    }
    out.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    // A folder may not both hold images (be a class) and contain class folders.
    let mut class_dirs: Vec<&str> = out
        .iter()
        .map(|f| &f.path[..f.path.rfind('/').expect("has a folder")])
        .collect();
    class_dirs.sort_unstable();
    class_dirs.dedup();
    for f in &out {
        let dir = &f.path[..f.path.rfind('/').expect("has a folder")];
        if let Some(inner) = class_dirs
            .iter()
            .find(|d| d.len() > dir.len() && d.starts_with(dir) && d.as_bytes()[dir.len()] == b'/')
        {
            return Err(Error::Data(format!(
                "{source}: '{}' lies in folder '{dir}', which also contains the class folder '{inner}'; move it into a class folder or remove it, so that every image sits in the folder named after its class",
                f.path
            )));
        }
    }
    let mut classes: Vec<&str> = out.iter().map(|f| f.class.as_str()).collect();
    classes.sort_unstable();
    classes.dedup();
    if classes.len() < 2 {
        return Err(Error::Data(format!(
            "{source}: all {} images are in one folder '{}', so there is only one class; put each class in its own subfolder, e.g. {}/<class>/<image>.png, with at least two classes",
            out.len(),
            classes[0],
            classes[0]
        )));
    }
    Ok(out)
}

/// Reads every file of a ZIP archive (folders, `__MACOSX`/dot entries and non-image files
/// skipped) into (path, bytes), with at most `max_bytes` decompressed bytes in all.
pub fn read_zip(bytes: &[u8], max_bytes: u64, source: &str) -> Result<Vec<(String, Vec<u8>)>> {
    let archive = zipfile::Archive::new(bytes, source)?;
    if archive.entries.is_empty() {
        return Err(Error::Data(format!(
            "{source}: the ZIP archive is empty; add class folders with images, laid out as <class>/<image>.png"
        )));
    }
    let mut files = Vec::new();
    let mut total = 0u64;
    for (i, entry) in archive.entries.iter().enumerate() {
        if entry.is_dir() {
            continue;
        }
        let parts = components(&entry.name);
        if parts.is_empty() || ignored(&parts) || !is_image_name(parts[parts.len() - 1]) {
            continue;
        }
        let left = max_bytes.saturating_sub(total);
        let buf = archive.read(i, left).map_err(|e| match e {
            Error::Data(m) if m.contains("decompresses to more than") => Error::Data(format!(
                "{source}: the images decompress to more than {max_bytes} bytes (limit reached at '{}'); use fewer or smaller images",
                entry.name
            )),
            e => e,
        })?;
        total += buf.len() as u64;
        files.push((entry.name.clone(), buf));
    }
    if files.is_empty() {
        return Err(Error::Data(format!(
            "{source}: the ZIP archive holds no PNG or JPEG images ({} entries); lay it out as <class>/<image>.png",
            archive.entries.len()
        )));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(p: &str) -> (String, Vec<u8>) {
        (p.to_string(), p.as_bytes().to_vec())
    }

    #[test]
    fn class_is_the_folder_directly_containing_the_file() {
        let got = labelled_files(
            vec![
                f("digits/3/b.png"),
                f("digits/7/a.JPG"),
                f("digits/3/a.jpeg"),
                f("__MACOSX/digits/3/._a.png"),
                f("digits/.DS_Store"),
                f("digits/3/.hidden.png"),
                f("digits/readme.txt"),
                f("digits/7/notes.csv"),
            ],
            "t",
        )
        .unwrap();
        let v: Vec<(&str, &str)> = got
            .iter()
            .map(|l| (l.path.as_str(), l.class.as_str()))
            .collect();
        assert_eq!(
            v,
            [
                ("digits/3/a.jpeg", "3"),
                ("digits/3/b.png", "3"),
                ("digits/7/a.JPG", "7")
            ]
        );
        assert_eq!(got[0].bytes, b"digits/3/a.jpeg");
    }

    #[test]
    fn classes_at_different_depths_merge_by_name() {
        let got = labelled_files(
            vec![f("d/train/3/a.png"), f("d/test/3/b.png"), f("4\\c.png")],
            "t",
        )
        .unwrap();
        let classes: Vec<&str> = got.iter().map(|l| l.class.as_str()).collect();
        assert_eq!(classes, ["4", "3", "3"]);
    }

    #[test]
    fn structure_errors_name_the_file_and_the_fix() {
        let e = labelled_files(vec![f("a.png"), f("x/b.png")], "in.zip")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'a.png'") && e.contains("class folder"), "{e}");
        let e = labelled_files(vec![f("digits/a.png"), f("digits/b.png")], "in.zip")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("one class") && e.contains("digits/<class>"),
            "{e}"
        );
        let e = labelled_files(
            vec![f("digits/a.png"), f("digits/3/b.png"), f("digits/4/b.png")],
            "in.zip",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("'digits/a.png'") && e.contains("'digits/3'"),
            "{e}"
        );
        let e = labelled_files(vec![f("a/readme.txt")], "in.zip")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no PNG or JPEG"), "{e}");
    }
}
