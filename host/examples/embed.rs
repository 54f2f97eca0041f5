//! Agent Reach inside your program: a host over ./skills (`just skills`)
//! with its table in a string, and a task for an OpenAI-compatible model
//! (OPENAI_BASE_URL and/or OPENAI_API_KEY; REACH_MODEL names it) whose events
//! are printed as they happen. With no model configured, one tool is called
//! directly, through the same checks and sandbox.
//!
//!     cargo run -p agent-reach --example embed -- "Which files are in wit/?"

use agent_reach::model::OpenAiClient;
use agent_reach::text::escape_keeping_lines;
use agent_reach::{Agent, AlwaysConfirm, Host};

const POLICY: &str = r#"
[skills.files]
level = "auto"
read = ["./wit", "./skills-src"]
"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = Host::builder().skills_dir("skills").policy_str(POLICY).build().await?;
    let name = std::env::var("REACH_MODEL").unwrap_or_else(|_| "gpt-4.1-mini".into());
    let Ok(model) = OpenAiClient::from_env(name) else {
        let listing = host.invoke("files", "list", r#"{"path": "wit"}"#, &AlwaysConfirm).await?;
        println!("{}", escape_keeping_lines(&listing));
        return Ok(());
    };
    let key = model.config().api_key.as_ref().map(|k| k.expose().to_owned()).unwrap_or_default();
    let agent = Agent::builder(host, model).secret(key).build()?;
    let task = std::env::args().nth(1).unwrap_or_else(|| "Which files are in wit/?".into());
    let mut run = agent.start(task)?;
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
