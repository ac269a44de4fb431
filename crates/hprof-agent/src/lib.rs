//! libhprof.so — the HPROF agent, rebuilt on JVMTI for JDK 17+.
//!
//! The JVM calls [`entry`]; [`agent`] parses the options, opens the [`output`] and sets up the [`hub`],
//! which fans JVMTI events out to the [`capabilities`] the options chose. Shared tables —
//! [`threads`], [`classes`], [`methods`], [`traces`] — give every capability the same serial numbers and
//! names, and the output writes records that refer to them.

pub mod agent;
pub mod agent_thread;
pub mod attach;
pub mod capabilities;
pub mod classes;
pub mod collector;
pub mod entry;
pub mod help;
pub mod hub;
pub mod ids;
pub mod log;
pub mod methods;
pub mod net;
pub mod options;
pub mod output;
pub mod panic_guard;
pub mod sampling;
pub mod threads;
pub mod traces;
pub mod worker;
