//! What a skill *asks* for, held against what the table *grants*.
//!
//! A skill may say which folders, hosts, credentials and environment
//! variables it needs: a bundle in its `SKILL.md` metadata
//! (`agent-reach.read: "./logs"`), a component in a custom section named
//! [`SECTION`] holding the same keys as TOML. A request grants nothing:
//! the table alone does. What requests are for is the operator's review —
//! `reach skills inspect` and `reach policy check` show each request beside
//! the grant that answers it (or the refusal that will follow), every grant
//! nobody asked for, and `reach policy suggest` prints the narrowest table
//! lines that would grant exactly what is asked.
//!
//! ```
//! use agent_reach::policy::{Policy, Requests};
//! use std::path::Path;
//!
//! let requests = Requests::from_toml("read = [\"./logs\"]\nnet = [\"api.example.com\"]")?;
//! let policy = Policy::parse(
//!     "[skills.triage]\nread = [\"./logs\"]\nnet = [\"docs.rs\"]\n",
//!     Path::new("reach.toml"),
//!     Path::new("/srv/agent"),
//! )
//! .unwrap();
//! let rows = requests.compare(&policy.grants("triage"), Path::new("/srv/agent"));
//! let says: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
//! assert_eq!(says, [
//!     "read ./logs: granted (read ./logs)",
//!     "net api.example.com: requested, not granted: will be refused",
//!     "net docs.rs: granted, not requested",
//! ]);
//! # Ok::<(), String>(())
//! ```

use super::SkillGrants;
use super::folders::{lexical_normalize, resolve_folder};
use super::hosts::HostPattern;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

/// The custom section a component carries its requests in (TOML, the keys
/// of [`Requests`]). A custom section, not a WIT field, so components built
/// before requests existed load unchanged.
pub const SECTION: &str = "agent-reach:requests";

/// The prefix of the `SKILL.md` `metadata` keys that hold a bundle's requests.
pub const METADATA_PREFIX: &str = "agent-reach.";

/// Most entries in one list of requests: a skill asking for more is
/// described, not believed.
const MAX_ENTRIES: usize = 64;

/// What a skill asks to be granted. The keys are the table's own, so a
/// request reads like the line that would grant it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requests {
    /// Folders to read, written as in the table (relative to its folder).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<String>,
    /// Folders to write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<String>,
    /// Hosts to reach, as `net` patterns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub net: Vec<String>,
    /// Hosts the skill needs a credential for (the host adds it at egress).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub credentials: Vec<String>,
    /// Host environment variables to pass in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
}

/// One kind of capability.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// A folder, read-only.
    Read,
    /// A folder, read-write.
    Write,
    /// A host.
    Net,
    /// A credential for a host.
    Credentials,
    /// An environment variable.
    Env,
}

impl Capability {
    /// Every kind, in the order they are shown.
    pub const ALL: [Capability; 5] = [
        Capability::Read,
        Capability::Write,
        Capability::Net,
        Capability::Credentials,
        Capability::Env,
    ];

    /// The table key (and request key) for this kind.
    pub fn key(self) -> &'static str {
        match self {
            Capability::Read => "read",
            Capability::Write => "write",
            Capability::Net => "net",
            Capability::Credentials => "credentials",
            Capability::Env => "env",
        }
    }
}

/// How the table answers one request (or one grant nobody requested).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "by")]
pub enum Answer {
    /// Requested and granted, by the grant named (as the table wrote it).
    Granted(String),
    /// Requested, not granted: calls that need it will be refused.
    Refused,
    /// Granted, not requested: more than the skill says it needs.
    NotRequested,
}

/// One line of the side-by-side view.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Row {
    /// What kind of capability.
    pub capability: Capability,
    /// The folder, host or variable, as requested (or granted).
    pub item: String,
    /// What the table makes of it.
    #[serde(flatten)]
    pub answer: Answer,
}

/// `net api.example.com: requested, not granted: will be refused`.
impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.capability.key(), self.item)?;
        match &self.answer {
            Answer::Granted(by) => write!(f, "granted ({by})"),
            Answer::Refused => f.write_str("requested, not granted: will be refused"),
            Answer::NotRequested => f.write_str("granted, not requested"),
        }
    }
}

impl Requests {
    /// Parse the TOML of a component's [`SECTION`]. The error says which
    /// key was wrong.
    pub fn from_toml(text: &str) -> Result<Requests, String> {
        let requests: Requests = toml::from_str(text).map_err(|e| {
            format!(
                "the `{SECTION}` section is not valid: {}; it holds lists named read, write, net, \
                 credentials and env",
                e.message()
            )
        })?;
        requests.checked()
    }

