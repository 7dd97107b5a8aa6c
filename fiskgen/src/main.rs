//! The `fiskgen` binary: parses the command line and runs the library.

mod cli;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;

use cli::{BuildArgs, CheckArgs, Cli, Command, GenerateArgs};
use fiskgen::{ModelSource, check, config, info, introspect};

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    // `check` keeps 1 for "drift found", so its errors exit 2 (as usage errors do).
    let error_code = if matches!(cli.command, Command::Check(_)) {
        2
    } else {
        1
    };
    match run(cli.command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(error_code)
        }
    }
}

fn run(command: Command) -> Result<ExitCode> {
    match command {
        Command::Info {
            config,
            json,
            source,
        } => {
            let plan = fiskgen::plan(&config, &source.source())?;
            let text = if json {
                info::render_json_with_access(&plan.server)?
            } else {
                let width = terminal_width();
                let mut text = info::render_text(&plan.server, width);
                text.push_str(&info::render_access(&plan.server, width));
                text.push_str(&info::render_confirmation(&plan.server, width));
                text.push_str(&info::render_questions(&plan.server, width));
                text.push_str(&info::render_tasks(&plan.server, width));
                text.push_str(&info::render_results(&plan.server, width));
                text
            };
            write_stdout(&text)?;
        }
        Command::Introspect {
            config,
            app,
            output,
        } => {
            let introspection = introspect(config.as_deref(), app)?;
            write_output(
                &output,
                &introspect::to_pretty_json(&introspection.document),
            )?;
        }
        Command::Generate(args) => generate(args)?,
        Command::Build(args) => build(args)?,
        Command::Bundle(args) => bundle(args)?,
        Command::Check(args) => return check(args),
    }
    Ok(ExitCode::SUCCESS)
}

/// `fiskgen generate`: writes the crate and says what changed.
fn generate(args: GenerateArgs) -> Result<()> {
    // Cargo reads a patch path relative to the manifest, so the path is made absolute.
    let runtime_path = match args.runtime_path {
        Some(path) => Some(
            std::path::absolute(&path).with_context(|| format!("resolving {}", path.display()))?,
        ),
        None => None,
    };
    let settings = fiskgen::emit::Settings {
        workspace_member: false,
        runtime_path: runtime_path.map(|path| path.display().to_string()),
    };
    let done =
        fiskgen::builder::generate(&args.config, &args.source.source(), &args.output, &settings)?;
    for warning in &done.generated.warnings {
        eprintln!("warning: {warning}");
    }
    let report = &done.report;
    eprintln!(
        "{}: {} file(s) written, {} unchanged, {} removed",
        args.output.display(),
        report.written.len(),
        report.unchanged,
        report.removed.len()
    );
    Ok(())
}

/// `fiskgen bundle`: builds, then writes `<binary>.mcpb`.
fn bundle(args: BuildArgs) -> Result<()> {
    let options = build_options(args);
    let built = fiskgen::builder::build(&options)?;
    for warning in &built.warnings {
        eprintln!("warning: {warning}");
    }
    let platform = options.platform.clone().resolve()?;
    let manifest = fiskgen::bundle::manifest(&built.plan, &built.package, &platform);
    let path = fiskgen::bundle::default_path(&built.binary);
    fiskgen::bundle::write(&path, &manifest, &built.binary)
        .with_context(|| format!("writing the bundle {}", path.display()))?;
    println!(
        "Built {} and its bundle {} ({} tools, for {}).\n\nInstall it in Claude Desktop (Settings, \
         Extensions, or open the file); it asks for the application's path.",
        built.binary.display(),
        path.display(),
        built.plan.server.tools.len(),
        fiskgen::bundle::os_name(&platform),
    );
    Ok(())
}

fn build_options(args: BuildArgs) -> fiskgen::builder::BuildOptions {
    fiskgen::builder::BuildOptions {
        config: args.config,
        source: args.source.source(),
        output: args.output,
        target_dir: args.target_dir,
        crate_dir: args.crate_dir,
        runtime_path: args.runtime_path,
        cache_dir: None,
        allow_empty: args.allow_empty,
        platform: fiskgen::portable::Platform {
            target: args.target,
            glibc: args.glibc,
        },
    }
}

/// `fiskgen build`: generates, compiles and says how to run and connect the binary.
fn build(args: BuildArgs) -> Result<()> {
    let options = build_options(args);
    let built = fiskgen::builder::build(&options)?;
    for warning in &built.warnings {
        eprintln!("warning: {warning}");
    }
    let server = &built.plan.server;
    let port = server.settings.port;
    let shown = if built.binary.is_relative() && built.binary.components().count() == 1 {
        format!("./{}", built.binary.display())
    } else {
        built.binary.display().to_string()
    };
    let tools = server.tools.len();
    println!(
        "Built {shown} ({tools} tool{}).\n\n\
         Start it:\n  {shown} --port {port}    # streamable HTTP on http://127.0.0.1:{port}/mcp\n  \
         {shown} --stdio",
        if tools == 1 { "" } else { "s" },
    );
    // The binary prints the client entries itself, so these are exactly the banner's; they
    // start it in the config file's directory, where the application was introspected.
    match client_entries(&built.binary, &built.plan.config.working_dir()) {
        Ok(entries) => print!("{entries}"),
        Err(error) => eprintln!("warning: could not ask {shown} for its client entries: {error}"),
    }
    println!(
        "\n`{shown} config --client NAME` prints one entry again. The generated crate (with a \
         README listing the tools) is in {}.",
        built.crate_dir.display(),
    );
    Ok(())
}

