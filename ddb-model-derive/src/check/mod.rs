//! The rules between the parts of the IR, each broken rule one error in the `Ctxt`, at the
//! smallest span that is wrong. Rules that need the type system or another derive's output
//! (a key field implements `KeyPart`, an index exists in the table) are left to the compiler,
//! on assertions the generated code makes at the user's spans (`expand::checks`).

mod adopt;
mod collection;
mod constants;
mod crypto;
mod edge;
mod hierarchy;
mod key_part;
mod placeholders;
mod rekey;
mod rules;
mod schema;
mod table;
mod tenant;
mod timestamps;
mod ttl;
mod unique;
mod vector;
mod version;

pub use collection::collection;
pub use edge::edge;
pub use key_part::key_part;
pub use table::table;
pub use tenant::lead as tenant_lead;

use crate::ast::Entity;
use crate::ctxt::Ctxt;

/// The attribute where a tree node keeps its revision (`ddb_model::tree::TREE_REV_ATTR`).
pub const TREE_REV_ATTR: &str = "_tree_rev";

/// The attribute where a closure node's own copy keeps its ancestors
/// (`ddb_model::tree::TREE_UP_ATTR`).
pub const TREE_UP_ATTR: &str = "_tree_up";

/// The attribute where an adjacency or nested-set node counts its children.
pub const TREE_KIDS_ATTR: &str = "_tree_kids";

/// The attributes where a nested-set node keeps its interval, its depth and the end of its
/// last child's interval (`ddb_model::tree::TREE_LFT_ATTR`, ...).
pub const TREE_NESTED_ATTRS: &[&str] = &["_tree_lft", "_tree_rgt", "_tree_depth", "_tree_next"];

pub fn entity(cx: &mut Ctxt, entity: &Entity) {
    hierarchy::keys(cx, entity);
    placeholders::check(cx, entity);
    rekey::check(cx, entity);
    version::check(cx, entity);
    timestamps::check(cx, entity);
    schema::check(cx, entity);
    unique::check(cx, entity);
    ttl::check(cx, entity);
    tenant::check(cx, entity);
    hierarchy::check(cx, entity);
    adopt::check(cx, entity);
    constants::check(cx, entity);
    vector::check(cx, entity);
    rules::check(cx, entity);
    crypto::check(cx, entity);
}
