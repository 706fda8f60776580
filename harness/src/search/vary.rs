//! The cases of a `search:` block: the file's scenario with each `vary:` path set to a value
//! drawn from its `VarySpec`, read back as a file is.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::{BoxedStrategy, Just, Strategy};
use proptest::sample::select;
use serde_json::Value;

use crate::scenario::{Expectations, Scenario, VarySpec};

use super::strategy::Drawn;

/// The cases of `base`'s `search:` block: each `vary:` path (in the map's order) set to a
/// drawn value, the invariants as `expect:`, and the result loaded with
/// [`Scenario::from_yaml_str`], so a case passes the validation a file does or ends the
/// search with its errors.
pub(crate) fn scenarios(
    base: &Scenario,
    vary: &BTreeMap<String, VarySpec>,
    expect: Expectations,
) -> BoxedStrategy<Drawn> {
    let mut plain = base.clone();
    plain.search = None;
    plain.expect = expect;
    plain.must_fail.clear();
    plain.status = None;
    plain.snapshot = false;
    plain.seeds = None;
    let file = base.source.file.clone();
    let template = Arc::new(serde_json::to_value(&plain).map_err(|e| e.to_string()));
    let paths: Vec<String> = vary.keys().cloned().collect();
    let values: Vec<BoxedStrategy<Value>> = vary.values().map(value).collect();
    values
        .prop_map(move |values| {
            let mut doc = template.as_ref().clone()?;
            for (path, value) in paths.iter().zip(values) {
                set(&mut doc, path, value)?;
            }
            let yaml = serde_saphyr::to_string(&doc).map_err(|e| e.to_string())?;
            Scenario::from_yaml_str(&yaml, &file).map_err(|e| e.to_string())
        })
        .boxed()
}

/// The values one `VarySpec` draws, shrinking towards its first value or its minimum.
fn value(spec: &VarySpec) -> BoxedStrategy<Value> {
    match spec {
        VarySpec::Durations(range) => (range.min.0..=range.max.0)
            .prop_map(|ms| Value::String(format!("{ms}ms")))
            .boxed(),
        VarySpec::Integers([a, b]) => (*a..=*b).prop_map(Value::from).boxed(),
        VarySpec::Numbers([a, b]) if a < b => (*a..=*b).prop_map(Value::from).boxed(),
        VarySpec::Numbers([a, _]) => Just(Value::from(*a)).boxed(),
        VarySpec::OneOf(values) => select(values.clone()).boxed(),
    }
}

/// Sets the field at `path` (keys and list indices joined by `.`) of `doc` to `value`,
/// making the maps on the way that a default left out.
fn set(doc: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let mut at = doc;
    let segments: Vec<&str> = path.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        at = match at {
            Value::Object(map) => map.entry(segment.to_string()).or_insert_with(|| {
                if last {
                    Value::Null
                } else {
                    Value::Object(serde_json::Map::new())
                }
            }),
            Value::Array(items) => {
                let n: usize = segment.parse().map_err(|_| {
                    format!("search.vary.{path}: `{segment}` is not an index of a list")
                })?;
                let len = items.len();
                items.get_mut(n).ok_or_else(|| {
                    format!("search.vary.{path}: index {n} is past the end of a list of {len}")
                })?
            }
            _ => {
                return Err(format!(
                    "search.vary.{path}: `{segment}` is inside a value that is not a map or a list"
                ));
            }
        };
    }
    *at = value;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_reach_into_maps_and_lists_and_make_missing_maps() {
        let mut doc = serde_json::json!({ "a": { "list": [ { "x": 1 } ] } });
        set(&mut doc, "a.list.0.x", Value::from(2)).unwrap();
        set(&mut doc, "b.c", Value::from("1ms")).unwrap();
        assert_eq!(
            doc,
            serde_json::json!({ "a": { "list": [ { "x": 2 } ] }, "b": { "c": "1ms" } })
        );
        assert!(
            set(&mut doc, "a.list.3.x", Value::from(1))
                .unwrap_err()
                .contains("past the end")
        );
        assert!(
            set(&mut doc, "a.list.0.x.y", Value::from(1))
                .unwrap_err()
                .contains("not a map")
        );
    }
}
