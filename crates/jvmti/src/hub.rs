//! An event hub: one JVMTI callback table for a library, fanning every event out to the modules that
//! subscribed to it, with run-time enabling counted per subscriber.
//!
//! A library (an agent, a JVMPI layer) builds one [`EventHub`] for its JVMTI environment:
//!
//! 1. Each module implements [`EventHandler<C>`] for the events it wants (`C` is the context the library
//!    hands to its modules) and is subscribed with [`EventHubBuilder::subscribe`], listing those events as
//!    [`Interest`]s: enabled from the start or not, required or only if the JVM can.
//! 2. [`EventHub::request_capabilities`] derives the JVMTI capabilities from the subscriptions (each
//!    event's own, plus any [`EventHubBuilder::need`] adds) and adds them, naming those the JVM refuses.
//! 3. The library stores the hub where its [`EventHost`] finds it (a `static`), then
//!    [`EventHub::install`] sets the callback table and enables the events wanted from the start.
//! 4. At run time a subscriber turns its events on and off with [`EventHub::enable`] /
//!    [`EventHub::disable`] (or per thread). The hub counts: JVMTI keeps an event on while any subscriber
//!    wants it, and a subscriber that turned an event off no longer receives it even while others do.
//!
//! Dispatch takes no lock and allocates nothing: each event has a fixed slice of subscriptions, built once,
//! and a subscription's on/off state is an atomic flag read with a relaxed load.
//!
//! ```ignore
//! use jvmti::{CompiledMethodLoadArgs, Event, EventHandler, Jvmti, sys};
//!
//! /// A flat profile's code map: where the JIT put each method.
//! struct CodeMap { /* … */ }
//!
//! impl EventHandler<Profiler> for CodeMap {
//!     // More than four arguments: they come as one struct.
//!     fn compiled_method_load(&self, cx: &Profiler, _jvmti: Jvmti, args: CompiledMethodLoadArgs) {
//!         cx.code.insert(args.code_addr as usize, args.code_size as usize, args.method);
//!     }
//!     fn dynamic_code_generated(&self, cx: &Profiler, _jvmti: Jvmti, name: *const std::ffi::c_char,
//!         address: *const std::ffi::c_void, length: sys::jint) {
//!         // SAFETY: `name` is the event's argument.
//!         cx.code.insert_stub(address as usize, length as usize, unsafe { jvmti::event_str(name) });
//!     }
//! }
//!
//! // At load: subscribe, and the capability (can_generate_compiled_method_load_events) follows.
//! builder.subscribe(code_map, [Event::CompiledMethodLoad.on(), Event::DynamicCodeGenerated.on()]);
//! ```

use crate::capabilities::{CapabilityFlag, capability_names, no_capabilities};
use crate::env::Jvmti;
use crate::error::JvmtiError;
use crate::events::{Event, EventHandler, event_callbacks};
use jvmti_sys as sys;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// Where a library keeps its hub: the trampolines call [`EventHost::hub`] on every event to find the
/// subscribers and the context to hand them. Implement it on a unit type over a `static`.
pub trait EventHost: 'static {
    /// What every handler receives as its first argument.
    type Context: ?Sized + 'static;

    /// The hub and context, once the library has set them up (`None` drops the event).
    fn hub() -> Option<(&'static EventHub<Self::Context>, &'static Self::Context)>;

    /// A handler panicked; the panic was caught before it reached the JVM. By default nothing more.
    fn panicked(event: Event) {
        let _ = event;
    }
}

/// Whether a subscription cannot do without an event's capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Loading fails, naming the capability, if the JVM lacks it.
    Required,
    /// Requested only if the JVM offers it; otherwise the event stays unavailable and `enable` says so.
    IfAvailable,
}

/// One event a subscriber wants: enabled from the start or only later by [`EventHub::enable`], and how much
/// it needs the event's capability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interest {
    pub event: Event,
    pub enabled_at_start: bool,
    pub need: Need,
}

impl Event {
    /// Wanted from the start, capability required.
    pub fn on(self) -> Interest {
        Interest { event: self, enabled_at_start: true, need: Need::Required }
    }

    /// Off until the subscriber enables it; capability required.
    pub fn off(self) -> Interest {
        Interest { event: self, enabled_at_start: false, need: Need::Required }
    }
}

impl Interest {
    /// The same, but the event's capability is requested only if the JVM has it.
    pub fn if_available(self) -> Interest {
        Interest { need: Need::IfAvailable, ..self }
    }
}

impl From<Event> for Interest {
    fn from(event: Event) -> Interest {
        event.on()
    }
}

