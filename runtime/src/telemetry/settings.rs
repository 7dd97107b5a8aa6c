//! The effective telemetry settings: the config's `telemetry` block (as the spec holds it)
//! resolved against the environment the way Fisk AI resolves it (`internal/telemetry/config.go`
//! of its source of 2026-08-21), and checked before anything is exported, so a mistake fails at
//! start with its fix.

use crate::spec::app::TelemetrySpec;

/// The OTLP/HTTP endpoint when neither the config nor the environment names one.
const DEFAULT_ENDPOINT: &str = "http://localhost:4318";
/// The standard OTLP/gRPC port, which an OTLP/HTTP exporter must not be pointed at.
const GRPC_PORT: u16 = 4317;
/// The OTLP variables that carry a bearer token.
const HEADER_VARS: [&str; 4] = [
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
];
/// The transport selectors; this server speaks OTLP/HTTP only.
const PROTOCOL_VARS: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
];

/// What telemetry does in this run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolved {
    /// Nothing is exported: the config does not enable it, or `why` vetoed it.
    Off {
        /// The variable that turned it off (`NO_TELEMETRY`, `OTEL_SDK_DISABLED`), `None` when
        /// the config does not enable telemetry.
        vetoed_by: Option<&'static str>,
    },
    /// Spans are exported.
    On(Export),
}

/// Where and as what spans go.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Export {
    /// The full URL spans are posted to (`.../v1/traces`).
    pub(crate) traces_url: String,
    /// What decided it: `telemetry.endpoint`, a variable, or `default`.
    pub(crate) endpoint_origin: &'static str,
    /// The full URL metrics are posted to (`.../v1/metrics`); `None` with
    /// `telemetry.no_metrics`.
    pub(crate) metrics_url: Option<String>,
    /// `service.name` of the exported resource.
    pub(crate) service_name: String,
    /// The head sampling ratio, 0 to 1.
    pub(crate) sample_ratio: f64,
}

/// A setting that cannot work, with its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TelemetryError(pub(crate) String);

/// Resolves `spec` (`None`: the config does not enable telemetry) against `env`, one variable
/// at a time; `identity` is the service name when nothing names one.
pub(crate) fn resolve(
    spec: Option<&TelemetrySpec>,
    identity: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Resolved, TelemetryError> {
    let Some(spec) = spec else {
        return Ok(Resolved::Off { vetoed_by: None });
    };
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if set("NO_TELEMETRY").is_some_and(|value| switch_on(&value)) {
        return Ok(Resolved::Off {
            vetoed_by: Some("NO_TELEMETRY"),
        });
    }
    if set("OTEL_SDK_DISABLED").is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
        return Ok(Resolved::Off {
            vetoed_by: Some("OTEL_SDK_DISABLED"),
        });
    }
    for name in PROTOCOL_VARS {
        if let Some(value) = set(name).filter(|value| value.trim().eq_ignore_ascii_case("grpc")) {
            return Err(TelemetryError(format!(
                "{name} is {value:?} but this server speaks OTLP/HTTP only; set it to \
                 http/protobuf and use the OTLP/HTTP port (4318)"
            )));
        }
    }
    let (endpoint, origin, full) = if !spec.endpoint.is_empty() {
        (spec.endpoint.to_string(), "telemetry.endpoint", false)
    } else if let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        (url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", true)
    } else if let Some(url) = set("OTEL_EXPORTER_OTLP_ENDPOINT") {
        (url, "OTEL_EXPORTER_OTLP_ENDPOINT", false)
    } else {
        (DEFAULT_ENDPOINT.to_string(), "default", false)
    };
    let headers = HEADER_VARS.iter().any(|name| set(name).is_some());
    check_endpoint(&endpoint, origin, headers)?;
    let traces_url = if full {
        endpoint
    } else {
        format!("{}/v1/traces", endpoint.trim_end_matches('/'))
    };
    // The metric exporter's own precedence (as the OpenTelemetry SDK resolves it for Fisk AI
    // when the config names no endpoint), checked as the traces endpoint is.
    let metrics_url = if spec.no_metrics {
        None
    } else if !spec.endpoint.is_empty() {
        Some(format!(
            "{}/v1/metrics",
            spec.endpoint.trim_end_matches('/')
        ))
    } else if let Some(url) = set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
        check_endpoint(&url, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", headers)?;
        Some(url)
    } else {
        let (base, origin) = match set("OTEL_EXPORTER_OTLP_ENDPOINT") {
            Some(url) => (url, "OTEL_EXPORTER_OTLP_ENDPOINT"),
            None => (DEFAULT_ENDPOINT.to_string(), "default"),
        };
        check_endpoint(&base, origin, headers)?;
        Some(format!("{}/v1/metrics", base.trim_end_matches('/')))
    };
    let service_name = if !spec.service_name.is_empty() {
        spec.service_name.to_string()
    } else if let Some(name) = set("OTEL_SERVICE_NAME") {
        name
    } else if !identity.is_empty() {
        identity.to_string()
    } else {
        "fisk-ai".to_string()
    };
    let sample_ratio = spec.sample_ratio.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&sample_ratio) {
        return Err(TelemetryError(format!(
            "invalid telemetry.sample_ratio {sample_ratio}: must be between 0 and 1"
        )));
    }
    Ok(Resolved::On(Export {
        traces_url,
        endpoint_origin: origin,
        metrics_url,
        service_name,
        sample_ratio,
    }))
}

