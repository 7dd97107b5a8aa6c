//! `expose.agent.mcp.auth` as the runtime's `AuthSpec` (a `const` expression; the OAuth part
//! is a reference to a promoted constant, so it can sit in the server's static).

use proc_macro2::TokenStream;
use quote::quote;

use super::duration;
use crate::ir::{AuthConfig, JwksConfig, SecretSource};

/// `Some(rt::AuthSpec { ... })`.
pub(super) fn auth_spec(auth: &AuthConfig) -> TokenStream {
    let token = option(auth.token.as_ref().map(source));
    let header = option(auth.header.as_ref().map(|header| {
        let name = &header.name;
        let value = source(&header.value);
        quote! { rt::HeaderAuth { name: #name, value: #value } }
    }));
    let oauth = option(auth.oauth.as_ref().map(|oauth| {
        let resource = &oauth.resource;
        let servers = &oauth.authorization_servers;
        let jwks = match &oauth.jwks {
            JwksConfig::File(path) => quote! { rt::JwksSource::File(#path) },
            JwksConfig::Url(url) => quote! { rt::JwksSource::Url(#url) },
        };
        let refresh = duration(oauth.jwks_refresh);
        let algorithms = &oauth.algorithms;
        let token_types = &oauth.token_types;
        let scopes = &oauth.scopes;
        let methods = oauth.method_scopes.iter().map(|(method, scopes)| {
            quote! { (#method, &[#(#scopes),*]) }
        });
        let leeway = duration(oauth.leeway);
        quote! {
            &rt::OAuthSpec {
                resource: #resource,
                authorization_servers: &[#(#servers),*],
                jwks: #jwks,
                jwks_refresh: #refresh,
                algorithms: &[#(#algorithms),*],
                token_types: &[#(#token_types),*],
                required_scopes: &[#(#scopes),*],
                method_scopes: &[#(#methods),*],
                leeway: #leeway,
            }
        }
    }));
    quote! {
        Some(rt::AuthSpec { token: #token, header: #header, oauth: #oauth })
    }
}

fn source(source: &SecretSource) -> TokenStream {
    match source {
        SecretSource::Env(name) => quote! { rt::AuthSource::Env(#name) },
        SecretSource::File(path) => quote! { rt::AuthSource::File(#path) },
    }
}

fn option(value: Option<TokenStream>) -> TokenStream {
    match value {
        Some(value) => quote! { Some(#value) },
        None => quote! { None },
    }
}
