use crate::env::{Jvmti, jvmti_call};
use crate::error::{JvmtiError, Result};
use jvmti_sys as sys;
use std::ffi::c_char;

/// `GetMethodName`: name and JVM signature, e.g. `("read", "([BII)I")`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodName {
    pub name: String,
    pub signature: String,
}

/// A method's bytecode-index → source-line table, sorted by start index.
#[derive(Debug, Clone, Default)]
pub struct LineTable(Vec<(i64, i32)>);

impl LineTable {
    pub fn new(mut entries: Vec<(i64, i32)>) -> LineTable {
        entries.sort_unstable();
        LineTable(entries)
    }

    /// The source line of a bytecode index, or `None` when the table is empty or the index is before it.
    pub fn line_of(&self, bci: i64) -> Option<i32> {
        let pos = self.0.partition_point(|&(start, _)| start <= bci);
        if pos == 0 { None } else { Some(self.0[pos - 1].1) }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The (start index, line) entries, sorted by start index.
    pub fn entries(&self) -> &[(i64, i32)] {
        &self.0
    }
}

/// A declared field: name, JVM signature, and modifiers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldInfo {
    pub field: sys::jfieldID,
    pub name: String,
    pub signature: String,
    pub modifiers: i32,
}

impl FieldInfo {
    pub fn is_static(&self) -> bool {
        self.modifiers & 0x0008 != 0
    }
}

impl Jvmti {
    /// The class's JVM signature, e.g. `Ljava/lang/String;` or `[I`.
    pub fn class_signature(self, class: sys::jclass) -> Result<String> {
        let mut sig: *mut c_char = std::ptr::null_mut();
        jvmti_call!(self, GetClassSignature, class, &mut sig, std::ptr::null_mut())?;
        // SAFETY: the JVMTI call succeeded, so `sig` is null or a string this environment allocated for us.
        Ok(unsafe { self.take_string(sig) }.unwrap_or_default())
    }

