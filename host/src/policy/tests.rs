//! Whole-file behaviour of [`Policy`]: what a table grants, and the exact
//! text of every kind of error an operator can see.

use super::*;

/// Parse `text` as `reach.toml` with folders relative to `base`.
fn parse_in(base: &Path, text: &str) -> Result<Policy, PolicyError> {
    Policy::parse(text, Path::new("reach.toml"), base)
}

/// The error text for `text`, with folders relative to `/`.
fn error(text: &str) -> String {
    parse_in(Path::new("/"), text).expect_err("should be refused").to_string()
}

fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let real = std::fs::canonicalize(dir.path()).expect("canonicalize");
    (dir, real)
}

const FULL: &str = r#"
[defaults]
level = "deny"
memory_mb = 32
timeout_ms = 2000

[skills.files]
level = "auto"
read  = ["./docs", "./notes", "docs/", "/definitely/absent/../missing"]
write = ["./notes"]
net   = ["API.example.com", "*.example.org:*", "[::1]:8080", "api.example.com."]
env   = ["LANG", "HOME", "LANG"]
timeout_ms = 5000

[skills.files.tools.write]
level = "confirm"

[skills.files.tools.delete]
level = "L0"

[skills.clock]
"#;

#[test]
fn a_full_table_resolves_to_absolute_deduplicated_grants() {
    let (_dir, base) = tempdir();
    std::fs::create_dir(base.join("docs")).expect("mkdir");
    std::fs::create_dir(base.join("notes")).expect("mkdir");
    let policy = parse_in(&base, FULL).expect("valid table");
    let files = policy.grants("files");

    assert!(files.listed);
    assert_eq!(files.level, Level::Auto);
    let read: Vec<_> = files.read.iter().map(|g| (g.path.clone(), g.exists)).collect();
    assert_eq!(
        read,
        [(base.join("docs"), true), (PathBuf::from("/definitely/missing"), false)],
        "docs once, notes only writable, missing folder kept"
    );
    assert_eq!(files.read[0].declared, "./docs");
    let write: Vec<_> = files.write.iter().map(|g| g.path.clone()).collect();
    assert_eq!(write, [base.join("notes")]);
    assert_eq!(files.net.to_string(), "api.example.com, *.example.org:*, [::1]:8080");
    assert_eq!(files.env, ["LANG", "HOME"]);

    // Limits inherit key by key: memory from [defaults], timeout overridden,
    // output from the built-in value.
    assert_eq!(files.limits.memory_bytes, 32 * 1024 * 1024);
    assert_eq!(files.limits.timeout, Duration::from_millis(5000));
    assert_eq!(files.limits.max_output_bytes, 256 * 1024);

    assert_eq!(files.level_for("write"), Level::Confirm);
    assert_eq!(files.level_for("delete"), Level::Deny);
    assert_eq!(files.level_for("list"), Level::Auto);
}

#[test]
fn a_listed_skill_without_keys_gets_defaults_and_nothing_else() {
    let (_dir, base) = tempdir();
    let policy = parse_in(&base, FULL).expect("valid table");
    let clock = policy.grants("clock");
    assert!(clock.listed);
    assert_eq!(clock.level, Level::Deny, "level from [defaults]");
    assert_eq!(clock.limits.timeout, Duration::from_millis(2000));
    assert!(clock.read.is_empty() && clock.write.is_empty());
    assert!(clock.net.is_empty() && clock.env.is_empty() && clock.tool_levels.is_empty());
}

#[test]
fn an_unlisted_skill_gets_no_folders_network_or_environment() {
    let (_dir, base) = tempdir();
    let policy = parse_in(&base, FULL).expect("valid table");
    let stranger = policy.grants("stranger");
    assert!(!stranger.listed);
    assert_eq!(stranger.skill, "stranger");
    assert_eq!(stranger.level, Level::Deny);
    assert_eq!(stranger.limits.memory_bytes, 32 * 1024 * 1024);
    assert!(stranger.read.is_empty() && stranger.write.is_empty());
    assert!(stranger.net.is_empty() && stranger.env.is_empty());
    assert!(stranger.net.allows("https", "api.example.com", 443).is_none());
    assert_eq!(policy.skill_line("stranger"), None);
    assert!(policy.tool_overrides("stranger").is_empty());
}

#[test]
fn listing_follows_the_file_and_reports_lines() {
    let (_dir, base) = tempdir();
    let policy = parse_in(&base, FULL).expect("valid table");
    assert_eq!(policy.listed_skills(), ["files", "clock"]);
    assert_eq!(policy.skill_line("files"), Some(7));
    assert_eq!(policy.skill_line("clock"), Some(21));
    assert_eq!(policy.tool_overrides("files"), [("write", 15), ("delete", 18)]);
    assert_eq!(policy.origin(), Path::new("reach.toml"));
}

#[test]
fn level_aliases_in_any_case() {
    let text = r#"
[defaults]
level = "L2"
[skills.a]
level = "l0"
[skills.b]
level = "Confirm"
[skills.b.tools.t]
level = "AUTO"
"#;
    let policy = parse_in(Path::new("/"), text).expect("valid");
    assert_eq!(policy.default_level(), Level::Auto);
    assert_eq!(policy.grants("a").level, Level::Deny);
    assert_eq!(policy.grants("b").level, Level::Confirm);
    assert_eq!(policy.grants("b").level_for("t"), Level::Auto);
    assert_eq!(policy.level("b", "t"), Level::Auto);
    assert_eq!(policy.level("b", "other"), Level::Confirm);
    assert_eq!(policy.level("unlisted", "t"), policy.default_level());
    assert_eq!(policy.grants("c").level, Level::Auto);
}

#[test]
fn an_empty_file_and_the_builtin_policy_grant_nothing() {
    let empty = parse_in(Path::new("/"), "").expect("empty is valid");
    let builtin = Policy::builtin();
    assert_eq!(builtin.origin(), Path::new("<built-in>"));
    for policy in [&empty, &builtin] {
        let grants = policy.grants("files");
        assert_eq!(grants, SkillGrants { level: Level::Confirm, ..SkillGrants::none("files") });
        assert_eq!(grants.limits, Limits::default());
        assert!(policy.listed_skills().is_empty());
    }
    let limits = Limits::default();
    assert_eq!(limits.memory_bytes, 64 * 1024 * 1024);
    assert_eq!(limits.timeout, Duration::from_secs(10));
    assert_eq!(limits.max_output_bytes, 256 * 1024);
}

