//! A client's W3C Trace Context (`traceparent`, `tracestate` in a request's `_meta`, SEP-414)
//! handed to the command it calls as `TRACEPARENT` and `TRACESTATE`, the environment carrier
//! OpenTelemetry's SDKs read. Values are checked against the W3C format first; a malformed one
//! is dropped with a log line and never reaches the command (a `tracestate` without a valid
//! `traceparent` is dropped too, as the W3C rules say).
//!
//! A `TRACEPARENT` or `TRACESTATE` in the server's own environment belongs to whatever started
//! the server, not to any call: it is removed from every command's environment, so a call
//! without trace context runs without one, and a call with only a `traceparent` never gets a
//! stranger's `TRACESTATE` beside it.

use std::ffi::OsString;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

/// The variable the command reads its parent span from.
pub(crate) const TRACEPARENT_VAR: &str = "TRACEPARENT";
/// The variable the command reads the vendors' trace state from.
pub(crate) const TRACESTATE_VAR: &str = "TRACESTATE";

/// The most `tracestate` carries (W3C: at least 512 characters are propagated).
const MAX_TRACESTATE: usize = 512;
/// The most list members a `tracestate` holds (W3C).
const MAX_MEMBERS: usize = 32;

/// A request's valid trace context, as environment variables for its command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TraceContext {
    traceparent: Option<String>,
    tracestate: Option<String>,
}

impl TraceContext {
    /// The context of this request (either protocol era), checked; `tool` names the call in the
    /// log line of a dropped value.
    pub(crate) fn of(context: &RequestContext<RoleServer>, tool: &str) -> Self {
        Self::checked(
            context.meta.get_traceparent(),
            context.meta.get_tracestate(),
            tool,
        )
    }

    fn checked(traceparent: Option<&str>, tracestate: Option<&str>, tool: &str) -> Self {
        let traceparent = traceparent.and_then(|value| {
            valid_traceparent(value)
                .then(|| value.to_string())
                .or_else(|| {
                    tracing::warn!(
                        tool,
                        traceparent = %crate::logging::echo(value),
                        "dropped the request's _meta traceparent: not a W3C traceparent \
                         (00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>)"
                    );
                    None
                })
        });
        let tracestate = tracestate.and_then(|value| {
            if traceparent.is_none() {
                tracing::warn!(
                    tool,
                    "dropped the request's _meta tracestate: it came without a valid traceparent"
                );
                None
            } else if valid_tracestate(value) {
                Some(value.to_string())
            } else {
                tracing::warn!(
                    tool,
                    tracestate = %crate::logging::echo(value),
                    "dropped the request's _meta tracestate: not a W3C tracestate (at most 32 \
                     comma-separated key=value members, 512 characters)"
                );
                None
            }
        });
        Self {
            traceparent,
            tracestate,
        }
    }

    /// The checked `traceparent` and `tracestate`, if any.
    pub(crate) fn parts(&self) -> (Option<&str>, Option<&str>) {
        (self.traceparent.as_deref(), self.tracestate.as_deref())
    }

    /// The same context with the server's own span (`traceparent`, W3C) as the command's
    /// parent, when telemetry exports one: the command's spans then nest under the call's.
    pub(crate) fn under(self, traceparent: Option<String>) -> Self {
        match traceparent {
            Some(own) => Self {
                traceparent: Some(own),
                tracestate: self.tracestate,
            },
            None => self,
        }
    }

    /// Whether there is nothing to hand on.
    pub(crate) fn is_empty(&self) -> bool {
        self.traceparent.is_none()
    }

    /// The variables to set on the command, after (so over) the server's own environment.
    pub(crate) fn env(&self) -> impl Iterator<Item = (OsString, OsString)> + '_ {
        let pair = |name: &str, value: &Option<String>| {
            value
                .as_ref()
                .map(|value| (OsString::from(name), OsString::from(value)))
        };
        pair(TRACEPARENT_VAR, &self.traceparent)
            .into_iter()
            .chain(pair(TRACESTATE_VAR, &self.tracestate))
    }
}

/// `env` without `TRACEPARENT` and `TRACESTATE`: the server's environment as a command's base.
pub(crate) fn without_inherited(env: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    env.into_iter()
        .filter(|(name, _)| name != TRACEPARENT_VAR && name != TRACESTATE_VAR)
        .collect()
}

