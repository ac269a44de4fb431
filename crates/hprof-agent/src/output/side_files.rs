//! The files written beside the profile at exit (`collapsed=`, `flamegraph=`), checked at load: a
//! directory that does not exist, a read-only or full file system is refused then with the option's name,
//! instead of an error message at exit after a run whose exit code says all went well.

use crate::options::Options;
use private_files::{IfExists, Kind};
use std::io::Write;

/// Creates each side file (or, when one exists, the fresh file that will replace it) and writes one
/// byte into it (a full file system refuses that), then empties it; the fresh file is removed. An existing
/// file is left as it is until the one written at exit replaces it.
pub fn check(options: &Options) -> Result<(), String> {
    let files = [("collapsed", &options.collapsed), ("flamegraph", &options.flamegraph)];
    for (name, path) in files {
        let Some(path) = path else { continue };
        let probe = private_files::create(std::path::Path::new(path), IfExists::Replace).and_then(|mut c| {
            c.file.write_all(b"\n")?;
            if c.kind != Kind::Stream {
                c.file.set_len(0)?;
            }
            Ok(())
        });
        if let Err(e) = probe {
            return Err(format!("option {name}={path} is not valid: the file cannot be written: {e}"));
        }
    }
    Ok(())
}
