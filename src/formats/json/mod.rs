//! A JSON text parser that appends one value to a [`Tape`].
//!
//! Iterative (an explicit stack, no recursion), so nesting depth is bounded by
//! [`MAX_NESTING`] and never by the thread's stack. Input is UTF-8 text that
//! the caller has already validated.

pub mod cursor;
pub mod document;
pub mod lines;
pub mod shape;
#[cfg(test)]
mod skip_tests;
#[cfg(test)]
pub(crate) mod texts;

use super::{BadRecord, Batch, RecordFault, RecordMeta};
use crate::value::key_hash::KeyHasher;
use crate::value::{Node, Tape};

/// Deeper documents are rejected with a clear error rather than parsed: the
/// depth limits flatten anything past a few dozen levels anyway, and this
/// bounds the parser's own stack vector.
pub const MAX_NESTING: usize = 100_000;

#[derive(Debug, Clone, PartialEq)]
pub struct JsonError {
    /// Byte offset of the problem within the parsed text.
    pub offset: usize,
    pub message: String,
    /// Where the value ends, when only its content is bad (a lone
    /// surrogate: the text is JSON, but no string it spells is Unicode):
    /// what follows it can still be read. `None` for a syntax error.
    pub value_end: Option<usize>,
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {} of the record", self.message, self.offset)
    }
}

struct Parser<'a> {
    /// The input: `bytes` is `text`'s bytes. Slices of `text` cut at ASCII
    /// bytes are char boundaries, so taking them costs a boundary check,
    /// not a second UTF-8 validation.
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The value must be the whole text (else more values may follow it).
    whole: bool,
    /// The record's keys whose values are not wanted (projection
    /// pushdown): such a value is read for its syntax only and stands as a
    /// null on the tape.
    skip: Option<&'a SkipKeys>,
    /// While a skipped value is read: the depth of the object it belongs
    /// to (the record: 1). Nothing is written to the tape meanwhile.
    skipping: Option<usize>,
    /// A trusted skip just read a whole value.
    skipped_whole: Option<Skipped>,
    /// Wanted top-level keys read so far, and how many end the record's
    /// parse early (`usize::MAX`: never; see [`SkipKeys::stop_after`]).
    found: usize,
    stop_at: usize,
    /// The first `\u` escape of a lone surrogate (where its backslash is):
    /// the value is read to its end, then refused (see `parse`).
    lone_surrogate: Option<usize>,
}

/// A value a trusted skip read whole: its evidence, and whether its entry
/// was left out of the tape entirely.
#[derive(Clone, Copy)]
struct Skipped {
    evidence: bool,
    dropped: bool,
}

/// The top-level keys of a record whose values a scan does not need: it
/// routes none of their columns. Their values are still read in full, so
/// a malformed record is the same bad record with the same message, and
/// count for the record's evidence, but nothing of them is kept.
///
/// `trusted`: every record of the input parsed without a fault before (the
/// probe read the same unchanged files and found no bad record, see
/// scan/tally.rs), so a skipped value is only scanned for its end.
///
/// `wanted`: the top-level keys whose values the scan does need. Where the
/// input is trusted and the text ends with its record, a record's parse
/// ends once it has read all of them: the probe found no key repeated, so
/// what follows holds only skipped keys and keys the schema lacks, and an
/// additive schema lacks only keys whose values were all null or empty
/// (the probe gave every other key a family), which a scan ignores.
#[derive(Clone, Debug, Default)]
pub struct SkipKeys {
    /// Looked up for every top-level key of every record: the fast key
    /// hash, then one comparison.
    keys: KeySet,
    wanted: KeySet,
    trusted: bool,
    /// Every line of the input held one record when the probe read it
    /// (so a line's end is its record's end).
    one_record_per_line: bool,
}

type KeySet = std::collections::HashSet<Box<str>, std::hash::BuildHasherDefault<KeyHasher>>;

impl SkipKeys {
    /// The keys to skip, and the ones the scan wants.
    pub fn new(keys: Vec<String>, wanted: Vec<String>) -> Self {
        SkipKeys {
            keys: keys.into_iter().map(String::into_boxed_str).collect(),
            wanted: wanted.into_iter().map(String::into_boxed_str).collect(),
            trusted: false,
            one_record_per_line: false,
        }
    }

    /// The same keys, for input known to parse (see the type's doc);
    /// `one_record_per_line`: no line of it held two records.
    pub fn trusted(mut self, one_record_per_line: bool) -> Self {
        self.trusted = true;
        self.one_record_per_line = one_record_per_line;
        self
    }

