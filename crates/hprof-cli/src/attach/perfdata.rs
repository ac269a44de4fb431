//! HotSpot's performance data file (`<tmp>/hsperfdata_<user>/<pid>`), read the way `jps` reads it: the
//! JVM's command, its Java version, its flags and whether it offers the attach mechanism.
//!
//! The file is another process's memory, so every offset and length is checked against the bytes read
//! before it is used; a file that does not add up is reported, never trusted.

use std::collections::HashMap;

/// `0xcafec0c0`, always stored big-endian, before the byte-order flag.
const MAGIC: u32 = 0xcafe_c0c0;
/// The prologue: magic, byte order, version, accessible, used, overflow, time stamp, entry offset, count.
const PROLOGUE: usize = 32;
/// An entry's fixed part: length, name offset, vector length, type, flags, units, variability, data offset.
const ENTRY_HEADER: usize = 20;

/// The string-valued counters of one JVM, by name (`sun.rt.javaCommand`, `java.property.java.version`…).
#[derive(Debug, Default)]
pub struct PerfData {
    strings: HashMap<String, String>,
}

impl PerfData {
    pub fn parse(bytes: &[u8]) -> Result<PerfData, String> {
        if bytes.len() < PROLOGUE {
            return Err(format!("{} bytes, shorter than the {PROLOGUE}-byte prologue", bytes.len()));
        }
        let magic = u32::from_be_bytes(bytes[0..4].try_into().expect("4 bytes"));
        if magic != MAGIC {
            return Err(format!("magic {magic:#x}, not {MAGIC:#x}"));
        }
        let little = bytes[4] == 1;
        let int_at = |at: usize| -> Option<usize> {
            let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
            let v = if little { i32::from_le_bytes(b) } else { i32::from_be_bytes(b) };
            usize::try_from(v).ok()
        };
        let entry_offset = int_at(24).ok_or("negative entry offset")?;
        let count = int_at(28).ok_or("negative entry count")?;
        let mut strings = HashMap::new();
        let mut at = entry_offset;
        for n in 0..count {
            if at.checked_add(ENTRY_HEADER).is_none_or(|end| end > bytes.len()) {
                return Err(format!("entry {n} at offset {at} lies past the end ({} bytes)", bytes.len()));
            }
            let length = int_at(at).filter(|&l| l >= ENTRY_HEADER).ok_or(format!("entry {n}: bad length"))?;
            let name_at = at + int_at(at + 4).ok_or(format!("entry {n}: bad name offset"))?;
            let vector = int_at(at + 8).ok_or(format!("entry {n}: bad vector length"))?;
            let data_type = bytes[at + 12];
            let data_at = at + int_at(at + 16).ok_or(format!("entry {n}: bad data offset"))?;
            let name = c_string(bytes.get(name_at..).unwrap_or_default());
            // 'B' with a length: a byte vector, which is how the JVM keeps its strings.
            if data_type == b'B'
                && vector > 0
                && let Some(data) = data_at.checked_add(vector).and_then(|end| bytes.get(data_at..end))
                && let Some(name) = name
            {
                strings.insert(name, c_string(data).unwrap_or_default());
            }
            at = at.checked_add(length).ok_or(format!("entry {n}: length overflows"))?;
        }
        Ok(PerfData { strings })
    }

    pub fn string(&self, name: &str) -> Option<&str> {
        self.strings.get(name).map(String::as_str)
    }

    /// The main class or jar and its arguments, as `jps -m` shows them.
    pub fn command(&self) -> Option<&str> {
        self.string("sun.rt.javaCommand")
    }

    pub fn java_version(&self) -> Option<&str> {
        self.string("java.property.java.version")
    }

    /// The JVM's options (`-XX:…`, `-D…`) as given on its command line.
    pub fn vm_args(&self) -> &str {
        self.string("java.rt.vmArgs").unwrap_or("")
    }

    /// False when the JVM was started with `-XX:+DisableAttachMechanism` (the first of
    /// `sun.rt.jvmCapabilities`' flags is whether attaching is supported).
    pub fn attach_supported(&self) -> Option<bool> {
        self.string("sun.rt.jvmCapabilities").and_then(|c| c.chars().next()).map(|c| c == '1')
    }
}

/// The bytes up to the first NUL (or all), as text with control characters escaped: the file is the JVM's
/// (a container's) and its strings reach the terminal; `None` if there is no NUL and no byte.
fn c_string(bytes: &[u8]) -> Option<String> {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    Some(hprof_format::names::printable(&String::from_utf8_lossy(&bytes[..end])).into_owned())
}

/// The major version of a `java.version` string: 17 for "17.0.12", 8 for "1.8.0_402".
pub fn major_version(version: &str) -> Option<u32> {
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 { parts.next()?.parse().ok() } else { Some(first) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little-endian file with the given string entries, laid out as HotSpot lays it out.
    fn file(entries: &[(&str, &str)]) -> Vec<u8> {
        let mut b = vec![0u8; PROLOGUE];
        b[0..4].copy_from_slice(&MAGIC.to_be_bytes());
        b[4] = 1;
        b[24..28].copy_from_slice(&(PROLOGUE as i32).to_le_bytes());
        b[28..32].copy_from_slice(&(entries.len() as i32).to_le_bytes());
        for (name, value) in entries {
            let name_off = ENTRY_HEADER;
            let data_off = name_off + name.len() + 1;
            let vector = value.len() + 1;
            let length = data_off + vector;
            let mut e = vec![0u8; length];
            e[0..4].copy_from_slice(&(length as i32).to_le_bytes());
            e[4..8].copy_from_slice(&(name_off as i32).to_le_bytes());
            e[8..12].copy_from_slice(&(vector as i32).to_le_bytes());
            e[12] = b'B';
            e[16..20].copy_from_slice(&(data_off as i32).to_le_bytes());
            e[name_off..name_off + name.len()].copy_from_slice(name.as_bytes());
            e[data_off..data_off + value.len()].copy_from_slice(value.as_bytes());
            b.extend(e);
        }
        b
    }

    #[test]
    fn reads_the_strings_jps_shows() {
        let f = file(&[
            ("sun.rt.javaCommand", "CpuAccuracy 30"),
            ("java.property.java.version", "21.0.4"),
            ("sun.rt.jvmCapabilities", "1000000000000000000000000000000000000000000000000000000000000000"),
        ]);
        let p = PerfData::parse(&f).unwrap();
        assert_eq!(p.command(), Some("CpuAccuracy 30"));
        assert_eq!(p.java_version(), Some("21.0.4"));
        assert_eq!(p.attach_supported(), Some(true));
    }

    #[test]
    fn control_characters_come_escaped() {
        let f = file(&[("sun.rt.javaCommand", "Main evil\x1b]0;owned\x07\r\n")]);
        assert_eq!(PerfData::parse(&f).unwrap().command(), Some("Main evil\\x1b]0;owned\\x07\\r\\n"));
    }

    #[test]
    fn a_cut_file_is_an_error_not_a_panic() {
        let f = file(&[("sun.rt.javaCommand", "Main"), ("java.property.java.version", "17")]);
        for len in 0..f.len() {
            let _ = PerfData::parse(&f[..len]);
        }
        assert!(PerfData::parse(&f[..PROLOGUE + 4]).is_err());
    }

    #[test]
    fn major_versions() {
        assert_eq!(major_version("17.0.12"), Some(17));
        assert_eq!(major_version("25"), Some(25));
        assert_eq!(major_version("1.8.0_402"), Some(8));
        assert_eq!(major_version("21-ea"), Some(21));
    }
}
