//! The operator's permission table, `reach.toml`: what each skill may touch.
//!
//! Deny by default. A skill the table does not list runs at the default
//! level with the default limits and gets **no** folders, **no** network
//! and **no** environment variables. A listed skill gets exactly what its
//! table says, nothing inherited from anywhere but `[defaults]`.
//!
//! ```toml
//! [defaults]                 # every key optional
//! level = "confirm"          # auto | confirm | deny (or L2 | L1 | L0), any case
//! memory_mb = 64             # 1..=4096
//! timeout_ms = 10000         # 1..=3600000
//! max_output_kb = 256        # 1..=1048576
//!
//! [skills.files]             # skill names: [a-z][a-z0-9_-]*
//! level = "auto"
//! read  = ["./docs", "/var/log/app"]   # read-only inside the skill
//! write = ["./notes"]                  # read-write (a folder in both is writable)
//! net   = ["api.example.com", "*.example.org:*", "[::1]:8080"]
//! env   = ["LANG"]                     # host variables passed through
//! memory_mb = 128                      # overrides [defaults] for this skill
//! # sha256 = "…"                       # only this file may be `files`
//!                                      # (`reach skills pin files`)
//!
//! [skills.files.tools.write]
//! level = "confirm"                    # per-tool override; `level` only
//!
//! [agents.reader]                      # optional worker profiles a run may delegate to
//! description = "Reads the docs and answers questions about them."
//! skills = ["files"]                   # each listed in [skills.*]; "agents" lets it delegate
//!
//! [delegation]                         # optional; the defaults are
//! max_workers = 4                      # max_depth 2, max_delegations 16, worker_max_steps 6
//! ```
//!
//! The keys of a profile (also `model`, `instructions`, `max_steps`,
//! `token_budget`) and of `[delegation]` are those of [`AgentProfile`] and
//! [`DelegationSettings`].
//!
//! Relative folders are relative to **the directory containing the policy
//! file**, not the working directory, so a table means the same thing
//! wherever `reach` is started. `..` is resolved in the text first; then, if
//! the folder exists, symlinks are resolved so the grant names the real
//! folder. A folder that does not exist yet is kept with
//! [`FolderGrant::exists`] false. Host patterns are described on
//! [`HostPattern`].
//!
//! Loading is two steps: strict parsing (unknown keys are errors, so a typo
//! cannot silently drop a permission), then resolution into [`SkillGrants`]
//! with absolute paths and compiled patterns. Every error names the file,
//! line, column and key:
//! `reach.toml:7:9: skills.files.net[0]: "*." is not a valid host pattern: …`.
//!
//! ```
//! use std::path::Path;
//! use agent_reach::policy::{Level, Policy};
//!
//! let text = r#"
//! [skills.web]
//! level = "auto"
//! net = ["api.example.com", "*.wikipedia.org"]
//!
//! [skills.web.tools.post]
//! level = "deny"
//! "#;
//! let policy = Policy::parse(text, Path::new("reach.toml"), Path::new("/srv/agent"))?;
//! let web = policy.grants("web");
//! assert_eq!(web.level_for("get"), Level::Auto);
//! assert_eq!(web.level_for("post"), Level::Deny);
//! assert!(web.net.allows("https", "en.wikipedia.org", 443).is_some());
//! assert!(web.net.allows("https", "wikipedia.org", 443).is_none());
//!
//! let stranger = policy.grants("stranger");
//! assert!(!stranger.listed && stranger.net.is_empty() && stranger.read.is_empty());
//! # Ok::<(), agent_reach::policy::PolicyError>(())
//! ```

mod address;
mod agents;
mod credentials;
mod cross_checks;
mod error;
mod folders;
mod hosts;
mod journal;
mod level;
mod memory;
mod model;
mod raw;
mod requests;
mod trust;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use address::is_internal_address;
pub use agents::{AgentProfile, DELEGATE_SKILL, DelegationSettings};
pub use credentials::{Credential, Injection, Secret, SecretSource};
pub use error::PolicyError;
pub use folders::{FolderGrant, ProtectedPath};
pub use hosts::{HostPattern, NetAllowlist};
pub use level::{Level, LevelParseError};
pub use memory::{DEFAULT_MEMORY_PATH, MEMORY_PASSWORD_ENV, MemorySettings, check_url};
pub use model::ModelSettings;
pub use requests::{
    Answer, Capability, METADATA_PREFIX as REQUESTS_METADATA_PREFIX, Requests, Row as RequestRow,
    SECTION as REQUESTS_SECTION,
};
pub use trust::{SignedBy, SkillTrust, key_fingerprint};

