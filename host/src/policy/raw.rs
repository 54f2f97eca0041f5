//! The file as written, and the step that turns it into grants.
//!
//! Step one is serde with `deny_unknown_fields`, so a misspelt key is an
//! error instead of a silently missing permission. Step two checks every
//! value, keeping spans so each error points at its line.

use std::collections::BTreeMap;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::credentials::{Credential, Injection, SecretSource};
use super::error::{PolicyError, Source, toml_key};
use super::folders::{resolve_folder, split_read_write, strictly_inside};
use super::{HostPattern, Level, Limits, NetAllowlist, SkillGrants};

/// Allowed `memory_mb`: a skill needs at least a page, and 4 GiB is the most
/// a 32-bit wasm memory can address.
const MEMORY_MB: RangeInclusive<i64> = 1..=4096;
/// Allowed `timeout_ms`: up to an hour.
const TIMEOUT_MS: RangeInclusive<i64> = 1..=3_600_000;
/// Allowed `max_output_kb`: up to 1 GiB.
const MAX_OUTPUT_KB: RangeInclusive<i64> = 1..=1_048_576;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPolicy {
    #[serde(default)]
    defaults: RawDefaults,
    #[serde(default)]
    skills: BTreeMap<Spanned<String>, Spanned<RawSkill>>,
    #[serde(default)]
    model: Option<super::model::RawModel>,
    #[serde(default)]
    memory: Option<super::memory::RawMemory>,
    #[serde(default)]
    agents: BTreeMap<Spanned<String>, Spanned<super::agents::RawAgent>>,
    #[serde(default)]
    delegation: Option<super::agents::RawDelegation>,
    #[serde(default)]
    journal: Option<super::journal::RawJournal>,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of default settings")]
struct RawDefaults {
    level: Option<Spanned<String>>,
    memory_mb: Option<Spanned<i64>>,
    timeout_ms: Option<Spanned<i64>>,
    max_output_kb: Option<Spanned<i64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of grants for one skill")]
struct RawSkill {
    level: Option<Spanned<String>>,
    #[serde(default)]
    read: Vec<Spanned<String>>,
    #[serde(default)]
    write: Vec<Spanned<String>>,
    #[serde(default)]
    net: Vec<Spanned<String>>,
    #[serde(default)]
    env: Vec<Spanned<String>>,
    memory_mb: Option<Spanned<i64>>,
    timeout_ms: Option<Spanned<i64>>,
    max_output_kb: Option<Spanned<i64>>,
    #[serde(default)]
    tools: BTreeMap<Spanned<String>, Spanned<RawTool>>,
    #[serde(default)]
    credentials: Vec<Spanned<RawCredential>>,
    sha256: Option<Spanned<String>>,
    bundle: Option<Spanned<String>>,
    origin: Option<Spanned<String>>,
    signed_by: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a credential table with `host`, `env` or `file`, `header` or `query`, and \
                 optionally `prefix` and `allow_http`"
)]
struct RawCredential {
    host: Spanned<String>,
    env: Option<Spanned<String>>,
    file: Option<Spanned<String>>,
    header: Option<Spanned<String>>,
    query: Option<Spanned<String>>,
    #[serde(default)]
    prefix: Option<Spanned<String>>,
    #[serde(default)]
    allow_http: Option<Spanned<bool>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table with `level`")]
struct RawTool {
    level: Spanned<String>,
}

/// One `[skills.NAME]` table after checking.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ListedSkill {
    pub(super) grants: SkillGrants,
    /// Line of the skill's name in its table header.
    pub(super) line: usize,
    /// Tools with an override, and the line of each, in file order.
    pub(super) tool_lines: Vec<(String, usize)>,
    /// Each `read` and `write` entry: where it was declared and what it
    /// resolved to.
    pub(super) folders_at: Vec<FolderAt>,
    /// Each `env` entry (before duplicates are dropped) and where it is.
    pub(super) env_at: Vec<(String, Spot)>,
    /// The line of each `[[…credentials]]` entry, in the order of
    /// `grants.credentials`.
    pub(super) credential_lines: Vec<usize>,
    /// The `sha256` the skill's file must have, if pinned.
    pub(super) pin: Option<super::SkillPin>,
    /// `bundle = "…"`: a bundle folder outside the skills folder the
    /// operator loads by name (absolute, lexically normalised), with its line.
    pub(super) bundle: Option<(PathBuf, usize)>,
    /// `origin` and `signed_by`.
    pub(super) trust: super::SkillTrust,
}

/// Where an entry of the table is, for checks made after every skill is
/// read (across skills, or against the host's own paths).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Spot {
    /// The dotted key, e.g. `skills.files.write[0]`.
    pub(super) key: String,
    pub(super) line: usize,
    pub(super) column: usize,
}

