//! A skill in Python: `app.py` against the pure-Python SDK (`sdk/python/agent_reach`, copied
//! into the folder as it is) and the WIT it builds against, built by componentize-py.

use super::{File, Template, fill};

/// The SDK's files, by their path in the skill's folder. `sdk_is_embedded_whole` checks that
/// this lists every file of `sdk/python/agent_reach` and `sdk/python/wit`.
pub(super) const SDK: &[(&str, &str)] = &[
    ("agent_reach/__init__.py", include_str!("../../../../../sdk/python/agent_reach/__init__.py")),
    (
        "agent_reach/_bindings.py",
        include_str!("../../../../../sdk/python/agent_reach/_bindings.py"),
    ),
    (
        "agent_reach/docstrings.py",
        include_str!("../../../../../sdk/python/agent_reach/docstrings.py"),
    ),
    ("agent_reach/errors.py", include_str!("../../../../../sdk/python/agent_reach/errors.py")),
    ("agent_reach/fs.py", include_str!("../../../../../sdk/python/agent_reach/fs.py")),
    ("agent_reach/guest.py", include_str!("../../../../../sdk/python/agent_reach/guest.py")),
    ("agent_reach/http.py", include_str!("../../../../../sdk/python/agent_reach/http.py")),
    ("agent_reach/schema.py", include_str!("../../../../../sdk/python/agent_reach/schema.py")),
    ("agent_reach/skill.py", include_str!("../../../../../sdk/python/agent_reach/skill.py")),
    ("wit/skill.wit", include_str!("../../../../../sdk/python/wit/skill.wit")),
];

pub(super) fn files(name: &str) -> Template {
    let values = [("NAME", name)];
    let file =
        |path, template: &str, executable| File { path, text: fill(template, &values), executable };
    let mut files = vec![
        file("app.py", include_str!("python/app.py.in"), false),
        file("requirements.txt", include_str!("python/requirements.txt.in"), false),
        file(".gitignore", include_str!("python/gitignore.in"), false),
        file("build.sh", include_str!("python/build.sh.in"), true),
        file("test.sh", include_str!("python/test.sh.in"), true),
        file("README.md", include_str!("python/README.md.in"), false),
    ];
    files.extend(SDK.iter().map(|(path, text)| File {
        path,
        text: (*text).to_owned(),
        executable: false,
    }));
    Template {
        files,
        setup: Some(
            "python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt",
        ),
        build: "./build.sh",
        built: format!("{name}.wasm"),
    }
}

#[cfg(test)]
mod tests {
    use super::SDK;
    use std::path::Path;

    #[test]
    fn sdk_is_embedded_whole() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/python");
        let mut on_disk = Vec::new();
        for folder in ["agent_reach", "wit"] {
            for entry in std::fs::read_dir(root.join(folder)).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                if name.ends_with(".py") || name.ends_with(".wit") {
                    on_disk.push(format!("{folder}/{name}"));
                }
            }
        }
        on_disk.sort();
        let embedded: Vec<&str> = SDK.iter().map(|(path, _)| *path).collect();
        assert_eq!(embedded, on_disk, "add the SDK's new files to new_skill/python.rs");
    }
}
