//! The files written beside the profile at exit (`collapsed=`, `flamegraph=`), checked at load: a
//! directory that does not exist, a read-only or full file system is refused then with the option's name,
//! instead of an error message at exit after a run whose exit code says all went well.

use crate::options::Options;
use std::fs::OpenOptions;
use std::io::Write;

/// Creates each side file and writes one byte into it (a full file system refuses that), then empties it.
pub fn check(options: &Options) -> Result<(), String> {
    let files = [("collapsed", &options.collapsed), ("flamegraph", &options.flamegraph)];
    for (name, path) in files {
        let Some(path) = path else { continue };
        let probe = OpenOptions::new().write(true).create(true).truncate(true).open(path).and_then(|mut f| {
            f.write_all(b"\n")?;
            f.set_len(0)
        });
        if let Err(e) = probe {
            return Err(format!("option {name}={path} is not valid: the file cannot be written: {e}"));
        }
    }
    Ok(())
}
