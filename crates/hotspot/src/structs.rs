//! HotSpot's structure tables, read once into maps: field offsets, static field addresses, type sizes and
//! integer constants, by the names HotSpot's own `vmStructs.cpp` gives them.
//!
//! The tables are arrays of C structs whose layout HotSpot also exports (`gHotSpotVMStructEntry*Offset`,
//! `…ArrayStride`), so this reads them without assuming any JDK's struct layout.

use rustc_hash::FxHashMap;
use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::OnceLock;

/// Where a field is: an offset inside its object, or the address of a static.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldAt {
    Offset(usize),
    Static(usize),
}

/// The JVM's structure tables, by name.
#[derive(Debug, Default)]
pub struct VmStructs {
    fields: FxHashMap<(String, String), FieldAt>,
    types: FxHashMap<String, usize>,
    constants: FxHashMap<String, i64>,
}

/// Looks up a symbol of the already loaded libjvm, whether its symbols are global or not.
pub fn libjvm_symbol(name: &CStr) -> Option<*const c_void> {
    // SAFETY: dlsym with a handle libdl gave and a NUL-terminated name.
    let p = unsafe { libc::dlsym(libjvm(), name.as_ptr()) };
    (!p.is_null()).then_some(p as *const c_void)
}

/// `RTLD_DEFAULT` when libjvm.so's symbols are global (the java launcher's way), else a handle on the loaded
/// libjvm.so (a JVM an application created after loading it with RTLD_LOCAL).
fn libjvm() -> *mut c_void {
    static HANDLE: OnceLock<usize> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        // SAFETY: libdl calls with NUL-terminated names; the callback gets our Option<CString> as its data.
        if !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"gHotSpotVMStructs".as_ptr()) }.is_null() {
            return libc::RTLD_DEFAULT as usize;
        }
        let mut path: Option<std::ffi::CString> = None;
        // SAFETY: libdl calls with NUL-terminated names; the callback gets our Option<CString> as its data.
        unsafe { libc::dl_iterate_phdr(Some(find_libjvm), &mut path as *mut _ as *mut c_void) };
        // RTLD_NOLOAD: only a library already loaded; the reference it adds is never dropped (libjvm stays).
        // SAFETY: libdl calls with NUL-terminated names; the callback gets our Option<CString> as its data.
        path.map(|p| unsafe { libc::dlopen(p.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) } as usize)
            .filter(|h| *h != 0)
            .unwrap_or(libc::RTLD_DEFAULT as usize)
    }) as *mut c_void
}

unsafe extern "C" fn find_libjvm(info: *mut libc::dl_phdr_info, _: libc::size_t, data: *mut c_void) -> libc::c_int {
    // SAFETY: dl_iterate_phdr passes a valid dl_phdr_info for the duration of the callback.
    let name = unsafe { (*info).dlpi_name };
    if name.is_null() {
        return 0;
    }
    // SAFETY: a NUL-terminated string that lives as long as the process (a structure table's name, a code
    // blob's name, a loaded library's path), checked non-null.
    let name = unsafe { CStr::from_ptr(name) };
    if name.to_bytes().ends_with(b"/libjvm.so") {
        // SAFETY: data is the &mut Option<CString> find_libjvm was given by dl_iterate_phdr's caller.
        unsafe { *(data as *mut Option<std::ffi::CString>) = Some(name.to_owned()) };
        return 1;
    }
    0
}

/// The value of an exported `uint64_t` such as `gHotSpotVMStructEntryArrayStride`.
fn exported_u64(name: &CStr) -> Option<usize> {
    // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
    // as the process), at an offset the tables themselves give.
    libjvm_symbol(name).map(|p| unsafe { *(p as *const u64) } as usize)
}

/// The array an exported pointer such as `gHotSpotVMStructs` points to.
fn exported_array(name: &CStr) -> Option<*const u8> {
    let p = libjvm_symbol(name)?;
    // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
    // as the process), at an offset the tables themselves give.
    let array = unsafe { *(p as *const *const u8) };
    (!array.is_null()).then_some(array)
}

