//! The MCP Skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! the bundles the table serves, to clients that load Agent Skills
//! themselves. `skills/list` and `skills/get` answer with each bundle's
//! entry — its frontmatter as written and every file with its sha256 and
//! size — and `resources/read` of `skill://NAME/PATH` serves a file,
//! checked against the digest the bundle loaded with (a file changed since
//! is refused, never served unverified).
//!
//! Which bundles: those the table names (`[skills.NAME]`), as for tools; a
//! bundle the table does not name is neither listed nor readable. Serving a
//! bundle's files runs nothing: its scripts run only as `NAME__run_script`,
//! in the sandbox, like every other tool.

use crate::Host;
use crate::bundle::{Bundle, read};
use base64::Engine as _;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use rmcp::model::{
    CacheScope, GetSkillResult, ListSkillsResult, Resource, ResourceContents, Skill,
    SkillFrontmatter, SkillResource, SkillResources,
};

/// The extension's identifier, as declared in the server's capabilities.
pub const EXTENSION: &str = rmcp::model::SKILLS_EXTENSION_ID;

/// The URI scheme of a bundle's files.
const SCHEME: &str = "skill://";

/// How long a client may keep a listing or an entry before asking again.
/// Short: a reload can change a bundle at any time, and the digests tell a
/// client when what it kept is stale.
const TTL_MS: u64 = 30_000;

/// The bundles served: active, and named by the table (or every one under
/// the built-in table, as for tools).
fn served(host: &Host) -> impl Iterator<Item = &Bundle> {
    host.registry()
        .active_bundles()
        .filter_map(|entry| entry.active())
        .filter(|bundle| super::tools::served(host, &bundle.name))
}

/// What a URI path segment must not hold as it is (RFC 3986 `pchar`):
/// controls, non-ASCII (always encoded), and the delimiters and unsafe
/// characters — so a file named `my notes.md` or `résumé.md` is a valid URI.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// `skill://NAME/PATH`, each part of `path` percent-encoded. (A bundle's
/// name is lowercase letters, digits and hyphens: nothing to encode.)
pub fn uri(skill: &str, path: &str) -> String {
    let path: Vec<String> =
        path.split('/').map(|part| utf8_percent_encode(part, SEGMENT).to_string()).collect();
    format!("{SCHEME}{skill}/{}", path.join("/"))
}

/// The bundle path a URI's (percent-encoded) path names; `None` when it
/// does not decode to UTF-8. The result is only ever looked up in the
/// bundle's manifest, so a decoded `..` or `/` names nothing.
fn decoded(path: &str) -> Option<String> {
    percent_decode_str(path).decode_utf8().ok().map(std::borrow::Cow::into_owned)
}