    /// After how many wanted keys a record's parse may end, for a text
    /// that ends where its record does (`usize::MAX`: it may not).
    fn stop_after(&self, text_ends_record: bool) -> usize {
        if self.trusted && text_ends_record && !self.wanted.is_empty() {
            self.wanted.len()
        } else {
            usize::MAX
        }
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    #[cfg(test)]
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Whether the value of top-level key `key` is skipped.
    #[inline]
    pub fn is_skipped(&self, key: &str) -> bool {
        self.keys.contains(key)
    }
}

/// What the innermost open container expects next.
#[derive(Clone, Copy)]
struct Open {
    node: usize,
    count: u32,
    is_object: bool,
    /// A non-null scalar was seen inside.
    evidence: bool,
}

/// Parses exactly one JSON value from `text` (surrounding whitespace allowed)
/// and appends it to `tape`, returning the index of its root node. On error
/// the tape is restored to its previous length.
#[cfg(test)]
pub fn parse_value(text: &str, tape: &mut Tape) -> Result<u32, JsonError> {
    parse_value_skipping(text, tape, None)
}

/// [`parse_value`], with the values of the record's keys in `skip` read
/// for their syntax only and written as nulls (see [`SkipKeys`]).
pub fn parse_value_skipping(text: &str, tape: &mut Tape, skip: Option<&SkipKeys>) -> Result<u32, JsonError> {
    let nodes_before = tape.nodes.len();
    let text_before = tape.text.len();
    // The text is the record's, to its end.
    let mut p = Parser::new(text, true, skip, true);
    let result = if skip.is_some() { p.parse::<true>(tape) } else { p.parse::<false>(tape) };
    if result.is_err() {
        tape.nodes.truncate(nodes_before);
        tape.text.truncate(text_before);
    }
    result.map(|_| nodes_before as u32)
}

/// Parses the one JSON value that starts `text` (leading whitespace
/// allowed) and returns its root node and the bytes it spans: whatever
/// follows is left for the caller, so values written back to back
/// (`{"a":1} {"a":2}`) are read one by one. On error the tape is restored.
#[cfg(test)]
pub fn parse_value_prefix(text: &str, tape: &mut Tape) -> Result<(u32, usize), JsonError> {
    parse_value_prefix_skipping(text, tape, None, false)
}

/// [`parse_value_prefix`], skipping the values of the keys in `skip`.
/// `text_ends_record`: nothing but whitespace follows the value (known
/// from the probe, see [`SkipKeys`]), so its parse may end early and
/// report the whole text used.
pub fn parse_value_prefix_skipping(
    text: &str,
    tape: &mut Tape,
    skip: Option<&SkipKeys>,
    text_ends_record: bool,
) -> Result<(u32, usize), JsonError> {
    let nodes_before = tape.nodes.len();
    let text_before = tape.text.len();
    let mut p = Parser::new(text, false, skip, text_ends_record);
    let parsed = if skip.is_some() { p.parse::<true>(tape) } else { p.parse::<false>(tape) };
    match parsed {
        Ok(()) => Ok((nodes_before as u32, p.pos)),
        Err(e) => {
            tape.nodes.truncate(nodes_before);
            tape.text.truncate(text_before);
            Err(e)
        }
    }
}

/// What one decoded value became.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decoded {
    Record,
    /// Valid JSON that is not an object: a bad record; the node says what it was.
    NotObject(Node),
    /// Malformed JSON: a bad record that spans the rest of the text.
    Malformed,
    /// JSON whose text is not Unicode (a lone surrogate escape): a bad
    /// record that ends where its value does.
    Undecodable,
}

/// Decodes the JSON value that starts `text` as one record of `batch` with
/// its meta: an object is a record, anything else a bad record (a null root
/// with the error) for on_error. `what` names the value in messages ("the
/// line", "value 2 of the line", "document 3"). Returns the bytes consumed
/// (the whole text when it is malformed) and what the value was.
pub fn decode_value_record(
    text: &str,
    batch: &mut Batch,
    (line, byte): (u64, u64),
    what: &dyn std::fmt::Display,
    text_ends_record: bool,
) -> (usize, Decoded) {
    let tape = &mut batch.tape;
    let (used, decoded, error) = match parse_value_prefix_skipping(text, tape, batch.skip.as_deref(), text_ends_record)
    {
        Err(e) => match e.value_end {
            Some(end) => (end, Decoded::Undecodable, Some(bad_json(&e, what))),
            None => (text.len(), Decoded::Malformed, Some(bad_json(&e, what))),
        },
        Ok((root, used)) => match tape.nodes[root as usize] {
            Node::Object { .. } => {
                tape.roots.push(root);
                (used, Decoded::Record, None)
            }
            other => {
                tape.nodes.truncate(root as usize);
                let cause = format!("{what} is a JSON {}, not an object", node_kind(other));
                (used, Decoded::NotObject(other), Some(BadRecord::new(RecordFault::NotAnObject, cause)))
            }
        },
    };
    if error.is_some() {
        push_bad_root(tape);
    }
    batch.meta.push(RecordMeta { line, byte, error });
    (used, decoded)
}

/// Decodes `raw` as exactly one JSON object record (an element of a JSON
/// array, cut by its brackets): anything after the value makes it malformed.
pub fn decode_whole_record(raw: &[u8], batch: &mut Batch, line: u64, byte: u64, what: &dyn std::fmt::Display) {
    let tape = &mut batch.tape;
    let error = match super::utf8::validate(raw) {
        Err(at) => Some(BadRecord::new(
            RecordFault::BadEncoding,
            format!("invalid UTF-8 at byte {at} of {what} (undecodable bytes for the input encoding)"),
        )),
        Ok(text) => match parse_value_skipping(text, tape, batch.skip.as_deref()) {
            Err(e) => Some(bad_json(&e, what)),
            Ok(root) => match tape.nodes[root as usize] {
                Node::Object { .. } => {
                    tape.roots.push(root);
                    None
                }
                other => {
                    tape.nodes.truncate(root as usize);
                    let cause = format!("{what} is a JSON {}, not an object", node_kind(other));
                    Some(BadRecord::new(RecordFault::NotAnObject, cause))
                }
            },
        },
    };
    if error.is_some() {
        push_bad_root(tape);
    }
    batch.meta.push(RecordMeta { line, byte, error });
}

/// A record the parser refused: malformed JSON, or a string whose escapes
/// spell no Unicode text.
fn bad_json(e: &JsonError, what: &dyn std::fmt::Display) -> BadRecord {
    if e.value_end.is_some() {
        BadRecord::new(RecordFault::BadEscape, format!("undecodable JSON string in {what}: {e}"))
    } else {
        BadRecord::new(RecordFault::Malformed, format!("malformed JSON in {what}: {e}"))
    }
}