#[test]
fn none_grants_nothing_at_deny() {
    let none = SkillGrants::none("files");
    assert_eq!(none.level, Level::Deny);
    assert_eq!(none.level_for("anything"), Level::Deny);
    assert!(!none.listed && none.net.is_empty() && none.read.is_empty() && none.env.is_empty());
}

#[test]
fn load_resolves_folders_against_the_files_directory() {
    let (_dir, base) = tempdir();
    std::fs::create_dir_all(base.join("conf/data")).expect("mkdir");
    let file = base.join("conf/reach.toml");
    std::fs::write(&file, "[skills.files]\nread = [\"data\", \"../elsewhere\"]\n").expect("write");
    let policy = Policy::load(&file).expect("load");
    assert_eq!(policy.origin(), file);
    let read = policy.grants("files").read;
    assert_eq!(read[0].path, base.join("conf/data"));
    assert!(read[0].exists);
    assert_eq!(read[1].path, base.join("elsewhere"));
    assert!(!read[1].exists);
}

#[test]
fn load_of_a_missing_file_is_an_io_error() {
    let (_dir, base) = tempdir();
    let missing = base.join("reach.toml");
    let err = Policy::load(&missing).expect_err("missing");
    assert!(matches!(&err, PolicyError::Io { path, .. } if *path == missing));
}

#[test]
fn grants_serialize_with_canonical_patterns_and_milliseconds() {
    let policy = parse_in(Path::new("/"), FULL).expect("valid");
    let value = toml::Value::try_from(policy.grants("files")).expect("serialize");
    assert_eq!(value["level"].as_str(), Some("auto"));
    assert_eq!(value["limits"]["timeout_ms"].as_integer(), Some(5000));
    assert_eq!(value["net"][0].as_str(), Some("api.example.com"));
    assert_eq!(value["tool_levels"]["delete"].as_str(), Some("deny"));
    assert_eq!(value["write"][0]["path"].as_str(), Some("/notes"));
}

#[test]
fn errors_from_the_parser_name_line_column_and_key() {
    insta::assert_snapshot!(
        error("[skills.files]\nlevel = \"auto\"\nlevle = \"auto\"\n"),
        @"reach.toml:3:1: unknown field `levle`, expected one of `level`, `read`, `write`, `net`, \
          `env`, `memory_mb`, `timeout_ms`, `max_output_kb`, `tools`, `credentials`, `sha256`, \
          `bundle`, `origin`, `signed_by`"
    );
    insta::assert_snapshot!(
        error("[defaults]\nmemory = 64\n"),
        @"reach.toml:2:1: unknown field `memory`, expected one of `level`, `memory_mb`, \
          `timeout_ms`, `max_output_kb`"
    );
    insta::assert_snapshot!(
        error("[skill.files]\nlevel = \"auto\"\n"),
        @"reach.toml:1:2: unknown field `skill`, expected one of `defaults`, `skills`, `model`, \
          `memory`, `agents`, `delegation`, `journal`"
    );
    insta::assert_snapshot!(
        error("[skills.files.tools.write]\nlevel = \"auto\"\nread = []\n"),
        @"reach.toml:3:1: unknown field `read`, expected `level`"
    );
    insta::assert_snapshot!(
        error("[skills.files.tools.write]\n"),
        @"reach.toml:1:1: missing field `level`"
    );
    insta::assert_snapshot!(
        error("[skills.files.tools]\nwrite = \"auto\"\n"),
        @r#"reach.toml:2:9: invalid type: string "auto", expected a table with `level`"#
    );
    insta::assert_snapshot!(
        error("[skills.files]\nlevel = 2\n"),
        @"reach.toml:2:9: invalid type: integer `2`, expected a string"
    );
    insta::assert_snapshot!(
        error("[skills.files]\nnet = \"example.com\"\n"),
        @r#"reach.toml:2:7: invalid type: string "example.com", expected a sequence"#
    );
    insta::assert_snapshot!(
        error("[skills.files]\nlevel = auto\n"),
        @"reach.toml:2:9: string values must be quoted, expected literal string"
    );
    insta::assert_snapshot!(
        error("[skills.files]\n[skills.files]\n"),
        @"reach.toml:2:9: duplicate key"
    );
    insta::assert_snapshot!(
        error("[defaults]\nmemory_mb = 99999999999999999999\n"),
        @"reach.toml:2:13: invalid type: integer `99999999999999999999` as i128, expected i64"
    );
    insta::assert_snapshot!(
        error("skills = [\"files\"]\n"),
        @"reach.toml:1:10: invalid type: sequence, expected a map"
    );
}

#[test]
fn a_table_may_not_grant_a_name_the_built_in_tools_use() {
    for name in ["memory", "skills", "agents", "workbench"] {
        let message = error(&format!(
            "[skills.files]\nlevel = \"auto\"\n\n[skills.{name}]\nlevel = \"auto\"\n"
        ));
        assert!(
            message.starts_with(&format!(
                "reach.toml:4:9: skills.{name}: \"{name}\" is reserved for the harness's built-in \
                 tools"
            )),
            "{message}"
        );
    }
    insta::assert_snapshot!(
        error("[skills.memory]\n"),
        @r#"reach.toml:1:9: skills.memory: "memory" is reserved for the harness's built-in tools (memory__remember, memory__recall, skills__open, skills__instructions, agents__delegate, workbench__read), so no skill may have this name and this table would grant nothing; rename the skill and this table"#
    );
    // Names that only start like one are skills like any other.
    for name in ["memory2", "my-agents", "skills_extra", "workbenches"] {
        assert!(
            Policy::parse(&format!("[skills.{name}]\n"), Path::new("reach.toml"), Path::new("/"))
                .is_ok(),
            "{name}"
        );
    }
}

