//! The CSV dialect sniffer (`csv_auto_detect := true`), after the rules of
//! DuckDB's `read_csv` sniffer (docs/formats.md, "CSV dialect detection"):
//!
//! 1. **Dialect.** Every candidate (comment none or `#`, outermost; then the
//!    quote/escape pairs; then the delimiters `,` `|` `;` tab) reads the
//!    sample. A candidate's *table* is one of its most frequent row widths:
//!    its *header row* is the first row of that width, the rows before it
//!    are lines to skip, and the rows after it are consistent when they have
//!    that many cells (or one more, when every later row ends with an empty
//!    cell: a trailing delimiter; or fewer, with `null_padding`), else bad
//!    records. Of the widths whose consistent rows outnumber their bad ones,
//!    one of two columns or more beats one column, then more consistent
//!    rows, more columns and fewer lines to skip win ([`analyze`]); a
//!    candidate with no such width is out. A later candidate replaces the
//!    best one by the rules of [`replaces`]: quote evidence first (a
//!    reading that leaves quote bytes out of their role never replaces a
//!    clean one that quoted cells; a clean reading with a doubled quote
//!    inside quotes replaces one that is not clean, whatever the counts),
//!    then fewer bad rows with no fewer consistent ones, then the counts
//!    (one column is the last resort; more consistent rows and no fewer
//!    columns, or as many rows and more columns); on a tie one whose quote
//!    actually quoted a cell wins, then one whose quoted cells all end at
//!    their closing quote (`"a\"b"` points to `\` as the escape), else the
//!    earlier one. A `#` comment candidate must look like comments: at
//!    least one comment line whose cell count differs from the table's,
//!    and 60% of them so.
//! 2. **Header.** Each column's type is the narrowest of BOOLEAN, BIGINT,
//!    DOUBLE, DATE, TIME and TIMESTAMP that every value below the first row
//!    has the form of (else VARCHAR). The first row is a header when every
//!    column is VARCHAR, or when one of its cells does not have its column's
//!    type (a cell over a column without values never has).
//!
//! Options the user gave (or the registry's contract did) are not sniffed:
//! the candidates keep to them.

use crate::formats::csv::dialect::{Dialect, Fixed};
use crate::formats::csv::{CsvOptions, CsvReader, RawShape};

/// Rows of the sample the sniffer reads at most (DuckDB: 10 chunks of 2,048).
pub const SAMPLE_ROWS: usize = 20_480;

const DELIMITERS: [&[u8]; 4] = [b",", b"|", b";", b"\t"];
/// (quote, escape): `"` doubled (first: a sample without quotes reads the
/// same under it, and the registry's contract then keeps RFC 4180 quoting
/// for later files); no quoting; `"` with `\`; `'` doubled; `'` with `\`.
const QUOTES: [(Option<u8>, Option<u8>); 5] =
    [(Some(b'"'), None), (None, None), (Some(b'"'), Some(b'\\')), (Some(b'\''), None), (Some(b'\''), Some(b'\\'))];
const COMMENTS: [Option<u8>; 2] = [None, Some(b'#')];

/// One sample row of a candidate.
struct Row {
    shape: RawShape,
    cells: Vec<Option<String>>,
    /// Blank lines before this row (since the start of the sample).
    blanks_before: u64,
}

/// A candidate's reading of the sample.
#[derive(Clone, Copy, Debug, Default)]
struct Score {
    /// Rows of the table that read well: the header row, rows of its
    /// width (or one more, empty: a trailing delimiter), and with
    /// `null_padding` shorter ones.
    consistent: usize,
    columns: usize,
    /// Rows of the table that a scan reads as bad records: longer ones,
    /// and without `null_padding` shorter ones.
    bad: usize,
    /// Index (into the non-blank rows) of the header row.
    header_row: usize,
    /// Lines before the header row (blank lines count, comments do not).
    skip: u64,
    quoted: bool,
    /// Some unquoted cell starts with `"` (RawShape::stray_quote).
    stray: bool,
    /// Some quoted cell has text after its closing quote.
    dirty: bool,
    /// Some unquoted cell holds the quote byte.
    inner: bool,
    /// Some quoted cell holds a doubled quote (RawShape::doubled_quote).
    doubled: bool,
}

