//! A record's shape as bytes, and the board on which the probe posts the
//! shapes it no longer needs to see.
//!
//! The shape (infer/shapes.rs has why it is enough for inference) is every
//! node's kind in tape order, with container lengths and key bytes. Two
//! writers produce it: infer/shapes.rs from a decoded tape, and
//! formats/json/shape.rs straight from JSON text, without a tape. The codes
//! below are their common language; a unit test of the JSON scanner checks
//! that both write the same bytes for every record the scanner accepts.

use std::hash::{BuildHasher, BuildHasherDefault};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use super::key_hash::KeyHasher;

pub const NULL: u8 = 0;
pub const BOOL: u8 = 1;
pub const INT: u8 = 2;
pub const FLOAT: u8 = 3;
pub const STR: u8 = 4;
/// Followed by the element count, 4 bytes little-endian.
pub const LIST: u8 = 5;
/// Followed by the entry count, 4 bytes little-endian.
pub const OBJECT: u8 = 6;
/// Followed by the key's length, 4 bytes little-endian, and its bytes.
pub const KEY: u8 = 7;
/// A string under a string parser: followed by its class's code
/// (infer/shapes.rs, which alone writes it).
pub const PARSED_STR: u8 = 8;

/// Appends `text[start..start + len]` (a key, into a shape). Most keys are
/// short: a copy of a fixed 16 bytes, cut back to the key, costs a few
/// moves where a copy of `len` bytes costs a call to `memcpy`.
#[inline(always)]
pub fn push_bytes(out: &mut Vec<u8>, text: &[u8], start: usize, len: usize) {
    match text.get(start..start + 16) {
        Some(wide) if len <= 16 => {
            let at = out.len();
            out.extend_from_slice(<&[u8; 16]>::try_from(wide).expect("16 bytes"));
            out.truncate(at + len);
        }
        _ => out.extend_from_slice(&text[start..start + len]),
    }
}

/// Shapes a board holds at most: twice its slots, so a probe for a missing
/// shape ends at an empty slot within a few steps.
const SLOTS: usize = 8192;
const MAX_POSTED: usize = SLOTS / 2;

/// Record shapes the probe has absorbed and whose next records cannot
/// change the schema: posted by the probe's one absorbing thread, read by
/// the threads that decode ahead of it, which then leave such a record
/// undecoded (formats/json/mod.rs). Append-only, so a reader sees a shape
/// either whole or not yet; a shape not yet seen only costs a decode.
pub struct ShapeBoard {
    slots: Box<[OnceLock<Box<[u8]>>]>,
    posted: AtomicUsize,
    /// Cleared when the probe's cache turns itself off (its records differ
    /// too much): readers stop looking.
    open: AtomicBool,
}

impl Default for ShapeBoard {
    fn default() -> Self {
        ShapeBoard {
            slots: (0..SLOTS).map(|_| OnceLock::new()).collect(),
            posted: AtomicUsize::new(0),
            open: AtomicBool::new(true),
        }
    }
}

impl ShapeBoard {
    fn slot_of(shape: &[u8]) -> usize {
        BuildHasherDefault::<KeyHasher>::default().hash_one(shape) as usize & (SLOTS - 1)
    }

    /// Whether `shape` was posted.
    pub fn contains(&self, shape: &[u8]) -> bool {
        let mut i = Self::slot_of(shape);
        loop {
            match self.slots[i].get() {
                None => return false,
                Some(posted) if **posted == *shape => return true,
                Some(_) => i = (i + 1) & (SLOTS - 1),
            }
        }
    }

    /// Posts `shape`. Only one thread may post (the probe's absorbing
    /// one): two posting at once could race for a slot, and the loser's
    /// shape would be dropped (only a lost skip, never a wrong one). A full
    /// board takes nothing more.
    pub fn post(&self, shape: &[u8]) {
        if self.posted.load(Ordering::Relaxed) >= MAX_POSTED || self.contains(shape) {
            return;
        }
        let mut i = Self::slot_of(shape);
        while self.slots[i].set(shape.into()).is_err() {
            i = (i + 1) & (SLOTS - 1);
        }
        self.posted.fetch_add(1, Ordering::Relaxed);
    }

    /// Whether readers should look at all: open, with a shape posted.
    pub fn worth_looking(&self) -> bool {
        self.open.load(Ordering::Relaxed) && self.posted.load(Ordering::Relaxed) > 0
    }

    pub fn close(&self) {
        self.open.store(false, Ordering::Relaxed);
    }
}

