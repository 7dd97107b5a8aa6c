//! Replicas behind a real load balancer: nginx (Debian's package; `.ci/run` installs it) on
//! loopback in front of two stateless replicas of the generated demo server that share one
//! sealing key and one record of used approvals (a JetStream KV bucket on a real `nats-server`),
//! as docs/deploy.md sets them up. nginx alternates the replicas request by request, so:
//!
//! - the Python SDK in 2026-07-28 mode lists, calls, and completes a confirmation whose two
//!   requests land on different replicas;
//! - a replayed approval is refused, whichever replica gets it;
//! - a legacy client (which declared elicitation) gets the documented answer: its gated call is
//!   refused with the authoritative text, never run ungated.

use std::ffi::OsStr;
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use super::clients::{Server, python, strings};
use super::replicas::{approval_record, replica};

/// The sealing key the replicas share.
const KEY: &str = "nginx-test-key-0123456789abcdef0123";
/// How long nginx may take to listen.
const NGINX_START: Duration = Duration::from_secs(10);

/// nginx in the foreground (one process, no daemon), killed on drop.
pub(super) struct Nginx {
    child: Child,
    pub(super) url: String,
    dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    /// What nginx logged (errors and the access log with the upstream of each request).
    pub(super) fn logs(&self) -> String {
        let read =
            |name: &str| std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
        format!("{}{}", read("error.log"), read("access.log"))
    }
}

