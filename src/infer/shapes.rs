//! The probe's shape cache: a record whose shape (its keys, in order, and
//! the kind of every value, but no value) was absorbed before is not
//! absorbed again, since it cannot change the schema.
//!
//! Why that holds: absorbing only grows the schema (a version widens,
//! wraps, gains fields or a sibling version, and never loses what it took),
//! so a schema that took a record once takes it again without growth, and
//! [`choose_version`](super::choose_version) sends such a value to a
//! version that takes it as it is. Absorbing the record again is then a
//! no-op on the tree. What the cache cannot replay is the statistics that
//! absorbing counts along the way (`max_depth_seen`, `values_flattened`,
//! `duplicate_keys`), which depend on the path a value takes: so a shape
//! is skipped only when it repeats no key, holds no value past the depth
//! limits, and the depth seen so far already covers its depth. Then the
//! full absorb would count nothing either, and the probe's result is the
//! one without the cache, bit for bit (property test
//! `shape_cache_never_changes_the_probe`).
//!
//! A value's kind classifies it, but for strings under a string parser
//! (`"7"` is an integer with `parse_integers`): a string's part of the
//! shape is then the class its text parses to, which is all that inference
//! and the version choice look at. (The cache relies on absorbing the same
//! record twice never growing the schema under a parser either, which
//! infer/lattice.rs `absorb_element` and `Ctx::as_is` keep true.) Typed values (Parquet) carry classes that depend on
//! the value (an out-of-range timestamp is a string), so a record holding
//! one has no shape; and the cache is off with `pin_types`/`freeze`.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::classify::{parsing_class, quick_class, DepthLimits, Rules, ValueClass};
use super::hash::KeyHasher;
use super::lattice::{absorb_record, has_duplicate_keys, InferStats};
use super::schema::StructNode;
use super::schema::TimeUnit;
use crate::scalar::{QuickParse, ScalarParsers};
use crate::value::flat_shape::{CellCoder, FlatBoard, FLAT, MAX_FLAT_LISTS, PARSED_CLASS};
use crate::value::shape::{self, RecordShapes, ShapeBoard};
use crate::value::{Node, ValueRef};

/// Shapes kept at most, and bytes of shape keys at most: a wide or
/// map-like input, whose records rarely share a shape, stops filling the
/// cache there.
const MAX_SHAPES: usize = 4096;
const MAX_SHAPE_BYTES: usize = 4 << 20;
/// After this many lookups, a cache that missed more than it hit turns
/// itself off (records that all differ would pay for the key and the
/// lookup for nothing).
const TRIAL_LOOKUPS: u64 = 8192;

/// What a stored shape needs for a skip to be exact.
#[derive(Clone, Copy)]
struct ShapeFacts {
    /// The deepest `max_depth_seen` its values could count.
    depth: usize,
    /// No object in it repeats a key and no value passes the depth limits:
    /// absorbing it counts no duplicate and flattens nothing.
    quiet: bool,
    /// On the board (value/shape.rs) for the decoding threads.
    posted: bool,
}

impl ShapeFacts {
    /// Whether a record of this shape changes nothing absorbed again:
    /// quiet, and no deeper than the depth seen (which only grows).
    fn skippable(&self, stats: &InferStats) -> bool {
        self.quiet && self.depth <= stats.max_depth_seen
    }

    /// Posts the shape `key` (these facts' own) on `board` unless it is
    /// there already.
    fn post_once(&mut self, board: Option<&ShapeBoard>, key: &[u8]) {
        if let Some(board) = board.filter(|_| !self.posted) {
            board.post(key);
            self.posted = true;
        }
    }
}

/// Which board a shape the cache may skip is posted on.
#[derive(Clone, Copy)]
enum Posting {
    /// A general key, for the JSON readers (value/shape.rs).
    General,
    /// A flat record's key, for the CSV readers (value/flat_shape.rs).
    Flat,
}

/// See the module doc. One per probe; the probe absorbs in input order, so
/// the cache's state (and so what it skips) follows the input, never the
/// thread count.
pub struct ShapeCache {
    shapes: HashMap<Box<[u8]>, ShapeFacts, BuildHasherDefault<KeyHasher>>,
    bytes: usize,
    key: Vec<u8>,
    lookups: u64,
    hits: u64,
    on: bool,
    /// The trial is over.
    judged: bool,
    /// Where the shapes that need no absorbing are posted for the
    /// decoding threads (value/shape.rs): `None` under string parsers,
    /// whose shapes depend on more than the JSON text's kinds.
    board: Option<std::sync::Arc<ShapeBoard>>,
    /// The key lists of flat records seen ([`ShapeCache::absorb_flat`]):
    /// a flat shape names its list by its index here.
    flat_lists: Vec<std::sync::Arc<[String]>>,
    /// Where the flat shapes that need no absorbing are posted, with the
    /// key lists, for the CSV readers (value/flat_shape.rs): a flat shape
    /// holds each value's class, so this board works under string parsers.
    flat_board: Option<Arc<FlatBoard>>,
    /// What the decoding threads write the records' shapes with
    /// ([`ShapeWriter`]); closed when the cache turns itself off.
    writer: Option<Arc<ShapeWriter>>,
}

