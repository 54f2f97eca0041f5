//! Token estimates for servers that do not report usage (some local
//! OpenAI-compatible servers, some proxies). The harness budgets tokens, so
//! a rough number beats none; [`Usage::estimated`] marks it as rough.
//!
//! The rule is the common rule of thumb for English text and code with
//! BPE tokenizers: about four characters per token, rounded up. It
//! overestimates for plain English a little and underestimates for dense
//! JSON and non-Latin scripts; nothing here needs more than the order of
//! magnitude.

use super::{Message, Usage};

/// Characters per token assumed by the estimate.
pub const CHARS_PER_TOKEN: usize = 4;

/// Estimated tokens in `text`: its characters (not bytes, so non-ASCII text
/// is not counted several times over) divided by [`CHARS_PER_TOKEN`],
/// rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    text.chars().count().div_ceil(CHARS_PER_TOKEN) as u64
}

/// Estimated usage of one exchange: the input is the serialized request
/// body as sent (conversation, tool schemas and all, since the model reads
/// every part of it); the output is what the model wrote — the answer's
/// text plus each tool call's name and arguments — without the server's
/// JSON envelope, which the model did not generate.
pub fn estimate_usage(request_body: &str, answer: &Message) -> Usage {
    let written: u64 = estimate_tokens(&answer.content)
        + answer
            .tool_calls
            .iter()
            .map(|call| estimate_tokens(&call.name) + estimate_tokens(&call.arguments))
            .sum::<u64>();
    Usage { input_tokens: estimate_tokens(request_body), output_tokens: written, estimated: true }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolCall;

    #[test]
    fn four_characters_per_token_rounded_up() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        // Characters, not bytes: eight two-byte letters are two tokens.
        assert_eq!(estimate_tokens("ääääääää"), 2);
    }

    #[test]
    fn usage_counts_request_and_what_the_model_wrote() {
        let call = ToolCall {
            id: "c1".into(),
            name: "files__read".into(),
            arguments: r#"{"path":"a.md"}"#.into(),
        };
        let answer = Message::assistant("Reading it.", vec![call]);
        let usage = estimate_usage(&"x".repeat(400), &answer);
        // "Reading it." = 11 chars → 3; name 11 → 3; arguments 15 → 4.
        assert_eq!(usage, Usage { input_tokens: 100, output_tokens: 10, estimated: true });
    }
}
