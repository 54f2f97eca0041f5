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
    let object = outermost_object(unfenced).ok_or_else(|| {
        format!("the arguments are not a JSON object: {}", preview(trimmed))
    })?;
    for candidate in [object.to_owned(), without_trailing_commas(object)] {
        match serde_json::from_str::<Value>(&candidate) {
            Ok(Value::Object(map)) => return Ok(map),
            Ok(_) => {}
            Err(_) => continue,
        }
    }
    let err = serde_json::from_str::<Value>(&without_trailing_commas(object)).err().map_or_else(String::new, |e| format!(" ({e})"));
    Err(format!("the arguments are not valid JSON{err}: {}", preview(trimmed)))
}

/// A tool call found in the text of an answer.
#[derive(Clone, Debug, PartialEq)]
pub struct TextCall {
    /// The tool named.
    pub name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// Find a call to one of `offered` written as JSON in `text`: a bare or
/// fenced object `{"name": "…", "arguments": {…}}` (also `"parameters"`,
/// or `{"tool": …}` / `{"function": {"name", "arguments"}}`). Only offered
/// names count; anything else stays text. The first call found wins.
pub fn call_in_text(text: &str, offered: &dyn Fn(&str) -> bool) -> Option<TextCall> {
    for block in candidate_objects(text) {
        let Ok(map) = arguments(block) else { continue };
        if let Some(call) = as_call(&map, offered) {
            return Some(call);
        }
    }
    None
}

/// A looser reading for models that describe a call instead of making it
/// ("I called `web__to_markdown` with: ```json {"url": …}```"): exactly one
/// offered tool is named in the text, and an object in it has only keys that
/// tool's schema knows, including every required one. The schema check is
/// what keeps ordinary JSON in an answer from becoming a call.
pub fn described_call(text: &str, tools: &[crate::model::ToolSpec]) -> Option<TextCall> {
    let mut named = tools.iter().filter(|t| mentions(text, &t.name));
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
    for block in candidate_objects(text) {
        let Ok(map) = arguments(block) else { continue };
        let known = !map.is_empty() && map.keys().all(|k| properties.contains_key(k));
        if known && required.iter().all(|r| map.contains_key(*r)) {
            return Some(TextCall { name: tool.name.clone(), arguments: map });
        }
    }
    None
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

fn as_call(map: &Map<String, Value>, offered: &dyn Fn(&str) -> bool) -> Option<TextCall> {
    if let Some(Value::Object(function)) = map.get("function") {
        return as_call(function, offered);
    }
    let name = map.get("name").or_else(|| map.get("tool")).and_then(Value::as_str)?;
    if !offered(name) {
        return None;
    }
    let arguments = match map.get("arguments").or_else(|| map.get("parameters")).or_else(|| map.get("args")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        // Some models double-encode: "arguments": "{\"path\": …}".
        Some(Value::String(text)) => arguments(text).ok()?,
        Some(_) => return None,
    };
    Some(TextCall { name: name.to_owned(), arguments })
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
            && text[i + 1..].chars().find(|n| !n.is_whitespace()).is_some_and(|n| n == '}' || n == ']');
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
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn arguments_are_repaired_only_in_the_usual_ways() {
        let want = obj(json!({"path": "a.txt", "limit": 5}));
        for text in [
            r#"{"path": "a.txt", "limit": 5}"#,
            "```json\n{\"path\": \"a.txt\", \"limit\": 5}\n```",
            "Sure! Here are the arguments: {\"path\": \"a.txt\", \"limit\": 5} Hope that helps.",
            "{\"path\": \"a.txt\", \"limit\": 5,}",
            "{\n  \"path\": \"a.txt\",\n  \"limit\": 5,\n}\n",
        ] {
            assert_eq!(arguments(text).as_ref(), Ok(&want), "{text}");
        }
        assert_eq!(arguments("  ").unwrap(), Map::new(), "no arguments");
        assert_eq!(arguments(r#"{"text": "a,}"}"#).unwrap(), obj(json!({"text": "a,}"})), "commas inside strings stay");
        assert_eq!(arguments(r#"{"a": {"b": [1, 2,],},}"#).unwrap(), obj(json!({"a": {"b": [1, 2]}})));
    }

    #[test]
    fn what_cannot_be_repaired_says_what_it_saw() {
        let err = arguments("[1, 2]").unwrap_err();
        assert!(err.contains("not a JSON object") && err.contains("[1, 2]"), "{err}");
        let err = arguments("{\"path\": a.txt}").unwrap_err();
        assert!(err.contains("not valid JSON") && err.contains("a.txt"), "{err}");
    }

    #[test]
    fn a_described_call_counts_only_when_the_schema_fits() {
        let tools = vec![
            crate::model::ToolSpec {
                name: "web__to_markdown".into(),
                description: String::new(),
                parameters: json!({"type": "object", "properties": {"url": {}, "path": {}}, "required": ["url"]}),
            },
            crate::model::ToolSpec { name: "web__fetch".into(), description: String::new(), parameters: json!({"properties": {"url": {}}, "required": ["url"]}) },
        ];
        let text = "I called the `web__to_markdown` function with the following arguments:\n```json\n{\n  \"url\": \"http://x/a.html\"\n}\n```\nThe function returned:\n```json\n{\"status\": \"success\"}\n```";
        let call = described_call(text, &tools).expect("found");
        assert_eq!(call.name, "web__to_markdown");
        assert_eq!(call.arguments, obj(json!({"url": "http://x/a.html"})));
        assert_eq!(described_call("Use web__to_markdown or web__fetch with {\"url\": \"u\"}", &tools), None, "two tools named");
        assert_eq!(described_call("web__to_markdown gave {\"status\": \"ok\"}", &tools), None, "keys the schema does not know");
        assert_eq!(described_call("my_web__to_markdown_x {\"url\": \"u\"}", &tools), None, "not a whole word");
    }

    #[test]
    fn calls_written_in_text_are_found_for_offered_tools_only() {
        let offered = |name: &str| name == "files__read";
        let bare = r#"{"name": "files__read", "arguments": {"path": "notes/a.txt"}}"#;
        let fenced = "I'll read it.\n```json\n{\"name\": \"files__read\", \"arguments\": {\"path\": \"notes/a.txt\"}}\n```";
        let function = r#"{"function": {"name": "files__read", "arguments": "{\"path\": \"notes/a.txt\"}"}}"#;
        let want = TextCall { name: "files__read".into(), arguments: obj(json!({"path": "notes/a.txt"})) };
        for text in [bare, fenced, function] {
            assert_eq!(call_in_text(text, &offered).as_ref(), Some(&want), "{text}");
        }
        assert_eq!(call_in_text(r#"{"name": "rm_rf", "arguments": {}}"#, &offered), None, "not offered");
        assert_eq!(call_in_text("The answer is {\"total\": 3}.", &offered), None, "plain JSON in an answer");
        assert_eq!(call_in_text("No tools needed: the file has 3 lines.", &offered), None);
    }
}
