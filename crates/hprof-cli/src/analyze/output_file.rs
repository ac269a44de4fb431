//! `-o FILE`: written 0600 without following a symlink; an existing file is replaced only once the
//! output is whole (see the `private-files` crate).

use private_files::{Created, IfExists};
use std::io::{self, Write};
use std::path::Path;

/// The output file. [`Write::flush`] says the output is complete: an existing file is replaced then;
/// dropped before, what was written is removed and an existing file stays as it was.
pub struct OutputFile(Created);

impl OutputFile {
    pub fn create(path: &Path) -> Result<OutputFile, String> {
        private_files::create(path, IfExists::Replace).map(OutputFile).map_err(|e| format!("{}: {e}", path.display()))
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.file.flush()?;
        self.0.finish.commit()
    }
}
