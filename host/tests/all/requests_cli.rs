//! What skills request against what the table grants, as an operator sees
//! it: `reach skills inspect`, `reach policy check`, `reach policy suggest`,
//! and `reach skills list` pointing out an upgrade that requests more.
//!
//! The component is the real `probe` test skill, whose `requests!` puts
//! net, env and read requests in its `agent-reach:requests` section; the
//! bundle's requests are `SKILL.md` metadata.

use crate::support::isolated;
use agent_reach_tests::guests;
use serde_json::Value;
use std::process::Output;

struct Env {
    dir: tempfile::TempDir,
}

const TRIAGE: &str = "---\nname: triage\ndescription: Triage incidents from the app logs.\n\
    metadata:\n  agent-reach.read: ./logs\n  agent-reach.net: status.example.com\n---\n\
    Read the logs, then write the note.\n";

impl Env {
    fn new(policy: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        for folder in ["skills/triage", "logs", "data"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        }
        std::fs::copy(guests::TEST_SKILL_PROBE.path(), dir.path().join("skills/probe.wasm"))
            .unwrap();
        std::fs::write(dir.path().join("skills/triage/SKILL.md"), TRIAGE).unwrap();
        std::fs::write(dir.path().join("reach.toml"), policy).unwrap();
        Env { dir }
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    fn reach(&self, args: &[&str]) -> Output {
        let mut command = isolated(env!("CARGO_BIN_EXE_reach"), self.dir.path());
        command.args(args);
        command.stdin(std::process::Stdio::null()).output().expect("run reach")
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.reach(args);
        assert!(out.status.success(), "reach {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    }
}

const POLICY: &str = "[skills.probe]\nlevel = \"auto\"\nread = [\"./data\"]\n\
    net = [\"docs.rs\"]\n\n[skills.triage]\nlevel = \"auto\"\nread = [\"./logs\"]\n";

#[test]
fn inspect_shows_each_request_beside_the_grant_that_answers_it() {
    let env = Env::new(POLICY);
    let text = env.ok(&["skills", "inspect", "probe"]);
    for line in [
        "requests against grants:",
        "read ./data          granted by read ./data",
        "net 127.0.0.1:*      requested, not granted: what needs it will be refused",
        "net api.example.com  requested, not granted: what needs it will be refused",
        "env PROBE_TOKEN      requested, not granted: what needs it will be refused",
        "net docs.rs          granted, not requested: more than it says it needs",
        "`reach policy suggest probe`",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
    let json: Value = serde_json::from_str(&env.ok(&["skills", "inspect", "probe", "--json"]))
        .expect("one JSON object");
    assert_eq!(json["manifest"]["requests"]["env"], serde_json::json!(["PROBE_TOKEN"]));
    let rows = json["requests_against_grants"].as_array().expect("rows");
    assert_eq!(rows[0]["capability"], "read");
    assert_eq!(rows[0]["state"], "granted");
    assert_eq!(rows[0]["by"], "read ./data");
    assert!(rows.iter().any(|r| r["item"] == "docs.rs" && r["state"] == "not_requested"));

    let text = env.ok(&["skills", "inspect", "triage"]);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("read ./logs granted by read ./logs"), "{text}");
    assert!(words.contains("net status.example.com requested, not granted"), "{text}");
}

#[test]
fn policy_check_warns_about_refused_requests_and_unrequested_grants() {
    let env = Env::new(POLICY);
    let text = env.ok(&["policy", "check"]);
    assert!(
        text.contains(
            "skill probe requests env PROBE_TOKEN, which [skills.probe] does not grant: what \
             needs it will be refused (`reach policy suggest probe`)"
        ),
        "{text}"
    );
    assert!(
        text.contains("[skills.probe] grants net docs.rs, which the skill does not request"),
        "{text}"
    );
    assert!(text.contains("skill triage requests net status.example.com"), "{text}");
    let json: Value = serde_json::from_str(&env.ok(&["policy", "check", "--json"])).unwrap();
    assert_eq!(json["ok"], true, "requests only warn: {json}");
    assert!(json["requests"]["probe"].as_array().is_some_and(|r| r.len() == 5), "{json}");
    assert!(json["requests"]["triage"].is_array(), "{json}");
}

#[test]
fn the_suggested_lines_grant_exactly_what_is_requested() {
    let env = Env::new("[defaults]\nlevel = \"confirm\"\n");
    let out = env.reach(&["policy", "suggest", "probe"]);
    assert!(out.status.success(), "{out:?}");
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        lines,
        "[skills.probe]\nread = [\"./data\"]\nenv = [\"PROBE_TOKEN\"]\n\
         net = [\"127.0.0.1:*\", \"api.example.com\"]\n"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("4 request(s) not granted yet"));
    // Nothing was edited: the operator pastes the lines.
    let table = std::fs::read_to_string(env.path("reach.toml")).unwrap();
    assert!(!table.contains("skills.probe"), "{table}");
    std::fs::write(env.path("reach.toml"), format!("{table}\n{lines}level = \"auto\"\n")).unwrap();
    let json: Value = serde_json::from_str(&env.ok(&["policy", "check", "--json"])).unwrap();
    let rows = json["requests"]["probe"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["state"] == "granted"), "{rows:#?}");

    let out = env.reach(&["policy", "suggest", "nothing"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no active skill or bundle named"));
}

#[test]
fn a_bundle_upgrade_that_requests_more_and_changes_a_file_is_pointed_out() {
    let env = Env::new(POLICY);
    let first = env.ok(&["skills", "list"]);
    assert!(!first.contains("now requests"), "first sight is not a change: {first}");
    std::fs::write(
        env.path("skills/triage/SKILL.md"),
        TRIAGE.replace("status.example.com", "status.example.com, evil.example"),
    )
    .unwrap();
    std::fs::write(env.path("skills/triage/notes.md"), "new\n").unwrap();
    let second = env.ok(&["skills", "list"]);
    assert!(
        second.contains("now requests net evil.example; changed: SKILL.md; added: notes.md"),
        "{second}"
    );
    assert!(second.contains("review: reach skills inspect triage"), "{second}");
    // Told once; `inspect` keeps showing it for review.
    assert!(!env.ok(&["skills", "list"]).contains("now requests"));
    assert!(env.ok(&["skills", "inspect", "triage"]).contains("now requests net evil.example"));
}

/// `wasm` with one more custom section at its end (valid anywhere in a
/// component): what a hostile or careless build could carry.
fn with_section(wasm: &[u8], name: &str, data: &[u8]) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            out.push(if n == 0 { byte } else { byte | 0x80 });
            if n == 0 {
                break;
            }
        }
    }
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name.as_bytes());
    payload.extend_from_slice(data);
    let mut out = wasm.to_vec();
    out.push(0);
    leb(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    out
}

