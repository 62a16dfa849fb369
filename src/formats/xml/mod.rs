//! XML: a streaming decoder built on `quick-xml`, read in chunks of
//! `read_chunk_bytes`. The input is UTF-8 with any byte-order mark already
//! dropped by the text decoder upstream (source/decode.rs), which also
//! transcodes other encodings; byte offsets count from there.
//!
//! # Records
//!
//! - `row_tag = Some(t)`: every element named `t` (as written, prefix
//!   included) that is a **direct child of the root element** is one record.
//!   Rows are streamed: only the row being read is held in memory. Other
//!   children of the root, text directly inside the root, the root's own
//!   attributes and `t` elements nested deeper are not rows and are skipped.
//!   A root without row children gives zero records.
//! - `row_tag = None`: the whole document is one record, the root element's
//!   content (its attributes and children, not wrapped in the root's name).
//!
//! A record is always an object: an empty row element (`<row/>`) is `{}`, and
//! a row holding only text is `{scalar_object_key: text}`.
//! [`RecordMeta::line`] / [`RecordMeta::byte`] give the 1-based line and the
//! byte offset of the record element's `<` (the root's in no-row-tag mode).
//!
//! # Values
//!
//! - Attributes are keys prefixed with `@` (`<a id="1">` → `{"@id": "1"}`),
//!   their values normalized as XML requires (tabs and line breaks become
//!   spaces); `xmlns` and `xmlns:*` declarations are skipped.
//! - Child elements are keys named by their tag as written (`ns:tag` keeps its
//!   prefix). Repeated children with the same name become one array, keys in
//!   first-appearance order: attributes first, then children, then the text.
//! - An element with neither attributes nor children is its text, a string,
//!   or NULL when it has no text (`<a/>`, `<a></a>`, `<a>  </a>`).
//! - An element with attributes and/or children and some text puts the text
//!   under `scalar_object_key`. Text is read in segments (the runs between
//!   child tags); each segment is trimmed of surrounding XML whitespace and the
//!   non-empty ones are joined with one space. Whitespace-only text between
//!   elements is formatting and disappears. If a child or attribute happens to
//!   share `scalar_object_key`'s name, the text joins it as one more array
//!   element rather than producing a duplicate key.
//! - CDATA sections and character references are text kept verbatim: they are
//!   never trimmed (`<![CDATA[ a ]]>` is `" a "`). The five predefined
//!   entities and numeric references (`&#233;`, `&#xE9;`) are decoded.
//!   Comments, processing instructions and the XML declaration are ignored.
//! - Every value is a string (or NULL); typing is the engine's job.
//!
//! # Security
//!
//! DTD-defined and external entities are never expanded, and nothing outside
//! the input stream is ever read. A `<!DOCTYPE>` (with or without an internal
//! subset) is allowed and ignored, but a reference to any entity other than
//! the five predefined ones makes the record bad: `undefined entity &name;
//! (DTD and external entities are never expanded)`. A billion-laughs document
//! therefore costs one bad record and the size of its DTD, nothing more.
//!
//! # Bad records
//!
//! Two kinds of problems, handled differently:
//! - **Record-local problems** leave the XML structure intact: invalid UTF-8
//!   in a name, text or attribute value, an undefined entity, an invalid
//!   character reference, an unescaped `&`, a malformed attribute, or nesting
//!   deeper than [`MAX_NESTING`] levels. The row becomes a bad record and
//!   reading goes on with the next row.
//! - **Syntax errors** (mismatched or unclosed tags, a truncated file, text or
//!   a second element outside the root, ...): XML cannot be resynchronized
//!   after one, so the record being read becomes a bad record naming the
//!   problem and its position, and the reader then ends the file (every later
//!   call returns 0). When no record is being read (the error lies between
//!   rows or outside the root), a bad record located at the error is emitted
//!   instead, so the problem always reaches `on_error`.
//!
//! Empty and whitespace-only files give zero records; markup without a
//! root element (a declaration or comments alone) is one bad record.
//! Nothing here recurses per nesting level: the row tree is built and
//! written with explicit stacks.

use std::io::{BufReader, Read};

use quick_xml::events::{BytesRef, BytesStart, Event};

mod dtd;
mod names;
mod source;
mod tree;

use dtd::check_doctype;
use names::{check_xml_decl, is_name};
use source::Source;
use tree::Builder;

use super::{BadRecord, Batch, RecordFault, RecordMeta};
use crate::error::{Result, SanitizeError};

