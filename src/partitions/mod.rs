//! The partition pipeline's engine: the Hive date/hour plan of a lake and
//! what discovery finds under it (plan.rs), the run that writes one Parquet
//! file per partition carrying the registry from each into the next
//! (run.rs), and the pass that writes one input to one file, strict first
//! and additive on drift (pass.rs), which `sanitize_ingest` shares. The SQL
//! surface over it is functions/.

pub mod pass;
pub mod plan;
pub mod run;
