//! A bounds check of a Parquet footer before arrow-rs decodes it.
//!
//! The footer is Thrift compact protocol. A corrupt or hostile footer can
//! declare a list of millions of elements in a few bytes, and a decoder that
//! reserves room for the declared count asks for gigabytes: under a strict
//! address-space limit the allocation fails and Rust aborts the host process
//! (arrow-testing's fuzz case 4819270771146752 asks for 6.6 GB from a
//! 50-byte file). This walk reads every field of the footer without
//! allocating and refuses any length that the bytes left cannot hold: each
//! element of a list, set or map takes at least one byte, so a count larger
//! than the remaining bytes is corrupt. It also bounds Thrift nesting, and
//! checks that the schema's `num_children` counts fit the schema list.
//!
//! The same walk re-encodes the footer with the repairs that let arrow-rs
//! read what DuckDB and pyarrow read (each found on a shipped file):
//! - a row group without its (required, informational) `total_byte_size`
//!   gets 0;
//! - a ColumnMetaData field whose wire type is not the one parquet.thrift
//!   gives it is dropped, as a reader that does not know the field skips it
//!   (Dremio wrote a list as field 15, which arrow-rs reads as an i32 and
//!   then loses its place);
//! - a dictionary page offset inside the leading magic bytes (0: "none") is
//!   dropped, so the chunk starts at its data page offset;
//! - a ConvertedType beyond those parquet.thrift defines is dropped (the
//!   column is read by its physical type);
//! - a column chunk whose `total_compressed_size` ends inside its last page
//!   (parquet-mr before 1.2.9 left the dictionary page header out of it,
//!   PARQUET-816; parquet-testing's nation.dict-malformed) gets the length
//!   its pages have, when the page walk (parquet_pages) shows that those
//!   pages hold exactly the chunk's values.
//!
//! Everything else is copied byte for byte: a sound footer comes out
//! unchanged (tested on shipped files).

use crate::formats::byte_source::SharedSource;

/// Nesting deeper than this is corrupt: FileMetaData nests a few levels.
const MAX_DEPTH: usize = 64;

/// The deepest schema read: groups nested deeper are refused before
/// arrow-rs, whose schema conversion recurses per level, sees them (1,500
/// levels overflowed an 8 MiB stack; decoding threads have 2 MiB). Far
/// deeper than any writer's real data; `read_parquet` reads 10,000.
pub const MAX_SCHEMA_DEPTH: usize = 128;

/// The largest footer (FileMetaData) read: its bytes are held, and copied
/// once by the repair, so a length the footer claims must not size that
/// memory unbounded, even in a file large enough to back it. Far beyond
/// real footers (thousands of row groups and columns stay in megabytes).
pub const MAX_FOOTER_BYTES: u64 = 256 << 20;

const STOP: u8 = 0;
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// FileMetaData field 2 is the schema: a list of SchemaElement, whose
/// field 5 is `num_children`.
const FILE_SCHEMA_FIELD: i16 = 2;
const SCHEMA_NUM_CHILDREN_FIELD: i16 = 5;
/// FileMetaData field 4 is the row groups; RowGroup field 2 is `total_byte_size`.
const FILE_ROW_GROUPS_FIELD: i16 = 4;
/// FileMetaData field 5 is the key-value metadata; KeyValue field 2 its value.
const FILE_KEY_VALUE_FIELD: i16 = 5;
const KEY_VALUE_VALUE_FIELD: i16 = 2;
const ROW_GROUP_TOTAL_BYTE_SIZE_FIELD: i16 = 2;

struct Walker<'a> {
    bytes: &'a [u8],
    pos: usize,
}

type Check<T = ()> = Result<T, String>;

impl<'a> Walker<'a> {
    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn byte(&mut self) -> Check<u8> {
        let b = *self.bytes.get(self.pos).ok_or("the Thrift data ends inside a value")?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Check<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err("a varint overflows 64 bits".into());
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("a varint is longer than 10 bytes".into())
    }

    fn zigzag(&mut self) -> Check<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// A declared element count: each element needs at least one byte.
    fn count(&mut self, n: u64, what: &str) -> Check<usize> {
        if n > self.left() as u64 {
            return Err(format!("a {what} declares {n} elements but only {} bytes remain", self.left()));
        }
        Ok(n as usize)
    }

    fn skip(&mut self, n: usize) -> Check {
        if n > self.left() {
            return Err(format!("a value of {n} bytes overruns the footer ({} bytes remain)", self.left()));
        }
        self.pos += n;
        Ok(())
    }

