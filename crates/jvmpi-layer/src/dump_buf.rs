//! The byte buffer of a JVMPI dump (HEAP_DUMP, MONITOR_DUMP, OBJECT_DUMP).
//!
//! As the JDK's JVMPI wrote them and its HPROF read them (ntohl/ntohs): u2, u4 and u8 in network byte order,
//! IDs (jobjectID, JNIEnv *, JVMPI_RawMonitor) as the machine's pointers.

#[derive(Default)]
pub struct DumpBuf {
    pub bytes: Vec<u8>,
}

impl DumpBuf {
    pub fn u1(&mut self, v: u8) {
        self.bytes.push(v);
    }

    pub fn u2(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub fn u4(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub fn u8(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_be_bytes());
    }

    pub fn id<T>(&mut self, p: *mut T) {
        self.bytes.extend_from_slice(&(p as usize).to_ne_bytes());
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Overwrites a u4 written earlier at `at` (a length known only after what follows it).
    pub fn patch_u4(&mut self, at: usize, v: u32) {
        self.bytes[at..at + 4].copy_from_slice(&v.to_be_bytes());
    }

    /// (begin, end) pointers for the event; valid while `self` is neither moved nor changed.
    pub fn range(&mut self) -> (*mut std::ffi::c_char, *mut std::ffi::c_char) {
        let range = self.bytes.as_mut_ptr_range();
        (range.start.cast(), range.end.cast())
    }
}
