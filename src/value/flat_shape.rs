//! The shapes of flat records (CSV: every record an object of the file's
//! column names, each value a string or null) and the board on which the
//! probe posts those it no longer needs to see.
//!
//! A flat record's shape is [`FLAT`], the number of its key list (4 bytes,
//! little-endian) and one byte per value: [`super::shape::NULL`], or the
//! code a [`CellCoder`] gives the value's text ([`super::shape::STR`], or
//! under a string parser [`PARSED_CLASS`] plus the class the text parses
//! to). infer/shapes.rs writes it from a decoded tape; the CSV
//! reader writes it straight from a record's cells, without a tape, and
//! where the probe posted it, leaves the record undecoded. Under string
//! parsers a string's class depends on its text, so the general board
//! (value/shape.rs) is off there; a flat shape holds each cell's class, so
//! this board is not.

use std::sync::{Arc, OnceLock};

use super::shape::{LookupTrial, ShapeBoard, NULL};

/// The first byte of a flat record's shape; no code of a general shape
/// (value/shape.rs) has it, so the two encodings never meet.
pub const FLAT: u8 = 0xF0;

/// Key lists a probe tells apart at most; records of more go the general
/// way (many CSV files with as many headers).
pub const MAX_FLAT_LISTS: usize = 256;

/// A flat shape's code of a string a parser classed is this plus its
/// class's number (below 16): one byte a value, where a general shape
/// (value/shape.rs) writes [`super::shape::PARSED_STR`] and then the
/// class. No other code of a flat shape is 16 or more.
pub const PARSED_CLASS: u8 = 0x10;

/// How a flat record's non-null value enters its shape, from its text:
/// the byte infer/shapes.rs writes for a string value under the probe's
/// rules (which it implements: the string parsers live above this floor).
/// The text comes as its bytes, cut from a record of valid UTF-8 at ASCII
/// delimiters: a cut as `&str` was checked to fall between characters,
/// a check per cell that nothing needs.
pub trait CellCoder: Send + Sync {
    fn code(&self, text: &[u8]) -> u8;
}

/// The flat shapes the probe's cache has absorbed and whose next records
/// cannot change the schema, and the key lists by their numbers. Posted by
/// the probe's one absorbing thread, read by the decoding threads.
pub struct FlatBoard {
    shapes: ShapeBoard,
    lists: Box<[OnceLock<Arc<[String]>>]>,
    coder: Arc<dyn CellCoder>,
}

impl FlatBoard {
    pub fn new(coder: Arc<dyn CellCoder>) -> Self {
        FlatBoard {
            shapes: ShapeBoard::default(),
            lists: (0..MAX_FLAT_LISTS).map(|_| OnceLock::new()).collect(),
            coder,
        }
    }

    /// The shapes posted (only the absorbing thread posts: see
    /// [`ShapeBoard::post`]).
    pub fn shapes(&self) -> &ShapeBoard {
        &self.shapes
    }

    /// Posts key list `number` (the cache numbers its lists from 0 in the
    /// order it meets them, and posts each when it numbers it).
    pub fn post_list(&self, number: usize, keys: &Arc<[String]>) {
        if let Some(slot) = self.lists.get(number) {
            let _ = slot.set(Arc::clone(keys));
        }
    }

    /// The number of the key list equal to `keys`, once it and every list
    /// before it were posted.
    pub fn number_of(&self, keys: &[String]) -> Option<u32> {
        self.lists.iter().map_while(OnceLock::get).position(|l| **l == *keys).map(|n| n as u32)
    }

    pub fn contains(&self, shape: &[u8]) -> bool {
        self.shapes.contains(shape)
    }

    /// Whether readers should look at all (see [`ShapeBoard::worth_looking`]).
    pub fn worth_looking(&self) -> bool {
        self.shapes.worth_looking()
    }

    pub fn close(&self) {
        self.shapes.close();
    }
}

/// A decoding thread's look at the flat board: a record's shape written
/// from its cells' text, and whether it was posted. Use:
/// [`KnownFlat::start`], a [`FlatCells::push_null`] or
/// [`FlatCells::push_text`] per value on [`KnownFlat::cells`], then
/// [`KnownFlat::finish`].
pub struct KnownFlat {
    board: Arc<FlatBoard>,
    /// The board's coder, held here: one pointer less to follow per value.
    coder: Arc<dyn CellCoder>,
    key: Vec<u8>,
    trial: LookupTrial,
}