    /// The source file attribute; `None` when the class has none.
    pub fn source_file_name(self, class: sys::jclass) -> Result<Option<String>> {
        let mut name: *mut c_char = std::ptr::null_mut();
        match jvmti_call!(self, GetSourceFileName, class, &mut name) {
            // SAFETY: the JVMTI call succeeded, so `name` is null or a string this environment allocated for us.
            Ok(()) => Ok(unsafe { self.take_string(name) }),
            Err(JvmtiError(sys::JVMTI_ERROR_ABSENT_INFORMATION)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    pub fn class_status(self, class: sys::jclass) -> Result<u32> {
        let mut status: sys::jint = 0;
        jvmti_call!(self, GetClassStatus, class, &mut status)?;
        Ok(status as u32)
    }

    pub fn class_modifiers(self, class: sys::jclass) -> Result<i32> {
        let mut m: sys::jint = 0;
        jvmti_call!(self, GetClassModifiers, class, &mut m)?;
        Ok(m)
    }

    /// Every loaded class, array classes included, as local references.
    pub fn loaded_classes(self) -> Result<Vec<sys::jclass>> {
        let mut count: sys::jint = 0;
        let mut classes: *mut sys::jclass = std::ptr::null_mut();
        jvmti_call!(self, GetLoadedClasses, &mut count, &mut classes)?;
        // SAFETY: the JVMTI call succeeded, so `classes` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_array(classes, count) })
    }

    /// The class's methods. Calling this also makes the JVM create their jmethodIDs, which
    /// AsyncGetCallTrace needs to exist before a signal arrives.
    pub fn class_methods(self, class: sys::jclass) -> Result<Vec<sys::jmethodID>> {
        let mut count: sys::jint = 0;
        let mut methods: *mut sys::jmethodID = std::ptr::null_mut();
        jvmti_call!(self, GetClassMethods, class, &mut count, &mut methods)?;
        // SAFETY: the JVMTI call succeeded, so `methods` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_array(methods, count) })
    }

    pub fn class_fields(self, class: sys::jclass) -> Result<Vec<sys::jfieldID>> {
        let mut count: sys::jint = 0;
        let mut fields: *mut sys::jfieldID = std::ptr::null_mut();
        jvmti_call!(self, GetClassFields, class, &mut count, &mut fields)?;
        // SAFETY: the JVMTI call succeeded, so `fields` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_array(fields, count) })
    }

    /// Declared fields with names, signatures and modifiers, in declaration order.
    pub fn field_infos(self, class: sys::jclass) -> Result<Vec<FieldInfo>> {
        self.class_fields(class)?
            .into_iter()
            .map(|field| {
                let mut name: *mut c_char = std::ptr::null_mut();
                let mut sig: *mut c_char = std::ptr::null_mut();
                jvmti_call!(self, GetFieldName, class, field, &mut name, &mut sig, std::ptr::null_mut())?;
                let mut modifiers: sys::jint = 0;
                jvmti_call!(self, GetFieldModifiers, class, field, &mut modifiers)?;
                Ok(FieldInfo {
                    field,
                    // SAFETY: the JVMTI call succeeded, so `name` is null or a string this environment allocated for us.
                    name: unsafe { self.take_string(name) }.unwrap_or_default(),
                    // SAFETY: the JVMTI call succeeded, so `sig` is null or a string this environment allocated for us.
                    signature: unsafe { self.take_string(sig) }.unwrap_or_default(),
                    modifiers,
                })
            })
            .collect()
    }

    pub fn implemented_interfaces(self, class: sys::jclass) -> Result<Vec<sys::jclass>> {
        let mut count: sys::jint = 0;
        let mut ifaces: *mut sys::jclass = std::ptr::null_mut();
        jvmti_call!(self, GetImplementedInterfaces, class, &mut count, &mut ifaces)?;
        // SAFETY: the JVMTI call succeeded, so `ifaces` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_array(ifaces, count) })
    }

    /// The defining loader, null for the bootstrap loader.
    pub fn class_loader(self, class: sys::jclass) -> Result<sys::jobject> {
        let mut loader: sys::jobject = std::ptr::null_mut();
        jvmti_call!(self, GetClassLoader, class, &mut loader)?;
        Ok(loader)
    }

    pub fn method_name(self, method: sys::jmethodID) -> Result<MethodName> {
        let mut name: *mut c_char = std::ptr::null_mut();
        let mut sig: *mut c_char = std::ptr::null_mut();
        jvmti_call!(self, GetMethodName, method, &mut name, &mut sig, std::ptr::null_mut())?;
        Ok(MethodName {
            // SAFETY: the JVMTI call succeeded, so `name` is null or a string this environment allocated for us.
            name: unsafe { self.take_string(name) }.unwrap_or_default(),
            // SAFETY: the JVMTI call succeeded, so `sig` is null or a string this environment allocated for us.
            signature: unsafe { self.take_string(sig) }.unwrap_or_default(),
        })
    }

    /// The class that declares `method` (a local reference).
    pub fn method_declaring_class(self, method: sys::jmethodID) -> Result<sys::jclass> {
        let mut class: sys::jclass = std::ptr::null_mut();
        jvmti_call!(self, GetMethodDeclaringClass, method, &mut class)?;
        Ok(class)
    }

    pub fn method_modifiers(self, method: sys::jmethodID) -> Result<i32> {
        let mut m: sys::jint = 0;
        jvmti_call!(self, GetMethodModifiers, method, &mut m)?;
        Ok(m)
    }

    pub fn is_method_native(self, method: sys::jmethodID) -> Result<bool> {
        let mut b: sys::jboolean = 0;
        jvmti_call!(self, IsMethodNative, method, &mut b)?;
        Ok(b != 0)
    }

    /// The line table; empty for native methods and classes compiled without line numbers.
    pub fn line_number_table(self, method: sys::jmethodID) -> Result<LineTable> {
        let mut count: sys::jint = 0;
        let mut table: *mut sys::jvmtiLineNumberEntry = std::ptr::null_mut();
        match jvmti_call!(self, GetLineNumberTable, method, &mut count, &mut table) {
            Ok(()) => {
                // SAFETY: the JVMTI call succeeded, so `table` is null or this environment's allocation of as many
                // elements as it said, ours to free.
                let entries = unsafe { self.take_array(table, count) };
                Ok(LineTable::new(entries.iter().map(|e| (e.start_location, e.line_number)).collect()))
            }
            Err(JvmtiError(sys::JVMTI_ERROR_ABSENT_INFORMATION)) | Err(JvmtiError(sys::JVMTI_ERROR_NATIVE_METHOD)) => {
                Ok(LineTable::default())
            }
            Err(e) => Err(e),
        }
    }

    /// Shallow size of an object in bytes, as the VM lays it out.
    pub fn object_size(self, object: sys::jobject) -> Result<i64> {
        let mut size: sys::jlong = 0;
        jvmti_call!(self, GetObjectSize, object, &mut size)?;
        Ok(size)
    }

    pub fn object_hash_code(self, object: sys::jobject) -> Result<i32> {
        let mut h: sys::jint = 0;
        jvmti_call!(self, GetObjectHashCode, object, &mut h)?;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::LineTable;

    #[test]
    fn line_of_picks_the_last_entry_at_or_before_the_index() {
        let t = LineTable::new(vec![(10, 7), (0, 5), (4, 6)]);
        assert_eq!(t.line_of(0), Some(5));
        assert_eq!(t.line_of(3), Some(5));
        assert_eq!(t.line_of(4), Some(6));
        assert_eq!(t.line_of(99), Some(7));
        assert_eq!(LineTable::default().line_of(3), None);
        assert_eq!(LineTable::new(vec![(5, 1)]).line_of(2), None);
    }
}