#[test]
fn errors_for_values_name_line_column_and_key() {
    insta::assert_snapshot!(
        error("\n[skills.files]\n\nlevel = \"yes\"\n"),
        @r#"reach.toml:4:9: skills.files.level: "yes" is not a level; use auto, confirm or deny (or L2, L1, L0)"#
    );
    insta::assert_snapshot!(
        error("[defaults]\nlevel = \"L3\"\n"),
        @r#"reach.toml:2:9: defaults.level: "L3" is not a level; use auto, confirm or deny (or L2, L1, L0)"#
    );
    insta::assert_snapshot!(
        error("[skills.files.tools.write]\nlevel = \"ask\"\n"),
        @r#"reach.toml:2:9: skills.files.tools.write.level: "ask" is not a level; use auto, confirm or deny (or L2, L1, L0)"#
    );
    insta::assert_snapshot!(
        error("[skills.files]\nlevel = \"auto\"\nread = []\nwrite = []\nenv = []\n\
               net = [\"*.\"]\n"),
        @r#"reach.toml:6:8: skills.files.net[0]: "*." is not a valid host pattern: a wildcard needs a domain after "*."; use "host", "host:port" or "*.domain""#
    );
    insta::assert_snapshot!(
        error("[skills.web]\nnet = [\"example.com\", \"https://example.com/\"]\n"),
        @r#"reach.toml:2:23: skills.web.net[1]: "https://example.com/" is not a valid host pattern: write the host without a scheme such as "https://"; use "host", "host:port" or "*.domain""#
    );
    insta::assert_snapshot!(
        error("[skills.Files]\n"),
        @r#"reach.toml:1:9: skills.Files: "Files" is not a valid skill name; use lowercase letters, digits, "_" and "-", starting with a letter"#
    );
    insta::assert_snapshot!(
        error("[skills.\"web fetch\"]\n"),
        @r#"reach.toml:1:9: skills."web fetch": "web fetch" is not a valid skill name; use lowercase letters, digits, "_" and "-", starting with a letter"#
    );
    insta::assert_snapshot!(
        error("[skills.files.tools.\"x y\"]\nlevel = \"auto\"\n"),
        @r#"reach.toml:1:21: skills.files.tools."x y": "x y" is not a valid tool name; use letters, digits, "_" and "-", starting with a letter"#
    );
    insta::assert_snapshot!(
        error("[skills.files]\nenv = [\"HOME\", \"API-KEY\"]\n"),
        @r#"reach.toml:2:16: skills.files.env[1]: "API-KEY" is not an environment variable name; use letters, digits and "_", not starting with a digit"#
    );
    insta::assert_snapshot!(
        error("[skills.files]\nmemory_mb = 0\n"),
        @"reach.toml:2:13: skills.files.memory_mb: 0 is out of range; use 1 to 4096"
    );
    insta::assert_snapshot!(
        error("[defaults]\ntimeout_ms = 3600001\n"),
        @"reach.toml:2:14: defaults.timeout_ms: 3600001 is out of range; use 1 to 3600000"
    );
    insta::assert_snapshot!(
        error("[skills.files]\nmax_output_kb = -5\n"),
        @"reach.toml:2:17: skills.files.max_output_kb: -5 is out of range; use 1 to 1048576"
    );
    insta::assert_snapshot!(
        error("[skills.files]\nwrite = [\"~/notes\"]\n"),
        @r#"reach.toml:2:10: skills.files.write[0]: "~/notes": "~" is not expanded; write the full path"#
    );
}

#[test]
fn a_file_granted_as_a_folder_is_refused() {
    let (_dir, base) = tempdir();
    std::fs::write(base.join("notes.txt"), "x").expect("write");
    let err = parse_in(&base, "[skills.files]\nread = [\"./notes.txt\"]\n").expect_err("file");
    insta::assert_snapshot!(
        err,
        @r#"reach.toml:2:9: skills.files.read[0]: "./notes.txt" is a file, not a folder"#
    );
    let PolicyError::Invalid { line, column, key, .. } = err else { panic!("{err:?}") };
    assert_eq!((line, column, key.as_str()), (2, 9, "skills.files.read[0]"));
}

#[test]
fn the_first_error_in_file_order_is_reported() {
    // `zeta` sorts after `alpha` but comes first in the file.
    let text = "[skills.zeta]\nlevel = \"bad\"\n[skills.alpha]\nlevel = \"worse\"\n";
    assert!(error(text).starts_with("reach.toml:2:9: skills.zeta.level"), "{}", error(text));
}

const CREDENTIAL: &str = r#"
[skills.api]
net = ["api.example.com", "127.0.0.1:8080"]
env = ["LANG"]

[[skills.api.credentials]]
host   = "api.example.com"
env    = "EXAMPLE_TOKEN"
header = "Authorization"
prefix = "Bearer "

[[skills.api.credentials]]
host   = "127.0.0.1:8080"
file   = "/run/secrets/test"
query  = "api_key"
allow_http = true
"#;

#[test]
fn credentials_resolve_with_their_source_and_injection() {
    let policy = parse_in(Path::new("/"), CREDENTIAL).expect("valid table");
    let api = policy.grants("api");
    assert_eq!(api.credentials.len(), 2);
    let first = &api.credentials[0];
    assert_eq!(first.source, SecretSource::Env("EXAMPLE_TOKEN".into()));
    assert_eq!(
        first.inject,
        Injection::Header { name: "authorization".into(), prefix: "Bearer ".into() }
    );
    assert!(first.matches_host("api.example.com", 443) && !first.allows_scheme("http"));
    let second = &api.credentials[1];
    assert_eq!(second.inject, Injection::Query { name: "api_key".into(), prefix: String::new() });
    assert!(second.allows_scheme("http") && second.matches_host("127.0.0.1", 8080));
    assert!(policy.grants("other").credentials.is_empty());
}

#[test]
fn credential_errors_name_the_entry_and_the_fix() {
    let with = |extra: &str| {
        format!(
            "[skills.api]\nnet = [\"api.example.com\"]\n\n[[skills.api.credentials]]\n{extra}\n"
        )
    };
    let cases = [
        (
            with("host = \"api.example.com\"\nheader = \"Authorization\""),
            "reach.toml:4:1: skills.api.credentials[0]: set exactly one of `env`",
        ),
        (
            with(
                "host = \"api.example.com\"\nenv = \"T\"\nfile = \"/t\"\n\
                 header = \"Authorization\"",
            ),
            "set exactly one of `env`",
        ),
        (with("host = \"api.example.com\"\nenv = \"T\""), "set exactly one of `header`"),
        (
            with("host = \"other.example.com\"\nenv = \"T\"\nheader = \"X-Key\""),
            "reach.toml:5:8: skills.api.credentials[0].host: the skill's `net` list does not allow \
             other.example.com",
        ),
        (
            with("host = \"api.example.com\"\nenv = \"T\"\nheader = \"X-Key\"\nallow_http = true"),
            "allow_http is only for loopback test hosts",
        ),
        (
            with("host = \"api.example.com\"\nenv = \"T\"\nheader = \"X-Key\"\ncolour = 1"),
            "unknown field `colour`",
        ),
    ];
    for (text, want) in cases {
        let got = error(&text);
        assert!(got.contains(want), "want {want:?} in {got:?}\nfor\n{text}");
    }
}

