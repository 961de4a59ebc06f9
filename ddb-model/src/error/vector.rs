//! [`VectorProblem`]: what is wrong with a vector or a vector search, found before sending
//! (in [`Error::InvalidVector`](super::Error::InvalidVector)).

use std::fmt;

/// What is wrong with a vector written to a vector index, or with a search of one. Carried by
/// [`Error::InvalidVector`](super::Error::InvalidVector); nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VectorProblem {
    /// The vector does not have the index's number of elements.
    Dimensions {
        /// The index's dimensions.
        expected: usize,
        /// The vector's length.
        actual: usize,
    },
    /// An element is `NaN` or infinite (or, stored, a number outside the `f32` range).
    NotFinite {
        /// Its position, from 0.
        position: usize,
    },
    /// A stored value of the index's attribute is not a list of numbers.
    NotAList,
    /// A value of a filter attribute of the index (written, or searched for) is not of the
    /// type the index declares.
    FilterType {
        /// The attribute.
        attr: &'static str,
        /// The declared type (`S`, `N` or `B`).
        expected: &'static str,
    },
    /// A search filters on an attribute that is not one of the index's filters, or twice on
    /// one.
    Filter {
        /// The attribute.
        attr: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A search of an index partitioned by the table's type attribute, for an entity that
    /// does not write that attribute.
    NoTypeAttr,
    /// A search asked for a number of results outside what the service returns.
    TopK {
        /// The number asked for.
        k: usize,
        /// The most one search returns.
        max: usize,
    },
}

impl fmt::Display for VectorProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VectorProblem::Dimensions { expected, actual } => {
                write!(f, "the vector has {actual} elements; the index takes {expected}")
            }
            VectorProblem::NotFinite { position } => write!(
                f,
                "element {position} is not a finite 32-bit float (NaN, infinite or out of range)"
            ),
            VectorProblem::NotAList => f.write_str("the value is not a list of numbers"),
            VectorProblem::FilterType { attr, expected } => {
                write!(f, "filter attribute `{attr}` takes values of type {expected}")
            }
            VectorProblem::Filter { attr, reason } => write!(f, "filter on `{attr}`: {reason}"),
            VectorProblem::NoTypeAttr => f.write_str(
                "the index is partitioned by the table's type attribute, which the entity does not write",
            ),
            VectorProblem::TopK { k, max } => {
                write!(f, "a search returns 1 to {max} results; {k} were asked for")
            }
        }
    }
}
