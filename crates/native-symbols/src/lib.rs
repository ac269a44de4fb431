//! Names for native code addresses: the function of a loaded ELF object that holds an address, from the
//! object's symbol tables (`.symtab`, else `.dynsym`), demangled (C++ without parameters, as profilers show
//! them: `G1ParScanThreadState::trim_queue_to_threshold`; Rust without its hash). Used off the signal path,
//! on addresses the native unwinder collected.
//!
//! Each object's table is read once, on the first address that falls in it, from the file it was loaded
//! from — read, never mapped (a library replaced on disk while mapped could fault), and only its section
//! table, symbol tables and their strings, bounds-checked by the `object` crate. An object whose file cannot
//! be read (the vDSO, a deleted file) names its addresses `[name]`.

mod kernel;

pub use kernel::KernelSymbols;
use object::Endianness;
use object::elf::{FileHeader64, SHN_UNDEF, SHT_DYNSYM, SHT_SYMTAB, STT_FUNC, STT_GNU_IFUNC, Sym64};
use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::read::{ReadCache, SectionIndex};
use rustc_hash::FxHashMap;
use std::fs::File;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// A loaded object, as the unwinder's module list describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedObject {
    pub path: String,
    /// Load bias: process address = link address + base.
    pub base: u64,
    pub range: Range<u64>,
}

/// The functions of one object, by link address.
struct SymbolTable {
    /// (start, size, name offset in `strings`), sorted by start.
    functions: Vec<(u64, u64, u32)>,
    strings: Vec<u8>,
}

/// Each object's table once read (`None`: it could not be), shared by every [`Symbolizer`] of the process,
/// so that [`preload`] can read them ahead on a thread of its own.
type Tables = FxHashMap<(String, u64), Arc<Option<SymbolTable>>>;
static TABLES: Mutex<Option<Tables>> = Mutex::new(None);

/// Reads the tables of `objects` now (not yet read ones), so that the first names are not held up by it.
pub fn preload(objects: &[LoadedObject]) {
    for object in objects {
        table_of(object);
    }
}

fn table_of(object: &LoadedObject) -> Arc<Option<SymbolTable>> {
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    tables
        .get_or_insert_with(FxHashMap::default)
        .entry((object.path.clone(), object.base))
        .or_insert_with(|| Arc::new(SymbolTable::read(&object.path).ok()))
        .clone()
}

/// Names addresses, keeping the table of the object it last looked in.
#[derive(Default)]
pub struct Symbolizer {
    last: Option<(String, u64, Arc<Option<SymbolTable>>)>,
}

/// The short name of an object's file: `libjvm.so` for `/usr/lib/jvm/…/libjvm.so`.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl Symbolizer {
    pub fn new() -> Symbolizer {
        Symbolizer::default()
    }

    /// The name of the function at `address` (an instruction inside it: callers pass a return address
    /// minus one), `[object]` when the object has no symbol for it, `None` when no object holds it.
    pub fn name(&mut self, objects: &[LoadedObject], address: u64) -> Option<String> {
        let object = objects.iter().find(|o| o.range.contains(&address))?;
        let same = self.last.as_ref().is_some_and(|(path, base, _)| *path == object.path && *base == object.base);
        if !same {
            self.last = Some((object.path.clone(), object.base, table_of(object)));
        }
        let table = &self.last.as_ref()?.2;
        let found = table.as_ref().as_ref().and_then(|t| t.function_at(address.wrapping_sub(object.base)));
        Some(match found {
            Some(raw) => demangle(raw),
            None => format!("[{}]", file_name(&object.path)),
        })
    }
}

impl SymbolTable {
    fn read(path: &str) -> Result<SymbolTable, String> {
        let file = File::open(path).map_err(|e| format!("{path}: {e}"))?;
        let data = &ReadCache::new(file);
        let header = FileHeader64::<Endianness>::parse(data).map_err(|_| format!("{path}: not a 64-bit ELF file"))?;
        let endian = header.endian().map_err(|e| format!("{path}: {e}"))?;
        let sections = header.sections(endian, data).map_err(|e| format!("{path}: {e}"))?;
        // The full table where it was kept; the dynamic one (exported functions only) where it was stripped.
        let table = sections
            .iter()
            .find(|s| s.sh_type(endian) == SHT_SYMTAB)
            .or_else(|| sections.iter().find(|s| s.sh_type(endian) == SHT_DYNSYM))
            .ok_or_else(|| format!("{path}: no symbol table"))?;
        let symbols: &[Sym64<Endianness>] = table.data_as_array(endian, data).map_err(|e| format!("{path}: {e}"))?;
        let strtab = sections
            .section(SectionIndex(table.sh_link(endian) as usize))
            .map_err(|_| format!("{path}: no string table"))?;
        let strings = strtab.data(endian, data).map_err(|e| format!("{path}: {e}"))?.to_vec();
        let mut functions: Vec<(u64, u64, u32)> = symbols
            .iter()
            .filter(|s| {
                let kind = s.st_type();
                (kind == STT_FUNC || kind == STT_GNU_IFUNC)
                    && s.st_shndx(endian) != SHN_UNDEF
                    && s.st_value(endian) != 0
            })
            .filter(|s| (s.st_name(endian) as usize) < strings.len())
            .map(|s| (s.st_value(endian), s.st_size(endian), s.st_name(endian)))
            .collect();
        // Aliases (`read` and `__libc_read`) share an address: keep one, the shortest name without leading
        // underscores being what a reader knows.
        functions.sort_unstable_by_key(|&(start, _, _)| start);
        functions.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same && preference(&strings, later.2) < preference(&strings, kept.2) {
                *kept = *later;
            }
            same
        });
        Ok(SymbolTable { functions, strings })
    }

    fn function_at(&self, address: u64) -> Option<&str> {
        let i = self.functions.partition_point(|&(start, _, _)| start <= address).checked_sub(1)?;
        let (start, size, name) = self.functions[i];
        // A symbol without a size (hand-written assembly) covers up to the next one.
        if size != 0 && address >= start + size {
            return None;
        }
        std::str::from_utf8(c_string(&self.strings, name)).ok()
    }
}

