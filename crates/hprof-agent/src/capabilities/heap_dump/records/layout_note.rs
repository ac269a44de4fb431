//! The object layout this JVM uses, stated in the file before its first heap dump
//! ([`hprof_format::layout_note`]): `hprof` then sizes objects as the JVM counts them even when the dump
//! names objects by tag (ZGC, Shenandoah, `HPROF_HEAP_DUMP_TAGS`), where no address shows the layout.

use hotspot::VmStructs;
use hotspot::object_layout::ObjectLayout;
use hprof_format::layout_note::LayoutNote;
use std::sync::OnceLock;

/// The note for this JVM, found on the first dump (its flags do not change); `None` when HotSpot's flags
/// cannot be read (another JVM): the file then says nothing and readers infer the layout as for any dump.
pub fn layout_note() -> Option<LayoutNote> {
    static NOTE: OnceLock<Option<LayoutNote>> = OnceLock::new();
    *NOTE.get_or_init(|| {
        let layout = ObjectLayout::find(VmStructs::get()?).ok()?;
        Some(LayoutNote {
            compressed_oops: layout.compressed_oops,
            compressed_class_pointers: layout.compressed_class_pointers,
            compact_headers: layout.compact_headers,
            object_alignment: layout.object_alignment,
            packed_arrays: layout.packed_arrays,
        })
    })
}
