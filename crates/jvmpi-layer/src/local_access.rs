//! JVMTI's `can_access_local_variables`: taken only when the agent needs it, because holding it costs every
//! program about 10% CPU (HotSpot's compilers keep locals alive for any environment that holds it; see
//! BENCHMARKS.md) and only METHOD_ENTRY2 (the receiver, `GetLocalInstance`) and MONITOR_DUMP on JDK 25 (the
//! object a thread waits on, read from its wait frame) use it.
//!
//! HotSpot grants it only in the OnLoad phase. An agent the layer loads runs its `JVM_OnLoad` inside the
//! layer's `Agent_OnLoad`, so with `locals=auto` the layer waits for it and takes the capability if the agent
//! enabled METHOD_ENTRY2 there. An `-Xrun` agent's `JVM_OnLoad` runs after the OnLoad phase: `auto` takes the
//! capability at once then, the only way to keep METHOD_ENTRY2 whole. Without it, EnableEvent(METHOD_ENTRY2)
//! answers JVMPI_NOT_AVAILABLE (a null `obj_id` would tell the agent every method is static) unless the JVM
//! grants the capability late after all.

use crate::layer::Layer;
use crate::options::{Locals, Options};
use jvmti::{CapabilityFlag, capability_names, no_capabilities};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

const ABSENT: u8 = 0;
const HELD: u8 = 1;
/// The layer is waiting for its agent's `JVM_OnLoad` to say whether METHOD_ENTRY2 is wanted.
const PENDING: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(ABSENT);
/// The agent enabled METHOD_ENTRY2 while the decision was pending.
static WANTED: AtomicBool = AtomicBool::new(false);
static REFUSAL_SAID: AtomicBool = AtomicBool::new(false);
static VERBOSE: AtomicBool = AtomicBool::new(false);
/// Why the capability was taken or left out, for the verbose line.
static REASON: Mutex<String> = Mutex::new(String::new());

/// In `Agent_OnLoad`, before the agent loads: decides now, or after the agent's `JVM_OnLoad` (`settle`).
pub fn begin(layer: &Layer, options: &Options) {
    VERBOSE.store(options.verbose, Ordering::Relaxed);
    match (options.locals, options.agent.is_some()) {
        (Locals::Yes, _) => decide(layer, true, "locals=y"),
        (Locals::No, _) => decide(layer, false, "locals=n"),
        (Locals::Auto, true) => STATE.store(PENDING, Ordering::Release),
        (Locals::Auto, false) => decide(
            layer,
            true,
            "locals=auto: an -Xrun agent enables its events after the OnLoad phase, too late to take it then",
        ),
    }
}

/// In `Agent_OnLoad`, after the agent the layer loaded has returned from its `JVM_OnLoad`.
pub fn settle(layer: &Layer) {
    if STATE.load(Ordering::Acquire) != PENDING {
        return;
    }
    if WANTED.load(Ordering::Acquire) {
        decide(layer, true, "locals=auto: the agent enabled METHOD_ENTRY2 in JVM_OnLoad");
    } else {
        decide(layer, false, "locals=auto: the agent did not enable METHOD_ENTRY2 in JVM_OnLoad; locals=y keeps it");
    }
}

fn decide(layer: &Layer, take: bool, why: &str) {
    let (held, reason) = match take.then(|| add(layer)) {
        Some(Ok(())) => (true, why.to_owned()),
        Some(Err(e)) => (false, format!("{why}, but the JVM refused it ({e})")),
        None => (false, why.to_owned()),
    };
    STATE.store(if held { HELD } else { ABSENT }, Ordering::Release);
    set_reason(&reason);
    if VERBOSE.load(Ordering::Relaxed) {
        let caps = layer.jvmti.capabilities().map(|c| capability_names(&c).join(" ")).unwrap_or_default();
        let verdict = if held { "taken" } else { "left out" };
        crate::log::info(&format!("can_access_local_variables {verdict} ({reason}); capabilities held: {caps}"));
    }
}

fn set_reason(why: &str) {
    if let Ok(mut r) = REASON.lock() {
        why.clone_into(&mut r);
    }
}

fn add(layer: &Layer) -> jvmti::Result<()> {
    let mut caps = no_capabilities();
    CapabilityFlag::CanAccessLocalVariables.set(&mut caps);
    layer.jvmti.add_capabilities(&caps)
}

/// Whether the layer may read locals (GetLocalInstance) now.
pub fn held() -> bool {
    STATE.load(Ordering::Acquire) == HELD
}

/// EnableEvent(METHOD_ENTRY2): whether its receiver can be had. Without the capability, asks the JVM once
/// more (it grants it only in the OnLoad phase today) and says what to do when it refuses.
pub fn allow_method_entry2(layer: &Layer) -> bool {
    match STATE.load(Ordering::Acquire) {
        HELD => true,
        PENDING => {
            WANTED.store(true, Ordering::Release);
            true
        }
        _ => match add(layer) {
            Ok(()) => {
                STATE.store(HELD, Ordering::Release);
                true
            }
            Err(e) => {
                if !REFUSAL_SAID.swap(true, Ordering::Relaxed) {
                    let reason = REASON.lock().map(|r| r.clone()).unwrap_or_default();
                    crate::log::warning(&format!(
                        "METHOD_ENTRY2 is not available: its receiver needs can_access_local_variables, left out \
                         at load ({reason}) and refused now ({e}); give the layer locals=y to have it"
                    ));
                }
                false
            }
        },
    }
}
