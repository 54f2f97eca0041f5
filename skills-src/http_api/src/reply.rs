//! The response body as the model sees it: parsed JSON when it is JSON and
//! complete, otherwise text; never more than the byte cap.

use serde_json::Value;

/// JSON bodies come back as values nested in the reply, so the whole reply
/// stays one parseable document. A truncated or non-JSON body is text
/// (invalid UTF-8 replaced).
pub(crate) fn body(bytes: &[u8], content_type: &str, truncated: bool) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    let looks_json = content_type.contains("json")
        || matches!(bytes.iter().find(|b| !b.is_ascii_whitespace()), Some(b'{' | b'['));
    if looks_json
        && !truncated
        && let Ok(value) = serde_json::from_slice::<Value>(bytes)
    {
        return value;
    }
    Value::String(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_parsed_and_text_stays_text() {
        assert_eq!(body(br#"{"a":[1,2]}"#, "application/json", false), json!({"a": [1, 2]}));
        assert_eq!(body(b" [1]", "text/plain", false), json!([1]), "sniffed");
        assert_eq!(body(b"<html>", "text/html", false), json!("<html>"));
        assert_eq!(
            body(br#"{"a":[1,"#, "application/json", true),
            json!(r#"{"a":[1,"#),
            "a cut body is text"
        );
        assert_eq!(body(b"", "application/json", false), Value::Null);
        assert_eq!(body(b"not json", "application/json", false), json!("not json"));
    }
}
