//! A whole class: every method with code gets entry and exit probes (see [`crate::relocate`]); a method
//! that cannot be rewritten stays as it was and is named with the reason; a class that cannot be read is
//! refused whole.

use crate::bytes::{ClassError, Result};
use crate::class_file::{ACC_ABSTRACT, ACC_MODULE, ACC_NATIVE, ACC_STATIC, ClassFile};
use crate::code::CodeAttribute;
use crate::frame_inference::MethodShape;
use crate::relocate::{ProbeRefs, instrument_code};

/// The static methods the probes call, each `(I)V` taking the method's id.
#[derive(Debug, Clone, Copy)]
pub struct Probes<'a> {
    /// Internal name, e.g. `java/lang/HprofTimes`.
    pub class: &'a str,
    pub enter: &'a str,
    pub exit: &'a str,
}

/// A method as the class file names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodName {
    pub name: String,
    pub descriptor: String,
}

#[derive(Debug, Clone)]
pub struct Instrumented {
    /// The new class file; the input's bytes when no method was instrumented.
    pub bytes: Vec<u8>,
    /// The class's internal name.
    pub class: String,
    /// Its SourceFile attribute, if any.
    pub source_file: Option<String>,
    /// Methods with probes, and the id they pass.
    pub methods: Vec<(MethodName, u32)>,
    /// Methods left as they were, and why (native methods included; abstract ones have no code and are
    /// not listed).
    pub skipped: Vec<(MethodName, String)>,
}

/// Inserts probes into every method of `class_bytes` that has code. `method_id` gives each method's id
/// (called once per method with code, before it is rewritten).
pub fn instrument(
    class_bytes: &[u8],
    probes: &Probes,
    method_id: &mut dyn FnMut(&str, &MethodName) -> u32,
) -> Result<Instrumented> {
    let mut class = ClassFile::parse(class_bytes)?;
    if class.access & ACC_MODULE != 0 {
        return Err(ClassError::new("a module-info class has no code"));
    }
    let name = class.name()?;
    if name == probes.class {
        return Err(ClassError::new("the probes' own class"));
    }
    let mut methods = Vec::new();
    let mut skipped = Vec::new();
    let mut refs: Option<ProbeRefs> = None;
    for m in 0..class.methods.len() {
        let method = &class.methods[m];
        let mname = MethodName {
            name: class.pool.utf8(method.name_index)?,
            descriptor: class.pool.utf8(method.descriptor_index)?,
        };
        if method.access & ACC_NATIVE != 0 {
            skipped.push((mname, "native".to_string()));
            continue;
        }
        let Some((code_at, code_attr)) = class.find_attribute(&method.attributes, "Code") else {
            if method.access & ACC_ABSTRACT == 0 {
                skipped.push((mname, "no Code attribute".to_string()));
            }
            continue;
        };
        let code = match CodeAttribute::parse(&code_attr.info) {
            Ok(c) => c,
            Err(e) => {
                skipped.push((mname, e.message));
                continue;
            }
        };
        let r = match refs {
            Some(r) => r,
            None => {
                let r = ProbeRefs {
                    id: 0,
                    enter: class.pool.intern_methodref(probes.class, probes.enter, "(I)V")?,
                    exit: class.pool.intern_methodref(probes.class, probes.exit, "(I)V")?,
                    throwable: class.pool.intern_class("java/lang/Throwable")?,
                    stack_map_name: class.pool.intern_utf8("StackMapTable")?,
                };
                refs = Some(r);
                r
            }
        };
        let id = method_id(&name, &mname);
        let r = ProbeRefs { id: class.pool.intern_integer(id as i32)?, ..r };
        let shape = MethodShape {
            this_class: class.this_class,
            is_static: method.access & ACC_STATIC != 0,
            constructor: mname.name == "<init>" && name != "java/lang/Object",
            descriptor: &mname.descriptor,
        };
        match instrument_code(&code, &mut class.pool, class.major, &shape, r) {
            Ok(new_code) => {
                class.methods[m].attributes[code_at].info = new_code.write();
                methods.push((mname, id));
            }
            Err(e) => skipped.push((mname, e.message)),
        }
    }
    let source_file = class
        .find_attribute(&class.attributes, "SourceFile")
        .and_then(|(_, a)| a.info.get(..2).map(|b| u16::from_be_bytes([b[0], b[1]])))
        .and_then(|i| class.pool.utf8(i).ok());
    let bytes = if methods.is_empty() { class_bytes.to_vec() } else { class.write() };
    Ok(Instrumented { bytes, class: name, source_file, methods, skipped })
}
