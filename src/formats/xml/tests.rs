//! Tests of the XML reader.

use super::*;
use crate::formats::{harness, RecordReader};
use crate::options::InputFormat;
use crate::value::write_compact_json;
use std::io;

fn options(row_tag: Option<&str>) -> XmlOptions {
    XmlOptions {
        row_tag: row_tag.map(str::to_string),
        scalar_object_key: "#text".to_string(),
        max_record_bytes: crate::formats::DEFAULT_MAX_RECORD_BYTES,
    }
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
    let opts = XmlOptions {
        row_tag: None,
        scalar_object_key: "value".to_string(),
        max_record_bytes: crate::formats::DEFAULT_MAX_RECORD_BYTES,
    };
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
    // An empty CDATA section protects no whitespace beside it (W3C
    // ibm20v01.xml: `My Name is SnowMan. <![CDATA[]]>` kept its space).
    assert_eq!(
        one("<d><a>x <![CDATA[]]></a><b><![CDATA[]]>  &amp;</b><c k=\"1\">  \n <![CDATA[]]>\t<![CDATA[ ]]>x</c><e><![CDATA[]]></e></d>"),
        "{\"a\":\"x\",\"b\":\"&\",\"c\":{\"@k\":\"1\",\"#text\":\" x\"},\"e\":null}"
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
fn the_signature_is_the_root_name_read_no_further_than_its_start_tag() {
    let xml = "<?xml version=\"1.0\"?>\n<!-- c -->\n<doc v=\"1\"><a>1</a></doc>";
    let mut r = XmlReader::new(xml.as_bytes(), "t.xml", 1, options(Some("a")));
    assert_eq!(r.signature().unwrap(), Some(crate::formats::Signature::XmlRoot("doc".into())));
    // Only the start tag was read: the rows are all still to come.
    assert!(r.bytes_read() < xml.len() as u64, "{}", r.bytes_read());
    let mut batch = Batch::default();
    assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 1);
    // No root element, no signature.
    assert_eq!(XmlReader::new(&b"  "[..], "t.xml", 4, options(None)).signature().unwrap(), None);
}

#[test]
fn without_row_tag_the_document_is_one_record() {
    let xml = "<?xml version=\"1.0\"?>\n<!-- c --><?pi x?>\n<doc v=\"1\">\n<a>1</a><a>2</a></doc>\n";
    let mut r = XmlReader::new(xml.as_bytes(), "t.xml", 3, options(None));
    let mut batch = Batch::default();
    assert_eq!(r.next_batch(&mut batch, 10).unwrap(), 1);
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
    // (A BOM is the text decoder's to drop, before this reader.)
    let xml = b"<r><row>1</row></r>\n";
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