#[test]
fn a_credential_variable_cannot_also_be_passed_to_the_skill() {
    let text = "[skills.api]\nnet = [\"api.example.com\"]\nenv = [\"LANG\", \"TOKEN\"]\n\n\
                [[skills.api.credentials]]\nhost = \"api.example.com\"\nenv = \"TOKEN\"\n\
                header = \"Authorization\"\n";
    let got = error(text);
    assert!(
        got.starts_with(
            "reach.toml:3:16: skills.api.env[1]: TOKEN is the secret of the credential for \
             api.example.com (line 5)"
        ),
        "{got}"
    );
    let got = error("[skills.api]\nenv = [\"AGENT_REACH_CREDENTIALS\"]\n");
    assert!(got.contains("reserved"), "{got}");
}

#[test]
fn the_model_table_is_checked_and_optional() {
    let policy = parse_in(
        Path::new("/"),
        "[model]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:8691/v1\"\nname = \"qwen\"\n\
         temperature = 0.2\nmax_steps = 12\ntoken_budget = 9000\ntool_format = \"constrained\"\n\
         context_tokens = 12288\ncompact_at = 70\ntimeout_s = 30\n",
    )
    .expect("valid");
    let m = policy.model();
    assert_eq!(m.tool_format.as_deref(), Some("constrained"));
    assert_eq!(m.base_url.as_deref(), Some("http://127.0.0.1:8691/v1"));
    assert_eq!((m.max_steps, m.token_budget, m.temperature), (Some(12), Some(9000), Some(0.2)));
    assert_eq!((m.context_tokens, m.compact_at), (Some(12288), Some(70)));
    assert_eq!(m.timeout_s, Some(30));
    assert_eq!(parse_in(Path::new("/"), "").unwrap().model(), &ModelSettings::default());
    for (text, want) in [
        (
            "[model]\nprovider = \"gemini\"\n",
            "reach.toml:2:12: model.provider: \"gemini\" is not a provider",
        ),
        (
            "[model]\nbase_url = \"127.0.0.1:8691\"\n",
            "model.base_url: \"127.0.0.1:8691\" is not an http(s) URL",
        ),
        ("[model]\nmax_steps = 0\n", "model.max_steps: 0 is out of range; use 1 to 1000"),
        (
            "[model]\ntool_format = \"grammar\"\n",
            "model.tool_format: \"grammar\" is not a tool format; use \"native\" or \
             \"constrained\"",
        ),
        ("[model]\napi_key = \"sk-…\"\n", "unknown field `api_key`"),
        (
            "[model]\ncontext_tokens = 512\n",
            "model.context_tokens: 512 is out of range; use 1024 to 100000000",
        ),
        ("[model]\ntimeout_s = 0\n", "model.timeout_s: 0 is out of range; use 1 to 3600"),
        (
            "[model]\ncompact_at = 100\n",
            "model.compact_at: 100 is out of range; use a percent from 10 to 95",
        ),
    ] {
        let got = error(text);
        assert!(got.contains(want), "want {want:?} in {got:?}");
    }
}

const DIGEST: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

#[test]
fn a_sha256_pin_is_kept_with_its_line() {
    let text = format!("[skills.files]\nlevel = \"auto\"\nsha256 = \"{DIGEST}\"\n[skills.web]\n");
    let policy = parse_in(Path::new("/"), &text).expect("valid");
    assert_eq!(policy.pin("files"), Some(&SkillPin { sha256: DIGEST.to_owned(), line: 3 }));
    assert_eq!(policy.pin("web"), None, "listed without a pin");
    assert_eq!(policy.pin("stranger"), None);
    assert_eq!(Policy::builtin().pin("files"), None);
}

#[test]
fn a_malformed_sha256_pin_names_line_column_and_the_fix() {
    insta::assert_snapshot!(
        error("[skills.files]\nsha256 = \"abc123\"\n"),
        @r#"reach.toml:2:10: skills.files.sha256: "abc123" is not a sha256 digest; use the 64 lowercase hex characters that `reach skills pin files` prints"#
    );
    // Upper case, a stray prefix, one character short or long: all refused,
    // so a pin can never silently match nothing.
    for bad in [
        DIGEST.to_uppercase(),
        format!("sha256:{DIGEST}"),
        DIGEST[1..].to_owned(),
        format!("{DIGEST}0"),
        DIGEST.replace('a', "g"),
    ] {
        let got = error(&format!("[skills.files]\nsha256 = \"{bad}\"\n"));
        assert!(got.starts_with("reach.toml:2:10: skills.files.sha256: "), "{bad}: {got}");
    }
    insta::assert_snapshot!(
        error("[skills.files]\nsha256 = 12\n"),
        @"reach.toml:2:10: invalid type: integer `12`, expected a string"
    );
}

#[test]
fn a_credential_secret_granted_to_any_skill_is_refused() {
    // Regression: only the credential's own skill was checked, so another
    // skill could be given the variable in `env`, or the file in a folder.
    let api = "[skills.api]\nnet = [\"api.example.com\"]\n\n[[skills.api.credentials]]\n\
               host = \"api.example.com\"\nheader = \"Authorization\"\n";
    insta::assert_snapshot!(
        error(&format!("{api}env = \"EXAMPLE_TOKEN\"\n\n[skills.web]\n\
                        env = [\"EXAMPLE_TOKEN\"]\n")),
        @"reach.toml:10:8: skills.web.env[0]: EXAMPLE_TOKEN is the secret of skill api's \
          credential for api.example.com (line 4); no other skill may see it — remove it from \
          skills.web.env"
    );
    insta::assert_snapshot!(
        error(&format!("{api}file = \"/definitely/absent/secrets/example\"\n\n[skills.files]\n\
                        read = [\"/definitely/absent\"]\n")),
        @r#"reach.toml:10:9: skills.files.read[0]: "/definitely/absent" contains /definitely/absent/secrets/example, the secret of skill api's credential for api.example.com (line 4); a skill that can read the file holds the secret — keep secrets outside every granted folder, or grant a narrower folder"#
    );
}

