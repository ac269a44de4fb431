//! The methods given probes, by the id their probes pass: names for the report, resolved when a class is
//! instrumented (off the probes' path).

use std::sync::{Arc, Mutex};

#[derive(Debug, Clone)]
pub struct MethodEntry {
    /// Source form, `java.util.Random`.
    pub class_name: Arc<str>,
    pub name: String,
    pub descriptor: String,
    pub source_file: Option<Arc<str>>,
}

#[derive(Default)]
pub struct MethodTable {
    entries: Mutex<Vec<MethodEntry>>,
}

impl MethodTable {
    /// Registers a method and returns its id (ids start at 1).
    pub fn add(&self, entry: MethodEntry) -> u32 {
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.push(entry);
        e.len() as u32
    }

    pub fn set_source_file(&self, id: u32, file: Arc<str>) {
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = (id as usize).checked_sub(1).and_then(|i| e.get_mut(i)) {
            m.source_file = Some(file);
        }
    }

    pub fn get(&self, id: u32) -> Option<MethodEntry> {
        let e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.get((id as usize).checked_sub(1)?).cloned()
    }

    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}
