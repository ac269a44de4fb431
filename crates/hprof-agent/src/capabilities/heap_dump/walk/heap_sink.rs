//! What the walk hands each object, class and root to once it knows them whole: a [`HeapSink`] (the
//! binary sub-records and the text lines of `records` are the two).

use crate::capabilities::heap_dump::plan::layout::DumpClass;
use hprof_format::tags::BasicType;
use std::io;

/// A GC root: the format crate's model, which the text lines print as they are and the binary sub-records
/// encode (a JNI global's trace is the text format's only).
pub use hprof_format::text::heap::RootLine as Root;

/// What the walk learned about a class object: the values that are not part of the class's layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClassValues {
    pub loader: u64,
    pub signers: u64,
    pub domain: u64,
    /// One value per static field of the layout, as raw bits (an identifier for references).
    pub statics: Vec<u64>,
    /// Resolved constant pool entries (strings and classes): index and identifier.
    pub constants: Vec<(u16, u64)>,
}

impl ClassValues {
    pub fn reset(&mut self, class: &DumpClass) {
        self.loader = class.loader_id;
        self.signers = 0;
        self.domain = 0;
        self.statics.clear();
        self.statics.resize(class.statics.len(), 0);
        self.constants.clear();
    }
}

/// Receives a heap dump record by record. Sizes are the objects' sizes in the VM (text output prints them).
pub trait HeapSink {
    /// Whether the sizes passed matter (text prints them; binary records have none).
    fn wants_sizes(&self) -> bool {
        false
    }

    fn root(&mut self, root: &Root<'_>) -> io::Result<()>;

    /// CLASS DUMP of `class` (index `index` in the plan).
    fn class_dump(&mut self, index: u32, class: &DumpClass, values: &ClassValues) -> io::Result<()>;

    /// INSTANCE DUMP; `values` holds the field values, big-endian, in the layout's order.
    fn instance(&mut self, id: u64, class: &DumpClass, size: u64, values: &[u8]) -> io::Result<()>;

    /// OBJECT ARRAY DUMP, streamed: the head, then the non-null elements in increasing index order, then
    /// the end (nulls in between and after are filled in).
    fn object_array_begin(&mut self, id: u64, class: &DumpClass, size: u64, length: u32) -> io::Result<()>;
    fn object_array_element(&mut self, index: u32, id: u64) -> io::Result<()>;
    fn object_array_end(&mut self) -> io::Result<()>;

    /// PRIMITIVE ARRAY DUMP; `elements` holds `length` values of `ty` in the machine's byte order.
    fn primitive_array(
        &mut self,
        id: u64,
        class_name: &str,
        size: u64,
        ty: BasicType,
        length: u32,
        elements: &[u8],
    ) -> io::Result<()>;
}
