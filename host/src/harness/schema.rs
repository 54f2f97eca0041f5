//! Tool parameter schemas as the model reads them: the same arguments, in
//! fewer tokens.
//!
//! Schemas generated from Rust types (schemars, as our SDK does) spell a
//! choice of words as `oneOf` of `const`s under `$defs`, an optional field
//! as `anyOf [T, null]`, and add `$schema`, titles and integer formats. A
//! model reads none of that better than a plain `enum`, and every token of it
//! is read again on every request — the logs skill's `top` alone went from
//! ~1,000 tokens of parameters to under half. The skill's own schema still
//! checks the arguments (in the runtime); only what is offered shrinks.

use serde_json::{Map, Value};

/// How deep `$ref`s may nest before the schema is offered as it is (a
/// recursive schema cannot be inlined).
const MAX_DEPTH: usize = 16;

/// `schema` with local `$ref`s inlined, string-constant choices as `enum`,
/// optional values without their `null` branch, and annotations no model
/// needs removed. Returns the schema unchanged when it cannot be simplified
/// safely (a recursive or external `$ref`).
pub fn compact(schema: &Value) -> Value {
    let defs = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    match inline(schema, &defs, 0) {
        Some(inlined) => simplify(inlined),
        None => schema.clone(),
    }
}

/// Inlines `#/$defs/…` and `#/definitions/…` references; `None` for a
/// reference that cannot be (external, unknown, or nested too deep).
fn inline(node: &Value, defs: &Map<String, Value>, depth: usize) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    match node {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref") {
                let name = reference
                    .as_str()?
                    .strip_prefix("#/$defs/")
                    .or_else(|| reference.as_str()?.strip_prefix("#/definitions/"))?;
                let mut target = inline(defs.get(name)?, defs, depth + 1)?;
                // Keywords beside the `$ref` (its description) win over the definition's.
                if let Value::Object(target_map) = &mut target {
                    for (key, value) in map {
                        if key != "$ref" {
                            target_map.insert(key.clone(), inline(value, defs, depth + 1)?);
                        }
                    }
                }
                return Some(target);
            }
            let mut out = Map::new();
            for (key, value) in map {
                if matches!(key.as_str(), "$defs" | "definitions" | "$schema" | "title") {
                    continue;
                }
                out.insert(key.clone(), inline(value, defs, depth + 1)?);
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => items
            .iter()
            .map(|v| inline(v, defs, depth + 1))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array),
        other => Some(other.clone()),
    }
}

/// Children first, then this node: `anyOf`/`oneOf` of string constants
/// become one `enum`, `anyOf [T, null]` becomes `T`, `type: [T, "null"]`
/// becomes `T`, and numeric `format`s and `default: null` go.
fn simplify(node: Value) -> Value {
    let mut map = match node {
        Value::Object(map) => {
            map.into_iter().map(|(k, v)| (k, simplify(v))).collect::<Map<String, Value>>()
        }
        Value::Array(items) => return Value::Array(items.into_iter().map(simplify).collect()),
        other => return other,
    };
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(variants)) = map.get(key) else { continue };
        let non_null: Vec<&Value> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if non_null.len() == 1 && variants.len() == 2 {
            // An optional value: the field may simply be left out.
            let Value::Object(inner) = non_null[0].clone() else { continue };
            map.remove(key);
            for (k, v) in inner {
                if k != "description" || !map.contains_key("description") {
                    map.insert(k, v);
                }
            }
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
        } else if let Some(choices) = string_choices(&non_null) {
            map.remove(key);
            if !map.contains_key("description") {
                let notes: Vec<String> = choices
                    .iter()
                    .filter_map(|(c, note)| {
                        note.as_ref().map(|n| format!("{c}: {}", n.trim_end_matches('.')))
                    })
                    .collect();
                if !notes.is_empty() {
                    map.insert(
                        "description".into(),
                        Value::String(format!("{}.", notes.join("; "))),
                    );
                }
            }
            map.insert("type".into(), Value::String("string".into()));
            map.insert(
                "enum".into(),
                Value::Array(choices.into_iter().map(|(c, _)| Value::String(c)).collect()),
            );
        }
    }
    if let Some(Value::Array(types)) = map.get("type") {
        let non_null: Vec<&Value> = types.iter().filter(|t| t.as_str() != Some("null")).collect();
        if non_null.len() == 1 {
            let only = non_null[0].clone();
            map.insert("type".into(), only);
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
        }
    }
    if let Some(Value::String(format)) = map.get("format")
        && matches!(
            format.as_str(),
            "int8"
                | "int16"
                | "int32"
                | "int64"
                | "uint"
                | "uint8"
                | "uint16"
                | "uint32"
                | "uint64"
                | "float"
                | "double"
        )
    {
        map.remove("format");
    }
    Value::Object(map)
}

/// The string values of `variants` when each is a string `const` or a
/// string `enum` (with its description when it names one value), else `None`.
fn string_choices(variants: &[&Value]) -> Option<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    for v in variants {
        let note = v.get("description").and_then(Value::as_str).map(str::to_owned);
        if let Some(c) = v.get("const") {
            out.push((c.as_str()?.to_owned(), note));
        } else if let Some(Value::Array(values)) = v.get("enum") {
            let one = values.len() == 1;
            for value in values {
                out.push((value.as_str()?.to_owned(), if one { note.clone() } else { None }));
            }
        } else {
            return None;
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn choices_optional_values_and_references_become_plain() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "TopArgs",
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The log file."},
                "field": {
                    "anyOf": [{"$ref": "#/$defs/Field"}, {"type": "null"}], "default": null,
                    "description": "What to count."
                },
                "level": {"$ref": "#/$defs/MinLevel"},
                "limit": {
                    "type": ["integer", "null"], "format": "uint32", "minimum": 1, "default": null
                }
            },
            "required": ["path"],
            "$defs": {
                "Field": {
                    "oneOf": [
                        {"const": "ip", "type": "string", "description": "The client."},
                        {"const": "status", "type": "string"}
                    ]
                },
                "MinLevel": {
                    "anyOf": [
                        {"enum": ["any"], "type": "string", "description": "Every line."},
                        {"$ref": "#/$defs/Level"}
                    ]
                },
                "Level": {
                    "oneOf": [
                        {"const": "warn", "type": "string", "description": "4xx."},
                        {"const": "error", "type": "string", "description": "5xx."}
                    ]
                }
            }
        });
        assert_eq!(
            compact(&schema),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The log file."},
                    "field": {
                        "type": "string", "enum": ["ip", "status"], "description": "What to count."
                    },
                    "level": {
                        "type": "string", "enum": ["any", "warn", "error"],
                        "description": "any: Every line."
                    },
                    "limit": {"type": "integer", "minimum": 1}
                },
                "required": ["path"]
            })
        );
    }

    #[test]
    fn a_schema_that_cannot_be_inlined_is_offered_as_it_is() {
        let recursive = json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        assert_eq!(compact(&recursive), recursive);
        let external =
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.test/a.json"}}});
        assert_eq!(compact(&external), external);
    }

    #[test]
    fn a_plain_schema_is_unchanged() {
        let plain = json!({
            "type": "object", "properties": {"handle": {"type": "string"}}, "required": ["handle"],
            "additionalProperties": false
        });
        assert_eq!(compact(&plain), plain);
    }
}
