//! Symbols of a loaded library's full symbol table (`.symtab`), which `dlsym` does not see: HotSpot's own
//! statics that its structure tables leave out (`java_lang_Class::_init_lock_offset`), read from the file
//! the library was loaded from. JDK builds keep `.symtab` (Debian's, Temurin's 17, 21 and 25 do); where it
//! was stripped, the symbols are simply not found. The ELF structures are parsed by the `object` crate; the
//! file is read, never mapped (a library replaced on disk while mapped could fault inside the JVM), and only
//! its header, section table, symbol table and their string table are read, each bounds-checked against the
//! file's length. libjvm's symbol table is about 5 MB: callers look once per process and keep the answer.

use std::ffi::{CStr, CString, c_void};
use std::fs::File;

use object::Endianness;
use object::elf::{FileHeader64, SHN_UNDEF, SHT_SYMTAB, Sym64};
use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::read::{ReadCache, SectionIndex, StringTable};

/// The process addresses of `names` in libjvm.so's symbol table (`None` for each one not there).
pub fn libjvm_local_symbols(names: &[&str]) -> Result<Vec<Option<u64>>, String> {
    let (path, base) = loaded_library("/libjvm.so").ok_or("libjvm.so is not among the loaded libraries")?;
    local_symbols(&path, base, names)
}

/// The addresses of `names` in the symbol table of the ELF file at `path`, loaded at `base`.
pub fn local_symbols(path: &str, base: u64, names: &[&str]) -> Result<Vec<Option<u64>>, String> {
    let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
    // Reads each range it is asked for once, with pread-like seeks; nothing else of the file is read.
    let data = &ReadCache::new(file);
    let header = FileHeader64::<Endianness>::parse(data).map_err(|_| format!("{path} is not a 64-bit ELF file"))?;
    let endian = header.endian().map_err(|e| format!("{path}: {e}"))?;
    let sections = header.sections(endian, data).map_err(|e| format!("{path}: {e}"))?;
    let symtab = sections
        .iter()
        .find(|s| s.sh_type(endian) == SHT_SYMTAB)
        .ok_or_else(|| format!("{path} has no symbol table (stripped)"))?;
    let symbols: &[Sym64<Endianness>] =
        symtab.data_as_array(endian, data).map_err(|e| format!("{path}: symbol table: {e}"))?;
    let strtab = sections
        .section(SectionIndex(symtab.sh_link(endian) as usize))
        .map_err(|_| format!("{path}: no string table"))?;
    // The string table in one read, not one read per name (as a table over the file would do).
    let strings = strtab.data(endian, data).map_err(|e| format!("{path}: string table: {e}"))?;
    let strings = StringTable::new(strings, 0, strings.len() as u64);
    let mut found = vec![None; names.len()];
    for symbol in symbols {
        let Ok(name) = symbol.name(endian, strings) else { continue };
        if let Some(i) = names.iter().position(|n| n.as_bytes() == name) {
            let value = symbol.st_value(endian);
            // An undefined symbol has no address here.
            if symbol.st_shndx(endian) != SHN_UNDEF && value != 0 {
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
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-elf");
        std::fs::write(&file, b"not an ELF file at all, just some text that is long enough to have a header........")
            .unwrap();
        let err = local_symbols(file.to_str().unwrap(), 0, &["x"]).unwrap_err();
        assert!(err.contains("not a 64-bit ELF file"), "{err}");
        assert!(local_symbols("/nonexistent/libjvm.so", 0, &["x"]).is_err());
    }

    #[test]
    fn a_stripped_file_has_no_symbols_to_find() {
        let (path, _) = loaded_library("").expect("the program itself");
        let tmp = tempfile::tempdir().unwrap();
        let stripped = tmp.path().join("stripped");
        let status = std::process::Command::new("objcopy").arg("--strip-all").arg(&path).arg(&stripped).status();
        let Ok(status) = status else {
            return jvm_harness::skip("objcopy is missing (binutils): a stripped file was not tried");
        };
        assert!(status.success(), "objcopy --strip-all {path}: {status}");
        let err = local_symbols(stripped.to_str().unwrap(), 0, &["hotspot_elf_symbols_marker"]).unwrap_err();
        assert!(err.contains("has no symbol table (stripped)"), "{err}");
    }

    /// The symbols `crate::init_lock` looks for, in the libjvm.so of each JDK the tests run (their link-time
    /// addresses: base 0). Prints how long one lookup takes; `--nocapture` shows it.
    #[test]
    fn each_jdks_libjvm_has_the_init_lock_symbols() {
        let names = [
            "_ZN15java_lang_Class17_init_lock_offsetE",
            "_ZN15java_lang_Class13_klass_offsetE",
            "_ZN11JvmtiExport25_should_post_field_accessE",
        ];
        for jdk in jvm_harness::all_jdks() {
            let libjvm = jdk.home.join("lib/server/libjvm.so");
            let start = std::time::Instant::now();
            let found = local_symbols(libjvm.to_str().unwrap(), 0, &names).unwrap();
            let took = start.elapsed();
            println!("JDK {}: {} looked up in {took:?}", jdk.version, libjvm.display());
            for (name, at) in names.iter().zip(&found) {
                assert!(at.is_some_and(|a| a > 0), "JDK {}: {name} not in {}", jdk.version, libjvm.display());
            }
            assert_ne!(found[0], found[1], "JDK {}: two statics at one address", jdk.version);
        }
    }
}
