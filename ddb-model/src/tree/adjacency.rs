//! The adjacency strategy: each node names its parent; an index on the parent finds the
//! children.

use std::fmt;

use super::node::IdHierarchy;
use crate::db::Db;
use crate::table::IndexDef;

/// The tree of one partition of an adjacency node type; made by the generated
/// `Node::tree(&db, ..partition key fields)`.
pub struct AdjacencyTree<'a, E: IdHierarchy> {
    pub(crate) db: &'a Db<E::Table>,
    pub(crate) pk: String,
}

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    /// The tree in partition `pk`.
    pub fn new(db: &'a Db<E::Table>, pk: String) -> Self {
        AdjacencyTree { db, pk }
    }
}

impl<E: IdHierarchy> fmt::Debug for AdjacencyTree<'_, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdjacencyTree").field("entity", &E::NAME).field("partition", &self.pk).finish()
    }
}

/// The nodes below a node of an adjacency tree.
pub struct AdjacencyDescendants<'a, E: IdHierarchy> {
    tree: AdjacencyTree<'a, E>,
}

/// Writes the parent-index key of an adjacency node (called by the generated
/// `Entity::index_keys`).
#[doc(hidden)]
pub fn adjacency_index_keys<E: IdHierarchy>(
    node: &E,
    sink: &mut dyn FnMut(&'static IndexDef, String, Option<String>),
) {
    let _ = (node, sink);
}
