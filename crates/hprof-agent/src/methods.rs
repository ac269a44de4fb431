//! Method names, source files and line tables, resolved once per jmethodID and cached. jmethodIDs stay
//! valid (and are never reused) while the agent runs, so the cache never goes stale.

use crate::classes::{ClassEnv, ClassTable};
use jvmti::{Jni, LineTable, sys};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the method cache needs around it: the class table (and what that needs).
pub trait MethodEnv: ClassEnv {
    fn classes(&self) -> &ClassTable;
}

#[derive(Debug)]
pub struct MethodInfo {
    pub class_serial: u32,
    /// Java source form of the declaring class.
    pub class_name: String,
    pub name: String,
    pub signature: String,
    pub source_file: Option<String>,
    pub line_table: LineTable,
    pub native: bool,
}

#[derive(Debug, Default)]
pub struct MethodCache {
    map: Mutex<HashMap<usize, Arc<MethodInfo>, rustc_hash::FxBuildHasher>>,
}

impl MethodCache {
    /// The method's details; `None` if the JVM no longer knows it (its class was unloaded).
    /// Resolution happens outside the cache lock: JVMTI calls may wait for a safepoint.
    pub fn resolve(
        &self,
        ctx: &(impl MethodEnv + ?Sized),
        jni: Option<Jni>,
        method: sys::jmethodID,
    ) -> Option<Arc<MethodInfo>> {
        let key = method as usize;
        if let Some(found) = self.map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Some(found.clone());
        }
        let info = Arc::new(Self::lookup(ctx, jni, method)?);
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        Some(map.entry(key).or_insert(info).clone())
    }

    fn lookup(ctx: &(impl MethodEnv + ?Sized), jni: Option<Jni>, method: sys::jmethodID) -> Option<MethodInfo> {
        let jvmti = ctx.jvmti();
        let name = jvmti.method_name(method).ok()?;
        let class = jvmti.method_declaring_class(method).ok()?;
        let record = ctx.classes().register(ctx, class);
        let source_file = jvmti.source_file_name(class).ok().flatten();
        if let Some(jni) = jni {
            jni.delete_local_ref(class);
        }
        let record = record?;
        Some(MethodInfo {
            class_serial: record.serial,
            class_name: record.name.clone(),
            name: name.name,
            signature: name.signature,
            source_file,
            line_table: jvmti.line_number_table(method).unwrap_or_default(),
            native: jvmti.is_method_native(method).unwrap_or(false),
        })
    }
}
