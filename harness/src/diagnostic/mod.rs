//! Scenario errors as a reader would rather see them (feature `diagnostics`): the source
//! lines around each error, a label under the field, the field's path, what was expected and
//! the did-you-mean, drawn by miette's graphical report.
//!
//! The one-line form (`file:line:col path: message`, [`ScenarioError`]'s `Display`) stays what
//! goldens, `--format json` and scripts read; this is for people. It is deterministic: the
//! width is fixed, colour only when asked, and what the file holds is shown clipped and with
//! invisible characters escaped, as in the one-line form.
//!
//! ```
//! use retrylab::diagnostic::{Style, render};
//! use retrylab::scenario::Scenario;
//!
//! let yaml = "version: 1\nnmae: x\n";
//! let errors = Scenario::from_yaml_str(yaml, "x.yaml").unwrap_err();
//! let text = render(&errors, yaml, &Style::plain());
//! assert!(text.contains("[x.yaml:2:1]"), "{text}");
//! assert!(text.contains(" 2 │ nmae: x"), "{text}");
//! assert!(text.contains("help: did you mean `name`?"), "{text}");
//! ```

mod excerpt;
mod failure;

use std::fmt;

use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, Severity};

use crate::scenario::{ScenarioError, ScenarioErrors, visible};
use excerpt::Excerpt;
pub use failure::offending_attempts;

/// How diagnostics are drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Style {
    /// Columns the report is wrapped to.
    pub width: usize,
    /// ANSI colours (for a terminal that has not asked for none with `NO_COLOR`).
    pub colour: bool,
}

impl Style {
    /// 100 columns, no colour: the same bytes on every machine.
    pub const fn plain() -> Style {
        Style {
            width: 100,
            colour: false,
        }
    }

    /// [`Style::plain`], with colour when `colour` is true.
    pub const fn coloured(colour: bool) -> Style {
        Style { width: 100, colour }
    }
}

impl Default for Style {
    fn default() -> Self {
        Style::plain()
    }
}

/// Every error of `errors` drawn with the lines of `source` (the text of the file they are
/// about) around it, one after the other. An error without a position, or with one past the
/// end of `source`, is drawn without a snippet.
///
/// ```
/// use retrylab::diagnostic::{Style, render, source_of};
/// use retrylab::scenario::Scenario;
///
/// let dir = std::env::temp_dir().join(format!("retrylab-render-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("typo.yaml");
/// std::fs::write(
///     &path,
///     "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
///      operation: { endpoint: api }\nclient: { exponential: { intial: 100ms } }\n",
/// )
/// .unwrap();
/// let errors = Scenario::load(&path).unwrap_err();
/// let drawn = render(&errors, &source_of(&path), &Style::plain());
/// // The line, the field under a mark, and the next thing to try.
/// assert!(drawn.contains("intial: 100ms"), "{drawn}");
/// assert!(drawn.contains("did you mean `initial`?"), "{drawn}");
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn render(errors: &ScenarioErrors, source: &str, style: &Style) -> String {
    render_as(errors, source, style, Severity::Error)
}

/// The text of the scenario file at `path`, for [`render`]'s snippets: at most
/// [`MAX_FILE_BYTES`](crate::internals::MAX_FILE_BYTES) bytes (what loading reads), invalid
/// UTF-8 replaced. Empty when it cannot be read: the errors are then drawn with their
/// positions but without snippets, and still all said ([`render`] shows it in use).
///
/// ```
/// let missing = std::path::Path::new("no/such/scenario.yaml");
/// assert_eq!(retrylab::diagnostic::source_of(missing), "");
/// ```
pub fn source_of(path: &std::path::Path) -> String {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    let limit = crate::internals::MAX_FILE_BYTES;
    let read = std::fs::File::open(path).and_then(|f| f.take(limit).read_to_end(&mut bytes));
    match read {
        Ok(_) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    }
}

/// [`render`] for warnings (`Scenario::warnings`): the same drawing, marked as warnings.
///
/// ```
/// use retrylab::diagnostic::{Style, render_warnings};
/// use retrylab::scenario::Scenario;
///
/// // An expectation no run of this client can meet: it stops after 2 attempts.
/// let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 503 } ] } }\n\
///             operation: { endpoint: api }\n\
///             client: { exponential: { initial: 100ms, max_attempts: 2 } }\n\
///             expect: { attempts: 5 }\n";
/// let scenario = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
/// let warnings = scenario.warnings();
/// assert!(!warnings.is_empty());
/// let text = render_warnings(&warnings, yaml, &Style::plain());
/// assert!(text.contains("[x.yaml:"), "{text}");
/// ```
pub fn render_warnings(warnings: &[ScenarioError], source: &str, style: &Style) -> String {
    let warnings = ScenarioErrors(warnings.to_vec());
    render_as(&warnings, source, style, Severity::Warning)
}

