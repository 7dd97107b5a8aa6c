//! The page's comparison of this design with earlier ones on natscli with every command
//! (`--previous-fiskgen`), and the serving-path targets, all from the run's own figures.

use std::fmt::Write as _;

use crate::client::{ListSizes, Transport};
use crate::report::{AppReport, Builds, Report, Server, ServerReport, cell, num};
use crate::stats::Summary;

const TRANSPORTS: [Transport; 3] = [Transport::Stdio, Transport::Legacy, Transport::Modern];

/// One row: a heading and the figure of each design.
struct Row {
    what: String,
    ours: Option<Summary>,
    previous: Vec<Option<Summary>>,
}

fn fixed(value: Option<f64>) -> Option<Summary> {
    value.map(|v| Summary {
        median: v,
        min: v,
        max: v,
        n: 1,
    })
}

fn server(app: &AppReport, transport: Transport) -> Option<&ServerReport> {
    app.servers
        .iter()
        .find(|s| s.server == Server::Ours(transport))
}

fn first_build(builds: &Builds, name: &str) -> Option<f64> {
    match builds {
        Builds::Measured { first_s, .. } => first_s.iter().find(|(n, _)| n == name).map(|x| x.1),
        Builds::Skipped(_) => None,
    }
}

fn warm_build(builds: &Builds, name: &str) -> Option<Summary> {
    match builds {
        Builds::Measured { warm_s, .. } => warm_s.iter().find(|(n, _)| n == name).map(|x| x.1),
        Builds::Skipped(_) => None,
    }
}

fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The figures of one design, in row order.
fn figures(app: &AppReport, builds: &Builds) -> Vec<(String, Option<Summary>)> {
    let mut rows = vec![
        (
            "generated crate, lines of Rust under `src/`".to_string(),
            fixed(app.crate_lines.map(|l| l.rust as f64)),
        ),
        (
            "generated crate, lines of data it includes (`.json`, `.md`)".to_string(),
            fixed(app.crate_lines.map(|l| l.data as f64)),
        ),
        (
            "cold build, fresh target directory (s)".to_string(),
            fixed(first_build(builds, &app.name)),
        ),
        (
            "warm regeneration after one command changed (s)".to_string(),
            warm_build(builds, &app.name),
        ),
        (
            "stripped binary (MiB)".to_string(),
            fixed(app.stripped_bytes.map(mib)),
        ),
    ];
    // One row per transport for each of these: its heading (the transport goes after it) and
    // the figure.
    type Figure = fn(&ServerReport) -> Option<Summary>;
    let per_transport: [(&str, &str, Figure); 8] = [
        ("idle RSS", "MiB", |s| s.idle_rss_mb),
        ("peak RSS under load", "MiB", |s| s.peak_rss_mb),
        ("start → first `tools/list`, rmcp's client", "ms", |s| {
            s.start_ms
        }),
        (
            "start → end of the first `tools/list` answer, raw client",
            "ms",
            |s| s.raw_start_ms,
        ),
        (
            "server CPU per `tools/list`, raw client back to back",
            "ms",
            |s| s.raw_list_cpu_ms,
        ),
        (
            "of the server CPU per `tools/list`, raw client, user time (its own code)",
            "ms",
            |s| s.raw_list_user_ms,
        ),
        (
            "server CPU per `tools/list`, rmcp's client, c=1",
            "ms",
            |s| s.list_at(1).and_then(|l| l.server_cpu),
        ),
        (
            "first `tools/list` page on the wire, raw client",
            "KiB",
            |s| s.raw_answer_kib,
        ),
    ];
    for (what, unit, figure) in per_transport {
        for transport in TRANSPORTS {
            rows.push((
                format!("{what}, {} ({unit})", transport.label()),
                server(app, transport).and_then(figure),
            ));
        }
    }
    let sizes = app.list_sizes;
    rows.push((
        "`tools/list` answer, all pages (KiB)".to_string(),
        fixed(sizes.map(|s| kib(s.body_bytes))),
    ));
    rows.push((
        "input schemas in it (KiB)".to_string(),
        fixed(sizes.map(|s| kib(s.input_schema_bytes))),
    ));
    rows.push((
        "answer over input schemas (%)".to_string(),
        fixed(sizes.and_then(|s| share(s.body_bytes, s))),
    ));
    // What the answer holds besides the input schemas, each over them: why the 115 % target is
    // met or not.
    let parts = [
        ("output schemas", sizes.map(|s| s.output_schema_bytes)),
        (
            "names, titles and descriptions",
            sizes.map(|s| s.text_bytes),
        ),
        ("annotations", sizes.map(|s| s.annotation_bytes)),
    ];
    for (what, bytes) in parts {
        rows.push((
            format!("{what} in it over input schemas (%)"),
            fixed(sizes.zip(bytes).and_then(|(s, bytes)| share(bytes, s))),
        ));
    }
    rows
}

/// `bytes` as a percentage of the input schemas of `sizes`.
fn share(bytes: usize, sizes: ListSizes) -> Option<f64> {
    (sizes.input_schema_bytes > 0).then(|| 100.0 * bytes as f64 / sizes.input_schema_bytes as f64)
}

