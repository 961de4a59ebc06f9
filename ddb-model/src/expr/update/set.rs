//! DynamoDB sets in updates: [`SetField`], the fields `add_to_set` and `delete_from_set`
//! accept, and the one set value their elements become.

use aws_sdk_dynamodb::types::AttributeValue;

use crate::error::RequestProblem;
use crate::expr::{Invalid, Operand, Path, ValueArg};
use crate::item::take_variant;

/// A set field: `HashSet<T>` or `BTreeSet<T>` (or an `Option` of one) stored as a DynamoDB
/// set with `#[serde(default, with = "ddb_model::set")]`. Its elements are strings, numbers or
/// bytes.
#[diagnostic::on_unimplemented(
    message = "`add_to_set` and `delete_from_set` need a set attribute, not `{Self}`",
    label = "a `HashSet` or `BTreeSet` field stored with `#[serde(default, with = \"ddb_model::set\")]`",
    note = "use `add` for numbers, `append` for lists"
)]
pub trait SetField {
    /// The element type.
    type Element;
}

impl<T, S> SetField for std::collections::HashSet<T, S> {
    type Element = T;
}
impl<T> SetField for std::collections::BTreeSet<T> {
    type Element = T;
}
impl<S: SetField> SetField for Option<S> {
    type Element = S::Element;
}

/// The DynamoDB set of `elements` (string, number or binary set, by what the first element
/// is), without exact duplicates; refused when empty or when an element is not a string,
/// number or binary, or not of the first one's type.
pub(super) fn set_operand<T, V: ValueArg<T>>(
    path: &Path,
    elements: impl IntoIterator<Item = V>,
) -> Operand {
    let invalid =
        |problem| Operand::Invalid(Box::new(Invalid::Request { path: path.to_string(), problem }));
    let mut values = Vec::new();
    for element in elements {
        match element.to_attribute_value() {
            Ok(v) => values.push(v),
            Err(source) => {
                return Operand::Invalid(Box::new(Invalid::Serialize {
                    path: path.to_string(),
                    source,
                }));
            }
        }
    }
    let kind = |v: &AttributeValue| Some(type_name(v)).filter(|k| matches!(*k, "S" | "N" | "B"));
    let Some(first) = values.first() else { return invalid(RequestProblem::EmptySet) };
    let Some(expected) = kind(first) else {
        return invalid(RequestProblem::NotASetElement { found: type_name(first) });
    };
    if let Some(other) = values.iter().find(|v| kind(v) != Some(expected)) {
        return invalid(RequestProblem::NotASetElement { found: type_name(other) });
    }
    let set = match expected {
        "S" => AttributeValue::Ss(dedup(values, take_variant!(S))),
        "N" => AttributeValue::Ns(dedup(values, take_variant!(N))),
        _ => AttributeValue::Bs(dedup(values, take_variant!(B))),
    };
    // Numbers equal by value but written differently (`1`, `1.0`) are refused here.
    Operand::checked(path, set)
}

/// The elements `pick` accepts, first occurrences only.
fn dedup<T: PartialEq>(
    values: Vec<AttributeValue>,
    pick: impl Fn(AttributeValue) -> Option<T>,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(values.len());
    for v in values.into_iter().filter_map(pick) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The DynamoDB type name of a value, for messages.
fn type_name(v: &AttributeValue) -> &'static str {
    match v {
        AttributeValue::S(_) => "S",
        AttributeValue::N(_) => "N",
        AttributeValue::B(_) => "B",
        AttributeValue::Bool(_) => "BOOL",
        AttributeValue::Null(_) => "NULL",
        AttributeValue::L(_) => "L",
        AttributeValue::M(_) => "M",
        AttributeValue::Ss(_) => "SS",
        AttributeValue::Ns(_) => "NS",
        AttributeValue::Bs(_) => "BS",
        _ => "unknown",
    }
}