/// Fisk AI's own off switches: any value but one that reads as false turns it on.
fn switch_on(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "0" | "f" | "false"
    )
}

/// The endpoint checks Fisk AI makes: a URL with an http or https scheme, no user info, not the
/// OTLP/gRPC port, and no credential sent in the clear to a host off this machine.
fn check_endpoint(endpoint: &str, origin: &str, headers: bool) -> Result<(), TelemetryError> {
    let label = if origin == "default" {
        "telemetry endpoint"
    } else {
        origin
    };
    let uri: http::Uri = endpoint
        .parse()
        .map_err(|error| TelemetryError(format!("invalid {label} {endpoint:?}: {error}")))?;
    let scheme = uri.scheme_str().unwrap_or_default();
    if scheme != "http" && scheme != "https" {
        return Err(TelemetryError(format!(
            "invalid {label} {endpoint:?}: scheme must be http or https"
        )));
    }
    let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
    if authority.contains('@') {
        return Err(TelemetryError(format!(
            "invalid {label} {endpoint:?}: must not embed userinfo credentials"
        )));
    }
    if uri.port_u16() == Some(GRPC_PORT) {
        return Err(TelemetryError(format!(
            "{label} {endpoint:?} is the OTLP/gRPC port; this server speaks OTLP/HTTP, use port \
             4318"
        )));
    }
    let host = uri.host().unwrap_or_default();
    if scheme == "http" && headers && !loopback(host) {
        return Err(TelemetryError(format!(
            "{label} {endpoint:?} uses http to a non-loopback host while an OTLP headers \
             variable is set, which sends the credential in the clear; use https, or a loopback \
             address (127.0.0.1, ::1, localhost) for a local collector"
        )));
    }
    Ok(())
}