#[test]
fn a_read_only_folder_inside_a_writable_one_is_a_table_error() {
    // Regression: `read = ["./data/docs"]` with `write = ["./data"]` was
    // accepted, yet the skill could write docs/ through the ./data handle.
    let err = error("[skills.files]\nwrite = [\"/data\"]\nread = [\"/srv\", \"/data/docs\"]\n");
    insta::assert_snapshot!(
        err,
        @r#"reach.toml:3:17: skills.files.read[1]: "/data/docs" lies inside the writable folder "/data" (skills.files.write[0], line 2); a skill can write everything inside a folder it may write, so this read-only grant would not hold — grant a read-only folder outside it, or drop one of the two"#
    );
    // The same folder in both lists is writable (as documented), and a
    // writable folder inside a read-only one is fine: each handle keeps its rule.
    let ok = parse_in(
        Path::new("/"),
        "[skills.files]\nwrite = [\"/data\", \"/srv/notes\"]\nread = [\"/data\", \"/srv\"]\n",
    )
    .expect("valid");
    assert_eq!(ok.grants("files").read.len(), 1);
}

#[test]
fn no_skill_may_write_the_hosts_own_files() {
    let (_dir, base) = tempdir();
    for folder in ["skills", "cache", "notes", ".reach/runs"] {
        std::fs::create_dir_all(base.join(folder)).expect("mkdir");
    }
    let protected = [
        ProtectedPath::new("the skills folder", base.join("skills")),
        ProtectedPath::new("the compile cache", base.join("cache/not-made-yet")),
    ];
    let check = |text: &str| parse_in(&base, text).expect("parses").check_protected(&protected);
    check("[skills.files]\nwrite = [\"./notes\"]\nread = [\".\"]\n")
        .expect("reading is not writing");
    let err =
        check("[skills.files]\nwrite = [\".\"]\n").expect_err("the base folder holds the skills");
    assert_eq!(
        err.to_string(),
        format!(
            "reach.toml:2:10: skills.files.write[0]: \".\" would let files write the skills folder \
             ({}); no skill may write the host's own files — grant a folder that neither \
             contains it nor lies inside it",
            base.join("skills").display()
        )
    );
    let err =
        check("[skills.x]\nwrite = [\"./cache\"]\n").expect_err("the cache, before it exists");
    assert!(err.to_string().contains("the compile cache"), "{err}");
    let err =
        check("[skills.x]\nwrite = [\"./skills/sub\"]\n").expect_err("inside the skills folder");
    assert!(err.to_string().contains("skills.x.write[0]"), "{err}");

    // `Policy::load` protects the table itself and `.reach/` beside it.
    let file = base.join("reach.toml");
    std::fs::write(&file, "[skills.files]\nwrite = [\"./.reach/runs\"]\n").expect("write");
    let err = Policy::load(&file).expect_err("the audit logs");
    assert!(err.to_string().contains("the audit logs"), "{err}");
    std::fs::write(&file, "[skills.files]\nwrite = [\".\"]\n").expect("write");
    let err = Policy::load(&file).expect_err("the table itself");
    assert!(err.to_string().contains("the permission table"), "{err}");
}

#[test]
fn no_skill_may_read_the_hosts_records() {
    // Regression: `read = ["."]` was accepted, and `.reach/` beside the
    // table holds the audit logs (every call's arguments and results) and
    // the memory database (every note): a skill could read them all.
    let (_dir, base) = tempdir();
    std::fs::create_dir_all(base.join(".reach/runs")).expect("mkdir");
    std::fs::create_dir_all(base.join("docs")).expect("mkdir");
    let file = base.join("reach.toml");
    let load = |text: &str| {
        std::fs::write(&file, text).expect("write");
        Policy::load(&file)
    };
    let err = load("[skills.files]\nread = [\".\"]\n").expect_err("the folder holding .reach/");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:2:9: skills.files.read[0]: \".\" would let files read the audit logs and memory in \
             .reach/ ({}), which hold every run's arguments, results and remembered notes; no \
             skill may read the host's own records — grant the folders the skill needs (e.g. \
             \"./docs\" rather than \".\"), none that contains it or lies inside it",
            file.display(),
            base.join(".reach").display()
        )
    );
    let err = load("[skills.files]\nread = [\"./.reach/runs\"]\n").expect_err("inside .reach/");
    assert!(err.to_string().contains("would let files read the audit logs"), "{err}");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&base, base.join("docs/up")).expect("symlink");
        let err = load("[skills.files]\nread = [\"./docs/up\"]\n")
            .expect_err("a link to the folder holding .reach/");
        assert!(err.to_string().contains("would let files read the audit logs"), "{err}");
    }
    load("[skills.files]\nread = [\"./docs\"]\n").expect("a folder beside .reach/");

    // An audit folder given elsewhere (`--runs-dir`, `AuditSink::Dir`) is as private.
    let policy = parse_in(&base, "[skills.files]\nread = [\"./docs\"]\n").expect("parses");
    let elsewhere = [ProtectedPath::private("the audit logs", base.join("docs/runs"))];
    let err = policy.check_protected(&elsewhere).expect_err("the runs folder inside a read grant");
    assert!(err.to_string().contains("would let files read the audit logs"), "{err}");
    // What only must not be written may still be read.
    policy
        .check_protected(&[ProtectedPath::new("the skills folder", base.join("docs"))])
        .expect("reading is not writing");
}

