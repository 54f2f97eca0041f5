//! Which model `reach run` talks to: flags, then environment variables,
//! then a clear message saying how to configure one or start the local one.

use crate::args::{ModelFlags, Provider, ToolFormatArg};
use agent_reach::model::{
    AnthropicClient, AnthropicConfig, ApiKey, Model, OpenAiClient, OpenAiConfig, ToolFormat,
};
use agent_reach::policy::ModelSettings;

/// The model name the local llama-server recipe serves (`just local-model`).
pub const LOCAL_MODEL: &str = "qwen2.5-coder-1.5b-instruct";
/// Default for api.openai.com when no `--model` is given.
const OPENAI_MODEL: &str = "gpt-4.1-mini";
/// Default for Anthropic when no `--model` is given.
const ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

/// Request timeout for a model served on this machine.
const LOCAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// Most tokens a model on this machine may write in one reply.
const LOCAL_MAX_TOKENS: u32 = 1024;

/// True for `http://127.0.0.1…`, `http://localhost…`, `http://[::1]…`.
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    ["127.", "localhost", "[::1]"].iter().any(|p| rest.starts_with(p))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The client, and its API key (so the key can be masked in the audit
/// log). Flags and environment variables first, then `[model]` in the table.
pub fn build(
    args: &ModelFlags,
    table: &ModelSettings,
) -> anyhow::Result<(Box<dyn Model>, Vec<String>)> {
    let provider = args.provider.unwrap_or(match table.provider.as_deref() {
        Some("anthropic") => Provider::Anthropic,
        _ => Provider::Openai,
    });
    let name = args.model.clone().or_else(|| table.name.clone());
    let base_url =
        args.base_url.clone().filter(|u| !u.trim().is_empty()).or_else(|| table.base_url.clone());
    match provider {
        Provider::Anthropic => {
            let model = name.unwrap_or_else(|| ANTHROPIC_MODEL.to_owned());
            let mut config = AnthropicConfig::from_env(model)?;
            if let Some(url) = base_url {
                config.base_url = url;
            }
            if table.temperature.is_some() {
                config.temperature = table.temperature;
            }
            if let Some(t) = table.timeout_s {
                config.timeout = std::time::Duration::from_secs(t);
            }
            let key: Vec<String> = config.api_key.iter().map(|k| k.expose().to_owned()).collect();
            Ok((Box::new(AnthropicClient::new(config)?), key))
        }
        Provider::Openai => {
            let key = env("OPENAI_API_KEY");
            let explicit = base_url.is_some();
            let Some(base_url) = base_url.or_else(|| {
                key.as_ref().map(|_| agent_reach::model::OPENAI_DEFAULT_BASE_URL.to_owned())
            }) else {
                anyhow::bail!(
                    "no model endpoint is configured.\n  \
                     Start the built-in local model:  just local-model   (then: export \
                     OPENAI_BASE_URL=http://127.0.0.1:8691/v1)\n  \
                     or use any OpenAI-compatible server:  --base-url URL (or OPENAI_BASE_URL, or \
                     base_url in [model] of reach.toml), with OPENAI_API_KEY if it needs one\n  \
                     or Anthropic:  --provider anthropic with ANTHROPIC_API_KEY"
                );
            };
            let default_model = if key.is_some() && !explicit { OPENAI_MODEL } else { LOCAL_MODEL };
            let mut config =
                OpenAiConfig::new(base_url, name.unwrap_or_else(|| default_model.to_owned()));
            config.api_key = key.clone().map(ApiKey::from);
            // A model on this machine's CPU reads a long tool list slowly
            // (minutes for the first request): give it time rather than retry.
            if is_loopback(&config.base_url) {
                config.timeout = LOCAL_TIMEOUT;
                // A small model can loop until its context is full (thousands
                // of tokens, minutes on a CPU); no useful reply is this long.
                config.max_tokens = Some(LOCAL_MAX_TOKENS);
            }
            if table.temperature.is_some() {
                config.temperature = table.temperature;
            }
            if let Some(t) = table.timeout_s {
                config.timeout = std::time::Duration::from_secs(t);
            }
            config.tool_format = match args.tool_format {
                Some(ToolFormatArg::Native) => ToolFormat::Native,
                Some(ToolFormatArg::Constrained) => ToolFormat::Constrained,
                // The table's value was checked when it was read.
                None => {
                    table.tool_format.as_deref().and_then(|f| f.parse().ok()).unwrap_or_default()
                }
            };
            Ok((Box::new(OpenAiClient::new(config)?), key.into_iter().collect()))
        }
    }
}