    /// One value of compact type `ty`.
    fn value(&mut self, ty: u8, depth: usize) -> Check {
        match ty {
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            BYTE => self.skip(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.skip(8),
            BINARY => {
                let n = self.varint()?;
                let n = self.count(n, "binary value")?;
                self.skip(n)
            }
            LIST | SET => self.list(depth).map(drop),
            MAP => self.map(depth),
            STRUCT => self.structure(depth, |_, _| Ok(None)),
            other => Err(format!("unknown Thrift type {other}")),
        }
    }

    /// A list or set; returns its element count and type.
    fn list_header(&mut self) -> Check<(usize, u8)> {
        let header = self.byte()?;
        let elem = header & 0x0f;
        let n = match header >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        Ok((self.count(n, "list")?, elem))
    }

    fn list(&mut self, depth: usize) -> Check<usize> {
        let (n, elem) = self.list_header()?;
        for _ in 0..n {
            // Booleans in a list are one byte each.
            if matches!(elem, BOOL_TRUE | BOOL_FALSE) {
                self.skip(1)?;
            } else {
                self.value(elem, depth + 1)?;
            }
        }
        Ok(n)
    }

    fn map(&mut self, depth: usize) -> Check {
        let n = self.varint()?;
        let n = self.count(n, "map")?;
        if n == 0 {
            return Ok(());
        }
        let types = self.byte()?;
        for _ in 0..n {
            self.value(types >> 4, depth + 1)?;
            self.value(types & 0x0f, depth + 1)?;
        }
        Ok(())
    }

    /// A struct's fields up to its STOP. `field` sees each field id and type
    /// first and may read the value itself (returning `Some`).
    fn structure(&mut self, depth: usize, mut field: impl FnMut(&mut Self, (i16, u8)) -> Check<Option<()>>) -> Check {
        if depth > MAX_DEPTH {
            return Err(format!("Thrift structures nest deeper than {MAX_DEPTH} levels"));
        }
        let mut last_id: i16 = 0;
        loop {
            let header = self.byte()?;
            let ty = header & 0x0f;
            if ty == STOP {
                return Ok(());
            }
            let id = match header >> 4 {
                0 => i16::try_from(self.zigzag()?).map_err(|_| "a field id overflows".to_string())?,
                delta => last_id.wrapping_add(i16::from(delta)),
            };
            last_id = id;
            if field(self, (id, ty))?.is_none() {
                self.value(ty, depth + 1)?;
            }
        }
    }
}

/// The structures on the repair path; every other value is copied as is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    FileMetaData,
    SchemaElement,
    RowGroup,
    ColumnChunk,
    ColumnMetaData,
    KeyValue,
}

/// The compact type ColumnMetaData's fields must have (parquet.thrift);
/// a field of another kind is dropped, as a reader that does not know it
/// would skip it (Dremio wrote a list as field 15, `bloom_filter_length`,
/// which arrow-rs then reads as an i32 and loses its place).
fn column_metadata_type(id: i16) -> Option<u8> {
    Some(match id {
        1 | 4 | 15 => I32,
        2 | 3 | 8 | 13 => LIST,
        5 | 6 | 7 | 9 | 10 | 11 | 14 => I64,
        12 | 16 | 17 => STRUCT,
        _ => return None,
    })
}

/// The highest ConvertedType parquet.thrift defines (INTERVAL = 21).
const MAX_CONVERTED_TYPE: i64 = 21;
const SCHEMA_CONVERTED_TYPE_FIELD: i16 = 6;
const SCHEMA_TYPE_FIELD: i16 = 1;
/// `num_rows`: FileMetaData field 3, RowGroup field 3.
const NUM_ROWS_FIELD: i16 = 3;
const ROW_GROUP_COLUMNS_FIELD: i16 = 1;
const COLUMN_CHUNK_META_FIELD: i16 = 3;
const COLUMN_DICTIONARY_PAGE_OFFSET_FIELD: i16 = 11;
const COLUMN_TOTAL_COMPRESSED_SIZE_FIELD: i16 = 7;

/// Appends `v` as a compact-protocol i64 (zigzag varint).
fn put_i64(out: &mut Vec<u8>, v: i64) {
    let mut z = ((v << 1) ^ (v >> 63)) as u64;
    loop {
        let b = (z & 0x7f) as u8;
        z >>= 7;
        if z == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn is_integer(ty: u8) -> bool {
    matches!(ty, BYTE | I16 | I32 | I64)
}

/// Appends a compact field header, short form when the id follows the last
/// within 15, long form otherwise.
fn field_header(out: &mut Vec<u8>, last: &mut i16, id: i16, ty: u8) {
    match id.checked_sub(*last) {
        Some(delta @ 1..=15) => out.push(((delta as u8) << 4) | ty),
        _ => {
            out.push(ty);
            let z = ((i32::from(id) << 1) ^ (i32::from(id) >> 31)) as u32;
            let mut v = z;
            loop {
                let b = (v & 0x7f) as u8;
                v >>= 7;
                if v == 0 {
                    out.push(b);
                    break;
                }
                out.push(b | 0x80);
            }
        }
    }
    *last = id;
}

struct Repair<'a> {
    w: Walker<'a>,
    out: Vec<u8>,
    schema_elements: u64,
    schema_children: u64,
    negative_children: Option<i64>,
    /// Top-level columns seen so far.
    schema_elements_seen_top: usize,
    /// Children still expected by each open schema group (the schema list is
    /// a depth-first walk): tells an element's depth and its top-level column.
    open_groups: Vec<i64>,
    /// Index of the current top-level column (a child of the root).
    top_level: usize,
    /// DECIMALs wider than arrow-rs can read: their annotations are dropped
    /// and their top-level columns recorded, to be read as exact text.
    wide_decimals: Vec<WideDecimal>,
    /// Corrected chunk lengths, and the chunk being walked (row group and
    /// column, counted as their structures begin).
    chunk_lengths: &'a [ChunkLength],
    row_groups_seen: usize,
    columns_seen: usize,
    /// Schema elements below the root with a physical type: the columns.
    leaves: u64,
    /// The most rows the file or one of its row groups declares, and the
    /// first negative count.
    rows_declared: i64,
    negative_rows: Option<i64>,
}

/// A top-level DECIMAL column with a precision above 76 (arrow-rs's
/// Decimal256 limit), read from its raw bytes as exact text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WideDecimal {
    /// Its position among the root's children.
    pub column: usize,
    pub scale: i32,
}

