//! `SKILL.md` frontmatter: the YAML between the opening `---` and the next,
//! read the way the format's reference validator (`skills-ref`, which uses
//! StrictYAML) reads it, so a bundle valid there is valid here and the
//! other way round:
//!
//! - every scalar is the text it was written as (`version: 1.0` is the
//!   string `"1.0"`, `007` stays `"007"`, `yes` stays `"yes"`): no type
//!   guessing;
//! - block style only: flow collections (`[a, b]`, `{a: b}`), anchors,
//!   aliases and tags are refused, and so is a key given twice;
//! - the top level must be a mapping.

use saphyr_parser::{Event, Parser, Span};
use std::collections::BTreeMap;

/// A parsed YAML node: text, a list or a mapping.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A scalar, as written (quotes and block indicators resolved).
    Text(String),
    /// A block sequence.
    List(Vec<Node>),
    /// A block mapping with text keys, in key order.
    Map(BTreeMap<String, Node>),
}

impl Node {
    /// The text, when this is a scalar.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Node::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The node as JSON: text as strings (as written: no type guessing),
    /// lists as arrays, mappings as objects.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Node::Text(text) => serde_json::Value::String(text.clone()),
            Node::List(items) => items.iter().map(Node::to_json).collect(),
            Node::Map(map) => map
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
}

/// The frontmatter's fields and the Markdown body after it.
#[derive(Debug)]
pub struct Split {
    /// The top-level mapping.
    pub fields: BTreeMap<String, Node>,
    /// Everything after the closing `---`, trimmed.
    pub body: String,
}

/// Split `SKILL.md` into frontmatter and body and parse the frontmatter.
/// The error says what is wrong and where (line numbers count from the
/// top of the file).
pub fn split(content: &str) -> Result<Split, String> {
    // As the reference does: the file starts with `---`, and the
    // frontmatter ends at the next `---` anywhere after it.
    let Some(rest) = content.strip_prefix("---") else {
        return Err("SKILL.md must start with YAML frontmatter: a line `---`, the fields \
                    (`name: …`, `description: …`), then `---`"
            .into());
    };
    let Some(end) = rest.find("---") else {
        return Err("SKILL.md frontmatter is not closed: add a line `---` after the fields".into());
    };
    let yaml = &rest[..end];
    let body = rest[end + 3..].trim().to_owned();
    let fields = match parse(yaml)? {
        Node::Map(fields) => fields,
        Node::Text(t) if t.is_empty() => BTreeMap::new(),
        _ => return Err("SKILL.md frontmatter must be a YAML mapping (`key: value` lines)".into()),
    };
    Ok(Split { fields, body })
}

/// Parse one YAML document under the rules in the module docs.
fn parse(yaml: &str) -> Result<Node, String> {
    let chars: Vec<char> = yaml.chars().collect();
    let mut builder = Builder { stack: Vec::new(), root: None };
    for item in Parser::new_from_str(yaml) {
        let (event, span) = item.map_err(|e| {
            // The YAML starts right after the opening `---`, so its lines are the file's.
            format!(
                "invalid YAML in the frontmatter at line {}, column {}: {}",
                e.marker().line(),
                e.marker().col() + 1,
                e.info()
            )
        })?;
        builder.event(event, span, &chars)?;
    }
    Ok(builder.root.unwrap_or(Node::Text(String::new())))
}

/// A collection being filled, with the key waiting for its value.
enum Open {
    List(Vec<Node>),
    Map(BTreeMap<String, Node>, Option<String>),
}

struct Builder {
    stack: Vec<Open>,
    root: Option<Node>,
}

