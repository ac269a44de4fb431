//! Names for the native frames samples carry (`cstack`): each address is named once, from the ELF symbols
//! of the object it lies in (`native-symbols`), and becomes a frame of the trace table like the sampler's
//! other pseudo-frames. Off the signal path: on the thread that drains the ring.

use crate::context::Context;
use native_symbols::{KernelSymbols, LoadedObject, Symbolizer};
use rustc_hash::FxHashMap;

/// What an address in no loaded object is called (code the JVM generated outside its code cache).
pub const UNKNOWN_NATIVE: &str = "[unknown native]";

#[derive(Default)]
pub struct NativeNames {
    symbolizer: Symbolizer,
    objects: Vec<LoadedObject>,
    /// Lookup address → frame index.
    frames: FxHashMap<u64, u32>,
    /// Whether `/proc/kallsyms` was looked at; kernel address → frame index.
    kernel_checked: bool,
    kernel_frames: FxHashMap<u64, u32>,
}

impl NativeNames {
    /// Appends the frame indexes of `native` (the interrupted pc first, then return addresses) to `out`.
    pub fn push_frames(&mut self, ctx: &Context, native: &[u64], out: &mut Vec<u32>) {
        self.push(ctx, native, true, out)
    }

    /// Appends the frame indexes of `returns` (return addresses only, innermost first) to `out`.
    pub fn push_return_addresses(&mut self, ctx: &Context, returns: &[u64], out: &mut Vec<u32>) {
        self.push(ctx, returns, false, out)
    }

    fn push(&mut self, ctx: &Context, native: &[u64], interrupted_first: bool, out: &mut Vec<u32>) {
        for (i, &pc) in native.iter().enumerate() {
            // A return address is the instruction after the call; the call itself is one byte before.
            let at = if i == 0 && interrupted_first { pc } else { pc.saturating_sub(1) };
            if let Some(&frame) = self.frames.get(&at) {
                out.push(frame);
                continue;
            }
            if !self.objects.iter().any(|o| o.range.contains(&at)) {
                self.reload_objects();
            }
            let name = self.symbolizer.name(&self.objects, at);
            let frame = ctx.traces().pseudo_frame(name.as_deref().unwrap_or(UNKNOWN_NATIVE));
            self.frames.insert(at, frame);
            out.push(frame);
        }
    }

    /// Appends the frame indexes of `kernel` (innermost first) to `out`, named `function_[k]`.
    pub fn push_kernel_frames(&mut self, ctx: &Context, kernel: &[u64], out: &mut Vec<u32>) {
        for &pc in kernel {
            if let Some(&frame) = self.kernel_frames.get(&pc) {
                out.push(frame);
                continue;
            }
            let symbols = KernelSymbols::shared();
            if !std::mem::replace(&mut self.kernel_checked, true) && symbols.is_empty() {
                crate::log::warning(
                    "cstack: /proc/kallsyms shows no kernel addresses (kptr_restrict); kernel frames are named \
                     [kernel]",
                );
            }
            let frame = ctx.traces().pseudo_frame(&symbols.name(pc));
            self.kernel_frames.insert(pc, frame);
            out.push(frame);
        }
    }

    /// The unwinder's objects as of its last refresh (an object loaded since is named on a later drain).
    fn reload_objects(&mut self) {
        let Some(native) = sampler::installed().and_then(|s| s.native()) else { return };
        self.objects =
            native.objects().into_iter().map(|o| LoadedObject { path: o.path, base: o.base, range: o.range }).collect();
    }
}
