//! The profile encoders: what prost's generated messages read back, the tables' zero entries, and one OTLP
//! profile per sample type over shared stacks.

use hprof_format::profiles::proto::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use hprof_format::profiles::proto::perftools::profiles as pprof_pb;
use hprof_format::profiles::{Frame, Label, Profile, Sample, ValueType, otlp, pprof};
use prost::Message;

fn frame(function: &str, line: i64) -> Frame {
    Frame { function: function.into(), system_name: format!("{function}()V"), file: "A.java".into(), line }
}

fn profile() -> Profile {
    let labels = vec![Label::str("thread.name", "main"), Label::num("thread.id", 7)];
    Profile {
        sample_types: vec![ValueType::new("alloc_objects", "count"), ValueType::new("alloc_space", "bytes")],
        period_type: Some(ValueType::new("space", "bytes")),
        period: 524288,
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 10_000_000_000,
        samples: vec![
            Sample { stack: vec![frame("A.leaf", 3), frame("A.main", 9)], values: vec![2, 64], labels: labels.clone() },
            Sample { stack: vec![frame("A.other", 5), frame("A.main", 9)], values: vec![0, 16], labels },
        ],
    }
}

#[test]
fn pprof_reads_back_with_ids_from_one_and_a_shared_string_table() {
    let raw = pprof::encode(&profile());
    let p = pprof_pb::Profile::decode(raw.as_slice()).unwrap();
    let s = |i: i64| p.string_table[i as usize].as_str();
    assert_eq!(s(0), "");
    assert_eq!(
        p.sample_type.iter().map(|t| (s(t.r#type), s(t.unit))).collect::<Vec<_>>(),
        [("alloc_objects", "count"), ("alloc_space", "bytes")]
    );
    assert_eq!((p.period, p.duration_nanos), (524288, 10_000_000_000));
    assert_eq!(p.sample.len(), 2);
    assert_eq!(p.sample[0].value, [2, 64]);
    // A.main at line 9 is one location, shared by both stacks; three functions in all.
    assert_eq!(p.sample[0].location_id[1], p.sample[1].location_id[1]);
    assert_eq!((p.location.len(), p.function.len()), (3, 3));
    let leaf = &p.location[p.sample[0].location_id[0] as usize - 1].line[0];
    assert_eq!(leaf.line, 3);
    assert_eq!(s(p.function[leaf.function_id as usize - 1].system_name), "A.leaf()V");
    // One mapping, the JVM's code, with names, files and lines; every location in it.
    assert_eq!(p.mapping.len(), 1);
    let m = &p.mapping[0];
    assert_eq!(
        (m.id, s(m.filename), m.has_functions, m.has_filenames, m.has_line_numbers),
        (1, "java", true, true, true)
    );
    assert!(p.location.iter().all(|l| l.mapping_id == 1));
    let labels: Vec<_> = p.sample[0].label.iter().map(|l| (s(l.key), s(l.str), l.num)).collect();
    assert_eq!(labels, [("thread.name", "main", 0), ("thread.id", "", 7)]);
    // Gzipped for files and Pyroscope.
    assert_eq!(&pprof::encode_gzip(&profile())[..2], &[0x1f, 0x8b]);
}

#[test]
fn otlp_has_one_profile_per_sample_type_over_one_dictionary() {
    let resource = [Label::str("service.name", "checkout")];
    let origin = otlp::Origin { resource: &resource, scope_name: "hprof-rs", scope_version: "0" };
    let raw = otlp::encode(&origin, &[profile()]);
    let req = ExportProfilesServiceRequest::decode(raw.as_slice()).unwrap();
    let d = req.dictionary.unwrap();
    // Index 0 of every table is the zero value.
    assert_eq!(d.string_table[0], "");
    assert_eq!(d.stack_table[0].location_indices.len(), 0);
    assert_eq!(d.function_table[0].name_strindex, 0);
    assert_eq!(d.attribute_table[0].key_strindex, 0);
    let rp = &req.resource_profiles[0];
    assert_eq!(rp.resource.as_ref().unwrap().attributes[0].key, "service.name");
    let profiles = &rp.scope_profiles[0].profiles;
    assert_eq!(profiles.len(), 2);
    let s = |i: i32| d.string_table[i as usize].as_str();
    assert_eq!(s(profiles[1].sample_type.unwrap().type_strindex), "alloc_space");
    // alloc_objects: the second stack allocated no objects, so it is left out; alloc_space has both.
    assert_eq!(profiles[0].samples.len(), 1);
    assert_eq!(profiles[1].samples.iter().map(|x| x.values[0]).collect::<Vec<_>>(), [64, 16]);
    assert_eq!(profiles[0].samples[0].stack_index, profiles[1].samples[0].stack_index);
    let stack = &d.stack_table[profiles[1].samples[1].stack_index as usize];
    let leaf = &d.location_table[stack.location_indices[0] as usize].lines[0];
    assert_eq!((s(d.function_table[leaf.function_index as usize].name_strindex), leaf.line), ("A.other", 5));
    // The zero mapping, then the JVM's code, which every location is in.
    assert_eq!(d.mapping_table.len(), 2);
    assert_eq!((d.mapping_table[0].filename_strindex, s(d.mapping_table[1].filename_strindex)), (0, "java"));
    assert!(d.location_table[1..].iter().all(|l| l.mapping_index == 1));
    let attrs: Vec<_> = profiles[0].samples[0]
        .attribute_indices
        .iter()
        .map(|&i| s(d.attribute_table[i as usize].key_strindex))
        .collect();
    assert_eq!(attrs, ["thread.name", "thread.id"]);
}
