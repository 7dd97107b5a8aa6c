//! The knowledge index file, `knowledge.db`, in the format Fisk AI writes (docs/builtins.md,
//! "The index", format 2): `documents`, `chunks`, the external-content FTS5 tables `chunks_fts`
//! (`porter unicode61`) and `chunks_fts_exact` (`unicode61`) kept in sync by triggers, the
//! vocabulary `chunks_vocab`, the `rag_meta` manifest and, for the vector tier, the sqlite-vec
//! `vec0` table `chunks_vec`. SQLite is compiled in (rusqlite's bundled build, which
//! includes FTS5) and sqlite-vec is linked and registered for every connection, so an index
//! either program built is read and updated by the other.
//!
//! The server reads through a small pool of read-only connections (`mode=ro` plus
//! `query_only`), opened when the file exists: an index built while the server runs is picked up
//! by the next call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, PoisonError};

use rusqlite::{Connection, OpenFlags};

use super::error::{Identity, StoreError};
use super::{FORMAT_VERSION, Meta};

/// The index file inside the knowledge directory.
pub(crate) const DB_FILE: &str = "knowledge.db";
/// The writers' advisory lock file inside the knowledge directory.
pub(crate) const LOCK_FILE: &str = "knowledge.lock";
/// Idle read connections kept per index.
const IDLE_CONNECTIONS: usize = 8;

/// Registers sqlite-vec with SQLite, once per process, for every connection opened afterwards.
#[allow(unsafe_code)]
pub(crate) fn register_vec() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's extension entry point, whose real C
        // signature is the `xEntryPoint` that `sqlite3_auto_extension` expects (the crate
        // declares it without parameters); this is the registration sqlite-vec documents. The
        // call only records the pointer; SQLite calls it for each new connection.
        unsafe {
            rusqlite::ffi::sqlite3_auto_extension(Some(std::mem::transmute::<
                *const (),
                unsafe extern "C" fn(
                    *mut rusqlite::ffi::sqlite3,
                    *mut *mut std::os::raw::c_char,
                    *const rusqlite::ffi::sqlite3_api_routines,
                ) -> std::os::raw::c_int,
            >(
                sqlite_vec::sqlite3_vec_init as *const (),
            )));
        }
    });
}

/// Reads the manifest.
pub(crate) fn read_meta(conn: &Connection) -> Result<Meta, StoreError> {
    let fail = StoreError::ReadManifest;
    let mut statement = conn
        .prepare("SELECT key, value FROM rag_meta")
        .map_err(fail)?;
    let rows = statement
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, Option<String>>(1)?.unwrap_or_default(),
            ))
        })
        .map_err(fail)?;
    let mut kv = HashMap::new();
    for row in rows {
        let (key, value) = row.map_err(fail)?;
        kv.insert(key, value);
    }
    let mut take = |key: &str| kv.remove(key).unwrap_or_default();
    Ok(Meta {
        format_version: take("format_version").parse().unwrap_or(0),
        model: take("model"),
        dimension: take("dimension").parse().unwrap_or(0),
        normalized: take("normalized") == "true",
        query_prefix: take("query_prefix"),
        document_prefix: take("document_prefix"),
    })
}

/// Writes the manifest (all keys, as Fisk AI does).
pub(crate) fn write_meta(conn: &Connection, meta: &Meta) -> Result<(), StoreError> {
    let pairs = [
        ("format_version", meta.format_version.to_string()),
        ("model", meta.model.clone()),
        ("dimension", meta.dimension.to_string()),
        (
            "normalized",
            if meta.normalized { "true" } else { "false" }.to_string(),
        ),
        ("query_prefix", meta.query_prefix.clone()),
        ("document_prefix", meta.document_prefix.clone()),
    ];
    for (key, value) in pairs {
        conn.execute(
            "INSERT INTO rag_meta(key, value) VALUES(?1, ?2) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
        .map_err(StoreError::WriteManifest)?;
    }
    Ok(())
}

/// Fails unless this SQLite has FTS5 (the lexical tier needs it).
pub(crate) fn verify_fts5(conn: &Connection) -> Result<(), StoreError> {
    let enabled: i64 = conn
        .query_row(
            "SELECT sqlite_compileoption_used('ENABLE_FTS5')",
            [],
            |row| row.get(0),
        )
        .map_err(StoreError::CheckFts5)?;
    if enabled == 0 {
        return Err(StoreError::NoFts5);
    }
    Ok(())
}

/// What a configured vector tier must match in the manifest.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VectorIdentity<'a> {
    /// The model.
    pub(crate) model: &'a str,
    /// The query prefix.
    pub(crate) query_prefix: &'a str,
    /// The document prefix.
    pub(crate) document_prefix: &'a str,
}

