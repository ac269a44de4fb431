//! The data of a JVMPI_EVENT_CLASS_LOAD, read from JVMTI: the class's name, source file, interfaces,
//! methods with their IDs and first and last source lines, and its static and instance fields.
//!
//! Names are the VM's internal names with dots, as the reference VM gave them (`java.lang.String`,
//! `[Ljava.lang.String;` for array classes); a class without a SourceFile attribute has source name "".

use crate::abi::*;
use crate::threads::cstring;
use jvmti::{Jvmti, sys};
use std::ffi::CString;

/// Owns every string and array the event points to, for as long as the event is being delivered.
pub struct ClassLoadData {
    name: CString,
    source: CString,
    num_interfaces: i32,
    _strings: Vec<CString>,
    methods: Vec<JVMPI_Method>,
    statics: Vec<JVMPI_Field>,
    instances: Vec<JVMPI_Field>,
}

/// `Ljava/lang/String;` → `java.lang.String`; array signatures keep their form with dots.
pub fn class_name_from_signature(sig: &str) -> String {
    let inner = if sig.starts_with('L') && sig.ends_with(';') { &sig[1..sig.len() - 1] } else { sig };
    inner.replace('/', ".")
}

impl ClassLoadData {
    pub fn read(jvmti: Jvmti, class: sys::jclass) -> ClassLoadData {
        let sig = jvmti.class_signature(class).unwrap_or_default();
        let name = cstring(&class_name_from_signature(&sig));
        let source = cstring(&jvmti.source_file_name(class).ok().flatten().unwrap_or_default());
        let num_interfaces = jvmti.implemented_interfaces(class).map(|v| v.len() as i32).unwrap_or(0);
        let mut strings = Vec::new();
        let mut methods = Vec::new();
        for m in jvmti.class_methods(class).unwrap_or_default() {
            let Ok(n) = jvmti.method_name(m) else { continue };
            let (start, end) = line_range(jvmti, m);
            let (name, sig) = (cstring(&n.name), cstring(&n.signature));
            methods.push(JVMPI_Method {
                method_name: name.as_ptr() as *mut _,
                method_signature: sig.as_ptr() as *mut _,
                start_lineno: start,
                end_lineno: end,
                method_id: m,
            });
            strings.push(name);
            strings.push(sig);
        }
        let mut statics = Vec::new();
        let mut instances = Vec::new();
        for f in jvmti.field_infos(class).unwrap_or_default() {
            let (name, sig) = (cstring(&f.name), cstring(&f.signature));
            let field = JVMPI_Field { field_name: name.as_ptr() as *mut _, field_signature: sig.as_ptr() as *mut _ };
            if f.is_static() {
                statics.push(field)
            } else {
                instances.push(field)
            }
            strings.push(name);
            strings.push(sig);
        }
        ClassLoadData { name, source, num_interfaces, _strings: strings, methods, statics, instances }
    }

    /// The event; it borrows from `self`.
    pub fn event(&mut self, env: *mut sys::JNIEnv, class_id: jobjectID) -> JVMPI_Event {
        let mut ev = JVMPI_Event::new(JVMPI_EVENT_CLASS_LOAD, env);
        ev.u.class_load = ClassLoad {
            class_name: self.name.as_ptr() as *mut _,
            source_name: self.source.as_ptr() as *mut _,
            num_interfaces: self.num_interfaces,
            num_methods: self.methods.len() as i32,
            methods: self.methods.as_mut_ptr(),
            num_static_fields: self.statics.len() as i32,
            statics: self.statics.as_mut_ptr(),
            num_instance_fields: self.instances.len() as i32,
            instances: self.instances.as_mut_ptr(),
            class_id,
        };
        ev
    }
}

/// First and last source line of a method; -1, -1 for native and abstract methods and those without lines.
fn line_range(jvmti: Jvmti, method: sys::jmethodID) -> (i32, i32) {
    let table = jvmti.line_number_table(method).unwrap_or_default();
    let lines = table.entries().iter().map(|&(_, line)| line);
    match (lines.clone().min(), lines.max()) {
        (Some(lo), Some(hi)) => (lo, hi),
        _ => (-1, -1),
    }
}
