use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use jvmti_sys as sys;

/// One thread's stack from `GetThreadListStackTraces` / `GetAllStackTraces`.
#[derive(Debug, Clone)]
pub struct StackInfo {
    pub thread: sys::jthread,
    pub state: u32,
    pub frames: Vec<sys::jvmtiFrameInfo>,
}

impl Jvmti {
    /// Fills `frames` from the top of `thread`'s stack (null = current thread); returns how many.
    pub fn stack_trace(
        self,
        thread: sys::jthread,
        start_depth: i32,
        frames: &mut [sys::jvmtiFrameInfo],
    ) -> Result<usize> {
        // SAFETY: an initialised slice may be viewed as possibly-uninitialised; only initialised values are
        // written back.
        let buf = unsafe {
            std::slice::from_raw_parts_mut(
                frames.as_mut_ptr().cast::<std::mem::MaybeUninit<sys::jvmtiFrameInfo>>(),
                frames.len(),
            )
        };
        Ok(self.stack_trace_into(thread, start_depth, buf)?.len())
    }

    /// Like [`Jvmti::stack_trace`] into a buffer that need not be initialised (a hot path's stack buffer);
    /// returns the frames GetStackTrace wrote.
    pub fn stack_trace_into(
        self,
        thread: sys::jthread,
        start_depth: i32,
        buf: &mut [std::mem::MaybeUninit<sys::jvmtiFrameInfo>],
    ) -> Result<&[sys::jvmtiFrameInfo]> {
        let mut count: sys::jint = 0;
        jvmti_call!(
            self,
            GetStackTrace,
            thread,
            start_depth,
            buf.len() as sys::jint,
            buf.as_mut_ptr().cast::<sys::jvmtiFrameInfo>(),
            &mut count
        )?;
        let n = (count.max(0) as usize).min(buf.len());
        // SAFETY: GetStackTrace initialised the first `count` entries.
        Ok(unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<sys::jvmtiFrameInfo>(), n) })
    }

    /// Up to `max_frames` frames from the top of `thread`'s stack (null = current thread), in a new vector.
    pub fn stack_frames(
        self,
        thread: sys::jthread,
        start_depth: i32,
        max_frames: usize,
    ) -> Result<Vec<sys::jvmtiFrameInfo>> {
        let mut frames = Vec::with_capacity(max_frames);
        let n = self.stack_trace_into(thread, start_depth, &mut frames.spare_capacity_mut()[..max_frames])?.len();
        // SAFETY: GetStackTrace initialised the first `n` entries of the spare capacity (`stack_trace_into`).
        unsafe { frames.set_len(n) };
        Ok(frames)
    }

    pub fn frame_count(self, thread: sys::jthread) -> Result<i32> {
        let mut count: sys::jint = 0;
        jvmti_call!(self, GetFrameCount, thread, &mut count)?;
        Ok(count)
    }

    /// Stacks of several threads taken at one safepoint.
    pub fn thread_list_stack_traces(self, threads: &[sys::jthread], max_frames: i32) -> Result<Vec<StackInfo>> {
        let mut infos: *mut sys::jvmtiStackInfo = std::ptr::null_mut();
        jvmti_call!(
            self,
            GetThreadListStackTraces,
            threads.len() as sys::jint,
            threads.as_ptr(),
            max_frames,
            &mut infos
        )?;
        // SAFETY: the JVMTI call succeeded, so `infos` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_stack_infos(infos, threads.len() as sys::jint) })
    }

    /// Stacks of all live threads taken at one safepoint.
    pub fn all_stack_traces(self, max_frames: i32) -> Result<Vec<StackInfo>> {
        let mut infos: *mut sys::jvmtiStackInfo = std::ptr::null_mut();
        let mut count: sys::jint = 0;
        jvmti_call!(self, GetAllStackTraces, max_frames, &mut infos, &mut count)?;
        // SAFETY: the JVMTI call succeeded, so `infos` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_stack_infos(infos, count) })
    }

    /// The stack-info buffer is one allocation holding the infos and their frame buffers.
    unsafe fn take_stack_infos(self, infos: *mut sys::jvmtiStackInfo, count: sys::jint) -> Vec<StackInfo> {
        if infos.is_null() {
            return Vec::new();
        }
        // SAFETY: the caller guarantees `count` jvmtiStackInfo records at `infos`, from this environment.
        let out = unsafe { std::slice::from_raw_parts(infos, count.max(0) as usize) }
            .iter()
            .map(|si| StackInfo {
                thread: si.thread,
                state: si.state as u32,
                frames: if si.frame_buffer.is_null() {
                    Vec::new()
                } else {
                    // SAFETY: JVMTI fills each record's `frame_buffer` with `frame_count` frames, inside the same allocation.
                    unsafe { std::slice::from_raw_parts(si.frame_buffer, si.frame_count.max(0) as usize) }.to_vec()
                },
            })
            .collect();
        // SAFETY: one allocation holds the records and their frames (JVMTI spec, GetThreadListStackTraces); it
        // was copied out above.
        unsafe { self.deallocate(infos) };
        out
    }
}
