//! The Dr. Dobb's ProfilerHook in Rust: instances and bytes per class, printed at shutdown, largest first.
//!
//! ```sh
//! cargo build --release --example profiler_hook
//! java -agentpath:$PWD/target/release/libjvmpi.so=$PWD/target/release/examples/libprofiler_hook.so Hello
//! ```

use jvmpi_agent::{Event, EventType, Handler, Profiler, sys::jobjectID};
use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::Mutex;

#[derive(Default)]
struct ClassItem {
    name: String,
    count: u64,
    size: u64,
}

#[derive(Default)]
struct ProfilerHook {
    /// Class ID → its counts. IDs are numbers, kept as such.
    classes: Mutex<HashMap<usize, ClassItem>>,
}

fn key(id: jobjectID) -> usize {
    id as usize
}

impl Handler for ProfilerHook {
    fn on_event(&self, _profiler: Profiler, event: &Event<'_>, _requested: bool) {
        let mut classes = self.classes.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::ClassLoad { class, .. } => {
                classes.insert(key(class.class_id), ClassItem { name: class.name.to_owned(), ..Default::default() });
            }
            Event::ObjectAlloc { class_id, size, .. } => {
                if let Some(item) = classes.get_mut(&key(*class_id)) {
                    item.count += 1;
                    item.size += *size as u64;
                }
            }
            Event::JvmShutDown { .. } => {
                let mut items: Vec<&ClassItem> = classes.values().collect();
                items.sort_by(|a, b| b.size.cmp(&a.size).then(a.name.cmp(&b.name)));
                println!("\n\nShutdown Summary");
                println!("Size\tCount\tName");
                for i in &items {
                    println!("{}\t{}\t{}", i.size, i.count, i.name);
                }
                println!();
                println!("Total Memory:\t{}", items.iter().map(|i| i.size).sum::<u64>());
                println!("Total Objects:\t{}", items.iter().map(|i| i.count).sum::<u64>());
            }
            _ => {}
        }
    }
}

/// # Safety
/// Called by the VM (or libjvmpi.so) with its JavaVM.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn JVM_OnLoad(
    vm: *mut jvmpi_agent::JavaVM,
    options: *const c_char,
    _reserved: jvmpi_agent::Reserved,
) -> i32 {
    // SAFETY: JVM_OnLoad's own arguments.
    unsafe {
        jvmpi_agent::on_load(vm, options, |profiler, _options| {
            for e in [EventType::ClassLoad, EventType::ObjectAlloc, EventType::JvmShutDown] {
                profiler.enable(e).map_err(|f| format!("cannot enable {e:?}: {f:?}"))?;
            }
            Ok(ProfilerHook::default())
        })
    }
}
