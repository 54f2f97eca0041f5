//! Which file may speak for a skill name.
//!
//! Grants in `reach.toml` are keyed by skill name, and a component reports
//! its own name in `describe`. Trusting that report alone would let any
//! file take another skill's folders, hosts, credentials and level by
//! claiming its name (with a higher version, or the same one sorting
//! first). Two checks bind the name to something the operator controls:
//!
//! - the **file name**: `NAME.wasm` or `NAME-VERSION.wasm`, with `VERSION`
//!   exactly the manifest's, so a name is taken only by a file the operator
//!   put there under that name;
//! - an optional **pin**, `[skills.NAME] sha256 = "…"`: then only the file
//!   with that digest may be `NAME`, whatever other files claim.

use super::Manifest;
use crate::policy::SkillPin;
use std::path::Path;

/// Whether a file stem may provide skill `name` at `version`: the stem is
/// the name itself, or `NAME-VERSION` with the manifest's exact version.
///
/// Compared as whole strings, not split at `-`: skill names may contain `-`
/// (`web-fetch`), so `web-fetch.wasm` is `web-fetch`, never `web` version
/// `fetch`.
pub(super) fn stem_names(stem: &str, name: &str, version: &semver::Version) -> bool {
    stem == name || stem == format!("{name}-{version}")
}

/// Whether a file stem looks like it was meant for skill `name` (any
/// version), to explain a broken file when `name` is asked for.
pub(super) fn stem_claims(stem: &str, name: &str) -> bool {
    stem == name
        || stem
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|version| semver::Version::parse(version).is_ok())
}

/// Why the file at `path` may not provide the skill its manifest names, or
/// `None` when its name matches.
pub(super) fn name_mismatch(path: &Path, manifest: &Manifest) -> Option<String> {
    let stem = path.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default();
    if stem_names(&stem, &manifest.name, &manifest.version) {
        return None;
    }
    let file = path.file_name().map(|s| s.to_string_lossy()).unwrap_or_default();
    let (name, version) = (&manifest.name, &manifest.version);
    Some(format!(
        "{file} claims to be skill `{name}` {version}, but a skill's file must be named after it, \
         so it gets nothing; if you trust it to be `{name}`, rename it to {name}.wasm or \
         {name}-{version}.wasm, otherwise remove it"
    ))
}

/// Why a file with digest `found` may not be `name` under `pin`, or `None`
/// when the digests match.
pub(super) fn pin_mismatch(
    name: &str,
    found: &str,
    pin: &SkillPin,
    policy: &Path,
) -> Option<String> {
    if found == pin.sha256 {
        return None;
    }
    Some(format!(
        "`{name}` is pinned to sha256 {expected} ({policy} line {line}), but this file's sha256 is \
         {found}; if you trust this file, set sha256 = \"{found}\" on that line, otherwise remove \
         the file",
        expected = pin.sha256,
        policy = policy.display(),
        line = pin.line,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (file stem, manifest name, manifest version, may provide it?)
    const STEMS: &[(&str, &str, &str, bool)] = &[
        ("files", "files", "1.2.0", true),
        ("files-1.2.0", "files", "1.2.0", true),
        ("files-1.2.1", "files", "1.2.0", false),
        ("files-1.2", "files", "1.2.0", false),
        ("files-v1.2.0", "files", "1.2.0", false),
        ("files-1.2.0-rc.1", "files", "1.2.0-rc.1", true),
        ("files-1.2.0-rc.1", "files", "1.2.0", false),
        ("files-1.2.0+build.5", "files", "1.2.0+build.5", true),
        ("files-", "files", "1.2.0", false),
        ("files_1.2.0", "files", "1.2.0", false),
        ("files.1.2.0", "files", "1.2.0", false),
        ("Files", "files", "1.2.0", false),
        ("FILES-1.2.0", "files", "1.2.0", false),
        ("weather", "files", "9.9.9", false),
        ("files2", "files", "1.0.0", false),
        ("my-files", "files", "1.0.0", false),
        ("files-extra", "files", "1.0.0", false),
        ("", "files", "1.0.0", false),
        // Names with `-`: the whole name, never a prefix of it.
        ("web-fetch", "web-fetch", "0.1.0", true),
        ("web-fetch-0.1.0", "web-fetch", "0.1.0", true),
        ("web-fetch", "web", "0.1.0", false),
        ("web-0.1.0", "web-fetch", "0.1.0", false),
        ("web-fetch-0.1.0", "web", "0.1.0", false),
        ("http_api", "http_api", "0.1.0", true),
        ("http-api", "http_api", "0.1.0", false),
    ];

    #[test]
    fn a_file_stem_names_its_skill_and_exact_version_or_nothing() {
        for &(stem, name, version, ok) in STEMS {
            let version = semver::Version::parse(version).unwrap();
            assert_eq!(stem_names(stem, name, &version), ok, "{stem:?} for {name} {version}");
        }
    }

    #[test]
    fn a_broken_file_is_matched_to_the_name_it_was_meant_for() {
        assert!(stem_claims("files", "files"));
        assert!(stem_claims("files-2.0.0", "files"));
        assert!(!stem_claims("files-extra", "files"));
        assert!(!stem_claims("web-fetch", "web"));
        assert!(!stem_claims("weather", "files"));
    }

    #[test]
    fn a_mismatch_names_the_file_the_claim_and_the_fix() {
        let manifest = Manifest {
            name: "files".into(),
            version: semver::Version::new(9, 9, 9),
            description: String::new(),
            tools: Vec::new(),
            instructions: None,
            requests: Default::default(),
            requests_problem: None,
        };
        let reason =
            name_mismatch(Path::new("/srv/skills/weather.wasm"), &manifest).expect("refused");
        insta::assert_snapshot!(
            reason,
            @"weather.wasm claims to be skill `files` 9.9.9, but a skill's file must be named \
              after it, so it gets nothing; if you trust it to be `files`, rename it to files.wasm \
              or files-9.9.9.wasm, otherwise remove it"
        );
        assert_eq!(name_mismatch(Path::new("/srv/skills/files-9.9.9.wasm"), &manifest), None);
    }

    #[test]
    fn a_pin_mismatch_gives_both_digests_and_the_line() {
        let pin = SkillPin { sha256: "a".repeat(64), line: 7 };
        assert_eq!(pin_mismatch("files", &"a".repeat(64), &pin, Path::new("reach.toml")), None);
        let reason =
            pin_mismatch("files", &"b".repeat(64), &pin, Path::new("reach.toml")).expect("refused");
        assert!(
            reason.contains(&format!("pinned to sha256 {} (reach.toml line 7)", "a".repeat(64))),
            "{reason}"
        );
        assert!(reason.contains(&format!("this file's sha256 is {}", "b".repeat(64))), "{reason}");
    }
}
