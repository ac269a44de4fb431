//! Finds the code blob that contains a code address, the way HotSpot's `CodeHeap::find_start` does: the
//! code heap's segment map says, for each segment, how many segments back its block starts.

use crate::layout::Layout;
use std::ffi::{CStr, c_char};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A segment-map value meaning "segment not in use".
const FREE_SEGMENT: u8 = 0xFF;
/// Hops through the segment map before giving up (a block of n segments needs about n / 254 hops).
const MAX_HOPS: usize = 1 << 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobKind {
    /// A compiled Java method or native wrapper: a Java frame.
    Nmethod,
    /// Any other blob with a frame (runtime stubs, C1 stubs): walked through, not a Java frame.
    Stub,
}

#[derive(Debug, Clone, Copy)]
struct CodeHeap {
    /// The heap's `_memory` VirtualSpace and `_segmap` VirtualSpace.
    memory: usize,
    segmap: usize,
    log2_segment_size: u32,
}

/// Names seen so far, classified (names are string literals, so a pointer identifies one). Each slot holds
/// `name << 2 | kind`, so that a slot is claimed and filled by one atomic store.
const NAME_SLOTS: usize = 64;

pub struct CodeCache {
    layout: Layout,
    heaps: Vec<CodeHeap>,
    names: Box<[AtomicUsize]>,
}

impl CodeCache {
    /// Reads the list of code heaps, which is fixed once the JVM has started.
    pub fn new(layout: &Layout) -> Result<CodeCache, String> {
        let array = unsafe { *(layout.code_heaps as *const usize) };
        if array == 0 {
            return Err("CodeCache::_heaps is not set".into());
        }
        let len = unsafe { *((array + layout.growable_array_len) as *const i32) };
        let data = unsafe { *((array + layout.growable_array_data) as *const usize) };
        if !(1..=16).contains(&len) || data == 0 {
            return Err(format!("unexpected code heap list ({len} heaps)"));
        }
        let heaps = (0..len as usize)
            .map(|i| {
                let heap = unsafe { *((data + i * 8) as *const usize) };
                CodeHeap {
                    memory: heap + layout.code_heap_memory,
                    segmap: heap + layout.code_heap_segmap,
                    log2_segment_size: unsafe { *((heap + layout.code_heap_log2_segment_size) as *const i32) } as u32,
                }
            })
            .collect();
        Ok(CodeCache { layout: layout.clone(), heaps, names: (0..NAME_SLOTS).map(|_| AtomicUsize::new(0)).collect() })
    }

    /// The blob containing `pc`, or `None` when `pc` is in no code heap or in a free block.
    pub fn find_blob(&self, pc: usize) -> Option<usize> {
        let l = &self.layout;
        for heap in &self.heaps {
            let low = unsafe { *((heap.memory + l.virtual_space_low_boundary) as *const usize) };
            // The committed end, read now: the heap grows while the JVM runs.
            let high = unsafe { *((heap.memory + l.virtual_space_high) as *const usize) };
            if pc < low || pc >= high {
                continue;
            }
            let segmap = unsafe { *((heap.segmap + l.virtual_space_low) as *const usize) } as *const u8;
            let mut segment = (pc - low) >> heap.log2_segment_size;
            for _ in 0..MAX_HOPS {
                let hop = unsafe { *segmap.add(segment) };
                if hop == FREE_SEGMENT {
                    return None;
                }
                if hop == 0 {
                    let block = low + (segment << heap.log2_segment_size);
                    let used = unsafe { *((block + l.heap_block_used) as *const u8) } != 0;
                    return used.then_some(block + l.heap_block_size);
                }
                segment = segment.checked_sub(hop as usize)?;
            }
            return None;
        }
        None
    }

    /// The blob's name pointer (a string literal of the JVM's).
    pub fn name(&self, blob: usize) -> usize {
        unsafe { *((blob + self.layout.blob_name) as *const usize) }
    }

    /// Whether a blob is a compiled Java method; `None` for a blob without a name.
    pub fn kind(&self, blob: usize) -> Option<BlobKind> {
        let name = self.name(blob);
        if name == 0 {
            return None;
        }
        for slot in self.names.iter() {
            match slot.load(Ordering::Acquire) {
                0 => break,
                v if v >> 2 == name => return Some(decode(v & 3)),
                _ => {}
            }
        }
        let text = unsafe { CStr::from_ptr(name as *const c_char) }.to_bytes();
        let kind = if text == b"nmethod" || text == b"native nmethod" { BlobKind::Nmethod } else { BlobKind::Stub };
        self.remember(name, kind);
        Some(kind)
    }

    /// Adds a name to the table (a full table only means more string comparisons).
    fn remember(&self, name: usize, kind: BlobKind) {
        let entry = name << 2 | encode(kind);
        for slot in self.names.iter() {
            match slot.compare_exchange(0, entry, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(v) if v >> 2 == name => return,
                Err(_) => {}
            }
        }
    }

    /// The blob's frame size in words.
    pub fn frame_size(&self, blob: usize) -> i32 {
        unsafe { *((blob + self.layout.blob_frame_size) as *const i32) }
    }

    /// An nmethod's compile id (never negative).
    pub fn compile_id(&self, nmethod: usize) -> i32 {
        unsafe { *((nmethod + self.layout.nmethod_compile_id) as *const i32) }.max(0)
    }

    /// Where an nmethod's stub section begins: its exception and deoptimization handlers, where no ordinary
    /// call returns to (a return address there means the frame was deoptimized).
    pub fn stub_section(&self, nmethod: usize) -> usize {
        nmethod + unsafe { *((nmethod + self.layout.nmethod_stub_offset) as *const i32) } as usize
    }
}

fn encode(kind: BlobKind) -> usize {
    match kind {
        BlobKind::Nmethod => 1,
        BlobKind::Stub => 2,
    }
}

fn decode(v: usize) -> BlobKind {
    if v == 1 { BlobKind::Nmethod } else { BlobKind::Stub }
}
