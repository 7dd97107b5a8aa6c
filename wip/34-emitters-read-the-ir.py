import sys,re,os
root=sys.argv[1]
def rd(p): return open(os.path.join(root,p)).read()
def wr(p,s): open(os.path.join(root,p),'w').write(s)
def cut(s,start,end_marker):
    a=s.index(start); b=s.index(end_marker,a)
    return s[:a]+s[b:], s[a:b]
cfg=rd('fiskgen/src/config.rs')
cfg,knowledge=cut(cfg,'/// `harness.knowledge`.\n#[derive','/// How `ai:confirm`-gated calls')
cfg,hint=cut(cfg,'/// How `ai:confirm`-gated calls','/// One question of `expose.agent.mcp.ask`')
auth=rd('fiskgen/src/config/auth.rs')
auth,authtypes=cut(auth,'/// `expose.agent.mcp.auth`.\n#[derive','/// Shown with `auth` problems')
values='''//! The values the config holds that the IR carries as they are: hints, the confirmation mode,
//! the knowledge and authentication blocks. `crate::config` reads them; the emitters, `info` and
//! `check` read them here, in the IR, and never the config.

use std::time::Duration;

'''+hint+knowledge+authtypes
wr('fiskgen/src/ir/values.rs',values.rstrip()+'\n')
cfg=cfg.replace('''pub use auth::{
    AuthConfig, HeaderAuthConfig, JWT_ALGORITHMS, JwksConfig, OAuthConfig, SecretSource,
};
''','''pub use crate::ir::{
    AuthConfig, ConfirmMode, EmbeddingsConfig, HeaderAuthConfig, Hint, JwksConfig,
    KnowledgeConfig, OAuthConfig, SecretSource,
};
pub use auth::JWT_ALGORITHMS;
''')
wr('fiskgen/src/config.rs',cfg)
auth=auth.replace('use super::yaml::Pos;\n','use super::yaml::Pos;\nuse crate::ir::{AuthConfig, HeaderAuthConfig, JwksConfig, OAuthConfig, SecretSource};\n')
wr('fiskgen/src/config/auth.rs',auth)
ir=rd('fiskgen/src/ir/mod.rs')
ir=ir.replace('use crate::config::{AuthConfig, ConfirmMode, Hint, KnowledgeConfig};\n\nmod params;\n','mod params;\nmod values;\n')
ir=ir.replace('''pub use params::{
    FlagRender, FlagStep, IntType, Param, ParamType, PositionalRender, PositionalStep,
};
''','''pub use params::{
    FlagRender, FlagStep, IntType, Param, ParamType, PositionalRender, PositionalStep,
};
pub use values::{
    AuthConfig, ConfirmMode, EmbeddingsConfig, HeaderAuthConfig, Hint, JwksConfig,
    KnowledgeConfig, OAuthConfig, SecretSource,
};
''')
wr('fiskgen/src/ir/mod.rs',ir)
for f,old,new in [
 ('fiskgen/src/emit/tools.rs','use crate::config::Hint;\n','use crate::ir::Hint;\n'),
 ('fiskgen/src/emit/files.rs','use crate::config::Hint;\n','use crate::ir::Hint;\n'),
 ('fiskgen/src/emit/files.rs','crate::config::JwksConfig::Url','crate::ir::JwksConfig::Url'),
 ('fiskgen/src/emit/listing.rs','use crate::config::Hint;\n','use crate::ir::Hint;\n'),
 ('fiskgen/src/emit/app.rs','use crate::config::ConfirmMode;\n','use crate::ir::ConfirmMode;\n'),
 ('fiskgen/src/emit/auth.rs','use crate::config::{AuthConfig, JwksConfig, SecretSource};\n','use crate::ir::{AuthConfig, JwksConfig, SecretSource};\n'),
 ('fiskgen/src/emit/builtins.rs','use crate::config::KnowledgeConfig;\n','use crate::ir::KnowledgeConfig;\n'),
]:
    s=rd(f); assert old in s,(f,old); wr(f,s.replace(old,new))