impl ShapeCache {
    /// A cache for a probe with these rules; off where a value's kind does
    /// not decide its class (see the module doc).
    pub fn new(rules: &Rules<'_>) -> Self {
        let writer = rules.policies.is_none().then(|| {
            Arc::new(ShapeWriter {
                parsers: rules.parsers.clone(),
                parsing: rules.parsers.any(),
                quick: QuickParse::of(rules.parsers),
                unit: rules.timestamp_unit,
                open: AtomicBool::new(true),
            })
        });
        let boards = rules.policies.is_none() && !BOARD_OFF.is_on();
        ShapeCache {
            shapes: HashMap::default(),
            bytes: 0,
            key: Vec::new(),
            lookups: 0,
            hits: 0,
            on: rules.policies.is_none(),
            judged: false,
            board: (boards && !rules.parsers.any()).then(Default::default),
            flat_lists: Vec::new(),
            // The flat board codes values as the writer does: the same
            // parsers and unit as this cache's keys.
            flat_board: writer.clone().filter(|_| boards).map(|w| Arc::new(FlatBoard::new(w))),
            writer,
        }
    }

    /// The flat board the CSV readers read, if any (see the field).
    pub fn flat_board(&self) -> Option<&Arc<FlatBoard>> {
        self.flat_board.as_ref()
    }

    /// The writer the decoding threads use, if any (see the field).
    pub fn writer(&self) -> Option<&Arc<ShapeWriter>> {
        self.writer.as_ref()
    }

    /// The board the decoding threads read, if any (see the field).
    pub fn board(&self) -> Option<&std::sync::Arc<ShapeBoard>> {
        self.board.as_ref()
    }

    /// A record a decoding thread left undecoded, its shape being on the
    /// board: a hit, as [`Self::absorb`] would have found it.
    pub fn absorb_known(&mut self) {
        self.lookups += 1;
        self.hits += 1;
    }

    /// The shape infer/shapes.rs writes for `record`, with no string parser
    /// (tests of formats/json/shape.rs, which writes it from text).
    #[cfg(test)]
    pub fn plain_shape_of(record: ValueRef<'_>, out: &mut Vec<u8>) -> bool {
        shape_key(record, &plain_rules(64, 64), out)
    }

    /// Records absorbed through the cache without a full absorb.
    #[cfg(test)]
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// [`absorb_record`], skipped when it cannot change anything. Returns
    /// false when the record is not an object (as `absorb_record` does).
    /// `written` is the record's shape as its decoding thread wrote it
    /// ([`ShapeWriter::write`]), if it did.
    pub fn absorb(
        &mut self,
        root: &mut StructNode,
        record: ValueRef<'_>,
        rules: &Rules<'_>,
        stats: &mut InferStats,
        written: Option<(&[u8], bool)>,
    ) -> bool {
        if !self.on {
            return absorb_record(root, record, rules, stats);
        }
        match written {
            Some((key, false)) => {
                self.key.clear();
                self.key.extend_from_slice(key);
            }
            _ if !shape_key(record, rules, &mut self.key) => return absorb_record(root, record, rules, stats),
            _ => {}
        }
        self.absorb_keyed(root, record, rules, stats, Posting::General)
    }

    /// [`ShapeCache::absorb`] of a record whose entries are `keys` in
    /// order, each a string or null (`Batch::flat_keys`: CSV). Its shape
    /// is the key list's number and one class byte per value instead of
    /// every key's text, so a wide CSV record costs a short key; the keys
    /// are known to be the list's, which the general key spells out.
    pub fn absorb_flat(
        &mut self,
        root: &mut StructNode,
        keys: &std::sync::Arc<[String]>,
        record: ValueRef<'_>,
        rules: &Rules<'_>,
        stats: &mut InferStats,
        written: Option<(&[u8], bool)>,
    ) -> bool {
        let keyed = self.on
            && flat_key_start(record, keys, &mut self.flat_lists, self.flat_board.as_deref(), &mut self.key)
            && match written {
                Some((values, true)) => {
                    self.key.extend_from_slice(values);
                    true
                }
                // Not flat for its decoding thread: a value is no string.
                Some((_, false)) => false,
                None => write_flat_values(record, keys.len(), Classifier::of(rules), &mut self.key),
            };
        if !keyed {
            // A flat record's values without a list number (the lists are
            // full) are no general key: that one is written here.
            let general = written.filter(|&(_, flat)| !flat);
            return self.absorb(root, record, rules, stats, general);
        }
        self.absorb_keyed(root, record, rules, stats, Posting::Flat)
    }

