//! Where a class object keeps its initialization lock: `java.lang.Class` has a field HotSpot injects,
//! `init_lock`, which holds an `int[0]` from the class's linking until its initialization ends (then it is
//! cleared). Nothing else refers to that array, and JVMTI's heap walk does not report injected fields, so a
//! dump built on it would miss one `int[0]` per class linked but not initialized — which the JVM's histogram
//! counts (0.1–0.4% of a small program's bytes).
//!
//! The field's offset is `java_lang_Class::_init_lock_offset`, a static HotSpot's structure tables leave
//! out; it is read from libjvm.so's symbol table ([`crate::elf_symbols`]), once that table has been checked
//! against the structure tables: it must give `java_lang_Class::_klass_offset` the address they give. The
//! field is then read through JNI (`GetObjectField` with the field ID HotSpot would give it, `offset << 2 |
//! 2`, see [`crate::heap::FieldOffsets`]), so the collector's barriers apply. Two conditions make that
//! unsafe, and [`InitLock::usable`] refuses both: checked JNI (`-Xcheck:jni` looks the ID up among the
//! class's declared fields and ends the VM), and JVMTI field access watches (JNI then looks the field up
//! among the declared fields to post the event). Where a declared field shares the lock's slot (JDK 17's
//! `componentType`), its own ID reads the lock, which checked JNI accepts ([`InitLock::unwatched`]).

use crate::VmStructs;
use crate::elf_symbols::libjvm_local_symbols;
use crate::heap::peek;
use crate::jni_handles::checked_jni;

const INIT_LOCK_OFFSET: &str = "_ZN15java_lang_Class17_init_lock_offsetE";
const KLASS_OFFSET: &str = "_ZN15java_lang_Class13_klass_offsetE";
const FIELD_ACCESS_WATCHED: &str = "_ZN11JvmtiExport25_should_post_field_accessE";

/// The `init_lock` field of this JVM's class objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InitLock {
    offset: u32,
    field_access_watched: u64,
}

impl InitLock {
    /// Finds the field's offset, or says why not.
    pub fn find(vm: &VmStructs) -> Result<InitLock, String> {
        let found = libjvm_local_symbols(&[INIT_LOCK_OFFSET, KLASS_OFFSET, FIELD_ACCESS_WATCHED])?;
        let [Some(offset_at), Some(klass_at), Some(watched_at)] = found[..] else {
            return Err("libjvm.so's symbol table lacks java_lang_Class::_init_lock_offset and its checks".into());
        };
        let klass_expected = vm.static_address("java_lang_Class", "_klass_offset")? as u64;
        if klass_at != klass_expected {
            return Err(format!(
                "libjvm.so's symbol table places java_lang_Class::_klass_offset at {klass_at:#x}, its structure \
                 tables at {klass_expected:#x}"
            ));
        }
        let offset = peek::<i32>(offset_at).ok_or("java_lang_Class::_init_lock_offset is not readable")?;
        let klass = peek::<i32>(klass_at).ok_or("java_lang_Class::_klass_offset is not readable")?;
        // After the header, 4-byte aligned (a compressed reference's), not the injected Klass* itself.
        if !(8..4096).contains(&offset) || offset % 4 != 0 || offset == klass {
            return Err(format!("java_lang_Class::_init_lock_offset is {offset}"));
        }
        Ok(InitLock { offset: offset as u32, field_access_watched: watched_at })
    }

    /// The field's offset in class objects.
    pub fn offset(&self) -> u32 {
        self.offset
    }

    /// The field ID JNI takes for it (HotSpot's encoding of an instance field's offset).
    pub fn field_id(&self) -> usize {
        ((self.offset as usize) << 2) | 2
    }

    /// Whether the field may be read through JNI now: JNI calls are not checked and no JVMTI environment
    /// watches field accesses. Ask before each dump (watches come and go).
    pub fn usable(&self, vm: &VmStructs) -> Result<(), String> {
        if checked_jni(vm) {
            return Err("JNI calls are checked (-Xcheck:jni), which refuses an injected field's ID".into());
        }
        self.unwatched()
    }

    /// Whether no JVMTI environment watches field accesses (enough, with checked JNI, to read the lock
    /// through a declared field's own ID that shares its slot: JDK 17's `componentType`). Ask before each
    /// dump.
    pub fn unwatched(&self) -> Result<(), String> {
        match peek::<u8>(self.field_access_watched) {
            Some(0) => Ok(()),
            Some(_) => Err("a JVMTI agent watches field accesses".into()),
            None => Err("JvmtiExport::_should_post_field_access is not readable".into()),
        }
    }
}
