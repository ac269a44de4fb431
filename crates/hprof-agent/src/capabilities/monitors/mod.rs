//! `monitor=y`: where threads wait for locks.
//!
//! - `contention`: time blocked entering monitors (MonitorContendedEnter → MonitorContendedEntered), per
//!   trace and lock class, written as MONITOR TIME at each dump.
//! - `waits`: the live WAIT / WAITED lines for Object.wait (MonitorWait / MonitorWaited), and the time
//!   waited per (trace, lock class).
//! - With format=b, both as a MONITOR TIMES record of ours at each dump (the binary format has no record of
//!   its own for them).
//! - `snapshot`: MONITOR DUMP, every thread's state and every owned or contended monitor, at each dump.
//! - `lock_stacks`: with `flamegraph=` / `collapsed=`, full stacks weighted by blocked time.
//! - `sleeps`: the live SLEEP lines, from a wrapper bound in place of the JVM's sleeping native.

mod contention;
mod lock_stacks;
mod sleeps;
mod snapshot;
mod status;
mod thread_key;
mod waits;

use crate::classes::ClassRecord;
use crate::context::Context;
use crate::hub::{Capability, DumpReason};
use crate::options::Options;
use contention::Contention;
use jvmti::sys::{self, jboolean, jobject, jthread};
use jvmti::{CapabilityFlag, Event, EventHandler, Interest, Jni, Jvmti, NativeMethodBindArgs};
use lock_stacks::LockStacks;
use std::sync::Arc;
use waits::Waits;

pub struct Monitors {
    contention: Contention,
    waits: Waits,
}

impl Monitors {
    pub fn new(options: &Options) -> Monitors {
        Monitors { contention: Contention::new(LockStacks::for_options(options)), waits: Waits::default() }
    }
}

impl Monitors {
    /// Contended entries since the last call, as (trace serial, monitor class serial, entries, nanoseconds).
    pub fn take_window(&self) -> Vec<(u32, u32, u64, u64)> {
        self.contention.take_window()
    }
}

impl EventHandler<Context> for Monitors {
    fn monitor_contended_enter(&self, ctx: &Context, _: Jvmti, jni: Jni, thread: sys::jthread, object: sys::jobject) {
        self.contention.on_enter(ctx, jni, thread, thread_key::of(jni, thread), object);
    }

    fn monitor_contended_entered(&self, _: &Context, _: Jvmti, jni: Jni, thread: sys::jthread, _object: sys::jobject) {
        self.contention.on_entered(thread_key::of(jni, thread));
    }

    fn monitor_wait(&self, ctx: &Context, _: Jvmti, jni: Jni, thread: jthread, object: jobject, timeout: i64) {
        self.waits.on_wait(ctx, jni, thread, thread_key::of(jni, thread), object, timeout);
    }

    fn monitor_waited(&self, ctx: &Context, _: Jvmti, jni: Jni, thread: jthread, object: jobject, _: jboolean) {
        self.waits.on_waited(ctx, jni, thread, thread_key::of(jni, thread), object);
    }

    fn native_method_bind(&self, ctx: &Context, _: Jvmti, args: NativeMethodBindArgs) {
        sleeps::on_native_method_bind(ctx, args.address, args.new_address);
    }
}

impl Capability for Monitors {
    fn name(&self) -> &'static str {
        "monitor"
    }

    fn events(&self) -> Vec<Interest> {
        vec![
            Event::MonitorWait.on(),
            Event::MonitorWaited.on(),
            Event::MonitorContendedEnter.on(),
            Event::MonitorContendedEntered.on(),
            Event::NativeMethodBind.on(),
        ]
    }

    fn jvmti_capabilities(&self) -> Vec<CapabilityFlag> {
        // For MONITOR DUMP: who owns what, who waits where.
        vec![
            CapabilityFlag::CanGetOwnedMonitorInfo,
            CapabilityFlag::CanGetCurrentContendedMonitor,
            CapabilityFlag::CanGetMonitorInfo,
        ]
    }

    fn on_vm_init(&self, _agent: &Context, jni: Jni) {
        thread_key::init(jni);
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((10, "contended monitor usage"))
    }

    /// HPROF's order: the MONITOR DUMP snapshot, then MONITOR TIME; then the lock flame graph files.
    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, _reason: DumpReason) {
        // JVMTI hands out thread and monitor references only to a thread attached to the VM.
        if let Some(jni) = jni {
            let dump = snapshot::take(ctx, jni);
            ctx.reports().monitor_dump(&dump);
        }
        let enters = self.contention.report(ctx);
        ctx.reports().monitor_time(&enters);
        ctx.reports().monitor_times(&enters, &self.waits.report(ctx));
        self.contention.write_lock_stacks(ctx);
    }
}

/// The class record of a locked object.
fn class_of(ctx: &Context, jni: Jni, object: sys::jobject) -> Option<Arc<ClassRecord>> {
    let class = jni.object_class(object);
    if class.is_null() {
        return None;
    }
    let record = ctx.class_record(class);
    jni.delete_local_ref(class);
    record
}
