//! `retrylab new <name> --from <template>`: a commented starter scenario to edit.
//!
//! The templates are scenario files of their own under `harness/templates/`, each checked and
//! run by the CLI's tests; `new` writes one with its `name:` set to the file's.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;

/// The starters `--from` takes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Template {
    /// A burst of 503s, then success, on a known backoff schedule.
    #[value(name = "5xx-burst")]
    FiveXxBurst,
    /// A 429 with Retry-After, which the client must wait out.
    RetryAfter,
    /// A slow commit the client times out on, made safe by an idempotency key.
    DuplicateOnTimeout,
    /// A message broker that throttles and fails sends, and a RocketMQ-style producer.
    Broker,
    /// Twenty clients against an outage, judged on retry waves and amplification.
    Fleet,
    /// Endpoints on real sockets, for `retrylab serve` and clients in any language.
    Real,
}

impl Template {
    /// The template's text, as shipped.
    fn text(self) -> &'static str {
        match self {
            Template::FiveXxBurst => include_str!("../../../templates/5xx-burst.yaml"),
            Template::RetryAfter => include_str!("../../../templates/retry-after.yaml"),
            Template::DuplicateOnTimeout => {
                include_str!("../../../templates/duplicate-on-timeout.yaml")
            }
            Template::Broker => include_str!("../../../templates/broker.yaml"),
            Template::Fleet => include_str!("../../../templates/fleet.yaml"),
            Template::Real => include_str!("../../../templates/real.yaml"),
        }
    }
}

/// Writes `<name>.yaml` (or `name` itself when it ends in `.yaml` or `.yml`) from
/// `template`. Exit status 2, writing nothing, when the file exists or cannot be created.
pub(crate) fn new(name: &Path, template: Template) -> ExitCode {
    let path = file_path(name);
    let Some(stem) = path
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
    else {
        eprintln!("error: {}: not a file name to write", name.display());
        return ExitCode::from(2);
    };
    // The stem becomes the scenario's `name`, which `check` refuses blank or with a control
    // character: `new` promises a file that passes.
    if stem.trim().is_empty() || stem.chars().any(char::is_control) {
        eprintln!(
            "error: `{}`: a scenario needs a name with something to read in it, and no \
             control characters; try `retrylab new orders-429`",
            stem.escape_debug()
        );
        return ExitCode::from(2);
    }
    let Some(text) = named(template.text(), stem) else {
        // Each template has a top-level `name:` line (a test runs `new` on every one).
        eprintln!("error: the template has no top-level `name:` line to set");
        return ExitCode::FAILURE;
    };
    // `create_new`: an existing file (or a link to one) is never overwritten, and nothing can
    // slip in between a check and the write.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    let mut file = match file {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            eprintln!(
                "error: {}: already exists; not overwritten (choose another name, or remove it)",
                path.display()
            );
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {}: cannot create: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
        eprintln!("error: {}: cannot write: {e}", path.display());
        return ExitCode::FAILURE;
    }
    // The file is written: a reader that went away changes nothing.
    let _ = writeln!(
        std::io::stdout().lock(),
        "wrote {}; check it with `retrylab check {}`",
        path.display(),
        path.display()
    );
    ExitCode::SUCCESS
}

/// `name` as a file: `.yaml` added unless it ends in `.yaml` or `.yml`.
fn file_path(name: &Path) -> PathBuf {
    match name.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => name.to_path_buf(),
        _ => {
            let mut os = name.as_os_str().to_owned();
            os.push(".yaml");
            PathBuf::from(os)
        }
    }
}

/// Plain words YAML reads as something other than text (null, a boolean in YAML 1.1 or
/// 1.2, a special float), compared ignoring case: a name spelled like one is quoted.
const NOT_TEXT: &[&str] = &[
    "null", "true", "false", "yes", "no", "on", "off", "y", "n", "nan", "inf",
];

/// `text` with its top-level `name:` set to `name`: plain when YAML reads it back as the
/// same text, else double-quoted (a JSON string is a YAML double-quoted scalar).
fn named(text: &str, name: &str) -> Option<String> {
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ' '))
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && !name.ends_with(' ')
        && !NOT_TEXT.iter().any(|word| word.eq_ignore_ascii_case(name));
    let value = if plain {
        name.to_owned()
    } else {
        serde_json::Value::String(name.to_owned()).to_string()
    };
    let mut out = String::with_capacity(text.len() + name.len());
    let mut found = false;
    for line in text.split_inclusive('\n') {
        if !found && line.starts_with("name: ") {
            found = true;
            out.push_str(&format!("name: {value}\n"));
        } else {
            out.push_str(line);
        }
    }
    found.then_some(out)
}
