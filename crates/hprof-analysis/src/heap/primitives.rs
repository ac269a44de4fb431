//! The primitive types, and their slots in small per-type tables.

use hprof_format::tags::BasicType;

/// Index of a basic type in small per-type tables.
pub(super) fn type_slot(t: BasicType) -> usize {
    t as usize
}

pub(super) const PRIMITIVES: [BasicType; 8] = [
    BasicType::Boolean,
    BasicType::Char,
    BasicType::Float,
    BasicType::Double,
    BasicType::Byte,
    BasicType::Short,
    BasicType::Int,
    BasicType::Long,
];