/// The nginx binary: on PATH, or where Debian puts it.
fn nginx_binary() -> Result<PathBuf> {
    let candidates = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|dir| dir.join("nginx"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    candidates
        .into_iter()
        .chain([PathBuf::from("/usr/sbin/nginx")])
        .find(|path| path.is_file())
        .context(
            "nginx is not installed: `apt-get install nginx` (Debian's package; .ci/run installs \
             it)",
        )
}

/// The port of an `http://127.0.0.1:PORT/mcp` URL.
fn port_of(url: &str) -> Result<u16> {
    url.trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .with_context(|| format!("no port in {url}"))
}

/// Starts nginx on a free loopback port, balancing `replicas` round robin as docs/deploy.md
/// configures it (TLS left out), without passing a failed request on to the next replica.
pub(super) fn start_nginx(replicas: &[&Server]) -> Result<Nginx> {
    start_nginx_with(replicas, "off")
}

/// [`start_nginx`] with `proxy_next_upstream` set to `next_upstream` (`error`: a replica that
/// refuses the connection is skipped; nginx never resends a POST it already sent).
pub(super) fn start_nginx_with(replicas: &[&Server], next_upstream: &str) -> Result<Nginx> {
    let binary = nginx_binary()?;
    let dir = tempfile::tempdir().context("creating nginx's directory")?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let d = dir.path().display();
    let mut upstreams = String::new();
    for replica in replicas {
        upstreams.push_str(&format!(
            "        server 127.0.0.1:{};\n",
            port_of(&replica.url)?
        ));
    }
    let config = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\nevents {{ worker_connections 64; }}\n\
         http {{\n    log_format upstream '$request_method $uri $status upstream=$upstream_addr';\n\
             access_log {d}/access.log upstream;\n\
             client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\n    uwsgi_temp_path {d}/uwsgi;\n\
             scgi_temp_path {d}/scgi;\n\
             upstream mcp {{\n{upstreams}        keepalive 4;\n    }}\n\
             server {{\n        listen 127.0.0.1:{port};\n        location /mcp {{\n\
                     proxy_pass http://mcp;\n            proxy_http_version 1.1;\n\
                     proxy_set_header Connection \"\";\n            proxy_set_header Host $host;\n\
                     proxy_buffering off;\n            proxy_cache off;\n\
                     proxy_read_timeout 300s;\n            client_max_body_size 1m;\n\
                     proxy_next_upstream {next_upstream};\n        }}\n    }}\n}}\n"
    );
    let conf = dir.path().join("nginx.conf");
    std::fs::write(&conf, config).context("writing nginx.conf")?;
    let child = Command::new(&binary)
        // The error log from the start (not the compiled-in path, which may not be writable).
        .arg("-e")
        .arg(dir.path().join("error.log"))
        .arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(&conf)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let nginx = Nginx {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        dir,
    };
    let deadline = Instant::now() + NGINX_START;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            bail!(
                "nginx did not listen within {NGINX_START:?}:\n{}",
                nginx.logs()
            );
        }
        thread::sleep(Duration::from_millis(50));
    }
    Ok(nginx)
}

#[test]
fn two_stateless_replicas_behind_nginx_keep_every_confirmation() -> Result<()> {
    let (_nats_server, record) = approval_record()?;
    let dir = tempfile::tempdir().context("creating the replicas' directory")?;
    let store = dir.path().join("tasks.json");
    let env: [(&str, &OsStr); 3] = [
        ("TASKS_STORE", store.as_os_str()),
        ("FISKGEN_MCP_STATE_KEY", OsStr::new(KEY)),
        ("FISKGEN_MCP_APPROVAL_STORE", OsStr::new(&record)),
    ];
    let replicas = [replica(dir.path(), &env)?, replica(dir.path(), &env)?];
    let nginx = start_nginx(&[&replicas[0], &replicas[1]])?;

    // The Python SDK, 2026-07-28: list, call, and an approved confirmation.
    let scratch = tempfile::tempdir()?;
    let sdk_store = scratch.path().join("tasks.json").display().to_string();
    let run = python(
        "confirm.py",
        &strings(&[
            "--url",
            &nginx.url,
            "--mode",
            "2026-07-28",
            "--store",
            &sdk_store,
            "--answer",
            "approve",
            "--expect",
            "ran",
            "--asked",
            "yes",
        ]),
    )
    .with_context(|| nginx.logs())?;
    run.has("protocol: 2026-07-28")?
        .has("-> exit 0: Deleted task #1")?;
    let delete = format!("task delete --store={sdk_store} --force -- 1");
    let asked: Vec<bool> = replicas
        .iter()
        .map(|r| {
            r.log()
                .lines()
                .any(|l| l.contains(&delete) && l.contains("confirmation asked"))
        })
        .collect();
    let ran: Vec<bool> = replicas
        .iter()
        .map(|r| r.log().contains(&format!("Ran {delete}")))
        .collect();
    ensure!(
        asked.iter().filter(|a| **a).count() == 1
            && ran.iter().filter(|r| **r).count() == 1
            && asked != ran,
        "the confirmation's two requests did not land on different replicas (asked {asked:?}, \
         ran {ran:?}):\n{}",
        nginx.logs()
    );

    // A replayed approval is refused, on whichever replica nginx sends it to.
    let replay_store = dir.path().join("replay.json").display().to_string();
    let run = python(
        "replicas.py",
        &strings(&[
            "--url",
            &nginx.url,
            "--other",
            &nginx.url,
            "--store",
            &replay_store,
        ]),
    )?;
    run.has("replayed on the first replica: refused: ")?
        .has("replayed on the other replica: refused: ")?;

    // A legacy client that declared elicitation: refused with the authoritative text, never
    // run ungated, although its initialize and its call land on different replicas.
    let legacy_store = scratch.path().join("legacy.json").display().to_string();
    let run = python(
        "confirm.py",
        &strings(&[
            "--url",
            &nginx.url,
            "--mode",
            "legacy",
            "--store",
            &legacy_store,
            "--answer",
            "approve",
            "--expect",
            "stranded",
            "--asked",
            "no",
        ]),
    )?;
    run.has("but this server is stateless")?;
    let upstreams = nginx.logs();
    for replica in &replicas {
        let port = port_of(&replica.url)?;
        ensure!(
            upstreams.contains(&format!("upstream=127.0.0.1:{port}")),
            "nginx sent nothing to replica {port}:\n{upstreams}"
        );
    }
    Ok(())
}

/// The nginx configuration docs/deploy.md gives (TLS termination included) is one Debian's
/// nginx accepts: `nginx -t` on it, with a throw-away certificate and loopback ports.
#[test]
fn the_documented_nginx_configuration_is_valid() -> Result<()> {
    let binary = nginx_binary()?;
    let docs =
        std::fs::read_to_string(fiskgen_tests::apps::workspace_root().join("docs/deploy.md"))
            .context("reading docs/deploy.md")?;
    let block = docs
        .split_once("```nginx\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .map(|(block, _)| block)
        .context("docs/deploy.md has no ```nginx block")?;
    let dir = tempfile::tempdir()?;
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
        ])
        .arg("/CN=mcp.example.com")
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running openssl to make a test certificate")?;
    ensure!(made.success(), "openssl could not make a test certificate");
    let block = block
        .replace(
            "/etc/letsencrypt/live/mcp.example.com/fullchain.pem",
            &cert.display().to_string(),
        )
        .replace(
            "/etc/letsencrypt/live/mcp.example.com/privkey.pem",
            &key.display().to_string(),
        )
        .replace("listen 443", "listen 127.0.0.1:18443")
        .replace("listen 80", "listen 127.0.0.1:18080");
    let d = dir.path().display();
    let config = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{}}\nhttp {{\naccess_log off;\nclient_body_temp_path {d}/body;\n\
         proxy_temp_path {d}/proxy;\nfastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\n\
         scgi_temp_path {d}/scgi;\n{block}}}\n"
    );
    let conf = dir.path().join("nginx.conf");
    std::fs::write(&conf, config)?;
    let output = Command::new(&binary)
        .arg("-t")
        .arg("-e")
        .arg(dir.path().join("error.log"))
        .arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(&conf)
        .output()
        .with_context(|| format!("running {} -t", binary.display()))?;
    ensure!(
        output.status.success(),
        "nginx -t refused the documented configuration:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}
