//! What one dump gathers with JVMTI and JNI before its heap walk, whose callbacks may call neither: the
//! classes and their layouts ([`layout`]: the class plan), the threads, their stack traces and the
//! monitors they hold ([`threads`]), and the objects the walk would not meet from its roots — what only
//! class objects' own fields hold ([`held`]), what only the classes' constant pools hold
//! ([`resolved`]) and their init locks ([`init_locks`]), all held by JNI global references for the time
//! of the walk.

use crate::context::Context;
use jvmti::{Jni, Jvmti};

pub(super) mod held;
pub(super) mod init_locks;
pub(super) mod layout;
pub(super) mod resolved;
pub(super) mod threads;

/// Why a dump leaves out what class data holds: a known limit of this JVM (said once with verbose=y), or
/// a route that led nowhere where it should have, which loses objects the JVM has (a warning, once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    Limit(String),
    Missing(String),
}

impl From<String> for Skipped {
    fn from(why: String) -> Skipped {
        Skipped::Limit(why)
    }
}

impl From<&str> for Skipped {
    fn from(why: &str) -> Skipped {
        Skipped::Limit(why.to_owned())
    }
}

/// The JVM handles a dump is made with: the agent's context, the JNI environment of the thread that dumps,
/// and the dump's own JVMTI environment (whose tags name the dump's objects).
#[derive(Clone, Copy)]
pub struct DumpVm<'a> {
    pub ctx: &'a Context,
    pub jni: Jni,
    pub env: Jvmti,
}
