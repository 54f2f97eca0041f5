//! What a component says about how it was built: the `producers` sections of the component and
//! of every module inside it, and the language toolchain they point to. Shown to operators by
//! `reach skills inspect`; never used to decide anything, since a component can say anything.

use crate::text::escape_for_terminal;
use serde::Serialize;

/// How a component was built, as far as it says.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Toolchain {
    /// The source language and the tool that made the component, when the component names
    /// them, e.g. `Python (componentize-py)`, `JavaScript (ComponentizeJS)`, `Rust (rustc …)`.
    pub language: Option<String>,
    /// Every `language`, `processed-by` and `sdk` entry, deduplicated, in the order found:
    /// `field: name version`.
    pub producers: Vec<String>,
}

/// Whose build a component is. The interpreters' toolchains embed their runtime in Rust or
/// C, so their `producers` name Rust or C; their own marks (names the embedded runtime exports
/// or keeps) are checked first.
const MARKS: &[(&[u8], &str)] = &[
    (b"componentize_py_runtime", "Python (componentize-py)"),
    (b"componentize-js", "JavaScript (ComponentizeJS)"),
    (b"StarlingMonkey", "JavaScript (ComponentizeJS)"),
];

/// Read what `wasm` (a component's bytes) says about its toolchain. A file that does not
/// parse says nothing.
pub fn toolchain(wasm: &[u8]) -> Toolchain {
    let mut producers: Vec<String> = Vec::new();
    let mut languages: Vec<String> = Vec::new();
    let mut compilers: Vec<String> = Vec::new();
    // `parse_all` walks the modules and components nested inside too; a malformed part
    // ends the walk with what was read before it.
    for payload in wasmparser::Parser::new(0).parse_all(wasm) {
        let Ok(wasmparser::Payload::CustomSection(section)) = payload else {
            if payload.is_err() {
                break;
            }
            continue;
        };
        let wasmparser::KnownCustom::Producers(reader) = section.as_known() else { continue };
        for field in reader.into_iter().flatten() {
            for value in field.values.into_iter().flatten() {
                // The component's own words, shown on a terminal: escaped here, once.
                let (name, version) =
                    (escape_for_terminal(value.name), escape_for_terminal(value.version));
                let value = wasmparser::ProducersFieldValue { name: &name, version: &version };
                let entry = format!(
                    "{}: {} {}",
                    escape_for_terminal(field.name),
                    value.name,
                    value.version
                )
                .trim_end()
                .to_owned();
                if !producers.contains(&entry) {
                    producers.push(entry);
                }
                let (list, item) = match field.name {
                    "language" => (&mut languages, value.name.to_owned()),
                    "processed-by" if value.name == "rustc" => {
                        (&mut compilers, entry_tail(value.name, value.version))
                    }
                    _ => continue,
                };
                if !list.contains(&item) {
                    list.push(item);
                }
            }
        }
    }
    let marked = MARKS
        .iter()
        .find(|(mark, _)| memchr::memmem::find(wasm, mark).is_some())
        .map(|(_, language)| (*language).to_owned());
    let language = marked.or_else(|| {
        (!languages.is_empty()).then(|| match compilers.as_slice() {
            [] => languages.join(", "),
            compilers => format!("{} ({})", languages.join(", "), compilers.join(", ")),
        })
    });
    Toolchain { language, producers }
}

/// `rustc 1.95.0`, without the commit and date rustc adds.
fn entry_tail(name: &str, version: &str) -> String {
    let version = version.split_whitespace().next().unwrap_or_default();
    format!("{name} {version}").trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_component_says_reaches_the_terminal_escaped() {
        let wasm = wat::parse_str(
            r#"(component (core module (@producers (language "Rust\u{1b}[2J" "1"))))"#,
        )
        .unwrap();
        let found = toolchain(&wasm);
        let language = found.language.unwrap();
        assert!(!language.contains('\u{1b}'), "{language:?}");
        assert!(language.starts_with("Rust"), "{language:?}");
        assert!(found.producers.iter().all(|p| !p.contains('\u{1b}')), "{:?}", found.producers);
    }

    #[test]
    fn a_module_without_producers_says_nothing() {
        let wasm = wat::parse_str("(component)").unwrap();
        assert_eq!(toolchain(&wasm), Toolchain::default());
        assert_eq!(toolchain(b"not wasm"), Toolchain::default());
    }
}