fn render_as(errors: &ScenarioErrors, source: &str, style: &Style, severity: Severity) -> String {
    let theme = if style.colour {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(style.width)
        .with_context_lines(1)
        .without_primary_span_start()
        .with_links(false);
    let lines = excerpt::lines(source);
    let mut out = String::new();
    for (i, error) in errors.iter().enumerate() {
        // A blank line between two errors: each drawing is several lines.
        if i > 0 {
            out.push('\n');
        }
        let shown = Shown::new(error, &lines, severity);
        if handler.render_report(&mut out, &shown).is_err() {
            // Drawing failed (miette found the span unreadable): the error is still said,
            // in its one-line form, rather than lost.
            out.push_str(&error.to_string());
            out.push('\n');
        }
    }
    out
}

/// One error as miette draws it.
#[derive(Debug)]
struct Shown<'a> {
    error: &'a ScenarioError,
    excerpt: Option<Excerpt>,
    severity: Severity,
}

impl<'a> Shown<'a> {
    fn new(error: &'a ScenarioError, lines: &[&str], severity: Severity) -> Shown<'a> {
        let name = format!("{}:{}:{}", visible(&error.file), error.line, error.column);
        Shown {
            excerpt: Excerpt::around(name, lines, error.line, error.column),
            error,
            severity,
        }
    }
}

impl fmt::Display for Shown<'_> {
    /// The heading: the field's path and what is wrong; the file too when there is no
    /// snippet to name it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.error;
        if self.excerpt.is_none() {
            f.write_str(&visible(&e.file))?;
            if e.line > 0 {
                write!(f, ":{}:{}", e.line, e.column)?;
            }
            f.write_str(" ")?;
        }
        if !e.path.is_empty() {
            write!(f, "{}: ", visible(&e.path))?;
        }
        f.write_str(&visible(&e.message))
    }
}

impl std::error::Error for Shown<'_> {}

impl Diagnostic for Shown<'_> {
    fn severity(&self) -> Option<Severity> {
        Some(self.severity)
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let suggestion = self.error.suggestion.as_ref()?;
        Some(Box::new(format!("did you mean `{}`?", visible(suggestion))))
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.excerpt.as_ref().map(|e| e as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let excerpt = self.excerpt.as_ref()?;
        let e = self.error;
        let label = match (&e.expected, e.path.is_empty()) {
            (Some(expected), _) => format!("expected {}", visible(expected)),
            (None, false) => format!("in `{}`", visible(&e.path)),
            (None, true) => "here".to_owned(),
        };
        Some(Box::new(std::iter::once(
            LabeledSpan::new_primary_with_span(Some(label), excerpt.span),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Location, Scenario};

    #[test]
    fn an_error_is_drawn_under_its_field() {
        let yaml = "version: 1\nname: x\nseed: many\n";
        let error = ScenarioError::new("f.yaml", Some(Location::new(3, 7)), "seed", "not a seed")
            .with_expected("a whole number")
            .with_suggestion(Some("7".into()));
        let text = render(&error.into(), yaml, &Style::plain());
        assert_eq!(
            text,
            "  × seed: not a seed\n   ╭─[f.yaml:3:7]\n 2 │ name: x\n 3 │ seed: many\n   ·       \
             ──┬─\n   ·         ╰── expected a whole number\n   ╰────\n  help: did you mean `7`?\n"
        );
    }

    #[test]
    fn an_unlocated_error_is_one_heading() {
        let error = ScenarioError::new("<code>", None, "seed", "bad");
        let text = render(&error.into(), "", &Style::plain());
        assert_eq!(text, "  × <code> seed: bad\n");
    }

    #[test]
    fn colour_only_when_asked() {
        let yaml = "version: 1\nnmae: x\n";
        let errors = Scenario::from_yaml_str(yaml, "x.yaml").unwrap_err();
        assert!(!render(&errors, yaml, &Style::plain()).contains('\u{1b}'));
        assert!(render(&errors, yaml, &Style::coloured(true)).contains('\u{1b}'));
    }
}
