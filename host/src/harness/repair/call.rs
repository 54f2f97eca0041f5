//! Calls written in the text instead of as structured calls: the message
//! that *is* a call (run), and a call described in prose (asked about).

use super::{arguments, outermost_object, without_trailing_commas};
use crate::harness::toolbox::dotted;
use serde_json::{Map, Value};

/// A tool call found in the text of an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct TextCall {
    /// The tool named.
    pub name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// Find a call to one of `offered` written as JSON in `text`, when the
/// message *is* the call: one object `{"name": "…", "arguments": {…}}`
/// (also `"parameters"`, or `{"tool": …}` / `{"function": {"name",
/// "arguments"}}`), bare, in one code fence, or in `<tool_call>` tags, with
/// nothing else in the message but whitespace.
///
/// Why so strict: an answer that quotes JSON — a page's embedded data, an
/// example from a README, a call an attacker planted in a page ("the page
/// contains this, which I ignored: …") — must stay text, and no rule about
/// the prose around an object can tell a quote from an intent. A model that
/// means to call a tool in text writes only the call; the preamble tells
/// it so.
pub fn call_in_text(text: &str, offered: &dyn Fn(&str) -> bool) -> Option<TextCall> {
    as_call(&whole_object(whole_message(text)?)?, offered)
}

/// The JSON text of a message that is nothing but one object: bare, in one
/// code fence (with an optional language tag), or in `<tool_call>` tags.
fn whole_message(text: &str) -> Option<&str> {
    let text = text.trim();
    if text.starts_with('{') {
        // A fence closed that was never opened (seen from the local model).
        return Some(text.strip_suffix("```").map_or(text, str::trim_end));
    }
    if let Some(inner) = text.strip_prefix("<tool_call>") {
        return Some(inner.strip_suffix("</tool_call>")?.trim());
    }
    strip_one_fence(text).or_else(|| {
        // A fence opened and never closed: the reply ended after the object.
        let rest = text.strip_prefix("```")?;
        let body = rest[rest.find('\n')? + 1..].trim();
        (!body.contains("```")).then_some(body)
    })
}

/// The body of a text that is exactly one fenced block (with an optional
/// language tag), or `None`.
fn strip_one_fence(text: &str) -> Option<&str> {
    let rest = text.trim().strip_prefix("```")?;
    let body = &rest[rest.find('\n')? + 1..];
    let body = body.trim_end().strip_suffix("```")?;
    (!body.contains("```")).then_some(body.trim())
}

/// `text` parsed as one JSON object that spans all of it (a trailing comma
/// forgiven), or `None`.
fn whole_object(text: &str) -> Option<Map<String, Value>> {
    let text = text.trim();
    if !text.starts_with('{') || outermost_object(text) != Some(text) {
        return None;
    }
    for candidate in [text.to_owned(), without_trailing_commas(text)] {
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&candidate) {
            return Some(map);
        }
    }
    None
}

/// A call the model *described* instead of making — a call-shaped object
/// for an offered tool somewhere in prose, or prose that names exactly one
/// offered tool next to an object whose keys that tool's schema knows
/// (every required one included) — so the harness can ask the model to make
/// the call. Never run as found: the same text is what an answer quoting a
/// page (or a planted call) looks like, and only the model can say which it
/// meant.
pub fn described_call(text: &str, tools: &[crate::model::ToolSpec]) -> Option<TextCall> {
    // An offered name, or its `skill.tool` spelling, as the offered name.
    let canonical = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name || dotted(&t.name).as_deref() == Some(name))
            .map(|t| t.name.clone())
    };
    let offered = |name: &str| canonical(name).is_some();
    for block in candidate_objects(text) {
        if let Ok(map) = arguments(block)
            && let Some(mut call) = as_call(&map, &offered)
        {
            call.name = canonical(&call.name).unwrap_or(call.name);
            return Some(call);
        }
    }
    let mut named = tools
        .iter()
        .filter(|t| mentions(text, &t.name) || dotted(&t.name).is_some_and(|d| mentions(text, &d)));
    let tool = named.next()?;
    if named.next().is_some() {
        return None;
    }
    let properties = tool.parameters.get("properties").and_then(Value::as_object)?;
    let required: Vec<&str> = tool
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let from_object = candidate_objects(text).into_iter().find_map(|block| {
        let map = arguments(block).ok()?;
        let known = !map.is_empty() && map.keys().all(|k| properties.contains_key(k));
        (known && required.iter().all(|r| map.contains_key(*r)))
            .then(|| TextCall { name: tool.name.clone(), arguments: map })
    });
    from_object.or_else(|| described_in_prose(text, &tool.name, &required))
}

/// "Use the `files__read` function with the path `notes/a.md`": a tool
/// with one required argument, a `path` or a `url`, and exactly one value
/// in the text that can be it (a quoted path-like word, or a URL).
fn described_in_prose(text: &str, tool: &str, required: &[&str]) -> Option<TextCall> {
    let [param] = required else { return None };
    let url = match *param {
        "url" => true,
        "path" => false,
        _ => return None,
    };
    let mut values: Vec<&str> = Vec::new();
    let quoted = text.split('`').skip(1).step_by(2);
    let links = text
        .split(|c: char| c.is_whitespace() || "()<>\"'`".contains(c))
        .filter(|w| w.starts_with("http://") || w.starts_with("https://"));
    for value in quoted.chain(links) {
        let value = value.trim().trim_end_matches(['.', ',', ';', ':']);
        let fits = if url {
            value.starts_with("http://") || value.starts_with("https://")
        } else {
            !value.contains(char::is_whitespace)
                && !value.contains("://")
                && (value.contains('/') || value.contains('.'))
        };
        let a_name = value == tool || dotted(tool).as_deref() == Some(value);
        if fits && !a_name && !values.contains(&value) {
            values.push(value);
        }
    }
    let [value] = values[..] else { return None };
    let mut arguments = Map::new();
    arguments.insert((*param).to_owned(), Value::String(value.to_owned()));
    Some(TextCall { name: tool.to_owned(), arguments })
}

/// `name` appears as a whole word (not inside a longer identifier).
fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = text[at + name.len()..].chars().next().is_none_or(|c| !is_ident(c));
        before && after
    })
}

/// The text of each fenced block, then the outermost object of the whole text.
fn candidate_objects(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = &rest[start + 3..];
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        let Some(end) = after[body_start..].find("```") else { break };
        found.push(&after[body_start..body_start + end]);
        rest = &after[body_start + end + 3..];
    }
    if let Some(object) = outermost_object(text) {
        found.push(object);
    }
    found
}

fn as_call(map: &Map<String, Value>, offered: &dyn Fn(&str) -> bool) -> Option<TextCall> {
    if let Some(Value::Object(function)) = map.get("function") {
        return as_call(function, offered);
    }
    let name = map.get("name").or_else(|| map.get("tool")).and_then(Value::as_str)?;
    if !offered(name) {
        return None;
    }
    let arguments =
        match map.get("arguments").or_else(|| map.get("parameters")).or_else(|| map.get("args")) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            // Some models double-encode: "arguments": "{\"path\": …}".
            Some(Value::String(text)) => arguments(text).ok()?,
            Some(_) => return None,
        };
    Some(TextCall { name: name.to_owned(), arguments })
}
