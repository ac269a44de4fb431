//! What decides the sizes of objects in this JVM, from its flags: what a heap dump's reader needs to size
//! objects as the JVM counts them when the dump names objects by numbers rather than addresses. All of it
//! from HotSpot's structure tables: the flag table, and the VM's major version for the array layout.

use crate::VmStructs;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectLayout {
    pub compressed_oops: bool,
    /// Off, or meaningless, with compact headers (the class is in the mark word).
    pub compressed_class_pointers: bool,
    pub compact_headers: bool,
    pub object_alignment: u32,
    /// Array elements start right after the length, aligned to their own size: JDK 22+ (JDK-8139457).
    pub packed_arrays: bool,
}

impl ObjectLayout {
    /// The running JVM's layout. `UseCompactObjectHeaders` exists from JDK 24 on: its absence means off.
    /// `UseCompressedOops` is off under ZGC whatever the command line says (the VM turns it off).
    pub fn find(vm: &VmStructs) -> Result<ObjectLayout, String> {
        let flag = |name: &str| vm.bool_flag(name).map_err(|e| format!("{name}: {e}"));
        let alignment = vm.int_flag("ObjectAlignmentInBytes").map_err(|e| format!("ObjectAlignmentInBytes: {e}"))?;
        let object_alignment = u32::try_from(alignment)
            .ok()
            .filter(|a| a.is_power_of_two() && *a >= 8)
            .ok_or_else(|| format!("ObjectAlignmentInBytes is {alignment}, not a power of two from 8 up"))?;
        // SAFETY: the address of a static `int` field HotSpot's structure tables export, in libjvm's data.
        let major = unsafe { *(vm.static_address("Abstract_VM_Version", "_vm_major_version")? as *const i32) };
        Ok(ObjectLayout {
            compressed_oops: flag("UseCompressedOops")?,
            compressed_class_pointers: flag("UseCompressedClassPointers")?,
            compact_headers: vm.bool_flag("UseCompactObjectHeaders") == Ok(true),
            object_alignment,
            packed_arrays: major >= 22,
        })
    }
}

impl ObjectLayout {
    /// Where an array's length lies, after the mark word and the class word (`arrayOopDesc::
    /// length_offset_in_bytes()`), and the class word's size (`None` with compact headers: it is in the mark
    /// word).
    pub fn array_length_offset_and_class_word(&self) -> (u64, Option<u8>) {
        match (self.compact_headers, self.compressed_class_pointers) {
            (true, _) => (8, None),
            (false, true) => (12, Some(4)),
            (false, false) => (16, Some(8)),
        }
    }
}
