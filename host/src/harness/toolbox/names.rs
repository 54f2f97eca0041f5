//! Names: offered names every provider accepts, their `skill.tool`
//! spelling, the words a skill offers about itself, and the distance
//! between two names for a suggestion.

/// Appends a JSON Schema's property names and descriptions to `out`.
pub(super) fn schema_words(schema: &serde_json::Value, out: &mut String) {
    match schema {
        serde_json::Value::Object(map) => {
            for (key, value) in map {
                if key == "description"
                    && let Some(text) = value.as_str()
                {
                    out.push(' ');
                    out.push_str(text);
                } else if key == "properties"
                    && let Some(props) = value.as_object()
                {
                    for (name, prop) in props {
                        out.push(' ');
                        out.push_str(name);
                        schema_words(prop, out);
                    }
                } else {
                    schema_words(value, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| schema_words(v, out)),
        _ => {}
    }
}

/// The first sentence of a description, for a one-line menu entry.
pub(super) fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    crate::text::shorten_chars(&text[..end], 160)
}

/// `skill.tool` for an offered `skill__tool`: the spelling the skills'
/// instructions (and people) use, which models copy.
pub fn dotted(offered: &str) -> Option<String> {
    offered.split_once("__").map(|(skill, tool)| format!("{skill}.{tool}"))
}

/// `skill__tool`, with anything outside `[a-zA-Z0-9_-]` replaced by `_` and
/// cut to 64 characters — the strictest rule among providers.
pub fn offered_name(skill: &str, tool: &str) -> String {
    let name: String = format!("{skill}__{tool}")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    name
}

/// Levenshtein distance, for suggestions; names are short.
pub(super) fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
