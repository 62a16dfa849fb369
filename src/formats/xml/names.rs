//! The lexical rules of XML 1.0 (fifth edition) that quick-xml leaves to
//! its caller: what a Name is, what a Char is, and the XML declaration's
//! grammar. A document breaking them is not well-formed (docs/formats.md,
//! "XML"); before these checks such documents came back as clean rows.

/// Production [4] NameStartChar.
fn is_name_start(c: char) -> bool {
    matches!(c, ':' | 'A'..='Z' | '_' | 'a'..='z' | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}'
        | '\u{F8}'..='\u{2FF}' | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
        | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}' | '\u{F900}'..='\u{FDCF}'
        | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// Production [4a] NameChar.
pub fn is_name_char(c: char) -> bool {
    is_name_start(c) || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// Production [5] Name, with an ASCII fast path (names are nearly always ASCII).
pub fn is_name(b: &[u8]) -> bool {
    let Some(&first) = b.first() else { return false };
    if b.is_ascii() {
        let start = |x: u8| x.is_ascii_alphabetic() || x == b'_' || x == b':';
        return start(first) && b[1..].iter().all(|&x| start(x) || x.is_ascii_digit() || x == b'-' || x == b'.');
    }
    let Ok(s) = std::str::from_utf8(b) else { return false };
    let mut chars = s.chars();
    chars.next().is_some_and(is_name_start) && chars.all(is_name_char)
}

/// Production [2] Char: what a character reference may produce.
pub fn is_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Production [23] XMLDecl, given its content between `<?` and `?>`
/// (`xml version="1.0" ...`): `version` first, then optionally `encoding`,
/// then optionally `standalone`, each after whitespace, with quoted values.
pub fn check_xml_decl(content: &[u8]) -> Result<(), String> {
    let mut s = content.strip_prefix(b"xml").ok_or("not an XML declaration")?;
    let mut seen: Vec<&[u8]> = Vec::new();
    loop {
        let ws = s.iter().take_while(|b| is_space(**b)).count();
        s = &s[ws..];
        if s.is_empty() {
            break;
        }
        if ws == 0 {
            return Err("whitespace missing between the XML declaration's attributes".into());
        }
        let n = s.iter().take_while(|b| **b != b'=' && !is_space(**b)).count();
        let (name, rest) = s.split_at(n);
        let rest = &rest[rest.iter().take_while(|b| is_space(**b)).count()..];
        let rest = rest.strip_prefix(b"=").ok_or("expected '=' in the XML declaration")?;
        let rest = &rest[rest.iter().take_while(|b| is_space(**b)).count()..];
        let (&quote, body) = rest
            .split_first()
            .filter(|(q, _)| matches!(q, b'"' | b'\''))
            .ok_or("an unquoted value in the XML declaration")?;
        let end = body.iter().position(|b| *b == quote).ok_or("an unterminated value in the XML declaration")?;
        let value = &body[..end];
        s = &body[end + 1..];
        let ok = match name {
            b"version" => {
                seen.is_empty()
                    && value.len() >= 3
                    && value.starts_with(b"1.")
                    && value[2..].iter().all(u8::is_ascii_digit)
            }
            b"encoding" => {
                seen == [&b"version"[..]]
                    && value.first().is_some_and(u8::is_ascii_alphabetic)
                    && value.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            }
            b"standalone" => {
                seen.first() == Some(&&b"version"[..])
                    && !seen.contains(&&b"standalone"[..])
                    && matches!(value, b"yes" | b"no")
            }
            _ => false,
        };
        if !ok {
            return Err(format!(
                "the XML declaration's '{}' is misplaced or has an invalid value",
                String::from_utf8_lossy(name)
            ));
        }
        seen.push(name);
    }
    if seen.first() != Some(&&b"version"[..]) {
        return Err("the XML declaration lacks its version".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["a", "_x", "ns:row", "a-b.c1", "é", "日本"] {
            assert!(is_name(good.as_bytes()), "{good}");
        }
        for bad in ["", "1a", "-a", ".a", "a b", "a<", "a&"] {
            assert!(!is_name(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn xml_declarations() {
        for good in [
            "xml version=\"1.0\"",
            "xml version='1.0' encoding='UTF-8'",
            "xml version=\"1.1\" standalone=\"yes\"",
            "xml version = \"1.0\" encoding=\"x\" standalone='no' ",
        ] {
            assert!(check_xml_decl(good.as_bytes()).is_ok(), "{good}");
        }
        for bad in [
            "xml",
            "xml encoding=\"UTF-8\"",
            "xml version=\"1.0\"encoding=\"x\"",
            "xml version=1.0",
            "xml version=\"2.0\"",
            "xml version=\"1.0\" standalone=\"maybe\"",
            "xml version=\"1.0\" standalone=\"yes\" encoding=\"x\"",
            "xml version=\"1.0\" foo=\"bar\"",
        ] {
            assert!(check_xml_decl(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn chars() {
        assert!(is_char('a') && is_char('\t') && is_char('\u{10000}'));
        assert!(!is_char('\u{1}') && !is_char('\u{FFFE}') && !is_char('\u{FFFF}'));
    }
}