/// Elements nested deeper than this inside one record make it bad.
pub const MAX_NESTING: usize = 10_000;

/// How XML maps to records; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XmlOptions {
    /// Name (as written, prefix included) of the root's children that are rows;
    /// `None`: the whole document is one record.
    pub row_tag: Option<String>,
    /// Key of an element's text when it also has attributes or children.
    pub scalar_object_key: String,
    /// `max_record_bytes`: a longer row element (the whole document without
    /// a row tag) is a bad record, and, as after a syntax error, the file
    /// ends there: its bytes are never held.
    pub max_record_bytes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No root element yet.
    BeforeRoot,
    /// Inside the root element.
    InRoot,
    /// The root element is closed: only comments, PIs and whitespace may follow.
    AfterRoot,
    /// End of file, or a syntax error ended it.
    Done,
}

/// The record being read.
struct Current {
    line: u64,
    byte: u64,
    /// Document depth of the record element (1 = the root).
    depth: usize,
    /// Set by the first record-local problem; the rest of the row is skipped.
    error: Option<String>,
}

pub struct XmlReader<R: Read> {
    xml: quick_xml::Reader<BufReader<Source<R>>>,
    file: String,
    /// The row tag as a path of element names below the root (`item`, or
    /// `channel/item`); `None`: the whole document is one record.
    row_path: Option<Vec<Vec<u8>>>,
    /// Leading components of `row_path` matched by the open elements below
    /// the root (the element at depth `d` matches component `d - 2`).
    matched: usize,
    /// Rows found so far, and whether the root has any child element: a
    /// row tag that matches nothing under a non-empty root is an error.
    rows_found: u64,
    root_has_children: bool,
    /// Events read so far (the XML declaration must be the first).
    events_seen: u64,
    /// A declaration, comment, instruction or DOCTYPE was read: the file is
    /// not empty, so it needs a root element.
    saw_markup: bool,
    /// A DOCTYPE was read (only one is allowed, before the root).
    saw_doctype: bool,
    /// Distinct element names at the first two levels below the root, for
    /// the message of a row tag that matches nothing.
    seen_names: [Vec<String>; 2],
    scalar_object_key: String,
    /// Event buffer of quick-xml, reused.
    buf: Vec<u8>,
    phase: Phase,
    /// Open elements in the document.
    depth: usize,
    root_tag: Option<String>,
    current: Option<Current>,
    /// Name of the record element being read, for messages.
    record_name: String,
    builder: Builder,
    max_record: usize,
}