fn push_bad_root(tape: &mut Tape) {
    tape.roots.push(tape.nodes.len() as u32);
    tape.nodes.push(Node::Null);
}

/// How far the values of one line are read: where the next one starts and
/// how many came before it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineProgress {
    pub pos: usize,
    pub records: usize,
}

/// Decodes `raw` (one line of JSON Lines) as records: usually one object,
/// but a line may hold several values back to back, and each is its own
/// record, as DuckDB's `read_json` reads them. At most `max` records are
/// added, from `progress` on, so a batch never holds more than it may; the
/// rest of the line is for the next call. A line that is not UTF-8 is one
/// bad record. Returns the records added and whether the line is done.
pub fn decode_line_records(
    raw: &[u8],
    batch: &mut Batch,
    (line, byte): (u64, u64),
    what: &str,
    progress: &mut LineProgress,
    max: usize,
) -> (usize, bool) {
    let text = match super::utf8::validate(raw) {
        Ok(t) => t,
        // The whole line is one bad record: its structure cannot be trusted.
        Err(at) => {
            push_bad_root(&mut batch.tape);
            let cause = format!("invalid UTF-8 at byte {at} of {what} (undecodable bytes for the input encoding)");
            batch.meta.push(RecordMeta { line, byte, error: Some(BadRecord::new(RecordFault::BadEncoding, cause)) });
            return (1, true);
        }
    };
    let mut pos = skip_json_ws(text.as_bytes(), progress.pos);
    if batch.defer_lines && progress.records == 0 && pos < text.len() && max > 0 {
        // One record per line (the probe's tally): the line is the record.
        let range = batch.tape.push_text(&text[pos..]);
        batch.deferred.resize(batch.meta.len(), (0, 0));
        batch.deferred.push(range);
        batch.tape.roots.push(super::DEFERRED);
        batch.meta.push(RecordMeta { line, byte: byte + pos as u64, error: None });
        progress.pos = text.len();
        return (1, true);
    }
    let mut added = 0;
    let one_per_line = batch.skip.as_ref().is_some_and(|s| s.one_record_per_line);
    while pos < text.len() && added < max {
        // The name is only formatted into an error message: no allocation
        // per record.
        let at = (line, byte + pos as u64);
        if let Some(end) = batch.known_shapes.as_mut().and_then(|k| k.known(&text.as_bytes()[pos..])) {
            // The probe needs nothing of a record whose shape it absorbed.
            batch.tape.roots.push(super::KNOWN_SHAPE);
            batch.meta.push(RecordMeta { line, byte: at.1, error: None });
            batch.multi_record_lines |= progress.records > 0;
            progress.records += 1;
            added += 1;
            pos = skip_json_ws(text.as_bytes(), pos + end);
            continue;
        }
        let (used, _) = if progress.records == 0 {
            decode_value_record(&text[pos..], batch, at, &what, one_per_line)
        } else {
            batch.multi_record_lines = true;
            let nth = progress.records + 1;
            decode_value_record(&text[pos..], batch, at, &format_args!("value {nth} of {what}"), false)
        };
        progress.records += 1;
        added += 1;
        pos = skip_json_ws(text.as_bytes(), pos + used);
    }
    progress.pos = pos;
    (added, pos >= text.len())
}

