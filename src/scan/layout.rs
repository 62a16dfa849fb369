//! The columns of a scan's result, in order: the data columns (each
//! field's current versions), the hive partition columns, the rescue
//! column, then the four ETL columns. DuckDB's result (ffi/table.rs) and
//! the Parquet files the pipeline writes (output/arrow_batch.rs) both
//! iterate this one list, so the two layouts cannot disagree.

use super::{partition_kind, ScanPlan};
use crate::infer::{ScalarKind, TimeUnit, TypeNode};
use crate::registry::naming::EtlColumn;

/// Where a result column's values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnSource {
    /// The scan chunk's column of this index (data, partition, rescue).
    Chunk(usize),
    /// An ETL column, made from the plan and the chunk's file.
    Etl(EtlColumn),
}

/// One column of a scan's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultColumn<'p> {
    pub name: &'p str,
    pub ty: TypeNode,
    pub source: ColumnSource,
}

impl EtlColumn {
    /// The column's type: text, and the scan's start as TIMESTAMPTZ.
    pub fn ty(self) -> TypeNode {
        match self {
            EtlColumn::IngestionTimestamp => TypeNode::Scalar(ScalarKind::Timestamp(TimeUnit::Micros)),
            _ => TypeNode::Scalar(ScalarKind::Str),
        }
    }
}

impl ScanPlan {
    /// Every column of the result, in the order a scan returns them.
    pub fn result_columns(&self) -> Vec<ResultColumn<'_>> {
        let data = self.schema.output_versions().map(|v| (v.output_name.as_str(), v.ty.clone()));
        let partitions =
            self.partitions.columns.iter().map(|c| (c.name.as_str(), TypeNode::Scalar(partition_kind(c.ty))));
        let rescue = self.options.rescue_column.as_deref().map(|name| (name, TypeNode::Scalar(ScalarKind::Str)));
        let mut out: Vec<ResultColumn<'_>> = data
            .chain(partitions)
            .chain(rescue)
            .enumerate()
            .map(|(i, (name, ty))| ResultColumn { name, ty, source: ColumnSource::Chunk(i) })
            .collect();
        out.extend(EtlColumn::ALL.iter().map(|&e| ResultColumn {
            name: e.name(),
            ty: e.ty(),
            source: ColumnSource::Etl(e),
        }));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{InputFormat, Options, ParamValue};

    #[test]
    fn data_partition_rescue_then_etl_columns_in_that_order() {
        let dir = std::env::temp_dir().join(format!("ss-layout-{}", std::process::id()));
        let day = dir.join("day=7");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("x.jsonl"), "{\"b\": 1, \"a\": \"x\"}\n").unwrap();
        let params = [("hive_partitioning", ParamValue::Bool(true)), ("rescue_column", ParamValue::Str("_r".into()))];
        let options = Options::parse("sanitize_jsonl", Some(InputFormat::Jsonl), &params).unwrap();
        let glob = format!("{}/*/*.jsonl", dir.display());
        let plan = super::super::plan("sanitize_jsonl", vec![glob], options).unwrap();
        let columns = plan.result_columns();
        let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["a", "b", "day", "_r", "source_file", "ingestion_timestamp", "schema_registry", "schema_drifts"]
        );
        let sources: Vec<ColumnSource> = columns.iter().map(|c| c.source).collect();
        assert_eq!(sources[..4], [0, 1, 2, 3].map(ColumnSource::Chunk));
        assert_eq!(sources[4..], EtlColumn::ALL.map(ColumnSource::Etl));
        // Every chunk column is one result column, in the chunk's order.
        assert_eq!(super::super::Chunk::new(&plan).columns.len(), 4);
        assert_eq!(columns[5].ty, TypeNode::Scalar(ScalarKind::Timestamp(TimeUnit::Micros)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
