//! `sanitize_partitions(source_prefix, ...)` and
//! `sanitize_latest_registry(output_prefix, ...)`: their SQL surface. The
//! plan, discovery and the layout's latest registry are partitions/plan.rs.

use crate::error::Result;
use crate::options::ParamValue;
pub use crate::partitions::plan::{
    discover, plan, PlanOptions, FUNCTION, LATEST_FUNCTION, LATEST_PARAMETERS, PARAMETERS,
};

/// `sanitize_latest_registry`: a `sanitize_ingest` checkpoint's last entry
/// (at `output_prefix`, or the default one inside it), else the newest
/// partition of the layout whose file carries a registry: (partition key,
/// file, registry).
pub fn latest_registry(
    output_prefix: &str,
    params: &[(&str, ParamValue)],
    opener: &crate::formats::byte_source::FileOpener,
) -> Result<Option<(String, String, String)>> {
    if let Some(found) = super::sanitize_ingest::latest_registry(LATEST_FUNCTION, output_prefix)? {
        return Ok(Some(found));
    }
    crate::partitions::plan::latest_in_layout(output_prefix, params, opener)
}