m=rd('fiskgen/src/emit/mod.rs')
for old,new in [
 ('//! The emitters: a [`Plan`] becomes','//! The emitters: the IR ([`ir::Server`]) becomes'),
 ('use crate::{Plan, embedded, format};','use crate::introspect::Introspection;\nuse crate::{embedded, format};'),
 ('''/// Generates the crate for a plan.
pub fn generate(plan: &Plan, settings: &Settings) -> Result<GeneratedCrate, GenerateError> {
    let server = &plan.server;
''','''/// Generates the crate of `server`, with the `introspection` it was served against (`None`
/// without an application): the IR and that document are all the emitters read.
pub fn generate(
    server: &ir::Server,
    introspection: Option<&Introspection>,
    settings: &Settings,
) -> Result<GeneratedCrate, GenerateError> {
'''),
 ('app::main_rs(server, plan.introspection.as_ref())','app::main_rs(server, introspection)'),
 ('if let Some(introspection) = &plan.introspection {','if let Some(introspection) = introspection {'),
]:
    assert old in m,old; m=m.replace(old,new)
wr('fiskgen/src/emit/mod.rs',m)
for f,old,new in [
 ('fiskgen/src/builder.rs','emit::generate(&plan, settings)','emit::generate(&plan.server, plan.introspection.as_ref(), settings)'),
 ('fiskgen/src/builder.rs','emit::generate(&plan, &emit::Settings::default())','emit::generate(\n        &plan.server,\n        plan.introspection.as_ref(),\n        &emit::Settings::default(),\n    )'),
 ('fiskgen/tests/hazards.rs','emit::generate(&plan, &settings)','emit::generate(&plan.server, plan.introspection.as_ref(), &settings)'),
]:
    s=rd(f); assert old in s,(f,old); wr(f,s.replace(old,new))
if os.path.exists(os.path.join(root,'tests/tests/integration/golden.rs')):
    f='tests/tests/integration/golden.rs'; s=rd(f)
    for old,new in [('Ok(emit::generate(&plan(case_name)?, &settings)?)','let plan = plan(case_name)?;\n    Ok(emit::generate(\n        &plan.server,\n        plan.introspection.as_ref(),\n        &settings,\n    )?)'),
                    ('emit::generate(&plan("demo")?, &Settings::default())?','{\n        let plan = plan("demo")?;\n        emit::generate(&plan.server, plan.introspection.as_ref(), &Settings::default())?\n    }')]:
        assert old in s,old; s=s.replace(old,new)
    wr(f,s)
f='fiskgen/tests/hazards.rs'; s=rd(f)
for old,new in [('    let mut plan: Plan = fiskgen::plan(','    let plan: Plan = fiskgen::plan('),
                ('    // Relative, so no absolute path of this checkout reaches the output.\n    plan.config.source = relative;\n','')]:
    assert old in s,old; s=s.replace(old,new)
wr(f,s)
f='tests/tests/integration/layout.rs'
if os.path.exists(os.path.join(root,f)):
    s=rd(f)
    old='''/// Planted sources: `(module, code)`.'''
    new='''/// The modules fiskgen's emitters may not name: what the config file holds reaches them
/// through the IR (`crate::ir`), resolved once, never as the config read.
const NOT_FOR_EMITTERS: [&str; 3] = ["config", "select", "settings"];

/// Each import of an emitter (`emit` and below) in `graph` that names a module of
/// [`NOT_FOR_EMITTERS`], as `module -> target`.
fn emitters_beyond_the_ir(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let within = |module: &str, top: &str| module == top || module.starts_with(&format!("{top}::"));
    graph
        .iter()
        .filter(|(module, _)| within(module, "emit"))
        .flat_map(|(module, targets)| {
            targets
                .iter()
                .filter(|target| NOT_FOR_EMITTERS.iter().any(|top| within(target, top)))
                .map(move |target| format!("{module} -> {target}"))
        })
        .collect()
}

#[test]
fn fiskgens_emitters_read_the_ir_not_the_config() -> Result<()> {
    let graph = module_graph(&module_texts(&workspace_root().join("fiskgen/src"))?);
    let beyond = emitters_beyond_the_ir(&graph);
    assert!(beyond.is_empty(), "emitters reading the config: {beyond:#?}");
    // The check finds one planted.
    let texts = planted(&[
        ("emit::app", "use crate::config::ConfirmMode;"),
        ("config", "pub enum ConfirmMode {}"),
        ("ir", ""),
    ]);
    assert_eq!(
        emitters_beyond_the_ir(&module_graph(&texts)),
        vec!["emit::app -> config".to_string()]
    );
    Ok(())
}

/// Planted sources: `(module, code)`.'''
    assert old in s; s=s.replace(old,new,1); wr(f,s)
