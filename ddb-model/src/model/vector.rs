//! Vector fields: the Rust types a vector index's attribute is stored from
//! ([`VectorField`]), and the checks of a vector before it is written or searched for.

use aws_sdk_dynamodb::types::AttributeValue;

use super::table::{KeyAttr, Table, VectorIndexDef};
use crate::error::{Error, VectorProblem};

/// A field type that holds the vector of a vector index: `Vec<f32>`, or `Option<Vec<f32>>`
/// (`None` leaves the item out of the index).
///
/// Stored as a list of numbers, which is the service's vector format; each element is read
/// back as the `f32` it was written from.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a vector",
    label = "a `#[vector]` field is a `Vec<f32>` or an `Option<Vec<f32>>`",
    note = "a vector index stores lists of 32-bit floats: declare the field as `Vec<f32>` (or `Option<Vec<f32>>` for items outside the index)"
)]
pub trait VectorField {}

impl VectorField for Vec<f32> {}
impl VectorField for Option<Vec<f32>> {}

/// Checks `vector` against `index`: `dims` elements, every one finite.
pub(crate) fn check_vector(vector: &[f32], index: &VectorIndexDef) -> Result<(), VectorProblem> {
    let expected = index.dims as usize;
    if vector.len() != expected {
        return Err(VectorProblem::Dimensions { expected, actual: vector.len() });
    }
    match vector.iter().position(|v| !v.is_finite()) {
        Some(position) => Err(VectorProblem::NotFinite { position }),
        None => Ok(()),
    }
}

/// Checks a stored value of `index`'s attribute: a list of `dims` numbers, each a finite
/// 32-bit float (a number outside the `f32` range, which DynamoDB refuses, is `NotFinite`).
pub(crate) fn check_vector_value(
    value: &AttributeValue,
    index: &VectorIndexDef,
) -> Result<(), VectorProblem> {
    let AttributeValue::L(list) = value else {
        return Err(VectorProblem::NotAList);
    };
    let expected = index.dims as usize;
    if list.len() != expected {
        return Err(VectorProblem::Dimensions { expected, actual: list.len() });
    }
    for (position, element) in list.iter().enumerate() {
        let AttributeValue::N(n) = element else {
            return Err(VectorProblem::NotAList);
        };
        if !n.parse::<f32>().is_ok_and(f32::is_finite) {
            return Err(VectorProblem::NotFinite { position });
        }
    }
    Ok(())
}

/// Checks the values `item` holds for the attributes and filters of `T`'s vector indexes (a
/// `NULL` removed first: the item is then not in the index).
pub(crate) fn check_vector_values<T: Table>(
    entity: &'static str,
    item: &mut crate::item::Item,
) -> Result<(), Error> {
    for index in T::VECTOR_INDEXES {
        let invalid = |problem| Error::InvalidVector { entity, index: index.name, problem };
        if let Some(value) = non_null(item, index.attr) {
            check_vector_value(value, index).map_err(invalid)?;
        }
        for filter in index.filters {
            if let Some(value) = non_null(item, filter.name) {
                check_filter_value(value, filter).map_err(invalid)?;
            }
        }
    }
    Ok(())
}

/// The value of `attr` in `item`, a `NULL` (an `Option` field set to `None`) removed first.
pub(super) fn non_null<'i>(
    item: &'i mut crate::item::Item,
    attr: &str,
) -> Option<&'i AttributeValue> {
    if matches!(item.get(attr), Some(AttributeValue::Null(_))) {
        item.remove(attr);
    }
    item.get(attr)
}

/// Checks a value of filter attribute `filter`: the service refuses a write, or a search,
/// whose value is of another type than the index declares.
pub(crate) fn check_filter_value(
    value: &AttributeValue,
    filter: &KeyAttr,
) -> Result<(), VectorProblem> {
    if filter.kind.holds(value) {
        Ok(())
    } else {
        Err(VectorProblem::FilterType { attr: filter.name, expected: filter.kind.as_str() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Metric;

    const INDEX: VectorIndexDef = VectorIndexDef {
        name: "vix",
        attr: "v",
        dims: 3,
        metric: Metric::Cosine,
        by_type: true,
        filters: &[],
    };

    fn list(values: &[&str]) -> AttributeValue {
        AttributeValue::L(values.iter().map(|v| AttributeValue::N((*v).to_owned())).collect())
    }

    #[test]
    fn vectors() {
        let not_finite = |position| Err(VectorProblem::NotFinite { position });
        let dims = VectorProblem::Dimensions { expected: 3, actual: 2 };
        assert_eq!(check_vector(&[1.0, 0.0, -2.5], &INDEX), Ok(()));
        assert_eq!(check_vector(&[1.0, 0.0], &INDEX), Err(dims));
        assert_eq!(check_vector(&[1.0, f32::NAN, 0.0], &INDEX), not_finite(1));
        assert_eq!(check_vector(&[1.0, 0.0, f32::NEG_INFINITY], &INDEX), not_finite(2));
    }

    #[test]
    fn stored_values() {
        let check = |v: &AttributeValue| check_vector_value(v, &INDEX);
        assert_eq!(check(&list(&["1", "0.5", "-3e-7"])), Ok(()));
        let not_finite = VectorProblem::NotFinite { position: 1 };
        assert_eq!(check(&list(&["1", "1e39", "0"])), Err(not_finite));
        let dims = VectorProblem::Dimensions { expected: 3, actual: 1 };
        assert_eq!(check(&list(&["1"])), Err(dims));
        assert_eq!(check(&AttributeValue::S("x".into())), Err(VectorProblem::NotAList));
        let mixed = AttributeValue::L(vec![
            AttributeValue::N("1".into()),
            AttributeValue::S("2".into()),
            AttributeValue::N("3".into()),
        ]);
        assert_eq!(check(&mixed), Err(VectorProblem::NotAList));
    }
}
