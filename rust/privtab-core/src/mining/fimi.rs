//! Reader of the FIMI transaction format: one transaction per line, items as
//! space-separated non-negative integers.

use std::path::Path;

use crate::{Error, Result};

/// Transactions in CSR form: row `t` holds `indices[indptr[t]..indptr[t + 1]]`, strictly
/// increasing. Columns are the distinct items of the input, in increasing order of id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transactions {
    /// Row offsets, `n_transactions + 1` values starting at 0.
    pub indptr: Vec<i64>,
    /// Column of each item (its id's rank among [`item_ids`](Self::item_ids)), sorted
    /// within each row.
    pub indices: Vec<u32>,
    /// The item id of each column, increasing.
    pub item_ids: Vec<u32>,
}

impl Transactions {
    /// Number of columns: the distinct items of the input.
    pub fn n_items(&self) -> usize {
        self.item_ids.len()
    }
}

/// Ids below this are ranked through a table indexed by id (at most 256 KiB) even when the
/// input is shorter; above it, only when there are as many items as ids.
const SMALL_TABLE: usize = 1 << 16;

/// Replaces every item id of `items` by its column, the id's rank among the distinct ids,
/// and returns those ids in increasing order.
///
/// Memory stays linear in the input whatever the ids' values: a table indexed by id when
/// the largest id is below `table_limit`, else a sorted copy of the ids. Ranks keep the
/// order of ids, so rows stay sorted.
fn dense_columns(items: &mut [u32], max_item: Option<u32>, table_limit: usize) -> Vec<u32> {
    let Some(max_item) = max_item else {
        return Vec::new();
    };
    let table_len = max_item as usize + 1;
    if table_len <= table_limit {
        let mut rank = vec![0u32; table_len];
        for &item in items.iter() {
            rank[item as usize] = 1;
        }
        let mut item_ids = Vec::new();
        for (id, slot) in rank.iter_mut().enumerate() {
            if *slot != 0 {
                *slot = item_ids.len() as u32;
                item_ids.push(id as u32);
            }
        }
        for item in items.iter_mut() {
            *item = rank[*item as usize];
        }
        item_ids
    } else {
        let mut item_ids = items.to_vec();
        item_ids.sort_unstable();
        item_ids.dedup();
        for item in items.iter_mut() {
            *item = item_ids.partition_point(|&id| id < *item) as u32;
        }
        item_ids
    }
}

/// Parses FIMI text. Empty lines are empty transactions; a final newline does not start a
/// transaction. `source` names the input in error messages. The columns are the distinct
/// item ids, so memory is linear in the size of `text` whatever the ids' values.
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
            item_ids: Vec::new(),
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
    let table_limit = indices.len().max(SMALL_TABLE);
    let item_ids = dense_columns(&mut indices, max_item, table_limit);
    Ok(Transactions {
        indptr,
        indices,
        item_ids,
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
        assert_eq!(t.item_ids, vec![0, 1, 2, 3]);
        let t = parse_transactions(b"5 \r\n7", "x").unwrap();
        assert_eq!(t.indptr, vec![0, 1, 2]);
        assert_eq!((t.indices, t.item_ids), (vec![0, 1], vec![5, 7]));
        assert_eq!(parse_transactions(b"", "x").unwrap().indptr, vec![0]);
        assert_eq!(parse_transactions(b"\n", "x").unwrap().indptr, vec![0, 0]);
    }

    #[test]
    fn huge_item_ids_get_one_column_each() {
        let dir = std::env::temp_dir().join(format!("privtab-fimi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("huge.dat");
        std::fs::write(&path, b"4000000000 7\n\n4294967294\n7\n").unwrap();
        let t = read_transactions(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(t.item_ids, vec![7, 4_000_000_000, 4_294_967_294]);
        assert_eq!(t.n_items(), 3);
        assert_eq!(t.indptr, vec![0, 2, 2, 3, 4]);
        assert_eq!(t.indices, vec![0, 1, 2, 0]);
    }

    #[test]
    fn table_and_sorted_ranking_give_the_same_columns() {
        let text = b"9 3 1000\n\n3 70000\n1 9 3\n70000 0\n";
        let parsed = parse_transactions(text, "x").unwrap();
        let mut ids = Vec::new();
        for line in std::str::from_utf8(text).unwrap().lines() {
            let mut row: Vec<u32> = line.split(' ').filter_map(|t| t.parse().ok()).collect();
            row.sort_unstable();
            ids.extend(row);
        }
        let max_item = ids.iter().copied().max();
        let (mut by_table, mut by_sort) = (ids.clone(), ids.clone());
        let from_table = dense_columns(&mut by_table, max_item, usize::MAX);
        let from_sort = dense_columns(&mut by_sort, max_item, 0);
        assert_eq!(from_table, vec![0, 1, 3, 9, 1000, 70000]);
        assert_eq!((&from_sort, &by_sort), (&from_table, &by_table));
        assert_eq!((parsed.item_ids, parsed.indices), (from_table, by_table));
        assert_eq!(dense_columns(&mut [], None, 0), Vec::<u32>::new());
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
