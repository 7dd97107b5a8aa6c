//! A real OpenAI-compatible embeddings endpoint for the hybrid-tier tests:
//! `runtime/tests/knowledge/embeddings_server.py` (all-MiniLM-L6-v2 on numpy) in a virtual
//! environment made once from the pinned `requirements.txt`.
//!
//! The venv lives in `$FISKGEN_TEST_TOOLS_DIR/knowledge-venv` (default
//! `<workspace>/target/test-tools/knowledge-venv`), made with `$FISKGEN_PYTHON` (default
//! `python3`). A stamp (sha256 of the requirements and the interpreter's version) skips the
//! install when nothing changed; an exclusive lock keeps parallel tests from installing twice.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::support::{PATIENCE, eventually};

/// The knowledge test files.
fn knowledge_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("knowledge")
}

/// Where test tools are installed.
fn tools_dir() -> PathBuf {
    match std::env::var_os("FISKGEN_TEST_TOOLS_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join("target")
            .join("test-tools"),
    }
}

/// The venv's Python, installing the requirements first when needed.
pub(crate) fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(install)
}

fn run(command: &mut Command, what: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn install() -> PathBuf {
    let base = std::env::var_os("FISKGEN_PYTHON").unwrap_or_else(|| "python3".into());
    let version = run(
        Command::new(&base).arg("--version"),
        "python3 --version (the hybrid-tier tests need Python 3.11 or newer, or set FISKGEN_PYTHON)",
    );
    let requirements = knowledge_dir().join("requirements.txt");
    let mut hash = Sha256::new();
    hash.update(fs::read(&requirements).expect("reading requirements.txt"));
    hash.update(version.trim().as_bytes());
    let stamp: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();

    let tools = tools_dir();
    fs::create_dir_all(&tools).expect("creating the test tools directory");
    let venv = tools.join("knowledge-venv");
    let python = venv.join("bin").join("python");
    let stamp_file = tools.join("knowledge-venv.stamp");
    let lock = File::create(tools.join("knowledge-venv.lock")).expect("creating the lock file");
    lock.lock().expect("locking the venv");
    let current = fs::read_to_string(&stamp_file).unwrap_or_default();
    if current.trim() != stamp || !python.exists() {
        let _ = fs::remove_file(&stamp_file);
        if venv.exists() {
            fs::remove_dir_all(&venv).expect("removing the old venv");
        }
        run(
            Command::new(&base).arg("-m").arg("venv").arg(&venv),
            "python3 -m venv",
        );
        run(
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "-r",
                ])
                .arg(&requirements),
            "pip install -r runtime/tests/knowledge/requirements.txt",
        );
        fs::write(&stamp_file, &stamp).expect("writing the stamp");
    }
    drop(lock);
    python
}

/// A running embeddings endpoint.
pub(crate) struct Embeddings {
    child: Child,
    /// `http://127.0.0.1:<port>/v1`.
    pub(crate) url: String,
    _dir: tempfile::TempDir,
}

impl Embeddings {
    /// Starts the endpoint and waits until it listens.
    pub(crate) fn start() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let port_file = dir.path().join("port");
        let child = Command::new(python())
            .arg(knowledge_dir().join("embeddings_server.py"))
            .arg(&port_file)
            .env("HF_HUB_OFFLINE", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("TRANSFORMERS_OFFLINE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting embeddings_server.py");
        let mut embeddings = Self {
            child,
            url: String::new(),
            _dir: dir,
        };
        let mut port = String::new();
        assert!(
            eventually(PATIENCE, || {
                port = fs::read_to_string(&port_file).unwrap_or_default();
                !port.is_empty() || matches!(embeddings.child.try_wait(), Ok(Some(_)))
            }),
            "the embeddings server did not start"
        );
        assert!(!port.is_empty(), "the embeddings server exited at start");
        embeddings.url = format!("http://127.0.0.1:{}/v1", port.trim());
        embeddings
    }

    /// Stops the endpoint (a later request finds nothing listening).
    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for Embeddings {
    fn drop(&mut self) {
        self.stop();
    }
}