use error::Source;
use raw::{ListedSkill, RawPolicy};

/// How [`Policy::builtin`] names itself in messages.
const BUILTIN_ORIGIN: &str = "<built-in>";

/// Skill names the harness's built-in tools use: a skill named one of
/// these would be offered under a built-in's own name (`memory__remember`,
/// `agents__delegate`…), and a person asked to confirm `memory.remember`
/// could not tell which of the two would run. The registry refuses such a
/// skill at load; the table refuses `[skills.NAME]` for them, as no skill
/// can have the grants.
pub const RESERVED_SKILL_NAMES: [&str; 4] = ["memory", "skills", "agents", "workbench"];

/// The built-in tools that reserve [`RESERVED_SKILL_NAMES`], for messages.
pub const BUILTIN_TOOL_NAMES: &str = "memory__remember, memory__recall, skills__open, \
                                      skills__instructions, agents__delegate, workbench__read";

/// A loaded, checked permission table. Two tables are equal when they
/// grant the same and say so at the same lines (a reload compares them).
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    origin: PathBuf,
    base_dir: PathBuf,
    default_level: Level,
    default_limits: Limits,
    /// In file order.
    skills: Vec<ListedSkill>,
    model: ModelSettings,
    memory: MemorySettings,
    /// `[agents.NAME]`, in name order.
    agents: Vec<AgentProfile>,
    delegation: DelegationSettings,
    journal: journal::JournalSettings,
    working_dir: Option<PathBuf>,
}

