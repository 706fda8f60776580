//! Finding scenario files: every `*.yaml` / `*.yml` file under a folder, in the same order
//! on every machine, and what the search passed over and why. Re-exported by
//! `retrylab::suite`, whose tests are one per file found here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::file;

/// One scenario file found under a library directory.
#[derive(Debug, Clone)]
pub struct ScenarioFile {
    /// The path to read.
    pub path: PathBuf,
    /// The name used in errors and tests: the directory as given, then the path below it
    /// (`scenarios/http/429-retry-after.yaml`).
    pub display: String,
    /// The test name: `http/429-retry-after`.
    pub test_name: String,
}

/// Every `*.yaml` / `*.yml` file under `dir`, sorted by path (the order is the same on every
/// machine). What the search passed over is dropped; [`scan`] says what it was.
///
/// ```
/// let files = retrylab::suite::scenario_files("../scenarios".as_ref()).unwrap();
/// let http = files.iter().find(|f| f.test_name == "http/429-retry-after").unwrap();
/// assert_eq!(http.display, "scenarios/http/429-retry-after.yaml");
/// ```
pub fn scenario_files(dir: &Path) -> std::io::Result<Vec<ScenarioFile>> {
    scan(dir).map(|scan| scan.files)
}

/// What [`scan`] found under a folder.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The scenario files, sorted by test name.
    pub files: Vec<ScenarioFile>,
    /// What the search passed over, and why, in the order met.
    pub skipped: Vec<Skipped>,
}

/// An entry [`scan`] passed over.
#[derive(Debug, Clone)]
pub struct Skipped {
    /// The entry, as reached from the folder searched.
    pub path: PathBuf,
    /// Why: a folder already searched (a symlink cycle), a `*.yaml` entry that is not a
    /// regular file (a FIFO, a device), a dangling symlink, a missing permission.
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: skipped: {}", self.path.display(), self.why)
    }
}

/// Every `*.yaml` / `*.yml` file under `dir`, like [`scenario_files`], and what the search
/// passed over.
///
/// The search follows symlinks to folders, but enters each folder (by its canonical path)
/// once, so a link back to a parent ends; it lists only regular files, and never opens an
/// entry (a FIFO would block, a device such as `/dev/zero` never ends). The error is for
/// `dir` itself only: a subfolder that cannot be read is skipped.
///
/// ```
/// let scan = retrylab::suite::scan("../scenarios".as_ref()).unwrap();
/// assert!(scan.files.len() > 10);
/// assert!(scan.skipped.is_empty(), "{:?}", scan.skipped);
/// ```
pub fn scan(dir: &Path) -> std::io::Result<Scan> {
    let mut walk = Walk {
        root: dir,
        visited: BTreeMap::new(),
        scan: Scan::default(),
    };
    walk.visited
        .insert(std::fs::canonicalize(dir)?, dir.to_path_buf());
    let entries = entries(dir)?;
    walk.collect(entries);
    walk.scan
        .files
        .sort_by(|a, b| a.test_name.cmp(&b.test_name));
    Ok(walk.scan)
}

/// The entries of `dir`, sorted.
fn entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut entries = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<Vec<_>>>()?;
    entries.sort();
    Ok(entries)
}

/// A search in progress: the folder searched, each folder entered (canonical path, then the
/// path it was first reached by), and what was found.
struct Walk<'a> {
    root: &'a Path,
    visited: BTreeMap<PathBuf, PathBuf>,
    scan: Scan,
}

impl Walk<'_> {
    fn skip(&mut self, path: PathBuf, why: String) {
        self.scan.skipped.push(Skipped { path, why });
    }

    fn collect(&mut self, entries: Vec<PathBuf>) {
        for path in entries {
            let is_yaml = matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            );
            // `metadata` follows symlinks without opening anything.
            let metadata = match std::fs::metadata(&path) {
                Ok(metadata) => metadata,
                Err(error) => {
                    let why = file::unreadable(&path, &error);
                    self.skip(path, why);
                    continue;
                }
            };
            if metadata.is_dir() {
                self.enter(path);
            } else if is_yaml {
                match file::regular(&metadata) {
                    Ok(()) => self.found(path),
                    Err(why) => self.skip(path, why),
                }
            }
        }
    }

    fn enter(&mut self, path: PathBuf) {
        let canonical = match std::fs::canonicalize(&path) {
            Ok(canonical) => canonical,
            Err(error) => {
                let why = file::unreadable(&path, &error);
                return self.skip(path, why);
            }
        };
        if let Some(first) = self.visited.get(&canonical) {
            let why = format!(
                "the folder {} was already searched as {} (a symlink cycle or a second link)",
                canonical.display(),
                first.display()
            );
            return self.skip(path, why);
        }
        self.visited.insert(canonical, path.clone());
        match entries(&path) {
            Ok(entries) => self.collect(entries),
            Err(error) => {
                let why = file::unreadable(&path, &error);
                self.skip(path, why);
            }
        }
    }

    fn found(&mut self, path: PathBuf) {
        let root = self.root;
        let relative = path.strip_prefix(root).unwrap_or(&path);
        let relative_text = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let root_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| ".".to_owned());
        let test_name = relative_text
            .trim_end_matches(".yaml")
            .trim_end_matches(".yml")
            .to_owned();
        self.scan.files.push(ScenarioFile {
            display: format!("{root_name}/{relative_text}"),
            path,
            test_name,
        });
    }
}