#[test]
fn the_sample_table_lets_no_auto_tool_write_where_writes_need_a_person() {
    // Regression: the sample gave `web` (auto) the folder where every
    // `files.write` needs a person, so saving a page skipped the question.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../reach.toml");
    let policy = Policy::load(&sample).expect("the sample table loads");
    assert_eq!(policy.auto_writes_where_confirm_asks(), Vec::<String>::new());
    // What the sample used to say is found.
    let old = parse_in(
        Path::new("/"),
        "[skills.files]\nlevel = \"auto\"\nwrite = [\"/n\"]\n[skills.files.tools.write]\n\
         level = \"confirm\"\n\n[skills.web]\nlevel = \"auto\"\n\
         write = [\"/n\"]\n",
    )
    .expect("valid");
    let found = old.auto_writes_where_confirm_asks();
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("web may write \"/n\" without a person"), "{found:?}");
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// A level as an operator may write it.
    fn level() -> impl Strategy<Value = (&'static str, Level)> {
        prop_oneof![
            Just(("auto", Level::Auto)),
            Just(("L2", Level::Auto)),
            Just(("Confirm", Level::Confirm)),
            Just(("l1", Level::Confirm)),
            Just(("deny", Level::Deny)),
            Just(("L0", Level::Deny)),
        ]
    }

    proptest! {
        /// Whatever the text, parsing never panics, and a refusal points
        /// inside the text (a line that exists, a column on it).
        #[test]
        fn any_text_is_refused_with_a_position_or_accepted(
            text in "(\\[|\\]|[a-z_.]{1,8}|=|\"[a-zA-Z0-9*.:/_-]{0,10}\"|[0-9]{1,12}|\n| ){0,40}",
        ) {
            match parse_in(Path::new("/"), &text) {
                Ok(_) => {}
                Err(
                    PolicyError::Syntax { line, column, .. }
                    | PolicyError::Invalid { line, column, .. },
                ) => {
                    let lines = text.split('\n').count();
                    prop_assert!(line >= 1 && line <= lines, "line {line} of {lines}");
                    let width = text.split('\n').nth(line - 1).map_or(0, |l| l.chars().count());
                    prop_assert!(column >= 1 && column <= width + 1, "column {column} of {width}");
                }
                Err(other) => prop_assert!(false, "unexpected error kind: {other}"),
            }
        }

        /// A generated valid table grants exactly what it says: levels per
        /// skill and tool, and nothing to a skill it does not list.
        #[test]
        fn a_valid_table_grants_exactly_what_it_lists(
            skills in proptest::collection::btree_map(
                "[a-z][a-z0-9_-]{0,10}",
                (level(), proptest::option::of(("[a-z][a-z_]{0,8}", level()))),
                1..6,
            ),
            default in level(),
        ) {
            let mut text = format!("[defaults]\nlevel = \"{}\"\n", default.0);
            for (name, ((level_text, _), tool)) in &skills {
                text.push_str(&format!("\n[skills.{name}]\nlevel = \"{level_text}\"\n"));
                if let Some((tool, (tool_level, _))) = tool {
                    text.push_str(&format!(
                        "[skills.{name}.tools.{tool}]\nlevel = \"{tool_level}\"\n"
                    ));
                }
            }
            let policy = parse_in(Path::new("/"), &text)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            for (name, ((_, level), tool)) in &skills {
                let grants = policy.grants(name);
                prop_assert!(
                    grants.listed
                        && grants.read.is_empty()
                        && grants.write.is_empty()
                        && grants.net.is_empty()
                        && grants.env.is_empty()
                );
                prop_assert_eq!(grants.level, *level);
                match tool {
                    Some((tool, (_, tool_level))) => {
                        prop_assert_eq!(policy.level(name, tool), *tool_level);
                        prop_assert_eq!(policy.level(name, &format!("{tool}x")), *level);
                    }
                    None => prop_assert_eq!(policy.level(name, "anything"), *level),
                }
            }
            prop_assert!(!policy.grants("zz-not-listed-9").listed);
            prop_assert_eq!(policy.level("zz-not-listed-9", "t"), default.1);
        }
    }
}

#[cfg(unix)]
#[test]
fn a_folder_inside_another_skills_writable_folder_is_a_table_error() {
    // Regression: skill `a` could write ./work and replace ./work/out (a
    // grant of its own or another skill's) with `out -> ../../home/u/.ssh`;
    // the runtime refused the link, but the next start resolved the grant
    // through it and handed over ~/.ssh.
    let (_dir, base) = tempdir();
    std::fs::create_dir_all(base.join("work/out")).expect("mkdir");
    std::fs::create_dir_all(base.join("secret")).expect("mkdir");
    let err = parse_in(
        &base,
        "[skills.a]\nwrite = [\"./work\"]\n\n[skills.b]\nread = [\"./work/out\"]\n",
    )
    .expect_err("nested across skills");
    insta::assert_snapshot!(
        err,
        @r#"reach.toml:5:9: skills.b.read[0]: "./work/out" lies inside "./work", which skill a may write (skills.a.write[0], line 2); a could replace it with a symbolic link to anything, which the next start would follow — grant folders that do not nest, or the same folder to both"#
    );
    let err = parse_in(&base, "[skills.a]\nwrite = [\"./work\", \"./work/out\"]\n")
        .expect_err("nested in one skill");
    assert!(
        err.to_string().contains("skills.a.write[1]") && err.to_string().contains("drop it"),
        "{err}"
    );

    // After the swap, the grant still counts where it is declared, not
    // where the link points.
    std::fs::remove_dir(base.join("work/out")).expect("rmdir");
    std::os::unix::fs::symlink("../secret", base.join("work/out")).expect("symlink");
    let err = parse_in(
        &base,
        "[skills.a]\nwrite = [\"./work\"]\n\n[skills.b]\nread = [\"./work/out\"]\n",
    )
    .expect_err("the link does not hide it");
    assert!(err.to_string().contains("skills.b.read[0]"), "{err}");

    // The same folder for several skills, or in both lists, nests nothing.
    parse_in(
        &base,
        "[skills.a]\nwrite = [\"./work\"]\nread = [\"./work\"]\n\n[skills.b]\n\
         read = [\"./work\"]\n",
    )
    .expect("valid");
}

