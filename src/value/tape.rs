//! The tape: the records of one batch as flat nodes plus one text buffer,
//! with no heap allocation per value; containers record where they end, so a
//! value is skipped in O(1).

use super::time_unit::TimeUnit;
use super::Declared;

/// One node of a tape. Containers record where their subtree ends, so a
/// consumer can skip a whole value in O(1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string: a range of [`Tape::text`].
    Str {
        start: u32,
        len: u32,
    },
    /// An array of `len` values; `end` is the index one past its last node.
    /// `evidence`: some non-null scalar lies inside (else the value carries
    /// no type evidence, like `[]`, `[{}]` or `{"a": null}`).
    List {
        len: u32,
        end: u32,
        evidence: bool,
    },
    /// An object of `len` entries, each a [`Node::Key`] followed by its value.
    Object {
        len: u32,
        end: u32,
        evidence: bool,
    },
    /// An object key: a range of [`Tape::text`].
    Key {
        start: u32,
        len: u32,
    },
    /// A typed instant from a typed source (Parquet): `value` ticks of
    /// `unit` since the epoch, UTC.
    Timestamp {
        value: i64,
        unit: TimeUnit,
    },
    /// Days since the epoch.
    Date(i32),
    /// Nanoseconds since midnight.
    Time(i64),
    /// A value of a declared type from a typed source (Parquet); `bits`
    /// holds it as [`DeclaredBits`] describes.
    Declared {
        kind: Declared,
        bits: u64,
    },
    /// A declared map (Parquet MAP): like a list whose elements are
    /// `{key, value}` objects.
    Map {
        len: u32,
        end: u32,
        evidence: bool,
    },
}

/// How a [`Node::Declared`] stores its value in `bits`:
/// - integers: the value as i64 (UInt64: its u64 bits);
/// - Float32: the f32 bits;
/// - decimals of precision ≤ 18: the unscaled value as i64;
/// - wider decimals (i128, little endian), UUIDs (16 bytes, big endian as
///   written) and intervals (months i32, days i32, micros i64, little endian):
///   the offset of 16 bytes in [`Tape::bytes`];
/// - blobs: offset (low 32 bits) and length (high 32 bits) in [`Tape::bytes`].
pub struct DeclaredBits;

impl DeclaredBits {
    pub fn range(bits: u64) -> (usize, usize) {
        let start = (bits & 0xffff_ffff) as usize;
        let len = (bits >> 32) as usize;
        (start, start + len)
    }
}

/// Records of one batch, stored flat. `roots` holds the index of each record.
#[derive(Debug, Clone)]
pub struct Tape {
    pub nodes: Vec<Node>,
    pub text: String,
    /// Bytes of declared values that do not fit in a node (blobs, UUIDs,
    /// intervals, wide decimals).
    pub bytes: Vec<u8>,
    pub roots: Vec<u32>,
    /// Changes whenever the text may have been cleared, so that a decoder
    /// can tell whether text ranges it remembered are still valid.
    generation: u64,
}

static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Default for Tape {
    fn default() -> Self {
        Tape {
            nodes: Vec::new(),
            text: String::new(),
            bytes: Vec::new(),
            roots: Vec::new(),
            generation: next_generation(),
        }
    }
}

impl Tape {
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.text.clear();
        self.bytes.clear();
        self.roots.clear();
        self.generation = next_generation();
    }

    /// Identifies the current text buffer contents; see [`Tape::push_key_range`].
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn record(&self, i: usize) -> ValueRef<'_> {
        ValueRef { tape: self, idx: self.roots[i] as usize }
    }

    pub fn text_of(&self, start: u32, len: u32) -> &str {
        &self.text[start as usize..(start + len) as usize]
    }

    /// The bytes of [`Tape::text_of`]: cut without the check that the cut
    /// falls between characters, for readers of ASCII grammars.
    #[inline]
    pub fn bytes_of(&self, start: u32, len: u32) -> &[u8] {
        &self.text.as_bytes()[start as usize..(start + len) as usize]
    }

    /// Appends a string to the text buffer and returns its range.
    pub fn push_text(&mut self, s: &str) -> (u32, u32) {
        let start = self.text.len() as u32;
        self.text.push_str(s);
        (start, s.len() as u32)
    }

    /// Index one past the subtree rooted at `idx`.
    pub fn skip(&self, idx: usize) -> usize {
        match self.nodes[idx] {
            Node::List { end, .. } | Node::Object { end, .. } | Node::Map { end, .. } => end as usize,
            _ => idx + 1,
        }
    }

    /// Approximate heap bytes held, for memory budgeting.
    pub fn heap_bytes(&self) -> usize {
        self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.text.capacity()
            + self.bytes.capacity()
            + self.roots.capacity() * 4
    }
}

/// A borrowed view of one value on a tape.
#[derive(Clone, Copy, Debug)]
pub struct ValueRef<'t> {
    pub tape: &'t Tape,
    pub idx: usize,
}

impl<'t> ValueRef<'t> {
    pub fn node(&self) -> Node {
        self.tape.nodes[self.idx]
    }

