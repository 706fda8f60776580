//! Reading a scenario file from disk: only regular files, at most [`MAX_FILE_BYTES`], and an
//! error that says what the path is when it cannot be read (missing, a dangling symlink, not
//! permitted, a FIFO or a device).
//!
//! The checks look at the path's metadata before opening it: opening a FIFO blocks until a
//! writer comes, and reading a device such as `/dev/zero` never ends.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::Path;

/// The largest scenario file read: 16 MiB, the parser's own budget for scalar text. Real
/// scenarios are a few kilobytes; the cap is checked before reading, so a huge or endless
/// file costs nothing.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The bytes of the scenario file at `path`, or why they cannot be read, in words (without
/// the path).
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
    regular(&metadata)?;
    let file = File::open(path).map_err(|e| unreadable(path, &e))?;
    // The path may have been replaced between the two looks; the open file is what is read.
    let metadata = file.metadata().map_err(|e| unreadable(path, &e))?;
    regular(&metadata)?;
    let mut bytes = Vec::new();
    // One byte past the cap tells a file that grew after the look from one that fits.
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(path, &e))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Why `path` cannot be looked at or read, given the error its metadata or a read gave: "no
/// such file" only when nothing is there, a dangling symlink named as one with its target,
/// a missing permission as such.
pub(crate) fn unreadable(path: &Path, error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => match std::fs::read_link(path) {
            Ok(target) => format!(
                "a dangling symlink: its target {} does not exist",
                target.display()
            ),
            Err(_) => "no such file or directory".to_owned(),
        },
        io::ErrorKind::PermissionDenied => format!("permission denied ({error})"),
        _ => format!("cannot read: {error}"),
    }
}

/// `Ok` for a regular file within [`MAX_FILE_BYTES`]; otherwise what the path is.
pub(crate) fn regular(metadata: &Metadata) -> Result<(), String> {
    if !metadata.is_file() {
        return Err(format!(
            "not a regular file ({}); scenario files are read only from regular files",
            kind(metadata)
        ));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(too_large(metadata.len()));
    }
    Ok(())
}

fn too_large(len: u64) -> String {
    format!(
        "the file is {len} bytes; scenario files are limited to {} bytes (16 MiB)",
        MAX_FILE_BYTES
    )
}

/// What a path that is not a regular file is.
pub(crate) fn kind(metadata: &Metadata) -> &'static str {
    if metadata.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        let t = metadata.file_type();
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A permission error said "cannot read" like any other; it is named for what it is. (The
    /// command-line test cannot make one when it runs as root.)
    #[test]
    fn a_permission_error_says_so() {
        let error = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(
            unreadable(Path::new("x.yaml"), &error),
            "permission denied (permission denied)"
        );
    }
}
