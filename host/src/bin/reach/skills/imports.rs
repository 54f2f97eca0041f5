//! What each interface a component imports lets it reach under its grants: the part of
//! `reach skills inspect` that tells an operator, before the first call fails, that a skill
//! importing `wasi:http` has no `net` grant.

use agent_reach::policy::SkillGrants;
use serde::Serialize;

/// One imported interface and what the table makes of it.
#[derive(Debug, Serialize)]
pub struct Import {
    /// Its full name, e.g. `wasi:http/outgoing-handler@0.2.0`.
    pub name: String,
    /// What it can reach under the grants; `None` for what every skill has (clocks, random,
    /// streams, stdio into bounded buffers).
    pub note: Option<String>,
}

/// Each of `imports` with its note under `grants`.
pub fn checked(imports: Vec<String>, grants: &SkillGrants) -> Vec<Import> {
    imports
        .into_iter()
        .map(|name| {
            let note = note(interface(&name), grants);
            Import { name, note }
        })
        .collect()
}

/// `wasi:http/outgoing-handler` of `wasi:http/outgoing-handler@0.2.0`.
fn interface(name: &str) -> &str {
    name.split_once('@').map_or(name, |(interface, _)| interface)
}

fn note(interface: &str, grants: &SkillGrants) -> Option<String> {
    let folders = grants.read.len() + grants.write.len();
    Some(match interface {
        "wasi:http/outgoing-handler" if grants.net.is_empty() => {
            "no `net` grant: every request will be refused".to_owned()
        }
        "wasi:http/outgoing-handler" => format!("requests to {} only", grants.net),
        "wasi:filesystem/preopens" if folders == 0 => {
            "no folder granted: it sees no files".to_owned()
        }
        "wasi:filesystem/preopens" => {
            format!("{} read-only and {} writable folder(s)", grants.read.len(), grants.write.len())
        }
        "wasi:cli/environment" if grants.env.is_empty() => {
            "no variable granted: an empty environment".to_owned()
        }
        "wasi:cli/environment" => format!("only {}", grants.env.join(", ")),
        sockets if sockets.starts_with("wasi:sockets/") => {
            "refused to every skill: no TCP, UDP or name lookups (HTTP goes through wasi:http)"
                .to_owned()
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_without_net_and_files_without_folders_are_pointed_out() {
        let grants = SkillGrants::none("s");
        let notes = checked(
            vec![
                "wasi:clocks/monotonic-clock@0.2.0".into(),
                "wasi:filesystem/preopens@0.2.0".into(),
                "wasi:http/outgoing-handler@0.2.0".into(),
                "wasi:sockets/tcp@0.2.0".into(),
            ],
            &grants,
        );
        let notes: Vec<Option<&str>> = notes.iter().map(|i| i.note.as_deref()).collect();
        assert_eq!(notes[0], None);
        assert_eq!(notes[1], Some("no folder granted: it sees no files"));
        assert_eq!(notes[2], Some("no `net` grant: every request will be refused"));
        assert!(notes[3].unwrap().starts_with("refused to every skill"));
    }
}
