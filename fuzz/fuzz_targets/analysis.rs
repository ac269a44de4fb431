//! The whole analysis on arbitrary bytes: scan, histogram, object graph, dominators, paths.
#![no_main]

use libfuzzer_sys::fuzz_target;

include!("analysis_exercise.rs");

fuzz_target!(|data: &[u8]| {
    exercise_analysis(data);
});