/// The first position at or after `pos` that is not JSON whitespace: the
/// one whitespace skip of the parser, the shape scanner and the readers.
#[inline(always)]
pub fn skip_json_ws(bytes: &[u8], mut pos: usize) -> usize {
    // Most JSON has no whitespace between tokens: one compare finds that
    // (no whitespace byte is above the space).
    if bytes.get(pos).is_some_and(|&b| b > b' ') {
        return pos;
    }
    while bytes.get(pos).is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// The JSON kind of a node, for messages.
pub fn node_kind(n: Node) -> &'static str {
    match n {
        Node::Null => "null",
        Node::Bool(_) => "boolean",
        Node::Int(_) | Node::Float(_) => "number",
        Node::Str { .. } | Node::Key { .. } => "string",
        Node::Timestamp { .. } => "timestamp",
        Node::Date(_) => "date",
        Node::Time(_) => "time",
        Node::List { .. } => "array",
        Node::Object { .. } => "object",
        Node::Map { .. } => "map",
        Node::Declared { kind, .. } => kind.registry_name(),
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, whole: bool, skip: Option<&'a SkipKeys>, text_ends_record: bool) -> Self {
        let stop_at = skip.map_or(usize::MAX, |s| s.stop_after(text_ends_record));
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            whole,
            skip,
            skipping: None,
            skipped_whole: None,
            found: 0,
            stop_at,
            lone_surrogate: None,
        }
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, JsonError> {
        Err(JsonError { offset: self.pos, message: message.into(), value_end: None })
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        self.pos = skip_json_ws(self.bytes, self.pos);
    }

    /// `MAY_SKIP`: a skip set was given; without one, none of the skipping
    /// checks is compiled in (the probe's and a full scan's parse).
    fn parse<const MAY_SKIP: bool>(&mut self, tape: &mut Tape) -> Result<(), JsonError> {
        // The stack of open containers outlives the record, so that parsing
        // a record allocates nothing once a thread has parsed one as deep.
        thread_local! {
            static STACK: std::cell::Cell<Vec<Open>> = const { std::cell::Cell::new(Vec::new()) };
        }
        let mut stack = STACK.take();
        stack.clear();
        let result = self.parse_with::<MAY_SKIP>(tape, &mut stack);
        STACK.set(stack);
        match (result, self.lone_surrogate) {
            // A string holding a lone surrogate has no Unicode text: the
            // record is bad, of its encoding (never a silent U+FFFD), as
            // `read_json` refuses it. Its value was read whole, so the
            // reader goes on after it as after any bad value.
            (Ok(()), Some(at)) => Err(JsonError {
                offset: at,
                message: format!(
                    "invalid \\u escape: lone surrogate {} (invalid UTF-16)",
                    text_at(self.text, at, at + 6)
                ),
                value_end: Some(self.pos),
            }),
            (result, _) => result,
        }
    }

    fn parse_with<const MAY_SKIP: bool>(&mut self, tape: &mut Tape, stack: &mut Vec<Open>) -> Result<(), JsonError> {
        loop {
            // 1. Parse one value: a scalar, or the opening of a container.
            // `scalar`: it was a non-null scalar (evidence for its parent).
            let mut scalar = false;
            // The entry was read and left out whole (a trusted skip).
            let mut dropped = false;
            if let Some(skipped) = self.skipped_whole.take().filter(|_| MAY_SKIP) {
                // A trusted skip read the whole value (see `SkipKeys`).
                scalar = skipped.evidence;
                dropped = skipped.dropped;
            } else {
                self.skip_ws();
                let Some(&b) = self.bytes.get(self.pos) else {
                    return self.err(if stack.is_empty() { "empty input" } else { "unexpected end of input" });
                };
                match b {
                    b'{' | b'[' => {
                        if stack.len() >= MAX_NESTING {
                            return self.err(format!("nesting deeper than {MAX_NESTING} levels"));
                        }
                        self.pos += 1;
                        let is_object = b == b'{';
                        // A skipped container has no node (SKIPPED_NODE).
                        let node = if MAY_SKIP && self.skipping.is_some() { SKIPPED_NODE } else { tape.nodes.len() };
                        if node != SKIPPED_NODE {
                            tape.nodes.push(Node::Null); // patched when the container closes
                        }
                        self.skip_ws();
                        let close = if is_object { b'}' } else { b']' };
                        if self.bytes.get(self.pos) == Some(&close) {
                            self.pos += 1;
                            close_container(tape, Open { node, count: 0, is_object, evidence: false });
                        } else {
                            stack.push(Open { node, count: 0, is_object, evidence: false });
                            if is_object {
                                self.parse_key::<MAY_SKIP>(tape, stack.len())?;
                            }
                            continue;
                        }
                    }
                    b'"' => {
                        self.pos += 1;
                        if MAY_SKIP && self.skipping.is_some() {
                            self.parse_string(tape, false)?;
                        } else {
                            let (start, len) = self.parse_string(tape, true)?;
                            tape.nodes.push(Node::Str { start, len });
                        }
                        scalar = true;
                    }
                    b't' => scalar = self.literal::<MAY_SKIP>(b"true", Node::Bool(true), tape)?,
                    b'f' => scalar = self.literal::<MAY_SKIP>(b"false", Node::Bool(false), tape)?,
                    b'n' if self.bytes[self.pos..].starts_with(b"null") => {
                        self.literal::<MAY_SKIP>(b"null", Node::Null, tape)?;
                    }
                    b'-' | b'0'..=b'9' if !self.at_non_finite() => {
                        let n = self.parse_number(!MAY_SKIP || self.skipping.is_none())?;
                        if !MAY_SKIP || self.skipping.is_none() {
                            tape.nodes.push(n);
                        }
                        scalar = true;
                    }
                    b'-' | b'+' | b'n' | b'N' | b'i' | b'I' => {
                        let f = self.parse_non_finite()?;
                        if !MAY_SKIP || self.skipping.is_none() {
                            tape.nodes.push(Node::Float(f));
                        }
                        scalar = true;
                    }
                    _ => return self.err(format!("unexpected character {}", describe_byte(self.bytes, self.pos))),
                }
            }
            // 2. A value is complete: move to the next entry or close containers.
            if let Some(top) = stack.last_mut() {
                top.evidence |= scalar;
            }
            loop {
                if MAY_SKIP && self.skipping.is_some_and(|depth| depth == stack.len()) {
                    // The skipped value is read: it stands as a null.
                    tape.nodes.push(Node::Null);
                    self.skipping = None;
                }
                let at_record = stack.len() == 1;
                let Some(top) = stack.last_mut() else {
                    if !self.whole {
                        return Ok(());
                    }
                    self.skip_ws();
                    if self.pos != self.bytes.len() {
                        return self.err("unexpected characters after the JSON value");
                    }
                    return Ok(());
                };
                top.count += u32::from(!dropped);
                dropped = false;
                if MAY_SKIP && at_record && self.found == self.stop_at {
                    // Every wanted key of the record is read; the rest of
                    // the text is the record's and needed by no column
                    // (see `SkipKeys`).
                    self.pos = self.bytes.len();
                    if let Some(record) = stack.pop() {
                        close_container(tape, record);
                    }
                    continue;
                }
                self.skip_ws();
                match self.bytes.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        if top.is_object {
                            // parse_key skips the whitespace before the key.
                            let depth = stack.len();
                            self.parse_key::<MAY_SKIP>(tape, depth)?;
                        }
                        break;
                    }
                    // The bracket that closes what is open.
                    Some(b'}') if top.is_object => close(&mut self.pos, stack, tape),
                    Some(b']') if !top.is_object => close(&mut self.pos, stack, tape),
                    Some(_) => {
                        let what = if top.is_object {
                            "expected ',' or '}' in object"
                        } else {
                            "expected ',' or ']' in array"
                        };
                        return self.err(what);
                    }
                    None => return self.err("unexpected end of input"),
                }
            }
        }
    }

    /// Parses `"key"` and the following `:` of an entry of the object at
    /// `depth` (the record's own object: 1).
    // Inlined at its two call sites, as `parse_string` is: a call per key
    // with its Result returned through memory cost about a tenth of the
    // scan's parse (callgrind).
    #[inline(always)]
    fn parse_key<const MAY_SKIP: bool>(&mut self, tape: &mut Tape, depth: usize) -> Result<(), JsonError> {
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b'"') {
            return self.err("expected a string key in object");
        }
        self.pos += 1;
        if MAY_SKIP && depth == 1 && self.drop_trusted_entry() {
            return Ok(());
        }
        if MAY_SKIP && self.skipping.is_some() {
            self.parse_string(tape, false)?;
        } else {
            let (start, len) = self.parse_string(tape, true)?;
            tape.nodes.push(Node::Key { start, len });
            if MAY_SKIP && depth == 1 {
                if let Some(skip) = self.skip {
                    let key = tape.text_of(start, len);
                    if skip.is_skipped(key) {
                        self.skipping = Some(depth);
                    } else if self.stop_at != usize::MAX && skip.wanted.contains(key) {
                        self.found += 1;
                    }
                }
            }
        }
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            return self.err("expected ':' after object key");
        }
        self.pos += 1;
        if MAY_SKIP && self.skipping.is_some() && self.skip.is_some_and(|s| s.trusted) {
            // The probe parsed this very text without a fault: find the
            // value's end without checking it again.
            let (end, evidence) = skip_trusted_value(self.bytes, self.pos);
            self.pos = end;
            self.skipping = None;
            self.skipped_whole = Some(Skipped { evidence, dropped: false });
            tape.nodes.push(Node::Null);
        }
        Ok(())
    }

    /// A trusted skip of a whole entry of the record (after its key's
    /// opening quote): a key without escapes that is skipped, its ':' and
    /// its value are read past, and nothing of the entry is kept, not even
    /// its key (a trusted input repeats no key at the top: the probe found
    /// none). False, with nothing read, for any other key.
    fn drop_trusted_entry(&mut self) -> bool {
        let Some(skip) = self.skip.filter(|s| s.trusted) else { return false };
        let rest = &self.bytes[self.pos..];
        let Some(stop) = quote_or_backslash(rest) else { return false };
        if rest[stop] != b'"' || !skip.is_skipped(text_at(self.text, self.pos, self.pos + stop)) {
            return false;
        }
        let colon = skip_json_ws(self.bytes, self.pos + stop + 1);
        if self.bytes.get(colon) != Some(&b':') {
            return false;
        }
        let (end, evidence) = skip_trusted_value(self.bytes, colon + 1);
        self.pos = end;
        self.skipped_whole = Some(Skipped { evidence, dropped: true });
        true
    }

    /// Reads `word`; returns whether it was a non-null scalar.
    fn literal<const MAY_SKIP: bool>(&mut self, word: &[u8], node: Node, tape: &mut Tape) -> Result<bool, JsonError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            if !MAY_SKIP || self.skipping.is_none() {
                tape.nodes.push(node);
            }
            Ok(node != Node::Null)
        } else {
            self.err(format!("invalid literal {}", describe_byte(self.bytes, self.pos)))
        }
    }

    /// Parses a string body (after the opening quote) into the tape's text
    /// (with `keep` false: only checks it).
    // Inlined, as `parse_number` is: returned through memory, the Result was
    // read back right after the call, a stall on data just written
    // (seen with perf).
    #[inline(always)]
    fn parse_string(&mut self, tape: &mut Tape, keep: bool) -> Result<(u32, u32), JsonError> {
        let start = tape.text.len();
        loop {
            let rest = &self.bytes[self.pos..];
            let Some(stop) = quote_or_backslash(rest) else {
                return self.err("unterminated string");
            };
            // '"' and '\\' are ASCII, so both ends are char boundaries.
            if keep {
                tape.text.push_str(text_at(self.text, self.pos, self.pos + stop));
            }
            self.pos += stop;
            if rest[stop] == b'"' {
                self.pos += 1;
                break;
            }
            self.pos += 1; // the backslash
            let Some(&esc) = self.bytes.get(self.pos) else {
                return self.err("unterminated escape sequence");
            };
            self.pos += 1;
            let c = match esc {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => self.parse_unicode_escape()?,
                _ => {
                    self.pos -= 1;
                    return self.err(format!("invalid escape sequence {}", describe_byte(self.bytes, self.pos)));
                }
            };
            if keep {
                tape.text.push(c);
            }
        }
        let len = tape.text.len() - start;
        Ok((start as u32, len as u32))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let Some(digits) = self.bytes.get(self.pos..self.pos + 4) else {
            return self.err("truncated \\u escape");
        };
        let mut v = 0u32;
        for &d in digits {
            let x = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return self.err("invalid \\u escape"),
            };
            v = v * 16 + x as u32;
        }
        self.pos += 4;
        Ok(v)
    }

    /// Decodes `\uXXXX` (after its `\u`), joining surrogate pairs. A lone
    /// surrogate (a high one not followed by a low one, or a low one
    /// alone) is noted, and the record refused once its value is read
    /// (see `parse`); the U+FFFD written meanwhile is never seen.
    fn parse_unicode_escape(&mut self) -> Result<char, JsonError> {
        let start = self.pos.saturating_sub(2);
        let hi = self.hex4()?;
        if (0xD800..0xDC00).contains(&hi) && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u") {
            let save = self.pos;
            self.pos += 2;
            let lo = self.hex4()?;
            if (0xDC00..0xE000).contains(&lo) {
                let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or('\u{FFFD}'));
            }
            // Not a pair: the next escape is read on its own.
            self.pos = save;
        }
        match char::from_u32(hi) {
            Some(c) => Ok(c),
            None => {
                self.lone_surrogate.get_or_insert(start);
                Ok('\u{FFFD}')
            }
        }
    }

    /// True at `-Infinity` or `-NaN` (a sign followed by a letter).
    fn at_non_finite(&self) -> bool {
        self.bytes.get(self.pos) == Some(&b'-')
            && self.bytes.get(self.pos + 1).is_some_and(|b| matches!(b, b'i' | b'I' | b'n' | b'N'))
    }

    /// `NaN`, `Infinity` and `-Infinity`, which Python's `json.dumps` writes
    /// by default and DuckDB's `read_json` accepts: an optional sign, then
    /// `nan`, `inf` or `infinity` in any case (the forms yyjson reads).
    fn parse_non_finite(&mut self) -> Result<f64, JsonError> {
        let start = self.pos;
        let mut i = self.pos;
        let negative = match self.bytes.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let rest = &self.bytes[i..];
        let starts = |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
        let (len, value) = if starts(b"infinity") {
            (8, f64::INFINITY)
        } else if starts(b"inf") {
            (3, f64::INFINITY)
        } else if starts(b"nan") {
            (3, f64::NAN)
        } else {
            self.pos = start;
            return self.err(format!("invalid literal {}", describe_byte(self.bytes, start)));
        };
        // `Infinityx` or `NaN1` is no literal.
        if rest.get(len).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            self.pos = start;
            return self.err(format!("invalid literal {}", describe_byte(self.bytes, start)));
        }
        self.pos = i + len;
        Ok(if negative { -value } else { value })
    }

    /// Integers that fit i64 become `Int`; anything else numeric becomes
    /// `Float` (an integer beyond i64 loses precision, as in DuckDB's reader).
    /// Parses a number; with `convert` false only checks its syntax (a
    /// skipped value: every number the grammar allows converts).
    #[inline(always)]
    fn parse_number(&mut self, convert: bool) -> Result<Node, JsonError> {
        let start = self.pos;
        let b = self.bytes;
        let mut i = self.pos;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        // The digits as one integer (wrapping past 19 digits, when it is
        // not used), so that most numbers are not read a second time.
        let mut mantissa = 0u64;
        while let Some(&c @ b'0'..=b'9') = b.get(i) {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            i += 1;
        }
        let int_digits = i - int_start;
        if int_digits == 0 {
            return self.err("invalid number");
        }
        if b[int_start] == b'0' && int_digits > 1 {
            return self.err("invalid number: leading zero");
        }
        let mut is_float = false;
        let mut frac_digits = 0;
        if b.get(i) == Some(&b'.') {
            is_float = true;
            i += 1;
            while let Some(&c @ b'0'..=b'9') = b.get(i) {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                i += 1;
                frac_digits += 1;
            }
            // A fraction needs at least one digit.
            if frac_digits == 0 {
                self.pos = i;
                return self.err("invalid number: no digits after '.'");
            }
        }
        let mut exponent = false;
        // An exponent needs at least one digit.
        let digits_from = |i: usize| i + b[i.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
        if matches!(b.get(i), Some(b'e' | b'E')) {
            is_float = true;
            exponent = true;
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let end = digits_from(i);
            if end == i {
                self.pos = end;
                return self.err("invalid number: no digits in exponent");
            }
            i = end;
        }
        self.pos = i;
        if !convert {
            return Ok(Node::Null);
        }
        let negative = b[start] == b'-';
        if !is_float && int_digits <= 18 {
            // At most 18 digits always fit an i64.
            let n = mantissa as i64;
            return Ok(Node::Int(if negative { -n } else { n }));
        }
        if !exponent {
            if let Some(f) = crate::scalar::exact_decimal(mantissa, int_digits + frac_digits, frac_digits, negative) {
                return Ok(Node::Float(f));
            }
        }
        let text = text_at(self.text, start, i);
        if !is_float {
            if let Ok(n) = text.parse::<i64>() {
                return Ok(Node::Int(n));
            }
        }
        match text.parse::<f64>() {
            Ok(f) => Ok(Node::Float(f)),
            Err(_) => {
                self.pos = start;
                self.err("invalid number")
            }
        }
    }
}

