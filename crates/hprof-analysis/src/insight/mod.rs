//! Heap analyses beyond retained sizes, as data for the front end and the web view:
//!
//! - [`waste`]: duplicate strings, empty and underused collections, boxed primitives in collections,
//!   zero-filled and duplicate primitive arrays.
//! - [`loaders`]: class loaders, their classes and retained bytes, classes defined twice, closed loaders
//!   that are still held and what holds them.
//! - [`threads`]: each thread's stack with the objects its frames hold, retained per frame and thread.
//! - [`growth`]: objects in one dump and not in an earlier one, grouped by what holds them.
//! - [`heaps`]: Android's heaps (zygote, app, image) and what each holds.
//!
//! Each needs the graph built with offsets (it reads field values from the records), [`fields`] reads them.

pub mod fields;
pub mod growth;
pub mod heaps;
pub mod loaders;
pub mod root_paths;
pub mod roots_by_frame;
pub mod threads;
pub mod waste;

pub use fields::ObjectReader;
