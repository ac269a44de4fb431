//! Where a dump's records go: a [`spool`] file, written by a thread of its own while the walk goes on and
//! copied into the profile after it, or, for a binary dump into a file, the profile itself lent for the
//! time of the dump ([`in_place`]).

pub(super) mod in_place;
pub(super) mod spool;
