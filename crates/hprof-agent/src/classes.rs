//! The class table: a serial (from 100001), an object identifier and names for every class the agent has
//! seen. Classes are found again through a tag on the class object (see [`crate::ids::main_tag`]), which is
//! one JVMTI call instead of a signature lookup.

use crate::agent::Agent;
use crate::ids::main_tag;
use hprof_format::names::{array_element_type, java_name_from_signature};
use hprof_format::serial_base;
use jvmti::sys;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

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
    pub fn register(&self, agent: &Agent, class: sys::jclass) -> Option<Arc<ClassRecord>> {
        if let Some(found) = self.lookup(agent, class) {
            return Some(found);
        }
        let record = {
            let _g = self.registering.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(found) = self.lookup(agent, class) {
                return Some(found);
            }
            let signature = agent.jvmti.class_signature(class).ok()?;
            // Only registration (serialised above) grows the table, so the length is stable here.
            let index = self.classes.read().unwrap_or_else(|e| e.into_inner()).len() as u32;
            let record = Arc::new(ClassRecord {
                serial: serial_base::CLASS + 1 + index,
                object_id: agent.ids.next(),
                name: java_name_from_signature(&signature),
                signature,
                unloaded: AtomicBool::new(false),
            });
            // A class object allocated while heap=sites runs carries a site tag; the class tag replaces it
            // (class objects are not worth an allocation site).
            agent.jvmti.set_tag(class, main_tag::class(index)).ok()?;
            self.classes.write().unwrap_or_else(|e| e.into_inner()).push(record.clone());
            record
        };
        agent.output.load_class(&record);
        Some(record)
    }

    fn lookup(&self, agent: &Agent, class: sys::jclass) -> Option<Arc<ClassRecord>> {
        let tag = agent.jvmti.tag(class).ok()?;
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
    pub fn on_class_freed(&self, agent: &Agent, tag: i64) {
        if let Some(record) = self.by_tag(tag)
            && !record.unloaded.swap(true, Ordering::Relaxed)
        {
            agent.output.unload_class(record.serial);
        }
    }
}