/// Records a decoding thread looks up, then finds too rarely on a board,
/// before it stops looking for a while (their shapes differ too much: the
/// look would be work lost before each decode).
const TRIAL: u32 = 1024;
const PAUSE: u32 = 8192;

/// A decoding thread's record of its looks at a board: after [`TRIAL`]
/// looks of which fewer than a quarter found the shape, the next [`PAUSE`]
/// records are not looked up.
#[derive(Clone, Copy, Debug, Default)]
pub struct LookupTrial {
    tries: u32,
    hits: u32,
    pause: u32,
}

impl LookupTrial {
    /// Whether to look up the next record (counts down a pause).
    #[inline]
    pub fn looking(&mut self) -> bool {
        if self.pause > 0 {
            self.pause -= 1;
            return false;
        }
        true
    }

    /// Records one look and whether it found the shape.
    #[inline]
    pub fn looked(&mut self, found: bool) {
        self.tries += 1;
        self.hits += u32::from(found);
        if self.tries == TRIAL {
            if self.hits * 4 < self.tries {
                self.pause = PAUSE;
            }
            (self.tries, self.hits) = (0, 0);
        }
    }
}

/// The shapes of a batch's records, written by the thread that decoded
/// the batch (infer/shapes.rs `ShapeWriter`), so that the probe's one
/// absorbing thread finds each record's shape key ready. A batch's records
/// mostly share a few shapes, so each distinct shape is kept once and a
/// record holds its number; bounded by [`MAX_BATCH_SHAPES`] shapes and
/// [`MAX_BATCH_SHAPE_BYTES`] bytes, past which a record gets no shape (its
/// reader then writes the key itself).
#[derive(Default, Debug)]
pub struct RecordShapes {
    /// The distinct shapes, one after another.
    bytes: Vec<u8>,
    /// Per distinct shape: where it ends in `bytes`, and whether it is a
    /// flat record's values alone (see [`RecordShapes::get`]).
    ends: Vec<(u32, bool)>,
    /// Per record, its shape's number; [`NO_SHAPE`] for none.
    of_record: Vec<u32>,
}

/// Distinct shapes a batch keeps at most, and their bytes at most.
pub const MAX_BATCH_SHAPES: usize = 32;
pub const MAX_BATCH_SHAPE_BYTES: usize = 64 << 10;
const NO_SHAPE: u32 = u32::MAX;

