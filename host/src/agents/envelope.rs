//! The task envelope a supervisor hands a worker, and the worker's answer
//! checked against the envelope's `return_format`.
//!
//! The envelope is all the worker knows: never the supervisor's
//! conversation (a page the supervisor read cannot talk to the worker
//! unless the supervisor quotes it as `input`), and the worker's answer
//! comes back as data the supervisor's model reads, not as instructions.

use serde_json::{Map, Value, json};

/// Longest `task` or `expected_output`, in characters.
const TEXT_CHARS: usize = 4_000;
/// Longest `input`, as JSON text.
const INPUT_CHARS: usize = 32_000;
/// Longest `return_format`, as JSON text.
const FORMAT_CHARS: usize = 8_000;

/// A checked `agents__delegate` call.
#[derive(Clone, Debug)]
pub struct Envelope {
    /// The profile to run.
    pub agent: String,
    /// What to do.
    pub task: String,
    /// Data for the task (`null` when none was given).
    pub input: Value,
    /// What the result should be, in words.
    pub expected_output: String,
    /// The JSON Schema the answer must match.
    pub return_format: Value,
    /// Most model requests, if the supervisor asked for fewer.
    pub max_steps: Option<usize>,
}

/// The parameters of `agents__delegate`, offering the profiles `agents`
/// (name and one line each, in the description).
pub fn parameters(agents: &[&str], max_steps: usize) -> Value {
    json!({
        "type": "object",
        "properties": {
            "agent": {
                "type": "string",
                "enum": agents,
                "description": "The worker to hand the task to."
            },
            "task": {
                "type": "string",
                "description": "What the worker must do, complete in itself: the worker sees \
                                nothing of this conversation."
            },
            "input": {
                "description": "Data the worker needs (text, or any JSON), quoted here because \
                                it sees nothing else."
            },
            "expected_output": {
                "type": "string",
                "description": "What the result should contain, in words."
            },
            "return_format": {
                "type": "object",
                "description": "JSON Schema of the result, e.g. {\"type\": \"object\", \
                                \"properties\": {\"path\": {\"type\": \"string\"}}, \
                                \"required\": [\"path\"]}."
            },
            "max_steps": {
                "type": "integer",
                "minimum": 1,
                "maximum": max_steps,
                "description": "Most model requests the worker may make."
            }
        },
        "required": ["agent", "task", "expected_output", "return_format"],
        "additionalProperties": false
    })
}

impl Envelope {
    /// The envelope in `arguments`, or what is wrong with it (for an
    /// `INVALID_ARGS` the model can fix).
    pub fn parse(arguments: &Value) -> Result<Envelope, String> {
        let mut map = arguments.as_object().ok_or("the arguments must be a JSON object")?.clone();
        lift_from_input(&mut map);
        let text = |key: &str| -> Result<String, String> {
            match map.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => {
                    if s.chars().count() > TEXT_CHARS {
                        Err(format!(
                            "`{key}` is longer than {TEXT_CHARS} characters; put data in `input`"
                        ))
                    } else {
                        Ok(s.trim().to_owned())
                    }
                }
                Some(_) => Err(format!("`{key}` must be a non-empty string")),
                None => Err(format!("`{key}` is missing")),
            }
        };
        if let Some(extra) = map.keys().find(|k| {
            !["agent", "task", "input", "expected_output", "return_format", "max_steps"]
                .contains(&k.as_str())
        }) {
            return Err(format!(
                "unknown field `{extra}`; the envelope has agent, task, input, expected_output, \
                 return_format, max_steps"
            ));
        }
        let agent = text("agent")?;
        let task = text("task")?;
        let expected_output = text("expected_output")?;
        let input = map.get("input").cloned().unwrap_or(Value::Null);
        if input.to_string().len() > INPUT_CHARS {
            return Err(format!(
                "`input` is larger than {INPUT_CHARS} characters of JSON; give the worker a path \
                 or a URL to read instead"
            ));
        }
        let return_format = match map.get("return_format") {
            Some(Value::Object(schema)) => Value::Object(schema.clone()),
            // Small models write the schema as a JSON string.
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(v @ Value::Object(_)) => v,
                _ => return Err("`return_format` must be a JSON Schema object".to_owned()),
            },
            Some(_) => return Err("`return_format` must be a JSON Schema object".to_owned()),
            None => {
                return Err(
                    "`return_format` is missing: give the JSON Schema the result must match"
                        .to_owned(),
                );
            }
        };
        if return_format.to_string().len() > FORMAT_CHARS {
            return Err(format!("`return_format` is larger than {FORMAT_CHARS} characters"));
        }
        if let Err(err) = jsonschema::meta::validate(&return_format) {
            return Err(format!("`return_format` is not a valid JSON Schema: {err}"));
        }
        let max_steps = match map.get("max_steps") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(n) if n >= 1 => Some(n as usize),
                _ => return Err("`max_steps` must be a whole number of at least 1".to_owned()),
            },
        };
        Ok(Envelope { agent, task, input, expected_output, return_format, max_steps })
    }

    /// The same delegation, whatever the spelling of its JSON: two
    /// envelopes with the same key ask for the same work.
    pub fn key(&self) -> String {
        json!([self.agent, self.task, self.input, self.expected_output, self.return_format])
            .to_string()
    }

    /// The worker's first (and only) user message: its instructions and the
    /// envelope. It is the run's task, so it survives every compaction.
    pub fn brief(&self, agent_description: &str, instructions: Option<&str>) -> String {
        let mut out =
            format!("[worker: {}] You are a worker agent: {agent_description}\n", self.agent);
        if let Some(text) = instructions {
            out.push_str(&format!("Your instructions: {text}\n"));
        }
        out.push_str(&format!("\nTask: {}\n", self.task));
        match &self.input {
            Value::Null => {}
            Value::String(text) => out.push_str(&format!("Input:\n{text}\n")),
            other => out.push_str(&format!("Input: {other}\n")),
        }
        out.push_str(&format!("Expected output: {}\n", self.expected_output));
        // One thing at a time: a small model told up front to reply in JSON
        // replies in JSON at once, tools unused (seen with the local model);
        // the format is asked for when it answers ([`fix_back`]).
        out.push_str(
            "\nDo the task now with your tools, then answer with what they returned. You will \
             then be asked for the result as JSON.",
        );
        out
    }
}

