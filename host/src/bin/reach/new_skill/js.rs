//! A skill in JavaScript: `src/app.js` against the SDK (`sdk/js/agent-reach.js`, copied into
//! the folder as it is), bundled with esbuild and built by componentize-js, both exact-pinned
//! npm devDependencies.

use super::{File, Template, fill};

pub(super) fn files(name: &str) -> Template {
    let values = [("NAME", name)];
    let file =
        |path, template: &str, executable| File { path, text: fill(template, &values), executable };
    let verbatim = |path, text: &str| File { path, text: text.to_owned(), executable: false };
    Template {
        files: vec![
            file("src/app.js", include_str!("js/app.js.in"), false),
            verbatim("src/agent-reach.js", include_str!("../../../../../sdk/js/agent-reach.js")),
            // The contract itself: released versions are frozen, so this copy cannot go stale.
            verbatim("wit/skill.wit", include_str!("../../../../../wit/skill.wit")),
            file("package.json", include_str!("js/package.json.in"), false),
            file(".gitignore", include_str!("js/gitignore.in"), false),
            file("test.sh", include_str!("js/test.sh.in"), true),
            file("README.md", include_str!("js/README.md.in"), false),
        ],
        setup: Some("npm install"),
        build: "npm run build",
        built: format!("{name}.wasm"),
    }
}
