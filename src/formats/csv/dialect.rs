//! The CSV dialect, in one room: what a reader needs to cut a file into
//! records and cells ([`CsvOptions`], `read_csv`'s names for the parts),
//! what the sniffer decides ([`Dialect`]) and what it may not change
//! ([`Fixed`]), and the rule that the delimiter, quote, escape and comment
//! bytes play distinct roles ([`check_roles`]). The options hold the
//! user's values (options/specs.rs `csv_*`), the sniffer reads a sample
//! (sniff.rs), and a scan resolves one from the others at bind
//! (scan/mod.rs `sniff_csv_dialect`).

/// How to read a CSV file (its dialect, as `read_csv` names the parts).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// The first non-blank record names the columns.
    pub has_header: bool,
    /// Cell separator: 1 to 4 bytes, as `read_csv` allows.
    pub delimiter: Vec<u8>,
    /// The quote byte; `None`: nothing is quoted.
    pub quote: Option<u8>,
    /// The byte that escapes a quote inside quotes; the quote itself by
    /// default (`""` is one quote). `None` or the quote: RFC 4180.
    pub escape: Option<u8>,
    /// A line starting with this byte is no record; an unquoted one later in
    /// a line ends the record there (the rest of the line is a comment).
    pub comment: Option<u8>,
    /// Lines dropped before the header (blank lines count, comments do not).
    pub skip_lines: u64,
    /// Unquoted cells with one of these texts are NULL (a quoted cell never is).
    pub null_strings: Vec<String>,
    /// A record with fewer cells than the header gets NULLs for the rest
    /// (without it, it is a bad record).
    pub null_padding: bool,
    /// `max_record_bytes`: a longer record (quoted line breaks included, its
    /// line end not) is a bad record, passed over without being held whole;
    /// an unterminated quote is bounded the same way.
    pub max_record_bytes: usize,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            has_header: true,
            delimiter: vec![b','],
            quote: Some(b'"'),
            escape: None,
            comment: None,
            skip_lines: 0,
            null_strings: vec![String::new()],
            null_padding: false,
            max_record_bytes: crate::formats::DEFAULT_MAX_RECORD_BYTES,
        }
    }
}

/// Which unquoted cells are NULL ([`CsvOptions::null_strings`]), made once
/// per record by a loop over its cells: under the default, the empty
/// string alone, a cell's length decides without a pass over the list
/// (per cell, that pass cost 21 M of a `COPY` of the bench CSV's slice).
#[derive(Clone, Copy)]
pub(super) enum NullStrings<'a> {
    Empty,
    Listed(&'a [String]),
}

impl NullStrings<'_> {
    /// Whether an unquoted cell of these bytes is NULL (lengths first, so
    /// that an empty cell needs no byte compare).
    #[inline(always)]
    pub(super) fn hold(self, raw: &[u8]) -> bool {
        match self {
            NullStrings::Empty => raw.is_empty(),
            NullStrings::Listed(list) => {
                list.iter().any(|n| n.len() == raw.len() && (raw.is_empty() || n.as_bytes() == raw))
            }
        }
    }
}

impl CsvOptions {
    /// The NULL strings' test (see [`NullStrings`]).
    #[inline]
    pub(super) fn nulls(&self) -> NullStrings<'_> {
        match self.null_strings.as_slice() {
            [only] if only.is_empty() => NullStrings::Empty,
            list => NullStrings::Listed(list),
        }
    }

    /// The escape byte when it differs from the quote (`\`), else `None`.
    pub(super) fn distinct_escape(&self) -> Option<u8> {
        self.escape.filter(|e| Some(*e) != self.quote)
    }
}

/// What the sniffer decides (csv_auto_detect): the whole dialect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialect {
    pub delimiter: Vec<u8>,
    pub quote: Option<u8>,
    pub escape: Option<u8>,
    pub comment: Option<u8>,
    pub skip_lines: u64,
    pub has_header: bool,
}

/// The values the sniffer may not change (`Some`: fixed).
#[derive(Clone, Debug, Default)]
pub struct Fixed {
    pub delimiter: Option<Vec<u8>>,
    pub quote: Option<Option<u8>>,
    pub escape: Option<Option<u8>>,
    pub comment: Option<Option<u8>>,
    pub skip_lines: Option<u64>,
    pub has_header: Option<bool>,
    pub null_padding: bool,
    pub null_strings: Vec<String>,
}

/// The delimiter, quote, escape and comment bytes must play distinct
/// roles (the escape may be the quote: RFC 4180's `""`); the error names
/// the two options that clash.
pub fn check_roles(
    delimiter: &[u8],
    quote: Option<u8>,
    escape: Option<u8>,
    comment: Option<u8>,
) -> std::result::Result<(), String> {
    let roles = [("csv_quote", quote), ("csv_escape", escape), ("csv_comment", comment)];
    for (i, (name, byte)) in roles.iter().enumerate() {
        let Some(b) = byte else { continue };
        if delimiter.contains(b) {
            return Err(format!("\"{name}\" '{}' is also in \"csv_delimiter\"", *b as char));
        }
        for (other, o) in &roles[i + 1..] {
            let same_role = (*name, *other) == ("csv_quote", "csv_escape");
            if Some(*b) == *o && !same_role {
                return Err(format!("\"{name}\" and \"{other}\" are both '{}'", *b as char));
            }
        }
    }
    Ok(())
}
