//! Edge keys from their templates, the items of the other direction (inverse items, mirrored
//! symmetric items), and reading incoming edges back.

use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;

use super::{Edge, InverseSpec, Templates, node_text};
use crate::error::Error;
use crate::item::{Item, MAX_ITEM_BYTES, item_size};
use crate::key::{
    Key, KeyTemplate, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value, part,
};
use crate::model::{
    Stamp, Table, find_index, from_item, key_display, strip_bookkeeping, to_item_at,
};
use crate::ops::{Decode, KeyStart};

/// Renders a template with the endpoints' key texts (escaped on the way in): part 0 is
/// `from`, part 1 is `to`.
pub(crate) fn render(template: &KeyTemplate, from: &str, to: &str) -> String {
    template.render(&[from, to])
}

/// The escaped key text of a node: the order in which a partition sorts its edges.
pub(crate) fn escaped(text: &str) -> String {
    const NODE: KeyTemplate = KeyTemplate::new("<node>", &[part(0)]);
    NODE.render(&[text])
}

/// The key of the forward item of the edge `from -> to`.
pub(crate) fn forward_key<E: Edge>(from: &str, to: &str) -> Key<E> {
    let t = E::SPEC.forward;
    Key::from_parts(render(&t.pk, from, to), Some(render(&t.sk, from, to)))
}

/// The key of the item that stores the other direction of `from -> to` in the table: the
/// inverse item, or the mirrored item of a symmetric edge; `None` for an index.
pub(crate) fn other_key<E: Edge>(from: &str, to: &str) -> Option<(String, String)> {
    let t: Templates = match E::SPEC.inverse {
        InverseSpec::Items { key, .. } => key,
        InverseSpec::Symmetric => {
            let f = E::SPEC.forward;
            return Some((render(&f.pk, to, from), render(&f.sk, to, from)));
        }
        InverseSpec::Index { .. } | InverseSpec::None => return None,
    };
    Some((render(&t.pk, from, to), render(&t.sk, from, to)))
}

/// The query start of the edges of `from`: its forward partition, sort keys after the
/// literal before `<to>`.
pub(crate) fn out_start<E: Edge>(from: &str) -> KeyStart {
    let t = E::SPEC.forward;
    KeyStart::new(None, render(&t.pk, from, ""), &t.sk.base())
}

/// The name an incoming read of a one-directional edge reports as missing.
const NO_INVERSE: &str = "(inverse = none: the edge is one-directional)";

/// The query start of the edges that end at `to`.
pub(crate) fn in_start<E: Edge>(to: &str) -> KeyStart {
    match E::SPEC.inverse {
        InverseSpec::Items { key, .. } => {
            KeyStart::new(None, render(&key.pk, "", to), &key.sk.base())
        }
        InverseSpec::Index { name, key } => KeyStart::on_index(
            find_index::<E::Table>(name),
            name,
            render(&key.pk, "", to),
            &key.sk.base(),
        ),
        InverseSpec::Symmetric => out_start::<E>(to),
        // Not reachable through the public API (`Incoming` bounds every backward read): a
        // query that fails before it is sent, never one of another partition.
        InverseSpec::None => {
            KeyStart::on_index(None, NO_INVERSE, render(&E::SPEC.forward.pk, "", to), "")
        }
    }
}

/// The edge with its endpoints exchanged (symmetric edges: the mirrored item's value).
pub(crate) fn swapped<E: Edge>(edge: &E) -> Result<E, Error> {
    let mut item: Item = crate::model::entity_fields(edge)?;
    let (from_attr, to_attr) = (E::SPEC.attrs.0, E::SPEC.attrs.1);
    let from = item.remove(from_attr);
    let to = item.remove(to_attr);
    if let Some(v) = to {
        item.insert(from_attr.to_owned(), v);
    }
    if let Some(v) = from {
        item.insert(to_attr.to_owned(), v);
    }
    let key = key_display(None, None);
    serde_dynamo::from_item(item).map_err(|source| Error::Deserialize {
        entity: E::NAME,
        key,
        source,
    })
}