/// Names a subscriber of one hub, for [`EventHub::enable`] and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubscriberId(u16);

/// One subscriber's subscription to one event.
pub struct Subscription<C: ?Sized + 'static> {
    subscriber: SubscriberId,
    handler: &'static dyn EventHandler<C>,
    /// Wanted for the whole VM.
    on: AtomicBool,
    /// The number of threads it is wanted on (per-thread enabling).
    threads: AtomicU32,
    need: Need,
}

impl<C: ?Sized> Subscription<C> {
    /// Whether this subscriber currently wants the event delivered. A subscriber enabled on some threads
    /// only receives the event on every thread JVMTI reports it for, and filters by thread itself.
    #[inline]
    pub fn wants(&self) -> bool {
        self.on.load(Ordering::Relaxed) || self.threads.load(Ordering::Relaxed) != 0
    }

    pub fn handler(&self) -> &'static dyn EventHandler<C> {
        self.handler
    }

    pub fn subscriber(&self) -> SubscriberId {
        self.subscriber
    }
}

/// Collects subscriptions before the hub is fixed.
pub struct EventHubBuilder<C: ?Sized + 'static> {
    subscriptions: Vec<Vec<Subscription<C>>>,
    extra: Vec<(CapabilityFlag, Need)>,
    subscribers: u16,
}

impl<C: ?Sized + 'static> Default for EventHubBuilder<C> {
    fn default() -> Self {
        EventHubBuilder {
            subscriptions: (0..Event::COUNT).map(|_| Vec::new()).collect(),
            extra: Vec::new(),
            subscribers: 0,
        }
    }
}

impl<C: ?Sized + 'static> EventHubBuilder<C> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Subscribes `handler` to `events`. Subscribers receive an event in the order they subscribed.
    pub fn subscribe<I>(&mut self, handler: &'static dyn EventHandler<C>, events: I) -> SubscriberId
    where
        I: IntoIterator,
        I::Item: Into<Interest>,
    {
        let id = SubscriberId(self.subscribers);
        self.subscribers += 1;
        for interest in events {
            let interest: Interest = interest.into();
            let list = &mut self.subscriptions[interest.event.index()];
            if list.iter().any(|s| s.subscriber == id) {
                continue;
            }
            list.push(Subscription {
                subscriber: id,
                handler,
                on: AtomicBool::new(false),
                threads: AtomicU32::new(0),
                need: interest.need,
            });
            if interest.enabled_at_start {
                // Marked now, enabled in JVMTI by `install` (if its capability was granted).
                list.last().expect("just pushed").on.store(true, Ordering::Relaxed);
            }
        }
        id
    }

    /// A capability some subscriber needs beyond those its events imply (can_tag_objects, …).
    pub fn need(&mut self, capability: CapabilityFlag, need: Need) {
        self.extra.push((capability, need));
    }

    pub fn build(self) -> EventHub<C> {
        let mut lists = self.subscriptions.into_iter().map(Vec::into_boxed_slice);
        EventHub {
            by_event: std::array::from_fn(|_| lists.next().expect("one list per event")),
            extra: self.extra,
            granted: Mutex::new(no_capabilities()),
            counts: Mutex::new(Counts { vm_wide: [0; Event::COUNT], threads: Vec::new() }),
        }
    }
}

/// How many subscribers want each event, VM-wide and per thread: JVMTI's setting follows these counts.
struct Counts {
    vm_wide: [u32; Event::COUNT],
    /// (event, the caller's key for the thread, number of subscribers wanting it on that thread).
    threads: Vec<(Event, u64, u32)>,
}

/// The subscriptions of one library, fixed at load. See the module documentation.
pub struct EventHub<C: ?Sized + 'static> {
    by_event: [Box<[Subscription<C>]>; Event::COUNT],
    extra: Vec<(CapabilityFlag, Need)>,
    /// What the JVM granted, set by `request_capabilities`.
    granted: Mutex<sys::jvmtiCapabilities>,
    /// Serialises enabling and disabling, so JVMTI's state always matches the counts.
    counts: Mutex<Counts>,
}

/// Why the hub could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubError {
    /// The JVM lacks capabilities a subscriber requires (named), or refused to add them.
    CapabilitiesRefused { missing: Vec<&'static str>, error: Option<JvmtiError> },
    /// A JVMTI call failed.
    Jvmti { what: String, error: JvmtiError },
    /// The subscriber never subscribed to the event.
    NotSubscribed(Event),
    /// The event's capability was optional and the JVM does not have it.
    Unavailable(Event, CapabilityFlag),
    /// JVMTI cannot enable this event for one thread only.
    NotPerThread(Event),
}

