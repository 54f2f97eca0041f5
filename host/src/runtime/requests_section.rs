//! A component's requests section (`agent-reach:requests`): read from
//! wherever it is in the component, and added to a built one. A Rust guest's
//! `requests!` puts it in its core module; `reach skill requests --set`
//! appends it to any component (Python, JavaScript, Go…) after its build,
//! at the component's top level, where a custom section is valid too.

use crate::policy::{REQUESTS_SECTION, Requests};

/// Longest requests section read: a list of folders and hosts, not a file.
pub const MAX_BYTES: usize = 64 * 1024;

/// The text of the requests section, `None` when the component has none, an
/// error saying why when it cannot be used (twice, too long, not UTF-8). A
/// file that does not parse has none: loading it says what is wrong.
pub fn read(wasm: &[u8]) -> Result<Option<String>, String> {
    let mut found: Option<String> = None;
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let Ok(wasmparser::Payload::CustomSection(section)) = payload else { continue };
        if section.name() != REQUESTS_SECTION {
            continue;
        }
        let data = section.data();
        if found.is_some() {
            return Err(format!("two `{REQUESTS_SECTION}` sections; a component has one"));
        }
        if data.len() > MAX_BYTES {
            return Err(format!(
                "the `{REQUESTS_SECTION}` section is {} KiB; at most {} KiB are read",
                data.len() >> 10,
                MAX_BYTES >> 10
            ));
        }
        let text = std::str::from_utf8(data)
            .map_err(|_| format!("the `{REQUESTS_SECTION}` section is not UTF-8 text"))?;
        found = Some(text.to_owned());
    }
    Ok(found)
}

/// `wasm` with `requests` appended as its requests section, written as the
/// canonical TOML the host reads back. Refused when `wasm` is not a
/// component or already carries requests (rebuild it, or change the
/// `requests!` in its source): a component has one section, never two.
pub fn with_requests(wasm: &[u8], requests: &Requests) -> Result<Vec<u8>, String> {
    if !wasmparser::Parser::is_component(wasm) {
        return Err("not a WebAssembly component (build it for wasm32-wasip2 first)".into());
    }
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        match payload {
            Err(e) => return Err(format!("not a valid component: {e}")),
            Ok(wasmparser::Payload::CustomSection(s)) if s.name() == REQUESTS_SECTION => {
                return Err(format!(
                    "it already carries a `{REQUESTS_SECTION}` section; rebuild it, then set \
                     the requests once (a Rust skill's come from `requests!` in its source)"
                ));
            }
            Ok(_) => {}
        }
    }
    let text = toml::to_string(requests).map_err(|e| format!("cannot write the requests: {e}"))?;
    let mut payload = Vec::with_capacity(text.len() + REQUESTS_SECTION.len() + 8);
    leb128(REQUESTS_SECTION.len(), &mut payload);
    payload.extend_from_slice(REQUESTS_SECTION.as_bytes());
    payload.extend_from_slice(text.as_bytes());
    let mut out = Vec::with_capacity(wasm.len() + payload.len() + 6);
    out.extend_from_slice(wasm);
    out.push(0); // custom section id
    leb128(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    Ok(out)
}

/// Unsigned LEB128, as section sizes are written.
fn leb128(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest component: its preamble (magic, version 0x0d, layer 1).
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\0\x01\0";

    #[test]
    fn set_requests_read_back_the_same() {
        let requests = Requests::from_toml("net = [\"api.example.com\"]\nenv = [\"TZ\"]").unwrap();
        let wasm = with_requests(EMPTY_COMPONENT, &requests).unwrap();
        let text = read(&wasm).unwrap().expect("a section");
        assert_eq!(Requests::from_toml(&text).unwrap(), requests);
        // Long enough for a two-byte size.
        let many = Requests {
            read: (0..60).map(|i| format!("./folder-number-{i}")).collect(),
            ..Requests::default()
        };
        let wasm = with_requests(EMPTY_COMPONENT, &many).unwrap();
        assert_eq!(Requests::from_toml(&read(&wasm).unwrap().unwrap()).unwrap(), many);
    }

    #[test]
    fn a_second_section_and_a_core_module_are_refused() {
        let requests = Requests::from_toml("env = [\"TZ\"]").unwrap();
        let once = with_requests(EMPTY_COMPONENT, &requests).unwrap();
        let again = with_requests(&once, &requests).unwrap_err();
        assert!(again.contains("already carries"), "{again}");
        let module = b"\0asm\x01\0\0\0";
        assert!(
            with_requests(module, &requests).unwrap_err().contains("not a WebAssembly component")
        );
    }
}
