//! Agent Skills bundles' JavaScript scripts, run by the JavaScript runner
//! component (SpiderMonkey via componentize-js) inside the sandbox with
//! exactly the bundle's grants: the fixture bundle
//! (`tests/fixtures/bundles/json-summary`) runs its ES module script, which
//! imports Node's `fs` and `path` and a vendored CommonJS module; reading
//! outside the grants or reaching an ungranted host is `DENIED`; the bundle
//! folder is read-only; a failing script says how.

use agent_reach::ErrorCode;
use agent_reach_tests::guests;
use agent_reach_tests::{TestServer, Workspace, call, workspace};
use serde_json::json;
use std::path::Path;

/// A workspace with both runners and the fixture bundle, plus `extra`
/// scripts (name, source) written into its `scripts/`.
fn ws(extra: &[(&str, &str)]) -> Workspace {
    let ws = Workspace::new();
    ws.mkdir("skills/runners");
    std::fs::copy(guests::RUNNER_JS.path(), ws.path("skills/runners/js.wasm")).unwrap();
    copy_dir(
        &workspace().join("tests/fixtures/bundles/json-summary"),
        &ws.path("skills/json-summary"),
    );
    for (name, source) in extra {
        ws.write(&format!("skills/json-summary/scripts/{name}"), source);
    }
    ws.write(
        "data/orders.json",
        r#"[{"region": "North", "amount": 10}, {"region": "South", "amount": 5}, {"region": "North", "amount": 7.5}]"#,
    );
    ws.write("private/secret.txt", "not for scripts\n");
    ws.mkdir("out");
    ws
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn table(ws: &Workspace, extra: &str) -> String {
    format!(
        "[skills.json-summary]\nlevel = \"auto\"\nread = [\"{}\"]\nwrite = [\"{}\"]\n{extra}",
        ws.path("data").display(),
        ws.path("out").display()
    )
}

async fn run(
    host: &agent_reach::Host,
    script: &str,
    args: &[&str],
) -> Result<String, agent_reach::ToolFailure> {
    call(host, "json-summary.run_script", json!({"script": script, "args": args})).await
}

#[tokio::test]
async fn an_es_module_script_runs_with_node_modules_and_its_vendored_one() {
    let ws = ws(&[]);
    let host = ws.host(&table(&ws, "")).await;
    let entry = host.registry().active_bundle("json-summary").expect("active");
    let tools: Vec<&str> =
        entry.manifest.as_ref().unwrap().tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tools, ["run_script"]);
    assert!(entry.scripts.iter().all(|s| s.cannot_run.is_none()), "{:?}", entry.scripts);
    let file = ws.path("data/orders.json");
    let out = run(&host, "scripts/summary.mjs", &[file.to_str().unwrap()]).await.expect("it runs");
    assert!(out.starts_with("# Summary: orders.json"), "{out}");
    assert!(out.contains("3 records, 2 fields"), "{out}");
    assert!(out.contains("| amount | total 22.5, mean 7.5 |"), "{out}");
    assert!(out.contains("| region | most common: North (2×) |"), "the vendored module: {out}");
}

#[tokio::test]
async fn reading_outside_the_grants_is_denied_and_so_is_an_ungranted_host() {
    let server = TestServer::start();
    let peek =
        "const fs = require('fs');\nconsole.log(fs.readFileSync(process.argv[2], 'utf8'));\n";
    let fetch = "const r = await fetch(process.argv[2]);\nconsole.log(await r.text());\n";
    let ws = ws(&[("peek.js", peek), ("fetch.mjs", fetch)]);
    let host = ws.host(&table(&ws, "")).await;
    let secret = ws.path("private/secret.txt");
    let err = run(&host, "scripts/peek.js", &[secret.to_str().unwrap()]).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains("secret.txt"), "names the path: {err}");
    let granted = ws.path("data/orders.json");
    let out = run(&host, "scripts/peek.js", &[granted.to_str().unwrap()]).await.expect("granted");
    assert!(out.contains("North"), "{out}");

    let url = server.url("/hello");
    let err = run(&host, "scripts/fetch.mjs", &[&url]).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(err.message.contains(&server.addr.to_string()), "names the host: {err}");
    let host = ws.host(&table(&ws, &format!("net = [\"{}\"]\n", server.addr))).await;
    let out = run(&host, "scripts/fetch.mjs", &[&url]).await.expect("a granted host answers");
    assert!(out.contains("hello from /hello"), "{out}");
}

#[tokio::test]
async fn a_script_writes_where_granted_never_into_its_bundle_and_failures_say_how() {
    let write = "const fs = require('fs');\nfs.mkdirSync(process.argv[2] + '/sub', {recursive: true});\n\
                 fs.writeFileSync(process.argv[2] + '/sub/note.md', require('fs').readFileSync(0, 'utf8'));\n\
                 console.log(fs.readdirSync(process.argv[2] + '/sub').join(','));\n";
    let tamper = "require('fs').writeFileSync(__filename + '.bak', 'x');\n";
    let fail = "console.error('usage: fail.js N');\nprocess.exit(3);\n";
    let throws = "function parse() { throw new RangeError('bad input'); }\nparse();\n";
    let child = "require('child_process').execSync('id');\n";
    let ws = ws(&[
        ("write.js", write),
        ("tamper.js", tamper),
        ("fail.js", fail),
        ("throws.js", throws),
        ("child.js", child),
    ]);
    let host = ws.host(&table(&ws, "")).await;

    let out_dir = ws.path("out");
    let out = call(
        &host,
        "json-summary.run_script",
        json!({"script": "scripts/write.js", "args": [out_dir.to_str().unwrap()], "stdin": "from stdin\n"}),
    )
    .await
    .expect("a granted folder is written");
    assert_eq!(out.trim(), "note.md");
    assert_eq!(std::fs::read_to_string(ws.path("out/sub/note.md")).unwrap(), "from stdin\n");

    let err = run(&host, "scripts/tamper.js", &[]).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Denied, "{err}");
    assert!(!ws.path("skills/json-summary/scripts/tamper.js.bak").exists());

    let err = run(&host, "scripts/fail.js", &[]).await.unwrap_err();
    assert_eq!(err.code, ErrorCode::Failed, "{err}");
    assert!(err.message.contains("status 3") && err.message.contains("usage: fail.js"), "{err}");
    let err = run(&host, "scripts/throws.js", &[]).await.unwrap_err();
    assert!(
        err.message.contains("status 1") && err.message.contains("RangeError: bad input"),
        "{err}"
    );
    assert!(
        err.message.contains("at parse (") && err.message.contains("scripts/throws.js:1:"),
        "where: {err}"
    );
    let err = run(&host, "scripts/child.js", &[]).await.unwrap_err();
    assert!(err.message.contains("Cannot find module 'child_process'"), "{err}");
}
