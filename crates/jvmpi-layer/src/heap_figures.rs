//! GC_FINISH's heap figures. Neither JNI nor JVMTI's heap functions may be called when a collection
//! finishes, so the layer reads them where HotSpot's serviceability agent does, through the structure
//! tables libjvm exports (`hotspot::VmStructs`): with G1 (the default collector), the bytes in use
//! (`G1CollectedHeap::_summary_bytes_used`) and the committed size of eden, survivor and old space
//! (`G1MonitoringSupport`). Other collectors, and the number of objects, give -1: unknown.

use std::sync::OnceLock;

struct G1Figures {
    /// Address of `_summary_bytes_used`.
    used: usize,
    /// Address of the `G1MonitoringSupport *`.
    monitoring: usize,
    /// Offsets of its three committed sizes.
    committed: [usize; 3],
}

static FIGURES: OnceLock<Option<G1Figures>> = OnceLock::new();

/// Finds the addresses, once the heap exists (VMInit).
pub fn init() {
    FIGURES.get_or_init(|| find().ok());
}

fn find() -> Result<G1Figures, String> {
    let vm = hotspot::VmStructs::get().ok_or("no structure tables")?;
    if !vm.bool_flag("UseG1GC")? {
        return Err("not G1".into());
    }
    let heap_at = vm.static_address("Universe", "_collectedHeap")?;
    // SAFETY: the address of Universe::_collectedHeap, from the JVM's own table; set before VMInit.
    let heap = unsafe { *(heap_at as *const usize) };
    if heap == 0 {
        return Err("no heap yet".into());
    }
    let used = heap + vm.offset("G1CollectedHeap", "_summary_bytes_used")?;
    let monitoring = heap
        + vm.offset("G1CollectedHeap", "_monitoring_support").or_else(|_| vm.offset("G1CollectedHeap", "_g1mm"))?;
    let names = [
        ["_eden_space_committed", "_survivor_space_committed", "_old_gen_committed"],
        ["_eden_committed", "_survivor_committed", "_old_committed"],
    ];
    let committed = names
        .iter()
        .find_map(|set| {
            let offs: Result<Vec<usize>, String> = set.iter().map(|f| vm.offset("G1MonitoringSupport", f)).collect();
            offs.ok().map(|o| [o[0], o[1], o[2]])
        })
        .ok_or("G1MonitoringSupport's committed sizes are not exported")?;
    Ok(G1Figures { used, monitoring, committed })
}

/// (used objects, used bytes, total bytes); -1 where unknown.
pub fn snapshot() -> (i64, i64, i64) {
    let Some(Some(f)) = FIGURES.get() else { return (-1, -1, -1) };
    // SAFETY: addresses inside the live heap object and its monitoring support, found through the JVM's
    // tables; read at the end of a collection, while the VM is stopped.
    unsafe {
        let used = *(f.used as *const usize) as i64;
        let monitoring = *(f.monitoring as *const usize);
        let total = if monitoring == 0 {
            -1
        } else {
            f.committed.iter().map(|&o| *((monitoring + o) as *const usize) as i64).sum()
        };
        (-1, used, total)
    }
}
