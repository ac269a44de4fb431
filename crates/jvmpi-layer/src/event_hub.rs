//! The jvmti crate's event hub with the layer's subscription: set once by `callbacks::install`, used by the
//! callbacks' trampolines and by `control` to switch JVMTI events on and off.

use crate::layer::Layer;
use jvmti::{EventHub, SubscriberId};
use std::sync::OnceLock;

static HUB: OnceLock<(EventHub<Layer>, SubscriberId)> = OnceLock::new();

/// Keeps the hub; an error if the layer was loaded twice.
pub fn set(hub: EventHub<Layer>, id: SubscriberId) -> Result<(), String> {
    HUB.set((hub, id)).map_err(|_| "the layer was loaded twice".to_string())
}

/// The hub and the layer's subscriber ID, once installed.
pub fn get() -> Option<(&'static EventHub<Layer>, SubscriberId)> {
    HUB.get().map(|(h, id)| (h, *id))
}