/// The item stored in the other direction of `edge` in the table: its inverse item (the
/// endpoint fields and the copied fields, under the inverse keys and entity type), or the
/// mirrored item of a symmetric edge. `None` for an index, and for a symmetric self-loop,
/// whose mirror is itself. Checks the key and item limits.
pub(crate) fn other_item<E: Edge>(edge: &E, stamp: Stamp) -> Result<Option<Item>, Error> {
    let (from, to) = (node_text(edge.source()), node_text(edge.target()));
    match E::SPEC.inverse {
        InverseSpec::Index { .. } | InverseSpec::None => Ok(None),
        InverseSpec::Symmetric if from == to => Ok(None),
        InverseSpec::Symmetric => to_item_at(&swapped(edge)?, None, stamp).map(Some),
        InverseSpec::Items { key, name, fields } => {
            let mut item = to_item_at(edge, None, stamp)?;
            strip_bookkeeping::<E::Table>(&mut item);
            // An inverse item is of its own type, not the edge entity's.
            crate::model::strip_constants::<E>(&mut item);
            if let Some(fields) = fields {
                let (fa, ta) = (E::SPEC.attrs.0, E::SPEC.attrs.1);
                item.retain(|k, _| k == fa || k == ta || fields.contains(&k.as_str()));
            }
            let pk = render(&key.pk, &from, &to);
            let sk = render(&key.sk, &from, &to);
            let table_pk = <E::Table as Table>::PK;
            check_key_value(name, table_pk, &pk, MAX_PARTITION_KEY_BYTES)?;
            item.insert(table_pk.to_owned(), AttributeValue::S(pk));
            if let Some(attr) = <E::Table as Table>::SK {
                check_key_value(name, attr, &sk, MAX_SORT_KEY_BYTES)?;
                item.insert(attr.to_owned(), AttributeValue::S(sk));
            }
            item.insert(
                crate::model::type_attr::<E::Table>().to_owned(),
                AttributeValue::S(name.to_owned()),
            );
            let size = item_size(&item);
            if size > MAX_ITEM_BYTES {
                return Err(Error::ItemTooLarge { entity: name, size, max: MAX_ITEM_BYTES });
            }
            Ok(Some(item))
        }
    }
}

/// Reads the items of [`incoming`](super::Edges::incoming) as edges `E`, in the direction
/// they were linked: an inverse item (checked against its keys), an edge item found through
/// the inverting index, or the mirrored item of a symmetric edge turned back around.
pub struct AsIncoming<E>(PhantomData<fn() -> E>);

impl<E: Edge> Decode for AsIncoming<E> {
    type Output = E;
    const NAME: &'static str = other_type::<E>();

    fn type_filter() -> Option<crate::model::TypeTag> {
        let attr = crate::model::type_attr::<E::Table>();
        Some(crate::model::TypeTag { attr, value: other_type::<E>() })
    }

    /// The edge's own items (through an index, or mirrored) hold its constants.
    fn constants() -> &'static [crate::model::TypeTag] {
        match E::SPEC.inverse {
            InverseSpec::Items { .. } => &[],
            _ => E::CONSTANTS,
        }
    }

    fn decode(item: Item) -> Result<E, Error> {
        match E::SPEC.inverse {
            InverseSpec::Index { .. } | InverseSpec::None => from_item::<E>(item),
            InverseSpec::Symmetric => swapped(&from_item::<E>(item)?),
            InverseSpec::Items { name, .. } => decode_inverse::<E>(name, item),
        }
    }
}

fn decode_inverse<E: Edge>(name: &'static str, mut item: Item) -> Result<E, Error> {
    let table_sk = <E::Table as Table>::SK;
    check_type::<E::Table>(Some(&item), name, name, || item_key::<E::Table>(&item))?;
    let (pk, sk) = strip_bookkeeping::<E::Table>(&mut item);
    let key = key_display(pk.as_deref(), sk.as_deref());
    let mut edge: E = serde_dynamo::from_item(item).map_err(|source| Error::Deserialize {
        entity: name,
        key: key.clone(),
        source,
    })?;
    crate::model::after_read_copy(&mut edge)?;
    let (from, to) = (node_text(edge.source()), node_text(edge.target()));
    let expected = other_key::<E>(&from, &to);
    let stored = pk.zip(sk.or_else(|| table_sk.is_none().then(String::new)));
    if expected != stored {
        let (epk, esk) = expected.unwrap_or_default();
        return Err(Error::CorruptItem {
            entity: name,
            key,
            reason: crate::error::CorruptReason::KeyMismatch {
                expected: key_display(Some(&epk), Some(&esk)),
            },
        });
    }
    Ok(edge)
}

/// The entity type of the items in the other direction (what `incoming` reads).
pub(crate) const fn other_type<E: Edge>() -> &'static str {
    match &E::SPEC.inverse {
        InverseSpec::Items { name, .. } => name,
        _ => E::NAME,
    }
}

/// `Ok` when `item` is stored with entity type `name` in table `T`, else
/// [`Error::WrongEntityType`] (of `expected`, at `key`).
pub(crate) fn check_type<T: Table>(
    item: Option<&crate::item::Item>,
    name: &str,
    expected: &'static str,
    key: impl FnOnce() -> String,
) -> Result<(), Error> {
    match item.and_then(|item| crate::model::string_attr(item, crate::model::type_attr::<T>())) {
        Some(t) if t == name => Ok(()),
        found => {
            Err(Error::WrongEntityType { expected, found: found.map(str::to_owned), key: key() })
        }
    }
}

/// The key of a stored item of table `T`, for display.
pub(crate) fn item_key<T: Table>(item: &crate::item::Item) -> String {
    let text = |attr: &str| crate::model::string_attr(item, attr);
    crate::model::key_display(text(T::PK), T::SK.and_then(text))
}
