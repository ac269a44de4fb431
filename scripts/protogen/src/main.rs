//! Compiles the .proto files vendored in crates/hprof-format/proto with protox (no protoc needed) and writes
//! prost's Rust for them into crates/hprof-format/src/profiles/generated, where they are committed.

use std::path::Path;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../crates/hprof-format");
    let proto = crate_dir.join("proto");
    let out = crate_dir.join("src/profiles/generated");
    std::fs::create_dir_all(&out)?;
    let files = [
        "pprof/profile.proto",
        "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto",
    ];
    let descriptors = protox::compile(files, [&proto])?;
    prost_build::Config::new().out_dir(&out).compile_fds(descriptors)?;
    for e in std::fs::read_dir(&out)? {
        println!("wrote {}", e?.path().display());
    }
    Ok(())
}