impl Spot {
    fn new(src: &Source<'_>, span: &Range<usize>, key: String) -> Spot {
        let (line, column) = src.position(span.start);
        Spot { key, line, column }
    }

    /// A [`PolicyError::Invalid`] pointing at this entry of `file`.
    pub(super) fn invalid(&self, file: &Path, message: String) -> PolicyError {
        PolicyError::Invalid {
            file: file.to_owned(),
            line: self.line,
            column: self.column,
            key: self.key.clone(),
            message,
        }
    }
}

/// One `read` or `write` entry of the table, with its position for messages.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct FolderAt {
    pub(super) grant: super::FolderGrant,
    pub(super) at: Spot,
    pub(super) writable: bool,
}

/// The whole file after checking.
pub(super) struct Resolved {
    pub(super) level: Level,
    pub(super) limits: Limits,
    pub(super) skills: Vec<ListedSkill>,
    pub(super) model: super::ModelSettings,
    pub(super) memory: super::MemorySettings,
    /// In name order.
    pub(super) agents: Vec<super::AgentProfile>,
    pub(super) delegation: super::DelegationSettings,
    pub(super) journal: super::journal::JournalSettings,
}

impl RawPolicy {
    /// Parse the text strictly; the first error wins.
    pub(super) fn parse(src: &Source<'_>) -> Result<RawPolicy, PolicyError> {
        toml::from_str(src.text).map_err(|e| src.syntax(&e))
    }

    /// Check every value and resolve folders against `base_dir` (absolute).
    pub(super) fn resolve(
        self,
        src: &Source<'_>,
        base_dir: &Path,
    ) -> Result<Resolved, PolicyError> {
        let d = self.defaults;
        let level = resolve_level(src, "defaults.level", d.level.as_ref(), Level::Confirm)?;
        let limits = resolve_limits(
            src,
            "defaults",
            Limits::default(),
            [&d.memory_mb, &d.timeout_ms, &d.max_output_kb],
        )?;

        // File order, so errors and listings follow the file top to bottom.
        let mut skills: Vec<_> = self.skills.into_iter().collect();
        skills.sort_by_key(|(name, _)| name.span().start);
        let skills: Vec<ListedSkill> = skills
            .into_iter()
            .map(|(name, raw)| resolve_skill(src, base_dir, &name, raw.into_inner(), level, limits))
            .collect::<Result<_, _>>()?;
        check_nesting(src, &skills)?;
        super::cross_checks::check(src.origin, &skills)?;
        let model = match self.model {
            Some(raw) => raw.resolve(src)?,
            None => super::ModelSettings::default(),
        };
        let memory = match self.memory {
            Some(raw) => raw.resolve(src, base_dir, &skills)?,
            None => super::MemorySettings::default_in(base_dir),
        };
        // After the skills: a profile may only name skills the table lists.
        let agents = super::agents::resolve_agents(src, self.agents, &skills)?;
        let delegation = match self.delegation {
            Some(raw) => raw.resolve(src)?,
            None => super::DelegationSettings::default(),
        };
        let journal = match self.journal {
            Some(raw) => raw.resolve(src)?,
            None => super::journal::JournalSettings::default(),
        };
        Ok(Resolved { level, limits, skills, model, memory, agents, delegation, journal })
    }
}

