//! [`VectorProblem`]: what is wrong with a vector or a vector search, found before sending
//! (in [`Error::InvalidVector`](super::Error::InvalidVector)).

/// What is wrong with a vector written to a vector index, or with a search of one. Carried by
/// [`Error::InvalidVector`](super::Error::InvalidVector); nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VectorProblem {
    /// The vector does not have the index's number of elements.
    #[error("the vector has {actual} elements; the index takes {expected}")]
    Dimensions {
        /// The index's dimensions.
        expected: usize,
        /// The vector's length.
        actual: usize,
    },
    /// An element is `NaN` or infinite (or, stored, a number outside the `f32` range).
    #[error("element {position} is not a finite 32-bit float (NaN, infinite or out of range)")]
    NotFinite {
        /// Its position, from 0.
        position: usize,
    },
    /// A stored value of the index's attribute is not a list of numbers.
    #[error("the value is not a list of numbers")]
    NotAList,
    /// A value of a filter attribute of the index (written, or searched for) is not of the
    /// type the index declares.
    #[error("filter attribute `{attr}` takes values of type {expected}")]
    FilterType {
        /// The attribute.
        attr: &'static str,
        /// The declared type (`S`, `N` or `B`).
        expected: &'static str,
    },
    /// A search filters on an attribute that is not one of the index's filters, or twice on
    /// one.
    #[error("filter on `{attr}`: {reason}")]
    Filter {
        /// The attribute.
        attr: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A search of an index partitioned by the table's type attribute, for an entity that
    /// does not write that attribute.
    #[error(
        "the index is partitioned by the table's type attribute, which the entity does not write"
    )]
    NoTypeAttr,
    /// A search asked for a number of results outside what the service returns.
    #[error("a search returns 1 to {max} results; {k} were asked for")]
    TopK {
        /// The number asked for.
        k: usize,
        /// The most one search returns.
        max: usize,
    },
}
