//! Checks across the whole table, after each skill has been resolved on its
//! own: a credential's secret must reach no skill by another road.
//!
//! - Its environment variable may not be in any skill's `env`, its own or
//!   another's: the skill would read the value straight from its
//!   environment.
//! - Its file may not lie inside any skill's `read` or `write` folder: the
//!   skill would read the file. Paths compare as written (without `.` and
//!   `..`) and with symlinks resolved, the file's folder when the file does
//!   not exist yet, so neither a symlinked folder nor a symlinked secret
//!   slips past.
//!
//! Each error points at the grant that would leak (the `env` or folder
//! entry), names both skills and the credential's line, and says the fix.

use std::path::{Path, PathBuf};

use super::SecretSource;
use super::error::PolicyError;
use super::folders::lexical_normalize;
use super::raw::ListedSkill;

/// One credential, with what identifies its secret.
struct Secret<'a> {
    skill: &'a str,
    target: String,
    line: usize,
    source: &'a SecretSource,
    /// For a file: every path that names it (see the module docs).
    paths: Vec<PathBuf>,
}

/// Refuse a table in which a credential's secret is also granted to a
/// skill, by `env` or by a folder. `skills` are in file order, with the
/// positions their entries were read from; `file` names the table.
pub(super) fn check(file: &Path, skills: &[ListedSkill]) -> Result<(), PolicyError> {
    let mut secrets = Vec::new();
    for skill in skills {
        let name = skill.grants.skill.as_str();
        for (cred, &line) in skill.grants.credentials.iter().zip(&skill.credential_lines) {
            let paths = match &cred.source {
                SecretSource::File(path) => spellings(path),
                SecretSource::Env(_) => Vec::new(),
            };
            secrets.push(Secret {
                skill: name,
                target: cred.target(),
                line,
                source: &cred.source,
                paths,
            });
        }
    }
    if secrets.is_empty() {
        return Ok(());
    }

    for skill in skills {
        let name = skill.grants.skill.as_str();
        for (var, at) in &skill.env_at {
            let hit = secrets.iter().find(|s| matches!(s.source, SecretSource::Env(v) if v == var));
            if let Some(secret) = hit {
                let message = if secret.skill == name {
                    format!(
                        "{var} is the secret of the credential for {} (line {}); a skill must \
                         never see it — remove it from `env`",
                        secret.target, secret.line
                    )
                } else {
                    let env_key = at.key.rsplit_once('[').map_or(at.key.as_str(), |(k, _)| k);
                    format!(
                        "{var} is the secret of skill {}'s credential for {} (line {}); no other \
                         skill may see it — remove it from {env_key}",
                        secret.skill, secret.target, secret.line
                    )
                };
                return Err(at.invalid(file, message));
            }
        }
        for folder in &skill.folders_at {
            let hit = secrets.iter().find_map(|s| {
                s.paths.iter().find(|p| p.starts_with(&folder.grant.path)).map(|p| (s, p))
            });
            if let Some((secret, path)) = hit {
                let whose = if secret.skill == name {
                    "its own credential".to_owned()
                } else {
                    format!("skill {}'s credential", secret.skill)
                };
                return Err(folder.at.invalid(
                    file,
                    format!(
                        "{:?} contains {}, the secret of {whose} for {} (line {}); a skill that \
                         can read the file holds the secret — keep secrets outside every granted \
                         folder, or grant a narrower folder",
                        folder.grant.declared,
                        path.display(),
                        secret.target,
                        secret.line
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The paths that name the file at `path`: as written without `.` and `..`,
/// inside its folder with symlinks resolved, and the file itself resolved.
fn spellings(path: &Path) -> Vec<PathBuf> {
    let lexical = lexical_normalize(path);
    let mut out = vec![lexical.clone()];
    if let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name())
        && let Ok(real) = std::fs::canonicalize(parent)
    {
        out.push(real.join(name));
    }
    if let Ok(real) = std::fs::canonicalize(&lexical) {
        out.push(real);
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    fn parse(base: &Path, text: &str) -> Result<Policy, String> {
        Policy::parse(text, Path::new("reach.toml"), base).map_err(|e| e.to_string())
    }

    const API: &str = "[skills.api]\nnet = [\"api.example.com\"]\n\n[[skills.api.credentials]]\n\
                       host = \"api.example.com\"\nheader = \"Authorization\"\n";

    #[test]
    fn a_credential_variable_may_not_be_in_any_skills_env() {
        let api = format!("{API}env = \"TOKEN\"\n");
        let other = format!("{api}\n[skills.web]\nenv = [\"LANG\", \"TOKEN\"]\n");
        let err = parse(Path::new("/"), &other).unwrap_err();
        assert!(
            err.starts_with(
                "reach.toml:10:16: skills.web.env[1]: TOKEN is the secret of skill api's credential"
            ),
            "{err}"
        );
        assert!(err.contains("(line 4)") && err.contains("remove it from skills.web.env"), "{err}");
        // Declared before the credential's skill: still found.
        let before = format!("[skills.web]\nenv = [\"TOKEN\"]\n\n{api}");
        assert!(
            parse(Path::new("/"), &before)
                .unwrap_err()
                .starts_with("reach.toml:2:8: skills.web.env[0]")
        );
        // The same skill, as before.
        let own = "[skills.api]\nnet = [\"api.example.com\"]\nenv = [\"TOKEN\"]\n\n\
                   [[skills.api.credentials]]\nhost = \"api.example.com\"\n\
                   header = \"Authorization\"\nenv = \"TOKEN\"\n";
        let err = parse(Path::new("/"), own).unwrap_err();
        assert!(
            err.starts_with(
                "reach.toml:3:8: skills.api.env[0]: TOKEN is the secret of the credential for \
                 api.example.com (line 5)"
            ),
            "{err}"
        );
        // Another variable is fine.
        parse(Path::new("/"), &format!("{api}\n[skills.web]\nenv = [\"TOKEN2\"]\n"))
            .expect("no overlap");
    }

    #[test]
    fn a_credential_file_may_not_lie_inside_any_skills_folder() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(base.join("docs/keys")).unwrap();
        std::fs::create_dir_all(base.join("secrets")).unwrap();
        std::fs::write(base.join("docs/keys/token"), "t\n").unwrap();
        std::fs::write(base.join("secrets/token"), "t\n").unwrap();
        let with_file = |file: &Path, grants: &str| {
            format!("{API}file = \"{}\"\n\n[skills.files]\n{grants}\n", file.display())
        };

        for (file, grants, key) in [
            (base.join("docs/keys/token"), "read = [\"./docs\"]", "skills.files.read[0]"),
            (
                base.join("docs/keys/token"),
                "write = [\"./notes\", \"docs/keys\"]",
                "skills.files.write[1]",
            ),
            (base.join("docs/../docs/keys/token"), "read = [\"docs\"]", "skills.files.read[0]"),
            (base.join("secrets/token"), "read = [\"/\"]", "skills.files.read[0]"),
            (base.join("secrets/not-yet"), "read = [\"./secrets\"]", "skills.files.read[0]"),
        ] {
            let err = parse(&base, &with_file(&file, grants)).unwrap_err();
            assert!(
                err.contains(&format!(": {key}: "))
                    && err.contains("skill api's credential for api.example.com (line 4)"),
                "{file:?} {grants}: {err}"
            );
        }
        parse(
            &base,
            &with_file(&base.join("secrets/token"), "read = [\"./docs\"]\nwrite = [\"./notes\"]"),
        )
        .expect("secret outside every folder");

        // Symlinks: a link to the secret's folder, and a link to the secret.
        std::os::unix::fs::symlink(base.join("docs/keys"), base.join("keys-link")).unwrap();
        std::os::unix::fs::symlink(base.join("docs/keys/token"), base.join("secrets/token-link"))
            .unwrap();
        for file in [
            base.join("keys-link/token"),
            base.join("keys-link/missing"),
            base.join("secrets/token-link"),
        ] {
            let err = parse(&base, &with_file(&file, "read = [\"./docs\"]")).unwrap_err();
            assert!(
                err.contains("skills.files.read[0]") && err.contains("docs/keys/"),
                "{file:?}: {err}"
            );
        }
        // Its own folders count too.
        let own = format!(
            "[skills.api]\nnet = [\"api.example.com\"]\nread = [\"./docs\"]\n\n\
             [[skills.api.credentials]]\nhost = \"api.example.com\"\nheader = \"Authorization\"\n\
             file = \"{}\"\n",
            base.join("docs/keys/token").display()
        );
        let err = parse(&base, &own).unwrap_err();
        assert!(
            err.starts_with("reach.toml:3:9: skills.api.read[0]")
                && err.contains("its own credential"),
            "{err}"
        );
    }
}
