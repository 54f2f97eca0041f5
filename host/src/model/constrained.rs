//! Tool calls as a constrained JSON reply: instead of offering the tools
//! through the chat template and hoping the model writes its calls the way
//! the template wants, the tools are listed in the system message and every
//! reply must be one JSON object that a JSON Schema allows — a call to one
//! offered tool with arguments its schema accepts, or the final answer.
//! Servers that constrain decoding to a schema (`response_format` of type
//! `json_schema`; llama.cpp turns it into a grammar) then cannot produce an
//! explanation where a call was meant, a call in a shape nobody parses, or an
//! argument name the tool does not know.
//!
//! The harness does not see the difference: [`from_reply`] turns a reply
//! back into an assistant message with tool calls, or with text for the
//! answer. See `ToolFormat::Constrained`.

use super::{Message, Role, ToolCall, ToolSpec};
use serde_json::{Map, Value, json};

/// The reply's key naming what to do: a tool's name, or [`ANSWER`]. It
/// sorts before `arguments`, so the model names the tool before writing its
/// arguments (the schema's properties are generated in key order).
const ACTION: &str = "action";
/// The action that ends the run with `arguments.text` as the answer.
pub const ANSWER: &str = "answer";

/// The part of the system message that says how to reply and lists the
/// tools. The same for the same tools, so a server's prompt cache covers it.
pub fn system_note(tools: &[ToolSpec]) -> String {
    let mut note = String::from(
        "# How to reply\n\
         Every reply is exactly one JSON object:\n\
         - to call a tool: {\"action\": \"<tool name>\", \"arguments\": {…}}; its result comes \
         back in the next message;\n\
         - to finish: {\"action\": \"answer\", \"arguments\": {\"text\": \"<your final answer to \
         the user>\"}} — once the tools have given the facts the task needs, or straight away \
         for small talk or a question the task itself answers.\n\n\
         # Tools\n",
    );
    for tool in tools {
        let mut parameters = tool.parameters.clone();
        if let Some(map) = parameters.as_object_mut() {
            // Noise for the model: the dialect, and a title that repeats the name.
            for key in ["$schema", "title"] {
                map.remove(key);
            }
        }
        note.push_str(&format!(
            "\n## {}\n{}\nArguments (JSON Schema): {parameters}\n",
            tool.name, tool.description
        ));
    }
    note
}

/// The schema every reply must follow: one variant per tool (its name as a
/// constant, its own parameters schema for `arguments`), and the answer.
/// Each tool's `$defs` move to the root under the tool's name, with its
/// `$ref`s rewritten, because a reference resolves against the root.
pub fn reply_schema(tools: &[ToolSpec]) -> Value {
    let mut defs = Map::new();
    let mut variants: Vec<Value> = Vec::with_capacity(tools.len() + 1);
    for tool in tools {
        let mut parameters = tool.parameters.clone();
        if let Some(map) = parameters.as_object_mut() {
            map.remove("$schema");
            for key in ["$defs", "definitions"] {
                if let Some(Value::Object(own)) = map.remove(key) {
                    for (name, mut def) in own {
                        rewrite_refs(&mut def, &tool.name);
                        defs.insert(format!("{}__{name}", tool.name), def);
                    }
                }
            }
        }
        rewrite_refs(&mut parameters, &tool.name);
        variants.push(variant(&tool.name, parameters));
    }
    let answer = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": false,
    });
    variants.push(variant(ANSWER, answer));
    let mut schema = json!({"anyOf": variants});
    if !defs.is_empty() {
        schema["$defs"] = Value::Object(defs);
    }
    schema
}

fn variant(action: &str, arguments: Value) -> Value {
    json!({
        "type": "object",
        "properties": {ACTION: {"const": action}, "arguments": arguments},
        "required": [ACTION, "arguments"],
        "additionalProperties": false,
    })
}

/// `#/$defs/X` (or `#/definitions/X`) → `#/$defs/{tool}__X`, everywhere in `value`.
fn rewrite_refs(value: &mut Value, tool: &str) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map.iter_mut() {
                if key == "$ref"
                    && let Value::String(target) = inner
                    && let Some(name) = target
                        .strip_prefix("#/$defs/")
                        .or_else(|| target.strip_prefix("#/definitions/"))
                {
                    *target = format!("#/$defs/{tool}__{name}");
                } else {
                    rewrite_refs(inner, tool);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_refs(v, tool)),
        _ => {}
    }
}

/// The conversation in this format: the note after the system message,
/// each call the model made as the JSON object it wrote, each answer as the
/// answer object, and each tool result as a user message naming its tool
/// (a `tool` message without native calls is something servers and chat
/// templates reject).
pub fn wire_messages(messages: &[Message], tools: &[ToolSpec]) -> Vec<Value> {
    let note = system_note(tools);
    let mut out = Vec::with_capacity(messages.len() + 1);
    let mut noted = false;
    for (i, message) in messages.iter().enumerate() {
        match message.role {
            Role::System if !noted => {
                noted = true;
                out.push(
                    json!({"role": "system", "content": format!("{}\n\n{note}", message.content)}),
                );
            }
            Role::System => out.push(json!({"role": "system", "content": message.content})),
            Role::User => out.push(json!({"role": "user", "content": message.content})),
            Role::Assistant if message.tool_calls.is_empty() => {
                out.push(json!({
                    "role": "assistant",
                    "content": as_reply(ANSWER, json!({"text": message.content})),
                }));
            }
            Role::Assistant => {
                let calls: Vec<String> = message
                    .tool_calls
                    .iter()
                    .map(|call| {
                        let arguments = serde_json::from_str::<Value>(&call.arguments)
                            .unwrap_or_else(|_| json!(call.arguments));
                        as_reply(&call.name, arguments)
                    })
                    .collect();
                out.push(json!({"role": "assistant", "content": calls.join("\n")}));
            }
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let name = messages[..i]
                    .iter()
                    .rev()
                    .flat_map(|m| m.tool_calls.iter())
                    .find(|c| c.id == id)
                    .map_or("the tool", |c| c.name.as_str());
                out.push(json!({
                    "role": "user",
                    "content": format!("Result of {name}:\n{}", message.content),
                }));
            }
        }
    }
    if !noted {
        out.insert(0, json!({"role": "system", "content": note}));
    }
    out
}

