//! Agent Skills bundles in the skills folder: every subfolder holding
//! `SKILL.md` is read with [`crate::bundle::load`] and becomes a
//! [`BundleEntry`], under the same identity rules as a `.wasm` file:
//!
//! - the folder's name is the skill's name, the one the table grants;
//! - `[skills.NAME] sha256 = "…"` pins the bundle's digest (over every
//!   file, see [`crate::bundle::files`]), so any changed file is refused
//!   until the pin is updated;
//! - a name a `.wasm` skill in the same folder also claims is refused for
//!   the bundle: which of the two the table's grants were written for
//!   cannot be told, so neither silently wins.
//!
//! A bundle's tools are those of its `tools/*.wasm` components (their own
//! skill names are ignored: they are the bundle's tools, under its name and
//! grants) and, when it has Python or JavaScript scripts and the skills
//! folder has the runner for them (`runners/python.wasm`, `runners/js.wasm`),
//! `run_script`, which runs one of them in its runner with the bundle's
//! grants.
//!
//! Only the folder the operator set is scanned: project folders that other
//! clients read (`.agents/skills/`) are not, so a cloned repository cannot
//! add instructions to a run; the table loads one by name
//! (`[skills.NAME] bundle = "…"`).

use super::manifest::{Manifest, ToolSpec};
use super::{SkillEntry, Status};
use crate::bundle::{self, Bundle};
use crate::policy::Policy;
use crate::runtime::{LoadedSkill, Runtime};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The folder, inside the skills folder, holding the script runners.
pub const RUNNERS: &str = "runners";
/// The tool a bundle with Python or JavaScript scripts gets.
pub const RUN_SCRIPT: &str = "run_script";

/// A language bundle scripts are written in, each run by its own runner
/// component in `runners/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// `scripts/*.py`, run by `runners/python.wasm` (CPython, componentize-py).
    Python,
    /// `scripts/*.js`, `.mjs`, `.cjs`, run by `runners/js.wasm` (SpiderMonkey, componentize-js).
    JavaScript,
}

impl Language {
    /// Every language, in the order the runners load.
    pub const ALL: [Language; 2] = [Language::Python, Language::JavaScript];

    /// The language of a script, by its file name; `None` for what never runs.
    pub fn of(path: &str) -> Option<Language> {
        let extension = path.rsplit_once('.').map(|(_, e)| e)?;
        match extension {
            "py" => Some(Language::Python),
            "js" | "mjs" | "cjs" => Some(Language::JavaScript),
            _ => None,
        }
    }

    /// The runner's file name in `runners/`.
    pub fn runner_file(self) -> &'static str {
        match self {
            Language::Python => "python.wasm",
            Language::JavaScript => "js.wasm",
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            Language::Python => "Python",
            Language::JavaScript => "JavaScript",
        }
    }

    /// How the script is run, as the model would picture it.
    fn command(self) -> &'static str {
        match self {
            Language::Python => "python SCRIPT ARGS...",
            Language::JavaScript => "node SCRIPT ARGS...",
        }
    }
}
/// The runner's own tool, which `run_script` calls.
pub(crate) const RUNNER_TOOL: &str = "run";

/// One bundle folder in the skills folder.
#[derive(Clone)]
pub struct BundleEntry {
    /// The bundle folder.
    pub path: PathBuf,
    /// Active, or broken (bundles have no versions to supersede one another).
    pub status: Status,
    /// The bundle, when it loaded (kept on a refused one, to show what it holds).
    pub bundle: Option<Bundle>,
    /// Why it is broken; for an active one, `None`.
    pub reason: Option<String>,
    /// The skill as the host offers it: the bundle's name, description
    /// and tools (`instructions` is the `SKILL.md` body); set when active.
    pub manifest: Option<Manifest>,
    /// Every file under `scripts/`, and whether it can run here.
    pub scripts: Vec<Script>,
    /// Where it came from, when `reach skill add` installed it.
    pub origin: Option<super::Origin>,
    /// Which component serves each tool of `manifest`, by tool name.
    serving: Vec<(String, LoadedSkill)>,
    /// The runners `run_script` uses, for the languages its scripts are in.
    runners: Vec<(Language, LoadedSkill)>,
}

/// A file under a bundle's `scripts/`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Script {
    /// Its path in the bundle, e.g. `scripts/triage.py`.
    pub path: String,
    /// Why it cannot run here; `None` when `run_script` runs it.
    pub cannot_run: Option<String>,
}

/// The component behind one of a bundle's tools.
pub(crate) enum Backend<'a> {
    /// A `tools/*.wasm` component's own tool.
    Component(&'a LoadedSkill),
    /// `run_script`: the runners by language, with the bundle folder to preopen.
    Script(&'a [(Language, LoadedSkill)], &'a Bundle),
}