/// A C string field of a table entry; `None` for a null pointer (which ends a table).
unsafe fn string_at(entry: *const u8, offset: usize) -> Option<String> {
    // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
    // as the process), at an offset the tables themselves give.
    let p = unsafe { *(entry.add(offset) as *const *const c_char) };
    // SAFETY: a NUL-terminated string that lives as long as the process (a structure table's name, a code
    // blob's name, a loaded library's path), checked non-null.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// One exported table: an array of entries that ends with an entry whose name is null.
struct Table {
    first: *const u8,
    name_offset: usize,
    stride: usize,
}

/// More entries than any JVM exports (about 3,000 fields): a table without its end is not read on and on.
const MAX_ENTRIES: usize = 1 << 16;

impl Table {
    fn exported(array: &CStr, name_offset: usize, stride: &CStr) -> Option<Table> {
        Some(Table { first: exported_array(array)?, name_offset, stride: exported_u64(stride)? })
    }

    /// Calls `f` with each entry and its name; `None` if the end is not found.
    unsafe fn each(&self, mut f: impl FnMut(*const u8, String)) -> Option<()> {
        let mut entry = self.first;
        for _ in 0..MAX_ENTRIES {
            // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
            // as the process), at an offset the tables themselves give.
            let Some(name) = (unsafe { string_at(entry, self.name_offset) }) else { return Some(()) };
            f(entry, name);
            // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
            // as the process), at an offset the tables themselves give.
            entry = unsafe { entry.add(self.stride) };
        }
        None
    }
}

impl VmStructs {
    /// The tables of the JVM this process runs, read on first use; `None` when it exports none (not
    /// HotSpot). Call once libjvm is loaded (any time from Agent_OnLoad on).
    pub fn get() -> Option<&'static VmStructs> {
        static TABLES: OnceLock<Option<VmStructs>> = OnceLock::new();
        TABLES.get_or_init(VmStructs::load).as_ref()
    }

    fn load() -> Option<VmStructs> {
        let mut vm = VmStructs::default();
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        unsafe {
            vm.read_fields()?;
            vm.read_types()?;
            vm.read_constants()?;
        }
        Some(vm)
    }

    unsafe fn read_fields(&mut self) -> Option<()> {
        let type_name = exported_u64(c"gHotSpotVMStructEntryTypeNameOffset")?;
        let field_name = exported_u64(c"gHotSpotVMStructEntryFieldNameOffset")?;
        let is_static = exported_u64(c"gHotSpotVMStructEntryIsStaticOffset")?;
        let offset = exported_u64(c"gHotSpotVMStructEntryOffsetOffset")?;
        let address = exported_u64(c"gHotSpotVMStructEntryAddressOffset")?;
        let table = Table::exported(c"gHotSpotVMStructs", type_name, c"gHotSpotVMStructEntryArrayStride")?;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        unsafe {
            table.each(|entry, ty| {
                if let Some(field) = string_at(entry, field_name) {
                    let at = if *(entry.add(is_static) as *const i32) != 0 {
                        FieldAt::Static(*(entry.add(address) as *const usize))
                    } else {
                        FieldAt::Offset(*(entry.add(offset) as *const u64) as usize)
                    };
                    self.fields.insert((ty, field), at);
                }
            })
        }
    }

    unsafe fn read_types(&mut self) -> Option<()> {
        let type_name = exported_u64(c"gHotSpotVMTypeEntryTypeNameOffset")?;
        let size = exported_u64(c"gHotSpotVMTypeEntrySizeOffset")?;
        let table = Table::exported(c"gHotSpotVMTypes", type_name, c"gHotSpotVMTypeEntryArrayStride")?;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        unsafe { table.each(|entry, ty| _ = self.types.insert(ty, *(entry.add(size) as *const u64) as usize)) }
    }

    unsafe fn read_constants(&mut self) -> Option<()> {
        let name = exported_u64(c"gHotSpotVMIntConstantEntryNameOffset")?;
        let value = exported_u64(c"gHotSpotVMIntConstantEntryValueOffset")?;
        let table = Table::exported(c"gHotSpotVMIntConstants", name, c"gHotSpotVMIntConstantEntryArrayStride")?;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        unsafe { table.each(|entry, n| _ = self.constants.insert(n, *(entry.add(value) as *const i32) as i64)) }
    }

    /// The offset of an instance field, e.g. `("JavaThread", "_anchor")`.
    pub fn offset(&self, ty: &str, field: &str) -> Result<usize, String> {
        match self.fields.get(&(ty.to_string(), field.to_string())) {
            Some(FieldAt::Offset(o)) => Ok(*o),
            Some(FieldAt::Static(_)) => Err(format!("{ty}::{field} is static")),
            None => Err(format!("the JVM exports no field {ty}::{field}")),
        }
    }

    /// The address of a static field, e.g. `("CodeCache", "_heaps")`.
    pub fn static_address(&self, ty: &str, field: &str) -> Result<usize, String> {
        match self.fields.get(&(ty.to_string(), field.to_string())) {
            Some(FieldAt::Static(a)) if *a != 0 => Ok(*a),
            Some(_) => Err(format!("{ty}::{field} is not a static with an address")),
            None => Err(format!("the JVM exports no field {ty}::{field}")),
        }
    }

    /// The addresses of `CodeCache::_low_bound` and `_high_bound`, which hold where the code cache (the
    /// interpreter, stubs and compiled methods: all Java code) begins and ends once it is reserved: where a
    /// native unwinder meets Java frames.
    pub fn code_cache_bounds_at(&self) -> Result<(usize, usize), String> {
        Ok((self.static_address("CodeCache", "_low_bound")?, self.static_address("CodeCache", "_high_bound")?))
    }

    /// `sizeof` a HotSpot type.
    pub fn type_size(&self, ty: &str) -> Result<usize, String> {
        self.types.get(ty).copied().ok_or_else(|| format!("the JVM exports no type {ty}"))
    }

    /// Where a flag of HotSpot's flag table is: the entry and the address of its value.
    fn flag(&self, name: &str) -> Result<(usize, usize), String> {
        let table = self.static_address("JVMFlag", "flags")?;
        let count = self.static_address("JVMFlag", "numFlags")?;
        let (name_at, addr_at) = (self.offset("JVMFlag", "_name")?, self.offset("JVMFlag", "_addr")?);
        let stride = self.type_size("JVMFlag")?;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        let (table, count) = unsafe { (*(table as *const usize), *(count as *const usize)) };
        for i in 0..count {
            let flag = table + i * stride;
            // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
            // as the process), at an offset the tables themselves give.
            if unsafe { string_at(flag as *const u8, name_at) }.as_deref() == Some(name) {
                // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
                // as the process), at an offset the tables themselves give.
                let value = unsafe { *((flag + addr_at) as *const usize) };
                return if value == 0 { Err(format!("flag {name} has no value")) } else { Ok((flag, value)) };
            }
        }
        Err(format!("the JVM has no flag {name}"))
    }

    /// The value of a boolean `-XX` flag, e.g. `"UseZGC"`, from HotSpot's flag table.
    pub fn bool_flag(&self, name: &str) -> Result<bool, String> {
        let (_, value) = self.flag(name)?;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        Ok(unsafe { *(value as *const u8) } != 0)
    }

    /// The value of an `int` `-XX` flag, e.g. `"ObjectAlignmentInBytes"`, from HotSpot's flag table. Reads
    /// the value's first 4 bytes: the whole of an `int` flag, and the low half of an `intx` one (x86-64 is
    /// little-endian), which holds any value that fits in an `int`.
    pub fn int_flag(&self, name: &str) -> Result<i32, String> {
        let (_, value) = self.flag(name)?;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give; every numeric flag has 4 bytes or more.
        Ok(unsafe { *(value as *const i32) })
    }

    /// Sets a boolean flag that still has its default value (nobody set it on the command line, in an
    /// options file or ergonomically), as `-XX:+Name` would have; returns whether it is now `value`. Only
    /// for flags the JVM reads afresh each time it uses them, set before it first does.
    pub fn set_default_bool_flag(&self, name: &str, value: bool) -> Result<bool, String> {
        let (flag, at) = self.flag(name)?;
        let origin_mask = self.constant("JVMFlag::VALUE_ORIGIN_MASK")? as u32;
        let default = self.constant("JVMFlagOrigin::DEFAULT")? as u32;
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        let flags = unsafe { *((flag + self.offset("JVMFlag", "_flags")?) as *const u32) };
        if flags & origin_mask == default {
            // SAFETY: the address of a boolean JVM flag's value in libjvm's data, found through its JVMFlag entry.
            unsafe { std::ptr::write_volatile(at as *mut u8, value as u8) };
        }
        // SAFETY: an address from HotSpot's exported structure tables, in libjvm's static data (alive as long
        // as the process), at an offset the tables themselves give.
        Ok((unsafe { *(at as *const u8) } != 0) == value)
    }

    /// Adds `items` (comma-separated) to a string-list flag such as `DisableIntrinsic`, as a second
    /// `-XX:DisableIntrinsic=…` would; returns the list now in force. Only before the JVM first reads the
    /// flag (in Agent_OnLoad for the compilers' flags). The new value is leaked: the JVM keeps pointing at it.
    pub fn append_to_list_flag(&self, name: &str, items: &str) -> Result<String, String> {
        let (_, at) = self.flag(name)?;
        // SAFETY: the address of a string flag's `const char*` in libjvm's data, found through its JVMFlag entry;
        // the string it points to (if any) is NUL-terminated and lives as long as the process.
        let old = unsafe {
            let p = *(at as *const *const std::ffi::c_char);
            if p.is_null() { String::new() } else { CStr::from_ptr(p).to_string_lossy().into_owned() }
        };
        let new = if old.trim().is_empty() { items.to_string() } else { format!("{old},{items}") };
        let leaked: &'static CStr = Box::leak(CString::new(new.clone()).map_err(|e| e.to_string())?.into_boxed_c_str());
        // SAFETY: as above; an aligned pointer-sized store of a pointer to a string that is never freed.
        unsafe { std::ptr::write_volatile(at as *mut *const std::ffi::c_char, leaked.as_ptr()) };
        Ok(new)
    }

    /// An integer constant, e.g. `"frame::entry_frame_call_wrapper_offset"`.
    pub fn constant(&self, name: &str) -> Result<i64, String> {
        self.constants.get(name).copied().ok_or_else(|| format!("the JVM exports no constant {name}"))
    }
}