/// `<binary> --working-dir DIR config`: every client's entry, bounded in time.
fn client_entries(binary: &Path, working_dir: &Path) -> Result<String> {
    let program = if binary.is_relative() && binary.components().count() == 1 {
        Path::new(".").join(binary)
    } else {
        binary.to_path_buf()
    };
    let mut child = std::process::Command::new(&program)
        .arg("--working-dir")
        .arg(working_dir)
        .arg("config")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", program.display()))?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            anyhow::bail!("it did not answer within 10 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let output = child.wait_with_output()?;
    anyhow::ensure!(output.status.success(), "it exited with {}", output.status);
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `fiskgen introspect`: the config's application, or `--app` (scrubbing the config's
/// credential variables when a config is given too).
fn introspect(config: Option<&Path>, app: Option<PathBuf>) -> Result<introspect::Introspection> {
    let config = config.map(config::load).transpose()?;
    let source = match app {
        Some(app) => ModelSource::App(app),
        None => ModelSource::Configured,
    };
    match &config {
        Some(config) => fiskgen::introspect_for(config, &source)?
            .context("the config sets no application_path; pass --app PATH"),
        None => match source {
            ModelSource::App(app) => Ok(introspect::run(&app, &introspect::Options::default())?),
            _ => anyhow::bail!("give a config file or --app PATH"),
        },
    }
}

/// `fiskgen check`: the current application against each saved baseline.
fn check(args: CheckArgs) -> Result<ExitCode> {
    let config = config::load(&args.config)?;
    let source = match (args.app, args.current) {
        (Some(app), _) => ModelSource::App(app),
        (None, Some(file)) => ModelSource::File(file),
        (None, None) => ModelSource::Configured,
    };
    let current = fiskgen::introspect_for(&config, &source)?.with_context(|| {
        format!(
            "{} sets no application_path: there is nothing to check",
            args.config.display()
        )
    })?;
    // A current application the config cannot serve (an allowlisted global flag removed) is
    // drift, as `<binary> verify` says, not an error.
    let current_server = fiskgen::select_for(&config, Some(&current));

    let mut baselines: Vec<PathBuf> = args.model.into_iter().collect();
    baselines.extend(args.generated.map(|dir| dir.join("model.json")));
    if baselines.is_empty() {
        baselines.push(config.base_dir().join("model.json"));
    }

    let mut drifted = false;
    let mut report = String::new();
    for baseline in &baselines {
        if !baseline.exists() {
            anyhow::bail!(
                "there is no saved model at {baseline}: save the application's current one with \
                 `fiskgen introspect {config} -o {baseline}` (and commit it beside the config), \
                 or name one with --model FILE or --generated DIR",
                baseline = baseline.display(),
                config = args.config.display()
            );
        }
        let saved = introspect::read(baseline)?;
        let saved_server = fiskgen::select_for(&config, Some(&saved))?;
        // The verdict `<binary> verify` gives for the same two documents.
        let outcome = match &current_server {
            Ok(current_server) => check::check((&saved, &saved_server), (&current, current_server)),
            Err(problems) => {
                drifted = true;
                report.push_str(&format!(
                    "{}: the current application cannot be served with {}:\n{problems}\n",
                    baseline.display(),
                    args.config.display()
                ));
                check::check_unservable((&saved, &saved_server), &current)
            }
        };
        let name = baseline.display();
        if outcome.verdict.is_drift() {
            drifted = true;
            report.push_str(&format!(
                "{name}: the served tools changed:\n{}",
                outcome.render()
            ));
        } else if !outcome.verdict.is_empty() || saved.document != current.document {
            report.push_str(&format!(
                "{name}: the application changed, but nothing the server serves did\n{}",
                outcome.render()
            ));
        } else {
            report.push_str(&format!("{name}: up to date\n"));
        }
    }
    if drifted {
        report.push_str(&format!(
            "\nRegenerate: fiskgen introspect {config} -o <model.json> && fiskgen build {config}\n",
            config = args.config.display()
        ));
    }
    write_stdout(&report)?;
    Ok(if drifted {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `COLUMNS` when the shell exports it, else 80.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|width| *width >= 40)
        .unwrap_or(info::DEFAULT_WIDTH)
}

fn write_output(path: &Path, text: &str) -> Result<()> {
    if path == Path::new("-") {
        return write_stdout(text);
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

fn write_stdout(text: &str) -> Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A closed pipe (`fiskgen info | head`) is not an error worth reporting.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "fiskgen=warn",
        1 => "fiskgen=debug",
        _ => "fiskgen=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("FISKGEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .init();
}