#[test]
fn the_memory_table_is_checked_and_optional() {
    let (_dir, base) = tempdir();
    std::fs::create_dir(base.join("afolder")).expect("mkdir");
    let policy = parse_in(
        &base,
        "[memory]\npath = \"state/mem.db\"\nremember = \"auto\"\nrecall = \"DENY\"\n\
         budget_tokens = 0\n",
    )
    .expect("valid");
    assert_eq!(
        policy.memory(),
        &MemorySettings {
            path: base.join("state/mem.db"),
            url: None,
            remember: Level::Auto,
            recall: Level::Deny,
            budget_tokens: 0
        }
    );
    let defaults = MemorySettings {
        path: base.join(".reach/memory.db"),
        url: None,
        remember: Level::Confirm,
        recall: Level::Auto,
        budget_tokens: 300,
    };
    assert_eq!(parse_in(&base, "").expect("empty").memory(), &defaults);
    let shared = parse_in(
        &base,
        "[memory]\nurl = \"postgresql://reach@10.0.0.5:5433/mem?sslmode=require\"\n",
    )
    .expect("a PostgreSQL URL");
    assert_eq!(
        shared.memory().url.as_deref(),
        Some("postgresql://reach@10.0.0.5:5433/mem?sslmode=require")
    );
    assert!(check_url("postgres://reach@/mem?host=/run/postgresql").is_ok(), "a socket folder");
    assert_eq!(parse_in(&base, "[memory]\n").expect("empty table").memory(), &defaults);
    assert_eq!(
        Policy::builtin().memory().path,
        Path::new(".reach/memory.db"),
        "the working directory's"
    );

    let error = |text: &str| parse_in(&base, text).expect_err("refused").to_string();
    insta::assert_snapshot!(
        error("[memory]\nremember = \"sometimes\"\n"),
        @r#"reach.toml:2:12: memory.remember: "sometimes" is not a level; use auto, confirm or deny (or L2, L1, L0)"#
    );
    insta::assert_snapshot!(
        error("[memory]\nbudget_tokens = 9000\n"),
        @"reach.toml:2:17: memory.budget_tokens: 9000 is out of range; use 0 (no notes in the \
          prompt) to 8000"
    );
    for (text, want) in [
        (
            "[memory]\nrecall = \"yes\"\n",
            "reach.toml:2:10: memory.recall: \"yes\" is not a level; use auto, confirm or deny",
        ),
        (
            "[memory]\nbudget_tokens = -1\n",
            "reach.toml:2:17: memory.budget_tokens: -1 is out of range; use 0 (no notes in the \
             prompt) to 8000",
        ),
        (
            "[memory]\nbudget_tokens = \"300\"\n",
            "reach.toml:2:17: invalid type: string \"300\", expected i64",
        ),
        (
            "[memory]\npath = \"\"\n",
            "reach.toml:2:8: memory.path: \"\" is not a file; write a path such as \
             \".reach/memory.db\"",
        ),
        (
            "[memory]\npath = \"~/mem.db\"\n",
            "memory.path: \"~/mem.db\": \"~\" is not expanded; write the full path",
        ),
        (
            "[memory]\npath = \"afolder\"\n",
            "memory.path: \"afolder\" is a folder; name the database file in it, e.g. \
             \"afolder/memory.db\"",
        ),
        (
            "[memory]\npath = \"state/\"\n",
            "memory.path: \"state/\" names a folder; name the database file in it, e.g. \
             \"state/memory.db\"",
        ),
        (
            "[memory]\nsize = 3\n",
            "reach.toml:2:1: unknown field `size`, expected one of `path`, `url`, `remember`, \
             `recall`, `budget_tokens`",
        ),
        ("[memory]\nlevel = \"auto\"\n", "unknown field `level`"),
        (
            "memory = \"on\"\n",
            "reach.toml:1:10: invalid type: string \"on\", expected a table with path or url, \
             remember, recall, budget_tokens",
        ),
        (
            "[memory]\nurl = \"postgres://reach:hunter2@db/reach\"\n",
            "reach.toml:2:7: memory.url: the URL holds a password; tables are copied and \
             committed, so remove it and put the password in the environment variable \
             REACH_MEMORY_PASSWORD",
        ),
        (
            "[memory]\nurl = \"postgres://db/reach?password=hunter2\"\n",
            "memory.url: the URL holds a password parameter",
        ),
        (
            "[memory]\nurl = \"mysql://db/reach\"\n",
            "memory.url: \"mysql\" is not a PostgreSQL URL; write one like \
             \"postgres://reach@db.internal:5432/reach\" (for a file, use path)",
        ),
        (
            "[memory]\nurl = \"postgres:///reach\"\n",
            "memory.url: \"postgres:///reach\" names no server",
        ),
        (
            "[memory]\npath = \"m.db\"\nurl = \"postgres://db/reach\"\n",
            "reach.toml:3:7: memory.url: memory is kept either in a file (path) or in PostgreSQL \
             (url), not both; drop one",
        ),
    ] {
        let err = error(text);
        assert!(err.contains(want), "{text:?}:\n{err}\nwanted: {want}");
    }
}

#[test]
fn the_memory_database_may_not_lie_in_a_folder_a_skill_can_read_or_write() {
    // A skill that could read the database would read every note; one that
    // could write it (or its folder) could plant notes later runs trust.
    let (_dir, base) = tempdir();
    for folder in ["notes/deep", "docs", "private"] {
        std::fs::create_dir_all(base.join(folder)).expect("mkdir");
    }
    let skills = "[skills.files]\nread = [\"./docs\"]\nwrite = [\"./notes\"]\n\n";
    let with = |path: &str| parse_in(&base, &format!("{skills}[memory]\npath = \"{path}\"\n"));
    insta::assert_snapshot!(
        with("notes/deep/memory.db").expect_err("writable").to_string(),
        @r#"reach.toml:6:8: memory.path: "./notes/deep/memory.db" lies inside "./notes", which skill files may write (skills.files.write[0], line 3); a skill that can read the memory database reads every note, one that can write it plants notes — keep it outside every granted folder (the default ".reach/memory.db" is safe), or drop that grant"#
    );
    let err = with("./docs/../docs/memory.db").expect_err("readable").to_string();
    assert!(err.contains("which skill files may read (skills.files.read[0], line 2)"), "{err}");
    with("private/memory.db").expect("outside every grant");
    with(".reach/mem.db").expect("under .reach/");
    let err =
        parse_in(&base, "[skills.all]\nread = [\".\"]\n\n[memory]\npath = \"private/memory.db\"\n")
            .expect_err("the base is readable")
            .to_string();
    assert!(
        err.contains("\"./private/memory.db\" lies inside \".\", which skill all may read"),
        "{err}"
    );
    // The default, under .reach/, which Policy::load keeps from every grant.
    parse_in(&base, "[skills.all]\nread = [\".\"]\n").expect("default path");

    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(base.join("notes"), base.join("looks-private"))
            .expect("symlink");
        let err = with("looks-private/memory.db").expect_err("a link into a grant").to_string();
        assert!(err.contains("which skill files may write"), "{err}");
    }
}

