//! Tolerant reading of what a model wrote: tool arguments that are almost
//! JSON, and tool calls written as JSON in the text instead of as
//! structured `tool_calls` (small models under their stock chat template do
//! this — see `shared/LOCAL-MODEL.md`).
//!
//! The repairs are deliberately few and mechanical — code fences, text
//! around the object, trailing commas, an empty string for "no arguments" —
//! so a repaired value is still exactly what the model meant; anything more
//! creative would invent arguments. The result is validated against the
//! tool's schema afterwards in any case.

use serde_json::{Map, Value};

mod call;

pub use call::{TextCall, call_in_text, described_call};

/// Parse tool arguments. Accepts strict JSON first; otherwise strips code
/// fences, takes the outermost `{…}` object, drops trailing commas. The
/// error says what the text looked like, for the model to correct.
pub fn arguments(text: &str) -> Result<Map<String, Value>, String> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Map::new());
    }
    if let Ok(Value::Object(map)) = serde_json::from_str(trimmed) {
        return Ok(map);
    }
    let unfenced = strip_fences(trimmed);
    let object = outermost_object(unfenced)
        .ok_or_else(|| format!("the arguments are not a JSON object: {}", preview(trimmed)))?;
    for candidate in [object.to_owned(), without_trailing_commas(object)] {
        match serde_json::from_str::<Value>(&candidate) {
            Ok(Value::Object(map)) => return Ok(map),
            Ok(_) => {}
            Err(_) => continue,
        }
    }
    let err = serde_json::from_str::<Value>(&without_trailing_commas(object))
        .err()
        .map_or_else(String::new, |e| format!(" ({e})"));
    Err(format!("the arguments are not valid JSON{err}: {}", preview(trimmed)))
}

/// Numbers and booleans written as strings (`"limit": "10"`, `"append":
/// "true"`) become numbers and booleans where the tool's schema says so —
/// the value the model meant, in the type the schema needs. Other values
/// are left for the schema check to judge.
pub fn scalars_as_typed(arguments: &mut Map<String, Value>, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    for (key, value) in arguments.iter_mut() {
        let (Some(text), Some(kind)) = (
            value.as_str(),
            properties.get(key).and_then(|p| p.get("type")).and_then(Value::as_str),
        ) else {
            continue;
        };
        let text = text.trim();
        let typed = match kind {
            "integer" => text.parse::<i64>().ok().map(Value::from),
            "number" => text.parse::<f64>().ok().filter(|n| n.is_finite()).map(Value::from),
            "boolean" => match text.to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            _ => None,
        };
        if let Some(typed) = typed {
            *value = typed;
        }
    }
}

/// The text inside a leading/trailing code fence, if any.
fn strip_fences(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else { return text };
    let body = rest.find('\n').map_or("", |i| &rest[i + 1..]);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// Each character with its byte offset and whether it is structural: outside
/// every string literal (the quotes themselves count as inside).
fn structural_chars(text: &str) -> impl Iterator<Item = (usize, char, bool)> + '_ {
    let mut in_string = false;
    let mut escaped = false;
    text.char_indices().map(move |(i, c)| {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            return (i, c, false);
        }
        if c == '"' {
            in_string = true;
            return (i, c, false);
        }
        (i, c, true)
    })
}

/// From the first `{` to its matching `}`, respecting strings; the first
/// `{` to the last `}` when the braces do not balance.
fn outermost_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    for (i, c, structural) in structural_chars(&text[start..]) {
        match (structural, c) {
            (true, '{') => depth += 1,
            (true, '}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..start + i + 1]);
                }
            }
            _ => {}
        }
    }
    let end = text.rfind('}')?;
    (end > start).then(|| &text[start..=end])
}

/// Remove commas directly before `}` or `]` (outside strings).
fn without_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c, structural) in structural_chars(text) {
        let trailing = structural
            && c == ','
            && text[i + 1..]
                .chars()
                .find(|n| !n.is_whitespace())
                .is_some_and(|n| n == '}' || n == ']');
        if !trailing {
            out.push(c);
        }
    }
    out
}

fn preview(text: &str) -> String {
    let cut: String = text.chars().take(120).collect();
    if cut.len() < text.len() { format!("{cut:?}…") } else { format!("{cut:?}") }
}

#[cfg(test)]
mod tests;
