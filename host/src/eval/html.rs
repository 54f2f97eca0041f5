//! The `--html` report: one self-contained page a person can open, mail or
//! print. Completion by domain, step and token distributions, and every
//! case's trajectory with the reason each failed run failed.
//!
//! Almost everything shown comes from the model, the tools, fetched pages or
//! case files, so it is untrusted: every such string goes through `escape`
//! before it reaches the page, the page has no script at all, and its
//! Content-Security-Policy forbids loading anything, so even a mistake here
//! cannot fetch a resource or run code.

use super::report::{
    CallRecord, CaseResult, Check, Comparison, EvalReport, Gate, Metrics, RunResult,
};
use crate::text::shorten_chars;

/// Nothing may be loaded or run; only the inline stylesheet and `data:`
/// images are allowed. A second line of defence behind [`escape`].
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// Results, arguments and answers longer than this many characters are cut
/// on the page: the report stays readable and small (the audit log has all).
const EXCERPT_CHARS: usize = 2000;

/// Bars at most in a histogram; wider ranges are grouped into buckets.
const MAX_BUCKETS: usize = 16;

/// Inline because the CSP loads nothing; the print rules open every case
/// so a printed report holds every trajectory.
const STYLE: &str = "\
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em auto;\
max-width:72em;padding:0 1em;color:#222}
h1{font-size:1.5em;margin:.2em 0}\
h2{font-size:1.2em;margin:1.4em 0 .4em;border-bottom:1px solid #ccc}
h3{font-size:1em;margin:.8em 0 .3em}
table{border-collapse:collapse;margin:.4em 0}\
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums}
.wide{overflow-x:auto}td code{overflow-wrap:anywhere}\
code,pre{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;background:#f8f8f8;padding:3px}
.badge{display:inline-block;padding:0 .5em;border-radius:3px;\
font-weight:bold;font-size:.85em;color:#fff}
.pass{background:#2e7d32}.fail{background:#c62828}
li.bad,tr.bad td{background:#fdecea}.flag{color:#b71c1c}.cut{color:#777;font-style:italic}
details{border:1px solid #ddd;margin:.4em 0;padding:.2em .6em}summary{cursor:pointer}
.run{border-left:3px solid #2e7d32;padding-left:.6em;margin:.8em 0}\
.run.bad{border-left-color:#c62828}
.charts{display:flex;flex-wrap:wrap;gap:1.5em}svg text{font:11px system-ui,sans-serif}
@media print{body{font-size:11px;max-width:none}.run{break-inside:avoid}
details>*{display:block}details::details-content{content-visibility:visible;display:contents}}
";

/// One self-contained HTML page for `report`: no external scripts, styles, fonts or images.
pub fn render(report: &EvalReport) -> String {
    let mut page = String::with_capacity(64 * 1024);
    page.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str(&format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"));
    page.push_str(&format!("<title>reach eval: {}</title>\n", escape(&report.model)));
    page.push_str(&format!("<style>\n{STYLE}</style>\n</head>\n<body>\n"));
    page.push_str(&summary(report));
    page.push_str(&gates(&report.gates));
    if let Some(comparison) = &report.baseline {
        page.push_str(&baseline(comparison));
    }
    page.push_str(&metrics(report));
    page.push_str(&charts(report));
    page.push_str(&failure_kinds(report));
    page.push_str(&failed_index(&report.cases));
    page.push_str("<h2>Cases</h2>\n");
    for (index, case) in report.cases.iter().enumerate() {
        page.push_str(&case_block(index, case));
    }
    page.push_str("</body>\n</html>\n");
    page
}

/// `text` safe as HTML text and inside a quoted attribute. Control
/// characters and the bidi controls that reorder text are shown as
/// `\u{…}`, so a tool result cannot pass one string off as another.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control()
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` escaped, cut at [`EXCERPT_CHARS`] with a note saying so.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        None => escape(text),
        Some((cut, _)) => format!(
            "{}<span class=\"cut\">… (cut: first {EXCERPT_CHARS} of {} characters)</span>",
            escape(&text[..cut]),
            text.chars().count()
        ),
    }
}

/// The `href` for an audit log. An absolute path becomes a `file://` URL;
/// a relative one stays relative (to the page, which lives in the output
/// folder). Every byte outside a small safe set is percent-encoded — `:`
/// too, so a relative path can never read as a scheme (`javascript:`),
/// and `#`, `?`, `"` cannot end the path early; the caller still
/// attribute-escapes the result.
fn file_href(path: &str) -> String {
    let bytes = path.as_bytes();
    let drive = bytes.len() > 2
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    let (mut href, rest) = if path.starts_with('/') {
        ("file://".to_owned(), path.to_owned())
    } else if drive {
        (format!("file:///{}:", bytes[0] as char), path[2..].replace('\\', "/"))
    } else {
        (String::new(), path.to_owned())
    };
    for byte in rest.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                href.push(byte as char)
            }
            _ => href.push_str(&format!("%{byte:02X}")),
        }
    }
    href
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn optional_percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "–".to_owned(), percent)
}

/// `12345` as `12,345`: token counts are read at a glance.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A compact count for axis labels: `950`, `1.5k`, `12k`, `3.2M`.
fn compact(n: u64) -> String {
    let scaled = |v: f64, unit: &str| {
        if v < 10.0 { format!("{v:.1}{unit}") } else { format!("{v:.0}{unit}") }
    };
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => scaled(n as f64 / 1e3, "k").replace(".0k", "k"),
        _ => scaled(n as f64 / 1e6, "M").replace(".0M", "M"),
    }
}

fn seconds(ms: u64) -> String {
    if ms >= 60_000 {
        format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

fn badge(passed: bool) -> &'static str {
    if passed {
        "<span class=\"badge pass\">PASS</span>"
    } else {
        "<span class=\"badge fail\">FAIL</span>"
    }
}

fn summary(report: &EvalReport) -> String {
    let runs: usize = report.cases.iter().map(|c| c.runs.len()).sum();
    let mut out = format!("<h1>reach eval: {}</h1>\n<table>\n", escape(&report.model));
    let rows = [
        ("Model", escape(&report.model)),
        ("Started", escape(&report.started)),
        ("Repeat", report.repeat.to_string()),
        ("Cases / runs", format!("{} / {runs}", report.cases.len())),
        ("Wall time", seconds(report.wall_ms)),
        ("Output folder", format!("<code>{}</code>", escape(&report.out_dir))),
        ("Gates", badge(report.gates_hold()).to_owned()),
    ];
    for (label, value) in rows {
        out.push_str(&format!("<tr><th>{label}</th><td>{value}</td></tr>\n"));
    }
    out.push_str("</table>\n");
    out
}

fn gates(gates: &[Gate]) -> String {
    if gates.is_empty() {
        return "<h2>Gates</h2>\n<p>No gates were set.</p>\n".to_owned();
    }
    let mut out = "<h2>Gates</h2>\n<table>\n<tr><th>Gate</th><th>Result</th><th>Detail</th></tr>\n"
        .to_owned();
    for gate in gates {
        out.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
            escape(&gate.name),
            badge(gate.passed),
            escape(&gate.detail)
        ));
    }
    out.push_str("</table>\n");
    out
}

fn baseline(comparison: &Comparison) -> String {
    let mut out = format!(
        "<h2>Against the baseline</h2>\n<p>Baseline <code>{}</code>: completion {} → {}.</p>\n",
        escape(&comparison.file),
        percent(comparison.completion_before),
        percent(comparison.completion_after)
    );
    for (title, changes) in
        [("Regressions", &comparison.regressions), ("Improvements", &comparison.improvements)]
    {
        out.push_str(&format!("<h3>{title} ({})</h3>\n", changes.len()));
        if changes.is_empty() {
            continue;
        }
        out.push_str("<table>\n<tr><th>Case</th><th>Before</th><th>After</th></tr>\n");
        for change in changes {
            out.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
                escape(&change.id),
                escape(&change.before),
                escape(&change.after)
            ));
        }
        out.push_str("</table>\n");
    }
    for (title, ids) in
        [("New cases", &comparison.new_cases), ("Missing cases", &comparison.missing_cases)]
    {
        let listed: Vec<String> =
            ids.iter().map(|id| format!("<code>{}</code>", escape(id))).collect();
        let listed = if listed.is_empty() { "none".to_owned() } else { listed.join(", ") };
        out.push_str(&format!("<p>{title} ({}): {listed}</p>\n", ids.len()));
    }
    out
}