/// Refuses a too-new index, and one whose vectors were not built the way the configuration
/// asks (docs/builtins.md, "The index"); `reindex` is the command that fixes it.
pub(crate) fn validate_meta(
    meta: &Meta,
    vectors: Option<VectorIdentity<'_>>,
    reindex: &str,
) -> Result<(), StoreError> {
    if meta.format_version > FORMAT_VERSION {
        return Err(StoreError::TooNew {
            format_version: meta.format_version,
        });
    }
    if meta.format_version > 0 && meta.format_version < FORMAT_VERSION {
        return Err(StoreError::TooOld {
            why: format!(
                "its format_version is {} and this build writes {FORMAT_VERSION}",
                meta.format_version
            ),
            reindex: reindex.to_string(),
        });
    }
    let Some(wanted) = vectors else {
        return Ok(());
    };
    if meta.model.is_empty() {
        return Err(StoreError::BuiltLexical {
            model: wanted.model.to_string(),
            reindex: reindex.to_string(),
        });
    }
    if meta.model != wanted.model
        || meta.query_prefix != wanted.query_prefix
        || meta.document_prefix != wanted.document_prefix
        || !meta.normalized
    {
        return Err(StoreError::BuiltOtherwise {
            built: Box::new(meta.clone()),
            wanted: Box::new(Identity {
                model: wanted.model.to_string(),
                query_prefix: wanted.query_prefix.to_string(),
                document_prefix: wanted.document_prefix.to_string(),
            }),
            reindex: reindex.to_string(),
        });
    }
    Ok(())
}

/// The columns of `chunks` in format 2, in order.
const CHUNKS_COLUMNS: [&str; 5] = ["id", "document_id", "heading_path", "ordinal", "body"];

/// Every object of the base schema; an index without one of them predates this format.
const SCHEMA_OBJECTS: [&str; 9] = [
    "documents",
    "chunks",
    "chunks_fts",
    "chunks_fts_exact",
    "chunks_vocab",
    "rag_meta",
    "chunks_ai",
    "chunks_ad",
    "chunks_au",
];

/// Whether `conn` holds a schema object (table, virtual table or trigger) called `name`.
pub(crate) fn has_table(conn: &Connection, name: &str) -> Result<bool, rusqlite::Error> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = ?1",
        [name],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// Fisk AI's format gate: an empty database passes; an index whose `format_version`, `chunks`