fn resolve_skill(
    src: &Source<'_>,
    base_dir: &Path,
    name: &Spanned<String>,
    raw: RawSkill,
    default_level: Level,
    default_limits: Limits,
) -> Result<ListedSkill, PolicyError> {
    if !is_skill_name(name.get_ref()) {
        return Err(src.invalid(
            &name.span(),
            format!("skills.{}", toml_key(name.get_ref())),
            format!(
                "{:?} is not a valid skill name; use lowercase letters, digits, \"_\" and \"-\", \
                 starting with a letter",
                name.get_ref()
            ),
        ));
    }
    if super::RESERVED_SKILL_NAMES.contains(&name.get_ref().as_str()) {
        // The registry refuses a skill of this name, so nothing could use these grants.
        return Err(src.invalid(
            &name.span(),
            format!("skills.{}", name.get_ref()),
            format!(
                "{:?} is reserved for the harness's built-in tools ({}), so no skill may have this \
                 name and this table would grant nothing; rename the skill and this table",
                name.get_ref(),
                super::BUILTIN_TOOL_NAMES
            ),
        ));
    }
    let prefix = format!("skills.{}", name.get_ref());
    let level = resolve_level(src, &format!("{prefix}.level"), raw.level.as_ref(), default_level)?;

    let folders = |list: &[Spanned<String>], field: &str| {
        list.iter()
            .enumerate()
            .map(|(i, entry)| {
                resolve_folder(entry.get_ref(), base_dir).map_err(|why| {
                    src.invalid(&entry.span(), format!("{prefix}.{field}[{i}]"), why)
                })
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let (read, write) = (folders(&raw.read, "read")?, folders(&raw.write, "write")?);
    // Where each folder was declared, for the checks across the whole table
    // (nested grants, the host's own files) made once every skill is read.
    let at =
        |list: &[Spanned<String>], grants: &[super::FolderGrant], field: &str, writable: bool| {
            list.iter()
                .zip(grants)
                .enumerate()
                .map(|(i, (entry, grant))| FolderAt {
                    grant: grant.clone(),
                    at: Spot::new(src, &entry.span(), format!("{prefix}.{field}[{i}]")),
                    writable,
                })
                .collect::<Vec<_>>()
        };
    let mut folders_at = at(&raw.read, &read, "read", false);
    folders_at.extend(at(&raw.write, &write, "write", true));
    let (read, write) = split_read_write(read, write);

    let net = raw
        .net
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            HostPattern::parse(entry.get_ref())
                .map_err(|why| src.invalid(&entry.span(), format!("{prefix}.net[{i}]"), why))
        })
        .collect::<Result<NetAllowlist, _>>()?;

    let mut env: Vec<String> = Vec::new();
    for (i, entry) in raw.env.iter().enumerate() {
        let var = entry.get_ref();
        if !is_env_name(var) {
            return Err(src.invalid(
                &entry.span(),
                format!("{prefix}.env[{i}]"),
                format!(
                    "{var:?} is not an environment variable name; use letters, digits and \"_\", \
                     not starting with a digit"
                ),
            ));
        }
        if var.starts_with("AGENT_REACH_") {
            return Err(src.invalid(
                &entry.span(),
                format!("{prefix}.env[{i}]"),
                format!("{var} is reserved: the host sets AGENT_REACH_* variables itself"),
            ));
        }
        if !env.contains(var) {
            env.push(var.clone());
        }
    }
    let env_at = raw
        .env
        .iter()
        .enumerate()
        .map(|(i, e)| {
            (e.get_ref().clone(), Spot::new(src, &e.span(), format!("{prefix}.env[{i}]")))
        })
        .collect();

    let credentials = raw
        .credentials
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            resolve_credential(src, &format!("{prefix}.credentials[{i}]"), entry, &net)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let credential_lines = raw.credentials.iter().map(|c| src.line(&c.span())).collect();
    // Whether a credential's secret is also granted (by `env` or a folder),
    // to this skill or any other, is checked across the table at the end.

    let limits = resolve_limits(
        src,
        &prefix,
        default_limits,
        [&raw.memory_mb, &raw.timeout_ms, &raw.max_output_kb],
    )?;

    let pin = raw
        .sha256
        .as_ref()
        .map(|digest| resolve_pin(src, &prefix, name.get_ref(), digest))
        .transpose()?;

    let bundle = raw
        .bundle
        .as_ref()
        .map(|folder| resolve_bundle(src, base_dir, &prefix, name.get_ref(), folder))
        .transpose()?;

    let trust = super::SkillTrust {
        origin: raw
            .origin
            .as_ref()
            .map(|o| super::trust::resolve_origin(src, &prefix, o))
            .transpose()?,
        signed_by: raw
            .signed_by
            .as_ref()
            .map(|v| super::trust::resolve_signed_by(src, base_dir, &prefix, v))
            .transpose()?,
    };

    let mut tools: Vec<_> = raw.tools.into_iter().collect();
    tools.sort_by_key(|(tool, _)| tool.span().start);
    let mut tool_levels = BTreeMap::new();
    let mut tool_lines = Vec::new();
    for (tool, over) in tools {
        let tool_key = format!("{prefix}.tools.{}", toml_key(tool.get_ref()));
        if !is_tool_name(tool.get_ref()) {
            return Err(src.invalid(
                &tool.span(),
                tool_key,
                format!(
                    "{:?} is not a valid tool name; use letters, digits, \"_\" and \"-\", starting \
                     with a letter",
                    tool.get_ref()
                ),
            ));
        }
        let over = over.into_inner();
        let tool_level =
            resolve_level(src, &format!("{tool_key}.level"), Some(&over.level), level)?;
        tool_lines.push((tool.get_ref().clone(), src.line(&tool.span())));
        tool_levels.insert(tool.into_inner(), tool_level);
    }

    Ok(ListedSkill {
        grants: SkillGrants {
            skill: name.get_ref().clone(),
            level,
            tool_levels,
            read,
            write,
            net,
            env,
            credentials,
            limits,
            listed: true,
            working_dir: None,
        },
        line: src.line(&name.span()),
        tool_lines,
        folders_at,
        env_at,
        credential_lines,
        pin,
        bundle,
        trust,
    })
}

/// Check `bundle = "…"`: a folder named as the skill is (the folder is bound
/// to the name, as in the skills folder), relative to the table's folder.
fn resolve_bundle(
    src: &Source<'_>,
    base_dir: &Path,
    prefix: &str,
    skill: &str,
    folder: &Spanned<String>,
) -> Result<(PathBuf, usize), PolicyError> {
    let declared = folder.get_ref();
    let invalid = |why: String| src.invalid(&folder.span(), format!("{prefix}.bundle"), why);
    if declared.is_empty() || declared.starts_with('~') || declared.contains('\0') {
        return Err(invalid(format!(
            "{declared:?} is not a folder; write the bundle's folder relative to this table, \
             e.g. \".agents/skills/{skill}\""
        )));
    }
    let path = super::folders::lexical_normalize(&base_dir.join(declared));
    if path.file_name().and_then(|n| n.to_str()) != Some(skill) {
        return Err(invalid(format!(
            "{declared:?} is not named {skill}: a bundle's folder is its name (as in the skills \
             folder), so the table grants by the name it loads under; point at a folder named \
             {skill}, e.g. \".agents/skills/{skill}\""
        )));
    }
    Ok((path, src.line(&folder.span())))
}

/// Check a pin: exactly the 64 lowercase hex characters `reach skills pin`
/// prints, so a typo cannot turn into a pin that no file ever matches
/// without the operator being told where.
fn resolve_pin(
    src: &Source<'_>,
    prefix: &str,
    skill: &str,
    digest: &Spanned<String>,
) -> Result<super::SkillPin, PolicyError> {
    let text = digest.get_ref();
    if text.len() != 64 || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(src.invalid(
            &digest.span(),
            format!("{prefix}.sha256"),
            format!(
                "{text:?} is not a sha256 digest; use the 64 lowercase hex characters that `reach \
                 skills pin {skill}` prints"
            ),
        ));
    }
    Ok(super::SkillPin { sha256: text.clone(), line: src.line(&digest.span()) })
}

