//! Finds the code blob that contains a code address, the way HotSpot's `CodeHeap::find_start` does: the
//! code heap's segment map says, for each segment, how many segments back its block starts.

use crate::layout::Layout;
use std::ffi::{CStr, c_char};

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

/// One code heap. Its memory and its segment map start where they were reserved; their committed ends
/// move as the heap grows, so those are read at each lookup.
#[derive(Debug, Clone, Copy)]
struct CodeHeap {
    low: usize,
    /// Addresses of the `_high` of the heap's `_memory` and `_segmap` VirtualSpaces.
    memory_high_at: usize,
    segmap_high_at: usize,
    segmap: usize,
    log2_segment_size: u32,
}

pub struct CodeCache {
    layout: Layout,
    heaps: Vec<CodeHeap>,
}

impl CodeCache {
    /// Reads the list of code heaps, which is fixed once the JVM has started.
    pub fn new(layout: &Layout) -> Result<CodeCache, String> {
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        let array = unsafe { *(layout.code_heaps as *const usize) };
        if array == 0 {
            return Err("CodeCache::_heaps is not set".into());
        }
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        let len = unsafe { *((array + layout.growable_array_len) as *const i32) };
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        let data = unsafe { *((array + layout.growable_array_data) as *const usize) };
        if !(1..=16).contains(&len) || data == 0 {
            return Err(format!("unexpected code heap list ({len} heaps)"));
        }
        let heaps = (0..len as usize)
            .map(|i| {
                // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
                // within the bounds the code heap's own fields give.
                let heap = unsafe { *((data + i * 8) as *const usize) };
                if heap == 0 {
                    return Err("a code heap is not set".to_string());
                }
                let (memory, segmap) = (heap + layout.code_heap_memory, heap + layout.code_heap_segmap);
                // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
                // within the bounds the code heap's own fields give.
                let log2 = unsafe { *((heap + layout.code_heap_log2_segment_size) as *const i32) };
                // Segments are between 16 bytes and 64 KiB in every JVM (CodeCacheSegmentSize).
                if !(4..=16).contains(&log2) {
                    return Err(format!("unexpected code segment size 2^{log2}"));
                }
                Ok(CodeHeap {
                    // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
                    // within the bounds the code heap's own fields give.
                    low: unsafe { *((memory + layout.virtual_space_low_boundary) as *const usize) },
                    memory_high_at: memory + layout.virtual_space_high,
                    segmap_high_at: segmap + layout.virtual_space_high,
                    // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
                    // within the bounds the code heap's own fields give.
                    segmap: unsafe { *((segmap + layout.virtual_space_low) as *const usize) },
                    log2_segment_size: log2 as u32,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(CodeCache { layout: layout.clone(), heaps })
    }

    /// The blob containing `pc`, or `None` when `pc` is in no code heap or in a free block.
    pub fn find_blob(&self, pc: usize) -> Option<usize> {
        let l = &self.layout;
        for heap in &self.heaps {
            // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
            // within the bounds the code heap's own fields give.
            let high = unsafe { *(heap.memory_high_at as *const usize) };
            if pc < heap.low || pc >= high {
                continue;
            }
            // HotSpot commits a heap's memory before the segment map that describes it.
            // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
            // within the bounds the code heap's own fields give.
            let mapped = unsafe { *(heap.segmap_high_at as *const usize) }.saturating_sub(heap.segmap);
            let mut segment = (pc - heap.low) >> heap.log2_segment_size;
            if segment >= mapped {
                return None;
            }
            for _ in 0..MAX_HOPS {
                // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
                // within the bounds the code heap's own fields give.
                let hop = unsafe { *((heap.segmap + segment) as *const u8) };
                if hop == FREE_SEGMENT {
                    return None;
                }
                if hop == 0 {
                    let block = heap.low + (segment << heap.log2_segment_size);
                    // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
                    // within the bounds the code heap's own fields give.
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
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        unsafe { *((blob + self.layout.blob_name) as *const usize) }
    }

    /// Whether a blob is a compiled Java method; `None` for a blob without a name. (Only on a thread's
    /// cache miss: a comparison of a few bytes.)
    pub fn kind(&self, blob: usize) -> Option<BlobKind> {
        let name = self.name(blob);
        if name == 0 {
            return None;
        }
        // SAFETY: a NUL-terminated string that lives as long as the process (a structure table's name, a code
        // blob's name, a loaded library's path), checked non-null.
        let text = unsafe { CStr::from_ptr(name as *const c_char) }.to_bytes();
        Some(if text == b"nmethod" || text == b"native nmethod" { BlobKind::Nmethod } else { BlobKind::Stub })
    }

    /// The blob's frame size in words.
    pub fn frame_size(&self, blob: usize) -> i32 {
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        unsafe { *((blob + self.layout.blob_frame_size) as *const i32) }
    }

    /// An nmethod's compile id (never negative).
    pub fn compile_id(&self, nmethod: usize) -> i32 {
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        unsafe { *((nmethod + self.layout.nmethod_compile_id) as *const i32) }.max(0)
    }

    /// Where an nmethod's stub section begins: its exception and deoptimization handlers, where no ordinary
    /// call returns to (a return address there means the frame was deoptimized).
    pub fn stub_section(&self, nmethod: usize) -> usize {
        // SAFETY: CodeCache structures found through HotSpot's structure tables live as long as the JVM; read
        // within the bounds the code heap's own fields give.
        nmethod + unsafe { *((nmethod + self.layout.nmethod_stub_offset) as *const i32) } as usize
    }
}