/// The envelope's own fields that a small model wrote inside `input` (an
/// object, or an object as JSON text) rather than beside it — `{"agent":
/// "web", "input": "{\"task\": \"Save …\", \"return_format\": {…}}"}`, the
/// commonest reason a small model's envelope was refused — moved to where they
/// belong, when the envelope lacks them. The names say what they are, so
/// nothing is guessed; whatever else `input` holds stays the input.
fn lift_from_input(map: &mut Map<String, Value>) {
    const FIELDS: [&str; 4] = ["task", "expected_output", "return_format", "max_steps"];
    let mut inner = match map.get("input") {
        Some(Value::Object(inner)) => inner.clone(),
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(inner)) => inner,
            _ => return,
        },
        _ => return,
    };
    let missing: Vec<&str> =
        FIELDS.into_iter().filter(|k| !map.contains_key(*k) && inner.contains_key(*k)).collect();
    if missing.is_empty() {
        return;
    }
    for key in missing {
        if let Some(value) = inner.remove(key) {
            map.insert(key.to_owned(), value);
        }
    }
    if inner.is_empty() {
        map.remove("input");
    } else {
        map.insert("input".to_owned(), Value::Object(inner));
    }
}

/// The JSON value in a worker's answer: the whole text, or the text inside
/// a ```json fence, or the first `{…}` / `[…]` span that parses.
pub fn json_in(answer: &str) -> Option<Value> {
    let text = answer.trim();
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    if let Some(start) = text.find("```") {
        let body = &text[start + 3..];
        let body = body.strip_prefix("json").unwrap_or(body);
        if let Some(end) = body.find("```")
            && let Ok(v) = serde_json::from_str(body[..end].trim())
        {
            return Some(v);
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (text.find(open), text.rfind(close))
            && a < b
            && let Ok(v) = serde_json::from_str(&text[a..=b])
        {
            return Some(v);
        }
    }
    None
}

/// The answer as the JSON `format` asks for, or every way it is not (at
/// most five, each with where it is).
pub fn check_output(answer: &str, format: &Value) -> Result<Value, Vec<String>> {
    let Some(value) = json_in(answer) else {
        return Err(vec!["the answer is not JSON".to_owned()]);
    };
    let validator = jsonschema::validator_for(format)
        .map_err(|e| vec![format!("the return_format cannot be used: {e}")])?;
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("at {at}: {e}") }
        })
        .collect();
    if errors.is_empty() { Ok(value) } else { Err(errors) }
}

