//! The audit log on real files: dates, modes, masking, rotation, and
//! records that must exist before their action.

mod basics {
    use super::super::clock::civil_from_days;
    use super::super::*;
    use serde_json::json;

    #[test]
    fn dates_are_civil() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20788), (2026, 12, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[cfg(unix)]
    #[test]
    fn the_log_is_the_users_alone() {
        // Regression: logs were created with the umask's 0644, so any account
        // on the machine could read every call's arguments and results.
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join(".reach/runs");
        let log = AuditLog::create(&runs, "r1", Vec::new()).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            (mode(log.path()), mode(&runs), mode(&dir.path().join(".reach"))),
            (0o600, 0o700, 0o700)
        );
    }

    #[test]
    fn lines_are_flushed_json_with_secrets_masked() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = AuditLog::create(dir.path(), "r1", vec!["hunter2-secret".into()]).unwrap();
        log.record(Body::from_json(
            "tool_call",
            json!({"arguments": {"token": "hunter2-secret"}, "step": 1}),
        ));
        let text = std::fs::read_to_string(log.path()).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["event"], "tool_call");
        assert_eq!(line["run_id"], "r1");
        assert_eq!(line["arguments"]["token"], "[REDACTED]");
        assert!(AuditLog::create(dir.path(), "r1", vec![]).is_err(), "a run id is never reused");
    }

    #[test]
    fn secrets_that_json_escapes_are_masked_before_encoding() {
        // Regression: masking ran on the encoded line, where a PEM key's
        // newlines read `\n` and a quote reads `\"`, so such a secret was
        // written in full.
        let pem = "-----BEGIN KEY-----\nMIIBOgIBAAJBAK\\x\"q\n-----END KEY-----";
        let dir = tempfile::tempdir().unwrap();
        let mut log = AuditLog::create(dir.path(), "r2", vec![pem.to_owned()]).unwrap();
        log.record(Body::from_json(
            "tool_call",
            json!({"arguments": {"content": format!("key: {pem}"), pem: 1}, "list": [pem]}),
        ));
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(!text.contains("MIIBOgIBAAJBAK"), "{text}");
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["arguments"]["content"], "key: [REDACTED]");
        assert_eq!(line["arguments"]["[REDACTED]"], 1, "keys are masked too");
        assert_eq!(line["list"][0], "[REDACTED]");
    }
}

mod rotation {
    use super::super::*;
    use serde_json::json;

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_rotating_log_goes_on_in_a_new_file_and_keeps_the_newest() {
        // Regression: `reach mcp` wrote one file per server, growing for as
        // long as the server ran.
        let dir = tempfile::tempdir().unwrap();
        let mut log = AuditLog::create(dir.path(), "mcp-r5", vec!["hunter2-secret".into()])
            .unwrap()
            .rotate_at(1000, 2);
        log.record(Body::from_json(
            "run_started",
            json!({"kind": "mcp", "task": "reach mcp (stdio) hunter2-secret"}),
        ));
        for call in 0..20 {
            log.record(Body::from_json("tool_call", json!({"call": call, "pad": "x".repeat(200)})));
        }
        let part = |name: &str| -> u32 {
            name.strip_prefix("mcp-r5.part")
                .and_then(|n| n.strip_suffix(".jsonl"))
                .unwrap()
                .parse()
                .unwrap()
        };
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".jsonl"))
            .collect();
        assert_eq!(names.len(), 2, "the newest two parts are kept: {names:?}");
        names.sort_by_key(|name| part(name));
        let (older, newer) = (dir.path().join(&names[0]), dir.path().join(&names[1]));
        assert_eq!(log.path(), newer, "the log writes the newest part");
        assert_eq!(part(&names[0]) + 1, part(&names[1]));
        for path in [&older, &newer] {
            let size = std::fs::metadata(path).unwrap().len();
            assert!(size <= 1000 + 200, "{} is {size} bytes", path.display());
            let first = &lines(path)[0];
            assert_eq!(first["event"], "log_continued");
            assert_eq!(first["run_started"]["kind"], "mcp", "each part says what it is the log of");
            assert_eq!(
                first["run_started"]["task"], "reach mcp (stdio) [REDACTED]",
                "masked as it was written"
            );
        }
        assert_eq!(lines(&newer)[0]["previous"], names[0].as_str());
        assert_eq!(lines(&older).last().unwrap()["next"], names[1].as_str());
        // Nothing lost between the kept parts, and the last record is the last call.
        let calls: Vec<u64> = [&older, &newer]
            .iter()
            .flat_map(|p| lines(p))
            .filter_map(|l| l["call"].as_u64())
            .collect();
        assert!(calls.windows(2).all(|w| w[1] == w[0] + 1), "{calls:?}");
        assert_eq!(calls.last(), Some(&19));
    }

    #[test]
    fn a_call_whose_record_cannot_start_a_new_part_does_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = AuditLog::create(dir.path(), "mcp-r6", vec![]).unwrap().rotate_at(100, 3);
        log.record(Body::from_json("run_started", json!({"kind": "mcp", "pad": "x".repeat(80)})));
        std::fs::create_dir(dir.path().join("mcp-r6.part2.jsonl")).unwrap();
        let err = log
            .record_before(Body::from_json(
                "tool_call_started",
                json!({"tool": "files__write", "pad": "x".repeat(80)}),
            ))
            .unwrap_err();
        assert!(err.contains("was not run"), "{err}");
    }
}

mod fail_closed {
    use super::super::*;
    use serde_json::json;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_record_that_cannot_be_written_is_an_error_for_record_before() {
        let mut log = AuditLog::create(&tempfile::tempdir().unwrap().keep(), "r3", vec![]).unwrap();
        // /dev/full: every write fails with ENOSPC, as on a full disk.
        log.output =
            Output::File(std::fs::OpenOptions::new().append(true).open("/dev/full").unwrap());
        let err = log
            .record_before(Body::from_json("tool_call_started", json!({"tool": "files__write"})))
            .unwrap_err();
        assert!(err.contains("was not run"), "{err}");
        log.record(Body::from_json("run_finished", json!({}))); // best effort: logged, not fatal
    }

    #[test]
    fn values_that_look_like_json_tokens_keep_the_line_valid() {
        let dir = tempfile::tempdir().unwrap();
        let mut log =
            AuditLog::create(dir.path(), "r4", vec!["true".into(), "null".into()]).unwrap();
        log.record(Body::from_json(
            "tool_call",
            json!({"ok": true, "none": null, "text": "it is true"}),
        ));
        let text = std::fs::read_to_string(log.path()).unwrap();
        let line: Value = serde_json::from_str(text.trim()).expect("still JSON");
        assert_eq!(line["ok"], true);
        assert_eq!(line["text"], "it is [REDACTED]");
    }
}
