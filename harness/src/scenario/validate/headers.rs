//! Header lists, wherever they are written: names are HTTP tokens, values have no control
//! characters, and a map does not repeat a name. The rules are those of the conversion the run
//! uses ([`Scenario::headers_at`](crate::scenario::Scenario)), called here.

use super::Validator;
use crate::scenario::headers::HeadersSpec;

impl Validator<'_> {
    pub(super) fn headers(&mut self, path: &str, h: &HeadersSpec) {
        let (_, errors) = self.s.headers_at(path, h);
        self.errors.extend(errors);
    }
}