impl RecordShapes {
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.of_record.clear();
    }

    /// Records with an entry (with a shape or not).
    #[cfg(test)]
    pub fn records(&self) -> usize {
        self.of_record.len()
    }

    /// The shape of the next record: `shape` (a flat record's values alone
    /// when `flat`), interned; `None` for a record given no shape.
    pub fn push(&mut self, shape: Option<(&[u8], bool)>) {
        let number = match shape {
            None => NO_SHAPE,
            Some((bytes, flat)) => self.intern(bytes, flat),
        };
        self.of_record.push(number);
    }

    fn intern(&mut self, bytes: &[u8], flat: bool) -> u32 {
        // The previous record's shape first: runs of one shape are the
        // common case.
        if let Some(&last) = self.of_record.last().filter(|&&n| n != NO_SHAPE) {
            if self.shape(last as usize) == (bytes, flat) {
                return last;
            }
        }
        if let Some(n) = (0..self.ends.len()).find(|&n| self.shape(n) == (bytes, flat)) {
            return n as u32;
        }
        if self.ends.len() >= MAX_BATCH_SHAPES || self.bytes.len() + bytes.len() > MAX_BATCH_SHAPE_BYTES {
            return NO_SHAPE;
        }
        self.bytes.extend_from_slice(bytes);
        self.ends.push((self.bytes.len() as u32, flat));
        (self.ends.len() - 1) as u32
    }

    fn shape(&self, n: usize) -> (&[u8], bool) {
        let start = if n == 0 { 0 } else { self.ends[n - 1].0 as usize };
        let (end, flat) = self.ends[n];
        (&self.bytes[start..end as usize], flat)
    }

    /// Record `i`'s shape and whether it is a flat record's values alone
    /// (infer/shapes.rs puts its key list's number in front); `None` when
    /// it was given none or no shape was written for the batch.
    pub fn get(&self, i: usize) -> Option<(&[u8], bool)> {
        match self.of_record.get(i) {
            Some(&n) if n != NO_SHAPE => Some(self.shape(n as usize)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_shapes_are_interned_within_their_bounds() {
        let mut shapes = RecordShapes::default();
        shapes.push(Some((b"ab", false)));
        shapes.push(Some((b"ab", false)));
        shapes.push(Some((b"ab", true)));
        shapes.push(None);
        shapes.push(Some((b"", false)));
        shapes.push(Some((b"ab", false)));
        assert_eq!(shapes.records(), 6);
        assert_eq!(shapes.get(0), Some((&b"ab"[..], false)));
        assert_eq!(shapes.get(1), Some((&b"ab"[..], false)));
        assert_eq!(shapes.get(2), Some((&b"ab"[..], true)));
        assert_eq!(shapes.get(3), None);
        assert_eq!(shapes.get(4), Some((&b""[..], false)));
        assert_eq!(shapes.get(5), Some((&b"ab"[..], false)));
        assert_eq!(shapes.get(6), None);
        // Three distinct shapes, each kept once.
        assert_eq!(shapes.ends.len(), 3);
        assert_eq!(shapes.bytes, b"abab");

        // Past the count bound a new shape gets none; known ones still do.
        let mut full = RecordShapes::default();
        for n in 0..MAX_BATCH_SHAPES as u32 + 3 {
            full.push(Some((&n.to_le_bytes(), false)));
        }
        full.push(Some((&0u32.to_le_bytes(), false)));
        for n in 0..MAX_BATCH_SHAPES + 3 {
            assert_eq!(full.get(n).is_some(), n < MAX_BATCH_SHAPES, "shape {n}");
        }
        assert_eq!(full.get(MAX_BATCH_SHAPES + 3), Some((&0u32.to_le_bytes()[..], false)));
        // Past the byte bound likewise.
        let mut wide = RecordShapes::default();
        let big = vec![7u8; MAX_BATCH_SHAPE_BYTES / 2 + 1];
        wide.push(Some((&big, false)));
        wide.push(Some((&big[1..], false)));
        assert!(wide.get(0).is_some());
        assert!(wide.get(1).is_none());
        wide.clear();
        assert!(wide.records() == 0 && wide.get(0).is_none());
    }

    #[test]
    fn bytes_are_pushed_whole_whatever_their_length_and_room() {
        let text: Vec<u8> = (0..40).collect();
        for start in 0..40 {
            for len in 0..=(40 - start) {
                let mut out = vec![9];
                push_bytes(&mut out, &text, start, len);
                assert_eq!(out[0], 9);
                assert_eq!(&out[1..], &text[start..start + len], "start {start} len {len}");
            }
        }
    }

    #[test]
    fn a_trial_that_finds_few_shapes_pauses() {
        let mut trial = LookupTrial::default();
        for _ in 0..TRIAL {
            assert!(trial.looking());
            trial.looked(false);
        }
        // Paused for the next PAUSE records, then looking again.
        assert!((0..PAUSE).all(|_| !trial.looking()));
        assert!(trial.looking());
        // A quarter found is enough to go on looking.
        for i in 0..TRIAL {
            assert!(trial.looking());
            trial.looked(i % 4 == 0);
        }
        assert!(trial.looking());
    }

    #[test]
    fn a_posted_shape_is_found_and_no_other_is() {
        let board = ShapeBoard::default();
        assert!(!board.worth_looking());
        let shapes: Vec<Vec<u8>> = (0..MAX_POSTED as u32 + 10).map(|i| i.to_le_bytes().repeat(3)).collect();
        for s in &shapes {
            board.post(s);
            board.post(s); // twice: no second slot
        }
        assert!(board.worth_looking());
        assert_eq!(board.posted.load(Ordering::Relaxed), MAX_POSTED);
        for (i, s) in shapes.iter().enumerate() {
            assert_eq!(board.contains(s), i < MAX_POSTED, "shape {i}");
        }
        assert!(!board.contains(b""));
        board.close();
        assert!(!board.worth_looking());
    }

    #[test]
    fn readers_on_other_threads_see_what_was_posted() {
        let board = std::sync::Arc::new(ShapeBoard::default());
        let reader = {
            let board = std::sync::Arc::clone(&board);
            std::thread::spawn(move || {
                // Every shape a reader finds is one that was posted.
                let mut found = 0;
                while found < 100 {
                    found = (0u32..100).filter(|i| board.contains(&i.to_le_bytes())).count();
                    assert!(!board.contains(b"never posted"));
                }
            })
        };
        for i in 0u32..100 {
            board.post(&i.to_le_bytes());
        }
        reader.join().unwrap();
    }
}
