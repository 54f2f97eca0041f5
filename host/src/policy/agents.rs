//! The optional `[agents.NAME]` profiles and `[delegation]` limits: which
//! workers a supervisor may hand a piece of its task to, what each may
//! reach, and how far delegation may go.
//!
//! ```toml
//! [agents.web]
//! description = "Fetches web pages and saves them as Markdown."
//! skills = ["web", "files"]        # at most these; never more than the parent has
//! instructions = "Save pages under notes/."
//! model = "qwen2.5-coder-1.5b-instruct"   # optional: another model name at the same endpoint
//! max_steps = 6                    # optional (default: [delegation] worker_max_steps)
//! token_budget = 20000             # optional: most tokens this worker may use
//!
//! [delegation]                     # every key optional
//! max_workers = 4                  # workers running at once, whole run
//! max_depth = 2                    # a worker's worker is depth 2
//! max_delegations = 16             # workers started, whole run
//! worker_max_steps = 6             # default max_steps of a worker
//! supervisor_skills = false        # true: the run's own loop uses skills too
//! ```
//!
//! A worker's skills are the intersection of its profile and what its
//! parent may use; the grants of each skill are the table's, never more.
//!
//! Each skill a profile lists must be `agents` or have its own
//! `[skills.NAME]` table here: a misspelt name would otherwise give the
//! worker silently less than the operator meant.

use std::collections::BTreeMap;
use std::ops::RangeInclusive;

use serde::Deserialize;
use toml::Spanned;

use super::error::{PolicyError, Source, toml_key};
use super::raw::{ListedSkill, is_skill_name, out_of_range};

/// Longest profile name: it is shown in lists and tool arguments.
const MAX_NAME_CHARS: usize = 64;
/// Longest `description`: the supervisor's model reads every profile's in
/// each request.
const MAX_DESCRIPTION_CHARS: usize = 500;
/// Longest `instructions`: sent with every task the worker is given.
const MAX_INSTRUCTIONS_CHARS: usize = 4000;
/// Allowed `max_steps` of a profile, and `worker_max_steps`.
const STEPS: RangeInclusive<i64> = 1..=100;
/// Allowed `token_budget` of a profile.
const TOKEN_BUDGET: RangeInclusive<i64> = 1..=100_000_000;
/// Allowed `[delegation] max_workers`.
const MAX_WORKERS: RangeInclusive<i64> = 1..=16;
/// Allowed `[delegation] max_depth`.
const MAX_DEPTH: RangeInclusive<i64> = 1..=4;
/// Allowed `[delegation] max_delegations`.
const MAX_DELEGATIONS: RangeInclusive<i64> = 1..=256;

/// One `[agents.NAME]` profile, checked.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct AgentProfile {
    /// The profile's name (`[agents.NAME]`): `[a-z][a-z0-9_-]*`.
    pub name: String,
    /// What it is for, as the supervisor's model reads it.
    pub description: String,
    /// The skills it may use (each listed in `[skills.*]`); the pseudo
    /// skill `agents` lets it delegate in turn, within `max_depth`.
    pub skills: Vec<String>,
    /// Another model name at the same endpoint; `None` is the parent's model.
    pub model: Option<String>,
    /// Most model requests of one delegation; `None` is
    /// [`DelegationSettings::worker_max_steps`].
    pub max_steps: Option<usize>,
    /// Most tokens one delegation may use.
    pub token_budget: Option<u64>,
    /// Given to the worker with each task.
    pub instructions: Option<String>,
    /// Line of `[agents.NAME]` in the table (for messages).
    pub line: usize,
}

impl AgentProfile {
    /// True when the profile lists the pseudo skill `agents` (it may delegate).
    pub fn may_delegate(&self) -> bool {
        self.skills.iter().any(|s| s == DELEGATE_SKILL)
    }
}

/// The pseudo skill that lets a worker delegate in turn.
pub const DELEGATE_SKILL: &str = "agents";