/// columns or schema objects are older than this build's is refused with the command that
/// rebuilds it (`reindex`), a newer one with "upgrade".
pub(crate) fn check_format(conn: &Connection, reindex: &str) -> Result<(), StoreError> {
    let read = StoreError::ReadManifest;
    let mut statement = conn
        .prepare("SELECT name FROM pragma_table_info('chunks')")
        .map_err(read)?;
    let columns: Vec<String> = statement
        .query_map([], |row| row.get(0))
        .map_err(read)?
        .collect::<Result<_, _>>()
        .map_err(read)?;
    if columns.is_empty() {
        return Ok(());
    }
    validate_meta(&read_meta(conn)?, None, reindex)?;
    let too_old = |why: String| StoreError::TooOld {
        why,
        reindex: reindex.to_string(),
    };
    if columns != CHUNKS_COLUMNS {
        return Err(too_old(format!(
            "its chunks table has columns ({}) where this build needs ({})",
            columns.join(", "),
            CHUNKS_COLUMNS.join(", ")
        )));
    }
    let mut missing = Vec::new();
    for name in SCHEMA_OBJECTS {
        if !has_table(conn, name).map_err(read)? {
            missing.push(name);
        }
    }
    if !missing.is_empty() {
        return Err(too_old(format!(
            "its schema is missing {}",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// Read-only connections to one index file, opened on demand.
#[derive(Debug)]
pub(crate) struct Pool {
    /// The index file.
    path: PathBuf,
    /// Idle connections.
    idle: Mutex<Vec<Connection>>,
}

/// Why a read could not start.
#[derive(Debug)]
pub(crate) enum Unavailable {
    /// There is no index file (yet).
    NotBuilt,
    /// It exists but cannot be opened.
    Failed(StoreError),
}

impl Pool {
    /// A pool over `path` (which need not exist yet).
    pub(crate) fn new(path: PathBuf) -> Self {
        Self {
            path,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Whether the index file exists.
    pub(crate) fn built(&self) -> bool {
        self.path.exists()
    }

    /// Runs `read` on a connection, returning the connection to the pool afterwards.
    pub(crate) fn with<T>(&self, read: impl FnOnce(&Connection) -> T) -> Result<T, Unavailable> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => open_read_only(&self.path)?,
        };
        let result = read(&conn);
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(conn);
        }
        Ok(result)
    }
}

/// Opens the index read-only, or says why not.
fn open_read_only(path: &Path) -> Result<Connection, Unavailable> {
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(Unavailable::NotBuilt);
        }
        Err(error) => {
            return Err(Unavailable::Failed(StoreError::Unreadable {
                path: path.to_path_buf(),
                source: error,
            }));
        }
        Ok(_) => {}
    }
    register_vec();
    let failed = |source| {
        Unavailable::Failed(StoreError::Open {
            path: path.to_path_buf(),
            source,
        })
    };
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(failed)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(failed)?;
    conn.execute_batch("PRAGMA query_only = 1; PRAGMA foreign_keys = ON;")
        .map_err(failed)?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts5_and_vec0_are_available() {
        register_vec();
        let conn = Connection::open_in_memory().expect("open");
        verify_fts5(&conn).expect("FTS5");
        let version: String = conn
            .query_row("SELECT vec_version()", [], |row| row.get(0))
            .expect("sqlite-vec registered");
        assert!(version.starts_with('v'), "{version}");
    }

    #[test]
    fn meta_validation() {
        let built = Meta {
            format_version: 2,
            model: "m".into(),
            dimension: 3,
            normalized: true,
            ..Meta::default()
        };
        let old = Meta {
            format_version: 1,
            ..built.clone()
        };
        assert!(
            validate_meta(&old, None, "x-mcp knowledge index --reindex").is_err_and(|e| {
                e.to_string()
                    .contains("its format_version is 1 and this build writes 2")
                    && e.to_string()
                        .contains("rebuild it with 'x-mcp knowledge index --reindex'")
            }),
            "an index of the format before the exact-word table is refused, with the fix"
        );
        let wanted = VectorIdentity {
            model: "m",
            query_prefix: "",
            document_prefix: "",
        };
        assert!(validate_meta(&built, Some(wanted), "x").is_ok());
        assert!(validate_meta(&built, None, "x").is_ok());
        let other = VectorIdentity {
            model: "n",
            ..wanted
        };
        assert!(
            validate_meta(&built, Some(other), "x")
                .is_err_and(|e| e.to_string().contains("run 'x'"))
        );
        let lexical = Meta {
            format_version: 2,
            ..Meta::default()
        };
        assert!(
            validate_meta(&lexical, Some(wanted), "x")
                .is_err_and(|e| e.to_string().contains("lexical"))
        );
        let newer = Meta {
            format_version: 3,
            ..Meta::default()
        };
        assert!(validate_meta(&newer, None, "x").is_err_and(|e| e.to_string().contains("newer")));
    }
}
