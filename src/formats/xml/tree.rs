//! The row tree: one record's elements, attributes and text, built from
//! the reader's events and written to the tape with explicit stacks (no
//! recursion per nesting level).

use quick_xml::escape::EscapeError;
use quick_xml::events::{BytesCData, BytesRef, BytesStart, BytesText};
use quick_xml::XmlVersion;

use super::names::{is_char, is_name};
use super::{is_xml_space, is_xml_space_char, undefined_entity, MAX_NESTING};
use crate::value::{OpenContainer, Tape};

const NONE: u32 = u32::MAX;

/// One entry of the row tree: an element, or a string (an attribute or the
/// text of an element that also has attributes or children).
#[derive(Clone, Copy, Debug)]
pub(super) struct Member {
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
pub(super) struct Builder {
    pub(super) members: Vec<Member>,
    /// Keys and values of the row.
    pub(super) strs: String,
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
    pub(super) fn begin(&mut self, e: &BytesStart<'_>, scalar_object_key: &str) -> Problem {
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
    pub(super) fn start(&mut self, e: &BytesStart<'_>) -> Problem {
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
    pub(super) fn end(&mut self) {
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

    pub(super) fn text(&mut self, t: &BytesText<'_>) -> Problem {
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
        // An empty CDATA section protects nothing: marking a zero-width
        // verbatim part kept the ordinary whitespace beside it untrimmed
        // (`x <![CDATA[]]>` read as "x ").
        if s.is_empty() {
            return;
        }
        self.seg_protected_start = self.seg_protected_start.min(self.seg.len());
        self.seg.push_str(s);
        self.seg_protected_end = self.seg.len();
    }

    pub(super) fn cdata(&mut self, c: &BytesCData<'_>) -> Problem {
        match c.xml10_content() {
            Ok(s) => {
                self.push_verbatim(&s);
                Ok(())
            }
            Err(_) => Err(format!("invalid UTF-8 in a CDATA section of <{}>", self.current_name())),
        }
    }

    pub(super) fn reference(&mut self, r: &BytesRef<'_>) -> Problem {
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
    pub(super) fn size_error(&self) -> Option<String> {
        (self.strs.len() > u32::MAX as usize || self.members.len() >= u32::MAX as usize)
            .then(|| "record larger than 4 GiB".to_string())
    }

    /// Writes the finished row (member 0, always as an object) onto the tape.
    pub(super) fn emit(&mut self, tape: &mut Tape, scalar_object_key: &str) {
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