fn as_reply(action: &str, arguments: Value) -> String {
    let mut reply = Map::new();
    reply.insert(ACTION.into(), json!(action));
    reply.insert("arguments".into(), arguments);
    Value::Object(reply).to_string()
}

/// The assistant message a reply stands for: a call (with `id`), or the
/// answer's text. A reply that is not such an object (a server that ignored
/// the schema, a reply cut at the token limit) is left as it is, for the
/// harness to read as it reads any text.
pub fn from_reply(message: Message, id: String) -> Message {
    if !message.tool_calls.is_empty() {
        return message;
    }
    let Ok(Value::Object(mut reply)) = serde_json::from_str::<Value>(message.content.trim()) else {
        return message;
    };
    let Some(Value::String(action)) = reply.remove(ACTION) else { return message };
    let arguments = reply.remove("arguments").unwrap_or_else(|| json!({}));
    if action == ANSWER {
        return match arguments.get("text") {
            Some(Value::String(text)) => Message::assistant(text.clone(), Vec::new()),
            _ => message,
        };
    }
    Message::assistant(
        String::new(),
        vec![ToolCall { id, name: action, arguments: arguments.to_string() }],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec { name: name.into(), description: format!("{name} does things"), parameters }
    }

    #[test]
    fn the_schema_has_one_variant_per_tool_and_the_answer_with_refs_at_the_root() {
        let request = tool(
            "http_api__request",
            json!({
                "$schema": "x",
                "$defs": {"Method": {"enum": ["GET", "POST"]}},
                "type": "object",
                "properties": {"method": {"$ref": "#/$defs/Method"}},
                "required": ["method"],
            }),
        );
        let read = tool(
            "files__read",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        );
        let schema = reply_schema(&[request, read]);
        let variants = schema["anyOf"].as_array().unwrap();
        let actions: Vec<&str> =
            variants.iter().map(|v| v["properties"]["action"]["const"].as_str().unwrap()).collect();
        assert_eq!(actions, ["http_api__request", "files__read", "answer"]);
        assert_eq!(
            variants[0]["properties"]["arguments"]["properties"]["method"]["$ref"],
            "#/$defs/http_api__request__Method"
        );
        assert_eq!(schema["$defs"]["http_api__request__Method"]["enum"], json!(["GET", "POST"]));
        assert!(
            variants[0]["properties"]["arguments"].get("$defs").is_none()
                && variants[0]["properties"]["arguments"].get("$schema").is_none()
        );
    }

    #[test]
    fn replies_become_calls_or_the_answer_and_anything_else_stays_text() {
        let call = from_reply(
            Message::assistant(
                r#"{"action": "files__read", "arguments": {"path": "a.md"}}"#,
                vec![],
            ),
            "c7".into(),
        );
        assert_eq!(
            call.tool_calls,
            vec![ToolCall {
                id: "c7".into(),
                name: "files__read".into(),
                arguments: r#"{"path":"a.md"}"#.into()
            }]
        );
        let answer = from_reply(
            Message::assistant(r#" {"action": "answer", "arguments": {"text": "Priya"}} "#, vec![]),
            "c8".into(),
        );
        assert_eq!((answer.content.as_str(), answer.tool_calls.len()), ("Priya", 0));
        for text in [
            "Hello!",
            r#"{"action": "answer", "arguments": {"text": "cut at the li"#,
            r#"{"answer": 1}"#,
        ] {
            assert_eq!(from_reply(Message::assistant(text, vec![]), "c".into()).content, text);
        }
    }

    #[test]
    fn the_conversation_is_rendered_as_replies_and_named_results() {
        let tools = [tool("files__read", json!({"type": "object"}))];
        let call = ToolCall {
            id: "c1".into(),
            name: "files__read".into(),
            arguments: r#"{"path":"a.md"}"#.into(),
        };
        let messages = [
            Message::system("PRE"),
            Message::user("task"),
            Message::assistant("", vec![call]),
            Message::tool("c1", "hello"),
            Message::assistant("done", vec![]),
        ];
        let wire = wire_messages(&messages, &tools);
        assert!(
            wire[0]["content"].as_str().unwrap().starts_with("PRE\n\n# How to reply")
                && wire[0]["content"].as_str().unwrap().contains("## files__read")
        );
        assert_eq!(wire[2]["content"], r#"{"action":"files__read","arguments":{"path":"a.md"}}"#);
        assert_eq!(
            (wire[3]["role"].as_str(), wire[3]["content"].as_str()),
            (Some("user"), Some("Result of files__read:\nhello"))
        );
        assert_eq!(wire[4]["content"], r#"{"action":"answer","arguments":{"text":"done"}}"#);
    }
}