fn lower_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `version-traceid-parentid-flags`: lower-case hex of 2, 32, 16 and 2 digits, the version not
/// `ff`, neither id all zeros; a version after `00` may append `-...` fields.
fn valid_traceparent(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 55 || !value.is_ascii() {
        return false;
    }
    let (head, rest) = value.split_at(55);
    let parts: Vec<&str> = head.split('-').collect();
    let [version, trace_id, parent_id, flags] = parts[..] else {
        return false;
    };
    let shaped = version.len() == 2
        && trace_id.len() == 32
        && parent_id.len() == 16
        && flags.len() == 2
        && [version, trace_id, parent_id, flags]
            .into_iter()
            .all(lower_hex);
    let tail_ok = rest.is_empty() || (version != "00" && rest.starts_with('-'));
    shaped
        && tail_ok
        && version != "ff"
        && trace_id.bytes().any(|b| b != b'0')
        && parent_id.bytes().any(|b| b != b'0')
}

/// At most 32 comma-separated `key=value` members (empty members allowed), 512 characters.
fn valid_tracestate(value: &str) -> bool {
    if value.len() > MAX_TRACESTATE || !value.is_ascii() {
        return false;
    }
    let members: Vec<&str> = value
        .split(',')
        .map(|member| member.trim_matches([' ', '\t']))
        .filter(|member| !member.is_empty())
        .collect();
    members.len() <= MAX_MEMBERS && members.into_iter().all(valid_member)
}

fn valid_member(member: &str) -> bool {
    let Some((key, value)) = member.split_once('=') else {
        return false;
    };
    valid_key(key)
        && !value.is_empty()
        && value.len() <= 256
        && !value.ends_with(' ')
        && value
            .bytes()
            .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=')
}

/// `simple-key` or `tenant@system`: lower-case letters, digits, `_-*/`, starting with a letter
/// or digit (a multi-tenant key's system part starts with a letter).
fn valid_key(key: &str) -> bool {
    let part = |text: &str, max: usize| {
        !text.is_empty()
            && text.len() <= max
            && text.as_bytes()[0].is_ascii_lowercase() | text.as_bytes()[0].is_ascii_digit()
            && text.bytes().all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'_' | b'-' | b'*' | b'/')
            })
    };
    match key.split_once('@') {
        None => part(key, 256),
        Some((tenant, system)) => {
            part(tenant, 241) && part(system, 14) && system.as_bytes()[0].is_ascii_lowercase()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn w3c_traceparents_pass_and_malformed_ones_do_not() {
        assert!(valid_traceparent(PARENT));
        assert!(valid_traceparent(
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-future"
        ));
        for bad in [
            "",
            "junk",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-011",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0\n",
        ] {
            assert!(!valid_traceparent(bad), "{bad:?}");
        }
    }

    #[test]
    fn w3c_tracestates_pass_and_malformed_ones_do_not() {
        assert!(valid_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
        assert!(valid_tracestate("tenant@vendor=x, other=y"));
        assert!(!valid_tracestate("Upper=1"));
        assert!(!valid_tracestate("novalue"));
        assert!(!valid_tracestate("a=b\nc"));
        assert!(!valid_tracestate(&"k=v,".repeat(33)));
        assert!(!valid_tracestate(&format!("k={}", "v".repeat(600))));
    }

    #[test]
    fn an_inherited_trace_context_is_removed_from_the_commands_base_environment() {
        let env = without_inherited(vec![
            ("PATH".into(), "/bin".into()),
            (TRACEPARENT_VAR.into(), PARENT.into()),
            (TRACESTATE_VAR.into(), "rojo=1".into()),
        ]);
        assert_eq!(env, [("PATH".into(), "/bin".into())]);
    }

    #[test]
    fn a_tracestate_goes_only_with_a_valid_traceparent() {
        let both = TraceContext::checked(Some(PARENT), Some("rojo=1"), "t");
        let env: Vec<_> = both.env().collect();
        assert_eq!(
            env,
            [
                (TRACEPARENT_VAR.into(), PARENT.into()),
                (TRACESTATE_VAR.into(), "rojo=1".into())
            ]
        );
        let orphan = TraceContext::checked(Some("junk"), Some("rojo=1"), "t");
        assert!(orphan.is_empty() && orphan.env().next().is_none());
        let bad_state = TraceContext::checked(Some(PARENT), Some("BAD"), "t");
        assert_eq!(bad_state.env().count(), 1);
    }
}
