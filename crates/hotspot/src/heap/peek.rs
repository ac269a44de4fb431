//! Reads of the process's own memory that fail instead of faulting: `process_vm_readv` on our own pid
//! copies through the kernel, which reports an unmapped or unreadable address as an error (EFAULT) rather
//! than a signal. About a microsecond a call: for what is not yet trusted (the probe's checks, decoded
//! field offsets), never for the walk's millions of reads, which the committed ranges guard instead.

/// A value at `addr`, or `None` if the memory is not readable.
pub fn peek<T: Copy + Default>(addr: u64) -> Option<T> {
    let mut value = T::default();
    let size = std::mem::size_of::<T>();
    let local = libc::iovec { iov_base: &mut value as *mut T as *mut libc::c_void, iov_len: size };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: size };
    // SAFETY: the kernel writes at most `size` bytes into `value`, which is that large and ours; the remote
    // side is only read, and an unreadable remote address is an error, not a fault.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == size as isize).then_some(value)
}

/// `len` bytes at `addr`, or `None` if any of them is not readable.
pub fn peek_bytes(addr: u64, len: usize) -> Option<Box<[u8]>> {
    let mut out = vec![0u8; len].into_boxed_slice();
    let local = libc::iovec { iov_base: out.as_mut_ptr() as *mut libc::c_void, iov_len: len };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: len };
    // SAFETY: as in `peek`: the kernel writes at most `len` bytes into `out`, which has `len`.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == len as isize).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_memory_is_read_and_unmapped_memory_is_refused() {
        let x: u64 = 0x1122_3344_5566_7788;
        assert_eq!(peek::<u64>(&x as *const u64 as u64), Some(x));
        assert_eq!(peek::<u64>(8), None, "page zero is never mapped");
        let bytes = [1u8, 2, 3, 4, 5];
        assert_eq!(peek_bytes(bytes.as_ptr() as u64 + 1, 3).as_deref(), Some(&[2u8, 3, 4][..]));
        assert_eq!(peek_bytes(16, 4), None);
    }
}