    /// The requests among a bundle's `metadata` (keys [`METADATA_PREFIX`]`KIND`,
    /// values lists separated by commas or spaces), and a warning for each
    /// key under the prefix that is not one of them.
    pub fn from_metadata(metadata: &BTreeMap<String, String>) -> (Requests, Vec<String>) {
        let mut requests = Requests::default();
        let mut warnings = Vec::new();
        for (key, value) in metadata {
            let Some(kind) = key.strip_prefix(METADATA_PREFIX) else { continue };
            let items = value
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty())
                .map(str::to_owned);
            match Capability::ALL.into_iter().find(|c| c.key() == kind) {
                Some(c) => requests.list_mut(c).extend(items),
                None => warnings.push(format!(
                    "`metadata.{key}` is not a request this host knows (use {}); ignored",
                    Capability::ALL.map(|c| format!("{METADATA_PREFIX}{}", c.key())).join(", ")
                )),
            }
        }
        match requests.checked() {
            Ok(requests) => (requests, warnings),
            Err(why) => {
                warnings.push(format!("{why}; the requests are ignored"));
                (Requests::default(), warnings)
            }
        }
    }

    /// True when nothing is requested.
    pub fn is_empty(&self) -> bool {
        Capability::ALL.into_iter().all(|c| self.list(c).is_empty())
    }

    /// The requests of one kind.
    pub fn list(&self, capability: Capability) -> &[String] {
        match capability {
            Capability::Read => &self.read,
            Capability::Write => &self.write,
            Capability::Net => &self.net,
            Capability::Credentials => &self.credentials,
            Capability::Env => &self.env,
        }
    }

    fn list_mut(&mut self, capability: Capability) -> &mut Vec<String> {
        match capability {
            Capability::Read => &mut self.read,
            Capability::Write => &mut self.write,
            Capability::Net => &mut self.net,
            Capability::Credentials => &mut self.credentials,
            Capability::Env => &mut self.env,
        }
    }

    /// What `self` requests that `before` did not: how an upgrade's
    /// requests grew.
    pub fn added_since(&self, before: &Requests) -> Requests {
        let mut added = Requests::default();
        for c in Capability::ALL {
            let old = before.list(c);
            *added.list_mut(c) =
                self.list(c).iter().filter(|i| !old.contains(i)).cloned().collect();
        }
        added
    }

    /// Every request and every grant side by side: each request with the
    /// grant that answers it or [`Answer::Refused`], then each grant no
    /// request needs. `base_dir` is the table's folder, where relative
    /// folders start.
    pub fn compare(&self, grants: &SkillGrants, base_dir: &Path) -> Vec<Row> {
        let mut rows = Vec::new();
        let mut used: Vec<(Capability, String)> = Vec::new();
        for c in Capability::ALL {
            for item in self.list(c) {
                let answer = match answering_grant(c, item, grants, base_dir) {
                    Some(by) => {
                        used.push(by.clone());
                        Answer::Granted(format!("{} {}", by.0.key(), by.1))
                    }
                    None => Answer::Refused,
                };
                rows.push(Row { capability: c, item: item.clone(), answer });
            }
        }
        // A credential is useless without the network to its host, so the
        // `net` grant that reaches a requested credential's host is needed too.
        for row in &rows {
            if let (Capability::Credentials, Answer::Granted(_)) = (row.capability, &row.answer)
                && let Some(by) = answering_grant(Capability::Net, &row.item, grants, base_dir)
            {
                used.push(by);
            }
        }
        for (c, item) in granted(grants) {
            if !used.contains(&(c, item.clone())) {
                rows.push(Row { capability: c, item, answer: Answer::NotRequested });
            }
        }
        rows
    }

    /// The narrowest table lines for `skill` that grant what is requested:
    /// printed for the operator to read and paste, never written anywhere.
    pub fn suggest(&self, skill: &str) -> String {
        let quoted = |items: &[String]| {
            items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>().join(", ")
        };
        let mut out = format!("[skills.{skill}]\n");
        // A folder asked for both ways is granted once, writable.
        let read: Vec<String> =
            self.read.iter().filter(|r| !self.write.contains(r)).cloned().collect();
        for (key, items) in [("read", &read), ("write", &self.write), ("env", &self.env)] {
            if !items.is_empty() {
                out.push_str(&format!("{key} = [{}]\n", quoted(items)));
            }
        }
        let mut net = self.net.clone();
        for host in &self.credentials {
            if !net.contains(host) {
                net.push(host.clone());
            }
        }
        if !net.is_empty() {
            out.push_str(&format!("net = [{}]\n", quoted(&net)));
        }
        for host in &self.credentials {
            out.push_str(&format!(
                "\n[[skills.{skill}.credentials]]\nhost = {host:?}\n\
                 env = \"…\"                # the variable holding the secret (or file = \"…\")\n\
                 header = \"Authorization\"  # or query = \"…\": how the service expects it\n\
                 prefix = \"Bearer \"\n"
            ));
        }
        out
    }

    /// Check every entry and bound the lists.
    fn checked(mut self) -> Result<Requests, String> {
        for c in Capability::ALL {
            let list = self.list_mut(c);
            list.dedup();
            if list.len() > MAX_ENTRIES {
                return Err(format!(
                    "{} {} requests; at most {MAX_ENTRIES} are read",
                    list.len(),
                    c.key()
                ));
            }
            for item in list.iter() {
                check_item(c, item)
                    .map_err(|why| format!("requested {} {item:?}: {why}", c.key()))?;
            }
        }
        Ok(self)
    }
}