/// Check one credential: exactly one source and one injection, and a host
/// the skill's `net` list lets it reach (otherwise the entry could never apply).
fn resolve_credential(
    src: &Source<'_>,
    key: &str,
    entry: &Spanned<RawCredential>,
    net: &NetAllowlist,
) -> Result<Credential, PolicyError> {
    let raw = entry.get_ref();
    let source = match (&raw.env, &raw.file) {
        (Some(env), None) => SecretSource::Env(env.get_ref().clone()),
        (None, Some(file)) => SecretSource::File(file.get_ref().into()),
        _ => {
            return Err(src.invalid(
                &entry.span(),
                key,
                "set exactly one of `env` (a host variable name) or `file` (an absolute path) for \
                 the secret",
            ));
        }
    };
    let prefix = raw.prefix.as_ref().map(|p| p.get_ref().clone()).unwrap_or_default();
    let inject = match (&raw.header, &raw.query) {
        (Some(name), None) => Injection::Header { name: name.get_ref().clone(), prefix },
        (None, Some(name)) => Injection::Query { name: name.get_ref().clone(), prefix },
        _ => {
            return Err(src.invalid(
                &entry.span(),
                key,
                "set exactly one of `header` (e.g. \"Authorization\") or `query` (e.g. \
                 \"api_key\") to say how the secret is sent",
            ));
        }
    };
    let allow_http = raw.allow_http.as_ref().is_some_and(|a| *a.get_ref());
    let credential = Credential::new(raw.host.get_ref(), source, inject, allow_http)
        .map_err(|why| src.invalid(&raw.host.span(), format!("{key}.host"), why))?;
    let https =
        net.allows("https", &credential.target_host(), credential.port.unwrap_or(443)).is_some();
    let http = allow_http
        && net.allows("http", &credential.target_host(), credential.port.unwrap_or(80)).is_some();
    if !https && !http {
        return Err(src.invalid(
            &raw.host.span(),
            format!("{key}.host"),
            format!(
                "the skill's `net` list does not allow {}, so this credential could never be sent; \
                 add \"{}\" to `net`",
                credential.target(),
                credential.target()
            ),
        ));
    }
    Ok(credential)
}