/// Every figure of `m` as (label, value); one list feeds both tables so
/// they cannot drift apart.
fn figures(m: &Metrics, repeat: usize) -> Vec<(String, String)> {
    let pass_k = format!("pass^{repeat}");
    let rows = [
        ("cases", m.cases.to_string()),
        ("runs", m.runs.to_string()),
        ("completion", percent(m.completion)),
        ("pass@1", percent(m.pass_at_1)),
        (pass_k.as_str(), percent(m.pass_all)),
        ("tool accuracy", percent(m.tool_accuracy)),
        ("argument accuracy", optional_percent(m.arg_accuracy)),
        ("boundary compliance", optional_percent(m.boundary_compliance)),
        ("ungrounded runs", m.ungrounded_runs.to_string()),
        ("invented-input runs", m.invented_input_runs.to_string()),
        ("median steps", format!("{:.1}", m.median_steps)),
        ("mean tokens in", format!("{:.0}", m.mean_input_tokens)),
        ("mean tokens out", format!("{:.0}", m.mean_output_tokens)),
        ("median s", format!("{:.1}", m.median_seconds)),
        ("mean model s", format!("{:.1}", m.mean_model_seconds)),
        ("mean tool s", format!("{:.1}", m.mean_tool_seconds)),
    ];
    rows.into_iter().map(|(label, value)| (label.to_owned(), value)).collect()
}

