//! Skills (SEP-2640) with rmcp's client, which checks the extension's declaration before it
//! sends `skills/*`: the cheats of the real conformance and fixture apps listed across pages
//! and got as skills, each `SKILL.md` read back and verified against its entry's digest and
//! size as a host must, in both protocol eras; an unknown skill is -32602 naming the served
//! ones.

use std::time::Duration;

use anyhow::{Context, Result, anyhow, ensure};
use fiskgen_tests::apps::{self, App};
use fiskgen_tests::clients;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorCode, GetSkillRequestParams, Implementation,
    ProtocolVersion, ReadResourceRequestParams, ResourceContents, SkillResources,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};

use super::clients::Server;

/// Bound of one whole client session.
const SESSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Connects rmcp's client to `url`: `initialize` (2025-11-25) or `server/discover`
/// (2026-07-28).
async fn connect(url: &str, modern: bool) -> Result<RunningService<RoleClient, ClientConfig>> {
    let config = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("fiskgen-tests", "0"),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    let transport = StreamableHttpClientTransport::from_uri(url.to_string());
    let service = if modern {
        config
            .serve_with_lifecycle(
                transport,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
    } else {
        config.serve(transport).await
    };
    service.map_err(|e| anyhow!("connecting to {url}: {e}"))
}

/// Lists every skill of the server at `url`, gets and reads each, and asks for an unknown one;
/// `expected` are the skills' names in order, `scheme` the server's URI authority.
async fn skills_of(url: &str, modern: bool, scheme: &str, expected: &[&str]) -> Result<()> {
    let era = if modern { "2026-07-28" } else { "2025-11-25" };
    let service = connect(url, modern).await?;
    let peer = service.peer().clone();
    let info = peer.peer_info().context("no server info")?;
    ensure!(
        info.capabilities.supports_skills() && info.capabilities.resources.is_some(),
        "{era}: the skills extension (with resources) is not declared: {:?}",
        info.capabilities
    );
    let skills = peer.list_all_skills().await.context("skills/list")?;
    let names: Vec<&str> = skills.iter().map(|skill| skill.name()).collect();
    ensure!(names == expected, "{era}: skills {names:?}");
    for skill in &skills {
        ensure!(
            skill.uri == format!("skill://{scheme}/{}/SKILL.md", skill.name()),
            "{era}: {}",
            skill.uri
        );
        let got = peer
            .get_skill(GetSkillRequestParams::new(skill.uri.clone()))
            .await
            .with_context(|| format!("skills/get {}", skill.uri))?;
        ensure!(
            &got.skill == skill,
            "{era}: skills/get {} differs",
            skill.uri
        );
        let SkillResources::Files(files) = &skill.resources else {
            anyhow::bail!("{era}: {} has no file manifest", skill.uri);
        };
        ensure!(
            files.len() == 1 && files[0].uri == skill.uri,
            "{era}: {files:?}"
        );
        let read = peer
            .read_resource(ReadResourceRequestParams::new(skill.uri.clone()))
            .await
            .with_context(|| format!("resources/read {}", skill.uri))?;
        let Some(ResourceContents::TextResourceContents { text, .. }) = read.contents.first()
        else {
            anyhow::bail!("{era}: {} is not text: {read:?}", skill.uri);
        };
        files[0]
            .verify(text.as_bytes())
            .with_context(|| format!("{era}: {} does not match its entry", skill.uri))?;
        let head = format!("---\nname: {}\ndescription: ", skill.name());
        ensure!(text.starts_with(&head), "{era}: {}:\n{text}", skill.uri);
    }
    let unknown = format!("skill://{scheme}/no-such-skill/SKILL.md");
    match peer
        .get_skill(GetSkillRequestParams::new(unknown.clone()))
        .await
    {
        Err(ServiceError::McpError(error)) => {
            ensure!(
                error.code == ErrorCode::INVALID_PARAMS
                    && error.message.starts_with(&format!(
                        "unknown skill: \"{unknown}\" (its skills: skill://"
                    ))
                    && error.message.ends_with("; skills/list names them all)"),
                "{era}: unknown skill: {error:?}"
            );
        }
        other => anyhow::bail!("{era}: skills/get {unknown}: {other:?}"),
    }
    let _ = service.cancel().await;
    Ok(())
}

/// `skills_of` in both eras against `server`.
fn both_eras(server: &Server, scheme: &str, expected: &[&str]) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    for modern in [false, true] {
        runtime
            .block_on(async {
                tokio::time::timeout(
                    SESSION_TIMEOUT,
                    skills_of(&server.url, modern, scheme, expected),
                )
                .await
            })
            .map_err(|_| anyhow!("the session did not end within {SESSION_TIMEOUT:?}"))??;
    }
    Ok(())
}

#[test]
fn rmcp_lists_gets_and_verifies_the_conformance_apps_cheats_as_skills_in_both_eras() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let server = Server::spawn_conformance(dir.path(), &[])?;
    // Label order; the application's own cheat (its overview) is named after it.
    both_eras(
        &server,
        "test",
        &[
            "conformance",
            "slow-compute",
            "static-text",
            "test-prompt-with-arguments",
            "test-prompt-with-embedded-resource",
            "test-simple-prompt",
            "watched-resource",
        ],
    )
}

#[test]
fn rmcp_lists_gets_and_verifies_the_fixture_apps_cheats_as_skills_in_both_eras() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let app = apps::path(App::Fixture)?;
    let server = Server::spawn_app(&clients::fixture_server()?, dir.path(), &app, &[], &[])?;
    both_eras(
        &server,
        "fixture",
        &["cluster", "fixture", "labels", "list", "opt", "unattached"],
    )
}
