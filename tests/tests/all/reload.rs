//! Hot reload with real components: a skill replaced under a running call,
//! a table that revokes a skill under a running call,
//! a broken file dropped into the folder, a broken table (the host closes),
//! and the watcher, following a linked table and a skills folder created
//! again.
//!
//! The `echo` test skill's `wait` tool sleeps, then answers with the name
//! and version stamped into the copy (`echo_variant`), so a test sees which
//! build served a call.

use agent_reach::policy::Level;
use agent_reach::reload::{LiveHost, ReloadSource, watch};
use agent_reach::{ErrorCode, Host, ToolFailure};
use agent_reach_tests::{Workspace, echo_variant};
use serde_json::json;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const AUTO: &str = "[skills.echo]\nlevel = \"auto\"\n";

/// A live host over `ws` with `policy`, and where to reload it from.
async fn live(ws: &Workspace, policy: &str) -> (Arc<LiveHost>, ReloadSource) {
    let host = ws.host(policy).await;
    (LiveHost::new(host), ReloadSource::new(Some(ws.path("reach.toml")), ws.path("skills")))
}

/// Call with no one to confirm: only `auto` tools run. (Checked and run
/// in two steps, so the call can be spawned on another thread.)
async fn call(host: &Host, target: &str, args: serde_json::Value) -> Result<String, ToolFailure> {
    let (skill, tool) = target.split_once('.').expect("SKILL.TOOL");
    let checked = host.check(skill, tool, &args.to_string())?;
    if checked.level() == Level::Confirm {
        return Err(checked.refused("no one is here to confirm it"));
    }
    host.run_checked(checked).await
}

/// The host serving now; panics when the live host is closed.
fn current(live: &LiveHost) -> Arc<Host> {
    live.current().unwrap_or_else(|closed| panic!("the live host is closed: {closed}"))
}

/// Which build of `skill` serves now; `UNAVAILABLE` while closed.
async fn serving(live: &LiveHost, skill: &str) -> Result<String, ToolFailure> {
    let host = live
        .current()
        .map_err(|closed| ToolFailure::new(ErrorCode::Unavailable, closed.to_string()))?;
    call(&host, &format!("{skill}.wait"), json!({"ms": 0})).await
}

