//! Getting a file's bytes: memory-mapped as it is, or — for `GC.heap_dump -gz` and other gzip files
//! (multi-member ones too), and for bzip2, xz and zstd files — decompressed once into an unlinked
//! temporary file that is mapped in turn. The format is told by its magic bytes, not the file's name.

use crate::{Error, Progress};
use memmap2::Mmap;
use std::cell::Cell;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// How much a compressed file may inflate to, unless the user says otherwise (`--max-inflated`): this many
/// times its compressed size. Heap dumps compress 5–20×; a bomb of zeros a thousandfold.
pub const INFLATE_RATIO: u64 = 64;
/// ... but never less than this (small files of many zeros are legitimate).
pub const INFLATE_FLOOR: u64 = 1 << 30;

/// The process-wide limit `--max-inflated` sets (0: the default above).
static MAX_INFLATED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sets the most a compressed input may inflate to, in bytes, for every file opened after (the front
/// end's `--max-inflated`); `None` restores the default, [`INFLATE_RATIO`] × the compressed size but at
/// least [`INFLATE_FLOOR`].
pub fn set_max_inflated(limit: Option<u64>) {
    MAX_INFLATED.store(limit.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
}

/// The inflation limit for a file of `compressed` bytes, and whether the user set it.
pub fn max_inflated(compressed: u64) -> (u64, bool) {
    match MAX_INFLATED.load(std::sync::atomic::Ordering::Relaxed) {
        0 => (compressed.saturating_mul(INFLATE_RATIO).max(INFLATE_FLOOR), false),
        n => (n, true),
    }
}

/// A whole input file, readable as one byte slice.
pub struct Source {
    /// Watches `map` for the file shrinking under it (see [`crate::map_guard`]); dropped before the map.
    guard: Option<crate::map_guard::Guard>,
    map: Option<Mmap>,
    /// The mapped file, to tell its size now.
    file: Option<File>,
    owned: Option<Vec<u8>>,
    pub path: PathBuf,
    /// The file was gzip-compressed and this is its decompressed content.
    pub was_gzip: bool,
    /// The file's compression (`gzip`, `bzip2`, `xz`, `zstd`), if it had one.
    pub compression: Option<&'static str>,
    /// Size of the file on disk (compressed size for gzip).
    pub file_size: u64,
}

impl Source {
    pub fn open(path: &Path) -> Result<Source, Error> {
        Source::open_with(path, &crate::Quiet)
    }

    /// Opens `path`; decompressing a gzip file reports its progress.
    pub fn open_with(path: &Path, progress: &dyn Progress) -> Result<Source, Error> {
        let io_err = |e: io::Error| Error::Io(format!("{}: {e}", path.display()));
        let mut file = File::open(path).map_err(io_err)?;
        let file_size = file.metadata().map_err(io_err)?.len();
        let mut magic = [0u8; 6];
        let n = read_up_to(&mut file, &mut magic).map_err(io_err)?;
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        let compression = Compression::of(&magic[..n]);
        let file = match compression {
            Some(c) => {
                progress.start("decompressing", file_size);
                let f = decompress(c, file, file_size, path, progress);
                progress.finish();
                f?
            }
            None => file,
        };
        let was_gzip = compression == Some(Compression::Gzip);
        let compression = compression.map(Compression::name);
        let len = file.metadata().map_err(io_err)?.len();
        let map = if len == 0 {
            None
        } else {
            // SAFETY: the mapping is read-only; a file truncated by someone else while we read it would
            // fault: `map_guard` turns that fault into zeros and a flag that `check_intact` reports.
            Some(unsafe { Mmap::map(&file) }.map_err(io_err)?)
        };
        let guard = map.as_ref().and_then(|m| crate::map_guard::watch(m.as_ptr(), m.len()));
        Ok(Source {
            guard,
            map,
            file: Some(file),
            owned: None,
            path: path.to_path_buf(),
            was_gzip,
            compression,
            file_size,
        })
    }

    /// A source with no bytes, as a placeholder.
    pub fn empty() -> Source {
        Source {
            guard: None,
            map: None,
            file: None,
            owned: None,
            path: PathBuf::new(),
            was_gzip: false,
            compression: None,
            file_size: 0,
        }
    }

    /// Bytes already in memory (tests, fuzzing).
    pub fn from_vec(bytes: Vec<u8>) -> Source {
        let file_size = bytes.len() as u64;
        Source {
            guard: None,
            map: None,
            file: None,
            owned: Some(bytes),
            path: PathBuf::from("<memory>"),
            was_gzip: false,
            compression: None,
            file_size,
        }
    }

    /// An error if the file is now shorter than what was mapped (someone truncated it while we read it):
    /// what was read past its new end were zeros, so results would be wrong. Readers call this after
    /// each pass and before showing results.
    pub fn check_intact(&self) -> Result<(), Error> {
        let Some(map) = &self.map else { return Ok(()) };
        let now = self.file.as_ref().and_then(|f| f.metadata().ok()).map(|m| m.len());
        let faulted = self.guard.as_ref().is_some_and(|g| g.shrunk());
        match now {
            Some(now) if now < map.len() as u64 || faulted => Err(Error::Io(format!(
                "{} shrank from {} to {now} bytes while being read; its results would be wrong",
                self.path.display(),
                map.len()
            ))),
            None if faulted => Err(Error::Io(format!(
                "{} shrank from {} bytes while being read; its results would be wrong",
                self.path.display(),
                map.len()
            ))),
            _ => Ok(()),
        }
    }

    pub fn bytes(&self) -> &[u8] {
        match (&self.map, &self.owned) {
            (Some(m), _) => m,
            (None, Some(v)) => v,
            _ => &[],
        }
    }

    /// Tells the kernel that `range` will not be read again soon, so that its pages leave this process's
    /// resident set (they stay in the page cache). Keeps peak memory near what the index needs.
    pub fn release(&self, start: usize, end: usize) {
        let Some(map) = &self.map else { return };
        let page = 4096;
        let start = start.div_ceil(page) * page;
        let end = (end / page) * page;
        if end > start && end <= map.len() {
            // SAFETY: the range lies inside our own read-only private mapping; MADV_DONTNEED on it only
            // drops pages, which are read back from the file if touched again.
            unsafe {
                libc::madvise(map.as_ptr().add(start) as *mut libc::c_void, end - start, libc::MADV_DONTNEED);
            }
        }
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Counts the compressed bytes read, for the progress bar.
struct Counting<'a, R> {
    inner: R,
    read: u64,
    progress: &'a dyn Progress,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        self.progress.set(self.read);
        Ok(n)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

impl Compression {
    fn of(magic: &[u8]) -> Option<Compression> {
        match magic {
            [0x1f, 0x8b, ..] => Some(Compression::Gzip),
            [b'B', b'Z', b'h', ..] => Some(Compression::Bzip2),
            [0xfd, b'7', b'z', b'X', b'Z', 0] => Some(Compression::Xz),
            [0x28, 0xb5, 0x2f, 0xfd, ..] => Some(Compression::Zstd),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
            Compression::Zstd => "zstd",
        }
    }
}

/// Decompresses a whole file into an unlinked temporary file, stopping at the inflation limit (see
/// [`max_inflated`]) and at the first bytes if they are not an HPROF file: a bomb costs neither time nor disk.
fn decompress(
    c: Compression,
    file: File,
    compressed: u64,
    path: &Path,
    progress: &dyn Progress,
) -> Result<File, Error> {
    let mut out = tempfile::tempfile().map_err(|e| Error::Io(format!("temporary file for decompression: {e}")))?;
    let counting = Counting { inner: file, read: 0, progress };
    let mut input = BufReader::with_capacity(1 << 20, counting);
    let (limit, set_by_user) = max_inflated(compressed);
    let stop = Cell::new(None);
    let limited = Limited { inner: &mut out, written: 0, limit, head: Vec::new(), stop: &stop };
    let mut w = io::BufWriter::with_capacity(1 << 20, limited);
    let result = match c {
        Compression::Gzip => copy(&mut flate2::read::MultiGzDecoder::new(input), &mut w).map_err(|e| e.to_string()),
        Compression::Bzip2 => copy(&mut bzip2::read::MultiBzDecoder::new(input), &mut w).map_err(|e| e.to_string()),
        Compression::Xz => lzma_rs::xz_decompress(&mut input, &mut w).map_err(|e| e.to_string()),
        Compression::Zstd => (|| {
            // One frame after another (zstd -T and concatenated files write several).
            while !input.fill_buf().map_err(|e| e.to_string())?.is_empty() {
                let mut frame = ruzstd::decoding::StreamingDecoder::new(&mut input).map_err(|e| e.to_string())?;
                copy(&mut frame, &mut w).map_err(|e| e.to_string())?;
            }
            Ok(())
        })(),
    };
    let result = result.and_then(|()| w.flush().map_err(|e| e.to_string()));
    drop(w);
    match (stop.get(), result) {
        (Some(Stop::TooLarge), _) => {
            let how = if set_by_user {
                "the limit given".to_owned()
            } else {
                format!("{INFLATE_RATIO}× its {compressed} compressed bytes, at least {INFLATE_FLOOR}")
            };
            Err(Error::Io(format!(
                "{}: {} data inflates past {limit} bytes ({how}); stopped there. If the file is genuine, \
                 allow more with --max-inflated SIZE (e.g. --max-inflated 200G)",
                path.display(),
                c.name()
            )))
        }
        (Some(Stop::NotHprof), _) => Err(Error::NotHprof(format!(
            "{}: its {} content is not an HPROF file (it does not start with \"JAVA PROFILE\")",
            path.display(),
            c.name()
        ))),
        (None, Err(e)) => Err(Error::Io(format!("{}: {} data is damaged: {e}", path.display(), c.name()))),
        (None, Ok(())) => Ok(out),
    }
}

#[derive(Debug, Clone, Copy)]
enum Stop {
    TooLarge,
    NotHprof,
}

/// Passes bytes on until `limit`, and checks that the first of them start an HPROF file.
struct Limited<'a, W> {
    inner: W,
    written: u64,
    limit: u64,
    head: Vec<u8>,
    stop: &'a Cell<Option<Stop>>,
}

const MAGIC: &[u8] = b"JAVA PROFILE";

impl<W: Write> Write for Limited<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.head.len() < MAGIC.len() {
            let take = buf.len().min(MAGIC.len() - self.head.len());
            self.head.extend_from_slice(&buf[..take]);
            if !MAGIC.starts_with(&self.head) {
                self.stop.set(Some(Stop::NotHprof));
                return Err(io::Error::other("not an HPROF file"));
            }
        }
        if self.written + buf.len() as u64 > self.limit {
            self.stop.set(Some(Stop::TooLarge));
            return Err(io::Error::other("inflation limit reached"));
        }
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Copies until the end, in 1 MiB steps.
fn copy(r: &mut impl Read, w: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
    }
}
