//! What a case's permission table may grant without `--trust-cases`.
//!
//! A case runs its table without a person: every `confirm` is answered yes
//! (like `reach run --yes`). So whoever wrote the case file would decide
//! what the model may touch on the machine that runs the evaluation, and a
//! case set is something people download. By default a case is confined to
//! what it brings itself:
//!
//! - `read` and `write` folders inside the case's own working folder, both
//!   where the grant is written and where it leads once symlinks are
//!   resolved;
//! - `net` patterns that reach the case's own fixture server and nothing
//!   else: `127.0.0.1:{port}`. Other loopback ports are the runner's own
//!   services (a model server, a database), and a name — even `localhost`
//!   — goes wherever DNS says;
//! - no `env` and no credentials: their values come from the runner's
//!   environment and files, not from the case, and a skill that holds one
//!   can hand it on in a form masking does not recognise.
//!
//! [`Setting::trust_cases`](super::runner::Setting::trust_cases) (the CLI's
//! `--trust-cases`) lifts all of this, for case files the operator wrote or
//! checked. The check works on the resolved table ([`Policy::grants`]), not
//! on its text.

use super::case::{CaseError, LoadedCase, Placeholders};
use crate::policy::{Policy, ProtectedPath, SecretSource};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

/// What every refusal ends with: how to run the case anyway, and when not to.
pub const TRUST_HINT: &str = "pass --trust-cases to allow it (only for case files you wrote or \
                              checked: a case's table is granted without a person, like --yes)";

/// The port [`check_case`] fills `{port}` with. Any port would do: a
/// pattern is compared with the same value it was filled with.
const CHECK_PORT: u16 = 1;

/// One grant a case may not make without `--trust-cases`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Overreach {
    /// A folder outside the case's working folder.
    #[error(
        "skills.{skill}.{access} {declared:?} is {}, outside the case's working folder; \
         a case may grant only folders inside it (a relative path, or one under {{workdir}})",
        path.display()
    )]
    Folder {
        /// The skill.
        skill: String,
        /// `read` or `write`.
        access: &'static str,
        /// The folder as the table wrote it (placeholders filled).
        declared: String,
        /// Where it is, or where it leads, outside the working folder.
        path: PathBuf,
    },
    /// A host other than the case's fixture server.
    #[error(
        "skills.{skill}.net {pattern:?} reaches more than the case's fixture server; \
         a case may grant only \"127.0.0.1:{{port}}\""
    )]
    Host {
        /// The skill.
        skill: String,
        /// The pattern, as the policy normalised it.
        pattern: String,
    },
    /// A host environment variable.
    #[error(
        "skills.{skill}.env {name:?} hands the skill a variable of the runner's environment; a \
         case may not grant environment variables"
    )]
    Env {
        /// The skill.
        skill: String,
        /// The variable.
        name: String,
    },
    /// A credential.
    #[error(
        "skills.{skill}.credentials for {target} sends the runner's secret ({from}) with the \
         skill's requests; a case may not grant credentials"
    )]
    Credential {
        /// The skill.
        skill: String,
        /// Where the credential is sent.
        target: String,
        /// Where its value comes from: `env NAME` or `file PATH`.
        from: String,
    },
}

/// Every grant of `policy` beyond the working folder `workdir` (absolute,
/// symlinks resolved) and the fixture server at `fixture`, in table order.
pub fn overreach(policy: &Policy, workdir: &Path, fixture: SocketAddr) -> Vec<Overreach> {
    let mut found = Vec::new();
    for name in policy.listed_skills() {
        let grants = policy.grants(name);
        let skill = || name.to_owned();
        let folders = grants
            .read
            .iter()
            .map(|g| (g, "read"))
            .chain(grants.write.iter().map(|g| (g, "write")));
        for (grant, access) in folders {
            // Where the grant is and where it leads: a path that climbs out
            // and back in is caught by `lexical`, a link inside the working
            // folder that points out by `path` — or, for a folder that does
            // not exist yet, by the real path of its nearest existing parent.
            let parent = ProtectedPath::new("a granted folder", &grant.lexical).resolved();
            if let Some(outside) =
                [&grant.lexical, &grant.path, &parent].into_iter().find(|p| !p.starts_with(workdir))
            {
                found.push(Overreach::Folder {
                    skill: skill(),
                    access,
                    declared: grant.declared.clone(),
                    path: outside.clone(),
                });
            }
        }
        for pattern in grants.net.patterns().iter().filter(|p| !p.allows_only(fixture)) {
            found.push(Overreach::Host { skill: skill(), pattern: pattern.to_string() });
        }
        for env in &grants.env {
            found.push(Overreach::Env { skill: skill(), name: env.clone() });
        }
        for credential in &grants.credentials {
            let from = match &credential.source {
                SecretSource::Env(name) => format!("env {name}"),
                SecretSource::File(path) => format!("file {}", path.display()),
            };
            found.push(Overreach::Credential { skill: skill(), target: credential.target(), from });
        }
    }
    found
}