impl Score {
    /// Every quote byte in its role: no unquoted cell starting with `"`
    /// under another quote, no text after a closing quote, no quote byte
    /// inside an unquoted cell.
    fn clean(&self) -> bool {
        !self.stray && !self.dirty && !self.inner
    }
}

/// Whether a candidate's reading `s` replaces the best one so far, `b`
/// (docs/formats.md, "CSV dialect detection").
fn replaces(s: &Score, b: &Score) -> bool {
    // A reading that leaves a quote byte out of its role never replaces a
    // clean one that quoted cells: more columns or rows from splitting
    // quoted text ("a,b" as `"a` and `b"`, a quoted line break as two
    // rows, `"x""y,z"` cut at its comma under a `\` escape) are not a
    // better table. A quoted reading that is not clean itself is likely
    // wrong, and protects nothing; nor does one with bad rows, unless a
    // doubled quote shows its escaping (DuckDB's no_quote.csv reads
    // clean under `"` only with one line a short row).
    if b.quoted && b.clean() && (b.bad == 0 || b.doubled) && !s.clean() {
        return false;
    }
    // A quote doubled inside quotes is evidence for `""` escaping, and it
    // outranks a row-count gain: one short row under `""` made `\` the
    // escape, whose reading cut `"Jones ""Al"", Jr"` at its comma into a
    // row of the right width.
    if s.doubled && s.clean() && s.columns >= 2 && !b.clean() {
        return true;
    }
    // The other way round: a clean reading that quoted cells, with two
    // columns or more and no fewer rows, replaces one that leaves quote
    // bytes out of their role, whatever their column counts (`1;"a;b"`
    // read with `,` has one column per line until a `5;"x,y,z"` gives
    // three, which made every line above it a line to skip).
    if !b.clean() && s.clean() && s.quoted && s.columns >= 2 && s.consistent >= b.consistent {
        return true;
    }
    // Fewer bad records and no fewer good rows, in two columns or more:
    // the better table, whatever the column counts (a `#` line among the
    // rows is a comment, not a short row).
    if s.bad < b.bad && s.consistent >= b.consistent && s.columns >= 2 {
        return true;
    }
    // A reading that skips more lines before its header than its table
    // has rows loses to one with two columns or more that reads more rows
    // and skips fewer: a last line that splits into more cells is not a
    // header below a file of dirty lines (`3;x,y,z` under `,` made the
    // whole file lines to skip, and the scan read no row).
    if b.skip > b.consistent as u64 && s.columns >= 2 && s.consistent > b.consistent && s.skip < b.skip {
        return true;
    }
    // A single column is the reading of last resort.
    if b.columns < 2 && s.columns > b.columns {
        return true;
    }
    // More rows read as bad records is no better table, whatever it gains.
    if s.bad > b.bad {
        return false;
    }
    (s.consistent > b.consistent && s.columns >= b.columns)
        || (s.consistent == b.consistent && s.columns > b.columns)
        || (s.consistent == b.consistent && s.columns == b.columns && s.quoted && !b.quoted)
        // The same table, read without text after a closing quote: this
        // escape is the file's.
        || (s.consistent == b.consistent && s.columns == b.columns && b.dirty && !s.dirty)
}

