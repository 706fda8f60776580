//! Generated cases: `tests/adversarial/<name>.gen.yaml` is a recipe for an input too big to
//! commit (a 50 MB file, 10,000 levels of nesting, 100,000 steps), built when the test runs.
//!
//! A recipe is a list of parts, concatenated in order:
//!
//! ```yaml
//! parts:
//!   - text: "version: 1\nname: x\nendpoints:\n"   # literal text
//!   - repeat: "  e{i}: {}\n"                      # text repeated `times` times, `{i}`
//!     times: 100000                               # replaced by 0, 1, 2, ... and
//!                                                 # `{indent}` by that many spaces
//!   - hex: "ff fe 00"                             # raw bytes (for broken encodings)
//! ```

use serde_json::Value;

/// The largest input a recipe may build: the test writes it to a temporary file, and a
/// recipe that asks for more is a mistake in the corpus, not a case.
const MAX_GENERATED_BYTES: usize = 64 * 1024 * 1024;

/// The bytes the recipe text `recipe` describes, or what is wrong with it.
pub(crate) fn generate(recipe: &str) -> Result<Vec<u8>, String> {
    let recipe: Value = serde_saphyr::from_str(recipe).map_err(|e| format!("not a recipe: {e}"))?;
    let parts = recipe
        .get("parts")
        .and_then(Value::as_array)
        .ok_or("a recipe needs `parts`, a list")?;
    if let Some(map) = recipe.as_object() {
        if let Some(key) = map.keys().find(|k| *k != "parts") {
            return Err(format!("unknown recipe key `{key}`"));
        }
    }
    let mut out = Vec::new();
    for (n, part) in parts.iter().enumerate() {
        append(&mut out, part).map_err(|e| format!("parts[{n}]: {e}"))?;
        if out.len() > MAX_GENERATED_BYTES {
            return Err(format!(
                "parts[{n}]: the input grows past {MAX_GENERATED_BYTES} bytes"
            ));
        }
    }
    Ok(out)
}

/// Appends one part to `out`.
fn append(out: &mut Vec<u8>, part: &Value) -> Result<(), String> {
    let map = part.as_object().ok_or("a part is a mapping")?;
    let text = |key: &str| -> Result<Option<&str>, String> {
        map.get(key)
            .map(|v| v.as_str().ok_or(format!("`{key}` is a string")))
            .transpose()
    };
    match (text("text")?, text("hex")?, text("repeat")?) {
        (Some(literal), None, None) if map.len() == 1 => {
            out.extend_from_slice(literal.as_bytes());
            Ok(())
        }
        (None, Some(hex), None) if map.len() == 1 => {
            out.extend(hex_bytes(hex)?);
            Ok(())
        }
        (None, None, Some(unit)) if map.len() == 2 => {
            let times = map
                .get("times")
                .and_then(Value::as_u64)
                .ok_or("`repeat` needs `times`, a whole number")?;
            let indexed = unit.contains("{i}") || unit.contains("{indent}");
            for i in 0..times {
                if indexed {
                    let indent = " ".repeat(usize::try_from(i).unwrap_or(usize::MAX));
                    let unit = unit
                        .replace("{i}", &i.to_string())
                        .replace("{indent}", &indent);
                    out.extend_from_slice(unit.as_bytes());
                } else {
                    out.extend_from_slice(unit.as_bytes());
                }
                if out.len() > MAX_GENERATED_BYTES {
                    return Err(format!("the input grows past {MAX_GENERATED_BYTES} bytes"));
                }
            }
            Ok(())
        }
        _ => Err("a part is exactly one of `text`, `hex`, or `repeat` with `times`".into()),
    }
}

/// `"ff fe 0a"` as bytes.
fn hex_bytes(hex: &str) -> Result<Vec<u8>, String> {
    hex.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).map_err(|_| format!("`{pair}` is not a hex byte")))
        .collect()
}
