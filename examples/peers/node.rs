//! Runs the Node side of the interop examples (`examples/peers/*.mjs`, with the versions that
//! `examples/peers/package.json` pins) against the endpoint the example uses.

use std::path::Path;
use std::process::Command;

/// Runs `node examples/peers/<script> <mode> <endpoint> <table>`; its error names what failed
/// and how to install the Node side when it is not installed.
pub fn run(script: &str, mode: &str, endpoint: &str, table: &str) -> Result<(), String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/peers");
    if !dir.join("node_modules").is_dir() {
        return Err(format!(
            "the Node side is not installed: run `npm ci --prefix {}` (Node.js 20 or later)",
            dir.display()
        ));
    }
    let status = Command::new("node")
        .current_dir(&dir)
        .env("NODE_NO_WARNINGS", "1")
        .args([script, mode, endpoint, table])
        .status()
        .map_err(|e| format!("node could not start: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("node {script} {mode} failed: {status}")) }
}