    pub fn as_str(&self) -> Option<&'t str> {
        match self.node() {
            Node::Str { start, len } => Some(self.tape.text_of(start, len)),
            _ => None,
        }
    }

    /// True for null and for containers with no non-null scalar inside
    /// (`{}`, `[]`, `[{}]`, `{"a": null}`): values that carry no type evidence.
    pub fn is_empty_or_null(&self) -> bool {
        matches!(
            self.node(),
            Node::Null
                | Node::List { evidence: false, .. }
                | Node::Object { evidence: false, .. }
                | Node::Map { evidence: false, .. }
        )
    }

    /// Elements of an array (empty for anything else).
    pub fn elements(&self) -> Elements<'t> {
        match self.node() {
            Node::List { len, .. } | Node::Map { len, .. } => {
                Elements { tape: self.tape, next: self.idx + 1, left: len }
            }
            _ => Elements { tape: self.tape, next: 0, left: 0 },
        }
    }

    /// Entries of an object (empty for anything else).
    /// The number of entries of an object whose every value is one node
    /// (a scalar or a null: its end is right after them), so that value i
    /// sits at `idx + 2 + 2i` and its key just before; `None` for anything
    /// else. The flat paths (CSV records) read values by that offset.
    pub fn flat_width(&self) -> Option<usize> {
        match self.node() {
            Node::Object { len, end, .. } if end as usize == self.idx + 1 + 2 * len as usize => Some(len as usize),
            _ => None,
        }
    }

    pub fn entries(&self) -> Entries<'t> {
        match self.node() {
            Node::Object { len, .. } => Entries { tape: self.tape, next: self.idx + 1, left: len },
            _ => Entries { tape: self.tape, next: 0, left: 0 },
        }
    }
}

pub struct Elements<'t> {
    tape: &'t Tape,
    next: usize,
    left: u32,
}

impl<'t> Iterator for Elements<'t> {
    type Item = ValueRef<'t>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let v = ValueRef { tape: self.tape, idx: self.next };
        self.next = self.tape.skip(self.next);
        Some(v)
    }
}

pub struct Entries<'t> {
    tape: &'t Tape,
    next: usize,
    left: u32,
}

impl<'t> Iterator for Entries<'t> {
    type Item = (&'t str, ValueRef<'t>);
    // Inlined into the router's loop over an object's entries, where a
    // call per entry returned its key and value through memory.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let key = match self.tape.nodes[self.next] {
            Node::Key { start, len } => self.tape.text_of(start, len),
            _ => "",
        };
        let v = ValueRef { tape: self.tape, idx: self.next + 1 };
        self.next = self.tape.skip(self.next + 1);
        Some((key, v))
    }
}

/// An open container on a tape, returned by [`Tape::open`].
#[derive(Clone, Copy, Debug)]
pub struct OpenContainer {
    node: usize,
    kind: ContainerKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ContainerKind {
    List,
    Object,
    Map,
}

/// Building records for decoders other than the JSON parser (which writes
/// nodes directly). A container's `evidence` flag says whether a non-null
/// scalar lies anywhere inside it (see [`Node::List`]).
impl Tape {
    /// Starts a container; close it with [`Tape::close`].
    pub fn open(&mut self, is_object: bool) -> OpenContainer {
        let node = self.nodes.len();
        self.nodes.push(Node::Null); // patched by close
        OpenContainer { node, kind: if is_object { ContainerKind::Object } else { ContainerKind::List } }
    }

    /// Starts a map: a list of `{key, value}` objects; close it with [`Tape::close`].
    pub fn open_map(&mut self) -> OpenContainer {
        let node = self.nodes.len();
        self.nodes.push(Node::Null); // patched by close
        OpenContainer { node, kind: ContainerKind::Map }
    }

    /// Ends a container holding `len` entries (objects: key/value pairs).
    pub fn close(&mut self, open: OpenContainer, len: u32, evidence: bool) {
        let end = self.nodes.len() as u32;
        self.nodes[open.node] = match open.kind {
            ContainerKind::Object => Node::Object { len, end, evidence },
            ContainerKind::List => Node::List { len, end, evidence },
            ContainerKind::Map => Node::Map { len, end, evidence },
        };
    }

    pub fn push_key(&mut self, key: &str) {
        let (start, len) = self.push_text(key);
        self.nodes.push(Node::Key { start, len });
    }

    /// An object's entry: a key whose text is already on this tape (pushed
    /// once per batch and shared by every record, e.g. CSV column names;
    /// the range must come from [`Tape::push_text`] under the current
    /// [`Tape::generation`]) and its value, a scalar node (a string's range
    /// of this tape's text, as [`Tape::push_text`] returned or a part of
    /// it). Both in one push: one check of the room, not two.
    #[inline]
    pub fn push_entry(&mut self, key: (u32, u32), value: Node) {
        self.nodes.extend_from_slice(&[Node::Key { start: key.0, len: key.1 }, value]);
    }

    pub fn push_string(&mut self, s: &str) {
        let (start, len) = self.push_text(s);
        self.nodes.push(Node::Str { start, len });
    }

    /// Appends bytes for a [`Node::Declared`] value; returns their offset.
    pub fn push_bytes(&mut self, bytes: &[u8]) -> u32 {
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(bytes);
        start
    }

    pub fn push_null(&mut self) {
        self.nodes.push(Node::Null);
    }

    /// Marks the node at `index` as a finished record.
    pub fn push_root(&mut self, index: usize) {
        self.roots.push(index as u32);
    }
}
const _: () = assert!(std::mem::size_of::<crate::value::Node>() == 16);
