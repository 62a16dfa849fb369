//! JSON documents (being written).