impl Policy {
    /// Load and resolve a policy file; relative folders in it are relative to
    /// the file's directory. Errors name the file, line, column and key.
    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let io = |source| PolicyError::Io { path: path.to_owned(), source };
        let text = std::fs::read_to_string(path).map_err(io)?;
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let base_dir = std::path::absolute(dir).map_err(io)?;
        let policy = Policy::parse(&text, path, &base_dir)?;
        let mut protected = vec![
            ProtectedPath::new("the permission table", path),
            ProtectedPath::private("the audit logs and memory in .reach/", base_dir.join(".reach")),
        ];
        // A bundle loaded from a project folder is the host's code like the
        // skills folder: no skill may rewrite its instructions or scripts.
        for (name, folder, _) in policy.bundle_folders() {
            protected.push(ProtectedPath::new(format!("the bundle {name}"), folder));
        }
        policy.check_protected(&protected)?;
        Ok(policy)
    }

    /// Refuse a table that lets any skill write one of the host's own paths
    /// (`protected`): a writable folder that contains one, or lies inside
    /// one. The error points at the `write` entry, like a parse error.
    ///
    /// [`Policy::load`] checks the table itself and `.reach/` beside it; the
    /// host adds the skills folder, the compile cache and the audit folder
    /// it was started with (see [`Host::load`](crate::Host::load)).
    pub fn check_protected(&self, protected: &[ProtectedPath]) -> Result<(), PolicyError> {
        let resolved: Vec<(&ProtectedPath, PathBuf)> =
            protected.iter().map(|p| (p, p.resolved())).collect();
        for skill in &self.skills {
            for at in &skill.folders_at {
                // Both where the grant is and where it points. A read grant
                // counts only for private paths: reading the table or a
                // skill's code reveals nothing, reading the audit logs or the
                // memory reveals every run.
                let hit = resolved.iter().find(|(what, path)| {
                    (at.writable || what.private)
                        && (folders::touches(&at.grant.path, path)
                            || folders::touches(&at.grant.lexical, path))
                });
                let Some((what, path)) = hit else { continue };
                let message = if at.writable {
                    format!(
                        "{:?} would let {} write {} ({}); no skill may write the host's own files \
                         — grant a folder that neither contains it nor lies inside it",
                        at.grant.declared,
                        skill.grants.skill,
                        what.what,
                        path.display()
                    )
                } else {
                    format!(
                        "{:?} would let {} read {} ({}), which hold every run's arguments, results \
                         and remembered notes; no skill may read the host's own records — grant \
                         the folders the skill needs (e.g. \"./docs\" rather than \".\"), none \
                         that contains it or lies inside it",
                        at.grant.declared,
                        skill.grants.skill,
                        what.what,
                        path.display()
                    )
                };
                return Err(at.at.invalid(&self.origin, message));
            }
        }
        Ok(())
    }

    /// Parse policy text. `origin` names it in messages; `base_dir` anchors
    /// relative folders (itself taken relative to the working directory if
    /// it is not absolute).
    pub fn parse(text: &str, origin: &Path, base_dir: &Path) -> Result<Policy, PolicyError> {
        let base_dir = std::path::absolute(base_dir)
            .map_err(|source| PolicyError::Io { path: base_dir.to_owned(), source })?;
        let src = Source { text, origin };
        let resolved = RawPolicy::parse(&src)?.resolve(&src, &base_dir)?;
        tracing::debug!(
            origin = %origin.display(),
            skills = resolved.skills.len(),
            "loaded permission table"
        );
        Ok(Policy {
            origin: origin.to_owned(),
            base_dir,
            default_level: resolved.level,
            default_limits: resolved.limits,
            skills: resolved.skills,
            model: resolved.model,
            memory: resolved.memory,
            agents: resolved.agents,
            delegation: resolved.delegation,
            journal: resolved.journal,
            working_dir: None,
        })
    }

    /// The policy used when there is no file: every skill at `confirm`, with
    /// the built-in limits and nothing granted. Named `<built-in>`.
    pub fn builtin() -> Policy {
        Policy {
            origin: PathBuf::from(BUILTIN_ORIGIN),
            base_dir: std::path::absolute(".").unwrap_or_default(),
            default_level: Level::Confirm,
            default_limits: Limits::default(),
            skills: Vec::new(),
            model: ModelSettings::default(),
            memory: MemorySettings::default_in(Path::new("")),
            agents: Vec::new(),
            delegation: DelegationSettings::default(),
            journal: journal::JournalSettings::default(),
            working_dir: None,
        }
    }

    /// The folder relative table paths start from (the table's own folder),
    /// absolute: where a skill's requested folders are looked for too.
    pub fn base_dir(&self) -> &Path {
        &self.base_dir
    }

    /// Skills resolve relative paths against `dir` instead of the host's
    /// working directory (an embedder or `reach eval` running several
    /// tasks, each in its own folder, in one process). It grants nothing:
    /// only the granted folders are reachable.
    pub fn with_working_dir(mut self, dir: impl Into<PathBuf>) -> Policy {
        let dir = dir.into();
        for skill in &mut self.skills {
            skill.grants.working_dir = Some(dir.clone());
        }
        self.working_dir = Some(dir);
        self
    }

    /// The folder skills resolve relative paths against, if not the host's
    /// working directory (see [`Policy::with_working_dir`]).
    pub fn working_dir(&self) -> Option<&Path> {
        self.working_dir.as_deref()
    }

    /// The `[model]` table: defaults for `reach run`.
    pub fn model(&self) -> &ModelSettings {
        &self.model
    }

    /// The `[memory]` table: the memory database, the levels of the memory
    /// tools and the prompt budget, defaults filled in. The built-in policy
    /// keeps the database at `.reach/memory.db` under the working directory.
    pub fn memory(&self) -> &MemorySettings {
        &self.memory
    }

    /// The `[journal]` table: a run's budget for keeping what skills change.
    pub fn journal(&self) -> crate::journal::Budget {
        self.journal.budget
    }

    /// `[journal] record_mb`: bytes of responses and results a run may
    /// record for replay (0: none).
    pub fn record_bytes(&self) -> u64 {
        self.journal.record_bytes
    }

    /// The `[agents.NAME]` profiles, in name order.
    pub fn agents(&self) -> &[AgentProfile] {
        &self.agents
    }

    /// The profile named `name`.
    pub fn agent(&self, name: &str) -> Option<&AgentProfile> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// The `[delegation]` limits, defaults filled in.
    pub fn delegation(&self) -> DelegationSettings {
        self.delegation
    }

    /// Where this policy came from: the file path, or `<built-in>`.
    pub fn origin(&self) -> &Path {
        &self.origin
    }

    /// The level for skills the table does not list.
    pub fn default_level(&self) -> Level {
        self.default_level
    }

    /// The limits for skills the table does not list.
    pub fn default_limits(&self) -> Limits {
        self.default_limits
    }

    /// Resolved grants for one skill; an unlisted skill gets the default level
    /// and limits and nothing else.
    pub fn grants(&self, skill: &str) -> SkillGrants {
        match self.listed(skill) {
            Some(listed) => listed.grants.clone(),
            None => SkillGrants {
                level: self.default_level,
                limits: self.default_limits,
                working_dir: self.working_dir.clone(),
                ..SkillGrants::none(skill)
            },
        }
    }

    /// The level for `skill.tool`, without resolving the rest of the grants.
    pub fn level(&self, skill: &str, tool: &str) -> Level {
        match self.listed(skill) {
            Some(listed) => listed.grants.level_for(tool),
            None => self.default_level,
        }
    }

    /// Whether the table names `skill` under `[skills.NAME]`.
    pub fn lists(&self, skill: &str) -> bool {
        self.listed(skill).is_some()
    }

    /// Whether this is [`Policy::builtin`], the table used when there is
    /// no file.
    pub fn is_builtin(&self) -> bool {
        self.origin == Path::new(BUILTIN_ORIGIN)
    }

    /// Names of the skills the table mentions, in file order.
    pub fn listed_skills(&self) -> Vec<&str> {
        self.skills.iter().map(|s| s.grants.skill.as_str()).collect()
    }

    /// Tools of `skill` with a per-tool override, with the line of each, in
    /// file order, so `policy check` can point at overrides for tools the
    /// skill does not have. Empty for unlisted skills.
    pub fn tool_overrides(&self, skill: &str) -> Vec<(&str, usize)> {
        self.listed(skill)
            .map(|s| s.tool_lines.iter().map(|(tool, line)| (tool.as_str(), *line)).collect())
            .unwrap_or_default()
    }

    /// The line of the `[skills.NAME]` table, for messages.
    pub fn skill_line(&self, skill: &str) -> Option<usize> {
        self.listed(skill).map(|s| s.line)
    }

    /// The file digest `[skills.NAME] sha256` pins the skill to, if any. The
    /// registry refuses every other file that claims this name.
    pub fn pin(&self, skill: &str) -> Option<&SkillPin> {
        self.listed(skill).and_then(|s| s.pin.as_ref())
    }

    /// What the table asks of a skill's origin and signature (`origin`,
    /// `signed_by`); `None` when the skill is not listed or asks nothing.
    pub fn trust(&self, skill: &str) -> Option<&SkillTrust> {
        self.listed(skill).map(|s| &s.trust).filter(|t| t.origin.is_some() || t.signed_by.is_some())
    }

    /// Folders that a skill with an `auto` tool may write although another
    /// skill writes there only after a person confirms: the operator asked
    /// for a person before writes land there, and the `auto` skill would
    /// skip the question. One sentence each, for `reach policy check`.
    pub fn auto_writes_where_confirm_asks(&self) -> Vec<String> {
        let auto = |g: &SkillGrants| {
            g.level == Level::Auto || g.tool_levels.values().any(|l| *l == Level::Auto)
        };
        let asks = |g: &SkillGrants| {
            g.level == Level::Confirm || g.tool_levels.values().any(|l| *l == Level::Confirm)
        };
        let mut found = Vec::new();
        for a in self.skills.iter().map(|s| &s.grants).filter(|g| auto(g)) {
            for b in self.skills.iter().map(|s| &s.grants).filter(|g| g.skill != a.skill && asks(g))
            {
                for wa in &a.write {
                    for wb in b.write.iter().filter(|wb| folders::touches(&wa.path, &wb.path)) {
                        found.push(format!(
                            "{} may write {:?} without a person (level auto), where {} writes {:?} \
                             only after confirmation; give {} its own folder, or make its writing \
                             tools `confirm`",
                            a.skill, wa.declared, b.skill, wb.declared, a.skill
                        ));
                    }
                }
            }
        }
        found
    }

    /// The bundles the table loads from outside the skills folder, by name
    /// (`[skills.NAME] bundle = "…"`): each name, its folder (absolute) and
    /// the line that names it, in file order. Project folders other clients
    /// scan (`.agents/skills/`) are loaded only this way, one named bundle at
    /// a time, so a cloned repository cannot add instructions to a run.
    pub fn bundle_folders(&self) -> Vec<(&str, &Path, usize)> {
        self.skills
            .iter()
            .filter_map(|s| {
                s.bundle
                    .as_ref()
                    .map(|(path, line)| (s.grants.skill.as_str(), path.as_path(), *line))
            })
            .collect()
    }

    fn listed(&self, skill: &str) -> Option<&ListedSkill> {
        self.skills.iter().find(|s| s.grants.skill == skill)
    }
}