/// Consumes a closing bracket: the innermost container ends, and its
/// evidence counts for its parent.
fn close(pos: &mut usize, stack: &mut Vec<Open>, tape: &mut Tape) {
    *pos += 1;
    if let Some(open) = stack.pop() {
        close_container(tape, open);
        if let Some(parent) = stack.last_mut() {
            parent.evidence |= open.evidence;
        }
    }
}

/// The end of the JSON value that starts at or after `pos` (after
/// whitespace), and whether a non-null scalar lies in it: for text known to
/// be valid JSON only (a trusted skip), so nothing is checked; on any text
/// it stops at its end and never panics.
pub(super) fn skip_trusted_value(b: &[u8], mut pos: usize) -> (usize, bool) {
    let mut depth = 0usize;
    let mut evidence = false;
    while let Some(&c) = b.get(pos) {
        match c {
            b'"' => {
                pos = skip_string_body(b, pos + 1);
                if depth == 0 {
                    return (pos, true);
                }
                // A key (a ':' follows) is no evidence; a string value is.
                let next = b[pos.min(b.len())..].iter().find(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
                evidence |= next != Some(&b':');
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                if depth <= 1 {
                    return (pos + usize::from(depth == 1), evidence);
                }
                depth -= 1;
            }
            b',' if depth == 0 => return (pos, evidence),
            b' ' | b'\t' | b'\n' | b'\r' | b',' | b':' => {}
            b'n' if b[pos..].starts_with(b"null") => {
                pos += 4;
                if depth == 0 {
                    return (pos, evidence);
                }
                continue;
            }
            _ => {
                // A number, true, false, NaN or an infinity.
                evidence = true;
                while b.get(pos).is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                    pos += 1;
                }
                if depth == 0 {
                    return (pos, evidence);
                }
                continue;
            }
        }
        pos += 1;
    }
    (pos, evidence)
}