/// The `[delegation]` table, defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DelegationSettings {
    /// Workers running at the same time across the whole run (default 4).
    pub max_workers: usize,
    /// Deepest worker: the supervisor's workers are depth 1 (default 2).
    pub max_depth: usize,
    /// Workers started across the whole run (default 16).
    pub max_delegations: usize,
    /// `max_steps` of a worker whose profile does not say (default 6).
    pub worker_max_steps: usize,
    /// The run's own loop also uses skills directly (default `false`: with
    /// profiles, the run delegates and only its workers touch skills —
    /// pages and files reach it only as its workers' checked JSON).
    pub supervisor_skills: bool,
}

impl Default for DelegationSettings {
    fn default() -> Self {
        DelegationSettings {
            max_workers: 4,
            max_depth: 2,
            max_delegations: 16,
            worker_max_steps: 6,
            supervisor_skills: false,
        }
    }
}

/// One `[agents.NAME]` table as written. `description` and `skills` are
/// required, but checked after parsing so the error can say what to add.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with description, skills, and optionally model, instructions, max_steps, \
                 token_budget"
)]
pub(super) struct RawAgent {
    description: Option<Spanned<String>>,
    skills: Option<Spanned<Vec<Spanned<String>>>>,
    model: Option<Spanned<String>>,
    instructions: Option<Spanned<String>>,
    max_steps: Option<Spanned<i64>>,
    token_budget: Option<Spanned<i64>>,
}

/// The `[delegation]` table as written; every key optional.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with max_workers, max_depth, max_delegations, worker_max_steps, \
                 supervisor_skills"
)]
pub(super) struct RawDelegation {
    max_workers: Option<Spanned<i64>>,
    max_depth: Option<Spanned<i64>>,
    max_delegations: Option<Spanned<i64>>,
    worker_max_steps: Option<Spanned<i64>>,
    supervisor_skills: Option<bool>,
}

/// A number key that is optional, checked against `range`.
fn number(
    src: &Source<'_>,
    key: &str,
    value: &Option<Spanned<i64>>,
    range: RangeInclusive<i64>,
) -> Result<Option<i64>, PolicyError> {
    match value {
        Some(n) if !range.contains(n.get_ref()) => {
            Err(out_of_range(src, &n.span(), key, *n.get_ref(), &range))
        }
        Some(n) => Ok(Some(*n.get_ref())),
        None => Ok(None),
    }
}

impl RawDelegation {
    /// Check each limit's range and fill in the defaults.
    pub(super) fn resolve(self, src: &Source<'_>) -> Result<DelegationSettings, PolicyError> {
        let defaults = DelegationSettings::default();
        let or = |key: &str, value: &Option<Spanned<i64>>, range, default: usize| {
            // Every range is small and positive, so the value fits.
            Ok::<_, PolicyError>(
                number(src, &format!("delegation.{key}"), value, range)?
                    .map_or(default, |n| n as usize),
            )
        };
        Ok(DelegationSettings {
            max_workers: or("max_workers", &self.max_workers, MAX_WORKERS, defaults.max_workers)?,
            max_depth: or("max_depth", &self.max_depth, MAX_DEPTH, defaults.max_depth)?,
            max_delegations: or(
                "max_delegations",
                &self.max_delegations,
                MAX_DELEGATIONS,
                defaults.max_delegations,
            )?,
            worker_max_steps: or(
                "worker_max_steps",
                &self.worker_max_steps,
                STEPS,
                defaults.worker_max_steps,
            )?,
            supervisor_skills: self.supervisor_skills.unwrap_or(defaults.supervisor_skills),
        })
    }
}