/// Sniffs `sample` (the start of the file, ending at a line end unless it
/// is the whole file).
/// `cut`: the sample is not the whole file (its last record may be
/// unfinished).
pub fn sniff(sample: &[u8], cut: bool, fixed: &Fixed) -> Dialect {
    let mut best: Option<(Score, Dialect, Vec<Row>)> = None;
    for &comment in fixed.comment.as_ref().map_or(&COMMENTS[..], std::slice::from_ref) {
        for (quote, escape) in quote_candidates(fixed) {
            for delimiter in fixed.delimiter.as_ref().map_or(DELIMITERS.to_vec(), |d| vec![d.as_slice()]) {
                let dialect = CsvOptions {
                    has_header: false,
                    delimiter: delimiter.to_vec(),
                    quote,
                    escape,
                    comment,
                    skip_lines: 0,
                    null_strings: fixed.null_strings.clone(),
                    null_padding: true,
                    ..CsvOptions::default()
                };
                let Some(rows) = read_rows(sample, cut, &dialect) else { continue };
                let Some(score) = analyze(&rows, fixed.null_padding, comment.is_some()) else { continue };
                let better = best.as_ref().is_none_or(|(b, _, _)| replaces(&score, b));
                if better {
                    let d = Dialect {
                        delimiter: delimiter.to_vec(),
                        quote,
                        escape,
                        comment,
                        skip_lines: score.skip,
                        has_header: true,
                    };
                    best = Some((score, d, rows));
                }
            }
        }
    }
    let Some((score, mut dialect, rows)) = best else {
        // Nothing reads the sample (an empty file): the defaults.
        let d = CsvOptions::default();
        return Dialect {
            delimiter: fixed.delimiter.clone().unwrap_or(d.delimiter),
            quote: fixed.quote.unwrap_or(d.quote),
            escape: fixed.escape.unwrap_or(d.escape),
            comment: fixed.comment.unwrap_or(d.comment),
            skip_lines: fixed.skip_lines.unwrap_or(0),
            has_header: fixed.has_header.unwrap_or(true),
        };
    };
    if let Some(skip) = fixed.skip_lines {
        dialect.skip_lines = skip;
    }
    dialect.has_header = fixed.has_header.unwrap_or_else(|| {
        let table: Vec<&Row> = rows.iter().filter(|r| !r.shape.comment).skip(score.header_row).collect();
        detect_header(&table, score.columns)
    });
    // A comment byte no line of the sample uses is no evidence of comments,
    // and would cut later cells at it: none (it travels in the registry).
    if fixed.comment.is_none() && !rows.iter().any(|r| r.shape.comment) {
        dialect.comment = None;
    }
    dialect
}

/// The quote/escape pairs to try: the table's, kept to a given quote
/// and escape (a given pair outside the table is the only candidate).
fn quote_candidates(fixed: &Fixed) -> Vec<(Option<u8>, Option<u8>)> {
    let mut out: Vec<(Option<u8>, Option<u8>)> = Vec::new();
    for &(q, e) in &QUOTES {
        let q = fixed.quote.unwrap_or(q);
        let e = fixed.escape.unwrap_or(e);
        if !out.contains(&(q, e)) {
            out.push((q, e));
        }
    }
    out
}

/// The sample's non-blank rows under one dialect; `None` when it cannot be
/// read so (a quote left open at the end of the whole file; in a cut
/// sample the unfinished last record is dropped instead).
fn read_rows(sample: &[u8], cut: bool, dialect: &CsvOptions) -> Option<Vec<Row>> {
    let mut reader = CsvReader::new(sample, "sample", sample.len().max(1), dialect.clone());
    let mut rows = Vec::new();
    let mut blanks = 0;
    let mut texts = Vec::new();
    while rows.len() < SAMPLE_ROWS {
        let Some(shape) = reader.next_raw(&mut texts).ok()? else { break };
        if shape.unterminated {
            if cut {
                break;
            }
            return None;
        }
        if shape.mid_comment {
            // A comment byte after data would cut a cell silently: the
            // comment candidate cannot be the dialect.
            return None;
        }
        if shape.blank {
            blanks += 1;
            continue;
        }
        rows.push(Row { shape, cells: std::mem::take(&mut texts), blanks_before: blanks });
    }
    Some(rows)
}

/// Widths tried as a candidate's table width: the most frequent ones.
const TABLE_WIDTHS: usize = 8;

