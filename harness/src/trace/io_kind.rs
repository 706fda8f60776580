//! The kind of an I/O error an attempt ended in.

use std::io;

use serde::Serialize;

/// An `io::ErrorKind`, stored by kind (never by its `Display` text, which is not stable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct IoKind(#[serde(serialize_with = "serialize_io_kind")] pub io::ErrorKind);

fn serialize_io_kind<S: serde::Serializer>(kind: &io::ErrorKind, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(&format_args!("{kind:?}"))
}
