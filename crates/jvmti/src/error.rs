use jvmti_sys as sys;
use std::fmt;

/// A JVMTI error code, printed with its JVMTI name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JvmtiError(pub sys::jvmtiError);

pub type Result<T> = std::result::Result<T, JvmtiError>;

impl JvmtiError {
    /// Reported by the wrappers when a function's slot is empty (a JVM older than the bindings).
    pub const NOT_AVAILABLE: JvmtiError = JvmtiError(sys::JVMTI_ERROR_NOT_AVAILABLE);

    pub fn name(self) -> &'static str {
        match self.0 {
            sys::JVMTI_ERROR_NONE => "NONE",
            sys::JVMTI_ERROR_INVALID_THREAD => "INVALID_THREAD",
            sys::JVMTI_ERROR_INVALID_THREAD_GROUP => "INVALID_THREAD_GROUP",
            sys::JVMTI_ERROR_INVALID_PRIORITY => "INVALID_PRIORITY",
            sys::JVMTI_ERROR_THREAD_NOT_SUSPENDED => "THREAD_NOT_SUSPENDED",
            sys::JVMTI_ERROR_THREAD_SUSPENDED => "THREAD_SUSPENDED",
            sys::JVMTI_ERROR_THREAD_NOT_ALIVE => "THREAD_NOT_ALIVE",
            sys::JVMTI_ERROR_INVALID_OBJECT => "INVALID_OBJECT",
            sys::JVMTI_ERROR_INVALID_CLASS => "INVALID_CLASS",
            sys::JVMTI_ERROR_CLASS_NOT_PREPARED => "CLASS_NOT_PREPARED",
            sys::JVMTI_ERROR_INVALID_METHODID => "INVALID_METHODID",
            sys::JVMTI_ERROR_INVALID_LOCATION => "INVALID_LOCATION",
            sys::JVMTI_ERROR_INVALID_FIELDID => "INVALID_FIELDID",
            sys::JVMTI_ERROR_NO_MORE_FRAMES => "NO_MORE_FRAMES",
            sys::JVMTI_ERROR_OPAQUE_FRAME => "OPAQUE_FRAME",
            sys::JVMTI_ERROR_TYPE_MISMATCH => "TYPE_MISMATCH",
            sys::JVMTI_ERROR_INVALID_SLOT => "INVALID_SLOT",
            sys::JVMTI_ERROR_DUPLICATE => "DUPLICATE",
            sys::JVMTI_ERROR_NOT_FOUND => "NOT_FOUND",
            sys::JVMTI_ERROR_INVALID_MONITOR => "INVALID_MONITOR",
            sys::JVMTI_ERROR_NOT_MONITOR_OWNER => "NOT_MONITOR_OWNER",
            sys::JVMTI_ERROR_INTERRUPT => "INTERRUPT",
            sys::JVMTI_ERROR_INVALID_CLASS_FORMAT => "INVALID_CLASS_FORMAT",
            sys::JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION => "CIRCULAR_CLASS_DEFINITION",
            sys::JVMTI_ERROR_FAILS_VERIFICATION => "FAILS_VERIFICATION",
            sys::JVMTI_ERROR_UNSUPPORTED_VERSION => "UNSUPPORTED_VERSION",
            sys::JVMTI_ERROR_INVALID_TYPESTATE => "INVALID_TYPESTATE",
            sys::JVMTI_ERROR_UNMODIFIABLE_CLASS => "UNMODIFIABLE_CLASS",
            sys::JVMTI_ERROR_NOT_AVAILABLE => "NOT_AVAILABLE",
            sys::JVMTI_ERROR_MUST_POSSESS_CAPABILITY => "MUST_POSSESS_CAPABILITY",
            sys::JVMTI_ERROR_NULL_POINTER => "NULL_POINTER",
            sys::JVMTI_ERROR_ABSENT_INFORMATION => "ABSENT_INFORMATION",
            sys::JVMTI_ERROR_INVALID_EVENT_TYPE => "INVALID_EVENT_TYPE",
            sys::JVMTI_ERROR_ILLEGAL_ARGUMENT => "ILLEGAL_ARGUMENT",
            sys::JVMTI_ERROR_NATIVE_METHOD => "NATIVE_METHOD",
            sys::JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED => "CLASS_LOADER_UNSUPPORTED",
            sys::JVMTI_ERROR_OUT_OF_MEMORY => "OUT_OF_MEMORY",
            sys::JVMTI_ERROR_ACCESS_DENIED => "ACCESS_DENIED",
            sys::JVMTI_ERROR_WRONG_PHASE => "WRONG_PHASE",
            sys::JVMTI_ERROR_INTERNAL => "INTERNAL",
            sys::JVMTI_ERROR_UNATTACHED_THREAD => "UNATTACHED_THREAD",
            sys::JVMTI_ERROR_INVALID_ENVIRONMENT => "INVALID_ENVIRONMENT",
            _ => "UNKNOWN_ERROR",
        }
    }
}

impl fmt::Display for JvmtiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JVMTI_ERROR_{} ({})", self.name(), self.0)
    }
}

impl std::error::Error for JvmtiError {}

/// A JNI failure: a negative `JNI_*` code, or a pending Java exception (described, then cleared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JniError {
    Code(sys::jint),
    Exception(String),
    NotFound(String),
}

impl fmt::Display for JniError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JniError::Code(c) => write!(f, "JNI error {c}"),
            JniError::Exception(what) => write!(f, "Java exception during {what}"),
            JniError::NotFound(what) => write!(f, "not found: {what}"),
        }
    }
}

impl std::error::Error for JniError {}
