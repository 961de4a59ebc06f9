//! Trees: node paths (the first part of `#[hierarchy]`; the tree handle and its strategies
//! build on it).

mod path;

pub use path::{MAX_PATH_DEPTH, PATH_SEPARATOR, PathProblem, TreePath};
