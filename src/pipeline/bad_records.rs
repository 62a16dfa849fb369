//! What `on_error` does with a bad record, written once for the probe and
//! the scan so that their counts agree, and the rule that a scan whose every
//! record was bad is an error rather than a table of NULLs.

use super::Stats;
use crate::error::{Result, SanitizeError};
use crate::formats::RecordMeta;
use crate::options::{OnError, Options};

/// The bad records of one probe or scan: how many, and the first one's
/// description for the all-bad error.
#[derive(Debug, Default)]
pub struct BadRecords {
    pub count: u64,
    first: Option<String>,
}

impl BadRecords {
    /// Counts a bad record of `file` in `stats` as `on_error` treats it
    /// (the row itself was already dropped or emitted as NULLs by whoever
    /// decoded it, by the same `on_error`); `stop` is the error naming the
    /// file, line and byte.
    pub fn handle(
        &mut self,
        function: &str,
        file: &str,
        meta: &RecordMeta,
        cause: &str,
        on_error: OnError,
        stats: &mut Stats,
    ) -> Result<()> {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(format!("in file \"{file}\" at line {} (byte {}): {cause}", meta.line, meta.byte));
        }
        match on_error {
            OnError::Stop => Err(bad_record_error(function, file, meta.line, meta.byte, cause)),
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
        function: &str,
        file: &str,
        meta: &RecordMeta,
        violation: &str,
        on_error: OnError,
        stats: &mut Stats,
    ) -> Result<bool> {
        match on_error {
            OnError::Stop => Err(bad_record_error(
                function,
                file,
                meta.line,
                meta.byte,
                &format!("{violation} (schema_mode 'strict')"),
            )),
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

    /// A scan that read records and found every one bad has read nothing: an
    /// error with the count and the first cause, unless the user chose an
    /// `on_error` explicitly (then the NULL rows or the empty result are
    /// what they asked for).
    pub fn check_not_all_bad(&self, function: &str, rows_read: u64, options: &Options) -> Result<()> {
        if rows_read == 0 || self.count < rows_read || options.is_given("on_error") {
            return Ok(());
        }
        let first = self.first.as_deref().unwrap_or("");
        Err(SanitizeError::input(format!(
            "{function}: every record read was bad ({} of {rows_read}), so nothing was read; the first {first}. Check the format and its options, or pass on_error := 'skip_row' or on_error := 'emit_null_row' explicitly to accept the result",
            self.count
        )))
    }
}

fn bad_record_error(function: &str, file: &str, line: u64, byte: u64, cause: &str) -> SanitizeError {
    SanitizeError::input(bad_record_message(function, file, line, byte, cause))
}

/// What `on_error := 'stop'` says of a bad record (also a reject's message).
pub(crate) fn bad_record_message(function: &str, file: &str, line: u64, byte: u64, cause: &str) -> String {
    format!(
        "{function}: bad record in file \"{file}\" at line {line} (byte {byte}): {cause}. Pass on_error := 'skip_row' to drop such rows or on_error := 'emit_null_row' to keep them as NULLs"
    )
}