    /// The cache's part once `self.key` holds the record's shape.
    fn absorb_keyed(
        &mut self,
        root: &mut StructNode,
        record: ValueRef<'_>,
        rules: &Rules<'_>,
        stats: &mut InferStats,
        posting: Posting,
    ) -> bool {
        let board = match posting {
            Posting::General => self.board.as_deref(),
            Posting::Flat => self.flat_board.as_deref().map(FlatBoard::shapes),
        };
        self.lookups += 1;
        if let Some(facts) = self.shapes.get_mut(self.key.as_slice()) {
            if facts.skippable(stats) {
                self.hits += 1;
                // A shape that was deeper than the depth seen when it was
                // stored (an empty list before any list held a value) is
                // posted once the depth seen covers it.
                facts.post_once(board, &self.key);
                return true;
            }
            return absorb_record(root, record, rules, stats);
        }
        // One trial, at the first miss past the mark (records a decoding
        // thread left undecoded count too, so the mark may be passed
        // between two misses).
        if !self.judged && self.lookups >= TRIAL_LOOKUPS {
            self.judged = true;
            if self.hits * 2 < self.lookups {
                self.on = false;
                self.shapes = HashMap::default();
                if let Some(board) = &self.board {
                    board.close();
                }
                if let Some(board) = &self.flat_board {
                    board.close();
                }
                if let Some(writer) = &self.writer {
                    writer.open.store(false, Ordering::Relaxed);
                }
            }
        }
        let absorbed = absorb_record(root, record, rules, stats);
        if absorbed && self.on && self.shapes.len() < MAX_SHAPES && self.bytes + self.key.len() <= MAX_SHAPE_BYTES {
            self.bytes += self.key.len();
            let mut facts = facts_of(record, rules.limits);
            // Skippable from now on (`max_depth_seen` only grows): the
            // decoding threads may leave such records undecoded.
            if facts.skippable(stats) {
                facts.post_once(board, &self.key);
            }
            self.shapes.insert(self.key.as_slice().into(), facts);
        }
        absorbed
    }
}

/// Tests compare probes with and without the board (which changes no
/// result, so other tests running meanwhile only lose speed).
pub static BOARD_OFF: crate::test_switch::TestSwitch = crate::test_switch::TestSwitch::new();

/// Writes the shapes of a decoded batch's records on the thread that
/// decoded it, for [`ShapeCache`] on the probe's one absorbing thread.
/// A shape key costs a pass over the record's nodes and, under string
/// parsers, a parse of every string (a CSV record's cells are all
/// strings): written on the absorbing thread, it keeps that one thread
/// busy with every cell of every record however many threads decode.
/// Written here, the absorbing thread copies a key and looks it up. The keys are the bytes the absorbing thread would write (the same
/// functions, with the same parsers and unit), so what the cache decides,
/// and so the probe, does not change (property test
/// `written_shapes_never_change_the_probe`).
pub struct ShapeWriter {
    parsers: ScalarParsers,
    /// `parsers.any()`, asked per value.
    parsing: bool,
    /// The kinds a cell's bytes tell without the whole parse.
    quick: QuickParse,
    unit: TimeUnit,
    /// Cleared when the cache turns itself off: nothing is written then.
    open: AtomicBool,
}

impl ShapeWriter {
    /// Writes into `out` one entry per record `0..records` of `tape`: its
    /// shape, or none where `no_shape(i)` (a bad record, one left
    /// undecoded) or where it has none (typed values). With `flat_width`
    /// (the batch's flat key list's length), a flat record's entry is its
    /// values' codes alone (`absorb_flat` puts its list's number in front).
    pub fn write(
        &self,
        tape: &crate::value::Tape,
        records: usize,
        flat_width: Option<usize>,
        no_shape: impl Fn(usize) -> bool,
        out: &mut RecordShapes,
        scratch: &mut Vec<u8>,
    ) {
        out.clear();
        if !self.open.load(Ordering::Relaxed) {
            return;
        }
        let classes = Classifier { parsers: &self.parsers, unit: self.unit };
        for i in 0..records {
            if no_shape(i) {
                out.push(None);
                continue;
            }
            let record = tape.record(i);
            let flat = match flat_width {
                Some(w) if record.flat_width() == Some(w) => {
                    scratch.clear();
                    write_flat_values(record, w, classes, scratch)
                }
                _ => false,
            };
            if flat {
                out.push(Some((scratch, true)));
            } else if write_shape(record, classes, scratch, false) {
                out.push(Some((scratch, false)));
            } else {
                out.push(None);
            }
        }
    }
}

/// A CSV reader writes a flat record's shape from its cells' text with
/// the writer's parsers and unit (value/flat_shape.rs): the codes
/// [`write_flat_values`] writes for a string value.
impl CellCoder for ShapeWriter {
    #[inline]
    fn code(&self, text: &[u8]) -> u8 {
        if !self.parsing {
            return shape::STR;
        }
        // Told from the bytes, a cell's class costs about 80 instructions
        // with this call, where the whole parse took 190 (callgrind, `COPY`
        // of the bench CSV's slice).
        match self.quick.kind(text) {
            Some(kind) => PARSED_CLASS + class_code(quick_class(kind, self.unit)),
            None => self.parsed_code(text),
        }
    }
}

