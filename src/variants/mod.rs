//! The Rhai host: variant scripts, their sandbox, registry and hot reload (being built).
