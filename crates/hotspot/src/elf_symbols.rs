//! Symbols of a loaded library's full symbol table (`.symtab`), which `dlsym` does not see: HotSpot's own
//! statics that its structure tables leave out (`java_lang_Class::_init_lock_offset`), read from the file
//! the library was loaded from. JDK builds keep `.symtab` (Debian's, Temurin's 17, 21 and 25 do); where it
//! was stripped, the symbols are simply not found. The file is read, never mapped; each count and offset is
//! checked against the file's length before it is used.

use std::ffi::{CStr, CString, c_void};
use std::fs::File;
use std::os::unix::fs::FileExt;

const SHT_SYMTAB: u32 = 2;
const SECTION_HEADER: usize = 64;
const SYMBOL: usize = 24;
/// A symbol table larger than this is not believed (libjvm's is about 5 MB).
const MAX_TABLE: u64 = 256 << 20;

/// The process addresses of `names` in libjvm.so's symbol table (`None` for each one not there).
pub fn libjvm_local_symbols(names: &[&str]) -> Result<Vec<Option<u64>>, String> {
    let (path, base) = loaded_library("/libjvm.so").ok_or("libjvm.so is not among the loaded libraries")?;
    local_symbols(&path, base, names)
}

/// The addresses of `names` in the symbol table of the ELF file at `path`, loaded at `base`.
pub fn local_symbols(path: &str, base: u64, names: &[&str]) -> Result<Vec<Option<u64>>, String> {
    let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let len = file.metadata().map_err(|e| format!("{path}: {e}"))?.len();
    let read = |offset: u64, size: u64| -> Result<Vec<u8>, String> {
        if size > MAX_TABLE || offset.checked_add(size).is_none_or(|end| end > len) {
            return Err(format!("{path}: {size} bytes at {offset} lie outside the file"));
        }
        let mut buf = vec![0u8; size as usize];
        file.read_exact_at(&mut buf, offset).map_err(|e| format!("{path}: {e}"))?;
        Ok(buf)
    };
    let header = read(0, 64)?;
    if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
        return Err(format!("{path} is not a little-endian 64-bit ELF file"));
    }
    let section_offset = u64_at(&header, 0x28);
    let entry_size = u16_at(&header, 0x3a) as usize;
    let count = u16_at(&header, 0x3c) as u64;
    if entry_size != SECTION_HEADER {
        return Err(format!("{path}: section headers of {entry_size} bytes"));
    }
    let sections = read(section_offset, count * SECTION_HEADER as u64)?;
    let section = |i: usize| sections.get(i * SECTION_HEADER..(i + 1) * SECTION_HEADER);
    let symtab = (0..count as usize)
        .filter_map(section)
        .find(|s| u32_at(s, 4) == SHT_SYMTAB)
        .ok_or_else(|| format!("{path} has no symbol table (stripped)"))?;
    let strtab = section(u32_at(symtab, 40) as usize).ok_or_else(|| format!("{path}: no string table"))?;
    let symbols = read(u64_at(symtab, 24), u64_at(symtab, 32))?;
    let strings = read(u64_at(strtab, 24), u64_at(strtab, 32))?;
    let mut found = vec![None; names.len()];
    for symbol in symbols.chunks_exact(SYMBOL) {
        let name_at = u32_at(symbol, 0) as usize;
        let Some(name) = strings.get(name_at..).and_then(|s| CStr::from_bytes_until_nul(s).ok()) else { continue };
        if let Some(i) = names.iter().position(|n| n.as_bytes() == name.to_bytes()) {
            let value = u64_at(symbol, 8);
            // An undefined symbol (section 0) has no address here.
            if u16_at(symbol, 6) != 0 && value != 0 {
                found[i] = base.checked_add(value);
            }
        }
    }
    Ok(found)
}

/// The path and load address of the loaded object whose path ends with `suffix` ("" for the program).
pub fn loaded_library(suffix: &str) -> Option<(String, u64)> {
    let mut wanted = (CString::new(suffix).ok()?, None::<(String, u64)>);
    // SAFETY: the callback gets our tuple as its data and only during this call.
    unsafe { libc::dl_iterate_phdr(Some(find), &mut wanted as *mut _ as *mut c_void) };
    wanted.1
}

unsafe extern "C" fn find(info: *mut libc::dl_phdr_info, _: libc::size_t, data: *mut c_void) -> libc::c_int {
    // SAFETY: data is the (CString, Option<(String, u64)>) `loaded_library` passed to dl_iterate_phdr.
    let wanted = unsafe { &mut *(data as *mut (CString, Option<(String, u64)>)) };
    // SAFETY: dl_iterate_phdr passes a valid dl_phdr_info for the duration of the callback.
    let (name, addr) = unsafe { ((*info).dlpi_name, (*info).dlpi_addr) };
    let name = if name.is_null() {
        c""
    } else {
        // SAFETY: a NUL-terminated path that the loader keeps while the object is loaded.
        unsafe { CStr::from_ptr(name) }
    };
    let suffix = wanted.0.to_bytes();
    let matches = if suffix.is_empty() { name.to_bytes().is_empty() } else { name.to_bytes().ends_with(suffix) };
    if matches {
        let path = if suffix.is_empty() { "/proc/self/exe".to_string() } else { name.to_string_lossy().into_owned() };
        wanted.1 = Some((path, addr));
        return 1;
    }
    0
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function of this test program, found by its name in the program's own symbol table.
    #[unsafe(no_mangle)]
    #[inline(never)]
    pub extern "C" fn hotspot_elf_symbols_marker() -> u32 {
        std::hint::black_box(7)
    }

    #[test]
    fn the_programs_own_symbols_are_found_at_their_addresses() {
        let (path, base) = loaded_library("").expect("the program itself");
        let found = local_symbols(&path, base, &["hotspot_elf_symbols_marker", "no_such_symbol_here"]).unwrap();
        assert_eq!(found[0], Some(hotspot_elf_symbols_marker as *const () as usize as u64));
        assert_eq!(found[1], None);
        assert_eq!(hotspot_elf_symbols_marker(), 7);
    }

    #[test]
    fn what_is_no_elf_file_is_refused() {
        let dir = std::env::temp_dir().join(format!("elf-symbols-{}", std::process::id()));
        std::fs::write(&dir, b"not an ELF file at all, just some text that is long enough to have a header........")
            .unwrap();
        let err = local_symbols(dir.to_str().unwrap(), 0, &["x"]).unwrap_err();
        std::fs::remove_file(&dir).unwrap();
        assert!(err.contains("not a little-endian 64-bit ELF file"), "{err}");
        assert!(local_symbols("/nonexistent/libjvm.so", 0, &["x"]).is_err());
    }
}