impl ShapeWriter {
    /// The code of the class the whole parse gives `text`. A call of its
    /// own: the registers the whole parse needs, inlined, made every cell's
    /// call to `code` save and restore them. Bytes that are not UTF-8
    /// (never given: see `CellCoder`) get a code no shape holds, so that
    /// their record is decoded.
    #[inline(never)]
    fn parsed_code(&self, text: &[u8]) -> u8 {
        match std::str::from_utf8(text) {
            Ok(text) => PARSED_CLASS + Classifier { parsers: &self.parsers, unit: self.unit }.code(text),
            Err(_) => u8::MAX,
        }
    }
}

/// What a shape key needs of the rules: how to class a string.
#[derive(Clone, Copy)]
struct Classifier<'a> {
    parsers: &'a ScalarParsers,
    unit: TimeUnit,
}

impl<'a> Classifier<'a> {
    fn of(rules: &Rules<'a>) -> Self {
        Classifier { parsers: rules.parsers, unit: rules.timestamp_unit }
    }

    fn parsing(&self) -> bool {
        self.parsers.any()
    }

    /// The class code of a string's text; only asked where some parser
    /// is on ([`Classifier::parsing`]).
    #[inline]
    fn code(&self, text: &str) -> u8 {
        debug_assert!(self.parsing());
        class_code(parsing_class(text, self.parsers, self.unit))
    }
}

/// A bounded set of record shapes: strict mode's record of shapes that
/// were routed without a misfit, whose next records need no check
/// (scan/scanner.rs). Its shapes write a non-empty list of scalars as
/// the set of its elements' kinds ([`write_shape`]): whether a list fits
/// its column depends on each element's kind alone, not on how many
/// elements have it or in what order, so `[1, 2]` after `[3]` needs no
/// check, and the shapes of records whose lists vary in length do not
/// multiply past the set's bound.
#[derive(Default)]
pub struct ShapeSet {
    shapes: std::collections::HashSet<Box<[u8]>, BuildHasherDefault<KeyHasher>>,
    bytes: usize,
    key: Vec<u8>,
}

impl ShapeSet {
    /// Whether the shape of `record` is in the set; `None` when its kinds
    /// do not decide its classes (typed values): it has no shape. After
    /// `Some(false)`, [`ShapeSet::add_shape`] adds it.
    pub fn lookup(&mut self, record: ValueRef<'_>, rules: &Rules<'_>) -> Option<bool> {
        write_shape(record, Classifier::of(rules), &mut self.key, true)
            .then(|| self.shapes.contains(self.key.as_slice()))
    }

    /// Adds the shape [`ShapeSet::lookup`] just did not find, while the
    /// set is within its bounds.
    pub fn add_shape(&mut self) {
        if self.shapes.len() < MAX_SHAPES && self.bytes + self.key.len() <= MAX_SHAPE_BYTES {
            self.bytes += self.key.len();
            self.shapes.insert(self.key.as_slice().into());
        }
    }
}

/// Writes the shape of `record` into `out`: every node's kind in tape
/// order, with container lengths and key bytes, and for a string under a
/// string parser the class its text parses to. False when the record holds
/// a node whose kind does not decide its class (typed values).
fn shape_key(record: ValueRef<'_>, rules: &Rules<'_>, out: &mut Vec<u8>) -> bool {
    write_shape(record, Classifier::of(rules), out, false)
}

/// A code of [`ShapeSet`]'s shapes only: a non-empty list whose elements
/// are all scalars, followed by the set of their kinds (4 bytes, see
/// [`scalar_kinds`]) instead of its length and elements.
const SCALAR_LIST: u8 = 32;

/// [`shape_key`]; with `collapse`, a non-empty list of scalars is written
/// as [`SCALAR_LIST`] and the set of its elements' kinds.
fn write_shape(record: ValueRef<'_>, classes: Classifier<'_>, out: &mut Vec<u8>, collapse: bool) -> bool {
    out.clear();
    let tape = record.tape;
    let nodes = &tape.nodes;
    let text = tape.text.as_bytes();
    let end = tape.skip(record.idx);
    // Room for every node's code and count, so that only keys grow it.
    out.reserve(5 * (end - record.idx));
    let parsing = classes.parsing();
    let mut i = record.idx;
    while i < end {
        match nodes[i] {
            // Lengths make the encoding unambiguous (where a container
            // ends); evidence follows from the kinds inside.
            Node::List { len, end: list_end, .. } => {
                let kinds = if collapse && len > 0 {
                    scalar_kinds(&nodes[i + 1..list_end as usize], tape, classes, parsing)
                } else {
                    None
                };
                if let Some(kinds) = kinds {
                    out.push(SCALAR_LIST);
                    out.extend_from_slice(&kinds.to_le_bytes());
                    i = list_end as usize;
                    continue;
                }
                out.push(shape::LIST);
                out.extend_from_slice(&len.to_le_bytes());
            }
            Node::Object { len, .. } => {
                out.push(shape::OBJECT);
                out.extend_from_slice(&len.to_le_bytes());
            }
            Node::Key { start, len } => {
                out.push(shape::KEY);
                out.extend_from_slice(&len.to_le_bytes());
                shape::push_bytes(out, text, start as usize, len as usize);
            }
            // A typed value (a timestamp, a declared type, a map) has no
            // code: the general key is used.
            ref scalar => match scalar_code(scalar, tape, classes, parsing) {
                Some(ScalarCode::Kind(kind)) => out.push(kind),
                Some(ScalarCode::Parsed(class)) => out.extend_from_slice(&[shape::PARSED_STR, class]),
                None => return false,
            },
        }
        i += 1;
    }
    true
}

