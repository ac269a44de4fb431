#!/bin/sh
# Regenerates crates/hprof-format/src/profiles/generated/*.rs from crates/hprof-format/proto/*.proto
# (pprof's profile.proto, OpenTelemetry's profiles protos). Run by hand after changing a vendored .proto;
# the generated Rust is committed, so neither builds nor CI need protoc or protox.
set -eu
cd "$(dirname "$0")/.."
cargo run --quiet --release --manifest-path scripts/protogen/Cargo.toml --target-dir target/protogen
cargo fmt --all
