//! The record reader: header, top-level records, record bodies and heap-dump sub-records. Any input must
//! give records or a FormatError, never a panic or a huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("records_exercise.rs");

fuzz_target!(|data: &[u8]| {
    exercise_records(data);
});