/// What a footer walk found besides the bytes.
#[derive(Debug, Default)]
pub struct Footer {
    pub metadata: Vec<u8>,
    pub wide_decimals: Vec<WideDecimal>,
    /// Where the pages end: the footer's length and magic follow.
    pub data_end: u64,
}

/// A column chunk's corrected `total_compressed_size`: row group, column
/// in it, and the length its pages have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkLength {
    pub row_group: usize,
    pub column: usize,
    pub length: i64,
}

/// A page header's length in bytes, its sizes and, for a data page, how
/// many values (levels) it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageHeaderInfo {
    pub header_len: usize,
    pub uncompressed: i64,
    pub compressed: i64,
    pub values: Option<i64>,
    /// A dictionary page's value count.
    pub dictionary_values: Option<i64>,
    /// Where in the header a DataPageHeaderV2 says `is_compressed = false`
    /// (the byte of that field, which holds its value).
    pub v2_not_compressed_at: Option<usize>,
}

/// Precision beyond which arrow-rs has no decimal type.
const MAX_ARROW_DECIMAL_PRECISION: i64 = 76;
const SCHEMA_SCALE_FIELD: i16 = 7;
const SCHEMA_PRECISION_FIELD: i16 = 8;
const SCHEMA_LOGICAL_TYPE_FIELD: i16 = 10;
const CONVERTED_DECIMAL: i64 = 5;

