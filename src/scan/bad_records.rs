//! What `on_error` does with a bad record, written once for the probe and
//! the scan so that their counts agree, and the rules that make a scan
//! whose records were mostly bad, or whose compressed stream was damaged,
//! an error rather than a table of NULLs (unless `on_error` was given).

use super::Stats;
use crate::error::{Result, SanitizeError};
use crate::formats::{BadRecord, RecordFault, RecordMeta};
use crate::options::{InputFormat, OnError, Options};

/// The end of the cause of the bad record that stands for the rest of a
/// file whose compressed stream failed (scan/readers.rs
/// `StreamChecked`): how [`BadRecords`] tells a damaged stream from a bad
/// record.
pub(crate) const REST_OF_FILE_LOST: &str = "; the rest of the file is one bad record";

/// The bad records of one probe or scan: how many, the first one's
/// description, and what kinds they were, for the error of a scan that
/// read mostly bad records and the option it suggests.
#[derive(Debug, Default)]
pub struct BadRecords {
    pub count: u64,
    first: Option<String>,
    /// CSV records of one cell where the file has more: the sign of a
    /// wrong delimiter.
    one_cell: u64,
    /// CSV records of another width than the file's (one cell included).
    ragged: u64,
    /// Bytes the input encoding does not decode.
    encoding: u64,
    /// JSON values that are not objects.
    not_object: u64,
    /// The first compressed stream that failed: its file, where the lost
    /// text begins and why.
    damaged: Option<String>,
    /// Lines `csv_skip_lines` dropped: read and skipped, neither good nor bad.
    skipped_lines: u64,
}

