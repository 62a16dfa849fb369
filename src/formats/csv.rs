//! CSV decoder (being written).