impl<'a> Repair<'a> {
    /// Copies the value of compact type `ty` unchanged (after walking it,
    /// so every length in it is checked).
    fn copy_value(&mut self, ty: u8, depth: usize) -> Check {
        let start = self.w.pos;
        self.w.value(ty, depth)?;
        self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]);
        Ok(())
    }

    /// Places the schema element about to be read in the tree (depth,
    /// top-level column) and, for a top-level DECIMAL wider than arrow-rs
    /// reads, returns it. Reads ahead without moving.
    fn schema_element_position(&mut self) -> Check<Option<WideDecimal>> {
        let mut ahead = Walker { bytes: self.w.bytes, pos: self.w.pos };
        let (mut children, mut scale, mut precision, mut decimal) = (0i64, 0i64, 0i64, false);
        let mut physical = false;
        ahead.structure(2, |w, (id, ty)| {
            physical |= (id, ty) == (SCHEMA_TYPE_FIELD, I32);
            let slot = match (id, ty) {
                (SCHEMA_NUM_CHILDREN_FIELD, I32) => &mut children,
                (SCHEMA_SCALE_FIELD, I32) => &mut scale,
                (SCHEMA_PRECISION_FIELD, I32) => &mut precision,
                (SCHEMA_CONVERTED_TYPE_FIELD, I32) => {
                    decimal |= w.zigzag()? == CONVERTED_DECIMAL;
                    return Ok(Some(()));
                }
                (SCHEMA_LOGICAL_TYPE_FIELD, STRUCT) => {
                    decimal = true;
                    return Ok(None);
                }
                _ => return Ok(None),
            };
            *slot = w.zigzag()?;
            Ok(Some(()))
        })?;
        let depth = self.open_groups.len();
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!("the schema nests deeper than {MAX_SCHEMA_DEPTH} levels, the most this reader reads"));
        }
        if physical && depth >= 1 {
            self.leaves += 1;
        }
        if depth == 1 {
            self.top_level = self.schema_elements_seen_top;
            self.schema_elements_seen_top += 1;
        }
        if let Some(left) = self.open_groups.last_mut() {
            *left -= 1;
        }
        if children > 0 {
            self.open_groups.push(children);
        }
        while self.open_groups.last() == Some(&0) {
            self.open_groups.pop();
        }
        let wide = depth == 1 && decimal && precision > MAX_ARROW_DECIMAL_PRECISION && children == 0;
        Ok(wide.then(|| WideDecimal { column: self.top_level, scale: scale.clamp(0, i64::from(i32::MAX)) as i32 }))
    }

    /// A list of `shape` structs: the header as is, each element repaired.
    fn list_of(&mut self, shape: Shape, depth: usize) -> Check {
        let start = self.w.pos;
        let (n, elem) = self.w.list_header()?;
        self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]);
        for _ in 0..n {
            if elem == STRUCT {
                self.structure(shape, depth + 1)?;
            } else if matches!(elem, BOOL_TRUE | BOOL_FALSE) {
                let at = self.w.pos;
                self.w.skip(1)?;
                self.out.push(self.w.bytes[at]);
            } else {
                self.copy_value(elem, depth + 1)?;
            }
        }
        if shape == Shape::SchemaElement {
            self.schema_elements += n as u64;
        }
        Ok(())
    }

    /// One struct of `shape`, re-encoded: fields copied, repaired or dropped.
    fn structure(&mut self, shape: Shape, depth: usize) -> Check {
        if depth > MAX_DEPTH {
            return Err(format!("Thrift structures nest deeper than {MAX_DEPTH} levels"));
        }
        let (mut read_last, mut write_last) = (0i16, 0i16);
        let mut has_total_byte_size = false;
        let wide = if shape == Shape::SchemaElement { self.schema_element_position()? } else { None };
        // The chunk this ColumnMetaData describes: (row group, column).
        let chunk = (self.row_groups_seen.wrapping_sub(1), self.columns_seen.wrapping_sub(1));
        match shape {
            Shape::RowGroup => {
                self.row_groups_seen += 1;
                self.columns_seen = 0;
            }
            Shape::ColumnChunk => self.columns_seen += 1,
            _ => {}
        }
        loop {
            let header = self.w.byte()?;
            let ty = header & 0x0f;
            if ty == STOP {
                break;
            }
            let id = match header >> 4 {
                0 => i16::try_from(self.w.zigzag()?).map_err(|_| "a field id overflows".to_string())?,
                delta => read_last.wrapping_add(i16::from(delta)),
            };
            read_last = id;
            // Fields a reader would misread are dropped: walked, not copied.
            let drop_field = match shape {
                Shape::ColumnMetaData => {
                    column_metadata_type(id).is_some_and(|want| want != ty && !(is_integer(want) && is_integer(ty)))
                }
                // A key-value pair's value is a string; fastparquet 0.8.2
                // wrote integers and booleans there, which DuckDB and
                // pyarrow read as no value.
                Shape::KeyValue => id == KEY_VALUE_VALUE_FIELD && ty != BINARY,
                _ => false,
            };
            if drop_field {
                self.w.value(ty, depth + 1)?;
                continue;
            }
            match (shape, id, ty) {
                (Shape::FileMetaData, FILE_SCHEMA_FIELD, LIST) => {
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.list_of(Shape::SchemaElement, depth)?;
                }
                (Shape::FileMetaData, FILE_ROW_GROUPS_FIELD, LIST) => {
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.list_of(Shape::RowGroup, depth)?;
                }
                (Shape::FileMetaData, FILE_KEY_VALUE_FIELD, LIST) => {
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.list_of(Shape::KeyValue, depth)?;
                }
                (Shape::RowGroup, ROW_GROUP_COLUMNS_FIELD, LIST) => {
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.list_of(Shape::ColumnChunk, depth)?;
                }
                (Shape::ColumnChunk, COLUMN_CHUNK_META_FIELD, STRUCT) => {
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.structure(Shape::ColumnMetaData, depth + 1)?;
                }
                (Shape::FileMetaData | Shape::RowGroup, NUM_ROWS_FIELD, I64) => {
                    let start = self.w.pos;
                    let rows = self.w.zigzag()?;
                    if rows < 0 && self.negative_rows.is_none() {
                        self.negative_rows = Some(rows);
                    }
                    self.rows_declared = self.rows_declared.max(rows);
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]);
                }
                (Shape::SchemaElement, SCHEMA_NUM_CHILDREN_FIELD, I32) => {
                    let start = self.w.pos;
                    let c = self.w.zigzag()?;
                    if c < 0 {
                        self.negative_children = Some(c);
                    }
                    self.schema_children = self.schema_children.saturating_add(c.max(0) as u64);
                    field_header(&mut self.out, &mut write_last, id, ty);
                    self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]);
                }
                (Shape::ColumnMetaData, COLUMN_DICTIONARY_PAGE_OFFSET_FIELD, I64) => {
                    // A dictionary page offset inside the leading magic bytes
                    // (writers that mean "none" by 0; parquet-testing's
                    // dict-page-offset-zero) would make the reader parse
                    // "PAR1" as a page header: dropped, the chunk starts at
                    // its data page offset, where the dictionary page is.
                    let start = self.w.pos;
                    let offset = self.w.zigzag()?;
                    if offset >= 4 {
                        field_header(&mut self.out, &mut write_last, id, ty);
                        self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]);
                    }
                }
                (Shape::ColumnMetaData, COLUMN_TOTAL_COMPRESSED_SIZE_FIELD, I64) => {
                    let start = self.w.pos;
                    self.w.zigzag()?;
                    field_header(&mut self.out, &mut write_last, id, ty);
                    let fix = self.chunk_lengths.iter().find(|c| (c.row_group, c.column) == chunk);
                    match fix {
                        Some(c) => put_i64(&mut self.out, c.length),
                        None => self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]),
                    }
                }
                (Shape::SchemaElement, SCHEMA_LOGICAL_TYPE_FIELD, STRUCT) if wide.is_some() => {
                    self.w.value(ty, depth + 1)?;
                }
                (Shape::SchemaElement, SCHEMA_CONVERTED_TYPE_FIELD, I32) => {
                    // A converted type this reader does not know (a newer or
                    // private annotation; DuckDB's empty.parquet has 24) is
                    // dropped: the column is read by its physical type. So is
                    // the DECIMAL of a column wider than arrow-rs reads.
                    let start = self.w.pos;
                    let v = self.w.zigzag()?;
                    let wide_decimal = wide.is_some() && v == CONVERTED_DECIMAL;
                    if (0..=MAX_CONVERTED_TYPE).contains(&v) && !wide_decimal {
                        field_header(&mut self.out, &mut write_last, id, ty);
                        self.out.extend_from_slice(&self.w.bytes[start..self.w.pos]);
                    }
                }
                _ => {
                    has_total_byte_size |= shape == Shape::RowGroup && id == ROW_GROUP_TOTAL_BYTE_SIZE_FIELD;
                    field_header(&mut self.out, &mut write_last, id, ty);
                    if !matches!(ty, BOOL_TRUE | BOOL_FALSE) {
                        self.copy_value(ty, depth + 1)?;
                    }
                }
            }
        }
        if let Some(w) = wide {
            self.wide_decimals.push(w);
        }
        // A row group without its required (informational) total_byte_size
        // gets 0, so that the file is read rather than refused.
        if shape == Shape::RowGroup && !has_total_byte_size {
            field_header(&mut self.out, &mut write_last, ROW_GROUP_TOTAL_BYTE_SIZE_FIELD, I64);
            self.out.push(0);
        }
        self.out.push(STOP);
        Ok(())
    }
}

