//! The hub against a fake JVMTI environment (kept apart: the fake uses the event table, which uses the hub).

use super::*;
use crate::fake_env::FakeEnv;
use crate::jni::Jni;
use std::sync::OnceLock;

#[derive(Default)]
struct Counter {
    waits: AtomicU32,
}

impl EventHandler<()> for Counter {
    fn monitor_wait(&self, _: &(), _: Jvmti, _: Jni, _: sys::jthread, _: sys::jobject, _: sys::jlong) {
        self.waits.fetch_add(1, Ordering::Relaxed);
    }
}

fn leak<T>(t: T) -> &'static T {
    Box::leak(Box::new(t))
}

#[test]
fn capabilities_come_from_the_subscriptions_and_optional_ones_only_if_offered() {
    let mut b = EventHubBuilder::<()>::new();
    b.subscribe(leak(Counter::default()), [Event::MonitorWait]);
    b.subscribe(leak(Counter::default()), [Event::MethodEntry.off().if_available(), Event::ClassFileLoadHook.on()]);
    b.need(CapabilityFlag::CanTagObjects, Need::Required);
    let hub = b.build();
    let env = FakeEnv::new(&[CapabilityFlag::CanGenerateMonitorEvents, CapabilityFlag::CanTagObjects]);
    let added = hub.request_capabilities(env.jvmti()).expect("all required ones are offered");
    assert_eq!(capability_names(&added), ["can_tag_objects", "can_generate_monitor_events"]);
    assert!(hub.available(Event::MonitorWait) && hub.available(Event::ClassFileLoadHook));
    assert!(!hub.available(Event::MethodEntry));
    let id = SubscriberId(1);
    assert_eq!(
        hub.enable(env.jvmti(), id, Event::MethodEntry),
        Err(HubError::Unavailable(Event::MethodEntry, CapabilityFlag::CanGenerateMethodEntryEvents))
    );
}

#[test]
fn a_missing_required_capability_is_named() {
    let mut b = EventHubBuilder::<()>::new();
    b.subscribe(leak(Counter::default()), [Event::SampledObjectAlloc, Event::MonitorWait]);
    let hub = b.build();
    let env = FakeEnv::new(&[CapabilityFlag::CanGenerateMonitorEvents]);
    let err = hub.request_capabilities(env.jvmti()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the JVM refused the JVMTI capabilities needed: unavailable: can_generate_sampled_object_alloc_events"
    );
}

static COUNTED: OnceLock<EventHub<()>> = OnceLock::new();
struct CountedHost;
impl EventHost for CountedHost {
    type Context = ();
    fn hub() -> Option<(&'static EventHub<()>, &'static ())> {
        COUNTED.get().map(|h| (h, &()))
    }
}

#[test]
fn one_subscriber_turning_an_event_off_does_not_starve_another() {
    let (a, b) = (leak(Counter::default()), leak(Counter::default()));
    let mut builder = EventHubBuilder::<()>::new();
    let id_a = builder.subscribe(a, [Event::MonitorWait]);
    let id_b = builder.subscribe(b, [Event::MonitorWait]);
    let hub = COUNTED.get_or_init(|| builder.build());
    let env = FakeEnv::new(&[CapabilityFlag::CanGenerateMonitorEvents]);
    hub.request_capabilities(env.jvmti()).unwrap();
    hub.install::<CountedHost>(env.jvmti()).unwrap();
    assert_eq!(env.take_modes(), [(Event::MonitorWait, true, false)], "enabled once for two subscribers");

    let wait = event_callbacks::<CountedHost>().MonitorWait.unwrap();
    let deliver = || {
        // SAFETY: the handlers ignore every argument but count the call.
        unsafe { wait(env.jvmti().raw(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut(), 0) }
    };
    deliver();
    hub.disable(env.jvmti(), id_a, Event::MonitorWait).unwrap();
    assert_eq!(env.take_modes(), [], "b still wants it");
    deliver();
    assert_eq!((a.waits.load(Ordering::Relaxed), b.waits.load(Ordering::Relaxed)), (1, 2));

    hub.disable(env.jvmti(), id_b, Event::MonitorWait).unwrap();
    hub.disable(env.jvmti(), id_b, Event::MonitorWait).unwrap();
    assert_eq!(env.take_modes(), [(Event::MonitorWait, false, false)], "off once, when the last one leaves");
    hub.enable(env.jvmti(), id_a, Event::MonitorWait).unwrap();
    assert_eq!(env.take_modes(), [(Event::MonitorWait, true, false)]);
    assert!(hub.is_enabled(id_a, Event::MonitorWait) && !hub.is_enabled(id_b, Event::MonitorWait));
    assert_eq!(hub.enable(env.jvmti(), id_a, Event::VmInit), Err(HubError::NotSubscribed(Event::VmInit)));
}

#[test]
fn per_thread_enabling_is_counted_per_thread_and_refused_for_vm_wide_events() {
    let mut builder = EventHubBuilder::<()>::new();
    let id_a = builder.subscribe(leak(Counter::default()), [Event::MonitorWait.off(), Event::VmInit.off()]);
    let id_b = builder.subscribe(leak(Counter::default()), [Event::MonitorWait.off()]);
    let hub = builder.build();
    let env = FakeEnv::new(&[CapabilityFlag::CanGenerateMonitorEvents]);
    hub.request_capabilities(env.jvmti()).unwrap();
    let (jvmti, thread) = (env.jvmti(), 0x10 as sys::jthread);
    assert_eq!(
        hub.set_on_thread(jvmti, id_a, Event::VmInit, thread, 7, true),
        Err(HubError::NotPerThread(Event::VmInit))
    );
    hub.set_on_thread(jvmti, id_a, Event::MonitorWait, thread, 7, true).unwrap();
    hub.set_on_thread(jvmti, id_b, Event::MonitorWait, thread, 7, true).unwrap();
    hub.set_on_thread(jvmti, id_b, Event::MonitorWait, 0x20 as sys::jthread, 8, true).unwrap();
    assert_eq!(env.take_modes(), [(Event::MonitorWait, true, true), (Event::MonitorWait, true, true)]);
    assert!(hub.subscriptions(Event::MonitorWait).iter().all(|s| s.wants()));
    hub.set_on_thread(jvmti, id_a, Event::MonitorWait, thread, 7, false).unwrap();
    assert_eq!(env.take_modes(), []);
    hub.set_on_thread(jvmti, id_b, Event::MonitorWait, thread, 7, false).unwrap();
    assert_eq!(env.take_modes(), [(Event::MonitorWait, false, true)]);
    assert!(!hub.subscriptions(Event::MonitorWait)[0].wants());
}
