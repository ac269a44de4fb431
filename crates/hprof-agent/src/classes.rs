//! The class table: a serial (from 100001), an object identifier and names for every class the agent has
//! seen. Classes are found again through a tag on the class object (see [`crate::ids::main_tag`]), which is
//! one JVMTI call instead of a signature lookup.

use crate::ids::{ObjectIds, main_tag};
use hprof_format::names::{array_element_type, java_name_from_signature};
use hprof_format::serial_base;
use jvmti::Jvmti;
use jvmti::sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// What the class table needs around it: JVMTI to read and tag classes, the object identifiers, and the
/// writer, told of each class as it is numbered or unloaded. The agent's context provides it.
pub trait ClassEnv {
    fn jvmti(&self) -> Jvmti;
    fn ids(&self) -> &ObjectIds;
    fn class_loaded(&self, record: &ClassRecord);
    fn class_unloaded(&self, serial: u32);
}

#[derive(Debug)]
pub struct ClassRecord {
    pub serial: u32,
    pub object_id: u64,
    /// JVM form: `Ljava/lang/String;`, `[I`.
    pub signature: String,
    /// Java source form: `java.lang.String`, `int[]`.
    pub name: String,
    pub unloaded: AtomicBool,
}

impl ClassRecord {
    /// 0 for instance classes, else the HPROF basic type of the array's elements.
    pub fn array_type(&self) -> u8 {
        array_element_type(&self.signature).map(|t| t as u8).unwrap_or(0)
    }
}

#[derive(Debug, Default)]
pub struct ClassTable {
    classes: RwLock<Vec<Arc<ClassRecord>>>,
    /// Serialises registration so that a class racing in from two threads gets one serial.
    registering: Mutex<()>,
}

impl ClassTable {
    /// The record of `class`, registering it (and writing LOAD CLASS in binary output) if it is new.
    pub fn register(&self, ctx: &(impl ClassEnv + ?Sized), class: sys::jclass) -> Option<Arc<ClassRecord>> {
        if let Some(found) = self.lookup(ctx, class) {
            return Some(found);
        }
        let record = {
            let _g = self.registering.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(found) = self.lookup(ctx, class) {
                return Some(found);
            }
            let signature = ctx.jvmti().class_signature(class).ok()?;
            // Only registration (serialised above) grows the table, so the length is stable here.
            let index = self.classes.read().unwrap_or_else(|e| e.into_inner()).len() as u32;
            // A class object allocated while heap=sites runs carries a site tag; the class tag replaces it
            // (class objects are not worth an allocation site).
            ctx.jvmti().set_tag(class, main_tag::class(index)).ok()?;
            self.append(signature, ctx.ids().next())
        };
        ctx.class_loaded(&record);
        Some(record)
    }

    /// Numbers a class by its signature alone, without JVMTI: registration's last step, and how tests
    /// build a table. Callers serialise (see `registering`).
    pub(crate) fn append(&self, signature: String, object_id: u64) -> Arc<ClassRecord> {
        let mut classes = self.classes.write().unwrap_or_else(|e| e.into_inner());
        let record = Arc::new(ClassRecord {
            serial: serial_base::CLASS + 1 + classes.len() as u32,
            object_id,
            name: java_name_from_signature(&signature),
            signature,
            unloaded: AtomicBool::new(false),
        });
        classes.push(record.clone());
        record
    }

    fn lookup(&self, ctx: &(impl ClassEnv + ?Sized), class: sys::jclass) -> Option<Arc<ClassRecord>> {
        let tag = ctx.jvmti().tag(class).ok()?;
        self.by_tag(tag)
    }

    pub fn by_tag(&self, tag: i64) -> Option<Arc<ClassRecord>> {
        let index = main_tag::class_index(tag)?;
        self.classes.read().unwrap_or_else(|e| e.into_inner()).get(index as usize).cloned()
    }

    pub fn by_serial(&self, serial: u32) -> Option<Arc<ClassRecord>> {
        let index = serial.checked_sub(serial_base::CLASS + 1)?;
        self.classes.read().unwrap_or_else(|e| e.into_inner()).get(index as usize).cloned()
    }

    /// Every class registered so far, in serial order.
    pub fn all(&self) -> Vec<Arc<ClassRecord>> {
        self.classes.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Called for ObjectFree of a class tag: the class was unloaded.
    pub fn on_class_freed(&self, ctx: &(impl ClassEnv + ?Sized), tag: i64) {
        if let Some(record) = self.by_tag(tag)
            && !record.unloaded.swap(true, Ordering::Relaxed)
        {
            ctx.class_unloaded(record.serial);
        }
    }
}