/// The position after the closing quote of the string body at `pos`.
fn skip_string_body(b: &[u8], mut pos: usize) -> usize {
    while let Some(stop) = quote_or_backslash(&b[pos.min(b.len())..]) {
        if b[pos + stop] == b'"' {
            return pos + stop + 1;
        }
        pos += stop + 2;
    }
    b.len()
}

/// The first `"` or `\\` of `rest` (formats/byte_search.rs).
#[inline(always)]
pub(super) fn quote_or_backslash(rest: &[u8]) -> Option<usize> {
    super::byte_search::first_of_two(b'"', b'\\', rest)
}

/// The node of a container inside a skipped value: it has none.
const SKIPPED_NODE: usize = usize::MAX;

fn close_container(tape: &mut Tape, open: Open) {
    if open.node == SKIPPED_NODE {
        return;
    }
    let end = tape.nodes.len() as u32;
    let (len, evidence) = (open.count, open.evidence);
    tape.nodes[open.node] =
        if open.is_object { Node::Object { len, end, evidence } } else { Node::List { len, end, evidence } };
}

/// `text[start..end]`, cut at ASCII bytes (so at char boundaries); a
/// replacement character should a cut ever fall inside a character.
fn text_at(text: &str, start: usize, end: usize) -> &str {
    text.get(start..end).unwrap_or("\u{FFFD}")
}