/// The harness's note to a worker whose answer does not match: once, with
/// what is wrong and the schema again.
pub fn fix_back(errors: &[String], format: &Value) -> String {
    format!(
        "[harness] Your answer does not match the required return format: {}. Reply again with \
         only a JSON value matching this JSON Schema, and nothing else: {format}",
        errors.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> Value {
        json!({
            "agent": "web",
            "task": "Save the page",
            "expected_output": "the path",
            "return_format": {"type": "object", "required": ["path"]}
        })
    }

    #[test]
    fn an_envelope_is_checked_field_by_field() {
        let e = Envelope::parse(&good()).expect("good");
        assert_eq!((e.agent.as_str(), e.input.clone(), e.max_steps), ("web", Value::Null, None));
        let cases = [
            (
                json!({"task": "x", "expected_output": "y", "return_format": {}}),
                "`agent` is missing",
            ),
            (
                json!({"agent": "web", "task": " ", "expected_output": "y", "return_format": {}}),
                "`task` must be a non-empty string",
            ),
            (
                json!({"agent": "web", "task": "x", "expected_output": "y"}),
                "`return_format` is missing",
            ),
            (
                json!({"agent": "web", "task": "x", "expected_output": "y", "return_format": 3}),
                "must be a JSON Schema object",
            ),
            (
                json!({
                    "agent": "web", "task": "x", "expected_output": "y",
                    "return_format": {"type": "nope"}
                }),
                "not a valid JSON Schema",
            ),
            (
                json!({
                    "agent": "web", "task": "x", "expected_output": "y", "return_format": {},
                    "max_steps": 0
                }),
                "`max_steps` must be",
            ),
            (
                json!({
                    "agent": "web", "task": "x", "expected_output": "y", "return_format": {},
                    "context": "all of it"
                }),
                "unknown field `context`",
            ),
        ];
        for (args, wanted) in cases {
            let err = Envelope::parse(&args).expect_err(wanted);
            assert!(err.contains(wanted), "{err} / {wanted}");
        }
        let as_text = json!({
            "agent": "web", "task": "x", "expected_output": "y",
            "return_format": "{\"type\": \"object\"}"
        });
        assert_eq!(
            Envelope::parse(&as_text).expect("a schema written as a string").return_format,
            json!({"type": "object"})
        );
    }

    #[test]
    fn envelope_fields_written_inside_input_are_taken_from_there_and_nothing_else_is() {
        // As the local model wrote them: the input an object as JSON text.
        let args = json!({"agent": "web", "expected_output": "the path",
            "input": "{\"task\": \"Save the page\", \"return_format\": {\"type\": \"object\"}, \
                      \"url\": \"https://example.com/a\"}"});
        let e = Envelope::parse(&args).expect("lifted");
        assert_eq!(
            (e.task.as_str(), &e.return_format, &e.input),
            ("Save the page", &json!({"type": "object"}), &json!({"url": "https://example.com/a"}))
        );
        let only = json!({
            "agent": "web", "expected_output": "y", "return_format": {},
            "input": {"task": "Save the page"}
        });
        assert_eq!(
            Envelope::parse(&only).expect("lifted").input,
            Value::Null,
            "an input that was only the task is gone"
        );
        // A field given beside `input` wins; `input` keeps its own copy.
        let both = json!({
            "agent": "web", "task": "x", "expected_output": "y", "return_format": {},
            "input": {"task": "the data's task"}
        });
        let e = Envelope::parse(&both).unwrap();
        assert_eq!((e.task.as_str(), e.input), ("x", json!({"task": "the data's task"})));
        // Text that is not an object stays the input, and a missing field is still missing.
        let plain = json!({
            "agent": "web", "expected_output": "y", "return_format": {}, "input": "task: save it"
        });
        assert!(Envelope::parse(&plain).expect_err("no task").contains("`task` is missing"));
    }

    #[test]
    fn the_same_work_has_the_same_key() {
        let a = Envelope::parse(&good()).unwrap();
        let mut other = good();
        other["max_steps"] = json!(3);
        assert_eq!(
            a.key(),
            Envelope::parse(&other).unwrap().key(),
            "max_steps does not change the work"
        );
        other["task"] = json!("Save the other page");
        assert_ne!(a.key(), Envelope::parse(&other).unwrap().key());
    }

    #[test]
    fn an_answer_is_read_as_json_where_it_is() {
        let format = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        });
        for answer in [
            r#"{"path": "notes/a.md"}"#,
            "Done:\n```json\n{\"path\": \"notes/a.md\"}\n```",
            "Saved it. {\"path\": \"notes/a.md\"} Bye.",
        ] {
            assert_eq!(
                check_output(answer, &format),
                Ok(json!({"path": "notes/a.md"})),
                "{answer}"
            );
        }
        assert_eq!(
            check_output("I saved it to notes/a.md", &format),
            Err(vec!["the answer is not JSON".to_owned()])
        );
        let wrong = check_output(r#"{"path": 3}"#, &format).expect_err("a number is not a string");
        assert!(wrong[0].contains("at /path") && wrong[0].contains("string"), "{wrong:?}");
        assert!(check_output("{}", &format).expect_err("missing")[0].contains("path"));
    }

    #[test]
    fn the_brief_carries_only_the_envelope() {
        let mut args = good();
        args["input"] = json!("https://example.com/a");
        let brief =
            Envelope::parse(&args).unwrap().brief("fetches pages", Some("Save under notes/."));
        for part in [
            "[worker: web]",
            "fetches pages",
            "Save under notes/.",
            "Task: Save the page",
            "Input:\nhttps://example.com/a",
            "Expected output: the path",
            "asked for the result as JSON",
        ] {
            assert!(brief.contains(part), "{part} in {brief}");
        }
    }
}
