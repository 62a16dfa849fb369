//! `sanitize_probe(path, input_format := ...)`: the registry probe as one row.

use crate::scan::ScanPlan;

/// The probe's single row: registry, drifts and stats JSON.
pub fn probe_row(plan: &ScanPlan) -> [String; 3] {
    [plan.registry_json.clone(), plan.drifts_json.clone(), plan.probe_stats.json_text()]
}
