//! HotSpot's own description of its C++ structures, as the Serviceability Agent and async-profiler read
//! it: the tables `gHotSpotVMStructs` (fields: offset, or address for statics) and `gHotSpotVMTypes`
//! (sizes), exported by libjvm.so with the offsets of their entries' members. A JVM without them (not
//! HotSpot) has none of these symbols, and every lookup answers `None`.

use std::ffi::{CStr, c_char, c_void};

/// The exported tables of the running JVM.
#[derive(Debug, Clone, Copy)]
pub struct VmStructs {
    fields: Table,
    types: Table,
    field_type_name: usize,
    field_name: usize,
    field_is_static: usize,
    field_offset: usize,
    field_address: usize,
    type_name: usize,
    type_size: usize,
}

#[derive(Debug, Clone, Copy)]
struct Table {
    first: *const u8,
    stride: usize,
}

/// One field: its offset in its type, or for a static field its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Offset(usize),
    Static(*const c_void),
}

impl VmStructs {
    /// Finds the tables, in libjvm.so as the launcher loads it (globally) or else in the library that
    /// holds `inside_libjvm` (any JNI or JVMTI function).
    pub fn find(inside_libjvm: *const c_void) -> Option<VmStructs> {
        let handle = libjvm_handle(inside_libjvm);
        let value = |name: &CStr| -> Option<usize> {
            let p = unsafe { libc::dlsym(handle, name.as_ptr()) } as *const usize;
            (!p.is_null()).then(|| unsafe { *p })
        };
        let table = |name: &CStr, stride: &CStr| -> Option<Table> {
            let first = value(name)? as *const u8;
            (!first.is_null()).then_some(Table { first, stride: value(stride)? })
        };
        Some(VmStructs {
            fields: table(c"gHotSpotVMStructs", c"gHotSpotVMStructEntryArrayStride")?,
            types: table(c"gHotSpotVMTypes", c"gHotSpotVMTypeEntryArrayStride")?,
            field_type_name: value(c"gHotSpotVMStructEntryTypeNameOffset")?,
            field_name: value(c"gHotSpotVMStructEntryFieldNameOffset")?,
            field_is_static: value(c"gHotSpotVMStructEntryIsStaticOffset")?,
            field_offset: value(c"gHotSpotVMStructEntryOffsetOffset")?,
            field_address: value(c"gHotSpotVMStructEntryAddressOffset")?,
            type_name: value(c"gHotSpotVMTypeEntryTypeNameOffset")?,
            type_size: value(c"gHotSpotVMTypeEntrySizeOffset")?,
        })
    }

    /// Field `field` of C++ type `ty`.
    pub fn field(&self, ty: &str, field: &str) -> Option<Field> {
        let mut entry = self.fields.first;
        loop {
            let t = unsafe { c_str_at(entry, self.field_type_name) }?;
            if t == ty.as_bytes() && unsafe { c_str_at(entry, self.field_name) } == Some(field.as_bytes()) {
                return Some(unsafe {
                    if *(entry.add(self.field_is_static) as *const i32) != 0 {
                        Field::Static(*(entry.add(self.field_address) as *const *const c_void))
                    } else {
                        Field::Offset(*(entry.add(self.field_offset) as *const u64) as usize)
                    }
                });
            }
            entry = entry.wrapping_add(self.fields.stride);
        }
    }

    pub fn offset(&self, ty: &str, field: &str) -> Option<usize> {
        match self.field(ty, field)? {
            Field::Offset(o) => Some(o),
            Field::Static(_) => None,
        }
    }

    pub fn static_address(&self, ty: &str, field: &str) -> Option<*const c_void> {
        match self.field(ty, field)? {
            Field::Static(p) if !p.is_null() => Some(p),
            _ => None,
        }
    }

    /// `sizeof` of C++ type `ty`.
    pub fn type_size(&self, ty: &str) -> Option<usize> {
        let mut entry = self.types.first;
        loop {
            let t = unsafe { c_str_at(entry, self.type_name) }?;
            if t == ty.as_bytes() {
                return Some(unsafe { *(entry.add(self.type_size) as *const u64) } as usize);
            }
            entry = entry.wrapping_add(self.types.stride);
        }
    }

    /// The value of the boolean command-line flag `name` (`-XX:+name`), if the JVM has it.
    pub fn bool_flag(&self, name: &str) -> Option<bool> {
        let flags = unsafe { *(self.static_address("JVMFlag", "flags")? as *const *const u8) };
        let count = unsafe { *(self.static_address("JVMFlag", "numFlags")? as *const usize) };
        let size = self.type_size("JVMFlag")?;
        let name_at = self.offset("JVMFlag", "_name")?;
        let addr_at = self.offset("JVMFlag", "_addr")?;
        if flags.is_null() || size == 0 {
            return None;
        }
        (0..count).find_map(|i| {
            let flag = flags.wrapping_add(i * size);
            if unsafe { c_str_at(flag, name_at) } != Some(name.as_bytes()) {
                return None;
            }
            let value = unsafe { *(flag.add(addr_at) as *const *const bool) };
            (!value.is_null()).then(|| unsafe { *value })
        })
    }
}

/// The C string whose pointer is at `base + offset`; `None` for a null pointer (the tables end with one).
///
/// # Safety
/// `base + offset` must hold a pointer that is null or points to a NUL-terminated string.
unsafe fn c_str_at<'a>(base: *const u8, offset: usize) -> Option<&'a [u8]> {
    let p = unsafe { *(base.add(offset) as *const *const c_char) };
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// `RTLD_DEFAULT` when libjvm.so's symbols are global (the java launcher's way), else a handle on the
/// library holding `inside_libjvm` (a JVM an application created with RTLD_LOCAL).
fn libjvm_handle(inside_libjvm: *const c_void) -> *mut c_void {
    if !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"gHotSpotVMStructs".as_ptr()) }.is_null() {
        return libc::RTLD_DEFAULT;
    }
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(inside_libjvm, &mut info) } == 0 || info.dli_fname.is_null() {
        return libc::RTLD_DEFAULT;
    }
    // RTLD_NOLOAD: only a library already loaded; the reference it adds is never dropped (libjvm stays).
    let handle = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
    if handle.is_null() { libc::RTLD_DEFAULT } else { handle }
}