fn c_string(strings: &[u8], at: u32) -> &[u8] {
    let tail = &strings[(at as usize).min(strings.len())..];
    &tail[..tail.iter().position(|&b| b == 0).unwrap_or(tail.len())]
}

/// Sort key among aliases: fewer leading underscores first, then shorter.
fn preference(strings: &[u8], name: u32) -> (usize, usize) {
    let s = c_string(strings, name);
    (s.iter().take_while(|&&b| b == b'_').count(), s.len())
}

/// A readable function name: C++ without parameters or return type, Rust without its hash, C as it is.
pub fn demangle(raw: &str) -> String {
    if (raw.starts_with("_R") || is_rust_legacy(raw))
        && let Ok(d) = rustc_demangle::try_demangle(raw)
    {
        return format!("{d:#}");
    }
    if raw.starts_with("_Z") {
        let options = cpp_demangle::DemangleOptions::new().no_params().no_return_type();
        if let Some(d) = cpp_demangle::Symbol::new(raw).ok().and_then(|s| s.demangle(&options).ok()) {
            return d;
        }
    }
    raw.to_owned()
}

/// Rust's legacy mangling: `_ZN…17h<16 hex digits>E`.
fn is_rust_legacy(raw: &str) -> bool {
    raw.starts_with("_ZN")
        && raw.len() > 21
        && raw.ends_with('E')
        && raw[..raw.len() - 1]
            .rsplit_once("17h")
            .is_some_and(|(_, h)| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;

    #[unsafe(no_mangle)]
    #[inline(never)]
    pub extern "C" fn native_symbols_marker() -> u32 {
        std::hint::black_box(11)
    }

    fn this_program() -> LoadedObject {
        unsafe extern "C" fn first(info: *mut libc_phdr::DlPhdrInfo, _: usize, data: *mut c_void) -> i32 {
            // SAFETY: data is the Option the caller passed; the first object is the program itself.
            unsafe {
                let out = &mut *(data as *mut Option<u64>);
                *out = Some((*info).addr);
            }
            1
        }
        let mut base = None;
        // SAFETY: the callback only reads the first object's load address into `base`.
        unsafe { libc_phdr::dl_iterate_phdr(first, &mut base as *mut _ as *mut c_void) };
        LoadedObject { path: "/proc/self/exe".into(), base: base.unwrap(), range: 0..u64::MAX }
    }

    /// The minimal part of `dl_phdr_info` the test reads (no libc crate dependency for one call).
    mod libc_phdr {
        use std::ffi::c_void;
        #[repr(C)]
        pub struct DlPhdrInfo {
            pub addr: u64,
        }
        unsafe extern "C" {
            pub fn dl_iterate_phdr(
                callback: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> i32,
                data: *mut c_void,
            ) -> i32;
        }
    }

    #[test]
    fn a_function_of_this_program_is_named_from_inside_it() {
        let mut symbolizer = Symbolizer::new();
        let objects = [this_program()];
        let at = native_symbols_marker as *const () as u64;
        assert_eq!(symbolizer.name(&objects, at + 1).as_deref(), Some("native_symbols_marker"));
        assert_eq!(native_symbols_marker(), 11);
    }

    #[test]
    fn cpp_and_rust_names_are_demangled_and_c_names_kept() {
        assert_eq!(demangle("_ZN8G1Policy12record_pauseENS_9PauseKindEdd"), "G1Policy::record_pause");
        assert_eq!(demangle("_ZN7example4main17h0123456789abcdefE"), "example::main");
        assert_eq!(demangle("spin_in_c"), "spin_in_c");
        assert_eq!(demangle("_Zgarbage"), "_Zgarbage");
    }

    #[test]
    fn an_unreadable_object_names_its_addresses_by_file() {
        let mut symbolizer = Symbolizer::new();
        let objects = [LoadedObject { path: "linux-vdso.so.1".into(), base: 0x1000, range: 0x1000..0x2000 }];
        assert_eq!(symbolizer.name(&objects, 0x1800).as_deref(), Some("[linux-vdso.so.1]"));
        assert_eq!(symbolizer.name(&objects, 0x3000), None);
    }
}