#[cfg(test)]
fn repair(metadata: &[u8]) -> Result<Footer, String> {
    repair_with(metadata, &[])
}

/// Checks the footer bytes (the FileMetaData, without the length and magic)
/// and returns them re-encoded with the repairs of the module doc.
fn repair_with(metadata: &[u8], chunk_lengths: &[ChunkLength]) -> Result<Footer, String> {
    let mut r = Repair {
        w: Walker { bytes: metadata, pos: 0 },
        out: Vec::with_capacity(metadata.len() + 16),
        schema_elements: 0,
        schema_children: 0,
        negative_children: None,
        schema_elements_seen_top: 0,
        open_groups: Vec::new(),
        top_level: 0,
        wide_decimals: Vec::new(),
        chunk_lengths,
        row_groups_seen: 0,
        columns_seen: 0,
        leaves: 0,
        rows_declared: 0,
        negative_rows: None,
    };
    r.structure(Shape::FileMetaData, 0)?;
    // DuckDB and pyarrow refuse both: a count below zero is corrupt, and
    // rows without a column would be a scan of nothing that never ends.
    if let Some(n) = r.negative_rows {
        return Err(format!("the file or a row group declares {n} rows"));
    }
    if r.leaves == 0 && r.rows_declared > 0 {
        return Err(format!(
            "the schema has no column, but the file declares {} rows (a Parquet file needs at least one column)",
            r.rows_declared
        ));
    }
    if let Some(c) = r.negative_children {
        return Err(format!("a schema element declares {c} children"));
    }
    // Every element but the root is some element's child.
    if r.schema_elements > 0 && r.schema_children >= r.schema_elements {
        return Err(format!(
            "the schema's elements declare {} children among {} elements",
            r.schema_children, r.schema_elements
        ));
    }
    Ok(Footer { metadata: r.out, wide_decimals: r.wide_decimals, data_end: 0 })
}

/// A page header's length and sizes, every length in it checked: fields 2
/// (`uncompressed_page_size`) and 3 (`compressed_page_size`), and the
/// `num_values` (field 1) of a DataPageHeader (field 5) or a
/// DataPageHeaderV2 (field 8).
pub fn page_header_info(bytes: &[u8]) -> Result<PageHeaderInfo, String> {
    let mut w = Walker { bytes, pos: 0 };
    let (mut uncompressed, mut compressed, mut values, mut dictionary_values) = (None, None, None, None);
    let mut v2_not_compressed_at = None;
    w.structure(0, |w, (id, ty)| match (id, ty) {
        (2, I32) => {
            uncompressed = Some(w.zigzag()?);
            Ok(Some(()))
        }
        (3, I32) => {
            compressed = Some(w.zigzag()?);
            Ok(Some(()))
        }
        (5 | 8, STRUCT) => {
            let v2 = id == 8;
            w.structure(1, |w, (id, ty)| match (id, ty) {
                (1, I32) => {
                    values = Some(w.zigzag()?);
                    Ok(Some(()))
                }
                // DataPageHeaderV2's `is_compressed = false`, written in the
                // short form (its header byte alone: the value is in it).
                (7, BOOL_FALSE) if v2 && w.bytes.get(w.pos - 1) == Some(&0x12) => {
                    v2_not_compressed_at = Some(w.pos - 1);
                    Ok(Some(()))
                }
                _ => Ok(None),
            })?;
            Ok(Some(()))
        }
        // DictionaryPageHeader: its field 1 is num_values.
        (7, STRUCT) => {
            w.structure(1, |w, (id, ty)| match (id, ty) {
                (1, I32) => {
                    dictionary_values = Some(w.zigzag()?);
                    Ok(Some(()))
                }
                _ => Ok(None),
            })?;
            Ok(Some(()))
        }
        _ => Ok(None),
    })?;
    match (uncompressed, compressed) {
        (Some(uncompressed), Some(compressed)) => Ok(PageHeaderInfo {
            header_len: w.pos,
            uncompressed,
            compressed,
            values,
            dictionary_values,
            v2_not_compressed_at,
        }),
        _ => Err("a page header without its sizes".into()),
    }
}