impl BundleEntry {
    /// The skill name: the folder's name.
    pub fn name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// The bundle's digest, when it loaded.
    pub fn sha256(&self) -> Option<&str> {
        self.bundle.as_ref().map(|b| b.sha256.as_str())
    }

    /// The bundle, when it is active.
    pub fn active(&self) -> Option<&Bundle> {
        self.bundle.as_ref().filter(|_| self.status == Status::Active)
    }

    /// What serves `tool`, when the bundle is active and has it.
    pub(crate) fn backend(&self, tool: &str) -> Option<Backend<'_>> {
        let bundle = self.active()?;
        if tool == RUN_SCRIPT && self.scripts_run() {
            return Some(Backend::Script(&self.runners, bundle));
        }
        let (_, loaded) = self.serving.iter().find(|(t, _)| t == tool)?;
        Some(Backend::Component(loaded))
    }

    /// Whether `run_script` is one of its tools.
    fn scripts_run(&self) -> bool {
        !self.runners.is_empty() && self.scripts.iter().any(|s| s.cannot_run.is_none())
    }
}

/// A script runner, loaded once per scan when a bundle needs it.
pub(super) struct Runner {
    language: Language,
    path: PathBuf,
    loaded: Result<LoadedSkill, String>,
}

/// Every bundle folder directly in `dir`, in path order, with pins and
/// name clashes against the `.wasm` skills in `components` applied, and
/// their tools loaded.
pub(super) async fn scan(
    runtime: &Runtime,
    dir: &Path,
    policy: &Policy,
    components: &[SkillEntry],
    on_compile: &mut impl FnMut(&Path),
) -> Vec<BundleEntry> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut folders: Vec<PathBuf> = read
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| bundle::is_bundle(p))
        .collect();
    folders.sort();
    let mut runners: Vec<Runner> = Vec::new();
    let mut out = Vec::with_capacity(folders.len());
    for path in folders {
        let mut entry = one(path, policy, components);
        if entry.status == Status::Active {
            offer(runtime, dir, &mut entry, &mut runners, on_compile).await;
        }
        out.push(entry);
    }
    for (name, folder, line) in policy.bundle_folders() {
        if out.iter().any(|b| b.path == folder) {
            continue; // named, but in the skills folder anyway: loaded once
        }
        let mut entry = named(name, folder, line, policy, components, &out);
        if entry.status == Status::Active {
            offer(runtime, dir, &mut entry, &mut runners, on_compile).await;
        }
        out.push(entry);
    }
    out
}

/// A bundle the table names outside the skills folder (`[skills.NAME]
/// bundle = "…"`): loaded like one inside it, broken with the reason when
/// the folder is not a bundle or the name is taken in the skills folder.
fn named(
    name: &str,
    folder: &Path,
    line: usize,
    policy: &Policy,
    components: &[SkillEntry],
    found: &[BundleEntry],
) -> BundleEntry {
    let at = format!("{} line {line}", policy.origin().display());
    let broken = |reason: String| BundleEntry {
        path: folder.to_owned(),
        status: Status::Broken,
        bundle: None,
        reason: Some(reason),
        manifest: None,
        scripts: Vec::new(),
        origin: None,
        serving: Vec::new(),
        runners: Vec::new(),
    };
    if let Some(other) = found.iter().find(|b| b.name() == name) {
        return broken(format!(
            "`{name}` is a bundle in the skills folder too ({}); the table grants by name, so \
             keep one: remove it there or drop `bundle` ({at})",
            other.path.display()
        ));
    }
    // No link: the folder the operator named is the one loaded.
    let is_dir = std::fs::symlink_metadata(folder).is_ok_and(|m| m.file_type().is_dir());
    if !is_dir || !bundle::is_bundle(folder) {
        return broken(format!(
            "the table names {} as the bundle `{name}` ({at}), but {}; put the bundle there \
             (a folder holding SKILL.md) or fix the path",
            folder.display(),
            if is_dir { "it holds no SKILL.md" } else { "there is no folder there" }
        ));
    }
    tracing::info!(skill = %name, path = %folder.display(), "bundle loaded from outside the skills folder, as the table names it");
    one(folder.to_owned(), policy, components)
}

