//! Placeholder: units parsing (being written).