/// `[skills.NAME] sha256 = "…"`: the only file the operator accepts for a
/// skill name, so a file that merely *claims* the name cannot take its grants.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkillPin {
    /// The sha256 of the `.wasm` file: 64 lowercase hex characters.
    pub sha256: String,
    /// The line of the `sha256` key, for messages.
    pub line: usize,
}

/// Everything one skill is allowed, resolved from the table.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkillGrants {
    /// The skill's name.
    pub skill: String,
    /// Level for tools without their own override.
    pub level: Level,
    /// Per-tool overrides of `level`.
    pub tool_levels: BTreeMap<String, Level>,
    /// Read-only folders; folders also in `write` are only there.
    pub read: Vec<FolderGrant>,
    /// Read-write folders.
    pub write: Vec<FolderGrant>,
    /// Hosts the skill may reach; empty means no network at all.
    pub net: NetAllowlist,
    /// Names of host environment variables passed in.
    pub env: Vec<String>,
    /// Secrets the host adds to requests to given hosts; the skill never
    /// sees their values.
    pub credentials: Vec<Credential>,
    /// Resource limits for each call.
    pub limits: Limits,
    /// False when the table does not mention the skill.
    pub listed: bool,
    /// Where relative paths start inside the sandbox; `None`: the host's
    /// working directory (see [`Policy::with_working_dir`]).
    pub working_dir: Option<PathBuf>,
}

