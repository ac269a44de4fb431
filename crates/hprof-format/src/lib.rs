//! The HPROF profile format, shared by the agent (which writes it) and the front end (which reads it).
//!
//! - [`model`]: the records as plain data (threads, frames, traces, allocation sites, CPU samples, …).
//! - [`text`]: the `format=a` report, line for line as HPROF printed it.
//! - [`binary`]: the `format=b` records — a writer, and a reader that checks every length against the
//!   bytes that remain.
//! - [`commands`]: the front end's socket commands to the agent (`net=`), decoded and encoded.
//! - [`layout_note`]: the object layout the JVM used, stated in a STRING record other readers ignore.
//! - [`profiles`]: pprof and OTLP profiles, encoded from their `.proto` definitions by prost.
//! - [`names`]: JVM signatures to Java source names (`[Ljava/lang/String;` → `java.lang.String[]`).
//!
//! Nothing here talks to a JVM, so all of it is tested without one.

pub mod binary;
pub mod commands;
pub mod flame;
pub mod layout_note;
pub mod model;
pub mod names;
pub mod profiles;
pub mod tags;
pub mod text;
pub mod time;

/// First serial numbers HPROF hands out, one range per kind so that a number says what it is.
pub mod serial_base {
    pub const CLASS: u32 = 100_000;
    pub const THREAD: u32 = 200_000;
    /// 300000 itself means "no recorded site"; real traces start at 300001.
    pub const TRACE: u32 = 300_000;
    pub const OBJECT: u32 = 400_000;
    pub const FRAME: u32 = 500_000;
}

/// Identifier size of everything hprof-rs writes: the agent's binary profiles and heap dumps, and the
/// front end's socket commands to the agent (CONTROL's thread identifiers are encoded with it).
pub const ID_SIZE: u32 = 8;

/// The header strings. 1.0.2 announces HEAP DUMP SEGMENT records.
pub const PROFILE_1_0_1: &str = "JAVA PROFILE 1.0.1";
pub const PROFILE_1_0_2: &str = "JAVA PROFILE 1.0.2";
pub const PROFILE_1_0_3: &str = "JAVA PROFILE 1.0.3";
