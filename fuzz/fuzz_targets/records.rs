//! The record reader: header, top-level records, record bodies and heap-dump sub-records. Any input must
//! give records or a FormatError, never a panic or a huge allocation.
#![no_main]

use hprof_format::binary::{HeapRecords, Record, Records, parse_header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(h) = parse_header(data) else { return };
    for raw in Records::new(data, &h) {
        let Ok(raw) = raw else { break };
        if let Ok(Record::HeapDump { body, .. }) = Record::decode(&raw, h.id_size) {
            for sub in HeapRecords::new(body, raw.body_offset(), h.id_size) {
                if sub.is_err() {
                    break;
                }
            }
        }
    }
});
