//! Whole-pipeline tests against real fisk applications built from source.
//!
//! One test binary (fast to link); each module covers one stage:

/// The Go applications build, introspect, and print back what fisk parsed.
mod apps;
/// Every selection rule, applied to the real fixture application's introspection.
mod select;