/// A bundle's `Skill` entry: the URI of its `SKILL.md`, its frontmatter as
/// written, and the complete list of its files with digest and size (the
/// digests taken when the bundle loaded, which every read is checked
/// against).
pub fn entry(bundle: &Bundle) -> Skill {
    let files = bundle
        .files
        .iter()
        .map(|f| {
            SkillResource::new(uri(&bundle.name, &f.path), format!("sha256:{}", f.sha256), f.bytes)
        })
        .collect();
    let mut frontmatter = SkillFrontmatter::new(bundle.name.clone(), bundle.description.clone());
    for (key, value) in &bundle.frontmatter {
        match key.as_str() {
            // As written, not as trimmed or named after the folder.
            "name" | "description" => {}
            _ => {
                frontmatter.extra.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(serde_json::Value::String(name)) = bundle.frontmatter.get("name") {
        frontmatter.name = name.clone();
    }
    if let Some(serde_json::Value::String(description)) = bundle.frontmatter.get("description") {
        frontmatter.description = description.clone();
    }
    Skill::new(
        uri(&bundle.name, crate::bundle::SKILL_MD),
        frontmatter,
        SkillResources::Files(files),
    )
}

/// The served bundles whose entries the extension's rules accept (the URI's
/// last segment is the frontmatter `name`): a bundle whose frontmatter names
/// another skill is left out of the extension, as a client must refuse it.
fn entries(host: &Host) -> impl Iterator<Item = Skill> + '_ {
    served(host).map(entry).filter(|skill| match skill.validate() {
        Ok(()) => true,
        Err(why) => {
            tracing::warn!(uri = %skill.uri, "bundle not served over the Skills extension: {why}");
            false
        }
    })
}

/// The result of `skills/list`: every served bundle, in one page.
pub fn list(host: &Host) -> ListSkillsResult {
    let mut result = ListSkillsResult::with_all_items(entries(host).collect());
    result.ttl_ms = Some(TTL_MS);
    result.cache_scope = Some(CacheScope::Private);
    result
}

/// The result of `skills/get` for `uri` (a bundle's `SKILL.md`), or the
/// message of the invalid-params error the extension asks for.
pub fn get(host: &Host, uri: &str) -> Result<GetSkillResult, String> {
    let skill = entries(host).find(|s| s.uri == uri).ok_or_else(|| {
        format!(
            "no skill at `{uri}`: skills are skill://NAME/SKILL.md for the bundles the table \
             serves; skills/list lists them"
        )
    })?;
    Ok(GetSkillResult::new(skill).with_ttl_ms(TTL_MS).with_cache_scope(CacheScope::Private))
}

/// One resource per served bundle: its `SKILL.md`, named and described
/// from its frontmatter. Its other files are addressable by URI (the entry
/// lists them) without being listed here.
pub fn resources(host: &Host) -> Vec<Resource> {
    served(host)
        .map(|bundle| {
            let mut resource =
                Resource::new(uri(&bundle.name, crate::bundle::SKILL_MD), bundle.name.clone());
            resource.description = Some(bundle.description.clone());
            resource.mime_type = Some("text/markdown".to_owned());
            resource
        })
        .collect()
}

/// What `resources/read` of a `skill://` URI answers: `None` when the URI
/// is not one (another scheme is someone else's), else the file's content
/// or why it cannot be served.
pub fn read(host: &Host, uri: &str) -> Option<Result<ResourceContents, String>> {
    let rest = uri.strip_prefix(SCHEME)?;
    let Some((skill, path)) = rest.split_once('/') else {
        return Some(Err(format!("`{uri}` names no file: write skill://NAME/PATH")));
    };
    let Some(bundle) = served(host).find(|b| b.name == skill) else {
        return Some(Err(format!(
            "no skill `{skill}` is served: skills/list lists the bundles the table serves"
        )));
    };
    let Some(path) = decoded(path) else {
        return Some(Err(format!("`{uri}` is not percent-encoded UTF-8")));
    };
    Some(contents(bundle, &path, uri))
}

/// A file of `bundle`, digest-checked: text as text, anything else as a blob.
fn contents(bundle: &Bundle, path: &str, uri: &str) -> Result<ResourceContents, String> {
    let bytes = read::bytes(bundle, path).map_err(|e| e.to_string())?;
    let mime = mime_type(path);
    Ok(match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(text, uri).with_mime_type(mime),
        Err(e) => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(e.into_bytes()),
            uri,
        )
        .with_mime_type(mime),
    })
}

/// The media type a file's name suggests.
fn mime_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("py") => "text/x-python",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("toml") => "application/toml",
        Some("yaml" | "yml") => "application/yaml",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("sh") => "text/x-shellscript",
        Some("wasm") => "application/wasm",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        Some("txt" | "log") | None => "text/plain",
        Some(_) => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_with_spaces_or_accents_is_a_valid_uri_and_reads_back() {
        let rows = [
            ("SKILL.md", "skill://notes/SKILL.md"),
            ("references/my notes.md", "skill://notes/references/my%20notes.md"),
            ("assets/résumé #2?.txt", "skill://notes/assets/r%C3%A9sum%C3%A9%20%232%3F.txt"),
            ("scripts/100%.py", "skill://notes/scripts/100%25.py"),
        ];
        for (path, want) in rows {
            let uri = uri("notes", path);
            assert_eq!(uri, want);
            assert!(url::Url::parse(&uri).is_ok(), "{uri} does not parse as a URL");
            let encoded = uri.strip_prefix("skill://notes/").unwrap();
            assert_eq!(decoded(encoded).as_deref(), Some(path));
        }
        assert_eq!(decoded("%FF"), None, "not UTF-8");
    }
}
