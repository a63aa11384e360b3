//! Reader of the FIMI transaction format: one transaction per line, items as
//! space-separated non-negative integers.

use std::path::Path;

use crate::{Error, Result};

/// Transactions in CSR form: row `t` holds `indices[indptr[t]..indptr[t + 1]]`, strictly
/// increasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transactions {
    /// Row offsets, `n_transactions + 1` values starting at 0.
    pub indptr: Vec<i64>,
    /// Item ids, sorted within each row.
    pub indices: Vec<u32>,
    /// One more than the largest item id (0 when there are no items).
    pub n_items: usize,
}

/// Parses FIMI text. Empty lines are empty transactions; a final newline does not start a
/// transaction. `source` names the input in error messages.
///
/// # Errors
/// [`Error::InvalidData`] naming `source`, the line and the token, for a token that is not
/// a non-negative integer below 2^32 − 1 and for an item repeated within a line.
pub fn parse_transactions(text: &[u8], source: &str) -> Result<Transactions> {
    let mut indptr = vec![0i64];
    let mut indices: Vec<u32> = Vec::with_capacity(text.len() / 3);
    let mut max_item: Option<u32> = None;
    let body = text.strip_suffix(b"\n").unwrap_or(text);
    if text.is_empty() {
        return Ok(Transactions {
            indptr,
            indices,
            n_items: 0,
        });
    }
    for (number, line) in body.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let start = indices.len();
        for token in line
            .split(|&b| b == b' ' || b == b'\t')
            .filter(|t| !t.is_empty())
        {
            let item = parse_item(token).ok_or_else(|| {
                Error::InvalidData(format!(
                    "{source}, line {}: {:?} is not an item id (a non-negative integer below 4294967295)",
                    number + 1,
                    String::from_utf8_lossy(token)
                ))
            })?;
            indices.push(item);
        }
        let row = &mut indices[start..];
        if !row.is_sorted_by(|a, b| a < b) {
            row.sort_unstable();
            if let Some(pair) = row.windows(2).find(|w| w[0] == w[1]) {
                return Err(Error::InvalidData(format!(
                    "{source}, line {}: item {} is repeated",
                    number + 1,
                    pair[0]
                )));
            }
        }
        if let Some(&last) = row.last() {
            max_item = Some(max_item.map_or(last, |m| m.max(last)));
        }
        indptr.push(indices.len() as i64);
    }
    Ok(Transactions {
        indptr,
        indices,
        n_items: max_item.map_or(0, |m| m as usize + 1),
    })
}

fn parse_item(token: &[u8]) -> Option<u32> {
    if token.len() > 10 {
        return None;
    }
    let mut value: u64 = 0;
    for &b in token {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
    }
    u32::try_from(value).ok().filter(|&v| v < u32::MAX)
}

/// Reads and parses a FIMI `.dat` file (see [`parse_transactions`]).
///
/// # Errors
/// [`Error::Io`] naming the path when the file cannot be read, and the errors of
/// [`parse_transactions`].
pub fn read_transactions(path: &Path) -> Result<Transactions> {
    let text = std::fs::read(path).map_err(|err| Error::io(path, &err))?;
    parse_transactions(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_empty_rows_and_trailing_newline() {
        let t = parse_transactions(b"3 1 2\n\n0\n", "x").unwrap();
        assert_eq!(t.indptr, vec![0, 3, 3, 4]);
        assert_eq!(t.indices, vec![1, 2, 3, 0]);
        assert_eq!(t.n_items, 4);
        let t = parse_transactions(b"5 \r\n7", "x").unwrap();
        assert_eq!(t.indptr, vec![0, 1, 2]);
        assert_eq!(t.n_items, 8);
        assert_eq!(parse_transactions(b"", "x").unwrap().indptr, vec![0]);
        assert_eq!(parse_transactions(b"\n", "x").unwrap().indptr, vec![0, 0]);
    }

    #[test]
    fn unreadable_files_are_io_errors() {
        let err = read_transactions(Path::new("/nonexistent/x.dat")).unwrap_err();
        assert!(matches!(
            err,
            Error::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            }
        ));
        assert!(
            err.to_string().contains("cannot read /nonexistent/x.dat"),
            "{err}"
        );
    }

    #[test]
    fn errors_name_source_line_and_token() {
        let err = parse_transactions(b"1 2\n3 x4\n", "f.dat").unwrap_err();
        assert!(err.to_string().contains("f.dat, line 2: \"x4\""), "{err}");
        let err = parse_transactions(b"1 2 1\n", "f.dat").unwrap_err();
        assert!(
            err.to_string().contains("line 1: item 1 is repeated"),
            "{err}"
        );
        assert!(parse_transactions(b"-1\n", "f").is_err());
        assert!(parse_transactions(b"4294967295\n", "f").is_err());
        assert!(parse_transactions(b"99999999999999\n", "f").is_err());
    }
}
