//! Cutting text to a size for messages, logs and prompts, always on a
//! character boundary and marked with `…` where something was left out.

/// `text` whole, or its first `max_chars` characters followed by `…`.
pub(crate) fn shorten_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `text` whole, or at most `max_bytes` bytes of it followed by `…`: for
/// limits on size rather than on what a reader sees.
pub(crate) fn shorten_bytes(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_owned();
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(shorten_chars("héllo", 5), "héllo");
        assert_eq!(shorten_chars("héllo", 2), "hé…");
        assert_eq!(shorten_bytes("héllo", 6), "héllo");
        assert_eq!(shorten_bytes("héllo", 2), "h…", "é is two bytes: cut before it");
    }
}
