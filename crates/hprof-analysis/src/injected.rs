//! What a HotSpot heap dump leaves out of an instance: the fields the VM injects into some JDK classes
//! (javaClasses.hpp, `*_INJECTED_FIELDS`; the dumper writes Java fields only) and the `@Contended`
//! annotations that pad a few classes. Both change instance sizes, so they come from these tables, by
//! the JDK generation the dump's classes reveal.

/// A HotSpot generation, as far as injected fields and array layouts differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Jdk {
    /// JDK 9 to 18: `java.lang.Thread` without a field holder.
    Jdk17,
    /// JDK 19 to 21: `Thread.holder`, virtual threads.
    Jdk21,
    /// JDK 22 and later: arrays start right after their length (JDK-8139457), compact headers (24+).
    Jdk25,
}

impl Jdk {
    pub fn describe(self) -> &'static str {
        match self {
            Jdk::Jdk17 => "JDK 9-18",
            Jdk::Jdk21 => "JDK 19-21",
            Jdk::Jdk25 => "JDK 22+",
        }
    }

    /// Guesses the generation from the instance fields the dump gives for a few core classes.
    pub fn detect(fields_of: &dyn Fn(&str) -> Option<Vec<String>>) -> Option<Jdk> {
        let thread = fields_of("java.lang.Thread")?;
        if !thread.iter().any(|f| f == "holder") {
            return Some(Jdk::Jdk17);
        }
        let class = fields_of("java.lang.Class").unwrap_or_default();
        // JDK 25's java.lang.Class has Java fields for what the VM kept before (`modifiers`, `primitive`,
        // `signers`, `protectionDomain`). JDK 22/23 are taken for 21 here: only their arrays differ, and the
        // layout's evidence tells those apart.
        if class.iter().any(|f| f == "modifiers" || f == "primitive") {
            return Some(Jdk::Jdk25);
        }
        Some(Jdk::Jdk21)
    }
}

/// A field's size class as the layout builder sees it: a primitive's size, or a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Bytes(u32),
    Reference,
}

/// intptr_t: 8 bytes on a 64-bit VM.
const INTPTR: Slot = Slot::Bytes(8);
const INT: Slot = Slot::Bytes(4);
const SHORT: Slot = Slot::Bytes(2);
const BYTE: Slot = Slot::Bytes(1);
const REF: Slot = Slot::Reference;

/// The fields HotSpot injects into `class` (Java source name) on a 64-bit VM of generation `jdk`.
pub fn injected_fields(class: &str, jdk: Jdk) -> &'static [Slot] {
    match class {
        // klass, array_klass, oop_size, static_oop_field_count, protection_domain, signers, source_file;
        // JDK 21 one reference more (init_lock); JDK 25 made protection_domain and signers Java fields.
        // (21 and 25 measured against GC.class_histogram: 8 bytes per mirror without compressed oops.)
        "java.lang.Class" => match jdk {
            Jdk::Jdk17 => &[INTPTR, INTPTR, INT, INT, REF, REF, REF],
            Jdk::Jdk21 => &[INTPTR, INTPTR, INT, INT, REF, REF, REF, REF],
            Jdk::Jdk25 => &[INTPTR, INTPTR, INT, INT, REF, REF],
        },
        // flags (deduplication bits).
        "java.lang.String" => &[BYTE],
        // loader_data.
        "java.lang.ClassLoader" => &[INTPTR],
        // vmtarget, vmholder (a Java field in JDK 25).
        "java.lang.invoke.ResolvedMethodName" if jdk < Jdk::Jdk25 => &[INTPTR, REF],
        "java.lang.invoke.ResolvedMethodName" => &[INTPTR],
        // vmindex.
        "java.lang.invoke.MemberName" => &[INTPTR],
        // vmdependencies, last_cleanup.
        "java.lang.invoke.MethodHandleNatives$CallSiteContext" => &[INTPTR, INTPTR],
        // version.
        "java.lang.StackFrameInfo" if jdk < Jdk::Jdk25 => &[SHORT],
        // module_entry.
        "java.lang.Module" => &[INTPTR],
        // during_unsafe_access.
        "java.lang.InternalError" => &[BYTE],
        // jvmti_thread_state, jvmti_VTMS_transition_disable_count, jfr_epoch.
        "java.lang.Thread" if jdk >= Jdk::Jdk21 => &[INTPTR, INT, SHORT],
        // jfr_epoch.
        "java.lang.VirtualThread" if jdk >= Jdk::Jdk21 => &[SHORT],
        _ => &[],
    }
}

/// `@Contended` in JDK classes: the whole class, or named fields (one group per annotation value).
pub enum Contended {
    No,
    Class,
    Fields(&'static [&'static [&'static str]]),
}

pub fn contended(class: &str, jdk: Jdk) -> Contended {
    match class {
        // Thread's field holder of JDK 19+ took the padding away.
        "java.lang.Thread" if jdk == Jdk::Jdk17 => {
            Contended::Fields(&[&["threadLocalRandomSeed", "threadLocalRandomProbe", "threadLocalRandomSecondarySeed"]])
        }
        "java.util.concurrent.ConcurrentHashMap$CounterCell"
        | "java.util.concurrent.atomic.Striped64$Cell"
        | "java.util.concurrent.Exchanger$Node" => Contended::Class,
        _ => Contended::No,
    }
}
