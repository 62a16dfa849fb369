//! Decoders: bytes in, records on a [`crate::value::Tape`] out, each with its
//! location. None of them infers or routes anything.

pub mod json;
pub mod jsonl;

/// Where a record starts, and why it is bad if it is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RecordMeta {
    /// 1-based line of the record's first byte.
    pub line: u64,
    /// Byte offset of the record's first byte in the file.
    pub byte: u64,
    /// Set when the record could not be decoded; its tape root is a null.
    pub error: Option<String>,
}

/// One batch of decoded records: `meta[i]` describes `tape.roots[i]`.
#[derive(Default, Debug)]
pub struct Batch {
    pub tape: crate::value::Tape,
    pub meta: Vec<RecordMeta>,
}

impl Batch {
    pub fn clear(&mut self) {
        self.tape.clear();
        self.meta.clear();
    }
    pub fn len(&self) -> usize {
        self.meta.len()
    }
    pub fn is_empty(&self) -> bool {
        self.meta.is_empty()
    }
}