/// Log lines written on this thread while the guard lives.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let writer = logs.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::INFO)
            .with_writer(move || writer.clone())
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_running_when_its_skill_is_replaced_finishes_on_the_old_version() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let (live, source) = live(&ws, AUTO).await;
    let changes = live.subscribe();
    let new = echo_variant("echo", "2.0.0");
    // Compile the new build into the shared cache first, so the reload
    // below surely happens while the call still runs.
    let warm = ws.mkdir("warm").join("echo.wasm");
    std::fs::write(&warm, &new).unwrap();
    current(&live).runtime().load(&warm, || {}).expect("the new build compiles");

    let old = Arc::downgrade(&current(&live));
    let host = current(&live);
    let running = tokio::spawn(async move { call(&host, "echo.wait", json!({"ms": 3000})).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    ws.install_bytes("echo.wasm", &new);
    let summary = live.reload(&source).await.expect("the new build loads");
    assert!(!running.is_finished(), "the reload happened while the call ran");
    assert_eq!(summary.changed, ["echo 1.0.0 → 2.0.0"]);
    assert!(changes.has_changed().unwrap(), "subscribers are told the active set changed");

    assert_eq!(
        serving(&live, "echo").await.unwrap(),
        "echo 2.0.0",
        "a new call uses the new build"
    );
    assert_eq!(
        running.await.unwrap().unwrap(),
        "echo 1.0.0",
        "the running call finished on the old build"
    );
    assert!(old.upgrade().is_none(), "the old host is freed once no call holds it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_running_when_the_table_revokes_its_skill_finishes_under_the_table_it_began_with() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let (live, source) = live(&ws, AUTO).await;
    let host = current(&live);
    let running = tokio::spawn(async move { call(&host, "echo.wait", json!({"ms": 2000})).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    save(&ws.path("reach.toml"), "[skills.echo]\nlevel = \"deny\"\n");
    live.reload(&source).await.expect("the new table loads");
    assert!(!running.is_finished(), "the reload happened while the call ran");
    let denied = serving(&live, "echo").await.unwrap_err();
    assert_eq!(denied.code, ErrorCode::Denied, "a new call is under the new table: {denied}");
    assert_eq!(
        running.await.unwrap().unwrap(),
        "echo 1.0.0",
        "the running call finished under the table it was checked against"
    );
}

#[tokio::test]
async fn a_broken_skill_file_changes_nothing_for_callers() {
    let (logs, _guard) = Logs::capture();
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let (live, source) = live(&ws, AUTO).await;

    // A new file that is not a component: reported, nothing else changes.
    ws.install_bytes("x.wasm", b"this is not a component");
    let summary = live.reload(&source).await.expect("a broken file is not a failed reload");
    assert!(!summary.changed_offer(), "{summary}");
    let [(path, reason)] = &summary.broken[..] else { panic!("one broken file: {summary:?}") };
    assert!(path.ends_with("x.wasm") && reason.contains("not a WebAssembly file"), "{reason}");
    assert_eq!(serving(&live, "echo").await.unwrap(), "echo 1.0.0");

    // Half of a new build copied over the serving one: the old one serves on.
    let new = echo_variant("echo", "2.0.0");
    ws.install_bytes("echo.wasm", &new[..new.len() / 2]);
    for _ in 0..2 {
        let summary = live.reload(&source).await.expect("a broken file is not a failed reload");
        assert!(!summary.changed_offer(), "{summary}");
        let [(path, reason)] = &summary.kept[..] else { panic!("echo.wasm kept: {summary:?}") };
        assert!(path.ends_with("echo.wasm") && reason.contains("does not compile"), "{reason}");
        assert_eq!(serving(&live, "echo").await.unwrap(), "echo 1.0.0");
    }
    assert_eq!(live.generation(), 0, "subscribers are not told of a change that did not happen");
    let kept_line = logs
        .text()
        .lines()
        .find(|l| l.contains("ERROR") && l.contains("echo.wasm"))
        .map(str::to_owned);
    let kept_line =
        kept_line.unwrap_or_else(|| panic!("an error names the file:\n{}", logs.text()));
    assert!(
        kept_line.contains("keeps serving") && kept_line.contains("does not compile"),
        "{kept_line}"
    );

    // The copy completes: the new build serves.
    ws.install_bytes("echo.wasm", &new);
    let summary = live.reload(&source).await.unwrap();
    assert_eq!(
        (summary.changed.as_slice(), summary.kept.len(), summary.generation),
        (&["echo 1.0.0 → 2.0.0".to_owned()][..], 0, 1)
    );
    assert_eq!(serving(&live, "echo").await.unwrap(), "echo 2.0.0");

    // Deleted: the operator removed the skill.
    std::fs::remove_file(ws.path("skills/echo.wasm")).unwrap();
    let summary = live.reload(&source).await.unwrap();
    assert_eq!(summary.removed, ["echo 2.0.0"]);
    assert_eq!(serving(&live, "echo").await.unwrap_err().code, ErrorCode::NoSuchTool);
}

/// Regression: a refused table left the old, broader one serving (a `deny`
/// override with a misspelt tool name, a syntax error beside a removed
/// grant), and no one was told.
#[tokio::test]
async fn a_refused_table_closes_the_host_until_a_table_loads() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let (live, source) = live(&ws, AUTO).await;
    let changes = live.subscribe();
    let refused = |toml: &str| {
        ws.policy(toml);
        let (live, source) = (live.clone(), source.clone());
        async move { live.reload(&source).await.expect_err("the table is refused").to_string() }
    };

    let err = refused("[skills.echo\nlevel = \"auto\"\n").await;
    assert!(err.contains("reach.toml:1:"), "{err}");
    assert!(changes.has_changed().unwrap(), "subscribers are told the server closed");
    assert_eq!(live.generation(), 1);
    let closed = live.current().err().expect("closed: the table on disk does not load");
    assert_eq!(closed.what, "the permission table");
    assert_eq!(closed.path, ws.path("reach.toml"));
    let said = serving(&live, "echo").await.unwrap_err();
    assert_eq!(said.code, ErrorCode::Unavailable);
    assert!(
        said.message.contains("reach.toml:1:")
            && said.message.contains("reopens as soon as it loads"),
        "{said}"
    );

    let err =
        refused("[skills.echo]\nlevel = \"auto\"\n[skills.echo.tools.ecco]\nlevel = \"deny\"\n")
            .await;
    assert!(
        err.contains("reach.toml:3: [skills.echo.tools.ecco]: skill echo has no tool `ecco`"),
        "{err}"
    );
    let said = serving(&live, "echo").await.unwrap_err().message;
    assert!(said.contains("skill echo has no tool `ecco`"), "the newest refusal is named: {said}");
    let err = refused("[skills.echo]\nlevel = \"auto\"\nwrite = [\"./skills\"]\n").await;
    assert!(err.contains("would let echo write the skills folder"), "{err}");
    assert_eq!(serving(&live, "echo").await.unwrap_err().code, ErrorCode::Unavailable);
    assert_eq!(live.generation(), 1, "closed once, however many refusals follow");

    // The table as it was: the same offer, opened again, and said so.
    ws.policy(AUTO);
    let summary = live.reload(&source).await.expect("the table loads again");
    assert!(summary.reopened && !summary.table_changed && summary.generation == 2, "{summary:?}");
    assert_eq!(serving(&live, "echo").await.unwrap(), "echo 1.0.0");

    refused("[skills.echo\n").await;
    ws.policy("[skills.echo]\nlevel = \"auto\"\n[skills.echo.tools.wait]\nlevel = \"deny\"\n");
    let summary = live.reload(&source).await.expect("the fixed table loads");
    assert!(summary.reopened && summary.table_changed && summary.generation == 4, "{summary:?}");
    assert_eq!(serving(&live, "echo").await.unwrap_err().code, ErrorCode::Denied);
    assert_eq!(call(&current(&live), "echo.echo", json!({"a": 1})).await.unwrap(), r#"{"a":1}"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_reloads_when_a_skill_appears_and_when_the_table_is_saved() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let (live, source) = live(&ws, AUTO).await;
    let watching = watch(live.clone(), source).expect("watching starts");
    let mut changes = live.subscribe();

    ws.install_bytes("other.wasm", &echo_variant("other", "1.0.0"));
    next_change(&mut changes).await;
    assert_eq!(
        call(&current(&live), "other.echo", json!({})).await.unwrap_err().code,
        ErrorCode::Denied,
        "not listed: confirm"
    );
    assert!(current(&live).registry().active("other").is_some());

    // Saved the way editors do: a new file renamed over the old.
    std::fs::write(ws.path("reach.toml.tmp"), format!("{AUTO}[skills.other]\nlevel = \"auto\"\n"))
        .unwrap();
    std::fs::rename(ws.path("reach.toml.tmp"), ws.path("reach.toml")).unwrap();
    next_change(&mut changes).await;
    assert_eq!(serving(&live, "other").await.unwrap(), "other 1.0.0");

    drop(watching);
    let generation = live.generation();
    ws.install_bytes("third.wasm", &echo_variant("third", "1.0.0"));
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(live.generation(), generation, "no reload after the handle is dropped");
}

/// A reload within 30 s, or the test fails.
async fn next_change(changes: &mut tokio::sync::watch::Receiver<u64>) {
    tokio::time::timeout(Duration::from_secs(30), changes.changed())
        .await
        .expect("a reload within 30 s")
        .unwrap();
}

/// Replace `path` the way editors save: a new file renamed over it.
fn save(path: &std::path::Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Regression: a table that is a symbolic link was watched where the link
/// is, so saving the file it points to reloaded nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_follows_a_linked_table_to_its_file_and_to_a_new_target() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let deny_wait = format!("{AUTO}[skills.echo.tools.wait]\nlevel = \"deny\"\n");
    let first = ws.write("conf/a/reach.toml", AUTO);
    std::os::unix::fs::symlink(&first, ws.path("reach.toml")).unwrap();
    let policy = agent_reach::policy::Policy::load(&ws.path("reach.toml")).unwrap();
    let config = agent_reach::runtime::RuntimeConfig {
        cache_dir: Some(agent_reach_tests::workspace().join("target/test-compile-cache")),
        pooling: true,
    };
    let live = LiveHost::new(Host::load(config, policy, &ws.path("skills")).await.unwrap());
    let source = ReloadSource::new(Some(ws.path("reach.toml")), ws.path("skills"));
    let _watching = watch(live.clone(), source).expect("watching starts");
    let mut changes = live.subscribe();
    assert_eq!(serving(&live, "echo").await.unwrap(), "echo 1.0.0");

    // The file the link points to, saved in its own folder.
    save(&first, &deny_wait);
    next_change(&mut changes).await;
    assert_eq!(serving(&live, "echo").await.unwrap_err().code, ErrorCode::Denied);

    // The link pointed at another file (as `ln -sfn` does: a new link renamed over it).
    let second = ws.write("conf/b/reach.toml", AUTO);
    std::os::unix::fs::symlink(&second, ws.path("reach.toml.new")).unwrap();
    std::fs::rename(ws.path("reach.toml.new"), ws.path("reach.toml")).unwrap();
    next_change(&mut changes).await;
    assert_eq!(serving(&live, "echo").await.unwrap(), "echo 1.0.0");

    // The new file is watched now, and the old one no longer counts.
    save(&second, &deny_wait);
    next_change(&mut changes).await;
    assert_eq!(serving(&live, "echo").await.unwrap_err().code, ErrorCode::Denied);
}

/// Regression: a skills folder removed and created again was no longer
/// watched, so skills copied into it were never loaded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_watches_a_skills_folder_created_again() {
    let ws = Workspace::new();
    ws.install_bytes("echo.wasm", &echo_variant("echo", "1.0.0"));
    let (live, source) = live(&ws, &format!("{AUTO}[skills.other]\nlevel = \"auto\"\n")).await;
    let _watching = watch(live.clone(), source).expect("watching starts");
    let mut changes = live.subscribe();

    std::fs::remove_dir_all(ws.path("skills")).unwrap();
    next_change(&mut changes).await;
    let closed = live.current().err().expect("no skills folder: nothing is served");
    assert_eq!(closed.what, "the skills folder", "{closed}");

    std::fs::create_dir(ws.path("skills")).unwrap();
    next_change(&mut changes).await;
    assert!(
        current(&live).registry().active_skills().is_empty(),
        "open again, with the empty folder"
    );

    ws.install_bytes("other.wasm", &echo_variant("other", "1.0.0"));
    next_change(&mut changes).await;
    assert_eq!(serving(&live, "other").await.unwrap(), "other 1.0.0");
}

/// A `SKILL.md` named `name` with `description`.
fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nSteps for {name}.\n")
}

/// The description of the active bundle `name`, if one is active.
fn bundle_description(live: &LiveHost, name: &str) -> Option<String> {
    current(live).registry().active_bundle(name).and_then(|b| Some(b.active()?.description.clone()))
}

/// Regression: only `.wasm` files and the table were watched, so an edited
/// `SKILL.md` (or script, or reference) went on being served as it was
/// until a restart, and `reach mcp` never told its clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_reloads_when_a_file_of_a_bundle_is_edited_added_or_removed() {
    let ws = Workspace::new();
    ws.write("skills/notes/SKILL.md", &skill_md("notes", "Takes notes."));
    ws.write(".agents/skills/triage/SKILL.md", &skill_md("triage", "Triages incidents."));
    let table = "[skills.triage]\nbundle = \".agents/skills/triage\"\n";
    let (live, source) = live(&ws, table).await;
    let _watching = watch(live.clone(), source).expect("watching starts");
    let mut changes = live.subscribe();
    assert_eq!(bundle_description(&live, "notes").as_deref(), Some("Takes notes."));
    assert_eq!(bundle_description(&live, "triage").as_deref(), Some("Triages incidents."));

    // In the skills folder, saved the way editors do.
    save(&ws.path("skills/notes/SKILL.md"), &skill_md("notes", "Takes meeting notes."));
    next_change(&mut changes).await;
    assert_eq!(bundle_description(&live, "notes").as_deref(), Some("Takes meeting notes."));

    // A file added below a project bundle: in its digest, so an upgrade.
    let digest = |live: &LiveHost| {
        current(live).registry().active_bundle("triage").and_then(|b| b.sha256().map(str::to_owned))
    };
    let before = digest(&live);
    ws.write(".agents/skills/triage/references/severity.md", "S1: the service is down.\n");
    next_change(&mut changes).await;
    let triage = current(&live);
    let files = &triage.registry().active_bundle("triage").unwrap().active().unwrap().files;
    assert!(files.iter().any(|f| f.path == "references/severity.md"), "{files:?}");
    assert_ne!(digest(&live), before);

    // A bundle copied in, and one removed.
    ws.write("skills/fresh/SKILL.md", &skill_md("fresh", "Is new."));
    next_change(&mut changes).await;
    assert_eq!(bundle_description(&live, "fresh").as_deref(), Some("Is new."));
    std::fs::remove_dir_all(ws.path("skills/notes")).unwrap();
    next_change(&mut changes).await;
    assert_eq!(bundle_description(&live, "notes"), None);
}