fn one(path: PathBuf, policy: &Policy, components: &[SkillEntry]) -> BundleEntry {
    let entry = match bundle::load(&path) {
        Ok(b) => BundleEntry {
            path,
            status: Status::Active,
            bundle: Some(b),
            reason: None,
            manifest: None,
            scripts: Vec::new(),
            origin: None,
            serving: Vec::new(),
            runners: Vec::new(),
        },
        Err(e) => BundleEntry {
            path,
            status: Status::Broken,
            bundle: None,
            reason: Some(format!("SKILL.md: {e}")),
            manifest: None,
            scripts: Vec::new(),
            origin: None,
            serving: Vec::new(),
            runners: Vec::new(),
        },
    };
    let name = entry.name();
    if entry.status == Status::Broken {
        return entry;
    }
    if crate::policy::RESERVED_SKILL_NAMES.contains(&name.as_str()) {
        let reason = format!(
            "the skill name `{name}` is reserved for the harness's built-in tools ({}); rename the folder",
            crate::policy::BUILTIN_TOOL_NAMES
        );
        return refused(entry, reason);
    }
    if let Some(other) = components
        .iter()
        .find(|c| c.status != Status::Broken && c.manifest.as_ref().is_some_and(|m| m.name == name))
    {
        let reason = format!(
            "the skill name `{name}` is also claimed by {}; the table grants by name, so keep \
             only one of the two",
            other.path.display()
        );
        return refused(entry, reason);
    }
    if let (Some(pin), Some(found)) = (policy.pin(&name), entry.sha256())
        && found != pin.sha256
    {
        let reason = format!(
            "`{name}` is pinned to sha256 {} ({} line {}), but this bundle's digest (over every \
             file) is {found}; a file in it changed: if you trust the change, set sha256 = \
             \"{found}\" on that line, otherwise restore the bundle",
            pin.sha256,
            policy.origin().display(),
            pin.line
        );
        return refused(entry, reason);
    }
    let mut entry = entry;
    if let Some(b) = &entry.bundle {
        match super::trust::check_bundle(&entry.path, &name, b, policy) {
            Ok(origin) => entry.origin = origin,
            Err(reason) => return refused(entry, reason),
        }
    }
    for problem in entry.bundle.iter().flat_map(|b| &b.problems) {
        tracing::warn!(skill = %name, path = %entry.path.display(), "SKILL.md: {}", problem.message);
    }
    entry
}

fn refused(entry: BundleEntry, reason: String) -> BundleEntry {
    BundleEntry { status: Status::Broken, reason: Some(reason), manifest: None, ..entry }
}

/// Loads the bundle's `tools/*.wasm`, sorts its scripts into those that
/// run and those that do not, and writes the manifest the host offers. A
/// tool component that does not load, or two tools with one name, break
/// the bundle: a skill missing half its tools would mislead the model.
async fn offer(
    runtime: &Runtime,
    dir: &Path,
    entry: &mut BundleEntry,
    loaded_runners: &mut Vec<Runner>,
    on_compile: &mut impl FnMut(&Path),
) {
    let Some(b) = entry.bundle.clone() else { return };
    let mut tools: Vec<ToolSpec> = Vec::new();
    let mut serving: Vec<(String, LoadedSkill)> = Vec::new();
    for file in b.files.iter().filter(|f| is_tool_component(&f.path)) {
        let path = b.dir.join(&file.path);
        let loaded = super::load_component(runtime, &path, on_compile).await;
        let (Status::Active, Some(manifest), Some(component)) =
            (&loaded.status, loaded.manifest, loaded.loaded)
        else {
            let why = loaded.reason.unwrap_or_else(|| "it does not load".to_owned());
            *entry = refused(entry.clone(), format!("{}: {why}", file.path));
            return;
        };
        if loaded.sha256.as_deref() != Some(file.sha256.as_str()) {
            let why = format!("{} changed while the bundle was read; scan again", file.path);
            *entry = refused(entry.clone(), why);
            return;
        }
        for tool in manifest.tools {
            if tools.iter().any(|t| t.name == tool.name) || tool.name == RUN_SCRIPT {
                let why = format!(
                    "{}: a tool named `{}` is already one of this skill's tools; tool names must \
                     be unique across tools/*.wasm (and `{RUN_SCRIPT}` is the host's)",
                    file.path, tool.name
                );
                *entry = refused(entry.clone(), why);
                return;
            }
            serving.push((tool.name.clone(), component.clone()));
            tools.push(tool);
        }
    }
    entry.scripts = scripts(&b);
    let mut runners: Vec<(Language, LoadedSkill)> = Vec::new();
    for language in Language::ALL {
        if !entry.scripts.iter().any(|s| Language::of(&s.path) == Some(language)) {
            continue;
        }
        let at = match loaded_runners.iter().position(|r| r.language == language) {
            Some(at) => at,
            None => {
                loaded_runners.push(load_runner(runtime, dir, language, on_compile).await);
                loaded_runners.len() - 1
            }
        };
        let runner = &loaded_runners[at];
        match &runner.loaded {
            Ok(component) => runners.push((language, component.clone())),
            Err(why) => {
                let why = format!("cannot run here: {why}");
                for s in
                    entry.scripts.iter_mut().filter(|s| Language::of(&s.path) == Some(language))
                {
                    s.cannot_run = Some(why.clone());
                }
                tracing::warn!(skill = %b.name, runner = %runner.path.display(), "{why}");
            }
        }
    }
    let runnable: Vec<&str> =
        entry.scripts.iter().filter(|s| s.cannot_run.is_none()).map(|s| s.path.as_str()).collect();
    if !runnable.is_empty() {
        tools.push(run_script_spec(&b.name, &runnable, &entry.scripts));
    }
    entry.runners = runners;
    let version = b
        .metadata
        .get("version")
        .and_then(|v| semver::Version::parse(v).ok())
        .unwrap_or_else(|| semver::Version::new(0, 0, 0));
    entry.manifest = Some(Manifest {
        name: b.name.clone(),
        version,
        description: b.description.clone(),
        tools,
        instructions: Some(b.body.clone()).filter(|body| !body.is_empty()),
        requests: b.requests.clone(),
        requests_problem: None,
    });
    entry.serving = serving;
}