/// The section, or `None` when the run has no natscli figures.
pub(crate) fn section(report: &Report) -> Option<String> {
    let ours = report.apps.iter().find(|app| app.name == "nats")?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## natscli with every command: this design and earlier ones\n"
    );
    if report.previous.is_empty() {
        let _ = writeln!(
            out,
            "No earlier design was measured in this run (no `--previous-fiskgen`).\n"
        );
    } else {
        let _ = writeln!(
            out,
            "Each earlier design is natscli's server built by its own fiskgen binary \
             (`--previous-fiskgen LABEL=PATH`) from the same config, in the same run: the builds \
             interleaved with ours (each natscli in a target directory of its own, so every \
             first build is cold), the servers measured with the same client, starts and rounds \
             right after ours. Sizes of the `tools/list` answer are its `result` objects over \
             all pages and the input schemas in them, both serialized compactly from rmcp's \
             client types.\n"
        );
        for previous in &report.previous {
            let _ = writeln!(
                out,
                "- `{}`: `{}`",
                previous.label,
                previous.fiskgen.display()
            );
        }
        let _ = writeln!(out);
    }
    let mut rows: Vec<Row> = figures(ours, &report.builds)
        .into_iter()
        .map(|(what, ours)| Row {
            what,
            ours,
            previous: Vec::new(),
        })
        .collect();
    for previous in &report.previous {
        for (row, (_, figure)) in rows
            .iter_mut()
            .zip(figures(&previous.app, &previous.builds))
        {
            row.previous.push(figure);
        }
    }
    let mut header = "| Figure | this design |".to_string();
    let mut rule = "| --- | ---: |".to_string();
    for previous in &report.previous {
        let label = &previous.label;
        let _ = write!(header, " `{label}` | `{label}` / this |");
        rule.push_str(" ---: | ---: |");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    for row in &rows {
        let mut line = format!("| {} | {} |", row.what, cell(row.ours));
        for figure in &row.previous {
            let ratio = match (row.ours, figure) {
                (Some(a), Some(b)) if a.median > 0.0 => format!("{}x", num(b.median / a.median)),
                _ => "—".to_string(),
            };
            let _ = write!(line, " {} | {ratio} |", cell(*figure));
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "### Targets (this design, 2 cores)\n");
    let _ = writeln!(
        out,
        "The line target counts Rust: the schemas, help pages and fingerprints are data files the \
         code includes with `include_str!` (pretty JSON and Markdown, one line per change in a \
         diff), which the compiler reads as string literals.\n"
    );
    let _ = writeln!(out, "| Target | Measured | Met |");
    let _ = writeln!(out, "| --- | ---: | --- |");
    for (what, figure, limit) in targets(ours, &report.builds) {
        let met = match figure {
            Some(value) if value <= limit => "yes",
            Some(_) => "**no**",
            None => "not measured",
        };
        let shown = figure.map_or("—".to_string(), num);
        let _ = writeln!(out, "| {what} | {shown} | {met} |");
    }
    let _ = writeln!(out);
    out.push_str(&list_parts(ours));
    Some(out)
}

/// The parts of the answer every listing carries, from this run's figures.
fn list_parts(app: &AppReport) -> String {
    let mut out = String::new();
    if let Some(sizes) = app.list_sizes {
        let text = share(sizes.text_bytes, sizes);
        let output = share(sizes.output_schema_bytes, sizes);
        if let (Some(text), Some(output)) = (text, output) {
            let _ = writeln!(
                out,
                "The `tools/list` answer: the tools' names, titles and descriptions alone are \
                 {}% of the input schemas, so an answer that carries them is \
                 at least {}% of them; the output schemas add {}% (listed only with \
                 `output_schema: true`).\n",
                num(text),
                num(100.0 + text),
                num(output)
            );
        }
    }
    out
}

/// Issue 11's targets: what, the measured median, the limit (lower is better).
fn targets(app: &AppReport, builds: &Builds) -> Vec<(String, Option<f64>, f64)> {
    let median = |s: Option<Summary>| s.map(|s| s.median);
    let mut targets = vec![
        (
            "generated crate at most 8000 lines of Rust".to_string(),
            app.crate_lines.map(|l| l.rust as f64),
            8000.0,
        ),
        (
            "warm regeneration at most 20 s".to_string(),
            median(warm_build(builds, &app.name)),
            20.0,
        ),
        (
            "stripped binary at most 10 MiB".to_string(),
            app.stripped_bytes.map(mib),
            10.0,
        ),
    ];
    for transport in TRANSPORTS {
        let s = server(app, transport);
        targets.push((
            format!("idle RSS at most 12 MiB, {} (MiB)", transport.label()),
            median(s.and_then(|s| s.idle_rss_mb)),
            12.0,
        ));
    }
    for transport in TRANSPORTS {
        let s = server(app, transport);
        let limit = if transport == Transport::Stdio {
            6.0
        } else {
            8.0
        };
        targets.push((
            format!(
                "start → first `tools/list` at most {limit} ms (raw client), {}",
                transport.label()
            ),
            median(s.and_then(|s| s.raw_start_ms)),
            limit,
        ));
    }
    targets.push((
        "`tools/list` answer at most the input schemas plus 15% (%)".to_string(),
        app.list_sizes.and_then(|s| share(s.body_bytes, s)),
        115.0,
    ));
    targets
}
