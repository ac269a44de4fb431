//! Which of -Xprof's columns a tick belongs to, from where its program counter is (see `code_map`) and the
//! top Java frame AsyncGetCallTrace found (which, in compiled code, is the innermost inlined method, through
//! the nmethod's pc-to-scope map).
//!
//! As -Xprof: a tick in the interpreter counts for the interpreted method, in a compiled method for the
//! compiled method, in other generated code for that stub; a tick outside generated code (a native library,
//! the JVM's own runtime) is a *native* tick of the Java method that called out — in the table of that
//! frame's kind — and without a Java frame it is unknown code.

use super::code_map::Code;
use std::sync::Arc;

/// Code ticks (the pc in the method's own code) or native ticks (in code it called).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Code,
    Native,
}

/// A row of one of the method tables.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Row {
    Interpreted(usize),
    /// The method the pc is in (innermost inlined), and the compiled method it was inlined into if another.
    Compiled {
        method: usize,
        inlined_into: Option<usize>,
    },
    /// A native method's compiled wrapper (as -Xprof listed them), or generated code by name.
    StubMethod(usize),
    StubNamed(Arc<str>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Bucket {
    Method(Row, Side),
    /// In the interpreter, but the walker found no method.
    Interpreter,
    /// In the class loader (a native method of java.lang.ClassLoader on top).
    ClassLoader,
    /// No Java frame and no generated code.
    Unknown,
}

/// The top Java frame of a tick.
#[derive(Debug, Clone, Copy)]
pub struct TopFrame {
    pub method: usize,
    pub native: bool,
    /// A native method of java.lang.ClassLoader (defining or finding a class).
    pub class_loading: bool,
}

/// Classifies one tick. `compiled(m)`: whether method `m` has compiled code now (its frame is then taken
/// to be compiled); `in_library`: whether the pc is in a loaded library (dladdr found one).
pub fn classify(
    code: Option<&Code>,
    top: Option<TopFrame>,
    compiled: impl Fn(usize) -> bool,
    in_library: bool,
) -> Bucket {
    match code {
        Some(Code::Interpreter) => match top {
            Some(t) => Bucket::Method(Row::Interpreted(t.method), Side::Code),
            None => Bucket::Interpreter,
        },
        Some(Code::Compiled { method, native: true }) => Bucket::Method(Row::StubMethod(*method), Side::Code),
        Some(Code::Compiled { method, native: false }) => {
            let inner = top.map_or(*method, |t| t.method);
            let inlined_into = (inner != *method).then_some(*method);
            Bucket::Method(Row::Compiled { method: inner, inlined_into }, Side::Code)
        }
        Some(Code::Stub(name)) => Bucket::Method(Row::StubNamed(name.clone()), Side::Code),
        None => match top {
            None => Bucket::Unknown,
            Some(_) if !in_library => Bucket::Unknown,
            Some(t) if t.class_loading => Bucket::ClassLoader,
            Some(t) if t.native && compiled(t.method) => Bucket::Method(Row::StubMethod(t.method), Side::Native),
            Some(t) if !t.native && compiled(t.method) => {
                Bucket::Method(Row::Compiled { method: t.method, inlined_into: None }, Side::Native)
            }
            Some(t) => Bucket::Method(Row::Interpreted(t.method), Side::Native),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn top(method: usize, native: bool) -> Option<TopFrame> {
        Some(TopFrame { method, native, class_loading: false })
    }

    #[test]
    fn generated_code_by_kind() {
        let never = |_| false;
        assert_eq!(
            classify(Some(&Code::Interpreter), top(1, false), never, false),
            Bucket::Method(Row::Interpreted(1), Side::Code)
        );
        assert_eq!(classify(Some(&Code::Interpreter), None, never, false), Bucket::Interpreter);
        let nm = Code::Compiled { method: 5, native: false };
        assert_eq!(
            classify(Some(&nm), top(5, false), never, false),
            Bucket::Method(Row::Compiled { method: 5, inlined_into: None }, Side::Code)
        );
        assert_eq!(
            classify(Some(&nm), top(3, false), never, false),
            Bucket::Method(Row::Compiled { method: 3, inlined_into: Some(5) }, Side::Code),
            "an inlined method is counted for itself, inside its compiled caller"
        );
        let stub = Code::Stub("I2C/C2I adapters".into());
        assert_eq!(
            classify(Some(&stub), None, never, false),
            Bucket::Method(Row::StubNamed("I2C/C2I adapters".into()), Side::Code)
        );
    }

    #[test]
    fn native_ticks_go_to_the_calling_java_method() {
        let compiled = |m| m == 9;
        assert_eq!(classify(None, top(2, true), compiled, true), Bucket::Method(Row::Interpreted(2), Side::Native));
        assert_eq!(classify(None, top(9, true), compiled, true), Bucket::Method(Row::StubMethod(9), Side::Native));
        assert_eq!(
            classify(None, top(9, false), compiled, true),
            Bucket::Method(Row::Compiled { method: 9, inlined_into: None }, Side::Native)
        );
        assert_eq!(classify(None, None, compiled, true), Bucket::Unknown);
        assert_eq!(classify(None, top(2, true), compiled, false), Bucket::Unknown, "pc in no library and no code");
        let loading = Some(TopFrame { method: 4, native: true, class_loading: true });
        assert_eq!(classify(None, loading, compiled, true), Bucket::ClassLoader);
    }
}