/// The kinds of a list's elements when every one is a scalar whose kind
/// decides its class: bit `k` for shape code `k` (NULL to STR), and under
/// a string parser bit 16 + the class code of a string's class. `None`
/// for anything else (a container, a typed value).
fn scalar_kinds(elements: &[Node], tape: &crate::value::Tape, classes: Classifier<'_>, parsing: bool) -> Option<u32> {
    let mut kinds = 0u32;
    for node in elements {
        let bit = match scalar_code(node, tape, classes, parsing)? {
            ScalarCode::Kind(kind) => kind,
            ScalarCode::Parsed(class) => 16 + class,
        };
        kinds |= 1 << bit;
    }
    Some(kinds)
}

/// How a scalar node enters a shape, shared by [`write_shape`] and
/// [`scalar_kinds`] so that the two can never code a kind differently.
enum ScalarCode {
    /// A shape code, NULL to STR.
    Kind(u8),
    /// A string under a string parser: the class code of its text.
    Parsed(u8),
}

/// The [`ScalarCode`] of `node`; `None` for a container, a key or a typed
/// value. Always inlined: called per element of every strict record's
/// lists; left to the compiler, the calls cost 1.4% of a strict scan's
/// instructions (callgrind, 20 MB of the bench file).
#[inline(always)]
fn scalar_code(node: &Node, tape: &crate::value::Tape, classes: Classifier<'_>, parsing: bool) -> Option<ScalarCode> {
    Some(match *node {
        Node::Null => ScalarCode::Kind(shape::NULL),
        Node::Bool(_) => ScalarCode::Kind(shape::BOOL),
        Node::Int(_) => ScalarCode::Kind(shape::INT),
        Node::Float(_) => ScalarCode::Kind(shape::FLOAT),
        Node::Str { start, len } if parsing => ScalarCode::Parsed(classes.code(tape.text_of(start, len))),
        Node::Str { .. } => ScalarCode::Kind(shape::STR),
        _ => return None,
    })
}

/// A flat record's shape is [`FLAT`], the number of its key list in
/// `lists` (added there when new), and per value NULL, STR or, under a
/// string parser, the class its text parses to ([`write_flat_values`]);
/// where a record has none (not an object of that many entries, a value
/// neither a string nor null, `lists` full) the general key is used.
/// This writes the head, [`FLAT`] and the list's number, into `out`.
fn flat_key_start(
    record: ValueRef<'_>,
    keys: &std::sync::Arc<[String]>,
    lists: &mut Vec<std::sync::Arc<[String]>>,
    board: Option<&FlatBoard>,
    out: &mut Vec<u8>,
) -> bool {
    if record.flat_width() != Some(keys.len()) {
        return false;
    }
    let by_address = lists.iter().position(|l| std::sync::Arc::ptr_eq(l, keys));
    let number = match by_address.or_else(|| lists.iter().position(|l| **l == **keys)) {
        Some(n) => {
            // The same names from another range's reader: compared by
            // address from now on, not name by name per record.
            if by_address.is_none() {
                lists[n] = std::sync::Arc::clone(keys);
            }
            n
        }
        None if lists.len() < MAX_FLAT_LISTS => {
            lists.push(std::sync::Arc::clone(keys));
            if let Some(board) = board {
                board.post_list(lists.len() - 1, keys);
            }
            lists.len() - 1
        }
        None => return false,
    };
    out.clear();
    out.push(FLAT);
    out.extend_from_slice(&(number as u32).to_le_bytes());
    true
}

