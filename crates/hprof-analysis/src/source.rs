//! Getting a file's bytes: memory-mapped as it is, or — for `GC.heap_dump -gz` and other gzip files
//! (multi-member ones too), and for bzip2, xz and zstd files — decompressed once into an unlinked
//! temporary file that is mapped in turn. The format is told by its magic bytes, not the file's name.

use crate::{Error, Progress};
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A whole input file, readable as one byte slice.
pub struct Source {
    map: Option<Mmap>,
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
                let f = decompress(c, file, path, progress);
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
            // fault, which is the usual caveat of every memory-mapped reader.
            Some(unsafe { Mmap::map(&file) }.map_err(io_err)?)
        };
        Ok(Source { map, owned: None, path: path.to_path_buf(), was_gzip, compression, file_size })
    }

    /// A source with no bytes, as a placeholder.
    pub fn empty() -> Source {
        Source { map: None, owned: None, path: PathBuf::new(), was_gzip: false, compression: None, file_size: 0 }
    }

    /// Bytes already in memory (tests, fuzzing).
    pub fn from_vec(bytes: Vec<u8>) -> Source {
        let file_size = bytes.len() as u64;
        Source {
            map: None,
            owned: Some(bytes),
            path: PathBuf::from("<memory>"),
            was_gzip: false,
            compression: None,
            file_size,
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

/// Decompresses a whole file into an unlinked temporary file.
fn decompress(c: Compression, file: File, path: &Path, progress: &dyn Progress) -> Result<File, Error> {
    let mut out = tempfile::tempfile().map_err(|e| Error::Io(format!("temporary file for decompression: {e}")))?;
    let counting = Counting { inner: file, read: 0, progress };
    let mut input = BufReader::with_capacity(1 << 20, counting);
    let mut w = io::BufWriter::with_capacity(1 << 20, &mut out);
    let damaged =
        |e: &dyn std::fmt::Display| Error::Io(format!("{}: {} data is damaged: {e}", path.display(), c.name()));
    match c {
        Compression::Gzip => copy(&mut flate2::read::MultiGzDecoder::new(input), &mut w).map_err(|e| damaged(&e))?,
        Compression::Bzip2 => copy(&mut bzip2::read::MultiBzDecoder::new(input), &mut w).map_err(|e| damaged(&e))?,
        Compression::Xz => lzma_rs::xz_decompress(&mut input, &mut w).map_err(|e| damaged(&e))?,
        Compression::Zstd => {
            // One frame after another (zstd -T and concatenated files write several).
            while !input.fill_buf().map_err(|e| damaged(&e))?.is_empty() {
                let mut frame = ruzstd::decoding::StreamingDecoder::new(&mut input).map_err(|e| damaged(&e))?;
                copy(&mut frame, &mut w).map_err(|e| damaged(&e))?;
            }
        }
    }
    w.flush().map_err(|e| Error::Io(format!("writing decompressed data: {e}")))?;
    drop(w);
    Ok(out)
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
