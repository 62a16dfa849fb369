//! One record's JSON text read token by token, for the router's direct
//! writes (route/direct.rs): the structure bytes, keys without escapes, and
//! each scalar put on a scratch tape exactly as the parser puts it on a
//! record's tape (the same `parse_string`, `parse_number` and literals).
//! Anything the direct writer does not take (a key with an escape, a
//! string with a lone surrogate, a malformed value) is `None`: the record
//! is then parsed and routed the general way, which decides it.

use super::{quote_or_backslash, skip_json_ws, Parser};
use crate::value::{Node, Tape};

pub struct JsonCursor<'a> {
    p: Parser<'a>,
}

impl<'a> JsonCursor<'a> {
    pub fn new(text: &'a str) -> Self {
        JsonCursor { p: Parser::new(text, false, None, false) }
    }

    /// The next byte after whitespace, not consumed.
    #[inline(always)]
    pub fn peek(&mut self) -> Option<u8> {
        self.p.pos = skip_json_ws(self.p.bytes, self.p.pos);
        self.p.bytes.get(self.p.pos).copied()
    }

    /// Consumes the byte [`JsonCursor::peek`] gave.
    #[inline(always)]
    pub fn bump(&mut self) {
        self.p.pos += 1;
    }

    /// At a key's opening quote (peeked): the key, which has no escape, and
    /// its ':'; `None` for anything else.
    #[inline(always)]
    pub fn key(&mut self) -> Option<&'a str> {
        let start = self.p.pos + 1;
        let len = quote_or_backslash(self.p.bytes.get(start..)?)?;
        if self.p.bytes[start + len] != b'"' {
            return None;
        }
        // '"' is ASCII: both ends are character boundaries.
        let key = self.p.text.get(start..start + len)?;
        self.p.pos = start + len + 1;
        if self.peek() != Some(b':') {
            return None;
        }
        self.p.pos += 1;
        Some(key)
    }

    /// A scalar after whitespace, pushed onto `tape` as the one node the
    /// parser would push for it (the arms of `Parser::parse_with`, in its
    /// order); `None` for a container, a malformed value, or a string with
    /// a lone surrogate (a bad record the general way).
    #[inline(always)]
    pub fn scalar(&mut self, tape: &mut Tape) -> Option<()> {
        let b = self.peek()?;
        let p = &mut self.p;
        match b {
            b'"' => {
                p.pos += 1;
                let (start, len) = p.parse_string(tape, true).ok()?;
                if p.lone_surrogate.is_some() {
                    return None;
                }
                tape.nodes.push(Node::Str { start, len });
            }
            b't' => {
                p.literal::<false>(b"true", Node::Bool(true), tape).ok()?;
            }
            b'f' => {
                p.literal::<false>(b"false", Node::Bool(false), tape).ok()?;
            }
            b'n' if p.bytes[p.pos..].starts_with(b"null") => {
                p.literal::<false>(b"null", Node::Null, tape).ok()?;
            }
            b'-' | b'0'..=b'9' if !p.at_non_finite() => {
                let n = p.parse_number(true).ok()?;
                tape.nodes.push(n);
            }
            b'-' | b'+' | b'n' | b'N' | b'i' | b'I' => {
                let f = p.parse_non_finite().ok()?;
                tape.nodes.push(Node::Float(f));
            }
            _ => return None,
        }
        Some(())
    }

    /// Any value after whitespace, parsed onto `tape` as the parser parses
    /// it (its root the first node pushed); `None` where the parser refuses
    /// it.
    pub fn value(&mut self, tape: &mut Tape) -> Option<()> {
        self.peek()?;
        let mut p = Parser::new(self.p.text, false, None, false);
        p.pos = self.p.pos;
        p.parse::<false>(tape).ok()?;
        self.p.pos = p.pos;
        Some(())
    }

    /// Only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::JsonCursor;
    use crate::formats::json::parse_value_prefix;
    use crate::formats::json::texts::{leaves, SCALARS};
    use crate::value::Tape;

    /// The node the parser gives `text` as a whole value, when a scalar.
    fn parsed(text: &str) -> Option<crate::value::Node> {
        let mut tape = Tape::default();
        let (root, used) = parse_value_prefix(text, &mut tape).ok()?;
        let node = tape.nodes[root as usize];
        let scalar = !matches!(node, crate::value::Node::Object { .. } | crate::value::Node::List { .. });
        let rest_is_space = text[used..].bytes().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        (scalar && rest_is_space).then_some(node)
    }

    fn check(text: &str) -> Result<(), TestCaseError> {
        let mut tape = Tape::default();
        let mut cursor = JsonCursor::new(text);
        let read = cursor.scalar(&mut tape).filter(|_| cursor.at_end()).map(|_| tape.nodes[0]);
        let want = parsed(text);
        if let Some(node) = read {
            // By their debug text: NaN is no equal of itself.
            prop_assert_eq!(format!("{:?}", Some(node)), format!("{want:?}"), "for {:?}", text);
            if let crate::value::Node::Str { start, len } = node {
                let mut theirs = Tape::default();
                parse_value_prefix(text, &mut theirs).unwrap();
                prop_assert_eq!(tape.text_of(start, len), theirs.text_of(start, len));
            }
        } else if let Some(node) = want {
            // Declined: only where the parser keeps text the cursor does not
            // (a lone surrogate is the parser's error, never a value here).
            prop_assert!(false, "the cursor declined {:?}, which parses as {:?}", text, node);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: crate::test_support::cases(2048), .. ProptestConfig::default() })]

        /// A scalar the cursor reads is the node the parser gives, with
        /// the same text; a scalar the parser reads, the cursor reads too.
        #[test]
        fn scalars_are_read_as_the_parser_reads_them(
            v in leaves(&[SCALARS, &["Infinity", "-Infinity", "+inf", "nan", "-NaN", "1.25", "\"\\ud800\"", "\"a\\u0041\""]].concat(), -99..99),
            insert in prop::sample::select(vec!["", "\"", "\\", "x", "1", ".", "-", "e", " ", "\\u00e9", "\\ud800", "N", "aN"]),
            cut in any::<prop::sample::Index>(),
        ) {
            check(&v)?;
            let at = cut.index(v.len() + 1);
            if v.is_char_boundary(at) {
                check(&format!("{}{insert}{}", &v[..at], &v[at..]))?;
            }
        }
    }

    #[test]
    fn keys_without_escapes_are_read_and_others_declined() {
        let mut c = JsonCursor::new(r#" "ab" : 1"#);
        assert_eq!(c.peek(), Some(b'"'));
        assert_eq!(c.key(), Some("ab"));
        let mut tape = Tape::default();
        assert!(c.scalar(&mut tape).is_some() && c.at_end());
        assert_eq!(tape.nodes[0], crate::value::Node::Int(1));
        for text in [r#""a\"b":1"#, r#""ab" 1"#, r#""ab"#, "\"\u{e9}\":1"] {
            let mut c = JsonCursor::new(text);
            c.peek();
            assert_eq!(c.key().is_some(), text.starts_with("\"\u{e9}"), "{text}");
        }
        let mut c = JsonCursor::new(r#"{"a":1}"#);
        assert!(c.scalar(&mut Tape::default()).is_none(), "a container is no scalar");
    }
}