/// `tools/NAME.wasm`, directly in `tools/`.
fn is_tool_component(path: &str) -> bool {
    path.strip_prefix("tools/").is_some_and(|rest| !rest.contains('/') && rest.ends_with(".wasm"))
}

/// Every file under `scripts/`: Python and JavaScript ones run (when their
/// runner loads), nothing else ever does.
fn scripts(b: &Bundle) -> Vec<Script> {
    b.files
        .iter()
        .filter(|f| f.path.starts_with("scripts/"))
        .map(|f| {
            let cannot_run = match Language::of(&f.path) {
                Some(_) => None,
                None => Some(
                    "only Python and JavaScript scripts run, inside the sandbox; shell scripts \
                     and binaries never run (the model can read it with skills__read)"
                        .to_owned(),
                ),
            };
            Script { path: f.path.clone(), cannot_run }
        })
        .collect()
}

async fn load_runner(
    runtime: &Runtime,
    dir: &Path,
    language: Language,
    on_compile: &mut impl FnMut(&Path),
) -> Runner {
    let path = dir.join(RUNNERS).join(language.runner_file());
    let name = language.name();
    if !path.is_file() {
        let why =
            format!("the {name} runner {} is missing (`just skills` builds it)", path.display());
        return Runner { language, path, loaded: Err(why) };
    }
    let entry = super::load_component(runtime, &path, on_compile).await;
    let loaded = match (entry.status, entry.manifest, entry.loaded) {
        (Status::Active, Some(m), Some(loaded)) if m.tool(RUNNER_TOOL).is_some() => Ok(loaded),
        (Status::Active, Some(_), Some(_)) => Err(format!(
            "{} has no `{RUNNER_TOOL}` tool: it is not the script runner",
            path.display()
        )),
        (_, _, _) => Err(format!(
            "the {name} runner {} does not load: {}",
            path.display(),
            entry.reason.unwrap_or_default()
        )),
    };
    Runner { language, path, loaded }
}

/// What the model is offered for running the bundle's scripts: an enum
/// of their real paths.
fn run_script_spec(skill: &str, runnable: &[&str], all: &[Script]) -> ToolSpec {
    let languages: Vec<Language> = Language::ALL
        .into_iter()
        .filter(|l| runnable.iter().any(|p| Language::of(p) == Some(*l)))
        .collect();
    let how =
        languages.iter().map(|l| format!("`{}`", l.command())).collect::<Vec<_>>().join(" or ");
    let names = languages.iter().map(|l| l.name()).collect::<Vec<_>>().join(" and ");
    // What each runner provides; with Python alone, the text is the one the
    // eval figures were measured with.
    let provided = languages
        .iter()
        .map(|l| match l {
            Language::Python => "Python's standard library is there",
            Language::JavaScript => {
                "for JavaScript, Node's fs, path and process and fetch are there"
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut description = format!(
        "Run one of the {skill} skill's {names} scripts inside the sandbox, as {how} would, \
         with `stdin` as its standard input; the result is what it prints. {provided}; the \
         script reaches only the folders and hosts the permission table grants this skill. \
         Scripts: {}.",
        runnable.join(", ")
    );
    let others: Vec<&str> =
        all.iter().filter(|s| s.cannot_run.is_some()).map(|s| s.path.as_str()).collect();
    if !others.is_empty() {
        description.push_str(&format!(
            " These cannot run here (read them with skills__read instead): {}.",
            others.join(", ")
        ));
    }
    ToolSpec::host_defined(
        RUN_SCRIPT,
        description,
        json!({
            "type": "object",
            "properties": {
                "script": {"type": "string", "enum": runnable, "description": "The script to run."},
                "args": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 4096},
                    "maxItems": 64,
                    "description": "Command-line arguments, one string each (default none)."
                },
                "stdin": {
                    "type": "string",
                    "maxLength": 1_048_576,
                    "description": "Text the script reads from standard input (default empty)."
                }
            },
            "required": ["script"],
            "additionalProperties": false
        }),
    )
}
