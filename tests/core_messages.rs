//! The core does not speak CLI (issue 14, issue 10): messages and receipt text built outside
//! `src/cli/` reach JS users too, so they name parameters by their identity (`Error::param`,
//! rendered `--sigma-x` by the CLI and `sigmaX` in JS) or in words, never as a command-line
//! flag or command. This scans every string literal in the library sources outside the CLI for
//! `--flag` and `` `privmix <command>` ``.
use std::fs;
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// String literals on a line (plain "…" only; good enough for this codebase's messages).
fn literals(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(a) = rest.find('"') {
        let after = &rest[a + 1..];
        let mut end = None;
        let mut esc = false;
        for (i, c) in after.char_indices() {
            match c {
                '\\' if !esc => esc = true,
                '"' if !esc => {
                    end = Some(i);
                    break;
                }
                _ => esc = false,
            }
        }
        match end {
            Some(e) => {
                out.push(&after[..e]);
                rest = &after[e + 1..];
            }
            None => break,
        }
    }
    out
}

/// Whether `line` ends inside a string literal (an odd number of unescaped quotes, char
/// literals `'"'` aside).
fn open_quote(line: &str) -> bool {
    let line = line.replace("'\"'", "").replace("b'\"'", "");
    let mut open = false;
    let mut esc = false;
    for c in line.chars() {
        match c {
            '\\' if !esc => esc = true,
            '"' if !esc => open = !open,
            _ => esc = false,
        }
    }
    open
}

fn has_flag(s: &str) -> bool {
    let b = s.as_bytes();
    (0..b.len().saturating_sub(2)).any(|i| {
        b[i] == b'-'
            && b[i + 1] == b'-'
            && b[i + 2].is_ascii_lowercase()
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric())
    })
}

/// A command line (`` `privmix federated keygen` ``): the page's users have no such command.
fn names_command(s: &str) -> bool {
    s.contains("`privmix ")
}

#[test]
fn the_scanner_sees_a_flag() {
    assert_eq!(
        literals(r#"x("give --epsilon", "b")"#),
        vec!["give --epsilon", "b"]
    );
    assert!(has_flag("give --epsilon"));
    assert!(has_flag("--seed"));
    assert!(!has_flag("a -- b"));
    assert!(!has_flag("x--y"));
    // A literal continued on the next line is still open at the line's end.
    assert!(open_quote(r#"format!("drop it \"#));
    assert!(!open_quote(r#"format!("drop it \  or use --pca", x)"#));
    assert!(!open_quote(r#"let q = '"';"#));
    assert!(has_flag(literals(r#"x("drop it \  or use --pca K")"#)[0]));
    assert!(names_command(
        "use the file `privmix federated keygen` wrote"
    ));
    assert!(!names_command("use the key file privmix's keygen wrote"));
}

#[test]
fn library_messages_name_no_cli_flags() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        // The CLI renders flags; error.rs renders a parameter identity as a flag (and tests it).
        if rel.starts_with("cli/") || rel == "main.rs" || rel == "error.rs" {
            continue;
        }
        let text = fs::read_to_string(&f).unwrap();
        // Unit tests at the bottom of a file may drive the CLI's words; library code may not.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        // A literal continued over lines (`\` at a line's end) is read whole: lines are
        // joined while a quote is left open.
        let mut pending = String::new();
        let mut first = 0;
        for (i, line) in code.lines().enumerate() {
            let t = line.trim_start();
            if pending.is_empty() && t.starts_with("//") {
                continue;
            }
            if pending.is_empty() {
                first = i;
            }
            pending.push_str(t);
            if open_quote(&pending) {
                continue;
            }
            for lit in literals(&pending) {
                if has_flag(lit) || names_command(lit) {
                    found.push(format!("src/{rel}:{}: {lit}", first + 1));
                }
            }
            pending.clear();
        }
    }
    assert!(
        found.is_empty(),
        "library text naming CLI flags or commands (JS users see these; use Error::param or words):\n{}",
        found.join("\n")
    );
}
