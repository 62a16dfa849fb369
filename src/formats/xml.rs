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

use std::collections::VecDeque;
use std::io::{self, BufReader, Read};

use quick_xml::escape::EscapeError;
use quick_xml::events::{BytesCData, BytesRef, BytesStart, BytesText, Event};
use quick_xml::XmlVersion;

use super::xml_dtd::check_doctype;
use super::xml_names::{check_xml_decl, is_char, is_name};
use super::{Batch, RecordMeta};
use crate::error::{Result, SanitizeError};
use crate::value::{OpenContainer, Tape};

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
}

impl<R: Read> XmlReader<R> {
    pub fn new(reader: R, file: &str, chunk_bytes: usize, options: XmlOptions) -> Self {
        let source =
            Source { inner: reader, raw: 0, newlines: VecDeque::new(), lines_before: 0, illegal: None, pending_ef: 0 };
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
        }
    }

    /// Name of the document's root element once seen (for directory mode:
    /// documents must share it).
    pub fn root_tag(&self) -> Option<&str> {
        self.root_tag.as_deref()
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
        let mut buf = std::mem::take(&mut self.buf);
        let event = self.xml.read_event_into(&mut buf);
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
            Event::Text(t) => {
                if let Some(cur) = &mut self.current {
                    if cur.error.is_none() {
                        cur.error = self.builder.text(&t).err();
                    }
                    Ok(false)
                } else if self.depth == 0 && !t.iter().all(|b| is_xml_space(*b)) {
                    Ok(self.outside_root(batch, "text"))
                } else {
                    Ok(false)
                }
            }
            Event::CData(c) => {
                if let Some(cur) = &mut self.current {
                    if cur.error.is_none() {
                        cur.error = self.builder.cdata(&c).err();
                    }
                    Ok(false)
                } else if self.depth == 0 {
                    Ok(self.outside_root(batch, "a CDATA section"))
                } else {
                    Ok(false)
                }
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
                    batch.meta.push(RecordMeta { line, byte: at, error: Some(error) });
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
        if let Some(cur) = &mut self.current {
            if cur.error.is_none() {
                self.builder.end();
            }
            if self.depth == cur.depth {
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
        let error = cur.error.or_else(|| self.builder.size_error());
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
        self.fatal(batch, format!("malformed XML at line {line} (byte {at}): {what}"), at)
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

    /// A syntax error: the record being read (or a new record located at
    /// `at`) is bad, and the file ends. Always returns true.
    fn fatal(&mut self, batch: &mut Batch, message: String, at: u64) -> bool {
        self.phase = Phase::Done;
        let (line, byte) = match self.current.take() {
            Some(cur) => (cur.line, cur.byte),
            None => (self.line_at(at), at),
        };
        let tape = &mut batch.tape;
        tape.push_root(tape.nodes.len());
        tape.push_null();
        batch.meta.push(RecordMeta { line, byte, error: Some(message) });
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
}

/// The first character XML 1.0 forbids (production 2, Char): C0 controls
/// but tab, LF and CR, and the non-characters U+FFFE and U+FFFF. `pending`
/// carries how many bytes of `EF BF` ended the previous buffer. Returns the
/// offset of the character's first byte relative to `bytes` (negative when
/// it began in the previous buffer).
fn find_illegal_char(bytes: &[u8], pending: &mut u8) -> Option<(i64, String)> {
    for (i, &b) in bytes.iter().enumerate() {
        match (*pending, b) {
            (2, 0xBE | 0xBF) => {
                return Some((i as i64 - 2, format!("the non-character U+FFF{:X}", b - 0xB0)));
            }
            (1, 0xBF) => *pending = 2,
            (_, 0xEF) => *pending = 1,
            _ => *pending = 0,
        }
        if b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r') {
            return Some((i as i64, format!("the control character U+{b:04X}")));
        }
    }
    None
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

/// The input as quick-xml sees it: counts the bytes taken from the source
/// and remembers where the not-yet-passed newlines are, so a record's line
/// can be told from its byte offset, and finds the first character XML
/// forbids. (A byte-order mark is the text decoder's to drop,
/// source/decode.rs: offsets count from the first byte after it.)
struct Source<R> {
    inner: R,
    /// Bytes read from `inner`: the stream offset of the next byte.
    raw: u64,
    /// Offsets of newlines handed out but not yet counted in `lines_before`.
    newlines: VecDeque<u64>,
    lines_before: u64,
    /// The first character XML forbids anywhere in a document (a control
    /// character other than tab, LF and CR, or U+FFFE / U+FFFF): its
    /// stream offset and a description. quick-xml does not check it.
    illegal: Option<(u64, String)>,
    /// Bytes of a possible U+FFFE/U+FFFF (EF BF BE/BF) split across reads.
    pending_ef: u8,
}

impl<R: Read> Source<R> {
    /// 1-based line of the byte at stream offset `pos`. Offsets must not
    /// decrease from call to call (earlier newlines are forgotten).
    fn line_at(&mut self, pos: u64) -> u64 {
        while let Some(&nl) = self.newlines.front() {
            if nl >= pos {
                break;
            }
            self.newlines.pop_front();
            self.lines_before += 1;
        }
        self.lines_before + 1
    }
}

impl<R: Read> Read for Source<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let base = self.raw;
        for i in memchr::memchr_iter(b'\n', &buf[..n]) {
            self.newlines.push_back(base + i as u64);
        }
        if self.illegal.is_none() {
            self.illegal = find_illegal_char(&buf[..n], &mut self.pending_ef)
                .map(|(i, what)| (base.saturating_add_signed(i), what));
        }
        self.raw += n as u64;
        Ok(n)
    }
}

const NONE: u32 = u32::MAX;

/// One entry of the row tree: an element, or a string (an attribute or the
/// text of an element that also has attributes or children).
#[derive(Clone, Copy, Debug)]
struct Member {
    /// Key: a range of `Builder::strs`.
    key: (u32, u32),
    /// The string of a scalar member, or the text of a text-only element
    /// (empty: no text).
    val: (u32, u32),
    is_elem: bool,
    /// Children (elements only), a linked list through `next`.
    first: u32,
    last: u32,
    next: u32,
    /// After grouping: on the first member of a run of same-key members, the
    /// run's length; 0 on the others.
    group: u32,
}

impl Member {
    fn elem(key: (u32, u32)) -> Self {
        Member { key, val: (0, 0), is_elem: true, first: NONE, last: NONE, next: NONE, group: 1 }
    }
    fn scalar(key: (u32, u32), val: (u32, u32)) -> Self {
        Member { key, val, is_elem: false, first: NONE, last: NONE, next: NONE, group: 1 }
    }
}

/// Writing the tree onto the tape: an object (walking members) or an array
/// (a run of same-key members).
#[derive(Clone, Copy)]
struct EmitFrame {
    open: OpenContainer,
    /// Next member to write.
    cursor: u32,
    /// Arrays: members left to write.
    left: u32,
    is_object: bool,
    len: u32,
    evidence: bool,
}

/// The tree of one row, rebuilt for each row in reused buffers.
#[derive(Default)]
struct Builder {
    members: Vec<Member>,
    /// Keys and values of the row.
    strs: String,
    /// Open elements: their member index (the record element first).
    frames: Vec<u32>,
    /// Text gathered so far by each open element (index = frame), reused.
    texts: Vec<String>,
    /// The text segment being read (since the last tag).
    seg: String,
    /// Verbatim parts of `seg` (CDATA, references): never trimmed. Start of
    /// the first and end of the last; `usize::MAX`/0 when none.
    seg_protected_start: usize,
    seg_protected_end: usize,
    /// `scalar_object_key` in `strs`.
    scalar_key: (u32, u32),
    // Scratch for grouping and writing.
    group_members: Vec<u32>,
    group_order: Vec<u32>,
    group_runs: Vec<(u32, u32, u32)>,
    emit_stack: Vec<EmitFrame>,
}

type Problem = std::result::Result<(), String>;

impl Builder {
    fn push_str(&mut self, s: &str) -> (u32, u32) {
        let start = self.strs.len() as u32;
        self.strs.push_str(s);
        (start, s.len() as u32)
    }

    fn str_of(&self, range: (u32, u32)) -> &str {
        &self.strs[range.0 as usize..(range.0 + range.1) as usize]
    }

    /// Name of the innermost open element, for messages.
    fn current_name(&self) -> &str {
        match self.frames.last() {
            Some(&m) => self.str_of(self.members[m as usize].key),
            None => "",
        }
    }

    fn add_child(&mut self, parent: u32, member: Member) -> u32 {
        let idx = self.members.len() as u32;
        self.members.push(member);
        let p = &mut self.members[parent as usize];
        if p.first == NONE {
            p.first = idx;
        } else {
            let last = p.last;
            self.members[last as usize].next = idx;
        }
        self.members[parent as usize].last = idx;
        idx
    }

    /// Starts a record at its element.
    fn begin(&mut self, e: &BytesStart<'_>, scalar_object_key: &str) -> Problem {
        self.members.clear();
        self.strs.clear();
        self.frames.clear();
        self.reset_seg();
        self.scalar_key = self.push_str(scalar_object_key);
        let name = element_name(e)?;
        let key = self.push_str(name);
        self.members.push(Member::elem(key));
        self.open_frame(0);
        self.attributes(0, e)
    }

    fn open_frame(&mut self, member: u32) {
        let depth = self.frames.len();
        self.frames.push(member);
        if self.texts.len() <= depth {
            self.texts.push(String::new());
        }
        self.texts[depth].clear();
    }

    /// A child element opens.
    fn start(&mut self, e: &BytesStart<'_>) -> Problem {
        self.flush_seg();
        if self.frames.len() >= MAX_NESTING {
            return Err(format!("nesting deeper than {MAX_NESTING} levels"));
        }
        let name = element_name(e)?;
        let key = self.push_str(name);
        let parent = *self.frames.last().expect("a record element is open");
        let idx = self.add_child(parent, Member::elem(key));
        self.open_frame(idx);
        self.attributes(idx, e)
    }

    fn attributes(&mut self, elem: u32, e: &BytesStart<'_>) -> Problem {
        let tag: &[u8] = e;
        for attr in e.attributes() {
            let attr = attr.map_err(|err| format!("malformed attribute in <{}>: {err}", self.current_name()))?;
            let name = attr.key.as_ref();
            if !is_name(name) {
                return Err(format!("malformed attribute in <{}>: its name is not an XML name", self.current_name()));
            }
            if memchr::memchr(b'<', &attr.value).is_some() {
                return Err(format!("malformed attribute in <{}>: '<' in its value", self.current_name()));
            }
            // The closing quote must be followed by whitespace, '/' or the
            // end (the value is borrowed from the tag, so its end is known).
            let offset = (attr.value.as_ptr() as usize).wrapping_sub(tag.as_ptr() as usize);
            let value_end = offset.saturating_add(attr.value.len()).saturating_add(1);
            if offset < tag.len() && tag.get(value_end).is_some_and(|b| !is_xml_space(*b) && *b != b'/') {
                return Err(format!("malformed attribute in <{}>: no whitespace after its value", self.current_name()));
            }
            if name == b"xmlns" || name.starts_with(b"xmlns:") {
                continue;
            }
            let Ok(name) = std::str::from_utf8(name) else {
                return Err(format!("invalid UTF-8 in an attribute name of <{}>", self.current_name()));
            };
            let value = attr.normalized_value(XmlVersion::Implicit1_0).map_err(|err| match err {
                quick_xml::Error::Escape(EscapeError::UnrecognizedEntity(_, entity)) => undefined_entity(&entity),
                quick_xml::Error::Encoding(_) => {
                    format!("invalid UTF-8 in attribute {name} of <{}>", self.current_name())
                }
                other => format!("bad value of attribute {name} in <{}>: {other}", self.current_name()),
            })?;
            // A character reference may not produce a character XML forbids
            // (the raw text was checked for them as it was read).
            if memchr::memmem::find(&attr.value, b"&#").is_some() && value.chars().any(|c| !is_char(c)) {
                return Err(format!(
                    "a character reference in attribute {name} of <{}> names a character XML forbids",
                    self.current_name()
                ));
            }
            let key_start = self.strs.len() as u32;
            self.strs.push('@');
            self.strs.push_str(name);
            let key = (key_start, name.len() as u32 + 1);
            let val = self.push_str(&value);
            self.add_child(elem, Member::scalar(key, val));
        }
        Ok(())
    }

    /// The innermost open element closes.
    fn end(&mut self) {
        self.flush_seg();
        let Some(elem) = self.frames.pop() else { return };
        let depth = self.frames.len();
        let mut text = std::mem::take(&mut self.texts[depth]);
        if !text.is_empty() {
            let val = self.push_str(&text);
            if self.members[elem as usize].first == NONE {
                self.members[elem as usize].val = val;
            } else {
                self.add_child(elem, Member::scalar(self.scalar_key, val));
            }
        }
        text.clear();
        self.texts[depth] = text;
        self.group_children(elem);
    }

    fn reset_seg(&mut self) {
        self.seg.clear();
        self.seg_protected_start = usize::MAX;
        self.seg_protected_end = 0;
    }

    /// Ends the current text segment: trims it (outside its verbatim parts)
    /// and adds it to the innermost element's text.
    fn flush_seg(&mut self) {
        if self.seg.is_empty() {
            return;
        }
        let seg = self.seg.as_str();
        let lead_limit = self.seg_protected_start.min(seg.len());
        let start = lead_limit - seg[..lead_limit].trim_start_matches(is_xml_space_char).len();
        let trail_from = self.seg_protected_end.max(start);
        let end = trail_from + seg[trail_from..].trim_end_matches(is_xml_space_char).len();
        let piece = &seg[start..end];
        if !piece.is_empty() {
            if let Some(text) = self.texts.get_mut(self.frames.len().wrapping_sub(1)) {
                if !text.is_empty() {
                    text.push(' ');
                }
                text.push_str(piece);
            }
        }
        self.reset_seg();
    }

    fn text(&mut self, t: &BytesText<'_>) -> Problem {
        if memchr::memchr(b'&', &t[..]).is_some() {
            return Err(format!("unescaped '&' in the text of <{}> (write &amp;)", self.current_name()));
        }
        if memchr::memmem::find(&t[..], b"]]>").is_some() {
            return Err(format!(
                "']]>' in the text of <{}> (allowed only to end a CDATA section)",
                self.current_name()
            ));
        }
        match t.xml10_content() {
            Ok(s) => {
                self.seg.push_str(&s);
                Ok(())
            }
            Err(_) => Err(format!("invalid UTF-8 in the text of <{}>", self.current_name())),
        }
    }

    fn push_verbatim(&mut self, s: &str) {
        self.seg_protected_start = self.seg_protected_start.min(self.seg.len());
        self.seg.push_str(s);
        self.seg_protected_end = self.seg.len();
    }

    fn cdata(&mut self, c: &BytesCData<'_>) -> Problem {
        match c.xml10_content() {
            Ok(s) => {
                self.push_verbatim(&s);
                Ok(())
            }
            Err(_) => Err(format!("invalid UTF-8 in a CDATA section of <{}>", self.current_name())),
        }
    }

    fn reference(&mut self, r: &BytesRef<'_>) -> Problem {
        let name = String::from_utf8_lossy(&r[..]);
        match r.resolve_char_ref() {
            Ok(Some(c)) if !is_char(c) => Err(format!(
                "the character reference &{name}; in <{}> names a character XML forbids",
                self.current_name()
            )),
            Ok(Some(c)) => {
                self.push_verbatim(c.encode_utf8(&mut [0; 4]));
                Ok(())
            }
            Ok(None) => {
                let c = match name.as_ref() {
                    "lt" => "<",
                    "gt" => ">",
                    "amp" => "&",
                    "apos" => "'",
                    "quot" => "\"",
                    other => return Err(undefined_entity(other)),
                };
                self.push_verbatim(c);
                Ok(())
            }
            Err(e) => Err(format!("invalid character reference &{name}; in <{}>: {e}", self.current_name())),
        }
    }

    /// Reorders an element's children so that same-key members are adjacent
    /// (groups in first-appearance order) and marks each group's length.
    fn group_children(&mut self, elem: u32) {
        let first = self.members[elem as usize].first;
        if first == NONE || self.members[first as usize].next == NONE {
            return;
        }
        self.group_members.clear();
        let mut m = first;
        while m != NONE {
            self.group_members.push(m);
            m = self.members[m as usize].next;
        }
        let n = self.group_members.len();
        {
            let (members, strs, list) = (&self.members, &self.strs, &self.group_members);
            let key = |pos: u32| {
                let (s, l) = members[list[pos as usize] as usize].key;
                &strs[s as usize..(s + l) as usize]
            };
            self.group_order.clear();
            self.group_order.extend(0..n as u32);
            self.group_order.sort_unstable_by(|&a, &b| key(a).cmp(key(b)).then(a.cmp(&b)));
            self.group_runs.clear();
            let mut run = 0;
            for k in 1..=n {
                if k == n || key(self.group_order[k]) != key(self.group_order[run]) {
                    // (first appearance, start in `group_order`, length)
                    self.group_runs.push((self.group_order[run], run as u32, (k - run) as u32));
                    run = k;
                }
            }
        }
        if self.group_runs.len() == n {
            return; // all keys distinct: the order stands
        }
        self.group_runs.sort_unstable_by_key(|r| r.0);
        let mut prev = NONE;
        for &(_, start, len) in &self.group_runs {
            for j in start..start + len {
                let idx = self.group_members[self.group_order[j as usize] as usize];
                self.members[idx as usize].group = if j == start { len } else { 0 };
                if prev == NONE {
                    self.members[elem as usize].first = idx;
                } else {
                    self.members[prev as usize].next = idx;
                }
                prev = idx;
            }
        }
        self.members[prev as usize].next = NONE;
        self.members[elem as usize].last = prev;
    }

    /// Ranges on the tape are 32-bit.
    fn size_error(&self) -> Option<String> {
        (self.strs.len() > u32::MAX as usize || self.members.len() >= u32::MAX as usize)
            .then(|| "record larger than 4 GiB".to_string())
    }

    /// Writes the finished row (member 0, always as an object) onto the tape.
    fn emit(&mut self, tape: &mut Tape, scalar_object_key: &str) {
        let mut stack = std::mem::take(&mut self.emit_stack);
        stack.clear();
        let root = self.members[0];
        let open = tape.open(true);
        let mut frame = EmitFrame { open, cursor: root.first, left: 0, is_object: true, len: 0, evidence: false };
        if root.first == NONE && root.val.1 > 0 {
            // A record holding only text.
            tape.push_key(scalar_object_key);
            tape.push_string(self.str_of(root.val));
            frame.len = 1;
            frame.evidence = true;
        }
        stack.push(frame);
        while let Some(top) = stack.last_mut() {
            let done = if top.is_object { top.cursor == NONE } else { top.left == 0 };
            if done {
                let f = *top;
                stack.pop();
                tape.close(f.open, f.len, f.evidence);
                if let Some(parent) = stack.last_mut() {
                    parent.evidence |= f.evidence;
                }
                continue;
            }
            let m = self.members[top.cursor as usize];
            top.len += 1;
            if top.is_object {
                tape.push_key(self.str_of(m.key));
                if m.group > 1 {
                    // A run of same-key members: an array of them.
                    let start = top.cursor;
                    let mut after = top.cursor;
                    for _ in 0..m.group {
                        after = self.members[after as usize].next;
                    }
                    top.cursor = after;
                    let open = tape.open(false);
                    stack.push(EmitFrame {
                        open,
                        cursor: start,
                        left: m.group,
                        is_object: false,
                        len: 0,
                        evidence: false,
                    });
                    continue;
                }
            } else {
                top.left -= 1;
            }
            top.cursor = m.next;
            // The member's value.
            if m.is_elem && m.first != NONE {
                let open = tape.open(true);
                stack.push(EmitFrame { open, cursor: m.first, left: 0, is_object: true, len: 0, evidence: false });
            } else if m.is_elem && m.val.1 == 0 {
                tape.push_null();
            } else {
                tape.push_string(self.str_of(m.val));
                top.evidence = true;
            }
        }
        self.emit_stack = stack;
    }
}

fn element_name<'a>(e: &'a BytesStart<'_>) -> std::result::Result<&'a str, String> {
    std::str::from_utf8(e.name().0).map_err(|_| "invalid UTF-8 in an element name".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{harness, RecordReader};
    use crate::options::InputFormat;
    use crate::value::write_compact_json;

    fn options(row_tag: Option<&str>) -> XmlOptions {
        XmlOptions { row_tag: row_tag.map(str::to_string), scalar_object_key: "#text".to_string() }
    }

    /// (line, byte, JSON or `ERROR: ...`) of every record, through the
    /// shared harness (formats/harness.rs: every chunk and batch size, the
    /// reader contract checked).
    fn read_with(input: &[u8], opts: XmlOptions) -> Vec<(u64, u64, String)> {
        harness::records(InputFormat::Xml, input, |o| {
            o.xml_row_tag = opts.row_tag.clone();
            o.scalar_object_key = opts.scalar_object_key.clone();
        })
    }

    fn rows(input: &str, row_tag: Option<&str>) -> Vec<String> {
        read_with(input.as_bytes(), options(row_tag)).into_iter().map(|r| r.2).collect()
    }

    fn one(input: &str) -> String {
        let out = rows(input, None);
        assert_eq!(out.len(), 1, "{out:?}");
        out.into_iter().next().unwrap()
    }

    #[test]
    fn attributes_become_at_keys() {
        assert_eq!(
            rows("<r><row id=\"1\" name='x y'/><row id=\"2\"></row></r>", Some("row")),
            ["{\"@id\":\"1\",\"@name\":\"x y\"}", "{\"@id\":\"2\"}"]
        );
        // Attribute values are normalized: tabs and line breaks become spaces.
        assert_eq!(one("<d a=\"x\ty\r\nz\"/>"), "{\"@a\":\"x y z\"}");
    }

    #[test]
    fn text_only_elements_are_trimmed_strings() {
        assert_eq!(one("<d><a>hello</a>\n  <b>  spaced out \n</b></d>"), "{\"a\":\"hello\",\"b\":\"spaced out\"}");
        assert_eq!(one("<d><a>line1\r\nline2</a></d>"), "{\"a\":\"line1\\nline2\"}");
    }

    #[test]
    fn text_beside_attributes_or_children_goes_under_the_scalar_key() {
        assert_eq!(
            one("<d><a id=\"1\"> text </a><b>\n  x <c>y</c>\n  z w <e/> \n</b></d>"),
            "{\"a\":{\"@id\":\"1\",\"#text\":\"text\"},\"b\":{\"c\":\"y\",\"e\":null,\"#text\":\"x z w\"}}"
        );
        // A record holding only text.
        assert_eq!(rows("<r><row>hello</row></r>", Some("row")), ["{\"#text\":\"hello\"}"]);
        // A custom key, colliding with a child: the text joins the child's array.
        let opts = XmlOptions { row_tag: None, scalar_object_key: "value".to_string() };
        let out = read_with(b"<d><value>1</value>two</d>", opts);
        assert_eq!(out[0].2, "{\"value\":[\"1\",\"two\"]}");
    }

    #[test]
    fn repeated_children_become_arrays_in_first_appearance_order() {
        assert_eq!(
            one("<d><a>1</a><b>x</b><a>2</a><c><k>1</k></c><a>3</a><c><k>2</k><k>3</k></c></d>"),
            "{\"a\":[\"1\",\"2\",\"3\"],\"b\":\"x\",\"c\":[{\"k\":\"1\"},{\"k\":[\"2\",\"3\"]}]}"
        );
        // Many children: grouping stays linear-ish and ordered.
        let mut xml = String::from("<d>");
        for i in 0..1000 {
            xml.push_str(&format!("<k{}>{i}</k{}>", i % 3, i % 3));
        }
        xml.push_str("</d>");
        let out = one(&xml);
        assert!(out.starts_with("{\"k0\":[\"0\",\"3\","), "{}", &out[..40]);
        assert!(out.contains("],\"k1\":[\"1\",\"4\","));
        assert!(out.ends_with(",\"998\"]}"));
    }

    #[test]
    fn empty_elements_are_null() {
        assert_eq!(
            one("<d><a/><b></b><c>  \n </c><e xmlns=\"urn:x\"/><f><!-- c --></f></d>"),
            "{\"a\":null,\"b\":null,\"c\":null,\"e\":null,\"f\":null}"
        );
        // No type evidence inside.
        let mut r = XmlReader::new(&b"<d><a/></d>"[..], "t.xml", 64, options(None));
        let mut batch = Batch::default();
        r.next_batch(&mut batch, 10).unwrap();
        assert!(batch.tape.record(0).is_empty_or_null());
        let mut batch = Batch::default();
        let mut r = XmlReader::new(&b"<d><a><b>1</b></a></d>"[..], "t.xml", 64, options(None));
        r.next_batch(&mut batch, 10).unwrap();
        assert!(!batch.tape.record(0).is_empty_or_null());
        // An empty row is an empty object.
        assert_eq!(rows("<r><row/><row> </row></r>", Some("row")), ["{}", "{}"]);
    }

    #[test]
    fn cdata_is_verbatim_text() {
        assert_eq!(
            one("<d><a><![CDATA[ <b>&amp; ]]></a><b>  x <![CDATA[ y ]]> </b><c>a<![CDATA[]]>b</c></d>"),
            "{\"a\":\" <b>&amp; \",\"b\":\"x  y \",\"c\":\"ab\"}"
        );
    }

    #[test]
    fn predefined_entities_and_character_references_are_decoded() {
        assert_eq!(
            one("<d a=\"&lt;&#65;&amp;\"><t>&amp;&lt;&gt;&apos;&quot; &#233;&#xE9;</t><s>Tom &amp; Jerry</s></d>"),
            "{\"@a\":\"<A&\",\"t\":\"&<>'\\\" éé\",\"s\":\"Tom & Jerry\"}"
        );
        // A character reference is content, not formatting: never trimmed.
        assert_eq!(one("<d><a>&#32;x&#x20;</a></d>"), "{\"a\":\" x \"}");
    }

    #[test]
    fn namespace_prefixes_are_kept_and_declarations_skipped() {
        assert_eq!(
            rows(
                "<r xmlns:ns=\"urn:x\"><ns:row xmlns=\"urn:d\" xmlns:q=\"urn:q\" ns:id=\"1\"><ns:tag>v</ns:tag><q:t/></ns:row></r>",
                Some("ns:row")
            ),
            ["{\"@ns:id\":\"1\",\"ns:tag\":\"v\",\"q:t\":null}"]
        );
    }

    #[test]
    fn row_tag_streams_direct_children_and_skips_the_rest() {
        let xml = "<?xml version=\"1.0\"?>\n<r attr=\"x\">\n  <header><row>nested</row></header>\n  <row><a>1</a></row>\n  stray text\n  <other><a>no</a></other>\n  <row><a>2</a></row>\n</r>\n<!-- trailing comment -->\n";
        let out = read_with(xml.as_bytes(), options(Some("row")));
        assert_eq!(out, [(4, 74, "{\"a\":\"1\"}".to_string()), (7, 136, "{\"a\":\"2\"}".to_string())], "{xml:?}");
        assert_eq!((&xml[74..79], &xml[136..141]), ("<row>", "<row>"));
        // A root without children has no rows.
        assert!(rows("<r/>", Some("row")).is_empty());
        assert!(rows("<r>text</r>", Some("row")).is_empty());
        // A row tag that matches nothing under a non-empty root is an error
        // listing what is there, never zero rows in silence; only direct
        // children of the root (or a slash path) are rows.
        let unmatched = |input: &str| {
            let mut r = XmlReader::new(input.as_bytes(), "t.xml", 4, options(Some("row")));
            let mut batch = Batch::default();
            loop {
                match r.next_batch(&mut batch, 10) {
                    Ok(0) => panic!("{input}: no error"),
                    Ok(_) => continue,
                    Err(e) => return e.message,
                }
            }
        };
        let e = unmatched("<r><x/><y>1</y></r>");
        assert!(e.contains("'row' matches no element; the root <r> holds <x>, <y>."), "{e}");
        let e = unmatched("<r><g><row>1</row></g></r>");
        assert!(e.contains("holds <g>, and below them <row>"), "{e}");
        assert_eq!(
            rows("<r><g><row>1</row></g><g><row>2</row></g></r>", Some("g/row")),
            ["{\"#text\":\"1\"}", "{\"#text\":\"2\"}"]
        );
    }

    #[test]
    fn characters_xml_forbids_and_double_hyphens_in_comments_are_not_well_formed() {
        let out = rows("<r><row>a\u{1}b</row><row>c</row></r>", Some("row"));
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].contains("the control character U+0001 is not allowed"), "{out:?}");
        let out = rows("<r><row>a\u{FFFE}</row></r>", Some("row"));
        assert!(out[0].contains("U+FFFE"), "{out:?}");
        // Split across reads, the non-character is still found.
        let input = "<r><row>x\u{FFFF}</row></r>";
        for chunk in [1, 2, 3] {
            let out = read_with(input.as_bytes(), options(Some("row")));
            assert!(out[0].2.contains("U+FFFF"), "chunk {chunk}: {out:?}");
        }
        let out = rows("<r><!-- a -- b --><row>1</row></r>", Some("row"));
        assert!(out[0].starts_with("ERROR: malformed XML"), "{out:?}");
        // Tabs, newlines and CRs are fine.
        assert_eq!(rows("<r>\t<row>a\r\nb</row></r>", Some("row")).len(), 1);
        // The XML declaration opens the document or is not well-formed.
        assert_eq!(rows("<?xml version=\"1.0\"?><r><row>1</row></r>", Some("row")).len(), 1);
        let out = rows(" <?xml version=\"1.0\"?><r><row>1</row></r>", Some("row"));
        assert!(out[0].contains("only at the very start"), "{out:?}");
        let out = rows("<r><row>1</row><?XML x?></r>", Some("row"));
        assert!(out.last().unwrap().contains("may not be named 'xml'"), "{out:?}");
        let out = rows("<?xml encoding=\"UTF-8\"?><r><row>1</row></r>", Some("row"));
        assert!(out[0].contains("XML declaration"), "{out:?}");
        // Lexical rules inside rows spoil only their row.
        let xml = "<r><row><1a/></row><row>a ]]> b</row><row x='1'y='2'/><row x='<'/><row>&#1;</row><row>ok</row></r>";
        let out = rows(xml, Some("row"));
        assert_eq!(out.len(), 6, "{out:?}");
        assert!(out[0].contains("<1a> is not an XML element name"), "{out:?}");
        assert!(out[1].contains("']]>' in the text"), "{out:?}");
        assert!(out[2].contains("no whitespace after its value"), "{out:?}");
        assert!(out[3].contains("'<' in its value"), "{out:?}");
        assert!(out[4].contains("names a character XML forbids"), "{out:?}");
        assert_eq!(out[5], "{\"#text\":\"ok\"}");
        let out = rows("<r><row a=\"x&#x1f;\"/><row b=\"&#65;\"/></r>", Some("row"));
        assert!(out[0].contains("a character reference in attribute a"), "{out:?}");
        assert_eq!(out[1], "{\"@b\":\"A\"}");
        // Markup without a root element is no document; an empty file is.
        let out = rows("<?xml version=\"1.0\"?>\n<!-- nothing -->\n", Some("row"));
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].contains("the document has no root element"), "{out:?}");
        assert!(rows("  \n", Some("row")).is_empty());
        // Attributes written as XML allows them pass.
        assert_eq!(rows("<r><row a='1' b=\"2\"/><row c='3'/></r>", Some("row")).len(), 2);
    }

    #[test]
    fn a_slash_row_tag_is_a_path_from_the_roots_children() {
        let xml = "<rss><channel><title>t</title><item><a>1</a></item><x><item><a>no</a></item></x><item><a>2</a></item></channel><item><a>no</a></item></rss>";
        assert_eq!(rows(xml, Some("channel/item")), ["{\"a\":\"1\"}", "{\"a\":\"2\"}"]);
        for chunk in [1, 3, 7] {
            let out: Vec<String> =
                read_with(xml.as_bytes(), options(Some("channel/item"))).into_iter().map(|r| r.2).collect();
            assert_eq!(out.len(), 2, "chunk {chunk}");
        }
    }

    #[test]
    fn invalid_utf8_in_skipped_markup_is_not_well_formed() {
        // W3C ibm02n30/31: an encoded surrogate (ED A0 80) in a comment.
        for xml in [&b"<r><!-- \xED\xA0\x80 --><row>1</row></r>"[..], b"<r><?pi \xED\xA0\x80?><row>1</row></r>"] {
            let out = read_with(xml, options(Some("row")));
            assert_eq!(out.len(), 1, "{out:?}");
            assert!(out[0].2.contains("not valid UTF-8"), "{out:?}");
        }
    }

    #[test]
    fn an_entity_between_rows_is_a_bad_record_not_silence() {
        let xml = "<!DOCTYPE doc [<!ENTITY e \"&#60;foo></foo>\">]><doc>&e;<foo>1</foo>&amp;</doc>";
        let out = rows(xml, Some("foo"));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].starts_with("ERROR: undefined entity &e;") && out[0].contains("between rows"), "{out:?}");
        assert_eq!(out[1], "{\"#text\":\"1\"}");
    }

    #[test]
    fn without_row_tag_the_document_is_one_record() {
        let xml = "<?xml version=\"1.0\"?>\n<!-- c --><?pi x?>\n<doc v=\"1\">\n<a>1</a><a>2</a></doc>\n";
        let mut r = XmlReader::new(xml.as_bytes(), "t.xml", 3, options(None));
        assert_eq!(r.root_tag(), None);
        let mut batch = Batch::default();
        assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 1);
        assert_eq!(r.root_tag(), Some("doc"));
        let mut s = String::new();
        write_compact_json(batch.tape.record(0), &mut s);
        assert_eq!(s, "{\"@v\":\"1\",\"a\":[\"1\",\"2\"]}");
        assert_eq!((batch.meta[0].line, batch.meta[0].byte), (3, 41));
        assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 0);
        assert_eq!(r.bytes_read(), xml.len() as u64);
        assert_eq!(one("<doc/>"), "{}");
    }

    #[test]
    fn empty_and_blank_files_have_no_records() {
        assert!(rows("", None).is_empty());
        assert!(rows(" \n\t\r\n", None).is_empty());
        assert!(rows("\u{FEFF}", Some("row")).is_empty());
        // A prolog without a root element is not well-formed: one bad record.
        let out = rows("<?xml version=\"1.0\"?>\n<!-- nothing -->\n", None);
        assert!(out.len() == 1 && out[0].contains("no root element"), "{out:?}");
    }

    #[test]
    fn malformed_xml_makes_the_record_bad_then_ends_the_file() {
        // Mismatched tags inside a row.
        let out = read_with(b"<r>\n<row><a>1</b></row>\n<row><a>2</a></row></r>", options(Some("row")));
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].0, out[0].1), (2, 4));
        assert!(out[0].2.starts_with("ERROR: malformed XML at line 2"), "{}", out[0].2);
        assert!(out[0].2.contains("</b>") || out[0].2.contains('b'), "{}", out[0].2);

        // Good rows before the error stay good; an error between rows is
        // still reported, at its own position.
        let out = rows("<r><row>1</row><row>2</row></rr><row>3</row>", Some("row"));
        assert_eq!(out.len(), 3, "{out:?}");
        assert_eq!(out[..2], ["{\"#text\":\"1\"}", "{\"#text\":\"2\"}"]);
        assert!(out[2].starts_with("ERROR: malformed XML"), "{}", out[2]);

        // Truncated: one bad record in no-row-tag mode.
        let out = read_with(b"<doc>\n  <a>1</a>\n  <b>", options(None));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].0, out[0].1), (1, 0));
        assert!(out[0].2.contains("truncated XML") && out[0].2.contains("<doc>"), "{}", out[0].2);
        // Truncated inside a tag.
        let out = rows("<doc><a x=\"1", None);
        assert_eq!(out.len(), 1);
        assert!(out[0].starts_with("ERROR: malformed XML"), "{}", out[0]);
        // Truncated in row mode after a complete row.
        let out = rows("<r><row>1</row><row><a>", Some("row"));
        assert_eq!(out.len(), 2);
        assert!(out[1].contains("truncated XML") && out[1].contains("<row>"), "{}", out[1]);
        let out = rows("<r><row>1</row>", Some("row"));
        assert_eq!(out.len(), 2);
        assert!(out[1].contains("before <r> is closed"), "{}", out[1]);

        // Content outside the root element.
        let out = rows("<doc>1</doc><doc>2</doc>", None);
        assert_eq!(out.len(), 2);
        assert!(out[1].contains("a second root element after the root element"), "{}", out[1]);
        let out = rows("hello <doc/>", None);
        assert_eq!(out.len(), 1);
        assert!(out[0].contains("text before the root element"), "{}", out[0]);
        let out = rows("<doc/>trailing", None);
        assert_eq!(out.len(), 2);
        assert!(out[1].contains("text after the root element"), "{}", out[1]);
        // Not XML at all.
        assert!(rows("{\"a\": 1}", None)[0].starts_with("ERROR"));
    }

    #[test]
    fn record_local_problems_spoil_only_their_row() {
        let xml = b"<r><row><a>\xFF</a></row><row>1 & 2</row><row a=\"&nope;\"/><row><a>&#0;</a></row><row b=1/><row><\xFF/></row><row>ok</row></r>";
        let out = rows(std::str::from_utf8(&xml[..0]).unwrap(), None);
        assert!(out.is_empty());
        let out = read_with(xml, options(Some("row")));
        let texts: Vec<&str> = out.iter().map(|r| r.2.as_str()).collect();
        assert_eq!(texts.len(), 7, "{texts:?}");
        assert_eq!(texts[0], "ERROR: invalid UTF-8 in the text of <a>");
        assert_eq!(texts[1], "ERROR: unescaped '&' in the text of <row> (write &amp;)");
        assert_eq!(texts[2], "ERROR: undefined entity &nope; (DTD and external entities are never expanded)");
        assert!(texts[3].starts_with("ERROR: invalid character reference &#0; in <a>"), "{}", texts[3]);
        assert!(texts[4].starts_with("ERROR: malformed attribute in <row>"), "{}", texts[4]);
        assert_eq!(texts[5], "ERROR: invalid UTF-8 in an element name");
        assert_eq!(texts[6], "{\"#text\":\"ok\"}");
    }

    fn billion_laughs() -> String {
        let mut xml = String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [\n <!ENTITY lol \"lol\">\n");
        xml.push_str(" <!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">\n");
        for i in 2..=9 {
            let p = i - 1;
            xml.push_str(&format!(" <!ENTITY lol{i} \"{}\">\n", format!("&lol{p};").repeat(10)));
        }
        xml.push_str("]>\n");
        xml
    }

    #[test]
    fn billion_laughs_is_one_bad_record_and_cheap() {
        let started = std::time::Instant::now();
        let xml = billion_laughs() + "<lolz>&lol9;</lolz>\n";
        let out = read_with(xml.as_bytes(), options(None));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 14);
        assert_eq!(out[0].2, "ERROR: undefined entity &lol9; (DTD and external entities are never expanded)");
        // In row mode the rows around it survive.
        let xml = billion_laughs() + "<lolz><row>&lol9;</row><row>fine</row></lolz>";
        let out = rows(&xml, Some("row"));
        assert_eq!(
            out,
            ["ERROR: undefined entity &lol9; (DTD and external entities are never expanded)", "{\"#text\":\"fine\"}"]
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // External entities (XXE) are never resolved either.
        let xml = "<!DOCTYPE d [<!ENTITY xxe SYSTEM \"file:///etc/passwd\"> <!ENTITY q \"a>b<c\">]>\n<d>&xxe;</d>";
        assert_eq!(one(xml), "ERROR: undefined entity &xxe; (DTD and external entities are never expanded)");
        assert_eq!(
            one("<!DOCTYPE d [<!ENTITY q \"a>b\">]><d a=\"&q;\"/>"),
            "ERROR: undefined entity &q; (DTD and external entities are never expanded)"
        );
        assert_eq!(one("<!DOCTYPE d SYSTEM \"http://example.invalid/d.dtd\"><d>1</d>"), "{\"#text\":\"1\"}");
    }

    #[test]
    fn deep_nesting_is_bounded_and_never_recursive() {
        let depth = 50_000;
        let xml = "<a>".repeat(depth) + "x" + &"</a>".repeat(depth);
        let out = rows(&xml, None);
        assert_eq!(out, [format!("ERROR: nesting deeper than {MAX_NESTING} levels")]);
        // In row mode the reader carries on after the deep row.
        let xml = format!("<r><row>{}</row><row>ok</row></r>", "<a>".repeat(depth) + &"</a>".repeat(depth));
        let out = rows(&xml, Some("row"));
        assert_eq!(out, [format!("ERROR: nesting deeper than {MAX_NESTING} levels"), "{\"#text\":\"ok\"}".to_string()]);
        // Just under the limit: built and written without recursion.
        let depth = MAX_NESTING - 1;
        let xml = "<d>".to_string() + &"<a>".repeat(depth) + "x" + &"</a>".repeat(depth) + "</d>";
        let out = one(&xml);
        assert_eq!(out, "{\"a\":".repeat(depth - 1) + "{\"a\":\"x\"" + &"}".repeat(depth));
    }

    #[test]
    fn a_bom_is_dropped_and_offsets_count_from_after_it() {
        let out = read_with(b"\xEF\xBB\xBF<r>\n<row a=\"1\"/></r>", options(Some("row")));
        assert_eq!(out, [(2, 4, "{\"@a\":\"1\"}".to_string())]);
        let out = read_with(b"\xEF\xBB\xBF<d/>", options(None));
        assert_eq!(out, [(1, 0, "{}".to_string())]);
        // Fewer than three bytes, and no BOM.
        assert!(rows("<", None)[0].starts_with("ERROR"));
        assert_eq!(one("<d/>"), "{}");
    }

    #[test]
    fn same_records_for_every_chunk_size_and_batch_size() {
        let mut xml = billion_laughs().into_bytes();
        xml.splice(0..0, b"\xEF\xBB\xBF".iter().copied());
        xml.extend_from_slice(
            "<r xmlns:n=\"urn:n\">\r\n <row id=\"1\"><n:a>x &amp; y</n:a><b/><b>2</b></row>\r\n <!-- c -->\n <skip><row/></skip>\n\
             <row\n id=\"2\"\n>text<![CDATA[ <raw> ]]>more<c>é</c></row><row>&lol9;</row>\n<row>\n<deep><deeper k=\"v\">1</deeper></deep>\n</row>\n"
                .as_bytes(),
        );
        xml.extend_from_slice(b"<row>\xFF</row><row>last</row><row><a>1</b></row><row>never</row></r>");
        let expected = read_with(&xml, options(Some("row")));
        assert_eq!(expected.len(), 7, "{expected:?}");
        assert_eq!(expected[0].2, "{\"@id\":\"1\",\"n:a\":\"x & y\",\"b\":[null,\"2\"]}");
        assert_eq!(expected[1].2, "{\"@id\":\"2\",\"c\":\"é\",\"#text\":\"text <raw> more\"}");
        assert!(expected[2].2.contains("&lol9;"));
        assert_eq!(expected[3].2, "{\"deep\":{\"deeper\":{\"@k\":\"v\",\"#text\":\"1\"}}}");
        assert!(expected[4].2.contains("invalid UTF-8"));
        assert_eq!(expected[5].2, "{\"#text\":\"last\"}");
        assert!(expected[6].2.starts_with("ERROR: malformed XML"));
        // read_with (the harness) has compared every chunk and batch size,
        // with and without a row tag.
        assert_eq!(read_with(&xml, options(None)).len(), 1);
    }

    #[test]
    fn lines_and_bytes_point_at_the_record_start() {
        let xml = "<r>\n<row>1</row><row>2</row>\n\n  <row\n>3</row>\r\n<row a=\"\nx\"/>\n<row/></r>";
        let out = read_with(xml.as_bytes(), options(Some("row")));
        let got: Vec<(u64, u64)> = out.iter().map(|r| (r.0, r.1)).collect();
        let expect_bytes: Vec<u64> = xml.match_indices("<row").map(|(i, _)| i as u64).collect();
        let expect_lines: Vec<u64> =
            expect_bytes.iter().map(|&b| 1 + xml[..b as usize].matches('\n').count() as u64).collect();
        assert_eq!(got, expect_lines.into_iter().zip(expect_bytes).collect::<Vec<_>>());
        assert_eq!(got.iter().map(|g| g.0).collect::<Vec<_>>(), [2, 2, 4, 6, 8]);
    }

    /// `<r>`, then `rows` rows made up on the fly, then `</r>`.
    struct ManyRows {
        rows: usize,
        next: usize,
        pending: Vec<u8>,
        at: usize,
    }

    impl Read for ManyRows {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.at == self.pending.len() {
                self.pending.clear();
                self.at = 0;
                if self.next == 0 {
                    self.pending.extend_from_slice(b"<r>\n");
                } else if self.next <= self.rows {
                    let i = self.next;
                    self.pending
                        .extend_from_slice(format!("<row id=\"{i}\"><a>{i}</a><a>x</a>\n<b>t</b></row>\n").as_bytes());
                } else if self.next == self.rows + 1 {
                    self.pending.extend_from_slice(b"</r>\n");
                } else {
                    return Ok(0);
                }
                self.next += 1;
            }
            let n = buf.len().min(self.pending.len() - self.at);
            buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    #[test]
    fn memory_does_not_grow_with_the_number_of_rows() {
        let rows = 50_000;
        let source = ManyRows { rows, next: 0, pending: Vec::new(), at: 0 };
        let mut r = XmlReader::new(source, "t.xml", 4096, options(Some("row")));
        let mut batch = Batch::default();
        let mut seen = 0;
        let mut last_line = 0;
        loop {
            batch.clear();
            let n = r.next_batch(&mut batch, 1000).unwrap();
            if n == 0 {
                break;
            }
            assert!(batch.meta.iter().all(|m| m.error.is_none()));
            seen += n;
            last_line = batch.meta[n - 1].line;
            assert!(r.builder.members.capacity() < 64 && r.builder.strs.capacity() < 256);
            assert!(r.xml.get_ref().get_ref().newlines.len() <= 4096);
            assert!(r.buf.capacity() < 4096);
        }
        assert_eq!(seen, rows);
        assert_eq!(last_line, 2 * rows as u64);
    }

    #[test]
    fn bytes_read_counts_the_source() {
        let xml = b"\xEF\xBB\xBF<r><row>1</row></r>\n";
        let mut r = XmlReader::new(&xml[..], "t.xml", 4, options(Some("row")));
        let mut batch = Batch::default();
        while r.next_batch(&mut batch, 10).unwrap() > 0 {}
        assert_eq!(r.bytes_read(), xml.len() as u64);
    }

    #[test]
    fn io_failures_are_errors_not_records() {
        struct Failing(usize);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::other("disk on fire"));
                }
                self.0 -= 1;
                buf[0] = b'<';
                Ok(1)
            }
        }
        let mut r = XmlReader::new(Failing(2), "t.xml", 8, options(None));
        let mut batch = Batch::default();
        let err = r.next_batch(&mut batch, 10).unwrap_err();
        assert!(err.message.contains("disk on fire") && err.message.contains("t.xml"), "{}", err.message);
    }
}
