//! The loaded ELF objects and their unwind tables, for the native unwinder. Read off the signal path: on
//! install and whenever the loader's count of loaded and unloaded objects moves (a `dlopen`), checked
//! cheaply by [`loader_generation`].
//!
//! Each object's `.eh_frame_hdr` is found by its `PT_GNU_EH_FRAME` program header and `.eh_frame` by the
//! header's own pointer, both in the loaded image (no file is opened), and copied: an object unloaded by
//! `dlclose` leaves the unwinder nothing dangling to read.

use std::ffi::{CStr, c_void};

/// One loaded object: where it lies and the copies of its unwind tables.
pub struct LoadedObject {
    pub path: String,
    /// The load bias (`dlpi_addr`): process address = link address + base.
    pub base: u64,
    /// From the lowest loaded segment's start to the highest's end, in process addresses.
    pub range: std::ops::Range<u64>,
    /// `.eh_frame_hdr` and `.eh_frame`, as (link address range, bytes).
    pub eh_frame_hdr: Option<(std::ops::Range<u64>, Vec<u8>)>,
    pub eh_frame: Option<(std::ops::Range<u64>, Vec<u8>)>,
}

/// The loader's (objects added, objects removed) counters: a change means the list must be read again.
pub fn loader_generation() -> (u64, u64) {
    let mut counts = (0u64, 0u64);
    // SAFETY: the callback gets our tuple as its data and only during this call.
    unsafe { libc::dl_iterate_phdr(Some(first_counts), &mut counts as *mut _ as *mut c_void) };
    counts
}

unsafe extern "C" fn first_counts(info: *mut libc::dl_phdr_info, size: libc::size_t, data: *mut c_void) -> i32 {
    // SAFETY: data is the tuple `loader_generation` passed; info is valid for the callback, and the counters
    // are read only when `size` says the C library filled them.
    unsafe {
        let counts = &mut *(data as *mut (u64, u64));
        if size >= std::mem::offset_of!(libc::dl_phdr_info, dlpi_subs) + 8 {
            *counts = ((*info).dlpi_adds, (*info).dlpi_subs);
        }
    }
    1
}

/// Every loaded object with at least one loaded segment.
pub fn loaded_objects() -> Vec<LoadedObject> {
    let mut out: Vec<LoadedObject> = Vec::new();
    // SAFETY: the callback gets our vector as its data and only during this call.
    unsafe { libc::dl_iterate_phdr(Some(collect), &mut out as *mut _ as *mut c_void) };
    out
}

unsafe extern "C" fn collect(info: *mut libc::dl_phdr_info, _: libc::size_t, data: *mut c_void) -> i32 {
    // SAFETY: data is the vector `loaded_objects` passed; dl_iterate_phdr hands a valid dl_phdr_info whose
    // program headers and loaded segments stay mapped during the callback (the loader's lock is held).
    unsafe {
        let out = &mut *(data as *mut Vec<LoadedObject>);
        let info = &*info;
        let phdrs = if info.dlpi_phdr.is_null() {
            &[][..]
        } else {
            std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum as usize)
        };
        if let Some(object) = describe(info, phdrs) {
            out.push(object);
        }
    }
    0
}

/// # Safety
/// `info` and `phdrs` are the loader's, during its `dl_iterate_phdr` callback.
unsafe fn describe(info: &libc::dl_phdr_info, phdrs: &[libc::Elf64_Phdr]) -> Option<LoadedObject> {
    let base = info.dlpi_addr;
    let loads = phdrs.iter().filter(|p| p.p_type == libc::PT_LOAD);
    let low = loads.clone().map(|p| p.p_vaddr).min()?;
    let high = loads.clone().map(|p| p.p_vaddr + p.p_memsz).max()?;
    let path = if info.dlpi_name.is_null() {
        String::new()
    } else {
        // SAFETY: a NUL-terminated path the loader keeps while the object is loaded.
        unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy().into_owned()
    };
    let path = if path.is_empty() { "/proc/self/exe".to_string() } else { path };
    let mut object = LoadedObject { path, base, range: base + low..base + high, eh_frame_hdr: None, eh_frame: None };
    let Some(hdr) = phdrs.iter().find(|p| p.p_type == libc::PT_GNU_EH_FRAME) else { return Some(object) };
    let hdr_range = hdr.p_vaddr..hdr.p_vaddr + hdr.p_memsz;
    // SAFETY: the segment is loaded (PT_GNU_EH_FRAME lies inside a PT_LOAD segment) and read-only.
    let hdr_bytes = unsafe { copy(base + hdr.p_vaddr, hdr.p_memsz as usize) };
    // The header: version 1, then the encoding of eh_frame_ptr, which compilers write pc-relative sdata4
    // (0x1b) or absolute udata4/8; anything else is left to frame pointers.
    if hdr_bytes.len() >= 8 && hdr_bytes[0] == 1 {
        let field = hdr.p_vaddr + 4;
        let eh_frame = match hdr_bytes[1] {
            0x1b => Some(field.wrapping_add(i32::from_le_bytes(hdr_bytes[4..8].try_into().ok()?) as i64 as u64)),
            0x03 => Some(u32::from_le_bytes(hdr_bytes[4..8].try_into().ok()?) as u64),
            0x04 if hdr_bytes.len() >= 12 => Some(u64::from_le_bytes(hdr_bytes[4..12].try_into().ok()?)),
            _ => None,
        };
        // .eh_frame runs to its zero terminator at the latest by the end of the segment holding it.
        let segment_end = eh_frame.and_then(|at| {
            phdrs
                .iter()
                .filter(|p| p.p_type == libc::PT_LOAD)
                .find(|p| p.p_vaddr <= at && at < p.p_vaddr + p.p_filesz)
                .map(|p| p.p_vaddr + p.p_filesz)
        });
        if let (Some(at), Some(end)) = (eh_frame, segment_end) {
            // SAFETY: [at, end) lies in a loaded segment's file-backed part.
            object.eh_frame = Some((at..end, unsafe { copy(base + at, (end - at) as usize) }));
        }
    }
    object.eh_frame_hdr = Some((hdr_range, hdr_bytes));
    Some(object)
}

/// # Safety
/// `[at, at + len)` must be mapped and readable.
unsafe fn copy(at: u64, len: usize) -> Vec<u8> {
    // SAFETY: as the caller guarantees.
    unsafe { std::slice::from_raw_parts(at as *const u8, len) }.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_and_this_program_are_listed_with_unwind_tables() {
        let objects = loaded_objects();
        let here = libc_and_this_program_are_listed_with_unwind_tables as *const () as u64;
        let me = objects.iter().find(|o| o.range.contains(&here)).expect("this program is loaded");
        assert!(me.eh_frame_hdr.is_some() && me.eh_frame.as_ref().is_some_and(|(_, b)| b.len() > 64));
        let libc = objects.iter().find(|o| o.path.contains("libc.so")).expect("libc is loaded");
        assert!(libc.eh_frame.is_some(), "{}", libc.path);
        let (adds, _) = loader_generation();
        assert!(adds >= objects.len() as u64);
    }
}
