//! The optional `[model]` table: which model `reach run` asks, for
//! operators who would rather write it down than pass flags. Flags and
//! environment variables win over it.
//!
//! ```toml
//! [model]
//! provider = "openai"                      # or "anthropic"
//! base_url = "http://127.0.0.1:8691/v1"    # any OpenAI-compatible server
//! name = "qwen2.5-coder-1.5b-instruct"
//! temperature = 0.1
//! max_steps = 8
//! token_budget = 50000
//! tool_format = "constrained"              # or "native"
//! context_tokens = 12288                   # default: what the server says, else known by name
//! compact_at = 80                          # percent of context_tokens that starts a compaction
//! timeout_s = 120                          # one request, before it is retried (default 120; 600 on this machine)
//! ```
//! API keys never go here: they come from `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`.

use serde::Deserialize;
use toml::Spanned;

use super::error::{PolicyError, Source};

/// The checked `[model]` table; every field optional.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ModelSettings {
    /// `openai` or `anthropic`.
    pub provider: Option<String>,
    /// Base URL of the API.
    pub base_url: Option<String>,
    /// Model name.
    pub name: Option<String>,
    /// Sampling temperature, 0 to 2.
    pub temperature: Option<f32>,
    /// Most model requests per run.
    pub max_steps: Option<usize>,
    /// Most tokens per run.
    pub token_budget: Option<u64>,
    /// `native` (the API's tool calls) or `constrained` (tools in the
    /// system message, replies constrained to a call or the answer).
    pub tool_format: Option<String>,
    /// Tokens the model reads at once; the budget compaction works against.
    pub context_tokens: Option<u64>,
    /// Percent of `context_tokens` at which a run is compacted.
    pub compact_at: Option<u8>,
    /// Seconds one request may take before it counts as failed (and is
    /// retried like a dropped connection).
    pub timeout_s: Option<u64>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with provider, base_url, name, temperature, max_steps, token_budget, \
                 tool_format, context_tokens, compact_at, timeout_s"
)]
pub(super) struct RawModel {
    provider: Option<Spanned<String>>,
    base_url: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    temperature: Option<Spanned<f64>>,
    max_steps: Option<Spanned<i64>>,
    token_budget: Option<Spanned<i64>>,
    tool_format: Option<Spanned<String>>,
    context_tokens: Option<Spanned<i64>>,
    compact_at: Option<Spanned<i64>>,
    timeout_s: Option<Spanned<i64>>,
}

impl RawModel {
    pub(super) fn resolve(self, src: &Source<'_>) -> Result<ModelSettings, PolicyError> {
        if let Some(p) = &self.provider
            && !matches!(p.get_ref().as_str(), "openai" | "anthropic")
        {
            return Err(src.invalid(
                &p.span(),
                "model.provider",
                format!("{:?} is not a provider; use \"openai\" or \"anthropic\"", p.get_ref()),
            ));
        }
        if let Some(u) = &self.base_url
            && !(u.get_ref().starts_with("http://") || u.get_ref().starts_with("https://"))
        {
            return Err(src.invalid(
                &u.span(),
                "model.base_url",
                format!(
                    "{:?} is not an http(s) URL; e.g. \"http://127.0.0.1:8691/v1\"",
                    u.get_ref()
                ),
            ));
        }
        if let Some(f) = &self.tool_format
            && !matches!(f.get_ref().as_str(), "native" | "constrained")
        {
            return Err(src.invalid(
                &f.span(),
                "model.tool_format",
                format!(
                    "{:?} is not a tool format; use \"native\" or \"constrained\"",
                    f.get_ref()
                ),
            ));
        }
        if let Some(t) = &self.temperature
            && !(0.0..=2.0).contains(t.get_ref())
        {
            return Err(src.invalid(
                &t.span(),
                "model.temperature",
                format!("{} is out of range; use 0 to 2", t.get_ref()),
            ));
        }
        let positive = |v: &Option<Spanned<i64>>, key: &str, max: i64| match v {
            Some(n) if !(1..=max).contains(n.get_ref()) => Err(src.invalid(
                &n.span(),
                key,
                format!("{} is out of range; use 1 to {max}", n.get_ref()),
            )),
            Some(n) => Ok(Some(*n.get_ref())),
            None => Ok(None),
        };
        let max_steps = positive(&self.max_steps, "model.max_steps", 1000)?;
        let token_budget = positive(&self.token_budget, "model.token_budget", i64::MAX)?;
        let timeout_s = positive(&self.timeout_s, "model.timeout_s", 3600)?;
        if let Some(n) = &self.context_tokens
            && !(1024..=100_000_000).contains(n.get_ref())
        {
            return Err(src.invalid(
                &n.span(),
                "model.context_tokens",
                format!(
                    "{} is out of range; use 1024 to 100000000 (the model's context window in \
                     tokens)",
                    n.get_ref()
                ),
            ));
        }
        if let Some(p) = &self.compact_at
            && !(10..=95).contains(p.get_ref())
        {
            return Err(src.invalid(
                &p.span(),
                "model.compact_at",
                format!(
                    "{} is out of range; use a percent from 10 to 95 (default 80)",
                    p.get_ref()
                ),
            ));
        }
        Ok(ModelSettings {
            provider: self.provider.map(Spanned::into_inner),
            base_url: self.base_url.map(Spanned::into_inner),
            name: self.name.map(Spanned::into_inner),
            temperature: self.temperature.map(|t| *t.get_ref() as f32),
            max_steps: max_steps.map(|n| n as usize),
            token_budget: token_budget.map(|n| n as u64),
            tool_format: self.tool_format.map(Spanned::into_inner),
            context_tokens: self.context_tokens.map(|n| *n.get_ref() as u64),
            compact_at: self.compact_at.map(|p| *p.get_ref() as u8),
            timeout_s: timeout_s.map(|n| n as u64),
        })
    }
}