fn check_item(c: Capability, item: &str) -> Result<(), String> {
    match c {
        Capability::Read | Capability::Write => {
            if item.is_empty() || item.starts_with('~') || item.contains('\0') {
                return Err("write a folder such as \"./logs\"".into());
            }
            Ok(())
        }
        Capability::Net | Capability::Credentials => HostPattern::parse(item).map(drop),
        Capability::Env => {
            let ok = !item.is_empty()
                && item.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && !item.starts_with(|ch: char| ch.is_ascii_digit());
            if ok { Ok(()) } else { Err("a variable name is letters, digits and `_`".into()) }
        }
    }
}

/// Every grant as `(kind, as the table wrote it)`.
fn granted(grants: &SkillGrants) -> Vec<(Capability, String)> {
    let folders = |list: &[super::FolderGrant], c| {
        list.iter().map(move |g| (c, g.declared.clone())).collect::<Vec<_>>()
    };
    let mut out = folders(&grants.read, Capability::Read);
    out.extend(folders(&grants.write, Capability::Write));
    out.extend(grants.net.patterns().iter().map(|p| (Capability::Net, p.to_string())));
    out.extend(grants.credentials.iter().map(|c| (Capability::Credentials, c.target())));
    out.extend(grants.env.iter().map(|e| (Capability::Env, e.clone())));
    out
}