impl<R: Read> XmlReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize, options: XmlOptions) -> Self {
        let mut source = Source::new(reader);
        // quick-xml's buffer reads up to a chunk ahead of where it parses.
        source.window = (options.max_record_bytes as u64).saturating_add(chunk_bytes.max(1) as u64);
        let mut xml = quick_xml::Reader::from_reader(BufReader::with_capacity(chunk_bytes.max(1), source));
        let config = xml.config_mut();
        // A bare `&` arrives as text starting with `&`; the row becomes bad
        // instead of the whole file ending.
        config.allow_dangling_amp = true;
        config.check_end_names = true;
        // `--` inside a comment is not well-formed (XML 1.0 production 15).
        config.check_comments = true;
        config.expand_empty_elements = false;
        config.trim_text(false);
        XmlReader {
            xml,
            file: file.to_string(),
            row_path: options.row_tag.map(|t| t.split('/').map(|c| c.as_bytes().to_vec()).collect()),
            matched: 0,
            rows_found: 0,
            root_has_children: false,
            seen_names: [Vec::new(), Vec::new()],
            events_seen: 0,
            saw_doctype: false,
            saw_markup: false,
            scalar_object_key: options.scalar_object_key,
            buf: Vec::new(),
            phase: Phase::BeforeRoot,
            depth: 0,
            root_tag: None,
            current: None,
            record_name: String::new(),
            builder: Builder::default(),
            max_record: options.max_record_bytes,
        }
    }

    fn source(&mut self) -> &mut Source<R> {
        self.xml.get_mut().get_mut()
    }

    /// Stream offset of quick-xml's position.
    fn pos(&self) -> u64 {
        self.xml.buffer_position()
    }

    fn line_at(&mut self, pos: u64) -> u64 {
        self.source().line_at(pos)
    }

    /// Reads one event; true when it completed a record.
    fn step(&mut self, batch: &mut Batch) -> Result<bool> {
        let before = self.pos();
        // Newlines before this event can no longer matter for a record start.
        self.line_at(before);
        // Bytes count toward max_record_bytes from the record's start, or
        // between records from this event's.
        let mark = self.current.as_ref().map_or(before, |c| c.byte);
        self.source().mark = mark;
        let mut buf = std::mem::take(&mut self.buf);
        let event = self.xml.read_event_into(&mut buf);
        // An event between rows read whole, but longer than the limit: as
        // when the limit is met while reading it.
        if self.current.is_none() && self.pos().saturating_sub(before) > self.max_record as u64 && event.is_ok() {
            buf.clear();
            self.buf = buf;
            return Ok(self.too_large(batch, before));
        }
        let is_doctype = matches!(event, Ok(Event::DocType(_)));
        let done = match self.handle(event, batch) {
            // `buf` holds the whole declaration, from `<!DOCTYPE` to `>`.
            Ok(false) if is_doctype => Ok(self.on_doctype(&buf, batch)),
            done => done,
        };
        buf.clear();
        self.buf = buf;
        done
    }

    fn handle(&mut self, event: quick_xml::Result<Event<'_>>, batch: &mut Batch) -> Result<bool> {
        // A character XML forbids, once parsing has reached it, is a syntax
        // error: the document is not well-formed.
        let illegal_at = self.xml.get_ref().get_ref().illegal.as_ref().map(|(at, _)| *at);
        if let Some(at) = illegal_at {
            if at < self.pos() || matches!(event, Ok(Event::Eof)) {
                let what = self.source().illegal.take().map(|(_, w)| w).unwrap_or_default();
                let line = self.line_at(at);
                let message = format!("malformed XML at line {line} (byte {at}): {what} is not allowed in XML");
                return Ok(self.fatal(batch, message, at));
            }
        }
        self.events_seen += 1;
        if matches!(&event, Ok(Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_))) {
            self.saw_markup = true;
        }
        let event = match event {
            Ok(event) => event,
            Err(quick_xml::Error::Io(e)) if source::is_too_large(&e) => {
                let at = self.source().mark;
                return Ok(self.too_large(batch, at));
            }
            Err(quick_xml::Error::Io(e)) => {
                return Err(SanitizeError::io(format!("reading file \"{}\" failed: {e}", self.file)));
            }
            Err(e) => {
                let at = self.xml.error_position();
                let line = self.line_at(at);
                return Ok(self.fatal(batch, format!("malformed XML at line {line} (byte {at}): {e}"), at));
            }
        };
        match event {
            Event::Start(e) => {
                let start = self.pos() - (e.len() as u64 + 2);
                Ok(self.on_start(&e, start, batch))
            }
            Event::Empty(e) => {
                let start = self.pos() - (e.len() as u64 + 3);
                if self.on_start(&e, start, batch) {
                    return Ok(true);
                }
                Ok(self.on_end(batch))
            }
            Event::End(_) => Ok(self.on_end(batch)),
            // Text and CDATA: part of the row being read, nothing between
            // rows, and outside the root only whitespace may stand.
            Event::Text(t) => {
                let outside = self.depth == 0 && !t.iter().all(|b| is_xml_space(*b));
                Ok(self.content(batch, |b| b.text(&t), outside, "text"))
            }
            Event::CData(c) => {
                let outside = self.depth == 0;
                Ok(self.content(batch, |b| b.cdata(&c), outside, "a CDATA section"))
            }
            Event::GeneralRef(r) => {
                if let Some(cur) = &mut self.current {
                    if cur.error.is_none() {
                        cur.error = self.builder.reference(&r).err();
                    }
                    Ok(false)
                } else if self.depth == 0 {
                    Ok(self.outside_root(batch, "an entity reference"))
                } else if self.row_path.is_some() && !is_predefined_or_char_ref(&r) {
                    // A DTD entity between rows may hold rows of its own (W3C
                    // xmltest valid/sa/024): never expanded, so say so with a
                    // bad record instead of reading past it in silence.
                    let at = self.pos();
                    let line = self.line_at(at);
                    let name = String::from_utf8_lossy(&r[..]).into_owned();
                    let tape = &mut batch.tape;
                    tape.push_root(tape.nodes.len());
                    tape.push_null();
                    let error = format!(
                        "{} between rows at line {line}: rows it may hold are not read",
                        undefined_entity(&name)
                    );
                    let error = Some(BadRecord::new(RecordFault::Malformed, error));
                    batch.meta.push(RecordMeta { line, byte: at, error });
                    Ok(true)
                } else {
                    Ok(false)
                }
            }
            Event::Eof => {
                // Markup without any element is not a document (XML 1.0 [1]):
                // a declaration or a comment alone must not read as an empty file.
                if self.phase == Phase::BeforeRoot && self.saw_markup {
                    let at = self.pos();
                    let line = self.line_at(at);
                    let message = format!("malformed XML at line {line} (byte {at}): the document has no root element");
                    return Ok(self.fatal(batch, message, at));
                }
                if let Some(path) = &self.row_path {
                    if self.depth == 0 && self.rows_found == 0 && self.root_has_children {
                        return Err(self.unmatched_row_tag(path));
                    }
                }
                if self.depth > 0 {
                    let name = match &self.current {
                        Some(_) => self.record_name.clone(),
                        None => self.root_tag.clone().unwrap_or_default(),
                    };
                    let at = self.pos();
                    let line = self.line_at(at);
                    let message =
                        format!("truncated XML: the file ends at line {line} (byte {at}) before <{name}> is closed");
                    return Ok(self.fatal(batch, message, at));
                }
                self.phase = Phase::Done;
                Ok(false)
            }
            // DOCTYPE is allowed but never interpreted: its entities stay undefined.
            // The XML declaration may only open the document, and no other
            // processing instruction may be named `xml` (XML 1.0 [17], [23]).
            Event::Decl(_) if self.events_seen > 1 => {
                Ok(self.misplaced(batch, "the XML declaration is allowed only at the very start of the document"))
            }
            Event::Decl(d) => match check_xml_decl(&d) {
                Ok(()) => Ok(false),
                Err(why) => Ok(self.misplaced(batch, &why)),
            },
            Event::PI(pi) if pi.target().eq_ignore_ascii_case(b"xml") => {
                Ok(self.misplaced(batch, "a processing instruction may not be named 'xml'"))
            }
            Event::PI(pi) if !is_name(pi.target()) => {
                Ok(self.misplaced(batch, "a processing instruction's target is not an XML name"))
            }
            // Comments and instructions are skipped, but their bytes are
            // still part of the document: invalid UTF-8 there (an encoded
            // surrogate) is not well-formed either.
            Event::Comment(c) if std::str::from_utf8(&c).is_err() => {
                Ok(self.misplaced(batch, "a comment holds bytes that are not valid UTF-8"))
            }
            Event::PI(pi) if std::str::from_utf8(&pi).is_err() => {
                Ok(self.misplaced(batch, "a processing instruction holds bytes that are not valid UTF-8"))
            }
            Event::Comment(_) | Event::PI(_) | Event::DocType(_) => Ok(false),
        }
    }

    /// A start tag (or the start of an empty one); true if it ended the file
    /// with a bad record.
    fn on_start(&mut self, e: &BytesStart<'_>, start: u64, batch: &mut Batch) -> bool {
        // A name that is not an XML name spoils the row it is in (names that
        // are not UTF-8 are the builder's to report), or ends the file outside rows.
        let raw_name = e.name();
        if std::str::from_utf8(raw_name.as_ref()).is_ok() && !is_name(raw_name.as_ref()) {
            let problem = format!("<{}> is not an XML element name", String::from_utf8_lossy(raw_name.as_ref()));
            match &mut self.current {
                Some(cur) => {
                    cur.error.get_or_insert(problem);
                }
                None => return self.misplaced(batch, &problem),
            }
        }
        if self.depth == 0 {
            if self.phase == Phase::AfterRoot {
                return self.outside_root(batch, "a second root element");
            }
            self.root_tag = Some(String::from_utf8_lossy(e.name().as_ref()).into_owned());
            self.phase = Phase::InRoot;
        }
        self.depth += 1;
        if let Some(cur) = &mut self.current {
            if cur.error.is_none() {
                cur.error = self.builder.start(e).err();
            }
            return false;
        }
        let d = self.depth;
        if (2..=3).contains(&d) {
            self.root_has_children = true;
            let seen = &mut self.seen_names[d - 2];
            if seen.len() < 20 {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                if !seen.contains(&name) {
                    seen.push(name);
                }
            }
        }
        let is_record = match &self.row_path {
            None => d == 1,
            Some(path) => {
                if d >= 2 && self.matched == d - 2 && path.get(d - 2).is_some_and(|c| c.as_slice() == e.name().as_ref())
                {
                    self.matched = d - 1;
                }
                self.matched == path.len() && d == path.len() + 1
            }
        };
        if is_record {
            self.rows_found += 1;
            let line = self.line_at(start);
            let error = self.builder.begin(e, &self.scalar_object_key).err();
            self.record_name.clear();
            self.record_name.push_str(&String::from_utf8_lossy(e.name().as_ref()));
            self.current = Some(Current { line, byte: start, depth: self.depth, error });
        }
        false
    }

    /// An end tag (or the end of an empty one); true when it closed a record.
    fn on_end(&mut self, batch: &mut Batch) -> bool {
        let mut completed = false;
        let pos = self.pos();
        if let Some(cur) = &mut self.current {
            if cur.error.is_none() {
                self.builder.end();
            }
            if self.depth == cur.depth {
                // Read whole, but longer than the limit: as when the limit
                // is met while reading (which read-ahead decides), the row
                // is bad and the file ends, so the result never depends on
                // the read size.
                if pos.saturating_sub(cur.byte) > self.max_record as u64 {
                    let at = cur.byte;
                    return self.too_large(batch, at);
                }
                self.finish_record(batch);
                completed = true;
            }
        }
        // Closing an element of the row path un-matches it.
        if self.depth >= 2 && self.matched >= self.depth - 1 {
            self.matched = self.depth - 2;
        }
        self.depth = self.depth.saturating_sub(1);
        if self.depth == 0 {
            self.phase = Phase::AfterRoot;
        }
        completed
    }

    /// The error of a row tag that matched no element: what is there instead.
    fn unmatched_row_tag(&self, path: &[Vec<u8>]) -> SanitizeError {
        let tag = path.iter().map(|c| String::from_utf8_lossy(c)).collect::<Vec<_>>().join("/");
        let list = |names: &[String]| names.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(", ");
        let root = self.root_tag.as_deref().unwrap_or("?");
        let mut message = format!(
            "file \"{}\": xml_row_tag '{tag}' matches no element; the root <{root}> holds {}",
            self.file,
            list(&self.seen_names[0])
        );
        if !self.seen_names[1].is_empty() {
            message.push_str(&format!(", and below them {}", list(&self.seen_names[1])));
        }
        message.push_str(
            ". xml_row_tag names a child of the root, or a slash path from the root's children such as 'channel/item'",
        );
        SanitizeError::input(message)
    }

    fn finish_record(&mut self, batch: &mut Batch) {
        let Some(cur) = self.current.take() else { return };
        let error = match (cur.error, self.builder.size_error()) {
            (Some(problem), _) => Some(BadRecord::new(problem_fault(&problem), problem)),
            (None, Some(size)) => Some(BadRecord::new(RecordFault::TooLarge, size)),
            (None, None) => None,
        };
        let tape = &mut batch.tape;
        let root = tape.nodes.len();
        match error {
            None => self.builder.emit(tape, &self.scalar_object_key),
            Some(_) => tape.push_null(),
        }
        tape.push_root(root);
        batch.meta.push(RecordMeta { line: cur.line, byte: cur.byte, error });
    }

    /// A declaration or instruction where XML forbids it: a syntax error.
    fn misplaced(&mut self, batch: &mut Batch, what: &str) -> bool {
        let at = self.pos();
        let line = self.line_at(at);
        let fault = problem_fault(what);
        self.fatal_of(batch, fault, format!("malformed XML at line {line} (byte {at}): {what}"), at)
    }

    /// Character content: into the row being read (its first problem
    /// spoils the row), or, outside the root element, a syntax error.
    fn content(
        &mut self,
        batch: &mut Batch,
        add: impl FnOnce(&mut Builder) -> std::result::Result<(), String>,
        outside_root: bool,
        what: &str,
    ) -> bool {
        if let Some(cur) = &mut self.current {
            if cur.error.is_none() {
                cur.error = add(&mut self.builder).err();
            }
            false
        } else if outside_root {
            self.outside_root(batch, what)
        } else {
            false
        }
    }

    /// A DOCTYPE: one at most, before the root, and well-formed (the
    /// internal subset is checked, never interpreted). True if it ended the
    /// file with a bad record.
    fn on_doctype(&mut self, raw: &[u8], batch: &mut Batch) -> bool {
        if self.saw_doctype || self.phase != Phase::BeforeRoot {
            return self.misplaced(batch, "a DOCTYPE declaration is allowed only once, before the root element");
        }
        self.saw_doctype = true;
        if std::str::from_utf8(raw).is_err() {
            return self.misplaced(batch, "the DOCTYPE declaration holds bytes that are not valid UTF-8");
        }
        let Err((offset, why)) = check_doctype(raw) else { return false };
        let at = self.pos() - raw.len() as u64 + offset as u64;
        let line = self.line_at(at);
        let message =
            format!("malformed XML at line {line} (byte {at}): the DOCTYPE declaration is not well-formed: {why}");
        self.fatal(batch, message, at)
    }

    /// Markup or text outside the root element: a syntax error.
    fn outside_root(&mut self, batch: &mut Batch, what: &str) -> bool {
        let at = self.pos();
        let line = self.line_at(at);
        let place = if self.phase == Phase::AfterRoot { "after the root element" } else { "before the root element" };
        self.fatal(batch, format!("malformed XML at line {line} (byte {at}): {what} {place}"), at)
    }

    /// A row element (or, between rows, markup or text) longer than
    /// `max_record_bytes`, starting at `at`: a bad record, and the file ends
    /// there, as after a syntax error (its bytes are never held).
    fn too_large(&mut self, batch: &mut Batch, at: u64) -> bool {
        let message = self.too_large_message();
        self.fatal_of(batch, RecordFault::TooLarge, message, at)
    }

    fn too_large_message(&self) -> String {
        let what = if self.current.is_some() {
            format!("the row element <{}>", self.record_name)
        } else {
            "markup or text between rows".to_string()
        };
        let cause = super::too_large_cause(&what, self.max_record);
        format!("{cause}; the rest of the file is not read")
    }

    /// A syntax error: the record being read (or a new record located at
    /// `at`) is bad, and the file ends. Always returns true.
    fn fatal(&mut self, batch: &mut Batch, message: String, at: u64) -> bool {
        self.fatal_of(batch, RecordFault::Malformed, message, at)
    }

    /// [`Self::fatal`], for a record bad for `fault`.
    fn fatal_of(&mut self, batch: &mut Batch, fault: RecordFault, message: String, at: u64) -> bool {
        self.phase = Phase::Done;
        // A row already past the limit is bad for that, whatever ended it:
        // how far a read got before the limit was noticed depends on the
        // read size, and the result must not.
        let over = self.current.as_ref().is_some_and(|c| self.pos().saturating_sub(c.byte) > self.max_record as u64);
        let (fault, message) = if over { (RecordFault::TooLarge, self.too_large_message()) } else { (fault, message) };
        let (line, byte) = match self.current.take() {
            Some(cur) => (cur.line, cur.byte),
            None => (self.line_at(at), at),
        };
        let tape = &mut batch.tape;
        tape.push_root(tape.nodes.len());
        tape.push_null();
        batch.meta.push(RecordMeta { line, byte, error: Some(BadRecord::new(fault, message)) });
        true
    }
}