/// Scores one candidate's rows (see the module doc); `None` when it is not
/// acceptable (no table whose rows are mostly good, comments that do not
/// look like comments, no rows).
///
/// The table is one of the most frequent row widths: its header row is
/// the first row of that width, the rows before it are lines to skip, and
/// of those whose good rows outnumber their bad ones, the one of two
/// columns or more (one column is the reading of last resort) that reads
/// the most rows well, then the widest, then the one skipping fewer lines.
/// Taking the first row with the most cells instead made one longer row
/// near the end (`4,d,e` below `id,name`) the header, and every line above
/// it a line to skip; and one short row (a polluted line with fewer
/// delimiters) ruled the delimiter out.
fn analyze(rows: &[Row], null_padding: bool, comments: bool) -> Option<Score> {
    let data: Vec<&Row> = rows.iter().filter(|r| !r.shape.comment).collect();
    data.first()?;
    // `always_empty[k]`: data row k and every later one end with an empty cell.
    let mut always_empty = vec![false; data.len() + 1];
    always_empty[data.len()] = true;
    for k in (0..data.len()).rev() {
        always_empty[k] = always_empty[k + 1] && data[k].shape.last_empty;
    }
    // Each width's first row and how many rows have it; only widths whose
    // first row is wider than every row before it, so that the lines to
    // skip are all narrower than the header (a title, a note), never a
    // row wider than the table (a last row alone below everything as its
    // header).
    let mut widths: Vec<(usize, usize, usize)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut widest = 0;
    for (k, row) in data.iter().enumerate() {
        let w = row.cells.len();
        if w > widest {
            widest = w;
            index.insert(w, widths.len());
            widths.push((w, k, 0));
        }
        if let Some(&at) = index.get(&w) {
            widths[at].2 += 1;
        }
    }
    widths.sort_by_key(|&(w, first, count)| (std::cmp::Reverse(count), first, w));
    let mut best: Option<Score> = None;
    for &(w, first, _) in widths.iter().take(TABLE_WIDTHS) {
        let t = table(&data, &always_empty, first, w, null_padding);
        if !few_bad(&t) {
            continue;
        }
        let key = |t: &Score| (t.columns >= 2, t.consistent, t.columns, std::cmp::Reverse(t.skip));
        let better = best.as_ref().is_none_or(|b| key(&t) > key(b));
        if better {
            best = Some(t);
        }
    }
    let mut s = best?;
    if comments && !comments_look_right(rows, s.columns) {
        return None;
    }
    s.quoted = rows.iter().any(|r| r.shape.quoted);
    s.stray = rows.iter().any(|r| r.shape.stray_quote);
    s.dirty = rows.iter().any(|r| r.shape.dirty_quote);
    s.inner = rows.iter().any(|r| r.shape.inner_quote);
    s.doubled = rows.iter().any(|r| r.shape.doubled_quote);
    Some(s)
}

/// Whether a table's bad rows are few enough for it to be the file's:
/// fewer than its consistent rows, and at most one or a quarter of them;
/// with lines to skip as well, fewer than its consistent rows together
/// with those. A polluted row or two (a line with fewer delimiters, a
/// longer last line, a footer) does not change the dialect; prose with a
/// comma on every other line, lines a wrong quote cuts in two, a header
/// over nothing but bad rows, or a one-column file of decimal commas read
/// as a title above two columns are no table.
fn few_bad(t: &Score) -> bool {
    let skipped = usize::try_from(t.skip).unwrap_or(usize::MAX);
    t.bad == 0
        || (t.bad < t.consistent && t.bad <= t.consistent / 4 + 1 && t.bad.saturating_add(skipped) < t.consistent)
}

/// The table whose header is data row `header` (of `width` cells).
fn table(data: &[&Row], always_empty: &[bool], header: usize, width: usize, null_padding: bool) -> Score {
    let mut s = Score {
        columns: width,
        header_row: header,
        consistent: 1,
        skip: header as u64 + data[header].blanks_before,
        ..Score::default()
    };
    for (k, row) in data.iter().enumerate().skip(header + 1) {
        let cols = row.cells.len();
        // A trailing delimiter on this and every later row is no extra cell.
        if cols == width || (always_empty[k] && cols == width + 1) || (cols < width && null_padding) {
            s.consistent += 1;
        } else {
            s.bad += 1;
        }
    }
    s
}

/// A `#` candidate: some comment line must differ from the table's width
/// (else `#` is likely data), and most comment lines should.
fn comments_look_right(rows: &[Row], columns: usize) -> bool {
    let comment_lines = rows.iter().filter(|r| r.shape.comment).count();
    if comment_lines == 0 {
        // No comment seen: the candidate reads like the one without `#`,
        // which comes first and wins the tie.
        return true;
    }
    // A comment line has no cells of its own; what it hid is unknown, so
    // its width is taken as 1 (a line of prose).
    let differing = if columns != 1 { comment_lines } else { 0 };
    differing > 0 && differing * 10 >= comment_lines * 6
}

