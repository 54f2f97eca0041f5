//! How many tokens a model can read at once: the budget compaction works
//! against. In order of trust: what the operator wrote (`[model]
//! context_tokens`), what the server says about the model it serves, what
//! is known of common models by name, and a cautious default.
//!
//! Servers that say: llama.cpp's `llama-server` (`meta.n_ctx` in `GET
//! /v1/models` — the context it was started with, not the model's training
//! length), vLLM (`max_model_len`), and routers that list `context_length`.

use serde_json::Value;

/// The budget for a model nobody says anything about. Large enough not to
/// compact a hosted model's run far too early, small enough for most local
/// servers' default context.
pub const DEFAULT_CONTEXT_TOKENS: u64 = 32_768;

/// Context windows of common model families, by name prefix (lower case).
/// The first match wins, so longer, more specific prefixes come first.
const KNOWN: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
    ("gemini", 1_048_576),
    ("qwen2.5-coder", 32_768),
    ("qwen2.5", 32_768),
    ("qwen3", 32_768),
    ("llama-3", 131_072),
    ("llama3", 131_072),
    ("mistral", 32_768),
];

/// The known context window of `model`, matched by name prefix ignoring
/// case and any `vendor/` part (`openai/gpt-4o` is `gpt-4o`).
pub fn known_context_tokens(model: &str) -> Option<u64> {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    KNOWN.iter().find(|(prefix, _)| name.starts_with(prefix)).map(|(_, n)| *n)
}

/// The context window a `GET …/models` listing gives for `model` (or for
/// the only model listed, as a single-model local server names it
/// however it was started). `None` when the listing says nothing usable.
pub fn from_models_listing(listing: &Value, model: &str) -> Option<u64> {
    let data = listing.get("data")?.as_array()?;
    let entry = data
        .iter()
        .find(|m| m.get("id").and_then(Value::as_str) == Some(model))
        .or_else(|| (data.len() == 1).then(|| &data[0]))?;
    let said = entry
        .pointer("/meta/n_ctx")
        .or_else(|| entry.get("max_model_len"))
        .or_else(|| entry.get("context_length"))
        .or_else(|| entry.get("context_window"))?;
    said.as_u64().filter(|n| (256..=100_000_000).contains(n))
}

/// The budget to work against, from what each source said.
pub fn resolve(configured: Option<u64>, server: Option<u64>, model: &str) -> (u64, &'static str) {
    if let Some(n) = configured {
        return (n, "configured");
    }
    if let Some(n) = server {
        return (n, "server");
    }
    match known_context_tokens(model) {
        Some(n) => (n, "known model"),
        None => (DEFAULT_CONTEXT_TOKENS, "default"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn common_models_are_known_by_prefix() {
        assert_eq!(known_context_tokens("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_context_tokens("openai/GPT-4.1-mini"), Some(1_047_576));
        assert_eq!(known_context_tokens("gpt-4"), Some(8_192));
        assert_eq!(known_context_tokens("claude-sonnet-4-5"), Some(200_000));
        assert_eq!(known_context_tokens("qwen2.5-coder-1.5b-instruct"), Some(32_768));
        assert_eq!(known_context_tokens("my-own-model"), None);
    }

    #[test]
    fn servers_say_it_in_their_model_listing() {
        let llama =
            json!({"data": [{"id": "qwen", "meta": {"n_ctx": 12288, "n_ctx_train": 32768}}]});
        assert_eq!(from_models_listing(&llama, "qwen"), Some(12_288));
        // A single-model server answers whatever name it was asked by.
        assert_eq!(from_models_listing(&llama, "other-name"), Some(12_288));
        let vllm = json!({
            "data": [{"id": "a", "max_model_len": 4096}, {"id": "b", "max_model_len": 8192}],
        });
        assert_eq!(from_models_listing(&vllm, "b"), Some(8_192));
        assert_eq!(from_models_listing(&vllm, "c"), None);
        let openai = json!({"data": [{"id": "gpt-4o", "owned_by": "openai"}]});
        assert_eq!(from_models_listing(&openai, "gpt-4o"), None);
        assert_eq!(
            from_models_listing(&json!({"data": [{"id": "x", "context_length": 3}]}), "x"),
            None,
            "implausible"
        );
        assert_eq!(from_models_listing(&json!("nonsense"), "x"), None);
    }

    #[test]
    fn the_operator_wins_then_the_server_then_the_name() {
        assert_eq!(resolve(Some(2000), Some(12288), "gpt-4o"), (2000, "configured"));
        assert_eq!(resolve(None, Some(12288), "gpt-4o"), (12288, "server"));
        assert_eq!(resolve(None, None, "gpt-4o"), (128_000, "known model"));
        assert_eq!(resolve(None, None, "x"), (DEFAULT_CONTEXT_TOKENS, "default"));
    }
}