impl SkillGrants {
    /// These grants with nothing that can change anything: every writable
    /// folder becomes read-only, and the network, the credentials and the
    /// environment are gone (a request can change things elsewhere, and
    /// without a network a credential or a token in a variable has no use
    /// but to leak). What a reviewer runs with.
    pub fn read_only(mut self) -> SkillGrants {
        let write = std::mem::take(&mut self.write);
        self.read.extend(write);
        self.net = NetAllowlist::default();
        self.credentials.clear();
        self.env.clear();
        self
    }

    /// The level that applies to `tool`: its override, else the skill's level.
    pub fn level_for(&self, tool: &str) -> Level {
        self.tool_levels.get(tool).copied().unwrap_or(self.level)
    }

    /// Nothing granted: level `deny`, built-in limits, no folders, network or
    /// environment, not listed. What `describe` assumes without a table.
    pub fn none(skill: &str) -> SkillGrants {
        SkillGrants {
            skill: skill.to_owned(),
            level: Level::Deny,
            tool_levels: BTreeMap::new(),
            read: Vec::new(),
            write: Vec::new(),
            net: NetAllowlist::default(),
            env: Vec::new(),
            credentials: Vec::new(),
            limits: Limits::default(),
            listed: false,
            working_dir: None,
        }
    }
}

/// Per-call resource limits.
///
/// Built-in values, used when neither the skill nor `[defaults]` sets them:
/// 64 MiB of memory, 10 s, 256 KiB of output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Limits {
    /// Most linear memory the component may grow to, in bytes.
    pub memory_bytes: u64,
    /// Wall-clock time for one call.
    #[serde(rename = "timeout_ms", serialize_with = "serialize_millis")]
    pub timeout: Duration,
    /// Most bytes of output a call may return.
    pub max_output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory_bytes: 64 * 1024 * 1024,
            timeout: Duration::from_millis(10_000),
            max_output_bytes: 256 * 1024,
        }
    }
}

fn serialize_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

// The whole-file tests (parsing, inheritance, every error's exact text)
// live beside this file; each matcher keeps its own table in its module.
#[cfg(test)]
mod tests;