#[test]
fn unreadable_requests_are_shown_as_such_and_the_skill_still_loads() {
    let env = Env::new(POLICY);
    let probe = std::fs::read(env.path("skills/probe.wasm")).unwrap();
    let cases: [(&[u8], &str); 2] = [
        (b"net = [\"evil.example\"]", "two `agent-reach:requests` sections"),
        (b"hosts = 1", "not valid"),
    ];
    for (data, says) in cases {
        // The second case replaces the probe's own section's parse: a lone bad one.
        let base = if says == "not valid" { strip_requests(&probe) } else { probe.clone() };
        std::fs::write(
            env.path("skills/probe.wasm"),
            with_section(&base, "agent-reach:requests", data),
        )
        .unwrap();
        let text = env.ok(&["skills", "inspect", "probe"]);
        assert!(text.contains("requests: cannot be read ("), "{text}");
        assert!(text.contains(says), "{says}: {text}");
        assert!(!text.contains("evil.example"), "nothing of it is believed: {text}");
        let check = env.ok(&["policy", "check"]);
        assert!(check.contains("its requests cannot be read"), "{check}");
    }
}

/// The probe with its own requests section renamed, so it has none.
fn strip_requests(wasm: &[u8]) -> Vec<u8> {
    let name = b"agent-reach:requests";
    let at = wasm.windows(name.len()).position(|w| w == name).expect("the probe's section");
    let mut out = wasm.to_vec();
    out[at..at + name.len()].copy_from_slice(b"agent-reach:unrelate");
    out
}

#[test]
fn a_python_or_javascript_component_gets_its_requests_after_its_build() {
    for guest in [guests::TEST_SKILL_MISBEHAVE_PY, guests::TEST_SKILL_MISBEHAVE_JS] {
        let name = guest.skill;
        let env = Env::new(&format!("[skills.{name}]\nlevel = \"auto\"\nread = [\"./data\"]\n"));
        let wasm = env.path(&format!("skills/{}", guest.file_name()));
        std::fs::copy(guest.path(), &wasm).unwrap();
        let wasm = wasm.to_str().unwrap();
        std::fs::write(
            env.path("requests.toml"),
            "read = [\"./data\"]\nnet = [\"api.example.com\"]\n",
        )
        .unwrap();
        assert_eq!(env.ok(&["skill", "requests", wasm]), "requests: none\n");

        env.ok(&["skill", "requests", wasm, "--set", "requests.toml"]);
        let shown: Value =
            serde_json::from_str(&env.ok(&["skill", "requests", wasm, "--json"])).unwrap();
        assert_eq!(shown["requests"]["net"], serde_json::json!(["api.example.com"]), "{name}");
        let text = env.ok(&["skills", "inspect", name]);
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("read ./data granted by read ./data"), "{name}: {text}");
        assert!(words.contains("net api.example.com requested, not granted"), "{name}: {text}");
        // The component still loads and runs with the section in it.
        assert!(env.ok(&["skills", "list"]).contains(name), "{name}");

        // Once only, and a bad file says what is wrong and changes nothing.
        let before = std::fs::read(wasm).unwrap();
        let again = env.reach(&["skill", "requests", wasm, "--set", "requests.toml"]);
        assert!(!again.status.success());
        assert!(String::from_utf8_lossy(&again.stderr).contains("already carries"), "{again:?}");
        std::fs::write(env.path("bad.toml"), "hosts = [\"x\"]\n").unwrap();
        let bad = env.reach(&["skill", "requests", wasm, "--set", "bad.toml"]);
        let err = String::from_utf8_lossy(&bad.stderr);
        assert!(err.contains("bad.toml") && err.contains("read, write, net"), "{err}");
        assert_eq!(std::fs::read(wasm).unwrap(), before, "{name} unchanged");
    }
}