/// Check every `[agents.NAME]` table against the resolved `skills`; the
/// profiles come back in name order, errors in file order.
pub(super) fn resolve_agents(
    src: &Source<'_>,
    raw: BTreeMap<Spanned<String>, Spanned<RawAgent>>,
    skills: &[ListedSkill],
) -> Result<Vec<AgentProfile>, PolicyError> {
    let mut raw: Vec<_> = raw.into_iter().collect();
    raw.sort_by_key(|(name, _)| name.span().start);
    // No `[skills.agents]` can reach here ([`super::RESERVED_SKILL_NAMES`]),
    // so `agents` in a profile is always the delegation pseudo skill.
    let mut agents = raw
        .into_iter()
        .map(|(name, agent)| resolve_agent(src, &name, agent.into_inner(), skills))
        .collect::<Result<Vec<_>, _>>()?;
    agents.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(agents)
}

fn resolve_agent(
    src: &Source<'_>,
    name: &Spanned<String>,
    raw: RawAgent,
    skills: &[ListedSkill],
) -> Result<AgentProfile, PolicyError> {
    let text = name.get_ref();
    if !is_skill_name(text) {
        return Err(src.invalid(
            &name.span(),
            format!("agents.{}", toml_key(text)),
            format!(
                "{text:?} is not a valid profile name; use lowercase letters, digits, \"_\" and \
                 \"-\", starting with a letter"
            ),
        ));
    }
    // Only ASCII is left, so bytes are characters.
    if text.len() > MAX_NAME_CHARS {
        return Err(src.invalid(
            &name.span(),
            format!("agents.{text}"),
            format!(
                "is {} characters long; shorten the name to at most {MAX_NAME_CHARS}",
                text.len()
            ),
        ));
    }
    let prefix = format!("agents.{text}");
    let missing = |field: &str, fix: &str| {
        src.invalid(&name.span(), format!("{prefix}.{field}"), format!("missing; add {fix}"))
    };

    let Some(description) = raw.description else {
        return Err(missing(
            "description",
            "description = \"…\": one sentence on what this worker is for (the supervisor's \
             model chooses by it)",
        ));
    };
    let chars = description.get_ref().chars().count();
    if description.get_ref().trim().is_empty() {
        return Err(src.invalid(
            &description.span(),
            format!("{prefix}.description"),
            "is empty; write one sentence on what this worker is for (the supervisor's model \
             chooses by it)",
        ));
    }
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(src.invalid(
            &description.span(),
            format!("{prefix}.description"),
            format!(
                "is {chars} characters long; keep it to {MAX_DESCRIPTION_CHARS} (the supervisor's \
                 model reads every profile's description in each request)"
            ),
        ));
    }

    let Some(listed) = raw.skills else {
        return Err(missing(
            "skills",
            "skills = [\"…\"]: the skills this worker may use, each with its own [skills.NAME] \
             table",
        ));
    };
    let table: Vec<&str> = skills.iter().map(|s| s.grants.skill.as_str()).collect();
    let lists = if table.is_empty() {
        "[skills.*] lists none".to_owned()
    } else {
        format!("[skills.*] lists: {}", table.join(", "))
    };
    if listed.get_ref().is_empty() {
        return Err(src.invalid(
            &listed.span(),
            format!("{prefix}.skills"),
            format!(
                "[] gives the worker nothing to use; list at least one skill of this table \
                 ({lists})"
            ),
        ));
    }
    let mut profile_skills: Vec<String> = Vec::new();
    for (i, entry) in listed.get_ref().iter().enumerate() {
        let skill = entry.get_ref();
        let key = format!("{prefix}.skills[{i}]");
        if let Some(first) = profile_skills.iter().position(|s| s == skill) {
            return Err(src.invalid(
                &entry.span(),
                key,
                format!("{skill:?} is listed twice (also skills[{first}]); drop one"),
            ));
        }
        if skill != DELEGATE_SKILL && !table.contains(&skill.as_str()) {
            return Err(src.invalid(
                &entry.span(),
                key,
                format!(
                    "{skill:?} is not a skill of this table ({lists}); list it under [skills.{}] \
                     first or fix the name",
                    toml_key(skill)
                ),
            ));
        }
        profile_skills.push(skill.clone());
    }

    if let Some(model) = &raw.model
        && model.get_ref().trim().is_empty()
    {
        return Err(src.invalid(
            &model.span(),
            format!("{prefix}.model"),
            "is empty; name a model at the run's endpoint, or drop the key to use the run's model",
        ));
    }
    if let Some(instructions) = &raw.instructions {
        let chars = instructions.get_ref().chars().count();
        if chars > MAX_INSTRUCTIONS_CHARS {
            return Err(src.invalid(
                &instructions.span(),
                format!("{prefix}.instructions"),
                format!(
                    "is {chars} characters long; keep it to {MAX_INSTRUCTIONS_CHARS} (it is sent \
                     with every task this worker is given)"
                ),
            ));
        }
    }
    let max_steps = number(src, &format!("{prefix}.max_steps"), &raw.max_steps, STEPS)?;
    let token_budget =
        number(src, &format!("{prefix}.token_budget"), &raw.token_budget, TOKEN_BUDGET)?;

    Ok(AgentProfile {
        name: text.clone(),
        description: description.into_inner(),
        skills: profile_skills,
        model: raw.model.map(Spanned::into_inner),
        // Both ranges are positive, so the values fit.
        max_steps: max_steps.map(|n| n as usize),
        token_budget: token_budget.map(|n| n as u64),
        instructions: raw.instructions.map(Spanned::into_inner),
        line: src.line(&name.span()),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::policy::Policy;

    /// Two skills, then a blank line: `[agents.*]` tables start on line 8.
    const SKILLS: &str = "[skills.files]\nread = [\"/docs\"]\nwrite = [\"/notes\"]\n\n\
                          [skills.web]\nnet = [\"example.com\"]\n\n";

    fn parse(text: &str) -> Result<Policy, PolicyError> {
        Policy::parse(text, Path::new("reach.toml"), Path::new("/"))
    }

    #[test]
    fn a_good_profile_round_trips_with_defaults() {
        let text = format!(
            "{SKILLS}[agents.web]\ndescription = \"Fetches pages.\"\n\
             skills = [\"web\", \"files\"]\n\n\
             [agents.boss]\ndescription = \"Plans.\"\nskills = [\"agents\", \"files\"]\n\
             model = \"small\"\n\
             instructions = \"Be brief.\"\nmax_steps = 100\ntoken_budget = 100000000\n"
        );
        let policy = parse(&text).expect("valid");
        let web = AgentProfile {
            name: "web".into(),
            description: "Fetches pages.".into(),
            skills: vec!["web".into(), "files".into()],
            model: None,
            max_steps: None,
            token_budget: None,
            instructions: None,
            line: 8,
        };
        let boss = AgentProfile {
            name: "boss".into(),
            description: "Plans.".into(),
            skills: vec!["agents".into(), "files".into()],
            model: Some("small".into()),
            max_steps: Some(100),
            token_budget: Some(100_000_000),
            instructions: Some("Be brief.".into()),
            line: 12,
        };
        assert_eq!(policy.agents(), [boss.clone(), web.clone()], "in name order");
        assert_eq!(policy.agent("web"), Some(&web));
        assert_eq!(policy.agent("nobody"), None);
        assert!(boss.may_delegate() && !web.may_delegate());
        assert_eq!(policy.delegation(), DelegationSettings::default());
        assert_eq!(
            policy.delegation(),
            DelegationSettings {
                max_workers: 4,
                max_depth: 2,
                max_delegations: 16,
                worker_max_steps: 6,
                supervisor_skills: false
            }
        );
        // The built-in policy and a table without profiles have none.
        assert!(
            Policy::builtin().agents().is_empty()
                && parse(SKILLS).expect("valid").agents().is_empty()
        );
    }

    #[test]
    fn delegation_limits_are_read_up_to_their_maxima() {
        let policy = parse(
            "[delegation]\nmax_workers = 16\nmax_depth = 4\nmax_delegations = 256\n\
             worker_max_steps = 100\n",
        )
        .expect("valid");
        assert_eq!(
            policy.delegation(),
            DelegationSettings {
                max_workers: 16,
                max_depth: 4,
                max_delegations: 256,
                worker_max_steps: 100,
                supervisor_skills: false
            }
        );
        let policy = parse("[delegation]\nmax_depth = 1\n").expect("valid");
        assert_eq!(
            policy.delegation(),
            DelegationSettings { max_depth: 1, ..DelegationSettings::default() }
        );
    }

    #[test]
    fn limits_of_length_are_inclusive() {
        let text = format!(
            "{SKILLS}[agents.{}]\ndescription = \"{}\"\nskills = [\"files\"]\n\
             instructions = \"{}\"\n",
            "a".repeat(64),
            "d".repeat(500),
            "i".repeat(4000)
        );
        let policy = parse(&text).expect("valid");
        assert_eq!(policy.agents()[0].description.len(), 500);
    }

    /// Each bad table and the whole error it gets.
    fn errors() -> Vec<(String, &'static str)> {
        let table = |rest: &str| format!("{SKILLS}{rest}");
        // A good profile on lines 8 to 10, then `rest` from line 11.
        let agent = |rest: &str| {
            table(&format!(
                "[agents.web]\ndescription = \"Fetches pages.\"\nskills = [\"web\"]\n{rest}"
            ))
        };
        vec![
            (
                format!("[skills.agents]\n{}", agent("")),
                "reach.toml:1:9: skills.agents: \"agents\" is reserved for the harness's built-in \
                 tools (memory__remember, memory__recall, skills__open, skills__instructions, \
                 agents__delegate, workbench__read), so no skill may have this name and this table \
                 would grant nothing; rename the skill and this table",
            ),
            (
                table("[agents.Web]\n"),
                "reach.toml:8:9: agents.Web: \"Web\" is not a valid profile name; use lowercase \
                 letters, digits, \"_\" and \"-\", starting with a letter",
            ),
            (
                table("[agents.\"my web\"]\n"),
                "reach.toml:8:9: agents.\"my web\": \"my web\" is not a valid profile name; use \
                 lowercase letters, digits, \"_\" and \"-\", starting with a letter",
            ),
            (
                table(&format!("[agents.{}]\n", "a".repeat(65))),
                "reach.toml:8:9: \
                 agents.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa: is 65 \
                 characters long; shorten the name to at most 64",
            ),
            (
                table("[agents.web]\nskills = [\"web\"]\n"),
                "reach.toml:8:9: agents.web.description: missing; add description = \"…\": one \
                 sentence on what this worker is for (the supervisor's model chooses by it)",
            ),
            (
                table("[agents.web]\ndescription = \" \\n\"\nskills = [\"web\"]\n"),
                "reach.toml:9:15: agents.web.description: is empty; write one sentence on what \
                 this worker is for (the supervisor's model chooses by it)",
            ),
            (
                table(&format!(
                    "[agents.web]\ndescription = \"{}\"\nskills = [\"web\"]\n",
                    "d".repeat(501)
                )),
                "reach.toml:9:15: agents.web.description: is 501 characters long; keep it to 500 \
                 (the supervisor's model reads every profile's description in each request)",
            ),
            (
                table("[agents.web]\ndescription = \"Fetches pages.\"\n"),
                "reach.toml:8:9: agents.web.skills: missing; add skills = [\"…\"]: the skills \
                 this worker may use, each with its own [skills.NAME] table",
            ),
            (
                table("[agents.web]\ndescription = \"Fetches pages.\"\nskills = []\n"),
                "reach.toml:10:10: agents.web.skills: [] gives the worker nothing to use; list at \
                 least one skill of this table ([skills.*] lists: files, web)",
            ),
            (
                table(
                    "[agents.web]\ndescription = \"Fetches pages.\"\n\
                     skills = [\"web\", \"files\", \"web\"]\n",
                ),
                "reach.toml:10:27: agents.web.skills[2]: \"web\" is listed twice (also skills[0]); \
                 drop one",
            ),
            (
                table(
                    "[agents.web]\ndescription = \"Fetches pages.\"\n\
                     skills = [\"web\", \"fils\"]\n",
                ),
                "reach.toml:10:18: agents.web.skills[1]: \"fils\" is not a skill of this table \
                 ([skills.*] lists: files, web); list it under [skills.fils] first or fix the name",
            ),
            (
                "[agents.web]\ndescription = \"Fetches pages.\"\nskills = [\"web\"]\n".to_owned(),
                "reach.toml:3:11: agents.web.skills[0]: \"web\" is not a skill of this table \
                 ([skills.*] lists none); list it under [skills.web] first or fix the name",
            ),
            (
                agent("model = \" \"\n"),
                "reach.toml:11:9: agents.web.model: is empty; name a model at the run's endpoint, \
                 or drop the key to use the run's model",
            ),
            (
                agent(&format!("instructions = \"{}\"\n", "i".repeat(4001))),
                "reach.toml:11:16: agents.web.instructions: is 4001 characters long; keep it to \
                 4000 (it is sent with every task this worker is given)",
            ),
            (
                agent("max_steps = 0\n"),
                "reach.toml:11:13: agents.web.max_steps: 0 is out of range; use 1 to 100",
            ),
            (
                agent("max_steps = 101\n"),
                "reach.toml:11:13: agents.web.max_steps: 101 is out of range; use 1 to 100",
            ),
            (
                agent("token_budget = 0\n"),
                "reach.toml:11:16: agents.web.token_budget: 0 is out of range; use 1 to 100000000",
            ),
            (
                agent("token_budget = 100000001\n"),
                "reach.toml:11:16: agents.web.token_budget: 100000001 is out of range; use 1 to \
                 100000000",
            ),
            (
                agent("descripton = \"x\"\n"),
                "reach.toml:11:1: unknown field `descripton`, expected one of `description`, \
                 `skills`, `model`, `instructions`, `max_steps`, `token_budget`",
            ),
            (
                table("[agents.web]\ndescription = \"Fetches pages.\"\nskills = \"web\"\n"),
                r#"reach.toml:10:10: invalid type: string "web", expected a sequence"#,
            ),
            (
                "[delegation]\nmax_workers = 0\n".to_owned(),
                "reach.toml:2:15: delegation.max_workers: 0 is out of range; use 1 to 16",
            ),
            (
                "[delegation]\nmax_workers = 17\n".to_owned(),
                "reach.toml:2:15: delegation.max_workers: 17 is out of range; use 1 to 16",
            ),
            (
                "[delegation]\nmax_depth = 5\n".to_owned(),
                "reach.toml:2:13: delegation.max_depth: 5 is out of range; use 1 to 4",
            ),
            (
                "[delegation]\nmax_delegations = 257\n".to_owned(),
                "reach.toml:2:19: delegation.max_delegations: 257 is out of range; use 1 to 256",
            ),
            (
                "[delegation]\nworker_max_steps = 0\n".to_owned(),
                "reach.toml:2:20: delegation.worker_max_steps: 0 is out of range; use 1 to 100",
            ),
            (
                "[delegation]\nmax_worker = 2\n".to_owned(),
                "reach.toml:2:1: unknown field `max_worker`, expected one of `max_workers`, \
                 `max_depth`, `max_delegations`, `worker_max_steps`, `supervisor_skills`",
            ),
        ]
    }

    #[test]
    fn every_error_names_file_line_column_key_and_fix() {
        for (text, expected) in errors() {
            let err = parse(&text).expect_err(&text);
            assert_eq!(err.to_string(), expected, "for\n{text}");
        }
    }

    #[test]
    fn the_delegate_pseudo_skill_needs_no_skills_table() {
        let policy = parse("[agents.boss]\ndescription = \"Plans.\"\nskills = [\"agents\"]\n")
            .expect("valid");
        assert_eq!(
            policy.agent("boss").map(|a| a.skills.clone()),
            Some(vec![DELEGATE_SKILL.to_owned()])
        );
        assert!(policy.agents()[0].may_delegate());
    }
}
