//! `net=host:port`: the profile streams to a front end (see [`crate::output::Sink`]), and the front end
//! sends commands back on the same connection; a Java daemon thread reads and carries them out.

mod listener;

pub use listener::start;