impl BadRecords {
    /// Counts a bad record of `file` in `stats` as `on_error` treats it
    /// (the row itself was already dropped or emitted as NULLs by whoever
    /// decoded it, by the same `on_error`); `stop` is the error naming the
    /// file, line and byte.
    pub fn handle(
        &mut self,
        file: &str,
        meta: &RecordMeta,
        bad: &BadRecord,
        on_error: OnError,
        stats: &mut Stats,
    ) -> Result<()> {
        let cause = bad.cause.as_str();
        if bad.fault == RecordFault::SkippedLine {
            // A line the dialect skips before the header is no bad record
            // and never a row, whatever `on_error` says: it is counted as
            // skipped so that no line goes in silence.
            self.skipped_lines += 1;
            stats.rows_skipped += 1;
            return Ok(());
        }
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(format!("in file \"{file}\" at line {} (byte {}): {cause}", meta.line, meta.byte));
        }
        self.classify(file, meta, bad);
        match on_error {
            OnError::Stop => Err(bad_record_error(file, meta.line, meta.byte, cause)),
            OnError::SkipRow => {
                stats.rows_skipped += 1;
                Ok(())
            }
            OnError::EmitNullRow => {
                stats.rows_nulled += 1;
                stats.rows_emitted += 1;
                Ok(())
            }
        }
    }

    /// A record that decoded but holds values the registry does not take
    /// (strict mode): `stop` fails naming the first such value, `skip_row`
    /// drops the record, `emit_null_row` keeps it with only those values
    /// NULL (counted as nulled). True when the row is kept. Not a bad record
    /// for the all-bad rule: it was read.
    pub fn handle_violation(
        &self,
        file: &str,
        meta: &RecordMeta,
        violation: &str,
        on_error: OnError,
        stats: &mut Stats,
    ) -> Result<bool> {
        match on_error {
            OnError::Stop => {
                Err(bad_record_error(file, meta.line, meta.byte, &format!("{violation} (schema_mode 'strict')")))
            }
            OnError::SkipRow => {
                stats.rows_skipped += 1;
                Ok(false)
            }
            OnError::EmitNullRow => {
                stats.rows_nulled += 1;
                Ok(true)
            }
        }
    }

    /// Counts `cause` by kind, for the error's advice.
    fn classify(&mut self, file: &str, meta: &RecordMeta, bad: &BadRecord) {
        let cause = bad.cause.as_str();
        if bad.fault == RecordFault::Damaged {
            let failure = cause.strip_suffix(REST_OF_FILE_LOST).unwrap_or(cause);
            if self.damaged.is_none() {
                self.damaged = Some(format!(
                    "the compressed stream of file \"{file}\" is damaged: {failure}; the text from line {} (byte {}) on is lost",
                    meta.line, meta.byte
                ));
            }
            return;
        }
        if let Some(found) = cause.strip_prefix("expected ").and_then(|rest| rest.split_once(" cells but found ")) {
            self.ragged += 1;
            self.one_cell += u64::from(found.1 == "1" && found.0 != "1");
        }
        match bad.fault {
            RecordFault::BadEncoding => self.encoding += 1,
            RecordFault::NotAnObject => self.not_object += 1,
            _ => {}
        }
    }

    /// A scan that read records and found every one bad has read nothing,
    /// and one that found more than half of them bad (two at least) has
    /// read mostly NULLs: both are errors with the counts, the first cause
    /// and the option most likely to help. So is a compressed stream that
    /// failed part way, which lost the rest of its file. An `on_error`
    /// the user chose explicitly accepts all of these (the NULL rows, the
    /// empty result, the rows before the damage are what they asked for).
    /// The name stays from when only the all-bad rule existed; the probe
    /// and the scan both call it, so they judge alike.
    pub fn check_not_all_bad(&self, rows_read: u64, options: &Options) -> Result<()> {
        // Skipped lines were read, but they are neither good nor bad records.
        let rows_read = rows_read.saturating_sub(self.skipped_lines);
        if options.origins.on_error == crate::options::Origin::Given {
            return Ok(());
        }
        if let Some(damaged) = &self.damaged {
            return Err(SanitizeError::input(format!(
                "{damaged}. Fetch or repair the file again, or pass on_error := 'emit_null_row' (or 'skip_row') to keep the records read before the damage"
            )));
        }
        let all = rows_read > 0 && self.count >= rows_read;
        let most = self.count >= 2 && self.count.saturating_mul(2) > rows_read;
        if !all && !most {
            return Ok(());
        }
        let first = self.first.as_deref().unwrap_or("");
        let what = if all {
            format!("every record read was bad ({} of {rows_read}), so nothing was read", self.count)
        } else {
            format!("most records read were bad ({} of {rows_read})", self.count)
        };
        Err(SanitizeError::input(format!(
            "{what}; the first {first}. {}, or pass on_error := 'skip_row' or on_error := 'emit_null_row' explicitly to accept the result",
            self.advice(options)
        )))
    }

    /// What most of the bad records suggest: the option to try.
    fn advice(&self, options: &Options) -> String {
        let most = |n: u64| n.saturating_mul(2) > self.count;
        let csv = options.input_format == InputFormat::Csv;
        if most(self.encoding) {
            let encoding = match options.input_text_encoding {
                crate::options::TextEncoding::Utf8 => "UTF-8",
                other => other.name(),
            };
            let others = if options.input_text_encoding == crate::options::TextEncoding::Utf8 {
                "'windows-1252', 'latin-1' or 'utf-16'"
            } else {
                "'utf-8', 'windows-1252', 'latin-1' or 'utf-16'"
            };
            return format!(
                "Most of them hold bytes that are not {encoding} text: the file is probably in another encoding; pass input_text_encoding := {others}, whichever the file is in"
            );
        }
        if csv && most(self.one_cell) {
            let delimiter = String::from_utf8_lossy(&options.csv_delimiter).escape_debug().to_string();
            return format!(
                "Most of them are one cell where the file has more: its delimiter is probably not '{delimiter}'; pass csv_delimiter := '\\t' (or ';', '|', the file's delimiter), or csv_auto_detect := true to detect the dialect"
            );
        }
        if csv && most(self.ragged) {
            return "Most of them have another number of cells than the file's first line: check the dialect (csv_delimiter, csv_quote, csv_skip_lines, csv_has_header), or pass csv_auto_detect := true to detect it".to_string();
        }
        if most(self.not_object) {
            return "Most of them are not JSON objects: check input_format (a file holding one JSON array is read by json_array, one document by json)".to_string();
        }
        "Check the format and its options".to_string()
    }
}

fn bad_record_error(file: &str, line: u64, byte: u64, cause: &str) -> SanitizeError {
    SanitizeError::input(bad_record_message(file, line, byte, cause))
}

/// What `on_error := 'stop'` says of a bad record (also a reject's message).
pub(crate) fn bad_record_message(file: &str, line: u64, byte: u64, cause: &str) -> String {
    format!(
        "bad record in file \"{file}\" at line {line} (byte {byte}): {cause}. Pass on_error := 'skip_row' to drop such rows or on_error := 'emit_null_row' to keep them as NULLs"
    )
}

