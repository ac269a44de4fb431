//! The object layout a JVM used, stated in the file by the agent that wrote it. A heap dump stores field
//! values, not memory, so a reader rebuilds object sizes from the layout, which HPROF has no record for;
//! a reader that sees object addresses can infer it, but not from a dump whose objects are named by
//! numbers of its own (our agent's under ZGC, Shenandoah or `HPROF_HEAP_DUMP_TAGS`).
//!
//! The note is a STRING record that nothing refers to, whose text starts with [`PREFIX`]: readers that do
//! not know it keep it as one more string; `hprof` takes it as the layout. The text is `key=value` pairs
//! after the prefix, so that a reader skips keys it does not know:
//!
//! `hprof-rs object layout: compressed-oops=1 compressed-class-pointers=1 compact-headers=0
//! object-alignment=8 packed-arrays=1`

/// How the note's text starts.
pub const PREFIX: &str = "hprof-rs object layout: ";

/// What decides object sizes, as the JVM's flags say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayoutNote {
    /// `-XX:+UseCompressedOops`: 4-byte references.
    pub compressed_oops: bool,
    /// `-XX:+UseCompressedClassPointers`: a 4-byte class word (none with compact headers).
    pub compressed_class_pointers: bool,
    /// `-XX:+UseCompactObjectHeaders` (JDK 24+): 8-byte headers.
    pub compact_headers: bool,
    /// `-XX:ObjectAlignmentInBytes`.
    pub object_alignment: u32,
    /// Array elements start right after the length, aligned to their own size (JDK 22+, JDK-8139457).
    pub packed_arrays: bool,
}

impl LayoutNote {
    /// The STRING record's text.
    pub fn text(&self) -> String {
        let bit = |b: bool| if b { 1 } else { 0 };
        format!(
            "{PREFIX}compressed-oops={} compressed-class-pointers={} compact-headers={} object-alignment={} \
             packed-arrays={}",
            bit(self.compressed_oops),
            bit(self.compressed_class_pointers),
            bit(self.compact_headers),
            self.object_alignment,
            bit(self.packed_arrays),
        )
    }

    /// The note a STRING record's text holds; `None` for any other text, or a note missing a key.
    pub fn parse(text: &[u8]) -> Option<LayoutNote> {
        let rest = text.strip_prefix(PREFIX.as_bytes())?;
        let rest = std::str::from_utf8(rest).ok()?;
        let (mut oops, mut ccp, mut compact, mut align, mut packed) = (None, None, None, None, None);
        for pair in rest.split_ascii_whitespace() {
            let Some((key, value)) = pair.split_once('=') else { continue };
            let flag = || match value {
                "0" => Some(false),
                "1" => Some(true),
                _ => None,
            };
            match key {
                "compressed-oops" => oops = flag(),
                "compressed-class-pointers" => ccp = flag(),
                "compact-headers" => compact = flag(),
                "object-alignment" => align = value.parse().ok().filter(|a: &u32| a.is_power_of_two() && *a >= 8),
                "packed-arrays" => packed = flag(),
                _ => {}
            }
        }
        Some(LayoutNote {
            compressed_oops: oops?,
            compressed_class_pointers: ccp?,
            compact_headers: compact?,
            object_alignment: align?,
            packed_arrays: packed?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_reads_back_and_other_strings_are_no_note() {
        let note = LayoutNote {
            compressed_oops: false,
            compressed_class_pointers: true,
            compact_headers: false,
            object_alignment: 16,
            packed_arrays: true,
        };
        assert_eq!(LayoutNote::parse(note.text().as_bytes()), Some(note));
        assert_eq!(LayoutNote::parse(b"java/lang/String"), None);
        assert_eq!(LayoutNote::parse(PREFIX.as_bytes()), None, "no keys");
        let bad_alignment = note.text().replace("object-alignment=16", "object-alignment=12");
        assert_eq!(LayoutNote::parse(bad_alignment.as_bytes()), None);
        let more = format!("{} future-key=7", note.text());
        assert_eq!(LayoutNote::parse(more.as_bytes()), Some(note), "unknown keys are skipped");
    }
}