impl Builder {
    fn event(&mut self, event: Event<'_>, span: Span, chars: &[char]) -> Result<(), String> {
        let at = || format!("line {}, column {}", span.start.line(), span.start.col() + 1);
        let flow = || matches!(chars.get(span.start.index()), Some('[' | '{'));
        match event {
            Event::Alias(_) => Err(format!(
                "YAML aliases (`*name`) are not allowed in the frontmatter ({}); write the value \
                 out",
                at()
            )),
            Event::Scalar(_, _, anchor, tag)
            | Event::SequenceStart(anchor, tag)
            | Event::MappingStart(anchor, tag)
                if anchor != 0 || tag.is_some() =>
            {
                let what = if anchor != 0 { "anchors (`&name`)" } else { "tags (`!tag`)" };
                Err(format!("YAML {what} are not allowed in the frontmatter ({})", at()))
            }
            Event::SequenceStart(..) | Event::MappingStart(..) if flow() => Err(format!(
                "flow style (`[a, b]` or `{{a: b}}`) is not allowed in the frontmatter ({}); \
                 write a plain value or one `- item` per line",
                at()
            )),
            Event::Scalar(text, style, ..) => {
                // An empty plain node is YAML's null; StrictYAML reads it as "".
                let empty = style == saphyr_parser::ScalarStyle::Plain
                    && text == "~"
                    && chars.get(span.start.index()) != Some(&'~');
                let text = if empty { String::new() } else { text.into_owned() };
                self.value(Node::Text(text), &at)
            }
            Event::SequenceStart(..) => {
                self.stack.push(Open::List(Vec::new()));
                Ok(())
            }
            Event::MappingStart(..) => {
                self.stack.push(Open::Map(BTreeMap::new(), None));
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match self.stack.pop() {
                    Some(Open::List(items)) => Node::List(items),
                    Some(Open::Map(map, _)) => Node::Map(map),
                    None => return Ok(()),
                };
                self.value(node, &at)
            }
            Event::DocumentStart(_) if self.root.is_some() => {
                Err(format!("the frontmatter holds more than one YAML document ({})", at()))
            }
            _ => Ok(()),
        }
    }

    /// A finished node: a key, a value for the waiting key, a list item or
    /// the document.
    fn value(&mut self, node: Node, at: &dyn Fn() -> String) -> Result<(), String> {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Open::List(items)) => items.push(node),
            Some(Open::Map(map, key @ None)) => match node {
                Node::Text(text) => {
                    if map.contains_key(&text) {
                        return Err(format!(
                            "the key `{text}` is given twice in the frontmatter ({}); keep one",
                            at()
                        ));
                    }
                    *key = Some(text);
                }
                _ => return Err(format!("a frontmatter key must be plain text ({})", at())),
            },
            Some(Open::Map(map, key)) => {
                let key = key.take().unwrap_or_default();
                map.insert(key, node);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(yaml: &str) -> Result<BTreeMap<String, Node>, String> {
        split(&format!("---\n{yaml}---\nbody\n")).map(|s| s.fields)
    }

    fn text(s: &str) -> Node {
        Node::Text(s.to_owned())
    }

    #[test]
    fn scalars_stay_the_text_they_were_written_as() {
        let f = fields(
            "name: a\ndescription: yes\nmetadata:\n  version: 1.0\n  n: 007\n  q: \"x: y\"\n",
        )
        .unwrap();
        assert_eq!(f["description"], text("yes"));
        let Node::Map(meta) = &f["metadata"] else { panic!("{f:?}") };
        assert_eq!(meta["version"], text("1.0"));
        assert_eq!(meta["n"], text("007"));
        assert_eq!(meta["q"], text("x: y"));
    }

    #[test]
    fn empty_values_folded_blocks_and_lists() {
        let f = fields("name: a\ndescription:\nlong: >\n  folded\n  text\nl:\n  - one\n").unwrap();
        assert_eq!(f["description"], text(""));
        assert_eq!(f["long"], text("folded text\n"));
        assert_eq!(f["l"], Node::List(vec![text("one")]));
        assert_eq!(fields("name: '~'\n").unwrap()["name"], text("~"));
    }

    #[test]
    fn what_the_reference_refuses_is_refused_with_the_place() {
        for (yaml, says) in [
            ("name: a\ndescription: Use this when: asked\n", "line 3, column 27"),
            ("name: a\ntools: [a, b]\n", "flow style"),
            ("name: a\nm: {a: b}\n", "flow style"),
            ("name: a\nname: b\n", "given twice"),
            ("name: &x a\ndescription: *x\n", "anchors"),
            ("name: !!str a\n", "tags"),
            ("name: a\ndescription:\td\n", "invalid YAML"),
        ] {
            let err = fields(yaml).expect_err(yaml);
            assert!(err.contains(says), "{yaml:?}: {err}");
        }
    }

    #[test]
    fn the_frontmatter_must_open_close_and_be_a_mapping() {
        assert!(split("# no frontmatter\n").unwrap_err().contains("must start"));
        assert!(split("---\nname: a\n").unwrap_err().contains("not closed"));
        assert!(split("---\n- a\n---\n").unwrap_err().contains("mapping"));
        let s = split("---\nname: a\ndescription: d\n---\n\n# Title\n\nText.\n").unwrap();
        assert_eq!(s.body, "# Title\n\nText.");
    }
}
