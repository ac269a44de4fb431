//! JVM type names to Java source names, the form HPROF prints (`char[]`, `java.lang.String[][]`).

use crate::tags::BasicType;

/// A field descriptor or class signature (`Ljava/lang/String;`, `[[I`, `I`) as Java source names it.
/// A plain internal name (`java/lang/String`) is accepted too. Malformed input comes back dotted.
pub fn java_name_from_signature(sig: &str) -> String {
    let dims = sig.bytes().take_while(|&b| b == b'[').count();
    let elem = &sig[dims..];
    let base = match elem.as_bytes().first() {
        Some(b'L') if elem.ends_with(';') => elem[1..elem.len() - 1].replace('/', "."),
        Some(&c) if elem.len() == 1 => match BasicType::from_descriptor(c) {
            Some(t) if t != BasicType::Object => t.java_name().to_owned(),
            _ => elem.replace('/', "."),
        },
        _ => elem.replace('/', "."),
    };
    let mut out = base;
    for _ in 0..dims {
        out.push_str("[]");
    }
    out
}

/// A class name as HotSpot's LOAD CLASS records spell it: internal form for instance classes
/// (`java/lang/String`), descriptor form for arrays (`[Ljava/lang/String;`, `[I`).
pub fn java_name_from_internal(name: &str) -> String {
    if name.starts_with('[') { java_name_from_signature(name) } else { name.replace('/', ".") }
}

/// The element type of an array class signature, or `None` for a non-array.
/// `[I` → Int, `[[I` → Object (an array of arrays holds references).
pub fn array_element_type(sig: &str) -> Option<BasicType> {
    let rest = sig.strip_prefix('[')?;
    BasicType::from_descriptor(*rest.as_bytes().first()?)
}

/// A method's parameter list as Java spells it: `(I[Ljava/lang/String;)V` → `int, java.lang.String[]`.
pub fn java_parameters(method_sig: &str) -> String {
    let Some(inner) = method_sig.strip_prefix('(').and_then(|s| s.split(')').next()) else {
        return String::new();
    };
    let bytes = inner.as_bytes();
    let mut params = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i] == b'[' {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'L' {
            while i < bytes.len() && bytes[i] != b';' {
                i += 1;
            }
        }
        i += 1;
        params.push(java_name_from_signature(&inner[start..i.min(bytes.len())]));
    }
    params.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_become_source_names() {
        assert_eq!(java_name_from_signature("Ljava/util/zip/ZipEntry;"), "java.util.zip.ZipEntry");
        assert_eq!(java_name_from_signature("[C"), "char[]");
        assert_eq!(java_name_from_signature("[[Ljava/lang/String;"), "java.lang.String[][]");
        assert_eq!(java_name_from_signature("[[[S"), "short[][][]");
        assert_eq!(java_name_from_signature("I"), "int");
        assert_eq!(java_name_from_signature("Foo$Bar"), "Foo$Bar");
    }

    #[test]
    fn internal_names_become_source_names() {
        assert_eq!(java_name_from_internal("java/lang/String"), "java.lang.String");
        assert_eq!(java_name_from_internal("[Ljava/lang/Object;"), "java.lang.Object[]");
        assert_eq!(java_name_from_internal("[J"), "long[]");
    }

    #[test]
    fn array_element_types() {
        assert_eq!(array_element_type("[I"), Some(BasicType::Int));
        assert_eq!(array_element_type("[[I"), Some(BasicType::Object));
        assert_eq!(array_element_type("[Ljava/lang/String;"), Some(BasicType::Object));
        assert_eq!(array_element_type("Ljava/lang/String;"), None);
    }

    #[test]
    fn parameters_in_java_form() {
        assert_eq!(java_parameters("(I[Ljava/lang/String;J)V"), "int, java.lang.String[], long");
        assert_eq!(java_parameters("()V"), "");
    }
}

/// A name from a file or a peer as it may be shown on a terminal: control characters (C0, DEL and C1,
/// terminal escape sequences among them) written as `\x1b`, `\n`, `\r`, `\t`, `\u{9b}`, everything else
/// (any other Unicode) unchanged. Every name the front end shows goes through here once, where it is read.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    printable_keeping(s, &[])
}

/// [`printable`], leaving the characters of `keep` alone (`\n` for a whole text report).
pub fn printable_keeping<'a>(s: &'a str, keep: &[char]) -> std::borrow::Cow<'a, str> {
    use std::fmt::Write;
    let bad = |c: char| c.is_control() && !keep.contains(&c);
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            c if !bad(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod printable_tests {
    use super::{printable, printable_keeping};

    #[test]
    fn control_characters_are_escaped_and_unicode_kept() {
        assert_eq!(printable("\x1b]0;pwned\x07main"), "\\x1b]0;pwned\\x07main");
        assert_eq!(printable("a\nb\rc\td\x7f"), "a\\nb\\rc\\td\\x7f");
        assert_eq!(printable("csi\u{9b}2J"), "csi\\u{9b}2J");
        assert_eq!(printable("Größe-线程-🧵 \\ ok"), "Größe-线程-🧵 \\ ok");
        assert!(matches!(printable("java.lang.String"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(printable_keeping("line\x1b[2J\nnext", &['\n']), "line\\x1b[2J\nnext");
    }
}
