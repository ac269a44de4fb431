//! [`Profile`]s as OpenTelemetry's `ExportProfilesServiceRequest` (profiles v1development, as the
//! OpenTelemetry Collector's OTLP receiver takes it on `POST /v1development/profiles`).
//!
//! OTLP gives each profile one sample type, so a profile with several (alloc_objects and alloc_space)
//! becomes several OTLP profiles over the same stacks. All of them share one dictionary, whose tables
//! start with a zero entry as the schema requires.

use super::proto::opentelemetry::proto::collector::profiles::v1development::ExportProfilesServiceRequest;
use super::proto::opentelemetry::proto::common::v1 as common;
use super::proto::opentelemetry::proto::profiles::v1development as pb;
use super::proto::opentelemetry::proto::resource::v1::Resource;
use super::strings::Strings;
use super::{Frame, JAVA_MAPPING, Label, LabelValue, Profile};
use prost::Message;
use std::collections::HashMap;

/// Who sent the profiles: the resource's attributes (service.name, host.name, …) and the scope.
pub struct Origin<'a> {
    pub resource: &'a [Label],
    pub scope_name: &'a str,
    pub scope_version: &'a str,
}

/// The mapping of every location: index 1, after the zero entry.
const JAVA_LOCATIONS: i32 = 1;

#[derive(Default)]
struct Dictionary {
    strings: Strings,
    functions: HashMap<(String, String, String), i32>,
    locations: HashMap<(i32, i64), i32>,
    stacks: HashMap<Vec<i32>, i32>,
    attributes: HashMap<Label, i32>,
    out: pb::ProfilesDictionary,
}

impl Dictionary {
    fn new() -> Dictionary {
        let mut d = Dictionary { strings: Strings::new(), ..Default::default() };
        // Index 0 of every table is the zero value.
        d.out.mapping_table.push(pb::Mapping::default());
        d.out.location_table.push(pb::Location::default());
        d.out.function_table.push(pb::Function::default());
        d.out.link_table.push(pb::Link::default());
        d.out.attribute_table.push(pb::KeyValueAndUnit::default());
        d.out.stack_table.push(pb::Stack::default());
        // Every location's mapping (see [`JAVA_MAPPING`]).
        let filename_strindex = d.string(JAVA_MAPPING);
        d.out.mapping_table.push(pb::Mapping { filename_strindex, ..Default::default() });
        d
    }

    fn string(&mut self, s: &str) -> i32 {
        self.strings.id(s) as i32
    }

    fn function(&mut self, f: &Frame) -> i32 {
        let key = (f.function.clone(), f.system_name.clone(), f.file.clone());
        if let Some(&i) = self.functions.get(&key) {
            return i;
        }
        let function = pb::Function {
            name_strindex: self.string(&f.function),
            system_name_strindex: self.string(&f.system_name),
            filename_strindex: self.string(&f.file),
            start_line: 0,
        };
        self.out.function_table.push(function);
        let i = self.out.function_table.len() as i32 - 1;
        self.functions.insert(key, i);
        i
    }

    fn location(&mut self, f: &Frame) -> i32 {
        let function_index = self.function(f);
        *self.locations.entry((function_index, f.line)).or_insert_with(|| {
            self.out.location_table.push(pb::Location {
                mapping_index: JAVA_LOCATIONS,
                lines: vec![pb::Line { function_index, line: f.line, column: 0 }],
                ..Default::default()
            });
            self.out.location_table.len() as i32 - 1
        })
    }

    fn stack(&mut self, frames: &[Frame]) -> i32 {
        let location_indices: Vec<i32> = frames.iter().map(|f| self.location(f)).collect();
        if let Some(&i) = self.stacks.get(&location_indices) {
            return i;
        }
        self.out.stack_table.push(pb::Stack { location_indices: location_indices.clone() });
        let i = self.out.stack_table.len() as i32 - 1;
        self.stacks.insert(location_indices, i);
        i
    }

    fn attribute(&mut self, l: &Label) -> i32 {
        if let Some(&i) = self.attributes.get(l) {
            return i;
        }
        let key_strindex = self.string(&l.key);
        self.out.attribute_table.push(pb::KeyValueAndUnit {
            key_strindex,
            value: Some(any(&l.value)),
            unit_strindex: 0,
        });
        let i = self.out.attribute_table.len() as i32 - 1;
        self.attributes.insert(l.clone(), i);
        i
    }

    fn value_type(&mut self, kind: &str, unit: &str) -> pb::ValueType {
        pb::ValueType { type_strindex: self.string(kind), unit_strindex: self.string(unit) }
    }
}

fn any(v: &LabelValue) -> common::AnyValue {
    common::AnyValue {
        value: Some(match v {
            LabelValue::Str(s) => common::any_value::Value::StringValue(s.clone()),
            LabelValue::Num(n) => common::any_value::Value::IntValue(*n),
        }),
    }
}

/// The request for these profiles, one resource and one scope.
pub fn request(origin: &Origin, profiles: &[Profile]) -> ExportProfilesServiceRequest {
    let mut d = Dictionary::new();
    let mut out = Vec::new();
    for p in profiles {
        // Stacks and attributes once per sample, shared by the profile of each sample type.
        let shared: Vec<(i32, Vec<i32>)> =
            p.samples.iter().map(|s| (d.stack(&s.stack), s.labels.iter().map(|l| d.attribute(l)).collect())).collect();
        for (i, t) in p.sample_types.iter().enumerate() {
            let samples = p
                .samples
                .iter()
                .zip(&shared)
                .filter(|(s, _)| s.values.get(i).is_some_and(|&v| v != 0))
                .map(|(s, (stack_index, attrs))| pb::Sample {
                    stack_index: *stack_index,
                    attribute_indices: attrs.clone(),
                    link_index: 0,
                    values: vec![s.values[i]],
                    timestamps_unix_nano: Vec::new(),
                })
                .collect();
            out.push(pb::Profile {
                sample_type: Some(d.value_type(&t.kind, &t.unit)),
                samples,
                time_unix_nano: p.time_nanos,
                duration_nano: p.duration_nanos,
                period_type: p.period_type.as_ref().map(|t| d.value_type(&t.kind, &t.unit)),
                period: p.period,
                ..Default::default()
            });
        }
    }
    let resource = Resource {
        attributes: origin
            .resource
            .iter()
            .map(|l| common::KeyValue { key: l.key.clone(), value: Some(any(&l.value)), key_strindex: 0 })
            .collect(),
        ..Default::default()
    };
    let scope = common::InstrumentationScope {
        name: origin.scope_name.to_owned(),
        version: origin.scope_version.to_owned(),
        ..Default::default()
    };
    d.out.string_table = std::mem::take(&mut d.strings.table);
    ExportProfilesServiceRequest {
        resource_profiles: vec![pb::ResourceProfiles {
            resource: Some(resource),
            scope_profiles: vec![pb::ScopeProfiles { scope: Some(scope), profiles: out, schema_url: String::new() }],
            schema_url: String::new(),
        }],
        dictionary: Some(d.out),
    }
}

/// The request's protobuf bytes, the body of `POST /v1development/profiles`.
pub fn encode(origin: &Origin, profiles: &[Profile]) -> Vec<u8> {
    request(origin, profiles).encode_to_vec()
}
