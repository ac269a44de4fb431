//! A [`Profile`] as pprof's `perftools.profiles.Profile` (profile.proto), gzipped as pprof files and
//! Pyroscope's `/ingest` want it.

use super::proto::perftools::profiles as pb;
use super::strings::Strings;
use super::{JAVA_MAPPING, LabelValue, Profile};
use prost::Message;
use std::collections::HashMap;
use std::io::Write;

/// The protobuf message, uncompressed.
pub fn to_message(p: &Profile) -> pb::Profile {
    let mut s = Strings::new();
    let mut out = pb::Profile {
        sample_type: p.sample_types.iter().map(|t| value_type(&mut s, &t.kind, &t.unit)).collect(),
        period_type: p.period_type.as_ref().map(|t| value_type(&mut s, &t.kind, &t.unit)),
        period: p.period,
        time_nanos: p.time_nanos as i64,
        duration_nanos: p.duration_nanos as i64,
        ..Default::default()
    };
    // Ids start at 1: 0 means "none" in profile.proto.
    out.mapping.push(pb::Mapping {
        id: 1,
        filename: s.id(JAVA_MAPPING) as i64,
        has_functions: true,
        has_filenames: true,
        has_line_numbers: true,
        ..Default::default()
    });
    let mut functions: HashMap<(&str, &str, &str), u64> = HashMap::new();
    let mut locations: HashMap<(u64, i64), u64> = HashMap::new();
    for sample in &p.samples {
        let mut location_id = Vec::with_capacity(sample.stack.len());
        for f in &sample.stack {
            let next = out.function.len() as u64 + 1;
            let fid = *functions.entry((&f.function, &f.system_name, &f.file)).or_insert_with(|| {
                out.function.push(pb::Function {
                    id: next,
                    name: s.id(&f.function) as i64,
                    system_name: s.id(&f.system_name) as i64,
                    filename: s.id(&f.file) as i64,
                    start_line: 0,
                });
                next
            });
            let next = out.location.len() as u64 + 1;
            let lid = *locations.entry((fid, f.line)).or_insert_with(|| {
                out.location.push(pb::Location {
                    id: next,
                    mapping_id: 1,
                    line: vec![pb::Line { function_id: fid, line: f.line, column: 0 }],
                    ..Default::default()
                });
                next
            });
            location_id.push(lid);
        }
        let label = sample
            .labels
            .iter()
            .map(|l| match &l.value {
                LabelValue::Str(v) => pb::Label { key: s.id(&l.key) as i64, str: s.id(v) as i64, ..Default::default() },
                LabelValue::Num(n) => pb::Label { key: s.id(&l.key) as i64, num: *n, ..Default::default() },
            })
            .collect();
        out.sample.push(pb::Sample { location_id, value: sample.values.clone(), label });
    }
    out.string_table = s.table;
    out
}

fn value_type(s: &mut Strings, kind: &str, unit: &str) -> pb::ValueType {
    pb::ValueType { r#type: s.id(kind) as i64, unit: s.id(unit) as i64 }
}

/// The encoded profile, uncompressed.
pub fn encode(p: &Profile) -> Vec<u8> {
    to_message(p).encode_to_vec()
}

/// The encoded profile, gzipped (a `.pb.gz` file, Pyroscope's `format=pprof` body).
pub fn encode_gzip(p: &Profile) -> Vec<u8> {
    let raw = encode(p);
    let mut gz = flate2::write::GzEncoder::new(Vec::with_capacity(raw.len() / 4), flate2::Compression::default());
    // Writing into a Vec cannot fail.
    let _ = gz.write_all(&raw);
    gz.finish().unwrap_or_default()
}