/// Whether the first row of `table` is a header (see the module doc).
fn detect_header(table: &[&Row], columns: usize) -> bool {
    let Some(first) = table.first() else { return true };
    let below: Vec<&Row> = if table.len() > 1 { table[1..].to_vec() } else { table.to_vec() };
    let types: Vec<Option<SniffType>> = (0..columns)
        .map(|c| {
            let mut possible = SniffType::ALL.to_vec();
            let mut seen = false;
            for row in &below {
                if let Some(Some(v)) = row.cells.get(c) {
                    if v.is_empty() {
                        continue;
                    }
                    seen = true;
                    possible.retain(|t| t.accepts(v));
                }
            }
            seen.then(|| possible.first().copied().unwrap_or(SniffType::Varchar))
        })
        .collect();
    if types.iter().all(|t| *t == Some(SniffType::Varchar)) {
        return true;
    }
    if first.cells.iter().all(|c| c.as_deref().is_none_or(str::is_empty)) {
        return true;
    }
    !first.cells.iter().take(columns).enumerate().all(|(c, cell)| match (cell.as_deref(), types[c]) {
        (None | Some(""), _) => true,
        (Some(_), None) => false,
        (Some(v), Some(t)) => t.accepts(v),
    })
}

/// The types a column may have, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SniffType {
    Boolean,
    Bigint,
    Double,
    Date,
    Time,
    Timestamp,
    Varchar,
}

impl SniffType {
    const ALL: [SniffType; 7] = [
        SniffType::Boolean,
        SniffType::Bigint,
        SniffType::Double,
        SniffType::Date,
        SniffType::Time,
        SniffType::Timestamp,
        SniffType::Varchar,
    ];

    fn accepts(self, text: &str) -> bool {
        let t = text.trim();
        match self {
            SniffType::Boolean => ["true", "false", "t", "f"].iter().any(|b| t.eq_ignore_ascii_case(b)),
            SniffType::Bigint => {
                let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            }
            SniffType::Double => {
                t.bytes().any(|b| b.is_ascii_digit())
                    && t.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
                    && t.parse::<f64>().is_ok()
            }
            SniffType::Date => is_date(t),
            SniffType::Time => is_time(t),
            SniffType::Timestamp => match t.split_once(['T', ' ']) {
                Some((d, rest)) => is_date(d) && is_time(rest.trim_end_matches(|c: char| !c.is_ascii_digit())),
                None => false,
            },
            SniffType::Varchar => true,
        }
    }
}

