//! `batch_memory_limit_bytes`: how many records to decode at once so that a
//! batch's working set (the tape, before materialization) stays near the
//! budget. Starts at a full vector and halves while batches run over the
//! budget, growing back when they use less than half of it.

use super::BATCH_RECORDS;
use crate::formats::Batch;

pub struct BatchBudget {
    limit: Option<usize>,
    records: usize,
}

impl BatchBudget {
    pub fn new(limit: Option<u64>) -> Self {
        BatchBudget { limit: limit.map(|l| l.min(usize::MAX as u64) as usize), records: BATCH_RECORDS }
    }

    /// Whether a limit sizes the batches.
    pub fn limited(&self) -> bool {
        self.limit.is_some()
    }

    /// Records to ask the decoder for next.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Adapts to the batch just decoded and releases memory a single huge
    /// batch left behind.
    pub fn observe(&mut self, batch: &mut Batch) {
        let Some(limit) = self.limit else { return };
        // A typed reader's columns (Parquet) are the working set instead.
        let used = batch.heap_bytes();
        if used > limit && self.records > 1 {
            self.records /= 2;
        } else if used < limit / 2 && self.records < BATCH_RECORDS {
            self.records = (self.records * 2).min(BATCH_RECORDS);
        }
        if batch.tape.nodes.capacity() * std::mem::size_of::<crate::value::Node>() + batch.tape.text.capacity()
            > 2 * limit
        {
            batch.tape.nodes.shrink_to(0);
            batch.tape.text.shrink_to(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn halves_over_budget_and_grows_back() {
        let mut b = BatchBudget::new(Some(1000));
        let mut batch = Batch::default();
        batch.tape.text.reserve(5000);
        b.observe(&mut batch);
        assert_eq!(b.records(), BATCH_RECORDS / 2);
        assert!(batch.tape.text.capacity() < 5000, "a batch over twice the budget gives its memory back");
        b.observe(&mut batch);
        assert_eq!(b.records(), BATCH_RECORDS);
        // Arrow columns count as the tape does: 2048 rows of 8 bytes and
        // their validity are over a budget of 1000 bytes.
        let ids = arrow::array::Int64Array::from_iter_values(0..BATCH_RECORDS as i64);
        let rows = arrow::record_batch::RecordBatch::try_from_iter([("id", std::sync::Arc::new(ids) as _)]).unwrap();
        let columns = crate::formats::ColumnRows { rows: rows.slice(0, 1000), keys: ["id".to_string()].into() };
        let mut columnar = Batch { columns: Some(columns), ..Batch::default() };
        b.observe(&mut columnar);
        assert_eq!(b.records(), BATCH_RECORDS / 2, "the slice's bytes, 8000, are over the budget");
        let unlimited = BatchBudget::new(None);
        assert_eq!(unlimited.records(), BATCH_RECORDS);
    }
}