impl std::fmt::Debug for KnownFlat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownFlat").field("trial", &self.trial).finish()
    }
}

impl KnownFlat {
    pub fn new(board: Arc<FlatBoard>) -> Self {
        let coder = Arc::clone(&board.coder);
        KnownFlat { board, coder, key: Vec::new(), trial: LookupTrial::default() }
    }

    pub fn board(&self) -> &Arc<FlatBoard> {
        &self.board
    }

    /// Starts the shape of a record of key list `number`; false when this
    /// record is not to be looked up (the board is closed or empty, or
    /// this reader is pausing).
    #[inline]
    pub fn start(&mut self, number: u32) -> bool {
        if !self.trial.looking() || !self.board.worth_looking() {
            return false;
        }
        self.key.clear();
        self.key.push(FLAT);
        self.key.extend_from_slice(&number.to_le_bytes());
        true
    }

    /// Where a record's values' codes go after [`KnownFlat::start`]: the
    /// coder behind its `Arc` once a record, not once a value.
    #[inline]
    pub fn cells(&mut self) -> FlatCells<'_> {
        FlatCells { coder: &*self.coder, key: &mut self.key }
    }

    /// Whether the shape written since [`KnownFlat::start`] was posted;
    /// with `complete` false (the record turned out to need decoding) it
    /// counts as not found.
    pub fn finish(&mut self, complete: bool) -> bool {
        let found = complete && self.board.contains(&self.key);
        self.trial.looked(found);
        found
    }

    /// The shape written since [`KnownFlat::start`] (tests).
    #[cfg(test)]
    pub fn key(&self) -> &[u8] {
        &self.key
    }
}

/// Writes a record's values' codes into its shape ([`KnownFlat::cells`]).
pub struct FlatCells<'a> {
    coder: &'a dyn CellCoder,
    key: &'a mut Vec<u8>,
}

impl FlatCells<'_> {
    #[inline]
    pub fn push_null(&mut self) {
        self.key.push(NULL);
    }

    /// A value's text as its bytes (see [`CellCoder`]).
    #[inline]
    pub fn push_text(&mut self, text: &[u8]) {
        self.key.push(self.coder.code(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::shape::STR;

    struct Plain;
    impl CellCoder for Plain {
        fn code(&self, _: &[u8]) -> u8 {
            STR
        }
    }

    fn list(names: &[&str]) -> Arc<[String]> {
        names.iter().map(|n| n.to_string()).collect::<Vec<_>>().into()
    }

    #[test]
    fn lists_are_numbered_in_the_order_posted_and_found_by_content() {
        let board = FlatBoard::new(Arc::new(Plain));
        let (ab, cd) = (list(&["a", "b"]), list(&["c", "d"]));
        assert_eq!(board.number_of(&ab), None);
        board.post_list(0, &ab);
        // Out of order (the cache never does this): not found until the
        // lists before it are posted.
        board.post_list(2, &cd);
        assert_eq!(board.number_of(&cd), None);
        board.post_list(1, &cd);
        assert_eq!(board.number_of(&list(&["a", "b"])), Some(0));
        assert_eq!(board.number_of(&list(&["c", "d"])), Some(1));
        assert_eq!(board.number_of(&list(&["a"])), None);
    }

    #[test]
    fn a_record_is_known_only_when_its_whole_shape_was_posted() {
        let board = Arc::new(FlatBoard::new(Arc::new(Plain)));
        let mut known = KnownFlat::new(Arc::clone(&board));
        // Nothing posted: not even looked at.
        assert!(!known.start(0));
        let mut posted = vec![FLAT];
        posted.extend_from_slice(&0u32.to_le_bytes());
        posted.extend_from_slice(&[NULL, STR]);
        board.shapes().post(&posted);
        assert!(known.start(0));
        known.cells().push_null();
        known.cells().push_text(b"x");
        assert_eq!(known.key(), posted.as_slice());
        assert!(!known.finish(false), "an incomplete record is never known");
        assert!(known.start(0));
        known.cells().push_null();
        known.cells().push_text(b"x");
        assert!(known.finish(true));
        // Another list's number, or another code: not known.
        assert!(known.start(1));
        known.cells().push_null();
        known.cells().push_text(b"x");
        assert!(!known.finish(true));
        assert!(known.start(0));
        known.cells().push_text(b"x");
        known.cells().push_text(b"x");
        assert!(!known.finish(true));
        board.close();
        assert!(!known.start(0));
    }
}
