//! `#[hierarchy(..)]`: the entity is the node type of a tree.

use proc_macro2::Span;
use syn::Ident;

use super::{Field, field_index};
use crate::attr::{HierarchyAttrs, Slot};
use crate::ctxt::Ctxt;

/// How a tree is stored (`#[hierarchy(strategy = ..)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Nodes addressed by their path (the default).
    Path,
    /// Nodes addressed by id, one copy per ancestor.
    Closure,
    /// Nodes addressed by id, a parent reference and an index on it.
    Adjacency,
    /// Nodes addressed by id, an interval nested in the parent's and an index on it.
    NestedSet,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Path => "path",
            Strategy::Closure => "closure",
            Strategy::Adjacency => "adjacency",
            Strategy::NestedSet => "nested_set",
        }
    }

    /// The deepest tree the strategy accepts.
    pub fn depth_limit(self) -> usize {
        match self {
            Strategy::Path => MAX_PATH_DEPTH,
            Strategy::Closure | Strategy::Adjacency | Strategy::NestedSet => MAX_NODE_DEPTH,
        }
    }
}

/// The deepest path any tree accepts (`ddb_model::MAX_PATH_DEPTH`).
pub const MAX_PATH_DEPTH: usize = 128;

/// The deepest node a closure or adjacency tree accepts (`ddb_model::tree::MAX_NODE_DEPTH`):
/// an insert or a move then fits one transaction.
pub const MAX_NODE_DEPTH: usize = 96;

pub struct Hierarchy {
    /// The `hierarchy` token, for errors about the whole declaration.
    pub span: Span,
    pub strategy: Strategy,
    /// `path = field` as written, and the field it names (path strategy).
    pub path: Slot<Ident>,
    pub path_field: Option<usize>,
    /// `parent = field` as written, and the field it names (closure and adjacency).
    pub parent: Slot<Ident>,
    pub parent_field: Option<usize>,
    /// `index = gsi1`: the index of children and depth queries.
    pub index: Slot<Ident>,
    pub max_depth: Option<syn::LitInt>,
}

impl Hierarchy {
    /// Resolves the fields `#[hierarchy]` names (a name that is no field is reported).
    pub fn from_attrs(
        cx: &mut Ctxt,
        owner: &Ident,
        fields: &[Field],
        attrs: HierarchyAttrs,
    ) -> Hierarchy {
        let strategy = match attrs.strategy.value.as_ref().map(Ident::to_string).as_deref() {
            Some("closure") => Strategy::Closure,
            Some("adjacency") => Strategy::Adjacency,
            Some("nested_set") => Strategy::NestedSet,
            _ => Strategy::Path,
        };
        // Only the field the strategy uses is looked up; the other key is an error of its own.
        let mut resolve = |slot: &Slot<Ident>, used: bool, what: &str| {
            let ident = slot.value.as_ref().filter(|_| used)?;
            field_index(cx, owner, fields, ident, what)
        };
        let path_field = resolve(&attrs.path, strategy == Strategy::Path, "the node path");
        let parent_field = resolve(&attrs.parent, strategy != Strategy::Path, "the parent");
        Hierarchy {
            span: attrs.span,
            strategy,
            path: attrs.path,
            path_field,
            parent: attrs.parent,
            parent_field,
            index: attrs.index,
            max_depth: attrs.max_depth.value,
        }
    }

    /// The deepest node the tree accepts (the strategy's limit when `max_depth` is not given
    /// or out of range, which is reported).
    pub fn max_depth(&self) -> usize {
        let limit = self.strategy.depth_limit();
        match self.max_depth.as_ref().map(syn::LitInt::base10_parse::<usize>) {
            Some(Ok(n)) if (1..=limit).contains(&n) => n,
            _ => limit,
        }
    }

    /// The index of the tree, if the strategy uses one.
    pub fn tree_index(&self) -> Option<&Ident> {
        match self.strategy {
            Strategy::Closure => None,
            _ => self.index.value.as_ref(),
        }
    }
}