/// Appends the codes of a flat record's `width` values to `out`: NULL,
/// STR or, under a string parser, the class its text parses to. False
/// when a value is neither a string nor null.
fn write_flat_values(record: ValueRef<'_>, width: usize, classes: Classifier<'_>, out: &mut Vec<u8>) -> bool {
    let tape = record.tape;
    let parsing = classes.parsing();
    // Entries are (key, value) node pairs: values at odd offsets.
    for i in 0..width {
        let idx = record.idx + 2 + 2 * i;
        debug_assert!(matches!(tape.nodes[idx - 1], Node::Key { .. }));
        match tape.nodes[idx] {
            Node::Null => out.push(shape::NULL),
            Node::Str { start, len } if parsing => out.push(PARSED_CLASS + classes.code(tape.text_of(start, len))),
            Node::Str { .. } => out.push(shape::STR),
            _ => return false,
        }
    }
    true
}

/// A string's class as one byte of its shape: the classes a string parser
/// gives. Below 16: a flat shape's byte is [`PARSED_CLASS`] plus this.
fn class_code(class: ValueClass) -> u8 {
    match class {
        ValueClass::Str => 0,
        ValueClass::Bool => 1,
        ValueClass::Int => 2,
        ValueClass::Float => 3,
        ValueClass::Timestamp => 4,
        ValueClass::Date => 5,
        ValueClass::Time => 6,
        // Not given to a string; kept apart all the same.
        ValueClass::Nothing => 7,
        ValueClass::Flattened => 8,
        ValueClass::List => 9,
        ValueClass::Object => 10,
        ValueClass::Map => 11,
        ValueClass::Declared(_) => 12,
    }
}

/// The facts of a record's shape: the deepest depth `note_depth` could
/// count (a container at `c` containers counts `c + 1`, a scalar `c`;
/// the record itself is at 0 and not counted), and whether it is quiet.
fn facts_of(record: ValueRef<'_>, limits: DepthLimits) -> ShapeFacts {
    let tape = record.tape;
    let end = tape.skip(record.idx);
    // Open containers below the record: (end index, is an object).
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut depth = 0;
    let mut quiet = !has_duplicate_keys(record);
    let mut i = record.idx + 1;
    while i < end {
        while open.last().is_some_and(|&(e, _)| e <= i) {
            open.pop();
        }
        let containers = open.len();
        let structs = open.iter().filter(|&&(_, is_object)| is_object).count();
        match tape.nodes[i] {
            Node::Key { .. } => {}
            Node::List { end: e, evidence, .. } => {
                depth = depth.max(containers + 1);
                quiet &= containers < limits.arrow_max_depth;
                // A ragged list is flattened to its text (classify).
                quiet = quiet
                    && (!evidence
                        || super::classify::list_depth(
                            ValueRef { tape, idx: i },
                            limits.arrow_max_depth - (containers + 1),
                        )
                        .is_some());
                open.push((e as usize, false));
            }
            Node::Object { end: e, .. } => {
                depth = depth.max(containers + 1);
                quiet &= containers < limits.arrow_max_depth && structs < limits.parquet_max_depth;
                quiet &= !has_duplicate_keys(ValueRef { tape, idx: i });
                open.push((e as usize, true));
            }
            _ => depth = depth.max(containers),
        }
        i += 1;
    }
    ShapeFacts { depth, quiet, posted: false }
}