impl fmt::Display for HubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HubError::CapabilitiesRefused { missing, error } => {
                write!(f, "the JVM refused the JVMTI capabilities needed")?;
                if let Some(e) = error {
                    write!(f, " ({e})")?;
                }
                if !missing.is_empty() {
                    write!(f, ": unavailable: {}", missing.join(", "))?;
                }
                Ok(())
            }
            HubError::Jvmti { what, error } => write!(f, "{what} failed: {error}"),
            HubError::NotSubscribed(e) => write!(f, "not subscribed to JVMTI event {}", e.name()),
            HubError::Unavailable(e, c) => {
                write!(f, "JVMTI event {} is unavailable: this JVM lacks {}", e.name(), c.name())
            }
            HubError::NotPerThread(e) => write!(f, "JVMTI event {} can only be enabled for all threads", e.name()),
        }
    }
}

impl std::error::Error for HubError {}

impl<C: ?Sized + 'static> EventHub<C> {
    /// The subscriptions to `event`, in subscription order (what the trampolines iterate).
    #[inline]
    pub fn subscriptions(&self, event: Event) -> &[Subscription<C>] {
        &self.by_event[event.index()]
    }

    pub fn has_subscribers(&self, event: Event) -> bool {
        !self.by_event[event.index()].is_empty()
    }

    /// The capabilities to request, given what the JVM can offer: every required one (those it cannot
    /// offer are returned as the error, by name), and every optional one it can.
    pub fn wanted_capabilities(
        &self,
        potential: &sys::jvmtiCapabilities,
    ) -> Result<sys::jvmtiCapabilities, Vec<&'static str>> {
        let mut wanted = no_capabilities();
        let mut missing = Vec::new();
        for (i, list) in self.by_event.iter().enumerate() {
            let Some(cap) = Event::ALL[i].required_capability() else { continue };
            for s in list.iter() {
                Self::want(&mut wanted, &mut missing, potential, cap, s.need);
            }
        }
        for &(cap, need) in &self.extra {
            Self::want(&mut wanted, &mut missing, potential, cap, need);
        }
        if missing.is_empty() { Ok(wanted) } else { Err(missing) }
    }

    fn want(
        wanted: &mut sys::jvmtiCapabilities,
        missing: &mut Vec<&'static str>,
        potential: &sys::jvmtiCapabilities,
        cap: CapabilityFlag,
        need: Need,
    ) {
        if cap.is_set(potential) {
            cap.set(wanted);
        } else if need == Need::Required && !missing.contains(&cap.name()) {
            missing.push(cap.name());
        }
    }

    /// Adds the capabilities the subscriptions need (see [`Self::wanted_capabilities`]). In the OnLoad
    /// phase for most; a few (can_generate_sampled_object_alloc_events…) can also be added later.
    pub fn request_capabilities(&self, jvmti: Jvmti) -> Result<sys::jvmtiCapabilities, HubError> {
        let potential = jvmti
            .potential_capabilities()
            .map_err(|error| HubError::Jvmti { what: "GetPotentialCapabilities".into(), error })?;
        let wanted = self
            .wanted_capabilities(&potential)
            .map_err(|missing| HubError::CapabilitiesRefused { missing, error: None })?;
        jvmti.add_capabilities(&wanted).map_err(|error| HubError::CapabilitiesRefused {
            missing: capability_names(&wanted)
                .into_iter()
                .filter(|n| !capability_names(&potential).contains(n))
                .collect(),
            error: Some(error),
        })?;
        *self.granted.lock().unwrap_or_else(|e| e.into_inner()) = wanted;
        Ok(wanted)
    }

    /// Whether the JVM granted what `event` needs (always, for events that need nothing).
    pub fn available(&self, event: Event) -> bool {
        match event.required_capability() {
            None => true,
            Some(cap) => cap.is_set(&self.granted.lock().unwrap_or_else(|e| e.into_inner())),
        }
    }

    /// Sets the callback table for host `H` (whose `hub()` must return this hub) and enables every event
    /// a subscriber wanted from the start. Optional events the JVM lacks stay off, and so does their
    /// subscription's flag.
    pub fn install<H: EventHost<Context = C>>(&self, jvmti: Jvmti) -> Result<(), HubError> {
        jvmti
            .set_event_callbacks(&event_callbacks::<H>())
            .map_err(|error| HubError::Jvmti { what: "SetEventCallbacks".into(), error })?;
        let mut counts = self.lock_counts();
        for &event in Event::ALL {
            let available = self.available(event);
            for s in self.subscriptions(event) {
                if !s.on.load(Ordering::Relaxed) {
                    continue;
                }
                if !available {
                    s.on.store(false, Ordering::Relaxed);
                    continue;
                }
                counts.vm_wide[event.index()] += 1;
            }
            if counts.vm_wide[event.index()] > 0 {
                jvmti.set_event_enabled(event, true, std::ptr::null_mut()).map_err(|error| HubError::Jvmti {
                    what: format!("enabling JVMTI event {}", event.name()),
                    error,
                })?;
            }
        }
        Ok(())
    }

    /// Turns `event` on for `subscriber`, VM-wide. JVMTI enables it if no one else had. Idempotent.
    pub fn enable(&self, jvmti: Jvmti, subscriber: SubscriberId, event: Event) -> Result<(), HubError> {
        self.set_vm_wide(jvmti, subscriber, event, true)
    }

    /// Turns `event` off for `subscriber`. JVMTI disables it once no subscriber wants it. Idempotent.
    pub fn disable(&self, jvmti: Jvmti, subscriber: SubscriberId, event: Event) -> Result<(), HubError> {
        self.set_vm_wide(jvmti, subscriber, event, false)
    }

    /// Whether `subscriber` currently wants `event` VM-wide.
    pub fn is_enabled(&self, subscriber: SubscriberId, event: Event) -> bool {
        self.subscription(subscriber, event).is_ok_and(|s| s.on.load(Ordering::Relaxed))
    }

    fn subscription(&self, subscriber: SubscriberId, event: Event) -> Result<&Subscription<C>, HubError> {
        self.subscriptions(event).iter().find(|s| s.subscriber == subscriber).ok_or(HubError::NotSubscribed(event))
    }

    fn check_available(&self, event: Event) -> Result<(), HubError> {
        match event.required_capability() {
            Some(cap) if !self.available(event) => Err(HubError::Unavailable(event, cap)),
            _ => Ok(()),
        }
    }

    fn set_vm_wide(&self, jvmti: Jvmti, subscriber: SubscriberId, event: Event, on: bool) -> Result<(), HubError> {
        let s = self.subscription(subscriber, event)?;
        if on {
            self.check_available(event)?;
        }
        let mut counts = self.lock_counts();
        if s.on.load(Ordering::Relaxed) == on {
            return Ok(());
        }
        let count = &mut counts.vm_wide[event.index()];
        let before = *count;
        let after = if on { before + 1 } else { before - 1 };
        if (before == 0) != (after == 0) {
            jvmti.set_event_enabled(event, on, std::ptr::null_mut()).map_err(|error| HubError::Jvmti {
                what: format!("{} JVMTI event {}", if on { "enabling" } else { "disabling" }, event.name()),
                error,
            })?;
        }
        *count = after;
        s.on.store(on, Ordering::Relaxed);
        Ok(())
    }

    /// Turns `event` on (or off: undoing one earlier `on`) for `subscriber` on one thread. `thread_key`
    /// identifies the thread to the hub (any number stable for the thread's life: its tag, its serial)
    /// since `thread` is a JNI reference. Only for events JVMTI filters by thread ([`Event::per_thread`]).
    pub fn set_on_thread(
        &self,
        jvmti: Jvmti,
        subscriber: SubscriberId,
        event: Event,
        thread: sys::jthread,
        thread_key: u64,
        on: bool,
    ) -> Result<(), HubError> {
        if !event.per_thread() {
            return Err(HubError::NotPerThread(event));
        }
        let s = self.subscription(subscriber, event)?;
        if on {
            self.check_available(event)?;
        }
        let mut counts = self.lock_counts();
        let slot = counts.threads.iter().position(|&(e, k, _)| e == event && k == thread_key);
        let before = slot.map_or(0, |i| counts.threads[i].2);
        if !on && before == 0 {
            return Ok(());
        }
        let after = if on { before + 1 } else { before - 1 };
        if (before == 0) != (after == 0) {
            jvmti.set_event_enabled(event, on, thread).map_err(|error| HubError::Jvmti {
                what: format!("{} JVMTI event {} on a thread", if on { "enabling" } else { "disabling" }, event.name()),
                error,
            })?;
        }
        match (slot, after) {
            (Some(i), 0) => {
                counts.threads.swap_remove(i);
            }
            (Some(i), n) => counts.threads[i].2 = n,
            (None, n) => counts.threads.push((event, thread_key, n)),
        }
        if on {
            s.threads.fetch_add(1, Ordering::Relaxed);
        } else {
            s.threads.fetch_sub(1, Ordering::Relaxed);
        }
        Ok(())
    }

    fn lock_counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
