//! The heap dump's sub-records, read in parallel. Segments are cut into chunks of a few megabytes at
//! sub-record boundaries (a 500 MB single-segment dump still spreads over every core), and each chunk is
//! parsed on its own. Pages of the mapping are released once a chunk is done, so the resident set stays
//! near what the results need, not the file's size.
//!
//! - [`chunks`](mod@chunks): where the heap dump is, cut into chunks; [`record_counts`]: sub-records by kind.
//! - [`class_table`]: classes, their field blocks and sizes; [`layout_choice`]: which layout sizes them.
//! - [`histogram`](mod@histogram): the class histogram in one streaming pass.
//! - The object graph: [`object_ids`] (ids ↔ nodes, `id_bitmap` for dense heaps), [`indexing`] (first pass), [`references`] (what
//!   each record references), `object_pass` (second pass: classes, sizes, references placed from
//!   per-chunk buffers), [`build`] (the passes put together), [`graph`] (the result), [`roots`],
//!   [`edge_labels`] (which field holds a reference).

pub mod build;
pub mod chunks;
pub mod class_table;
pub mod edge_labels;
pub mod graph;
pub mod histogram;
mod id_bitmap;
pub mod indexing;
pub mod layout_choice;
pub mod object_ids;
mod object_pass;
mod primitives;
pub mod record_counts;
pub mod references;
pub mod roots;

pub use chunks::{Chunk, chunks};
pub use class_table::{ClassInfo, ClassTable, NO_CLASS};
pub use graph::HeapGraph;
pub use histogram::{HistoRow, Histogram, histogram, histogram_as};
pub(crate) use id_bitmap::Block as IdBlock;
pub use object_ids::ObjectIds;
pub use record_counts::SubRecordCounts;
pub use roots::{Root, root_kind_name};
