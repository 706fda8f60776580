//! Finding a command's program before it runs: on `PATH` for a bare name, relative to the
//! working directory for a path, so that a missing or unusable program is named and
//! explained rather than reported as an OS error number.

use std::path::{Path, PathBuf};

/// Why a program cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unusable {
    /// A bare name found in no directory of `PATH`: a tool this machine does not have.
    NotOnPath(String),
    /// A path that names nothing, a directory, or a file that is not executable.
    Bad(String),
}

impl Unusable {
    /// The explanation, naming the program.
    pub(crate) fn why(&self) -> &str {
        match self {
            Unusable::NotOnPath(why) | Unusable::Bad(why) => why,
        }
    }
}

/// The file `program` names, or why it cannot run: a name with a `/` is a path (relative to
/// `cwd`), any other is looked up in `path` (a `PATH` value) as a shell would.
pub(crate) fn resolve(program: &str, cwd: &Path, path: Option<&str>) -> Result<PathBuf, Unusable> {
    if program.is_empty() {
        return Err(Unusable::Bad("the command names no program".to_owned()));
    }
    if program.contains('/') {
        let file = cwd.join(program);
        return match executable(&file) {
            Ok(()) => Ok(file),
            // The path as resolved, when the working directory changed it.
            Err(why) if file.as_path() != Path::new(program) => Err(Unusable::Bad(format!(
                "`{program}` ({}) {why}",
                file.display()
            ))),
            Err(why) => Err(Unusable::Bad(format!("`{program}` {why}"))),
        };
    }
    let dirs = path.unwrap_or_default();
    for dir in dirs.split(':').filter(|d| !d.is_empty()) {
        let file = Path::new(dir).join(program);
        if executable(&file).is_ok() {
            return Ok(file);
        }
    }
    Err(Unusable::NotOnPath(if dirs.is_empty() {
        format!("`{program}` is not on this machine: PATH is empty")
    } else {
        format!(
            "`{program}` is not on this machine: no executable of that name in the {} \
             directories of PATH",
            dirs.split(':').filter(|d| !d.is_empty()).count()
        )
    }))
}

/// Whether `file` is a regular file this process may execute, or what it is instead.
fn executable(file: &Path) -> Result<(), &'static str> {
    let meta = std::fs::metadata(file).map_err(|_| "does not exist")?;
    if meta.is_dir() {
        return Err("is a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        if meta.permissions().mode() & 0o111 == 0 {
            return Err("is not executable (no x permission bit)");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_name_is_looked_up_on_path_and_a_path_is_checked() {
        let sh = resolve("sh", Path::new("."), Some("/nonexistent:/bin:/usr/bin"));
        assert!(sh.is_ok_and(|file| file.ends_with("sh")));
        assert!(matches!(
            resolve("no-such-tool-here", Path::new("."), Some("/bin")),
            Err(Unusable::NotOnPath(_))
        ));
        assert!(matches!(
            resolve("./no/such/file", Path::new("/"), None),
            Err(Unusable::Bad(why)) if why.contains("does not exist")
        ));
        assert!(matches!(
            resolve("tmp", Path::new("/"), Some("/")),
            Err(Unusable::NotOnPath(_))
        ));
        assert!(matches!(
            resolve("./tmp", Path::new("/"), None),
            Err(Unusable::Bad(why)) if why.contains("is a directory")
        ));
    }
}