impl<R: Read> super::RecordReader for XmlReader<R> {
    /// Appends up to `max_records` records to `batch`; returns how many.
    /// Zero means the file is exhausted (or a syntax error ended it).
    fn next_batch(&mut self, batch: &mut Batch, max_records: usize) -> Result<usize> {
        let mut added = 0;
        while added < max_records && self.phase != Phase::Done {
            if self.step(batch)? {
                added += 1;
            }
        }
        Ok(added)
    }

    fn bytes_read(&self) -> u64 {
        self.xml.get_ref().get_ref().raw
    }

    /// The root element's name: documents of one directory scan share it.
    /// Reads up to the root's start tag, no further.
    fn signature(&mut self) -> Result<Option<super::Signature>> {
        let mut scratch = Batch::default();
        while self.root_tag.is_none() && self.phase != Phase::Done {
            self.step(&mut scratch)?;
        }
        Ok(self.root_tag.clone().map(super::Signature::XmlRoot))
    }
}

fn is_xml_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_xml_space_char(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_predefined_or_char_ref(r: &BytesRef<'_>) -> bool {
    r.is_char_ref() || matches!(&r[..], b"lt" | b"gt" | b"amp" | b"apos" | b"quot")
}

fn undefined_entity(name: &str) -> String {
    format!("undefined entity &{name}; (DTD and external entities are never expanded)")
}

/// The fault of a row's problem, in the builder's own words (tree.rs says
/// "invalid UTF-8" for bytes that are not text, and describes markup
/// otherwise).
fn problem_fault(problem: &str) -> RecordFault {
    if problem.contains("not valid UTF-8") || problem.starts_with("invalid UTF-8") {
        RecordFault::BadEncoding
    } else {
        RecordFault::Malformed
    }
}

#[cfg(test)]
mod tests;
