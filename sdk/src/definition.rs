//! The skill definition: manifest data plus the handler of each tool, kept
//! together so a tool's schema and its argument decoding cannot drift apart.

use crate::__bindings::exports::agent_reach::skill::guest as wit;
use crate::ToolError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

type Handler = Box<dyn Fn(&str) -> Result<String, ToolError>>;

/// A tool's result as returned to the model: any type that becomes a string.
///
/// Implemented for `String`, `&str` and [`serde_json::Value`]; for your own
/// `Serialize` type return `serde_json::to_value(..)?` or implement this trait.
pub trait Reply {
    /// Turn the value into the text the model receives.
    fn into_reply(self) -> Result<String, ToolError>;
}

impl Reply for String {
    fn into_reply(self) -> Result<String, ToolError> {
        Ok(self)
    }
}

impl Reply for &str {
    fn into_reply(self) -> Result<String, ToolError> {
        Ok(self.to_owned())
    }
}

impl Reply for serde_json::Value {
    fn into_reply(self) -> Result<String, ToolError> {
        // `to_string` would go through `Display` and the formatter, which is
        // several times slower than writing the bytes directly.
        serde_json::to_string(&self)
            .map_err(|e| ToolError::failed(format!("could not encode the result: {e}")))
    }
}

struct ToolDef {
    name: String,
    description: String,
    /// Derived only when the manifest is asked for: the host instantiates a
    /// fresh skill for every call, so work done in `define` is paid per call.
    parameters: fn() -> String,
    examples: Vec<wit::Example>,
    handler: Handler,
}

/// Everything the host learns about a skill, and how to run each tool.
///
/// Built with a chain of calls in [`Skill::define`](crate::Skill::define).
pub struct Definition {
    name: String,
    version: String,
    description: String,
    instructions: Option<String>,
    tools: Vec<ToolDef>,
}

impl Definition {
    /// Start a definition. `name` is `[a-z][a-z0-9_-]*`; `version` is semver
    /// (use `env!("CARGO_PKG_VERSION")`); `description` is one or two
    /// sentences for a model choosing among skills.
    pub fn new(name: &str, version: &str, description: &str) -> Self {
        Definition {
            name: name.to_owned(),
            version: version.to_owned(),
            description: description.to_owned(),
            instructions: None,
            tools: Vec::new(),
        }
    }

    /// Long-form Markdown instructions, shown to a model only when it asks
    /// for this skill.
    pub fn instructions(mut self, markdown: &str) -> Self {
        self.instructions = Some(markdown.to_owned());
        self
    }

    /// Add a tool. The JSON Schema of its parameters is derived from `A`
    /// (doc comments become descriptions); arguments are decoded into `A`
    /// before `handler` runs, and decoding errors become `invalid-arguments`
    /// errors that name the offending field.
    pub fn tool<A, R, F>(mut self, name: &str, description: &str, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + 'static,
        R: Reply,
        F: Fn(A) -> Result<R, ToolError> + 'static,
    {
        let tool_name = name.to_owned();
        let handler: Handler = Box::new(move |json: &str| {
            let args = decode::<A>(&tool_name, json)?;
            handler(args)?.into_reply()
        });
        self.tools.push(ToolDef {
            name: name.to_owned(),
            description: description.to_owned(),
            parameters: schema_json::<A>,
            examples: Vec::new(),
            handler,
        });
        self
    }

    /// Attach an example call to the tool added last. `arguments` is the
    /// JSON arguments object; `result` what the tool answers, if useful.
    ///
    /// # Panics
    /// When no tool has been added yet — a programming error in the skill.
    pub fn example(
        mut self,
        description: &str,
        arguments: serde_json::Value,
        result: Option<&str>,
    ) -> Self {
        let tool = self.tools.last_mut().expect("Definition::example called before any tool");
        tool.examples.push(wit::Example {
            description: description.to_owned(),
            arguments: arguments.to_string(),
            output: result.map(str::to_owned),
        });
        self
    }

    pub(crate) fn to_manifest(&self) -> wit::Manifest {
        wit::Manifest {
            name: self.name.clone(),
            version: self.version.clone(),
            description: self.description.clone(),
            instructions: self.instructions.clone(),
            tools: self
                .tools
                .iter()
                .map(|t| wit::Tool {
                    name: t.name.clone(),
                    description: t.description.clone(),
                    parameters: (t.parameters)(),
                    examples: t.examples.clone(),
                })
                .collect(),
        }
    }

    pub(crate) fn dispatch(&self, tool: &str, arguments: &str) -> Result<String, ToolError> {
        match self.tools.iter().find(|t| t.name == tool) {
            Some(t) => (t.handler)(arguments),
            None => {
                let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
                Err(ToolError::not_found(format!(
                    "{}: no tool named `{tool}`; this skill has: {}",
                    self.name,
                    names.join(", ")
                )))
            }
        }
    }
}

/// Decode arguments, naming the JSON path that failed so the model can fix
/// exactly that field.
fn decode<A: DeserializeOwned>(tool: &str, json: &str) -> Result<A, ToolError> {
    // The fast path first: tracking the path costs a few microseconds per
    // call, and only a failure needs it — so decode again to find where.
    if let Ok(args) = serde_json::from_str(json) {
        return Ok(args);
    }
    let mut de = serde_json::Deserializer::from_str(json);
    match serde_path_to_error::deserialize::<_, A>(&mut de) {
        Ok(args) => Ok(args),
        Err(err) => {
            let path = err.path().to_string();
            let inner = err.into_inner();
            let at = if path == "." { String::new() } else { format!(" at `{path}`") };
            Err(ToolError::invalid_arguments(format!("{tool}: invalid arguments{at}: {inner}")))
        }
    }
}

/// The JSON Schema of `A`'s parameters, as text.
fn schema_json<A: JsonSchema>() -> String {
    serde_json::to_string(&schemars::schema_for!(A)).unwrap_or_else(|_| "{}".to_owned())
}
