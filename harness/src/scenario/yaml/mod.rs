//! Text in, located errors out: reading a scenario file's YAML, knowing no key of the format.
//!
//! The floor under every other of the scenario wing. It checks what the YAML parser would
//! accept silently or refuse for the wrong reason ([`syntax`], [`brackets`]), reads text as a
//! typed value with its first error located and reworded ([`parse`], [`reword`],
//! [`parser_messages`]), records where every node came from ([`locations`]), reads documents
//! written inside a string ([`embedded`]), and finds and reads files ([`file`], [`walk`]). What
//! it needs to know of the format it reads it asks through [`Format`].

pub(crate) mod brackets;
pub(crate) mod embedded;
pub(crate) mod error;
pub(crate) mod file;
pub(crate) mod format;
pub(crate) mod locations;
pub(crate) mod parse;
pub(crate) mod parser_messages;
pub(crate) mod reword;
pub(crate) mod suggest;
pub(crate) mod syntax;
pub(crate) mod walk;