fn describe_byte(bytes: &[u8], pos: usize) -> String {
    match bytes.get(pos) {
        Some(b) if b.is_ascii_graphic() => format!("'{}'", *b as char),
        Some(b) => format!("byte 0x{b:02x}"),
        None => "end of input".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::write_compact_json;

    fn roundtrip(text: &str) -> String {
        let mut tape = Tape::default();
        let root = parse_value(text, &mut tape).expect("valid json");
        let mut out = String::new();
        write_compact_json(crate::value::ValueRef { tape: &tape, idx: root as usize }, &mut out);
        out
    }

    #[test]
    fn parses_and_writes_back_nested_values() {
        assert_eq!(
            roundtrip(r#" {"a": [1, 2.5, "x", true, null, {}, []], "b": {"c": -3}} "#),
            r#"{"a":[1,2.5,"x",true,null,{},[]],"b":{"c":-3}}"#
        );
        assert_eq!(roundtrip("[]"), "[]");
        assert_eq!(roundtrip("[[[]],[{}]]"), "[[[]],[{}]]");
        assert_eq!(roundtrip(r#""a\"b\\c\u00e9\ud83d\ude00""#), "\"a\\\"b\\\\cé😀\"");
    }

    /// What a JSON number's text is, by Rust's own parsers: an integer
    /// that fits an i64, else the nearest double.
    fn number_by_std(text: &str) -> Node {
        let integral = !text.contains(['.', 'e', 'E']);
        match text.parse::<i64>() {
            Ok(n) if integral => Node::Int(n),
            _ => Node::Float(text.parse::<f64>().expect("a JSON number")),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: crate::test_support::cases(4096), .. proptest::prelude::ProptestConfig::default()
        })]

        /// Numbers read while they are scanned (integers of up to 18
        /// digits, decimals by Clinger's fast path) are what Rust's parsers
        /// make of the text, to the bit: the sign of zero, the last digit
        /// of 19 and 20 digits, fractions longer than 22 digits, exponents.
        #[test]
        fn numbers_are_what_rusts_parsers_read(
            negative in proptest::bool::ANY,
            int in "0|[1-9][0-9]{0,21}",
            frac in proptest::option::of("[0-9]{1,25}"),
            exp in proptest::option::of("[eE][+-]?[0-9]{1,3}"),
        ) {
            let text = format!(
                "{}{int}{}{}",
                if negative { "-" } else { "" },
                frac.map(|f| format!(".{f}")).unwrap_or_default(),
                exp.unwrap_or_default()
            );
            let mut tape = Tape::default();
            parse_value(&text, &mut tape).unwrap();
            let (ours, theirs) = (tape.nodes[0], number_by_std(&text));
            match (ours, theirs) {
                (Node::Float(a), Node::Float(b)) => proptest::prop_assert_eq!(a.to_bits(), b.to_bits(), "{}", text),
                (a, b) => proptest::prop_assert_eq!(a, b, "{}", text),
            }
        }
    }

    #[test]
    fn big_integers_become_floats() {
        let mut tape = Tape::default();
        parse_value("18446744073709551616", &mut tape).unwrap();
        assert_eq!(tape.nodes[0], Node::Float(18446744073709551616.0));
        tape.clear();
        parse_value("-9223372036854775808", &mut tape).unwrap();
        assert_eq!(tape.nodes[0], Node::Int(i64::MIN));
    }

    #[test]
    fn nan_and_infinities_are_doubles_as_python_writes_them() {
        assert_eq!(
            roundtrip(r#"{"id": 2, "x": NaN, "y": Infinity, "z": -Infinity, "w": [nan, +inf, -INF]}"#),
            r#"{"id":2,"x":NaN,"y":Infinity,"z":-Infinity,"w":[NaN,Infinity,-Infinity]}"#
        );
        let mut tape = Tape::default();
        parse_value("-Infinity", &mut tape).unwrap();
        assert_eq!(tape.nodes[0], Node::Float(f64::NEG_INFINITY));
        for bad in ["Nan1", "Infinit", "-I", "nul", "NaNa", "+1"] {
            assert!(parse_value(bad, &mut tape).is_err(), "{bad:?} must fail");
        }
    }

    #[test]
    fn errors_point_at_the_byte_and_leave_the_tape_clean() {
        let mut tape = Tape::default();
        parse_value("{\"a\":1}", &mut tape).unwrap();
        let before = tape.nodes.len();
        for bad in ["{\"a\":", "{\"a\" 1}", "[1,]", "{\"a\":1}}", "tru", "01", "\"abc", "", "   "] {
            assert!(parse_value(bad, &mut tape).is_err(), "{bad:?} must fail");
            assert_eq!(tape.nodes.len(), before);
        }
        let e = parse_value("[1, @]", &mut tape).unwrap_err();
        assert_eq!(e.offset, 4);
    }

    #[test]
    fn a_lone_surrogate_refuses_the_value_after_reading_it_whole() {
        let mut tape = Tape::default();
        for (text, at, unit) in [
            (r#"{"s": "\ud800"}"#, 7, r"\ud800"),
            (r#"{"s": "a\uDBFFb"}"#, 8, r"\uDBFF"),
            (r#"{"s": "\udc00x"}"#, 7, r"\udc00"),
            // A high surrogate followed by an escape that is no low one.
            (r#"{"s": "\ud800\u0041"}"#, 7, r"\ud800"),
            (r#"{"s": "\ud800\ud800\udc00"}"#, 7, r"\ud800"),
            // In a key, and the first of two.
            (r#"{"\udfff": 1, "t": "\ud801"}"#, 2, r"\udfff"),
        ] {
            let e = parse_value(text, &mut tape).unwrap_err();
            assert_eq!(e.message, format!("invalid \\u escape: lone surrogate {unit} (invalid UTF-16)"), "{text}");
            assert_eq!((e.offset, e.value_end), (at, Some(text.len())), "{text}");
            assert!(tape.nodes.is_empty() && tape.text.is_empty(), "{text}");
        }
        // Pairs are joined; a prefix parse says where the bad value ends.
        assert_eq!(roundtrip(r#"["\ud800\udc00", "\udbff\udfff"]"#), "[\"\u{10000}\",\"\u{10ffff}\"]");
        let e = parse_value_prefix(r#"{"s": "\ud800"} {"s": 1}"#, &mut tape).unwrap_err();
        assert_eq!(e.value_end, Some(15));
        // A value skipped by projection is read by the same code.
        let skip = SkipKeys::new(vec!["s".into()], vec!["t".into()]);
        let text = r#"{"s": ["\ud800"], "t": 1}"#;
        let e = parse_value_skipping(text, &mut tape, Some(&skip)).unwrap_err();
        assert_eq!((e.offset, e.value_end), (8, Some(text.len())));
    }

    #[test]
    fn a_record_with_a_lone_surrogate_is_a_bad_record_of_its_encoding_and_the_line_reads_on() {
        let mut batch = Batch::default();
        let line = r#"{"s": "\ud800"} {"s": "ok"}"#;
        let (n, done) =
            decode_line_records(line.as_bytes(), &mut batch, (1, 0), "the line", &mut LineProgress::default(), 10);
        assert_eq!((n, done), (2, true));
        let bad = batch.meta[0].error.clone().unwrap();
        assert_eq!(
            bad.cause,
            r"undecodable JSON string in the line: invalid \u escape: lone surrogate \ud800 (invalid UTF-16) at byte 7 of the record"
        );
        assert_eq!((bad.fault, bad.fault.kind()), (RecordFault::BadEscape, "bad_encoding"));
        assert!(batch.meta[1].error.is_none());
        let mut json = String::new();
        write_compact_json(batch.tape.record(1), &mut json);
        assert_eq!(json, r#"{"s":"ok"}"#);
        // A JSON array's element too.
        let mut batch = Batch::default();
        decode_whole_record(br#"{"s": "\udc00"}"#, &mut batch, 1, 0, &"element 1");
        assert!(batch.meta[0].error.as_ref().unwrap().cause.starts_with("undecodable JSON string in element 1: "));
    }

    #[test]
    fn deep_nesting_does_not_overflow_the_stack() {
        let depth = 50_000;
        let text = "[".repeat(depth) + &"]".repeat(depth);
        let mut tape = Tape::default();
        parse_value(&text, &mut tape).unwrap();
        assert_eq!(tape.nodes.len(), depth);
        let mut out = String::new();
        write_compact_json(crate::value::ValueRef { tape: &tape, idx: 0 }, &mut out);
        assert_eq!(out, text);
        let too_deep = "[".repeat(MAX_NESTING + 1);
        assert!(parse_value(&too_deep, &mut tape).unwrap_err().message.contains("nesting"));
    }
}
