//! The lock flame graph: full stacks taken when a thread blocks on a monitor, weighted by the nanoseconds
//! it stayed blocked, with the lock's class as the top frame (`[lock:java.lang.Object]`).
//!
//! A stack is resolved to frame indexes the first time it is seen (a method's ID may go stale once its
//! class is unloaded), then found again by its raw `(jmethodID, bci)` frames.

use crate::context::Context;
use crate::log;
use crate::options::Options;
use crate::traces::RawFrame;
use hprof_format::flame::{WeightedStack, write_collapsed, write_flamegraph};
use jvmti::Jni;
use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

struct Stack {
    class_serial: u32,
    /// Frame indexes in the trace table, top first.
    frames: Box<[u32]>,
    nanos: u64,
}

#[derive(Default)]
struct Inner {
    /// Key: a marker frame carrying the class serial, then the raw frames.
    by_raw: FxHashMap<Box<[RawFrame]>, u32>,
    stacks: Vec<Stack>,
}

pub struct LockStacks {
    inner: Mutex<Inner>,
    flamegraph: Option<PathBuf>,
    collapsed: Option<PathBuf>,
}

impl LockStacks {
    /// Frames taken per stack; deeper stacks lose their outermost frames.
    pub const MAX_FRAMES: usize = 2048;

    /// With `flamegraph=` or `collapsed=`. When cpu=samples draws its own graph to those names, ours go to
    /// `<stem>.locks.<ext>` beside them.
    pub fn for_options(options: &Options) -> Option<LockStacks> {
        let place = |file: &Option<String>| {
            file.as_deref().map(|f| if options.cpu.is_some() { locks_path(Path::new(f)) } else { PathBuf::from(f) })
        };
        let (flamegraph, collapsed) = (place(&options.flamegraph), place(&options.collapsed));
        (flamegraph.is_some() || collapsed.is_some()).then(|| LockStacks {
            inner: Mutex::default(),
            flamegraph,
            collapsed,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The id of a stack (top first) blocked on a monitor of class `class_serial`.
    pub fn intern(&self, ctx: &Context, jni: Jni, class_serial: u32, raw: &[RawFrame]) -> u32 {
        let mut key = Vec::with_capacity(raw.len() + 1);
        key.push(RawFrame { method: usize::MAX, bci: class_serial as i32 });
        key.extend_from_slice(raw);
        if let Some(&id) = self.lock().by_raw.get(key.as_slice()) {
            return id;
        }
        // Resolve outside our lock: it may call JVMTI.
        let frames: Box<[u32]> = raw
            .iter()
            .map(|&f| ctx.frame_index(Some(jni), f).unwrap_or_else(|| ctx.traces().pseudo_frame("<unknown method>")))
            .collect();
        let mut inner = self.lock();
        if let Some(&id) = inner.by_raw.get(key.as_slice()) {
            return id;
        }
        let id = inner.stacks.len() as u32;
        inner.stacks.push(Stack { class_serial, frames, nanos: 0 });
        inner.by_raw.insert(key.into(), id);
        id
    }

    pub fn add(&self, id: u32, nanos: u64) {
        if let Some(s) = self.lock().stacks.get_mut(id as usize) {
            s.nanos += nanos;
        }
    }

    /// Every stack with time on it, plus `(id, nanos)` of waits in progress, root first, the lock's class on
    /// top.
    fn weighted(&self, ctx: &Context, in_progress: &[(u32, u64)]) -> Vec<WeightedStack> {
        let stacks: Vec<(u32, Box<[u32]>, u64)> = {
            let inner = self.lock();
            let mut nanos: Vec<u64> = inner.stacks.iter().map(|s| s.nanos).collect();
            for &(id, n) in in_progress {
                if let Some(total) = nanos.get_mut(id as usize) {
                    *total += n;
                }
            }
            inner
                .stacks
                .iter()
                .zip(nanos)
                .filter(|(_, n)| *n > 0)
                .map(|(s, n)| (s.class_serial, s.frames.clone(), n))
                .collect()
        };
        stacks
            .into_iter()
            .map(|(class_serial, frames, nanos)| {
                let mut names: Vec<String> = frames
                    .iter()
                    .rev()
                    .map(|&i| ctx.traces().frame(i).map(|f| f.frame.qualified_method()).unwrap_or_default())
                    .collect();
                let class = ctx.classes().by_serial(class_serial).map(|c| c.name.clone());
                names.push(format!("[lock:{}]", class.as_deref().unwrap_or("<unknown class>")));
                WeightedStack { frames: names, weight: nanos }
            })
            .collect()
    }

    /// (Re)writes the files with the totals so far; a failure is reported and the profile goes on.
    pub fn write_files(&self, ctx: &Context, in_progress: &[(u32, u64)]) {
        let stacks = self.weighted(ctx, in_progress);
        if let Some(path) = &self.flamegraph
            && let Err(e) = write_flamegraph(path, &stacks, "Lock contention: time blocked entering monitors", "ns")
        {
            log::error(&format!("cannot write the lock flame graph {}: {e}", path.display()));
        }
        if let Some(path) = &self.collapsed {
            let result = private_files::write_file(path, |w| write_collapsed(w, &stacks));
            if let Err(e) = result {
                log::error(&format!("cannot write the lock stacks {}: {e}", path.display()));
            }
        }
    }
}

/// `cpu.html` → `cpu.locks.html`, `out/stacks` → `out/stacks.locks`.
pub fn locks_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.locks.{}", ext.to_string_lossy()),
        None => format!("{stem}.locks"),
    };
    path.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_graph_names_sit_beside_the_cpu_ones() {
        assert_eq!(locks_path(Path::new("cpu.html")), Path::new("cpu.locks.html"));
        assert_eq!(locks_path(Path::new("out/flame.svg")), Path::new("out/flame.locks.svg"));
        assert_eq!(locks_path(Path::new("/tmp/stacks")), Path::new("/tmp/stacks.locks"));
        assert_eq!(locks_path(Path::new("a.b.txt")), Path::new("a.b.locks.txt"));
    }
}