/// The FileMetaData length a Parquet file's last bytes claim (`tail` ends
/// where the file ends: the length, then the magic `PAR1`); `None` when
/// they are too few or the magic is missing. The one reading of the tail:
/// the footer reader, the remote footer fetch and the range planner ask it.
pub fn claimed_length(tail: &[u8]) -> Option<u64> {
    let n = tail.len();
    if n < 8 || &tail[n - 4..] != b"PAR1" {
        return None;
    }
    Some(u64::from(u32::from_le_bytes([tail[n - 8], tail[n - 7], tail[n - 6], tail[n - 5]])))
}

/// Reads the footer of `file` (of `len` bytes), checks it and repairs what
/// can be repaired: the FileMetaData bytes, ready for arrow-rs to decode.
/// Only sizes the file itself backs are ever allocated here.
pub fn read_footer(file: &SharedSource, len: u64) -> Result<Footer, String> {
    read_footer_with(file, len, &[])
}

/// [`read_footer`], with column chunks' lengths corrected.
pub fn read_footer_with(file: &SharedSource, len: u64, chunk_lengths: &[ChunkLength]) -> Result<Footer, String> {
    if len < 12 {
        return Err(format!("a file of {len} bytes is too small for a Parquet footer"));
    }
    let mut tail = [0u8; 8];
    file.read_exact_at(&mut tail, len - 8).map_err(|e| e.to_string())?;
    let Some(meta_len) = claimed_length(&tail) else {
        return Err("the file does not end with the Parquet magic bytes PAR1".into());
    };
    if meta_len + 12 > len {
        return Err(format!("the footer claims {meta_len} bytes in a file of {len}"));
    }
    if meta_len > MAX_FOOTER_BYTES {
        return Err(format!("the footer claims {meta_len} bytes, more than the {MAX_FOOTER_BYTES} bytes read at most"));
    }
    let mut meta = vec![0u8; meta_len as usize];
    file.read_exact_at(&mut meta, len - 8 - meta_len).map_err(|e| e.to_string())?;
    let mut footer = repair_with(&meta, chunk_lengths)?;
    footer.data_end = len - 8 - meta_len;
    Ok(footer)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `len` bytes that reads as zeros but for its last 8: a
    /// footer length and PAR1 (nothing of it is held).
    struct Claims {
        len: u64,
        meta_len: u32,
        pos: u64,
    }

    impl std::io::Read for Claims {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = out.len().min(self.len.saturating_sub(self.pos) as usize);
            let tail = [self.meta_len.to_le_bytes(), *b"PAR1"].concat();
            for (i, b) in out[..n].iter_mut().enumerate() {
                let at = self.pos + i as u64;
                *b = if at >= self.len - 8 { tail[(at - (self.len - 8)) as usize] } else { 0 };
            }
            self.pos += n as u64;
            Ok(n)
        }
    }

    impl std::io::Seek for Claims {
        fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
            if let std::io::SeekFrom::Start(p) = to {
                self.pos = p;
            }
            Ok(self.pos)
        }
    }

    impl crate::formats::byte_source::ByteSource for Claims {
        fn size(&mut self) -> std::io::Result<u64> {
            Ok(self.len)
        }
    }

    #[test]
    fn a_footer_longer_than_the_bound_is_refused_before_it_is_read() {
        let file = SharedSource::new(Box::new(Claims { len: 1 << 40, meta_len: u32::MAX, pos: 0 })).unwrap();
        let e = read_footer(&file, 1 << 40).unwrap_err();
        assert!(e.contains("more than the 268435456 bytes read at most"), "{e}");
    }

    #[test]
    fn a_list_longer_than_the_bytes_left_is_refused() {
        // struct { 2: list<struct> of 0x7fffffff elements }
        let footer = [0x29, 0xFC, 0xFF, 0xFF, 0xFF, 0xFF, 0x07, 0x00];
        let e = repair(&footer).map(|f| f.metadata).unwrap_err();
        assert!(e.contains("declares 2147483647 elements"), "{e}");
    }

    #[test]
    fn truncated_and_deep_footers_are_refused() {
        assert!(repair(&[0x15]).map(|f| f.metadata).unwrap_err().contains("ends inside"));
        let deep: Vec<u8> = std::iter::repeat_n(0x1C, 100).collect();
        assert!(repair(&deep).map(|f| f.metadata).is_err());
    }

    #[test]
    fn a_small_valid_structure_passes() {
        // struct { 1: i32 = 1, 2: list<struct{5: i32 = 0}> of 1, 3: i64 = 0 } STOP
        let footer = [0x15, 0x02, 0x19, 0x1C, 0x55, 0x00, 0x00, 0x16, 0x00, 0x00];
        repair(&footer).map(|f| f.metadata).unwrap();
    }

    #[test]
    fn a_row_group_without_total_byte_size_is_repaired() {
        // struct { 4: list<struct{3: i64 = 0}> of 1 } STOP
        let footer = [0x49, 0x1C, 0x36, 0x00, 0x00, 0x00];
        // total_byte_size = 0 appended in long form (id 2 after id 3).
        assert_eq!(
            repair(&footer).map(|f| f.metadata).unwrap(),
            [0x49, 0x1C, 0x36, 0x00, 0x06, 0x04, 0x00, 0x00, 0x00]
        );
        // with the field: unchanged
        let footer = [0x49, 0x1C, 0x26, 0x00, 0x16, 0x00, 0x00, 0x00];
        assert_eq!(repair(&footer).map(|f| f.metadata).unwrap(), footer);
    }

    #[test]
    fn unknown_converted_types_and_mistyped_fields_are_dropped() {
        // schema: [ {5: num_children = 0, 6: converted_type = 24, 7: scale = 1} ]
        let footer = [0x29, 0x1C, 0x55, 0x00, 0x15, 0x30, 0x15, 0x02, 0x00, 0x00];
        // converted_type is gone; scale (id 7) follows id 5 with delta 2.
        assert_eq!(repair(&footer).map(|f| f.metadata).unwrap(), [0x29, 0x1C, 0x55, 0x00, 0x25, 0x02, 0x00, 0x00]);
        // row_groups: [ {1: columns [ {3: meta {15: list<i32> [1], 9: i64 = 4} } ]} ]
        let footer = [0x49, 0x1C, 0x19, 0x1C, 0x3C, 0xF9, 0x15, 0x02, 0x06, 0x12, 0x08, 0x00, 0x00, 0x00, 0x00];
        let repaired = repair(&footer).map(|f| f.metadata).unwrap();
        // field 15 dropped, field 9 re-encoded as the first field (delta 9),
        // total_byte_size added after the columns (delta 1)
        assert_eq!(repaired, [0x49, 0x1C, 0x19, 0x1C, 0x3C, 0x96, 0x08, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00]);
    }

    #[test]
    fn a_chunk_length_is_overridden_in_place() {
        // row_groups: [ {1: columns [ {3: meta {7: i64 = 5} }, {3: meta {7: i64 = 6} } ], 2: i64 = 0} ]
        let footer = [
            0x49, 0x1C, 0x19, 0x2C, 0x3C, 0x76, 0x0A, 0x00, 0x00, 0x3C, 0x76, 0x0C, 0x00, 0x00, 0x16, 0x00, 0x00, 0x00,
        ];
        assert_eq!(repair(&footer).unwrap().metadata, footer);
        let fix = [ChunkLength { row_group: 0, column: 1, length: 300 }];
        let grown = repair_with(&footer, &fix).unwrap().metadata;
        // The second chunk's 6 (zigzag 0x0C) becomes 300 (zigzag 600 = 0xD8 0x04).
        let mut want = footer[..11].to_vec();
        want.extend_from_slice(&[0xD8, 0x04]);
        want.extend_from_slice(&footer[12..]);
        assert_eq!(grown, want);
    }

    #[test]
    fn page_headers_give_their_value_counts() {
        // {1: type i32 = 0, 2: i32 = 10, 3: i32 = 8, 5: {1: i32 = 25, ...}}
        let header = [0x15, 0x00, 0x15, 0x14, 0x15, 0x10, 0x2C, 0x15, 0x32, 0x00, 0x00];
        let info = page_header_info(&header).unwrap();
        assert_eq!(
            info,
            PageHeaderInfo {
                header_len: 11,
                uncompressed: 10,
                compressed: 8,
                values: Some(25),
                dictionary_values: None,
                v2_not_compressed_at: None
            }
        );
        // A dictionary page (field 7) holds no values of the column, but
        // entries of its own.
        let dict = [0x15, 0x04, 0x15, 0x14, 0x15, 0x10, 0x4C, 0x15, 0x32, 0x00, 0x00];
        assert_eq!(page_header_info(&dict).unwrap().values, None);
        assert_eq!(page_header_info(&dict).unwrap().dictionary_values, Some(25));
    }

    /// Compact-protocol pieces for forged footers: a field header (short
    /// form), an i32/i64 (zigzag varint), a binary, a list header.
    fn field(out: &mut Vec<u8>, delta: u8, ty: u8) {
        out.push((delta << 4) | ty);
    }
    fn int(out: &mut Vec<u8>, v: i64) {
        put_i64(out, v);
    }
    fn list(out: &mut Vec<u8>, n: usize, elem: u8) {
        if n < 15 {
            out.push(((n as u8) << 4) | elem);
        } else {
            out.push(0xF0 | elem);
            let mut v = n as u64;
            while v >= 0x80 {
                out.push((v as u8 & 0x7F) | 0x80);
                v >>= 7;
            }
            out.push(v as u8);
        }
    }

    /// FileMetaData with a root, `depth` nested groups and one INT32 leaf
    /// (or no leaf), `file_rows` rows, and row groups of the given rows.
    fn forged(depth: usize, leaf: bool, file_rows: i64, groups: &[i64]) -> Vec<u8> {
        let mut out = Vec::new();
        field(&mut out, 1, I32);
        int(&mut out, 1);
        field(&mut out, 1, LIST);
        let elements = 1 + depth + usize::from(leaf);
        list(&mut out, elements, STRUCT);
        for level in 0..elements {
            let is_leaf = leaf && level == elements - 1;
            if is_leaf {
                field(&mut out, 1, I32); // type INT32
                int(&mut out, 1);
                field(&mut out, 2, I32); // repetition OPTIONAL
                int(&mut out, 1);
                field(&mut out, 1, BINARY); // name
            } else if level > 0 {
                field(&mut out, 3, I32); // repetition OPTIONAL
                int(&mut out, 1);
                field(&mut out, 1, BINARY);
            } else {
                field(&mut out, 4, BINARY);
            }
            out.extend_from_slice(&[1, b'g']);
            let children = i64::from(level + 1 < elements);
            if !is_leaf {
                field(&mut out, 1, I32);
                int(&mut out, children);
            }
            out.push(STOP);
        }
        field(&mut out, 1, I64);
        int(&mut out, file_rows);
        field(&mut out, 1, LIST);
        list(&mut out, groups.len(), STRUCT);
        for &rows in groups {
            field(&mut out, 1, LIST);
            list(&mut out, 0, STRUCT);
            field(&mut out, 1, I64);
            int(&mut out, 0);
            field(&mut out, 1, I64);
            int(&mut out, rows);
            out.push(STOP);
        }
        out.push(STOP);
        out
    }

    #[test]
    fn schemas_deeper_than_the_bound_are_refused_without_recursion() {
        let ok = repair(&forged(MAX_SCHEMA_DEPTH - 1, true, 0, &[])).unwrap().metadata;
        let meta = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&ok).unwrap();
        assert_eq!(meta.file_metadata().schema_descr().num_columns(), 1);
        for depth in [MAX_SCHEMA_DEPTH, 1_500, 20_000] {
            let e = repair(&forged(depth, true, 0, &[])).map(|f| f.metadata).unwrap_err();
            assert!(e.contains(&format!("nests deeper than {MAX_SCHEMA_DEPTH} levels")), "{depth}: {e}");
        }
    }

    #[test]
    fn the_deepest_schema_read_converts_on_a_decoding_threads_stack() {
        // Decoding threads keep Rust's default 2 MiB stack: arrow-rs's
        // schema conversion recurses per level and must fit there.
        let bytes = repair(&forged(MAX_SCHEMA_DEPTH - 1, true, 0, &[])).unwrap().metadata;
        let converted = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let meta = std::sync::Arc::new(
                    parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&bytes).unwrap(),
                );
                let arrow = parquet::arrow::arrow_reader::ArrowReaderMetadata::try_new(meta, Default::default());
                arrow.map(|m| m.schema().fields().len())
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(converted.unwrap(), 1);
    }

    #[test]
    fn rows_without_a_column_and_negative_rows_are_refused() {
        let e = repair(&forged(0, false, 0, &[1 << 40])).map(|f| f.metadata).unwrap_err();
        assert!(e.contains("no column, but the file declares 1099511627776 rows"), "{e}");
        let e = repair(&forged(0, false, 7, &[])).map(|f| f.metadata).unwrap_err();
        assert!(e.contains("declares 7 rows"), "{e}");
        let e = repair(&forged(0, true, 0, &[-5])).map(|f| f.metadata).unwrap_err();
        assert!(e.contains("declares -5 rows"), "{e}");
        let e = repair(&forged(0, true, -1, &[])).map(|f| f.metadata).unwrap_err();
        assert!(e.contains("declares -1 rows"), "{e}");
        // No column and no rows, or a column and rows: read as before.
        repair(&forged(0, false, 0, &[0])).unwrap();
        repair(&forged(2, true, 3, &[3])).unwrap();
    }

    #[test]
    fn schema_children_must_fit_the_schema() {
        // one schema element declaring 1000 children
        let footer = [0x29, 0x1C, 0x55, 0xD0, 0x0F, 0x00, 0x00];
        let e = repair(&footer).map(|f| f.metadata).unwrap_err();
        assert!(e.contains("1000 children"), "{e}");
    }
}

