//! An entity's declaration as data (key templates as text, index keys, stored fields, tree),
//! written by the derive for tools that describe a model ([`tooling`](crate::tooling)).

/// What `#[derive(Entity)]` declared, as text: the model tooling reads it. Hand-written
/// [`Entity`](super::Entity) impls have [`EntityShape::UNDECLARED`].
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityShape {
    /// The partition-key template (`"USER#<id>"`); empty when undeclared.
    pub pk: &'static str,
    /// The sort-key template, if any.
    pub sk: Option<&'static str>,
    /// The entity's keys on the table's indexes.
    pub indexes: &'static [IndexShape],
    /// The stored fields, in declaration order.
    pub fields: &'static [FieldShape],
    /// The tree the entity is the node type of (`#[hierarchy]`), if any.
    pub tree: Option<TreeShape>,
}

impl EntityShape {
    /// The shape of an entity implemented by hand: nothing declared.
    pub const UNDECLARED: EntityShape =
        EntityShape { pk: "", sk: None, indexes: &[], fields: &[], tree: None };
}

/// An entity's key on one index (`#[index(..)]`).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexShape {
    /// The index name.
    pub index: &'static str,
    /// The name of the generated access path (`query = ..`), when not the index's.
    pub query: Option<&'static str>,
    /// The partition-key template.
    pub pk: &'static str,
    /// The sort-key template, if the index has a sort key.
    pub sk: Option<&'static str>,
    /// The bool field or method that keeps an item in the index (`when = ..`), if any.
    pub when: Option<&'static str>,
}

/// A stored field: its attribute and its Rust type as written.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldShape {
    /// The stored attribute name (after serde renames).
    pub attr: &'static str,
    /// The Rust type as written (`Option<String>`).
    pub rust_type: &'static str,
    /// True when a key template uses the field.
    pub in_key: bool,
}

/// The tree of a `#[hierarchy]` node type.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeShape {
    /// `path`, `closure`, `adjacency` or `nested_set`.
    pub strategy: &'static str,
    /// The index the strategy uses, if any.
    pub index: Option<&'static str>,
    /// The field holding the path (path strategy) or the parent (the others).
    pub field: &'static str,
    /// The deepest node the tree accepts.
    pub max_depth: usize,
}