fn metrics(report: &EvalReport) -> String {
    let mut out = "<h2>Overall</h2>\n<table>\n".to_owned();
    for (label, value) in figures(&report.overall, report.repeat) {
        out.push_str(&format!("<tr><th>{label}</th><td class=\"n\">{value}</td></tr>\n"));
    }
    out.push_str("</table>\n<h2>By domain</h2>\n<div class=\"wide\"><table>\n<tr><th>domain</th>");
    for (label, _) in figures(&Metrics::default(), report.repeat) {
        out.push_str(&format!("<th>{label}</th>"));
    }
    out.push_str("</tr>\n");
    for (domain, m) in &report.by_domain {
        out.push_str(&format!("<tr><th>{}</th>", escape(domain)));
        for (_, value) in figures(m, report.repeat) {
            out.push_str(&format!("<td class=\"n\">{value}</td>"));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

fn charts(report: &EvalReport) -> String {
    let runs: Vec<&RunResult> = report.cases.iter().flat_map(|c| &c.runs).collect();
    let steps: Vec<u64> = runs.iter().map(|r| r.steps as u64).collect();
    let tokens: Vec<u64> = runs.iter().map(|r| r.input_tokens + r.output_tokens).collect();
    format!(
        "<h2>Distributions</h2>\n<div class=\"charts\">\n{}{}{}</div>\n",
        completion_chart(report),
        histogram("Steps per run", &buckets(&steps, MAX_BUCKETS)),
        histogram("Tokens per run (in + out)", &buckets(&tokens, MAX_BUCKETS))
    )
}

/// Horizontal bars, one per domain, of the share of runs that passed.
fn completion_chart(report: &EvalReport) -> String {
    let (label_w, bar_w, row_h) = (150.0, 220.0, 22.0);
    let height = row_h * report.by_domain.len().max(1) as f64 + 4.0;
    let width = label_w + bar_w + 110.0;
    let mut svg = format!(
        "<figure><figcaption>Completion by domain</figcaption>\n\
         <svg width=\"{width}\" height=\"{height}\" role=\"img\">\n"
    );
    for (i, (domain, m)) in report.by_domain.iter().enumerate() {
        let y = i as f64 * row_h + 2.0;
        let passed = (m.completion * m.runs as f64).round();
        let name = escape(&shorten_chars(domain, 22));
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{name}</text>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{bar_w}\" height=\"{}\" fill=\"#eee\"/>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\" fill=\"#2e7d32\"/>\
             <text x=\"{}\" y=\"{}\">{} ({passed}/{})</text>\n",
            label_w - 6.0,
            y + 14.0,
            row_h - 6.0,
            bar_w * m.completion.clamp(0.0, 1.0),
            row_h - 6.0,
            label_w + bar_w + 6.0,
            y + 14.0,
            percent(m.completion),
            m.runs
        ));
    }
    svg.push_str("</svg></figure>\n");
    svg
}

/// A histogram bucket: values in `low..=high` and how many there were.
#[derive(Debug, PartialEq)]
struct Bucket {
    low: u64,
    high: u64,
    count: usize,
}

/// At most `max` equal buckets covering `values`, one per value when the
/// range is small, else of a round width (1, 2, 5 × 10ⁿ) so the labels
/// read naturally.
fn buckets(values: &[u64], max: usize) -> Vec<Bucket> {
    let (Some(&min), Some(&top)) = (values.iter().min(), values.iter().max()) else {
        return Vec::new();
    };
    let mut width = 1u64;
    while top / width - min / width >= max as u64 {
        width = next_round(width);
    }
    let first = min / width;
    let mut out: Vec<Bucket> = (first..=top / width)
        .map(|b| Bucket { low: b * width, high: (b * width).saturating_add(width - 1), count: 0 })
        .collect();
    for value in values {
        out[(value / width - first) as usize].count += 1;
    }
    out
}

/// The round number after `n` in 1, 2, 5, 10, 20, 50…
fn next_round(n: u64) -> u64 {
    let mut magnitude = 1u64;
    while n / magnitude >= 10 {
        magnitude *= 10;
    }
    match n / magnitude {
        1 => magnitude.saturating_mul(2),
        2..=4 => magnitude.saturating_mul(5),
        _ => magnitude.saturating_mul(10),
    }
}

fn histogram(title: &str, buckets: &[Bucket]) -> String {
    let (plot_h, bar_w, top) = (110.0, 26.0, 16.0);
    let width = bar_w * buckets.len().max(1) as f64 + 10.0;
    let most = buckets.iter().map(|b| b.count).max().unwrap_or(0).max(1) as f64;
    let mut svg = format!(
        "<figure><figcaption>{title}</figcaption>\n\
         <svg width=\"{width}\" height=\"{}\" role=\"img\">\n",
        top + plot_h + 18.0
    );
    for (i, b) in buckets.iter().enumerate() {
        let h = plot_h * b.count as f64 / most;
        let x = 5.0 + i as f64 * bar_w;
        let range = if b.low == b.high {
            thousands(b.low)
        } else {
            format!("{}–{}", thousands(b.low), thousands(b.high))
        };
        let runs = if b.count == 1 { "run" } else { "runs" };
        svg.push_str(&format!(
            "<g><title>{range}: {} {runs}</title><rect x=\"{}\" y=\"{:.1}\" width=\"{}\" \
             height=\"{h:.1}\" fill=\"#1565c0\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>\n",
            b.count,
            x + 2.0,
            top + plot_h - h,
            bar_w - 4.0,
            x + bar_w / 2.0,
            top + plot_h - h - 3.0,
            b.count,
            x + bar_w / 2.0,
            top + plot_h + 13.0,
            compact(b.low)
        ));
    }
    svg.push_str("</svg></figure>\n");
    svg
}

fn failure_kinds(report: &EvalReport) -> String {
    let mut out = "<h2>Failure kinds</h2>\n".to_owned();
    if report.failure_kinds.is_empty() {
        out.push_str("<p>None.</p>\n");
        return out;
    }
    out.push_str("<table>\n<tr><th>kind</th><th>runs</th></tr>\n");
    for (kind, count) in &report.failure_kinds {
        out.push_str(&format!(
            "<tr><td><code>{}</code></td><td class=\"n\">{count}</td></tr>\n",
            escape(kind)
        ));
    }
    out.push_str("</table>\n");
    out
}

/// Links to every case with a failed run and what failed first, so a
/// reader goes straight to the evidence.
fn failed_index(cases: &[CaseResult]) -> String {
    let failed: Vec<String> = cases
        .iter()
        .enumerate()
        .filter(|(_, case)| case.runs.iter().any(|r| !r.passed))
        .map(|(index, case)| {
            format!(
                "<li><a href=\"#case-{index}\"><code>{}</code></a> ({}/{} passed): {}</li>\n",
                escape(&case.id),
                case.passes,
                case.runs.len(),
                escape(&failed_expectations(case.runs.iter().find(|r| !r.passed)))
            )
        })
        .collect();
    if failed.is_empty() {
        return "<h2>Failed cases</h2>\n<p>None.</p>\n".to_owned();
    }
    format!("<h2>Failed cases ({})</h2>\n<ul>\n{}</ul>\n", failed.len(), failed.concat())
}

/// The expectations a run failed, or its stop reason when none is recorded
/// (a setup or model error stops a run before anything is checked).
fn failed_expectations(run: Option<&RunResult>) -> String {
    let Some(run) = run else { return String::new() };
    let failed: Vec<&str> =
        run.score.checks.iter().filter(|c| !c.passed).map(|c| c.expectation.as_str()).collect();
    if failed.is_empty() {
        format!("stopped: {}", run.stop)
    } else {
        format!("failed: {}", failed.join(", "))
    }
}

fn case_block(index: usize, case: &CaseResult) -> String {
    let any_failed = case.runs.iter().any(|r| !r.passed);
    let mut out = format!(
        "<details id=\"case-{index}\"{}>\n<summary>{} <code>{}</code> · {} · {}/{} \
         passed</summary>\n",
        if any_failed { " open" } else { "" },
        badge(!any_failed && !case.runs.is_empty()),
        escape(&case.id),
        escape(&case.domain),
        case.passes,
        case.runs.len()
    );
    out.push_str(&format!(
        "<p><b>Task</b></p><pre>{}</pre>\n<p>Source: <code>{}</code></p>\n",
        excerpt(&case.task),
        escape(&case.source)
    ));
    for run in &case.runs {
        out.push_str(&run_block(run, case.runs.len()));
    }
    out.push_str("</details>\n");
    out
}

fn run_block(run: &RunResult, of: usize) -> String {
    let mut out = format!(
        "<div class=\"run{}\">\n<h3>Run {} of {of} {}",
        if run.passed { "" } else { " bad" },
        run.repeat,
        badge(run.passed)
    );
    if !run.passed {
        out.push_str(&format!(" {}", escape(&failed_expectations(Some(run)))));
    }
    out.push_str("</h3>\n");
    out.push_str(&run_facts(run));
    out.push_str(&checks(&run.score.checks));
    out.push_str(&flagged("Forbidden attempts", &run.score.forbidden_attempts));
    out.push_str(&flagged("Ungrounded in the answer (no tool showed them)", &run.score.ungrounded));
    out.push_str(&flagged(
        "Invented inputs (used before anything showed them)",
        &run.score.invented_inputs,
    ));
    out.push_str(&trajectory(&run.calls));
    let answer = run.answer.as_deref().map_or_else(|| "<i>no answer</i>".to_owned(), excerpt);
    out.push_str(&format!("<p><b>Answer</b></p><pre>{answer}</pre>\n"));
    if let Some(log) = &run.audit_log {
        out.push_str(&format!(
            "<p>Audit log: <a href=\"{}\"><code>{}</code></a></p>\n",
            escape(&file_href(log)),
            escape(log)
        ));
    }
    out.push_str("</div>\n");
    out
}

fn run_facts(run: &RunResult) -> String {
    let stop = match &run.stop_detail {
        Some(detail) => format!("<code>{}</code>: {}", escape(&run.stop), excerpt(detail)),
        None => format!("<code>{}</code>", escape(&run.stop)),
    };
    format!(
        "<p>Stop: {stop} · {} steps · tokens {} in / {} out{} · {} (model {}, tools {}){}</p>\n",
        run.steps,
        thousands(run.input_tokens),
        thousands(run.output_tokens),
        if run.tokens_estimated { " (estimated)" } else { "" },
        seconds(run.wall_ms),
        seconds(run.model_ms),
        seconds(run.tool_ms),
        if run.text_calls > 0 {
            format!(" · {} text calls", run.text_calls)
        } else {
            String::new()
        }
    )
}

fn checks(checks: &[Check]) -> String {
    if checks.is_empty() {
        return String::new();
    }
    let mut out = "<ul>\n".to_owned();
    for check in checks {
        let (class, mark) = if check.passed { ("", "✓") } else { (" class=\"bad\"", "✗") };
        out.push_str(&format!(
            "<li{class}>{mark} <code>{}</code>: {}</li>\n",
            escape(&check.expectation),
            excerpt(&check.detail)
        ));
    }
    out.push_str("</ul>\n");
    out
}

/// A warning list, shown only when there is something to warn about.
fn flagged(title: &str, items: &[String]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let listed: Vec<String> =
        items.iter().map(|item| format!("<li><code>{}</code></li>", excerpt(item))).collect();
    format!("<p class=\"flag\"><b>{title}:</b></p><ul class=\"flag\">{}</ul>\n", listed.concat())
}

/// The calls as a table, one row group per model step.
fn trajectory(calls: &[CallRecord]) -> String {
    if calls.is_empty() {
        return "<p>No tool calls.</p>\n".to_owned();
    }
    let mut out = "<div class=\"wide\"><table>\n\
                   <tr><th>step</th><th>tool</th><th>arguments</th><th>decision</th>\
                   <th>outcome</th><th>ms</th><th>result</th></tr>\n"
        .to_owned();
    for group in calls.chunk_by(|a, b| a.step == b.step) {
        out.push_str("<tbody>\n");
        for (i, call) in group.iter().enumerate() {
            let step = if i == 0 {
                format!("<th rowspan=\"{}\">{}</th>", group.len(), call.step)
            } else {
                String::new()
            };
            out.push_str(&call_row(&step, call));
        }
        out.push_str("</tbody>\n");
    }
    out.push_str("</table></div>\n");
    out
}

fn call_row(step: &str, call: &CallRecord) -> String {
    let failed = call.outcome != "ok";
    format!(
        "<tr{}>{step}<td><code>{}</code></td><td><code>{}</code></td><td>{}</td><td>{}</td>\
         <td class=\"n\">{}</td><td><pre>{}</pre></td></tr>\n",
        if failed { " class=\"bad\"" } else { "" },
        escape(&call.tool),
        excerpt(&call.arguments.to_string()),
        escape(&call.decision),
        escape(&call.outcome),
        call.duration_ms,
        excerpt(&call.result)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::report::{Change, SCHEMA};
    use crate::eval::score::Score;
    use serde_json::json;

    const SCRIPT: &str = "<script>alert(1)</script>";
    const IMG: &str = "\"><img src=x onerror=alert(2)>";

    fn run(repeat: usize, passed: bool) -> RunResult {
        RunResult {
            repeat,
            passed,
            score: Score {
                checks: vec![Check {
                    expectation: "tools".into(),
                    passed: true,
                    detail: "files.read called".into(),
                }],
                tool_ok: true,
                args_ok: Some(true),
                ..Score::default()
            },
            stop: "answered".into(),
            stop_detail: None,
            answer: Some("The first item is: renew passport".into()),
            steps: 2,
            input_tokens: 1200,
            output_tokens: 80,
            tokens_estimated: false,
            wall_ms: 2500,
            model_ms: 2000,
            tool_ms: 500,
            text_calls: 0,
            calls: vec![],
            audit_log: None,
        }
    }

    /// Two domains: `files` passes one run of two, `web` both; the failing
    /// run carries every hostile string a page or model could produce.
    fn report() -> EvalReport {
        let mut bad = run(2, false);
        bad.score.checks.push(Check {
            expectation: "answer".into(),
            passed: false,
            detail: format!("wanted \"passport\", got <none> {SCRIPT}"),
        });
        bad.answer = Some(format!("</pre>{SCRIPT}{IMG}"));
        bad.score.ungrounded = vec!["https://evil.example/x.js".into()];
        bad.calls = vec![
            CallRecord {
                step: 1,
                tool: "web.fetch".into(),
                arguments: json!({"url": "https://evil.example/a", "note": SCRIPT, "q": IMG}),
                decision: "auto".into(),
                outcome: "ok".into(),
                result: format!("<html>{SCRIPT}{IMG}</html>"),
                duration_ms: 42,
            },
            CallRecord {
                step: 1,
                tool: "files.read".into(),
                arguments: json!({"path": "notes/todo.md"}),
                decision: "auto".into(),
                outcome: "not_found".into(),
                result: "x".repeat(EXCERPT_CHARS + 10),
                duration_ms: 3,
            },
        ];
        bad.audit_log = Some("/tmp/eval out/logs/files-todo \"2\".jsonl".into());
        let cases = vec![
            CaseResult {
                id: "files-todo".into(),
                domain: "files".into(),
                task: format!("Read my list {IMG}"),
                source: "cases/files.jsonl:1".into(),
                passes: 1,
                runs: vec![run(1, true), bad],
            },
            CaseResult {
                id: "web-title".into(),
                domain: "web".into(),
                task: "Title of the page?".into(),
                source: "cases/web.jsonl:3".into(),
                passes: 2,
                runs: vec![run(1, true), run(2, true)],
            },
        ];
        let mut report = EvalReport {
            schema: SCHEMA,
            started: "2026-12-02T10:00:00Z".into(),
            model: format!("qwen {SCRIPT}"),
            repeat: 2,
            out_dir: "/tmp/eval out".into(),
            wall_ms: 65_000,
            cases,
            overall: Metrics::default(),
            by_domain: Default::default(),
            failure_kinds: Default::default(),
            gates: vec![Gate {
                name: "min_completion".into(),
                passed: false,
                detail: "wanted 90.0%, got 75.0%".into(),
            }],
            baseline: Some(Comparison {
                file: "base.json".into(),
                regressions: vec![Change {
                    id: "files-todo".into(),
                    before: "2/2".into(),
                    after: "1/2".into(),
                }],
                completion_before: 1.0,
                completion_after: 0.75,
                ..Comparison::default()
            }),
        };
        report.summarise();
        report
    }

    #[test]
    fn hostile_strings_never_become_markup() {
        let page = render(&report());
        assert!(!page.to_lowercase().contains("<script"), "a script element");
        assert!(!page.contains(IMG) && !page.contains("<img"), "the injected image");
        assert!(
            page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "the text is shown, escaped"
        );
        assert!(page.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
        // An answer with `</pre>` must not close its block early.
        assert_eq!(page.matches("<pre>").count(), page.matches("</pre>").count());
    }

    #[test]
    fn nothing_is_loaded_from_outside() {
        let page = render(&report());
        assert!(
            page.contains(&format!(
                "<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            ))
        );
        for attribute in ["src=\"", "href=\"", "src='", "href='"] {
            for (at, _) in page.match_indices(attribute) {
                let value = &page[at + attribute.len()..];
                assert!(
                    !value.starts_with("http") && !value.starts_with("//"),
                    "{}",
                    &value[..40.min(value.len())]
                );
            }
        }
        for needle in ["<link", "<img", "<iframe", "<object", "@import", "url(", "<base"] {
            assert!(!page.contains(needle), "{needle}");
        }
    }

    #[test]
    fn failures_say_why_and_link_the_audit_log() {
        let page = render(&report());
        assert!(
            page.contains("wanted &quot;passport&quot;, got &lt;none&gt;"),
            "the failed check's detail"
        );
        assert!(page.contains("<li class=\"bad\">✗ <code>answer</code>"));
        assert!(page.contains("failed: answer"));
        assert!(page.contains("href=\"file:///tmp/eval%20out/logs/files-todo%20%222%22.jsonl\""));
        assert!(page.contains("(cut: first 2000 of 2010 characters)"));
        assert!(
            page.contains("<details id=\"case-0\" open>")
                && page.contains("<details id=\"case-1\">")
        );
    }

    #[test]
    fn figures_per_domain_and_overall() {
        let page = render(&report());
        assert!(page.contains(
            "<th>files</th><td class=\"n\">1</td><td class=\"n\">2</td><td class=\"n\">50.0%</td>"
        ));
        assert!(page.contains(
            "<th>web</th><td class=\"n\">1</td><td class=\"n\">2</td><td class=\"n\">100.0%</td>"
        ));
        assert!(page.contains("<th>completion</th><td class=\"n\">75.0%</td>"));
        assert!(
            page.contains("<th>pass^2</th>")
                && page.contains("<th>boundary compliance</th><td class=\"n\">–</td>")
        );
        assert!(page.contains("completion 100.0% → 75.0%"));
        assert!(page.contains("50.0% (1/2)"), "the completion chart");
    }

    #[test]
    fn a_complete_document() {
        let page = render(&report());
        assert!(page.starts_with("<!doctype html>"));
        assert!(page.trim_end().ends_with("</html>"));
        assert_eq!(page.matches("<details").count(), page.matches("</details>").count());
    }

    #[test]
    fn escape_covers_text_and_attributes() {
        assert_eq!(escape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
        assert_eq!(escape("line\nnext\u{1b}[2J\u{202e}"), "line\nnext\\u{1b}[2J\\u{202e}");
    }

    #[test]
    fn file_hrefs_cannot_escape_the_url() {
        assert_eq!(file_href("/tmp/a b/c#d?e.jsonl"), "file:///tmp/a%20b/c%23d%3Fe.jsonl");
        assert_eq!(file_href("C:\\runs\\x.jsonl"), "file:///C:/runs/x.jsonl");
        assert_eq!(file_href("logs/x\".jsonl"), "logs/x%22.jsonl");
        // A relative path that looks like a scheme stays a path.
        assert_eq!(file_href("javascript:alert(1)"), "javascript%3Aalert%281%29");
    }

    #[test]
    fn buckets_are_round_and_cover_every_value() {
        let one_each = buckets(&[1, 3, 3], 16);
        assert_eq!(
            one_each.iter().map(|b| (b.low, b.count)).collect::<Vec<_>>(),
            [(1, 1), (2, 0), (3, 2)]
        );
        let tokens = buckets(&[900, 15_000, 48_000], 16);
        assert!(tokens.len() <= 16);
        assert_eq!((tokens[0].low, tokens[0].high), (0, 4999));
        assert_eq!(tokens.iter().map(|b| b.count).sum::<usize>(), 3);
        assert!(buckets(&[], 16).is_empty());
        assert_eq!(buckets(&[u64::MAX, 0], 16).iter().map(|b| b.count).sum::<usize>(), 2);
    }

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        let labels: Vec<String> = [950, 1500, 12_000, 3_200_000].into_iter().map(compact).collect();
        assert_eq!(labels, ["950", "1.5k", "12k", "3.2M"]);
        assert_eq!(seconds(65_000), "1m 05s");
    }
}