#[cfg(test)]
mod real_files {
    fn repaired(name: &str) -> Vec<u8> {
        let path = format!("{}/test/data/real/{name}", env!("CARGO_MANIFEST_DIR"));
        let f = std::fs::File::open(path).unwrap();
        let f = super::SharedSource::new(Box::new(f)).unwrap();
        super::read_footer(&f, f.size()).unwrap().metadata
    }

    #[test]
    fn a_footer_with_a_mistyped_field_is_repaired_and_decodes() {
        // Dremio wrote a list as ColumnMetaData field 15 (bloom_filter_length)
        // and a dictionary page offset of 0.
        let bytes = repaired("dict-page-offset-zero.parquet");
        let meta = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&bytes).unwrap();
        assert_eq!(meta.row_groups()[0].num_rows(), 39);
        assert_eq!(meta.row_groups()[0].column(0).dictionary_page_offset(), None);
    }

    #[test]
    fn an_unknown_converted_type_is_dropped() {
        // DuckDB's empty.parquet (pandas via parquet-cpp 1.5.1): ConvertedType 24.
        let bytes = repaired("empty_unknown_converted_type.parquet");
        let meta = parquet::file::metadata::ParquetMetaDataReader::decode_metadata(&bytes).unwrap();
        assert_eq!(meta.file_metadata().schema_descr().num_columns(), 2);
    }

    #[test]
    fn sound_footers_are_unchanged() {
        for name in ["repeated_no_annotation.parquet", "pandas_decimal.parquet", "bug13053-2.parquet"] {
            let path = format!("{}/test/data/real/{name}", env!("CARGO_MANIFEST_DIR"));
            let data = std::fs::read(path).unwrap();
            let n = data.len();
            let meta_len = u32::from_le_bytes([data[n - 8], data[n - 7], data[n - 6], data[n - 5]]) as usize;
            assert_eq!(repaired(name), &data[n - 8 - meta_len..n - 8], "{name}");
        }
    }
}