/// The refusal of a run whose table overreaches: every grant and why, then
/// how to allow it.
pub fn refusal(found: &[Overreach]) -> String {
    let each: Vec<String> = found.iter().map(ToString::to_string).collect();
    format!(
        "the case's permission table grants more than a case may: {}; {TRUST_HINT}",
        each.join("; ")
    )
}

/// Check a loaded case before anything runs: its table with the
/// placeholders filled in for a scratch working folder and a stand-in
/// port, against [`overreach`]. The error names the case's file and line.
///
/// A table that does not parse passes here; its run reports the error, as
/// it always has. Each run checks again with its real folder and port.
pub fn check_case(case: &LoadedCase) -> Result<(), CaseError> {
    let error = |message: String| CaseError {
        location: case.location(),
        message: format!("{}: {message}", case.case.id),
    };
    let scratch = tempfile::Builder::new().prefix("reach-eval-check-").tempdir().map_err(|e| {
        error(format!("could not create a folder to check the case's permission table in: {e}"))
    })?;
    let workdir = scratch.path().join("work");
    std::fs::create_dir(&workdir).map_err(|e| error(format!("{}: {e}", workdir.display())))?;
    let workdir =
        workdir.canonicalize().map_err(|e| error(format!("{}: {e}", workdir.display())))?;
    let values = Placeholders { workdir: workdir.to_string_lossy().into_owned(), port: CHECK_PORT };
    let filled = case.instantiate(&values);
    let Ok(policy) = Policy::parse(&filled.policy, &scratch.path().join("reach.toml"), &workdir)
    else {
        return Ok(());
    };
    let found = overreach(&policy, &workdir, SocketAddr::from((Ipv4Addr::LOCALHOST, CHECK_PORT)));
    if found.is_empty() { Ok(()) } else { Err(error(refusal(&found))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A working folder with a link inside that points out of it, and a
    /// folder beside it.
    struct Scratch {
        _dir: tempfile::TempDir,
        workdir: PathBuf,
    }

    fn scratch() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let workdir = root.join("work");
        std::fs::create_dir_all(workdir.join("notes/deep")).unwrap();
        std::fs::create_dir_all(root.join("beside")).unwrap();
        std::os::unix::fs::symlink(root.join("beside"), workdir.join("out-link")).unwrap();
        std::os::unix::fs::symlink(workdir.join("notes"), root.join("in-link")).unwrap();
        Scratch { _dir: dir, workdir }
    }

    const FIXTURE: &str = "127.0.0.1:4242";

    fn found(s: &Scratch, table: &str) -> Vec<String> {
        let table = table.replace("{workdir}", &s.workdir.to_string_lossy());
        let policy = Policy::parse(&table, Path::new("reach.toml"), &s.workdir)
            .unwrap_or_else(|e| panic!("{table}: {e}"));
        overreach(&policy, &s.workdir, FIXTURE.parse().unwrap())
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// (grants of `[skills.x]`, what is refused: `None` when confined)
    const TABLE: &[(&str, Option<&str>)] = &[
        ("read = [\".\"]", None),
        ("read = [\"./notes\"]\nwrite = [\"./notes/deep\", \"./new\"]", None),
        ("read = [\"{workdir}/notes\"]", None),
        ("read = [\"notes/../notes/deep\"]", None),
        ("net = [\"127.0.0.1:4242\"]", None),
        ("net = [\"[::ffff:127.0.0.1]:4242\"]", None),
        (
            "read = [\"/etc\"]",
            Some(r#"skills.x.read "/etc" is /etc, outside the case's working folder"#),
        ),
        ("write = [\"..\"]", Some(r#"skills.x.write ".." is "#)),
        ("read = [\"./notes/../../beside\"]", Some(r#"skills.x.read "./notes/../../beside" is "#)),
        ("read = [\"{workdir}-other\"]", Some("-other, outside the case's working folder")),
        ("read = [\"./out-link\"]", Some("/beside, outside the case's working folder")),
        ("write = [\"./out-link/sub\"]", Some("/beside/sub, outside the case's working folder")),
        ("read = [\"{workdir}/../in-link\"]", Some("/in-link, outside the case's working folder")),
        (
            "net = [\"example.com\"]",
            Some(concat!(
                r#"skills.x.net "example.com" reaches more than the case's fixture "#,
                r#"server; a case may grant only "127.0.0.1:{port}""#
            )),
        ),
        ("net = [\"*.example.com:*\"]", Some(r#"skills.x.net "*.example.com:*""#)),
        ("net = [\"localhost:4242\"]", Some(r#"skills.x.net "localhost:4242""#)),
        ("net = [\"127.0.0.1:*\"]", Some(r#"skills.x.net "127.0.0.1:*""#)),
        ("net = [\"127.0.0.1\"]", Some(r#"skills.x.net "127.0.0.1""#)),
        ("net = [\"127.0.0.1:8080\"]", Some(r#"skills.x.net "127.0.0.1:8080""#)),
        ("net = [\"127.0.0.2:4242\"]", Some(r#"skills.x.net "127.0.0.2:4242""#)),
        ("net = [\"[::1]:4242\"]", Some(r#"skills.x.net "[::1]:4242""#)),
        ("net = [\"10.0.0.5:4242\"]", Some(r#"skills.x.net "10.0.0.5:4242""#)),
        (
            "env = [\"HOME\"]",
            Some(concat!(
                r#"skills.x.env "HOME" hands the skill a variable of the runner's "#,
                r#"environment; a case may not grant environment variables"#
            )),
        ),
        (
            "net = [\"127.0.0.1:4242\"]\n[[skills.x.credentials]]\nhost = \"127.0.0.1:4242\"\n\
             env = \"REACH_TOKEN\"\nheader = \"Authorization\"\nallow_http = true",
            Some(
                "skills.x.credentials for 127.0.0.1:4242 sends the runner's secret (env \
                 REACH_TOKEN) with the skill's requests; a case may not grant credentials",
            ),
        ),
    ];

    #[test]
    fn a_case_is_confined_to_its_working_folder_and_its_fixture_server() {
        let s = scratch();
        for &(grants, refused) in TABLE {
            let got = found(&s, &format!("[skills.x]\n{grants}\n"));
            match refused {
                None => assert!(got.is_empty(), "{grants}\n→ {got:?}"),
                Some(wanted) => assert!(
                    got.len() == 1 && got[0].contains(wanted),
                    "{grants}\n→ {got:?}\nwanted: {wanted}"
                ),
            }
        }
    }

    #[test]
    fn every_overreach_is_named_and_the_refusal_says_how_to_allow_it() {
        let s = scratch();
        let table = "[skills.files]\nread = [\"./notes\", \"/etc\"]\n\n[skills.web]\n\
                     net = [\"127.0.0.1:4242\", \"example.com\"]\n";
        let policy = Policy::parse(table, Path::new("reach.toml"), &s.workdir).unwrap();
        let found = overreach(&policy, &s.workdir, FIXTURE.parse().unwrap());
        assert_eq!(found.len(), 2, "{found:?}");
        let text = refusal(&found);
        assert!(
            text.starts_with(concat!(
                r#"the case's permission table grants more than a case may: skills.files.read "#,
                r#""/etc" is /etc"#
            )),
            "{text}"
        );
        assert!(
            text.contains(r#"; skills.web.net "example.com" reaches"#)
                && text.ends_with(TRUST_HINT),
            "{text}"
        );
    }

    fn case(policy: &str) -> LoadedCase {
        let line = serde_json::json!({"id": "c", "domain": "d", "task": "t", "policy": policy})
            .to_string();
        super::super::case::parse_line(Path::new("cases.jsonl"), 7, &line).unwrap()
    }

    #[test]
    fn check_case_fills_the_placeholders_and_names_the_line() {
        check_case(&case(
            "[skills.web]\nnet = [\"127.0.0.1:{port}\"]\n\
             write = [\"{workdir}/pages\", \"./notes\"]\n",
        ))
        .expect("confined");
        let err = check_case(&case("[skills.files]\nread = [\"/etc\"]\n")).unwrap_err().to_string();
        assert!(
            err.starts_with(concat!(
                r#"cases.jsonl:7: c: the case's permission table grants more than a case may: "#,
                r#"skills.files.read "/etc""#
            )),
            "{err}"
        );
        assert!(err.ends_with(TRUST_HINT), "{err}");
        check_case(&case("[skills.files]\nread = 3\n"))
            .expect("a table that does not parse is its run's error");
    }

    #[test]
    fn every_shipped_case_is_confined() {
        let evals = Path::new(env!("CARGO_MANIFEST_DIR")).join("../evals");
        let cases = super::super::case::load(&[evals]).expect("the shipped cases load");
        assert!(cases.len() >= 50, "{} cases", cases.len());
        for case in &cases {
            check_case(case).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
