//! The offsets and addresses the walker uses, resolved once from the structure tables. A field the JVM does
//! not export makes the walker unavailable (with the field's name in the message), never a guess.

use crate::structs::VmStructs;

/// x86-64 interpreter frame slots, in words from the frame pointer (HotSpot's `frame_x86.hpp`). HotSpot
/// exports only the first two as constants; the others follow them in a fixed order on every JDK from 17
/// to 25 (last_sp, method, mirror, mdp, cache, locals, bcp), which the agent's tests check against JVMTI.
pub const INTERPRETER_SENDER_SP: isize = -1;
pub const INTERPRETER_LAST_SP: isize = -2;
pub const INTERPRETER_METHOD: isize = INTERPRETER_LAST_SP - 1;
pub const INTERPRETER_BCP: isize = INTERPRETER_LAST_SP - 6;
/// Every x86-64 frame: the saved frame pointer and the return address, in words from the frame pointer.
pub const LINK: isize = 0;
pub const RETURN_ADDRESS: isize = 1;
/// A sender's stack pointer is this many words above the callee's frame pointer (`frame::sender_sp_offset`).
pub const SENDER_SP: isize = 2;

#[derive(Debug, Clone)]
pub struct Layout {
    pub thread_anchor: usize,
    pub anchor_sp: usize,
    pub anchor_pc: usize,
    pub anchor_fp: usize,
    pub call_wrapper_anchor: usize,
    /// Words from an entry frame's frame pointer to its JavaCallWrapper*.
    pub entry_frame_call_wrapper: isize,
    pub call_stub_return_address: usize,

    pub code_heaps: usize,
    pub growable_array_len: usize,
    pub growable_array_data: usize,
    pub code_heap_memory: usize,
    pub code_heap_segmap: usize,
    pub code_heap_log2_segment_size: usize,
    pub virtual_space_low_boundary: usize,
    pub virtual_space_high: usize,
    pub virtual_space_low: usize,
    pub heap_block_size: usize,
    pub heap_block_used: usize,

    pub blob_name: usize,
    pub blob_frame_size: usize,
    pub nmethod_compile_id: usize,
    pub nmethod_stub_offset: usize,

    /// The interpreter's code: `AbstractInterpreter::_code`, a StubQueue.
    pub interpreter_code: usize,
    pub stub_queue_buffer: usize,
    pub stub_queue_limit: usize,
}

impl Layout {
    pub fn resolve(vm: &VmStructs) -> Result<Layout, String> {
        let call_wrapper = vm.constant("frame::entry_frame_call_wrapper_offset")?;
        let sender_sp = vm.constant("frame::interpreter_frame_sender_sp_offset")?;
        let last_sp = vm.constant("frame::interpreter_frame_last_sp_offset")?;
        if (sender_sp, last_sp) != (INTERPRETER_SENDER_SP as i64, INTERPRETER_LAST_SP as i64) {
            return Err(format!("unexpected interpreter frame layout (sender_sp {sender_sp}, last_sp {last_sp})"));
        }
        let header = vm.offset("HeapBlock", "_header")?;
        Ok(Layout {
            thread_anchor: vm.offset("JavaThread", "_anchor")?,
            anchor_sp: vm.offset("JavaFrameAnchor", "_last_Java_sp")?,
            anchor_pc: vm.offset("JavaFrameAnchor", "_last_Java_pc")?,
            anchor_fp: vm.offset("JavaFrameAnchor", "_last_Java_fp")?,
            call_wrapper_anchor: vm.offset("JavaCallWrapper", "_anchor")?,
            entry_frame_call_wrapper: call_wrapper as isize,
            call_stub_return_address: vm.static_address("StubRoutines", "_call_stub_return_address")?,
            code_heaps: vm.static_address("CodeCache", "_heaps")?,
            growable_array_len: vm.offset("GrowableArrayBase", "_len")?,
            growable_array_data: vm.offset("GrowableArray<int>", "_data")?,
            code_heap_memory: vm.offset("CodeHeap", "_memory")?,
            code_heap_segmap: vm.offset("CodeHeap", "_segmap")?,
            code_heap_log2_segment_size: vm.offset("CodeHeap", "_log2_segment_size")?,
            virtual_space_low_boundary: vm.offset("VirtualSpace", "_low_boundary")?,
            virtual_space_high: vm.offset("VirtualSpace", "_high")?,
            virtual_space_low: vm.offset("VirtualSpace", "_low")?,
            heap_block_size: vm.type_size("HeapBlock")?,
            heap_block_used: header + vm.offset("HeapBlock::Header", "_used")?,
            blob_name: vm.offset("CodeBlob", "_name")?,
            blob_frame_size: vm.offset("CodeBlob", "_frame_size")?,
            nmethod_compile_id: vm.offset("nmethod", "_compile_id")?,
            nmethod_stub_offset: vm.offset("nmethod", "_stub_offset")?,
            interpreter_code: vm.static_address("AbstractInterpreter", "_code")?,
            stub_queue_buffer: vm.offset("StubQueue", "_stub_buffer")?,
            stub_queue_limit: vm.offset("StubQueue", "_buffer_limit")?,
        })
    }
}
