//! What every heap walk (the dump's, the probe's) makes of the values JVMTI reports: HPROF's basic types.
//! The callbacks themselves are `jvmti::heap_walk`'s safe visitor.

use hprof_format::tags::BasicType;
use jvmti::heap_walk::PrimitiveValue;
pub use jvmti::heap_walk::{ABORT, HeapVisitor, VISIT};
use jvmti::sys;

pub fn basic_type(t: u32) -> Option<BasicType> {
    Some(match t {
        sys::JVMTI_PRIMITIVE_TYPE_BOOLEAN => BasicType::Boolean,
        sys::JVMTI_PRIMITIVE_TYPE_BYTE => BasicType::Byte,
        sys::JVMTI_PRIMITIVE_TYPE_CHAR => BasicType::Char,
        sys::JVMTI_PRIMITIVE_TYPE_SHORT => BasicType::Short,
        sys::JVMTI_PRIMITIVE_TYPE_INT => BasicType::Int,
        sys::JVMTI_PRIMITIVE_TYPE_LONG => BasicType::Long,
        sys::JVMTI_PRIMITIVE_TYPE_FLOAT => BasicType::Float,
        sys::JVMTI_PRIMITIVE_TYPE_DOUBLE => BasicType::Double,
        _ => return None,
    })
}

pub fn primitive_array_name(ty: BasicType) -> &'static str {
    match ty {
        BasicType::Boolean => "boolean[]",
        BasicType::Byte => "byte[]",
        BasicType::Char => "char[]",
        BasicType::Short => "short[]",
        BasicType::Int => "int[]",
        BasicType::Long => "long[]",
        BasicType::Float => "float[]",
        BasicType::Double => "double[]",
        BasicType::Object => "java.lang.Object[]",
    }
}

/// A primitive value's type and raw bits, zero-extended.
pub fn primitive_bits(value: PrimitiveValue) -> Option<(BasicType, u64)> {
    Some((basic_type(value.ty)?, value.bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_values_keep_their_type_and_bits() {
        let v = PrimitiveValue::of(sys::jvalue { i: -2 }, sys::JVMTI_PRIMITIVE_TYPE_INT).unwrap();
        assert_eq!(primitive_bits(v), Some((BasicType::Int, 0xFFFF_FFFE)));
        let v = PrimitiveValue::of(sys::jvalue { d: 1.5 }, sys::JVMTI_PRIMITIVE_TYPE_DOUBLE).unwrap();
        assert_eq!(primitive_bits(v), Some((BasicType::Double, 1.5f64.to_bits())));
    }
}
