//! A model of your own behind the `Model` trait. Here it is a few rules
//! instead of a language model, so the example runs without a network: it
//! lists the folder the task names (its last word), then answers with what
//! the listing holds. Any engine fits the same way: an in-process model,
//! another vendor's API, a scripted model for tests. Needs ./skills
//! (`just skills`).
//!
//!     cargo run -p agent-reach --example custom_model -- wit

use agent_reach::model::{
    ChatFuture, ChatRequest, ChatResponse, Message, Model, Role, ToolCall, estimate_usage,
};
use agent_reach::text::escape_keeping_lines;
use agent_reach::{Agent, AuditSink, Host};
use serde_json::{Value, json};

/// What the rules may reach: reading two folders of the working directory
/// (not all of it: `.reach/` holds the audit logs, which no skill may read).
pub const POLICY: &str = r#"
[skills.files]
level = "auto"
read = ["./wit", "./docs"]
"#;

/// Lists the folder named last in the task, then answers from the listing.
pub struct Rules;

impl Rules {
    /// The next message for a conversation: the call, or the answer once
    /// the tool's result is in.
    fn reply(&self, request: &ChatRequest<'_>) -> Message {
        let Some(result) = request.messages.iter().rev().find(|m| m.role == Role::Tool) else {
            let task = request
                .messages
                .iter()
                .find(|m| m.role == Role::User)
                .map_or("", |m| m.content.as_str());
            let folder = task.split_whitespace().last().unwrap_or(".").trim_end_matches(['.', '?']);
            // The tool by the name the harness offers it under (`skill__tool`).
            let call = ToolCall {
                id: "rules-1".into(),
                name: "files__list".into(),
                arguments: json!({"path": folder}).to_string(),
            };
            return Message::assistant("", vec![call]);
        };
        // A result is JSON: the skill's listing, or an error with a code and a suggestion.
        let result: Value = serde_json::from_str(&result.content).unwrap_or_default();
        let answer = match (result["entries"].as_array(), result["error"].as_str()) {
            (Some(entries), _) => {
                let names: Vec<&str> = entries.iter().filter_map(|e| e["name"].as_str()).collect();
                format!(
                    "{} holds: {}.",
                    result["path"].as_str().unwrap_or("the folder"),
                    names.join(", ")
                )
            }
            (None, Some(error)) => format!("I could not list it: {error}"),
            (None, None) => "The listing was too long to read here.".to_owned(),
        };
        Message::assistant(answer, Vec::new())
    }
}

impl Model for Rules {
    fn chat<'a>(&'a self, request: ChatRequest<'a>) -> ChatFuture<'a> {
        let message = self.reply(&request);
        // No server counts tokens here: an estimate keeps token budgets working.
        let usage =
            estimate_usage(&serde_json::to_string(request.messages).unwrap_or_default(), &message);
        Box::pin(async move { Ok(ChatResponse { message, usage, model: "rules".to_owned() }) })
    }

    fn name(&self) -> &str {
        "rules"
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let host = Host::builder().skills_dir("skills").policy_str(POLICY).build().await?;
    let agent = Agent::builder(host, Rules).audit(AuditSink::Disabled).build()?;
    let mut run = agent.start(format!("List the folder {folder}"))?;
    while let Some(event) = run.next_event().await {
        eprintln!("{event}");
    }
    let report = run.report().await?;
    println!(
        "{}",
        escape_keeping_lines(&report.answer.clone().unwrap_or_else(|| report.summary()))
    );
    Ok(())
}
