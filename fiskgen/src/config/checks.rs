//! The rules that span several keys, run once the whole file has been read (so that key order
//! in the file never matters).

use super::EmbeddingsConfig;
use super::draft::{DEFAULT_TIMEOUT, Draft};
use super::reader::Reader;

/// The identity when there is neither an explicit one nor an application (fiskgen's default;
/// Fisk AI's code uses `fisk-ai`).
const DEFAULT_IDENTITY: &str = "fisk";

impl Draft {
    /// Runs every cross-key rule, filling in what depends on several keys.
    pub(super) fn check(&mut self, r: &mut Reader) {
        self.resolve_identity(r);
        self.check_global_flags(r);
        self.check_builtins(r);
        self.resolve_auth(r);
        self.resolve_embeddings(r);
        self.check_tasks(r);
    }

    /// A task that must become one after its TTL would expire at once.
    fn check_tasks(&self, r: &mut Reader) {
        let Some(tasks) = self.config.mcp.as_ref().and_then(|mcp| mcp.tasks) else {
            return;
        };
        if tasks.after >= tasks.ttl {
            let pos = self.task_after.or(self.tasks).unwrap_or_default();
            r.problem(
                "expose.agent.mcp.tasks.after",
                pos,
                format!(
                    "expose.agent.mcp.tasks.after ({}) must be shorter than tasks.ttl ({}): a \
                     call becomes a task after `after`, and a task lives at most `ttl`",
                    fiskgen_contract::duration::format(tasks.after),
                    fiskgen_contract::duration::format(tasks.ttl)
                ),
            )
            .help = Some("lower tasks.after or raise tasks.ttl".to_string());
        }
    }

    /// Explicit identity, else the application's base name, else `fisk`; then the pattern.
    fn resolve_identity(&mut self, r: &mut Reader) {
        let explicit = self.identity.take();
        self.config.identity_explicit = explicit.is_some();
        let (identity, key, pos, derived) = match (explicit, &self.config.application_path) {
            (Some((identity, pos)), _) => (identity, "identity", Some(pos), false),
            (None, Some(path)) => (
                derived_identity(path),
                "application_path",
                self.application_path,
                true,
            ),
            (None, None) => (DEFAULT_IDENTITY.to_string(), "identity", None, false),
        };
        if let Err(error) = fiskgen_contract::identity::check(&identity) {
            let problem = r.problem(key, pos.unwrap_or_default(), error.to_string());
            if derived {
                problem.help = Some(
                    "the identity defaults to the base name of application_path; set an explicit \
                     identity if the application binary name contains other characters"
                        .to_string(),
                );
            }
        }
        self.config.identity = identity;
    }

    /// `global_flags` names the application's own flags, so it needs an application.
    fn check_global_flags(&self, r: &mut Reader) {
        let Some(pos) = self.global_flags else { return };
        if !self.config.global_flags.is_empty() && self.config.application_path.is_none() {
            r.problem(
                "global_flags",
                pos,
                "global_flags is set but application_path is not: global flags are the wrapped \
                 application's own globals and have nothing to attach to without an application"
                    .to_string(),
            )
            .help = Some("remove global_flags or set application_path".to_string());
        }
    }

    /// A `builtins` allowlist only makes sense when knowledge is enabled.
    fn check_builtins(&self, r: &mut Reader) {
        let Some(pos) = self.builtins else { return };
        let Some(mcp) = &self.config.mcp else { return };
        if !mcp.builtins.is_empty() && !self.config.harness.knowledge.enabled {
            let listed = mcp.builtins.join(", ");
            r.problem(
                "expose.agent.mcp.builtins",
                pos,
                format!("expose.agent.mcp.builtins lists {listed} but knowledge is not enabled"),
            )
            .help = Some(
                "add a harness.knowledge block with 'enabled: true', or remove the knowledge tools \
                 from builtins"
                    .to_string(),
            );
        }
    }

    /// `auth`'s keys together (config/auth.rs).
    fn resolve_auth(&mut self, r: &mut Reader) {
        let Some(draft) = self.auth.take() else {
            return;
        };
        let resolved = super::auth::resolve(draft, r);
        if let (Some(mcp), Some(auth)) = (&mut self.config.mcp, resolved) {
            mcp.auth = Some(auth);
        }
    }

    /// A present `embeddings` block needs `base_url` and `model`.
    fn resolve_embeddings(&mut self, r: &mut Reader) {
        let Some(draft) = self.embeddings.take() else {
            return;
        };
        let path = "harness.knowledge.embeddings";
        if draft.base_url.is_none() {
            r.problem(path, draft.pos, format!("{path} needs base_url"))
                .help = Some(
                "the OpenAI-compatible endpoint, e.g. base_url: http://127.0.0.1:1234/v1; remove \
                 the embeddings block for the lexical tier only"
                    .to_string(),
            );
        }
        if draft.model.is_none() {
            r.problem(path, draft.pos, format!("{path} needs model"))
                .help = Some("the embedding model's name as the endpoint knows it".to_string());
        }
        let (Some(base_url), Some(model)) = (draft.base_url, draft.model) else {
            return;
        };
        self.config.harness.knowledge.embeddings = Some(EmbeddingsConfig {
            base_url,
            model,
            api_key_env: draft.api_key_env,
            timeout: draft.timeout.unwrap_or(DEFAULT_TIMEOUT),
            query_prefix: draft.query_prefix,
            document_prefix: draft.document_prefix,
        });
    }
}

/// The last element of a slash-separated path, as Go's `filepath.Base` computes it on Unix:
/// trailing slashes ignored, `/` for a path of only slashes, `.` for an empty one.
/// The identity a config without one gets from its application: the base name, without a
/// script's extension (`hang.sh` serves as `hang`: the extension names the interpreter, not
/// the tool, and a dot cannot name a Cargo package). Other dotted names are kept, and rejected
/// by the identity check with a hint to set `identity:`.
fn derived_identity(path: &str) -> String {
    const SCRIPT_EXTENSIONS: &[&str] = &["sh", "bash", "zsh", "py", "pl", "rb", "js", "exe"];
    let base = base_name(path);
    match base.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() && SCRIPT_EXTENSIONS.contains(&extension) => {
            stem.to_string()
        }
        _ => base,
    }
}

fn base_name(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return if path.is_empty() {
            ".".to_string()
        } else {
            "/".to_string()
        };
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

#[cfg(test)]
mod tests {
    use super::{base_name, derived_identity};

    #[test]
    fn base_names_follow_go() {
        assert_eq!(base_name("/usr/local/bin/nats"), "nats");
        assert_eq!(base_name("nats"), "nats");
        assert_eq!(base_name("./bin/nats/"), "nats");
        assert_eq!(base_name("/"), "/");
        assert_eq!(base_name(""), ".");
        assert_eq!(base_name("/usr/bin/my.agent"), "my.agent");
    }

    #[test]
    fn a_scripts_extension_is_left_out_of_the_derived_identity() {
        assert_eq!(derived_identity("./hang.sh"), "hang");
        assert_eq!(derived_identity("tools/build.py"), "build");
        assert_eq!(derived_identity("/usr/bin/my.agent"), "my.agent");
        assert_eq!(derived_identity(".sh"), ".sh");
    }
}