/// `value` as a level (`inherited` when unset), or an error at its span.
pub(super) fn resolve_level(
    src: &Source<'_>,
    key: &str,
    value: Option<&Spanned<String>>,
    inherited: Level,
) -> Result<Level, PolicyError> {
    match value {
        None => Ok(inherited),
        Some(text) => text
            .get_ref()
            .parse()
            .map_err(|e: super::LevelParseError| src.invalid(&text.span(), key, e.to_string())),
    }
}

/// Override `inherited` with whichever of `[memory_mb, timeout_ms,
/// max_output_kb]` are set, after checking their ranges.
fn resolve_limits(
    src: &Source<'_>,
    prefix: &str,
    inherited: Limits,
    [memory_mb, timeout_ms, max_output_kb]: [&Option<Spanned<i64>>; 3],
) -> Result<Limits, PolicyError> {
    let check = |name: &str, value: &Option<Spanned<i64>>, range: RangeInclusive<i64>| {
        let Some(value) = value else { return Ok(None) };
        let n = *value.get_ref();
        match u64::try_from(n) {
            Ok(ok) if range.contains(&n) => Ok(Some(ok)),
            _ => Err(out_of_range(src, &value.span(), &format!("{prefix}.{name}"), n, &range)),
        }
    };
    let mut limits = inherited;
    if let Some(mb) = check("memory_mb", memory_mb, MEMORY_MB)? {
        limits.memory_bytes = mb * 1024 * 1024;
    }
    if let Some(ms) = check("timeout_ms", timeout_ms, TIMEOUT_MS)? {
        limits.timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(kb) = check("max_output_kb", max_output_kb, MAX_OUTPUT_KB)? {
        // At most 1 GiB, which fits usize on every target we build for.
        limits.max_output_bytes = usize::try_from(kb * 1024).unwrap_or(usize::MAX);
    }
    Ok(limits)
}

pub(super) fn out_of_range(
    src: &Source<'_>,
    span: &Range<usize>,
    key: &str,
    n: i64,
    range: &RangeInclusive<i64>,
) -> PolicyError {
    src.invalid(span, key, format!("{n} is out of range; use {} to {}", range.start(), range.end()))
}

/// `[a-z][a-z0-9_-]*`: skill names are also folder names and CLI arguments.
pub(super) fn is_skill_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// `[A-Za-z][A-Za-z0-9_-]*`: covers WIT's kebab-case and the usual
/// snake_case and camelCase tool names, and nothing that needs quoting.
pub(super) fn is_tool_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// `[A-Za-z_][A-Za-z0-9_]*`, the portable shell variable name. Anything
/// else (`=`, NUL) could not be passed through as a single variable.
pub(super) fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// No folder of the table may lie strictly inside a folder that some skill
/// may write. A skill that can write the outer folder can replace the inner
/// one with a symbolic link to anything (`../../home/u/.ssh`): the runtime
/// never follows it while running, but the next start would resolve the
/// grant through it. Inside the same skill a read-only folder would not even
/// hold (it is writable through the outer one). The same folder in both
/// lists, or granted to several skills, is fine: no one can replace it.
fn check_nesting(src: &Source<'_>, skills: &[ListedSkill]) -> Result<(), PolicyError> {
    for inner_skill in skills {
        for inner in &inner_skill.folders_at {
            for outer_skill in skills {
                for outer in outer_skill.folders_at.iter().filter(|o| o.writable) {
                    if !strictly_inside(&inner.grant, &outer.grant) {
                        continue;
                    }
                    let same = inner_skill.grants.skill == outer_skill.grants.skill;
                    let message = match (same, inner.writable) {
                        (true, false) => format!(
                            "{:?} lies inside the writable folder {:?} ({}, line {}); a skill can \
                             write everything inside a folder it may write, so this read-only \
                             grant would not hold — grant a read-only folder outside it, or drop \
                             one of the two",
                            inner.grant.declared, outer.grant.declared, outer.at.key, outer.at.line
                        ),
                        (true, true) => format!(
                            "{:?} lies inside the writable folder {:?} ({}, line {}), which \
                             already covers it — and the skill could replace it with a symbolic \
                             link that the next start would follow; drop it",
                            inner.grant.declared, outer.grant.declared, outer.at.key, outer.at.line
                        ),
                        (false, _) => format!(
                            "{:?} lies inside {:?}, which skill {} may write ({}, line {}); {} \
                             could replace it with a symbolic link to anything, which the next \
                             start would follow — grant folders that do not nest, or the same \
                             folder to both",
                            inner.grant.declared,
                            outer.grant.declared,
                            outer_skill.grants.skill,
                            outer.at.key,
                            outer.at.line,
                            outer_skill.grants.skill
                        ),
                    };
                    return Err(inner.at.invalid(src.origin, message));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (name, skill?, tool?, env?)
    const NAMES: &[(&str, bool, bool, bool)] = &[
        ("files", true, true, true),
        ("web-fetch", true, true, false),
        ("web_fetch", true, true, true),
        ("a", true, true, true),
        ("a1", true, true, true),
        ("x-1_y", true, true, false),
        ("Files", false, true, true),
        ("readFile", false, true, true),
        ("HOME", false, true, true),
        ("PATH", false, true, true),
        ("_private", false, false, true),
        ("_", false, false, true),
        ("API_KEY_2", false, true, true),
        ("1files", false, false, false),
        ("9", false, false, false),
        ("-files", false, false, false),
        ("", false, false, false),
        ("files.read", false, false, false),
        ("files read", false, false, false),
        ("files/read", false, false, false),
        ("fïles", false, false, false),
        ("A=B", false, false, false),
        ("A\0B", false, false, false),
        ("MY-VAR", false, true, false),
        ("files ", false, false, false),
    ];

    #[test]
    fn name_rules_table() {
        for &(name, skill, tool, env) in NAMES {
            assert_eq!(is_skill_name(name), skill, "skill name {name:?}");
            assert_eq!(is_tool_name(name), tool, "tool name {name:?}");
            assert_eq!(is_env_name(name), env, "env name {name:?}");
        }
    }

    /// (value, in memory_mb range?, in timeout_ms range?, in max_output_kb range?)
    const RANGES: &[(i64, bool, bool, bool)] = &[
        (-1, false, false, false),
        (0, false, false, false),
        (1, true, true, true),
        (4096, true, true, true),
        (4097, false, true, true),
        (1_048_576, false, true, true),
        (1_048_577, false, true, false),
        (3_600_000, false, true, false),
        (3_600_001, false, false, false),
        (i64::MAX, false, false, false),
        (i64::MIN, false, false, false),
    ];

    #[test]
    fn limit_ranges_table() {
        for &(n, mem, timeout, output) in RANGES {
            let text = format!("[defaults]\nmemory_mb = {n}\n");
            let limits_of = |text: &str| {
                let src = Source { text, origin: Path::new("t.toml") };
                RawPolicy::parse(&src)?.resolve(&src, Path::new("/"))
            };
            assert_eq!(limits_of(&text).is_ok(), mem, "memory_mb = {n}");
            let text = format!("[defaults]\ntimeout_ms = {n}\n");
            assert_eq!(limits_of(&text).is_ok(), timeout, "timeout_ms = {n}");
            let text = format!("[defaults]\nmax_output_kb = {n}\n");
            assert_eq!(limits_of(&text).is_ok(), output, "max_output_kb = {n}");
        }
    }
}
