//! XML decoder (being written).
