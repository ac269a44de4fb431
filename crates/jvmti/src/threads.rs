use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use jvmti_sys as sys;
use std::ffi::c_void;

/// `GetThreadInfo`, with the name copied out. The group is a local reference.
#[derive(Debug, Clone)]
pub struct ThreadInfo {
    pub name: String,
    pub priority: i32,
    pub is_daemon: bool,
    pub thread_group: sys::jthreadGroup,
    pub context_class_loader: sys::jobject,
}

#[derive(Debug, Clone)]
pub struct ThreadGroupInfo {
    pub parent: sys::jthreadGroup,
    pub name: String,
    pub max_priority: i32,
    pub is_daemon: bool,
}

/// The bit set `GetThreadState` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadState(pub u32);

impl ThreadState {
    pub fn is(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
    pub fn alive(self) -> bool {
        self.is(sys::JVMTI_THREAD_STATE_ALIVE)
    }
    pub fn runnable(self) -> bool {
        self.is(sys::JVMTI_THREAD_STATE_RUNNABLE)
    }
    pub fn in_native(self) -> bool {
        self.is(sys::JVMTI_THREAD_STATE_IN_NATIVE)
    }
}

impl Jvmti {
    pub fn thread_info(self, thread: sys::jthread) -> Result<ThreadInfo> {
        // SAFETY: a plain C struct of integers and pointers, for which all zeroes is valid; JVMTI fills it.
        let mut info: sys::jvmtiThreadInfo = unsafe { std::mem::zeroed() };
        jvmti_call!(self, GetThreadInfo, thread, &mut info)?;
        Ok(ThreadInfo {
            // SAFETY: the JVMTI call succeeded, so `info.name` is null or a string this environment allocated for us.
            name: unsafe { self.take_string(info.name) }.unwrap_or_default(),
            priority: info.priority,
            is_daemon: info.is_daemon != 0,
            thread_group: info.thread_group,
            context_class_loader: info.context_class_loader,
        })
    }

    pub fn thread_group_info(self, group: sys::jthreadGroup) -> Result<ThreadGroupInfo> {
        // SAFETY: a plain C struct of integers and pointers, for which all zeroes is valid; JVMTI fills it.
        let mut info: sys::jvmtiThreadGroupInfo = unsafe { std::mem::zeroed() };
        jvmti_call!(self, GetThreadGroupInfo, group, &mut info)?;
        Ok(ThreadGroupInfo {
            parent: info.parent,
            // SAFETY: the JVMTI call succeeded, so `info.name` is null or a string this environment allocated for us.
            name: unsafe { self.take_string(info.name) }.unwrap_or_default(),
            max_priority: info.max_priority,
            is_daemon: info.is_daemon != 0,
        })
    }

    /// All live platform threads, as local references.
    pub fn all_threads(self) -> Result<Vec<sys::jthread>> {
        let mut count: sys::jint = 0;
        let mut threads: *mut sys::jthread = std::ptr::null_mut();
        jvmti_call!(self, GetAllThreads, &mut count, &mut threads)?;
        // SAFETY: the JVMTI call succeeded, so `threads` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_array(threads, count) })
    }

    /// The calling thread (a local reference).
    pub fn current_thread(self) -> Result<sys::jthread> {
        let mut t: sys::jthread = std::ptr::null_mut();
        jvmti_call!(self, GetCurrentThread, &mut t)?;
        Ok(t)
    }

    pub fn thread_state(self, thread: sys::jthread) -> Result<ThreadState> {
        let mut state: sys::jint = 0;
        jvmti_call!(self, GetThreadState, thread, &mut state)?;
        Ok(ThreadState(state as u32))
    }

    pub fn thread_cpu_time(self, thread: sys::jthread) -> Result<i64> {
        let mut t: sys::jlong = 0;
        jvmti_call!(self, GetThreadCpuTime, thread, &mut t)?;
        Ok(t)
    }

    /// Per-thread pointer owned by the agent (`thread` null = current thread).
    pub fn set_thread_local_storage(self, thread: sys::jthread, data: *const c_void) -> Result<()> {
        jvmti_call!(self, SetThreadLocalStorage, thread, data)
    }

    pub fn thread_local_storage(self, thread: sys::jthread) -> Result<*mut c_void> {
        let mut data: *mut c_void = std::ptr::null_mut();
        jvmti_call!(self, GetThreadLocalStorage, thread, &mut data)?;
        Ok(data)
    }

    /// Starts `proc_` on a new daemon agent thread; `thread` is a fresh `java.lang.Thread` object.
    pub fn run_agent_thread(
        self,
        thread: sys::jthread,
        proc_: sys::jvmtiStartFunction,
        arg: *const c_void,
        priority: i32,
    ) -> Result<()> {
        jvmti_call!(self, RunAgentThread, thread, proc_, arg, priority)
    }

    pub fn suspend_thread(self, thread: sys::jthread) -> Result<()> {
        jvmti_call!(self, SuspendThread, thread)
    }

    pub fn resume_thread(self, thread: sys::jthread) -> Result<()> {
        jvmti_call!(self, ResumeThread, thread)
    }

    /// Runs `body` on a new daemon agent thread (RunAgentThread); `thread` is a fresh `java.lang.Thread`
    /// object. `body` gets the new thread's JNIEnv; a panic in it ends the thread, never unwinding into the VM.
    pub fn spawn_agent_thread(
        self,
        thread: sys::jthread,
        priority: i32,
        body: impl FnOnce(crate::Jni) + Send + 'static,
    ) -> Result<()> {
        let boxed: Box<AgentThreadBody> = Box::new(Box::new(body));
        let arg = Box::into_raw(boxed) as *const c_void;
        self.run_agent_thread(thread, Some(agent_thread_trampoline), arg, priority).inspect_err(|_| {
            // The thread never started, so the body is still ours to free.
            // SAFETY: `arg` came from Box::into_raw above and RunAgentThread failed, so the trampoline will never
            // see it: this is its only owner.
            drop(unsafe { Box::from_raw(arg as *mut AgentThreadBody) });
        })
    }
}

type AgentThreadBody = Box<dyn FnOnce(crate::Jni) + Send>;

unsafe extern "C" fn agent_thread_trampoline(_jvmti: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, arg: *mut c_void) {
    // SAFETY: RunAgentThread passes back the `arg` made by Box::into_raw in `spawn_agent_thread`, once, to this
    // thread.
    let body = unsafe { Box::from_raw(arg as *mut AgentThreadBody) };
    // SAFETY: the JVM calls the trampoline on the new agent thread with that thread's JNIEnv, valid for the
    // thread's whole run.
    let jni = unsafe { crate::Jni::from_raw(jni) };
    crate::panic_guard::guard(move || body(jni), ())
}