/// The grant that answers one request, if any.
fn answering_grant(
    c: Capability,
    item: &str,
    grants: &SkillGrants,
    base_dir: &Path,
) -> Option<(Capability, String)> {
    match c {
        Capability::Read | Capability::Write => {
            let wanted = resolve_folder(item, base_dir)
                .map(|g| g.path)
                .unwrap_or_else(|_| lexical_normalize(&base_dir.join(item)));
            let lists: &[(&[super::FolderGrant], Capability)] = if c == Capability::Read {
                &[(&grants.read, Capability::Read), (&grants.write, Capability::Write)]
            } else {
                &[(&grants.write, Capability::Write)]
            };
            lists.iter().find_map(|(list, kind)| {
                list.iter().find(|g| g.allows(&wanted)).map(|g| (*kind, g.declared.clone()))
            })
        }
        Capability::Net => {
            let wanted = HostPattern::parse(item).ok()?;
            grants
                .net
                .patterns()
                .iter()
                .find(|g| g.covers(&wanted))
                .map(|g| (Capability::Net, g.to_string()))
        }
        Capability::Credentials => {
            let wanted = HostPattern::parse(item).ok()?;
            grants
                .credentials
                .iter()
                .find(|cred| {
                    HostPattern::parse(&cred.target()).is_ok_and(|target| target.covers(&wanted))
                })
                .map(|cred| (Capability::Credentials, cred.target()))
        }
        Capability::Env => {
            grants.env.iter().find(|e| *e == item).map(|e| (Capability::Env, e.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    fn grants(table: &str) -> SkillGrants {
        Policy::parse(table, Path::new("reach.toml"), Path::new("/srv/a")).unwrap().grants("s")
    }

    fn says(requests: &Requests, table: &str) -> Vec<String> {
        requests
            .compare(&grants(table), Path::new("/srv/a"))
            .iter()
            .map(|r| r.to_string())
            .collect()
    }

    #[test]
    fn metadata_requests_are_lists_under_the_prefix() {
        let metadata: BTreeMap<String, String> = [
            ("agent-reach.read", "./logs, ./data"),
            ("agent-reach.net", "api.example.com *.example.org:*"),
            ("agent-reach.env", "TZ"),
            ("agent-reach.nett", "x"),
            ("version", "1.0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        let (r, warnings) = Requests::from_metadata(&metadata);
        assert_eq!(r.read, ["./logs", "./data"]);
        assert_eq!(r.net, ["api.example.com", "*.example.org:*"]);
        assert_eq!(r.env, ["TZ"]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("agent-reach.nett"), "{warnings:?}");
    }

    #[test]
    fn a_bad_request_is_named_and_nothing_is_believed() {
        let bad = [("agent-reach.net".to_owned(), "*.".to_owned())].into_iter().collect();
        let (r, warnings) = Requests::from_metadata(&bad);
        assert!(r.is_empty());
        assert!(warnings[0].contains("requested net \"*.\""), "{warnings:?}");
        let err = Requests::from_toml("nett = [\"a\"]").unwrap_err();
        assert!(err.contains("nett") && err.contains("read, write, net"), "{err}");
        let err = Requests::from_toml("env = [\"A-B\"]").unwrap_err();
        assert!(err.contains("letters, digits"), "{err}");
    }

    #[test]
    fn requests_meet_grants_side_by_side() {
        let r = Requests::from_toml(
            "read = [\"./logs/app\", \"./data\"]\nwrite = [\"./notes\"]\n\
             net = [\"en.wikipedia.org\", \"api.example.com\"]\nenv = [\"TZ\"]\n\
             credentials = [\"api.example.com\"]",
        )
        .unwrap();
        let table = "[skills.s]\nread = [\"./logs\"]\nwrite = [\"./data\"]\n\
                     net = [\"*.wikipedia.org\", \"docs.rs\"]\nenv = [\"TZ\", \"HOME\"]\n";
        assert_eq!(
            says(&r, table),
            [
                "read ./logs/app: granted (read ./logs)",
                "read ./data: granted (write ./data)",
                "write ./notes: requested, not granted: will be refused",
                "net en.wikipedia.org: granted (net *.wikipedia.org)",
                "net api.example.com: requested, not granted: will be refused",
                "credentials api.example.com: requested, not granted: will be refused",
                "env TZ: granted (env TZ)",
                "net docs.rs: granted, not requested",
                "env HOME: granted, not requested",
            ]
        );
    }

    #[test]
    fn a_wildcard_request_needs_a_grant_as_wide() {
        let r = Requests::from_toml("net = [\"*.example.org\"]").unwrap();
        assert_eq!(
            says(&r, "[skills.s]\nnet = [\"www.example.org\"]\n")[0],
            "net *.example.org: requested, not granted: will be refused"
        );
        assert_eq!(
            says(&r, "[skills.s]\nnet = [\"*.example.org\"]\n")[0],
            "net *.example.org: granted (net *.example.org)"
        );
    }

    #[test]
    fn the_suggestion_grants_what_is_asked_and_nothing_else() {
        let r = Requests::from_toml(
            "read = [\"./logs\", \"./notes\"]\nwrite = [\"./notes\"]\nnet = [\"docs.rs\"]\n\
             credentials = [\"api.example.com\"]",
        )
        .unwrap();
        let lines = r.suggest("s");
        let table = lines.replace("env = \"…\"", "env = \"TOKEN\"");
        let policy = Policy::parse(&table, Path::new("reach.toml"), Path::new("/srv/a"))
            .unwrap_or_else(|e| panic!("{e}\n{lines}"));
        let rows = r.compare(&policy.grants("s"), Path::new("/srv/a"));
        assert!(
            rows.iter().all(|row| matches!(row.answer, Answer::Granted(_))),
            "{lines}\n{rows:#?}"
        );
        assert_eq!(rows.len(), 5, "{rows:#?}");
    }

    #[test]
    fn an_upgrade_that_asks_for_more_says_what_is_new() {
        let old = Requests::from_toml("net = [\"docs.rs\"]").unwrap();
        let new = Requests::from_toml("net = [\"docs.rs\", \"evil.example\"]\nenv = [\"AWS_KEY\"]")
            .unwrap();
        let added = new.added_since(&old);
        assert_eq!(added.net, ["evil.example"]);
        assert_eq!(added.env, ["AWS_KEY"]);
        assert!(old.added_since(&new).is_empty());
    }
}
