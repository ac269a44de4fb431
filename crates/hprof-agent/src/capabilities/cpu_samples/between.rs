//! Native frames between Java frames (`cstack`): where a native method's C code called Java back (JNI
//! `Call…Method`), the handler unwound the native frames between the two (see `sampler`'s
//! `NativeUnwinder::unwind_between`); here they are named and put where they belong, above (as callees of)
//! the native method whose code they are: `…;Caller.callIntoC;Java_Caller_callIntoC;call_back_from_c;
//! jni_CallStaticLongMethod;…;JavaCalls::call_helper;Caller.javaCallback`.

use crate::context::Context;
use crate::sampling::NativeNames;
use jvmti::sys::ASGCT_CallFrame;
use sampler::native::SEGMENT_END;

/// AsyncGetCallTrace's line number for a native method's frame.
const NATIVE_METHOD_LINE: i32 = -3;

/// `frames` (the top `native` native frames, then the Java frames `walked` resolved, possibly cut short)
/// with each segment of `between` put above the native method it belongs to: the k-th segment above the
/// k-th native method below the top frame. `None` when nothing is to be added.
pub fn merge(
    names: &mut NativeNames,
    ctx: &Context,
    frames: &[u32],
    native: usize,
    walked: &[ASGCT_CallFrame],
    between: &[u64],
) -> Option<Vec<u32>> {
    let java = &frames[native..];
    let owners = walked.iter().enumerate().skip(1).filter(|(_, f)| f.lineno == NATIVE_METHOD_LINE).map(|(i, _)| i);
    let mut merged: Vec<u32> = Vec::with_capacity(frames.len() + between.len());
    merged.extend_from_slice(&frames[..native]);
    let mut next = 0;
    let mut added = false;
    for (segment, at) in between.split(|&pc| pc == SEGMENT_END).filter(|s| !s.is_empty()).zip(owners) {
        if at >= java.len() {
            break;
        }
        merged.extend_from_slice(&java[next..at]);
        names.push_return_addresses(ctx, segment, &mut merged);
        next = at;
        added = true;
    }
    if !added {
        return None;
    }
    merged.extend_from_slice(&java[next..]);
    Some(merged)
}