/// `YYYY-MM-DD`, `YYYY/MM/DD`, `DD-MM-YYYY`, `MM/DD/YYYY`, `DD.MM.YYYY`, and
/// with a two-digit year last, `DD.MM.YY` or `MM/DD/YY` (any separator of
/// `-` `/` `.`, used twice), with plausible parts: the date formats
/// read_csv's sniffer tries (`%d.%m.%y` makes `1.2.20` a date).
fn is_date(t: &str) -> bool {
    let Some(sep) = t.bytes().find(|b| matches!(b, b'-' | b'/' | b'.')) else { return false };
    let parts: Vec<&str> = t.split(sep as char).collect();
    if parts.len() != 3 || parts.iter().any(|p| p.is_empty() || p.len() > 4 || !p.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let n: Vec<u32> = parts.iter().map(|p| p.parse().unwrap_or(0)).collect();
    let (y, a, b) = if parts[0].len() == 4 {
        (n[0], n[1], n[2])
    } else if parts[2].len() == 4 {
        (n[2], n[0], n[1])
    } else if parts[2].len() == 2 && parts[0].len() <= 2 && parts[1].len() <= 2 {
        // A two-digit year is any year of its century: 00 too.
        (n[2] + 100, n[0], n[1])
    } else {
        return false;
    };
    y > 0 && (1..=31).contains(&a) && (1..=31).contains(&b) && (a <= 12 || b <= 12)
}

/// `HH:MM`, `HH:MM:SS` with an optional fraction.
fn is_time(t: &str) -> bool {
    let main = t.split_once('.').map_or(t, |(m, f)| if f.bytes().all(|b| b.is_ascii_digit()) { m } else { "" });
    let parts: Vec<&str> = main.split(':').collect();
    (2..=3).contains(&parts.len())
        && parts.iter().all(|p| (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
        && parts[0].parse::<u32>().is_ok_and(|h| h < 24)
        && parts[1..].iter().all(|p| p.parse::<u32>().is_ok_and(|m| m < 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff_text(text: &str) -> Dialect {
        sniff(text.as_bytes(), false, &Fixed { null_strings: vec![String::new()], ..Fixed::default() })
    }

    #[test]
    fn delimiters() {
        assert_eq!(sniff_text("a,b\n1,2\n").delimiter, b",");
        assert_eq!(sniff_text("a;b;c\n1,5;2;3\n4;5;6\n").delimiter, b";");
        assert_eq!(sniff_text("a\tb\n1\t2\n").delimiter, b"\t");
        assert_eq!(sniff_text("a|b\n1|x,y\n").delimiter, b"|");
    }

    #[test]
    fn quotes() {
        let d = sniff_text("a,b\n\"x,y\",1\n\"p\",2\n");
        assert_eq!((d.delimiter.as_slice(), d.quote), (&b","[..], Some(b'"')));
        let d = sniff_text("a,b\n'x,y',1\n'p',2\n");
        assert_eq!(d.quote, Some(b'\''));
    }

    #[test]
    fn dirty_lines_and_comments() {
        let d = sniff_text("my report\ngenerated today\na,b,c\n1,2,3\n4,5,6\n");
        assert_eq!((d.skip_lines, d.has_header), (2, true));
        // Leading comment lines read as dirty lines (the earlier candidate wins the tie)...
        let d = sniff_text("# a comment\n# another one\na,b\n1,2\n3,4\n");
        assert_eq!((d.comment, d.skip_lines), (None, 2));
        // ... and comment lines among the rows need the comment byte.
        let d = sniff_text("a,b\n1,2\n# a note\n3,4\n");
        assert_eq!((d.comment, d.skip_lines, d.delimiter.as_slice()), (Some(b'#'), 0, &b","[..]));
        // `#` as data is no comment.
        let d = sniff_text("lang,n\nC#,1\nF#,2\n");
        assert_eq!(d.comment, None);
    }

    #[test]
    fn comments_need_a_comment_line_and_may_follow_spaces() {
        // No `#` in the file: no comment byte, whatever else was chosen.
        assert_eq!(sniff_text("a,b\n1,2\n\"x\"y,3\n4,5\n").comment, None);
        // Spaces before the marker: a comment line, as read_csv reads it.
        let d = sniff_text("a,b,c\n1,2,3\n  # a note\n4,5,6\n # another\n7,8,9\n");
        assert_eq!((d.comment, d.delimiter.as_slice(), d.has_header), (Some(b'#'), &b","[..], true));
    }

    #[test]
    fn headers() {
        assert!(sniff_text("id,name\n1,a\n2,b\n").has_header);
        assert!(!sniff_text("1,a\n2,b\n").has_header);
        // All VARCHAR: a header, as read_csv decides.
        assert!(sniff_text("x,y\na,b\n").has_header);
        assert!(!sniff_text("2020-01-01,1.5,true\n2020-01-02,2.5,false\n").has_header);
        assert!(sniff_text("day,value,ok\n2020-01-01,1.5,true\n").has_header);
        // One line with a two-digit-year date (DuckDB's data/csv/versions.csv):
        // a row, not a header, as read_csv reads it.
        let d = sniff_text("2.2.2;1.2.20;1@2@20");
        assert_eq!((d.delimiter.as_slice(), d.has_header), (&b";"[..], false));
        assert!(is_date("1.2.20") && is_date("12/31/99") && !is_date("2.2.2") && !is_date("1.2.345"));
    }

    #[test]
    fn trailing_delimiters_and_fixed_values() {
        let d = sniff_text("c1,c2\n1,2,\n3,4,\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines, d.has_header), (&b","[..], 0, true));
        let fixed = Fixed { delimiter: Some(b";".to_vec()), has_header: Some(false), ..Fixed::default() };
        let d = sniff(b"a,b\n1,2\n", false, &fixed);
        assert_eq!((d.delimiter.as_slice(), d.has_header), (&b";"[..], false));
        // A short row without null_padding is a bad record of the table,
        // not a reason to read the file as one column...
        assert_eq!(sniff_text("a,b,c\n1,2\n3,4,5\n").delimiter, b",");
        // ... unless short rows are as many as good ones: prose with a
        // comma on every other line is one column.
        let d = sniff_text("hello, world\nfoo\nbar, baz\nqux\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b"|"[..], 0));
    }

    #[test]
    fn a_cut_sample_and_given_quotes() {
        // The sample ends inside a quoted cell: the quoted reading still wins.
        let text = "a,b\n\"x,1\",2\n\"y,2\",3\n\"unfinished, multi\nline";
        let d = sniff(text.as_bytes(), true, &Fixed { null_strings: vec![String::new()], ..Fixed::default() });
        assert_eq!((d.delimiter.as_slice(), d.quote), (&b","[..], Some(b'"')));
        // A quote outside the table, given: read with it, header sniffed from the file.
        let fixed = Fixed { quote: Some(Some(b'`')), null_strings: vec![String::new()], ..Fixed::default() };
        let d = sniff(b"1,`a,b`\n2,`c`\n", false, &fixed);
        assert_eq!((d.quote, d.has_header), (Some(b'`'), false));
        // A `#` after data on a line is no comment: the comment candidate is out.
        let d = sniff_text("a,b\n1,2\n# note\n3,C#\n");
        assert_eq!(d.comment, None);
    }

    /// DuckDB's data/csv files a sniffer that ranks readings by column and
    /// row counts alone would split (quoted text read without quotes: more
    /// columns or rows, and cells starting with `"`).
    #[test]
    fn quoted_text_is_not_split_for_more_columns() {
        let one_column = [
            "\"100,000.00\"\n\"300,000.20\"\n\"300,0,00.40\"\n\"30,0,0.406\"\n",
            "col1\n\"cell with\nnewline\"\n",
            "\"header1;header2;header3\"\n\"value1;value2;value3\"\n\"value1;value2;value3\"\n",
            "\"Dec 8, 2022\"\n\"Sep 26, 2022\"\n\"Aug 31, 2022\"\n",
        ];
        for text in one_column {
            let d = sniff_text(text);
            assert_eq!((d.quote, d.skip_lines), (Some(b'"'), 0), "{text:?}");
        }
        // A quoted reading that is not clean does not hold a split back:
        // DuckDB's no_quote.csv, where `"` would merge two lines into one
        // cell and leave `"here"` inside an unquoted one.
        let d = sniff_text("a|b\n\"hello|world\nh'ow do you|do\"\n'I am'|\"here\"\n");
        assert_eq!(d.delimiter, b"|");
        // Nor do quotes that never quote a cell.
        let d = sniff_text("a,b\nsays \"hi\",2\n\"x,3\n");
        assert_eq!(d.delimiter, b",");
    }

    #[test]
    fn text_after_a_closing_quote_points_to_another_escape() {
        let d = sniff_text("123|TEST7|text1\n345|TEST7|\"text\\\"2\\\"\"\n\"567\"|TEST7|text3\n");
        assert_eq!((d.delimiter.as_slice(), d.quote, d.escape), (&b"|"[..], Some(b'"'), Some(b'\\')));
        // Without that hint, `""` stays the escape.
        let d = sniff_text("a|b\n1|\"x\"\"y\"\n2|\"z\"\n");
        assert_eq!((d.quote, d.escape), (Some(b'"'), None));
    }

    /// Readings that leave quote bytes out of their role must not win on
    /// column or row counts (cases from comparing with read_csv and
    /// csv-spectrum style files): a whole file skipped as dirty lines, and
    /// a quoted `""` with a delimiter split into cells and rows.
    #[test]
    fn quote_bytes_out_of_their_role_do_not_win() {
        // `,` reads one column per line until the last gives three: the
        // lines above it were skipped and no row was read.
        let d = sniff_text("id;name\n1;\"a;b\"\n2;bob\n3;carol\n4;dave\n5;\"x,y,z\"\n");
        assert_eq!((d.delimiter.as_slice(), d.quote, d.skip_lines), (&b";"[..], Some(b'"'), 0));
        // A `\` escape cut `"x""y,z` at its comma (text after `"x"`) and
        // then `'` won the tie: one record became two rows.
        let d = sniff_text("a,b\n\"x\"\"y,z\nmore\",w\n");
        assert_eq!((d.delimiter.as_slice(), d.quote, d.escape, d.comment), (&b","[..], Some(b'"'), None, None));
        let d = sniff_text("1,\"a\"\" b, c\"\n2,\"d\"\" e, f\"\n3,\"g\"\" h, i\"\n");
        assert_eq!((d.delimiter.as_slice(), d.quote, d.escape, d.has_header), (&b","[..], Some(b'"'), None, false));
    }

    /// Without quotes: a last line that splits into more cells is no
    /// header below a file of lines to skip.
    #[test]
    fn a_reading_that_skips_most_lines_loses_to_one_that_reads_them() {
        let d = sniff_text("id;name\n1;alice\n2;bob\n3;x,y,z\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines, d.has_header), (&b";"[..], 0, true));
        // Title lines above a table are still lines to skip.
        let d = sniff_text("my report\ngenerated today, by me\na,b,c\n1,2,3\n4,5,6\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b","[..], 2));
    }

    /// One short row made `\` the escape: under it `"Jones ""Al"", Jr"` is
    /// cut at its comma into a row of the right width, and the `""` cells
    /// kept their quotes. A quote doubled inside quotes outranks that gain.
    #[test]
    fn a_doubled_quote_outranks_a_row_count_gain() {
        let d = sniff_text("id,name,note\n1,\"Smith, \"\"Bob\"\"\",ok\n2,\"Jones \"\"Al\"\", Jr\"\n");
        assert_eq!(
            (d.delimiter.as_slice(), d.quote, d.escape, d.skip_lines, d.has_header),
            (&b","[..], Some(b'"'), None, 0, true)
        );
        // A `\` escape still wins where the text shows it and no `""` does.
        let d = sniff_text("a,b\n1,\"say \\\"hi\\\", ok\"\n2,\"x\"\n");
        assert_eq!((d.delimiter.as_slice(), d.escape), (&b","[..], Some(b'\\')));
    }

    /// A longer row late in the file is a bad record of the table above
    /// it, not its header: the lines above it are data, not lines to skip.
    #[test]
    fn a_longer_row_is_no_header_below_rows_of_the_table() {
        let d = sniff_text("id,name\n1,a\n2,b\n3,c\n4,d,e\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines, d.has_header), (&b","[..], 0, true));
        let d = sniff_text("id,name\n1,a\n2,b\n3,c\n4,d,e\n5,f,g\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b","[..], 0));
        // Title lines above a table are still lines to skip, however many.
        let d = sniff_text("t1\nt2\nt3\na,b\n1,2\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b","[..], 3));
    }

    /// Pollock-style files (Vitagliano et al.'s benchmark of polluted CSV):
    /// a row with fewer delimiters, a row with more, and two tables.
    #[test]
    fn polluted_files() {
        // Fewer delimiters: one bad record, not a one-column file.
        let d = sniff_text("a,b,c\n1,2,3\n4,5\n6,7,8\n9,10,11\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines, d.has_header), (&b","[..], 0, true));
        // More delimiters.
        let d = sniff_text("a;b;c\n1;2;3\n4;5;6;7\n8;9;10\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b";"[..], 0));
        // Two tables: the larger is the table, the other's rows bad records...
        let d = sniff_text("a,b\n1,2\n3,4\n5,6\n7,8\n\nx,y,z\n5,6,7\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b","[..], 0));
        // ... and of two as large, the later one, with the earlier one's
        // lines (and the blank line) to skip: they are counted and shown
        // as skipped lines (scan), never lost in silence.
        let d = sniff_text("a,b\n1,2\n3,4\n\nx,y,z\n5,6,7\n8,9,10\n");
        assert_eq!((d.delimiter.as_slice(), d.skip_lines), (&b","[..], 4));
    }

    #[test]
    fn empty_sample_gives_the_defaults() {
        let d = sniff_text("");
        assert_eq!((d.delimiter.as_slice(), d.quote, d.has_header), (&b","[..], Some(b'"'), true));
    }
}
