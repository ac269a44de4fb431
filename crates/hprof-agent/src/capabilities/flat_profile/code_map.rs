//! Where generated code lives: the template interpreter and the stubs (DynamicCodeGenerated), compiled
//! methods and native wrappers (CompiledMethodLoad / Unload), by address range, so that a tick's program
//! counter can be told apart as -Xprof did: interpreted, compiled, stub, or outside generated code.

use std::collections::BTreeMap;
use std::sync::Arc;

/// What a range of generated code is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    /// The template interpreter (DynamicCodeGenerated's "Interpreter").
    Interpreter,
    /// A compiled method (`jmethodID` as an integer); `native`: the wrapper of a native method.
    Compiled { method: usize, native: bool },
    /// Any other generated code, by the JVM's name for it (stubs, adapters, runtime blobs).
    Stub(Arc<str>),
}

#[derive(Debug, Default)]
pub struct CodeMap {
    /// Start → (end, what).
    ranges: BTreeMap<usize, (usize, Code)>,
    /// Live compiled bodies per method, to tell whether a method's frame is (probably) compiled.
    compiled: rustc_hash::FxHashMap<usize, u32>,
}

impl CodeMap {
    /// Adds `[start, start + len)`; code that overlapped it was freed and its memory reused.
    pub fn add(&mut self, start: usize, len: usize, code: Code) {
        if len == 0 {
            return;
        }
        let end = start + len;
        let overlapping: Vec<usize> =
            self.ranges.range(..end).rev().take_while(|(_, (e, _))| *e > start).map(|(s, _)| *s).collect();
        for s in overlapping {
            self.remove(s);
        }
        if let Code::Compiled { method, .. } = code {
            *self.compiled.entry(method).or_default() += 1;
        }
        self.ranges.insert(start, (end, code));
    }

    /// Forgets the code starting at `start` (CompiledMethodUnload).
    pub fn remove(&mut self, start: usize) {
        if let Some((_, Code::Compiled { method, .. })) = self.ranges.remove(&start)
            && let Some(n) = self.compiled.get_mut(&method)
        {
            *n -= 1;
            if *n == 0 {
                self.compiled.remove(&method);
            }
        }
    }

    /// The code containing `pc`.
    pub fn find(&self, pc: usize) -> Option<&Code> {
        let (_, (end, code)) = self.ranges.range(..=pc).next_back()?;
        (pc < *end).then_some(code)
    }

    /// Whether the interpreter's code is known.
    pub fn has_interpreter(&self) -> bool {
        self.ranges.values().any(|(_, c)| *c == Code::Interpreter)
    }

    /// Whether `method` has a compiled body now.
    pub fn is_compiled(&self, method: usize) -> bool {
        self.compiled.contains_key(&method)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ranges_and_forgets_replaced_code() {
        let mut map = CodeMap::default();
        map.add(0x1000, 0x100, Code::Interpreter);
        map.add(0x2000, 0x80, Code::Compiled { method: 7, native: false });
        map.add(0x3000, 0x10, Code::Stub("StubRoutines (1)".into()));
        assert_eq!(map.find(0x1000), Some(&Code::Interpreter));
        assert_eq!(map.find(0x10ff), Some(&Code::Interpreter));
        assert_eq!(map.find(0x1100), None);
        assert_eq!(map.find(0xfff), None);
        assert!(map.is_compiled(7));
        // The code cache reuses 0x2000..0x2080 for another method: the old one is gone.
        map.add(0x2040, 0x100, Code::Compiled { method: 9, native: true });
        assert!(!map.is_compiled(7) && map.is_compiled(9));
        assert_eq!(map.find(0x2010), None);
        map.remove(0x2040);
        assert!(!map.is_compiled(9));
        assert_eq!(map.find(0x3008), Some(&Code::Stub("StubRoutines (1)".into())));
    }
}
