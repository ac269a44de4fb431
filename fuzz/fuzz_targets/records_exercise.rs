// The body of the `records` fuzz target, shared with crates/hprof-format/tests/fuzz_replay.rs (which replays
// fuzz/corpus/records on stable in every `make test`) through `include!`. Returns how many heap
// sub-records were read without error, so that the replay can check that its seeds reach the heap dump.
fn exercise_records(data: &[u8]) -> usize {
    use hprof_format::binary::{HeapRecords, Record, Records, parse_header};
    let Ok(h) = parse_header(data) else { return 0 };
    let mut subs = 0;
    for raw in Records::new(data, &h) {
        let Ok(raw) = raw else { break };
        if let Ok(Record::HeapDump { body, .. }) = Record::decode(&raw, h.id_size) {
            for sub in HeapRecords::new(body, raw.body_offset(), h.id_size) {
                if sub.is_err() {
                    break;
                }
                subs += 1;
            }
        }
    }
    subs
}
