//! libhprof.so — the HPROF agent, rebuilt on JVMTI for JDK 17+.
//!
//! The JVM calls [`entry`]; the agent (`agent.rs`, which only the entry points call) parses the options,
//! opens the [`output`], builds the session's [`context`] and sets up the [`hub`], which fans JVMTI events
//! out to the [`capabilities`] the options chose. Capabilities see the session only through the
//! [`context::Context`]: shared tables — [`threads`], [`classes`], [`methods`], [`traces`] — that give
//! every capability the same serial numbers and names, the writer, and a narrow handle on the agent
//! ([`context::AgentControl`]).

mod agent;
pub mod agent_cost;
pub mod agent_thread;
pub mod attach;
pub mod capabilities;
pub mod classes;
pub use sampler::clocks;
pub mod collector;
pub mod commands;
pub mod context;
pub mod continuous;
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