#[cfg(test)]
mod tests {
    use super::super::tests::{run, run_format};
    use crate::options::{InputFormat, ParamValue};

    fn s(v: &str) -> ParamValue {
        ParamValue::Str(v.to_string())
    }

    /// `text` written to a file named `name`, read by `function`.
    fn read(
        function: &str,
        format: InputFormat,
        name: &str,
        bytes: &[u8],
        params: &[(&str, ParamValue)],
    ) -> Result<super::super::tests::Run, String> {
        let dir = crate::test_support::scratch_dir("bad-records");
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let result = run_format(function, format, path.to_str().unwrap(), params);
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    #[test]
    fn a_scan_of_mostly_bad_records_fails_unless_on_error_is_given() {
        let text = "{\"a\":1}\n[1]\n[2]\n";
        let e = run(text, &[]).unwrap_err();
        assert!(e.starts_with("sanitize_jsonl: most records read were bad (2 of 3); the first in file"), "{e}");
        assert!(e.contains("at line 2 (byte 8): the line is a JSON array, not an object. Most of them are not JSON objects: check input_format"), "{e}");
        assert!(
            e.ends_with(
                "or pass on_error := 'skip_row' or on_error := 'emit_null_row' explicitly to accept the result"
            ),
            "{e}"
        );
        assert_eq!(run(text, &[("on_error", s("emit_null_row"))]).unwrap().rows.len(), 3);
        assert_eq!(run(text, &[("on_error", s("skip_row"))]).unwrap().rows.len(), 1);
        // Half is not more than half; one bad record alone is not "most".
        assert_eq!(run("{\"a\":1}\n[1]\n", &[]).unwrap().rows.len(), 2);
        assert_eq!(run("{\"a\":1}\n{\"a\":2}\n[1]\n[2]\n", &[]).unwrap().rows.len(), 4);
        // Every record bad keeps its own words.
        assert!(run("[1]\n", &[]).unwrap_err().contains("every record read was bad (1 of 1), so nothing was read"));
    }

    #[test]
    fn a_strict_scan_judges_its_bad_records_as_the_probe_does() {
        // Strict mode reads in one pass: the scan itself must refuse.
        let registry = run("{\"a\":1}\n", &[]).unwrap().plan.registry_json.clone();
        let strict = [("registry", s(&registry)), ("schema_mode", s("strict"))];
        let e = run("{\"a\":1}\n[1]\n[2]\n", &strict).unwrap_err();
        assert!(e.contains("most records read were bad (2 of 3)"), "{e}");
    }

    #[test]
    fn a_tab_separated_file_read_with_commas_names_the_delimiter() {
        // A comma in the header's last name makes two columns; most rows
        // have no comma, so they are one cell.
        let tsv = "id\tname\tnote, long\n1\tann\tx\n2\tbob\ty\n3\tcy\tz, w\n";
        let e = read("sanitize_csv", InputFormat::Csv, "t.csv", tsv.as_bytes(), &[]).unwrap_err();
        assert!(e.contains("most records read were bad (2 of 3)"), "{e}");
        assert!(e.contains("expected 2 cells but found 1"), "{e}");
        assert!(
            e.contains("Most of them are one cell where the file has more: its delimiter is probably not ','; pass csv_delimiter := '\\t' (or ';', '|', the file's delimiter), or csv_auto_detect := true"),
            "{e}"
        );
        let r = read("sanitize_csv", InputFormat::Csv, "t.csv", tsv.as_bytes(), &[("csv_delimiter", s("\t"))]).unwrap();
        assert_eq!(r.rows.len(), 3);
    }

    #[test]
    fn a_file_in_another_encoding_names_input_text_encoding() {
        let latin1 = b"id,city\n1,M\xe1laga\n2,C\xe1diz\n3,Oslo\n";
        let e = read("sanitize_csv", InputFormat::Csv, "l.csv", latin1, &[]).unwrap_err();
        assert!(e.contains("most records read were bad (2 of 3)"), "{e}");
        assert!(
            e.contains("Most of them hold bytes that are not UTF-8 text: the file is probably in another encoding; pass input_text_encoding := 'windows-1252', 'latin-1' or 'utf-16'"),
            "{e}"
        );
        let r =
            read("sanitize_csv", InputFormat::Csv, "l.csv", latin1, &[("input_text_encoding", s("latin-1"))]).unwrap();
        assert_eq!(r.column("city")[0], serde_json::json!("Málaga"));
    }

    #[test]
    fn a_bad_record_of_a_file_read_as_windows_1252_names_windows_1252() {
        // 0x81 is one of the five bytes windows-1252 leaves undefined.
        let text = b"id,name\n1,caf\xe9\n2,x\x81y\n";
        let e = read(
            "sanitize_csv",
            InputFormat::Csv,
            "w.csv",
            text,
            &[("input_text_encoding", s("windows-1252")), ("on_error", s("stop"))],
        )
        .unwrap_err();
        assert!(e.contains("at line 3 (byte 16): undecodable windows-1252 (one of the bytes 0x81, 0x8D, 0x8F, 0x90 and 0x9D, which it leaves undefined) at byte 3 of the record"), "{e}");
        assert!(!e.contains("UTF-8"), "{e}");
        let json = b"{\"a\":\"caf\xe9\"}\n{\"a\":\"\x81\"}\n";
        let e = read(
            "sanitize_jsonl",
            InputFormat::Jsonl,
            "w.jsonl",
            json,
            &[("input_text_encoding", s("cp1252")), ("on_error", s("stop"))],
        )
        .unwrap_err();
        assert!(e.contains("line 2") && e.contains("undecodable windows-1252") && !e.contains("UTF-8"), "{e}");
    }

    #[test]
    fn lone_surrogate_escapes_are_not_taken_for_another_encoding() {
        let text = "{\"a\":\"\\ud800\"}\n{\"a\":\"\\udfff\"}\n{\"a\":\"x\"}\n";
        let e = run(text, &[]).unwrap_err();
        assert!(e.contains("most records read were bad (2 of 3)") && e.contains("lone surrogate"), "{e}");
        assert!(e.contains("Check the format and its options") && !e.contains("input_text_encoding"), "{e}");
    }

    #[test]
    fn a_damaged_compressed_stream_fails_unless_on_error_is_given() {
        use std::io::Write as _;
        let text: String = (0..4000).map(|i| format!("{{\"a\":{i}}}\n")).collect();
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(text.as_bytes()).unwrap();
        let gz = e.finish().unwrap();
        let cut = &gz[..gz.len() / 2];
        let e = read("sanitize_jsonl", InputFormat::Jsonl, "t.jsonl.gz", cut, &[]).unwrap_err();
        assert!(e.starts_with("sanitize_jsonl: the compressed stream of file \""), "{e}");
        assert!(e.contains("t.jsonl.gz\" is damaged: the gzip stream is truncated"), "{e}");
        assert!(e.contains(") on is lost. Fetch or repair the file again, or pass on_error := 'emit_null_row' (or 'skip_row') to keep the records read before the damage"), "{e}");
        // Asked for: the records before the damage, and one NULL row for the rest.
        let r =
            read("sanitize_jsonl", InputFormat::Jsonl, "t.jsonl.gz", cut, &[("on_error", s("emit_null_row"))]).unwrap();
        assert!(r.rows.len() > 1 && r.rows.len() < 4000, "{}", r.rows.len());
        assert_eq!(r.rows.last().unwrap()[0], serde_json::Value::Null);
        // A sound stream reads as before.
        assert_eq!(read("sanitize_jsonl", InputFormat::Jsonl, "t.jsonl.gz", &gz, &[]).unwrap().rows.len(), 4000);
    }

    #[test]
    fn utf32_without_a_byte_order_mark_is_named_utf32() {
        let le: Vec<u8> = "{\"a\": 1}\n".chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
        let e = read("sanitize_jsonl", InputFormat::Jsonl, "u.jsonl", &le, &[]).unwrap_err();
        assert!(
            e.ends_with("u.jsonl\" looks like UTF-32LE without a byte-order mark (four bytes a character, most of them zero), which this reader cannot decode; convert it to UTF-8 (iconv -f UTF-32LE -t UTF-8)"),
            "{e}"
        );
        assert!(!e.contains("U+0000"), "{e}");
        let be: Vec<u8> = "id,x\n1,2\n".chars().flat_map(|c| (c as u32).to_be_bytes()).collect();
        let e = read("sanitize_csv", InputFormat::Csv, "u.csv", &be, &[]).unwrap_err();
        assert!(e.contains("looks like UTF-32BE"), "{e}");
    }
}