/// Rules with no string parser and the given depth limits (tests).
#[cfg(test)]
pub(crate) fn plain_rules(arrow_max_depth: usize, parquet_max_depth: usize) -> Rules<'static> {
    static NO_PARSERS: crate::scalar::ScalarParsers = crate::scalar::ScalarParsers::none();
    Rules {
        limits: DepthLimits { arrow_max_depth, parquet_max_depth },
        scalar_object_key: "_value",
        parsers: &NO_PARSERS,
        timestamp_unit: crate::infer::TimeUnit::Micros,
        policies: None,
        columns: crate::infer::ColumnLimit::NONE,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::formats::json::parse_value;
    use crate::formats::json::texts::{leaves, JsonValues};
    use crate::infer::TimeUnit;
    use crate::scalar::ScalarParsers;
    use crate::value::Tape;

    /// JSON text of values nested a few levels, over few keys (so that
    /// shapes repeat and drift happens), with repeated keys now and then.
    fn value() -> impl Strategy<Value = String> {
        JsonValues {
            leaves: leaves(
                &[
                    "null",
                    "true",
                    "2.5",
                    "\"s\"",
                    // Strings the parsers of `parsing_rules` type.
                    "\"7\"",
                    "\"-2.5\"",
                    "\"yes\"",
                    "\"2026-01-31\"",
                    "\"2026-01-31T10:00:00Z\"",
                    "\"10:30:00\"",
                    "\"2300-01-01T00:00:00Z\"",
                ],
                -50..50,
            ),
            keys: "[ab]",
            depth: 4,
            size: 24,
            width: 3,
            spaced: false,
        }
        .strategy()
    }

    fn record() -> impl Strategy<Value = String> {
        prop::collection::vec(("[xyz_]", value()), 0..4).prop_map(|entries| {
            let body: Vec<String> = entries.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
            format!("{{{}}}", body.join(","))
        })
    }

    /// Every string parser on (a leaked value: the rules borrow it).
    fn parsing_rules(arrow_max_depth: usize, parquet_max_depth: usize) -> Rules<'static> {
        let parsers: &'static ScalarParsers = Box::leak(Box::new(ScalarParsers {
            integers: true,
            floats: Some(crate::scalar::FloatFormat::default()),
            true_tokens: vec!["yes".into()],
            false_tokens: vec!["no".into()],
            iso_timestamps: true,
            iso_dates: true,
            iso_times: true,
            ..ScalarParsers::none()
        }));
        Rules { parsers, timestamp_unit: TimeUnit::Nanos, ..plain_rules(arrow_max_depth, parquet_max_depth) }
    }

    fn absorb_all(
        records: &[String],
        order: &[usize],
        rules: &Rules<'_>,
        cached: bool,
    ) -> (StructNode, InferStats, u64) {
        let mut root = StructNode::default();
        let mut stats = InferStats::default();
        let mut cache = ShapeCache::new(rules);
        for &i in order {
            let mut tape = Tape::default();
            let idx = parse_value(&records[i], &mut tape).unwrap();
            tape.roots.push(idx);
            if cached {
                cache.absorb(&mut root, tape.record(0), rules, &mut stats, None);
            } else {
                absorb_record(&mut root, tape.record(0), rules, &mut stats);
            }
        }
        (root, stats, cache.hits())
    }

    /// A pool of records, the order they are absorbed in (each drawn again
    /// and again), and the rules' depth limits (some flatten values) and
    /// whether string parsers are on.
    #[allow(clippy::type_complexity)]
    fn draws(
        record: impl Strategy<Value = String>,
    ) -> impl Strategy<Value = (Vec<String>, Vec<usize>, (usize, usize, bool))> {
        (
            prop::collection::vec(record, 1..6),
            prop::collection::vec(0usize..6, 1..40),
            (1usize..6, 1usize..6, any::<bool>()),
        )
            .prop_map(|(pool, picks, rules)| {
                let order = picks.iter().map(|p| p % pool.len()).collect();
                (pool, order, rules)
            })
    }

    fn rules_for(arrow: usize, parquet: usize, parsing: bool) -> Rules<'static> {
        if parsing {
            parsing_rules(arrow, parquet)
        } else {
            plain_rules(arrow, parquet)
        }
    }

    /// A record of string and null values alone, as a CSV reader writes
    /// them (keys in a fixed order, some absent so that key lists differ).
    fn flat_record() -> impl Strategy<Value = String> {
        let value = prop::sample::select(vec![
            "null",
            "\"s\"",
            "\"7\"",
            "\" 7 \"",
            "\"-2.5\"",
            "\"yes\"",
            "\"2026-01-31\"",
            "\"2026-01-31T10:00:00Z\"",
            "\"2300-01-01T00:00:00Z\"",
            "\"10:30:00\"",
        ]);
        prop::collection::vec(prop::option::of(value), 3).prop_map(|values| {
            let body: Vec<String> =
                ["x", "y", "z"].iter().zip(values).filter_map(|(k, v)| v.map(|v| format!("\"{k}\":{v}"))).collect();
            format!("{{{}}}", body.join(","))
        })
    }

    /// The key list of a record whose values are all strings or nulls.
    fn flat_keys(tape: &Tape) -> Option<std::sync::Arc<[String]>> {
        let record = tape.record(0);
        record.flat_width()?;
        let mut keys = Vec::new();
        for (key, value) in record.entries() {
            if !matches!(value.node(), Node::Str { .. } | Node::Null) {
                return None;
            }
            keys.push(key.to_string());
        }
        Some(keys.into())
    }

    /// Absorbs `records` in `order` as the probe does, flat ones by their
    /// key list; with `write`, each record's shape written first by a
    /// [`ShapeWriter`], as a decoding thread writes it.
    fn absorb_written(
        records: &[String],
        order: &[usize],
        rules: &Rules<'_>,
        write: bool,
    ) -> (StructNode, InferStats, u64) {
        let mut root = StructNode::default();
        let mut stats = InferStats::default();
        let mut cache = ShapeCache::new(rules);
        let writer = cache.writer().cloned().expect("a writer without policies");
        let (mut shapes, mut scratch) = (RecordShapes::default(), Vec::new());
        for &i in order {
            let mut tape = Tape::default();
            let idx = parse_value(&records[i], &mut tape).unwrap();
            tape.roots.push(idx);
            let keys = flat_keys(&tape);
            if write {
                writer.write(&tape, 1, keys.as_ref().map(|k| k.len()), |_| false, &mut shapes, &mut scratch);
            }
            let written = shapes.get(0).filter(|_| write);
            match &keys {
                Some(keys) => cache.absorb_flat(&mut root, keys, tape.record(0), rules, &mut stats, written),
                None => cache.absorb(&mut root, tape.record(0), rules, &mut stats, written),
            };
        }
        (root, stats, cache.hits())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::test_support::cases(256), .. ProptestConfig::default() })]

        /// Shapes written by a decoding thread are the keys the absorbing
        /// thread would write: the same tree, counters and cache hits,
        /// with string parsers on and off, flat records and others.
        #[test]
        fn written_shapes_never_change_the_probe(
            (pool, order, (arrow, parquet, parsing)) in draws(prop_oneof![record(), flat_record()]),
        ) {
            let rules = rules_for(arrow, parquet, parsing);
            let (own, own_stats, own_hits) = absorb_written(&pool, &order, &rules, false);
            let (written, written_stats, written_hits) = absorb_written(&pool, &order, &rules, true);
            prop_assert_eq!(own, written);
            prop_assert_eq!(own_stats, written_stats);
            prop_assert_eq!(own_hits, written_hits);
        }

        /// A pool of records drawn again and again, in any order, at depth
        /// limits that flatten some of them: the cached probe's tree and
        /// counters are the uncached probe's.
        #[test]
        fn shape_cache_never_changes_the_probe(
            (pool, order, (arrow, parquet, parsing)) in draws(record()),
        ) {
            let rules = rules_for(arrow, parquet, parsing);
            let (plain, plain_stats, _) = absorb_all(&pool, &order, &rules, false);
            let (cached, cached_stats, _) = absorb_all(&pool, &order, &rules, true);
            prop_assert_eq!(plain, cached);
            prop_assert_eq!(plain_stats, cached_stats);
        }

    }

    #[test]
    fn repeated_shapes_are_skipped_and_duplicates_never_are() {
        let records = [r#"{"a":1,"b":{"c":"x"}}"#.to_string(), r#"{"a":1,"a":2}"#.to_string()];
        let rules = plain_rules(10, 10);
        let (_, _, hits) = absorb_all(&records, &[0, 0, 0, 1, 1, 1], &rules, true);
        // Record 0 twice from the cache; record 1 repeats a key, so its
        // duplicate must be counted by a full absorb every time.
        assert_eq!(hits, 2);
        let (_, stats, _) = absorb_all(&records, &[0, 0, 0, 1, 1, 1], &rules, true);
        assert_eq!(stats.duplicate_keys, 3);
    }

    #[test]
    fn a_shape_deeper_than_the_depth_seen_is_posted_once_the_depth_covers_it() {
        // An empty list counts no depth until a list holds a value, so the
        // first record's shape cannot be posted when it is stored; it is
        // posted at its next hit, and the decoding threads skip it from then.
        let rules = plain_rules(10, 10);
        let mut cache = ShapeCache::new(&rules);
        let board = cache.board().cloned().expect("a board without parsers");
        let (mut root, mut stats) = (StructNode::default(), InferStats::default());
        let mut absorb = |text: &str, cache: &mut ShapeCache| {
            let mut tape = Tape::default();
            let idx = parse_value(text, &mut tape).unwrap();
            tape.roots.push(idx);
            cache.absorb(&mut root, tape.record(0), &rules, &mut stats, None);
        };
        let posted = |text: &str| {
            let mut key = Vec::new();
            crate::formats::json::shape::scan_shape(text.as_bytes(), &mut key).unwrap();
            board.contains(&key)
        };
        let (empty, full) = (r#"{"t":[]}"#, r#"{"t":["a"]}"#);
        absorb(empty, &mut cache);
        assert!(!posted(empty), "not skippable before a list held a value");
        absorb(full, &mut cache);
        assert!(posted(full));
        assert!(!posted(empty));
        absorb(empty, &mut cache);
        assert!(posted(empty), "posted at the hit once the depth seen covers it");
        assert_eq!(cache.hits(), 1);
    }

    #[test]
    fn a_parsed_string_is_its_class_in_the_shape() {
        let rules = parsing_rules(10, 10);
        let key = |text: &str| {
            let mut tape = Tape::default();
            let idx = parse_value(text, &mut tape).unwrap();
            tape.roots.push(idx);
            let mut out = Vec::new();
            assert!(shape_key(tape.record(0), &rules, &mut out));
            out
        };
        assert_eq!(key(r#"{"a":"7"}"#), key(r#"{"a":"12"}"#));
        assert_ne!(key(r#"{"a":"7"}"#), key(r#"{"a":"x"}"#));
        assert_ne!(key(r#"{"a":"7"}"#), key(r#"{"a":"2.5"}"#));
        // Out of the nanosecond range (1677-2262): a string, not a timestamp.
        assert_ne!(key(r#"{"a":"2026-01-31T10:00:00Z"}"#), key(r#"{"a":"2300-01-01T00:00:00Z"}"#));
    }

    #[test]
    fn the_cache_is_off_with_policies_and_on_with_parsers() {
        assert!(ShapeCache::new(&parsing_rules(10, 10)).on);
        let policies = crate::infer::Policies::default();
        let with_policies = Rules { policies: Some(&policies), ..plain_rules(10, 10) };
        assert!(!ShapeCache::new(&with_policies).on);
    }
}