#[test]
fn the_journal_table_sets_the_budget_and_refuses_a_mode_it_does_not_know() {
    let parse = |text: &str| Policy::parse(text, Path::new("reach.toml"), Path::new("/base"));
    let budget = parse("[journal]\nmax_mb = 8\nundo = \"best-effort\"\n").expect("valid").journal();
    assert_eq!((budget.max_bytes, budget.mode), (8 << 20, crate::journal::UndoMode::BestEffort));
    assert_eq!(parse("").expect("empty").journal(), crate::journal::Budget::default());
    let err = parse("[journal]\nundo = \"sometimes\"\n").expect_err("refused").to_string();
    assert!(err.contains("journal.undo") && err.contains("best-effort"), "{err}");
    let err = parse("[journal]\nmax_mb = 0\n").expect_err("refused").to_string();
    assert!(err.contains("journal.max_mb"), "{err}");
    assert_eq!(parse("").expect("empty").record_bytes(), crate::tape::DEFAULT_RECORD_BYTES);
    assert_eq!(parse("[journal]\nrecord_mb = 0\n").expect("valid").record_bytes(), 0);
    let err = parse("[journal]\nrecord_mb = -1\n").expect_err("refused").to_string();
    assert!(err.contains("journal.record_mb") && err.contains("record nothing"), "{err}");
}

// `origin` and `signed_by`: what a skill must come from and who must have signed it.
mod trust {
    use super::*;
    use crate::policy::SignedBy;

    const FP: &str = "sha256:0574f50b34215bce96be70a91b95b421ede2327ec35ec5a6f81c8e16ca872655";
    // A P-256 public key as cosign writes it.
    const PUB: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEFu969YxSaFbLhE5KCufDMuXmRU/0\nyNcrWaqUu+TbuSH/+0pKtHlYoJGXYC4DQp7g6TUigRPQ/kSOOXgdSCMbng==\n-----END PUBLIC KEY-----\n";

    #[test]
    fn origin_and_a_fingerprint_or_key_file_resolve_with_their_lines() {
        let p = parse_in(
            Path::new("/"),
            &format!("[skills.echo]\norigin = \"oci://ghcr.io/acme/echo\"\nsigned_by = \"{FP}\"\n"),
        )
        .unwrap();
        let t = p.trust("echo").expect("trust");
        assert_eq!(
            t.origin.as_ref().map(|(r, l)| (r.repository_url(), *l)),
            Some(("oci://ghcr.io/acme/echo".into(), 2))
        );
        assert_eq!(t.signed_by, Some((SignedBy::Fingerprint(FP.into()), 3)));

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("acme.pub"), PUB).unwrap();
        std::fs::write(dir.path().join("reach.toml"), "[skills.echo]\nsigned_by = \"acme.pub\"\n")
            .unwrap();
        let p = Policy::load(&dir.path().join("reach.toml")).unwrap();
        match &p.trust("echo").unwrap().signed_by {
            Some((SignedBy::Key { fingerprint, pem, .. }, 2)) => {
                // The fingerprint `reach skill keygen` printed for this key.
                assert_eq!(fingerprint, FP);
                assert_eq!(pem, PUB);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            parse_in(Path::new("/"), "[skills.echo]\nlevel = \"auto\"\n")
                .unwrap()
                .trust("echo")
                .is_none()
        );
    }

    #[test]
    fn a_keyless_identity_needs_both_parts_exactly() {
        let ok = parse_in(Path::new("/"), 
            "[skills.echo]\nsigned_by = { issuer = \"https://token.actions.githubusercontent.com\", subject = \"https://github.com/acme/skills/.github/workflows/release.yml@refs/heads/main\" }\n",
        )
        .unwrap();
        assert!(matches!(ok.trust("echo").unwrap().signed_by, Some((SignedBy::Keyless { .. }, 2))));
        let cases: &[(&str, &str)] = &[
            ("{ issuer = \"https://accounts.google.com\" }", "needs both issuer and subject"),
            ("{ subject = \"me@example.com\" }", "needs both issuer and subject"),
            (
                "{ issuer = \"https://accounts.google.com\", subject = \"\" }",
                "needs both issuer and subject",
            ),
            (
                "{ issuer = \"https://accounts.google.com\", subject = \"*@example.com\" }",
                "is a pattern",
            ),
            ("{ issuer = \"https://accounts.google.com\", subject = \".+\" }", "is a pattern"),
            ("{ issuer = \"*\", subject = \"me@example.com\" }", "is a pattern"),
            ("{ issuer = \"accounts.google.com\", subject = \"me@example.com\" }", "https:// URL"),
            ("{ issuer = \"https://a\", subject = \"b\", audience = \"c\" }", "unknown key"),
            ("\"sha256:abc\"", "not a key fingerprint"),
            ("\"no-such.pub\"", "cannot read the public key"),
            ("42", "write a public key file"),
        ];
        for (value, says) in cases {
            let err = parse_in(Path::new("/"), &format!("[skills.echo]\nsigned_by = {value}\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(says) && err.contains("skills.echo.signed_by"), "{value}: {err}");
        }
    }

    #[test]
    fn an_origin_is_a_repository_reference() {
        for (value, says) in [
            ("ghcr.io/acme/echo", "must start with oci://"),
            (
                "oci://ghcr.io/acme/echo@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "pin the file with sha256",
            ),
        ] {
            let err = parse_in(Path::new("/"), &format!("[skills.echo]\norigin = \"{value}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(says) && err.contains("skills.echo.origin"), "{value}: {err}");
        }
    }

    #[test]
    fn a_key_file_that_is_not_a_public_key_is_a_table_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("acme.key"), "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nabc\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n").unwrap();
        std::fs::write(dir.path().join("reach.toml"), "[skills.echo]\nsigned_by = \"acme.key\"\n")
            .unwrap();
        let err = Policy::load(&dir.path().join("reach.toml")).unwrap_err().to_string();
        assert!(err.contains("is not a PEM PUBLIC KEY"), "{err}");
    }
}