/// `localhost` or a loopback address (names are not resolved).
pub(crate) fn loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: TelemetrySpec = TelemetrySpec {
        endpoint: "",
        service_name: "",
        sample_ratio: None,
        no_metrics: false,
    };

    fn with(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn on(spec: &TelemetrySpec, vars: &[(&str, &str)]) -> Export {
        match resolve(Some(spec), "tasks", &with(vars)) {
            Ok(Resolved::On(export)) => export,
            other => panic!("not on: {other:?}"),
        }
    }

    #[test]
    fn nothing_is_exported_unless_the_config_enables_it_and_nothing_vetoes_it() {
        let endpoint = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")];
        assert_eq!(
            resolve(None, "x", &with(&endpoint)),
            Ok(Resolved::Off { vetoed_by: None })
        );
        for (name, value) in [("NO_TELEMETRY", "1"), ("OTEL_SDK_DISABLED", "true")] {
            assert_eq!(
                resolve(Some(&SPEC), "x", &with(&[(name, value)])),
                Ok(Resolved::Off {
                    vetoed_by: Some(if name == "NO_TELEMETRY" {
                        "NO_TELEMETRY"
                    } else {
                        "OTEL_SDK_DISABLED"
                    })
                })
            );
        }
        assert!(matches!(
            resolve(Some(&SPEC), "x", &with(&[("NO_TELEMETRY", "false")])),
            Ok(Resolved::On(_))
        ));
    }

    #[test]
    fn endpoint_and_service_name_follow_fisk_ais_precedence() {
        let export = on(&SPEC, &[]);
        assert_eq!(export.traces_url, "http://localhost:4318/v1/traces");
        assert_eq!(
            export.metrics_url.as_deref(),
            Some("http://localhost:4318/v1/metrics")
        );
        assert_eq!(export.service_name, "tasks");
        assert_eq!(export.sample_ratio, 1.0);
        let export = on(
            &SPEC,
            &[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
                ("OTEL_SERVICE_NAME", "svc"),
            ],
        );
        assert_eq!(export.traces_url, "http://collector:4318/v1/traces");
        assert_eq!(
            export.metrics_url.as_deref(),
            Some("http://collector:4318/v1/metrics")
        );
        assert_eq!(export.service_name, "svc");
        let export = on(
            &SPEC,
            &[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/custom"),
                ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m:4318/mine"),
            ],
        );
        assert_eq!(export.traces_url, "http://c:4318/custom");
        assert_eq!(export.metrics_url.as_deref(), Some("http://m:4318/mine"));
        let quiet = TelemetrySpec {
            no_metrics: true,
            ..SPEC
        };
        assert_eq!(on(&quiet, &[]).metrics_url, None);
        let spec = TelemetrySpec {
            endpoint: "https://otel.example",
            service_name: "named",
            sample_ratio: Some(0.25),
            no_metrics: false,
        };
        let export = on(&spec, &[("OTEL_SERVICE_NAME", "svc")]);
        assert_eq!(
            export.metrics_url.as_deref(),
            Some("https://otel.example/v1/metrics")
        );
        assert_eq!(
            (
                export.traces_url.as_str(),
                export.service_name.as_str(),
                export.sample_ratio
            ),
            ("https://otel.example/v1/traces", "named", 0.25)
        );
    }

    #[test]
    fn settings_that_cannot_work_are_refused_with_their_fix() {
        let error = |spec: &TelemetrySpec, vars: &[(&str, &str)]| {
            resolve(Some(spec), "x", &with(vars))
                .expect_err("refused")
                .0
        };
        assert!(
            error(&SPEC, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])
                .contains("set it to http/protobuf")
        );
        let grpc_port = TelemetrySpec {
            endpoint: "http://127.0.0.1:4317",
            ..SPEC
        };
        assert!(error(&grpc_port, &[]).contains("is the OTLP/gRPC port"));
        let remote = TelemetrySpec {
            endpoint: "http://collector.example:4318",
            ..SPEC
        };
        assert!(
            error(
                &remote,
                &[("OTEL_EXPORTER_OTLP_HEADERS", "authorization=x")]
            )
            .contains("sends the credential in the clear")
        );
        assert!(resolve(Some(&remote), "x", &with(&[])).is_ok());
        let scheme = TelemetrySpec {
            endpoint: "ftp://x",
            ..SPEC
        };
        assert!(error(&scheme, &[]).contains("scheme must be http or https"));
        let user = TelemetrySpec {
            endpoint: "https://u:p@x",
            ..SPEC
        };
        assert!(error(&user, &[]).contains("userinfo"));
        assert!(
            error(
                &SPEC,
                &[(
                    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                    "http://127.0.0.1:4317"
                )]
            )
            .contains("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
        );
    }
}
