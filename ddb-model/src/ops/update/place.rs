//! Writing a value at a document path of an item held in memory: what a write that was
//! applied did to the stored item (a marked update's retry, the values unique constraints
//! move).

use aws_sdk_dynamodb::types::AttributeValue;

use crate::expr::PathSegment;
use crate::item::Item;

/// Sets (or, with `None`, removes) the value at `segments` of `item`. A path whose parent is
/// missing or not a map or list is left as it is.
pub(crate) fn place(item: &mut Item, segments: &[PathSegment], value: Option<AttributeValue>) {
    if let Some((PathSegment::Name(name), rest)) = segments.split_first() {
        place_at(item, name, rest, value);
    }
}

/// [`place`] at `name` of `map`, then at `rest` inside it.
fn place_at(map: &mut Item, name: &str, rest: &[PathSegment], value: Option<AttributeValue>) {
    match (rest.is_empty(), value) {
        (true, Some(v)) => {
            map.insert(name.to_owned(), v);
        }
        (true, None) => {
            map.remove(name);
        }
        (false, value) => {
            if let Some(child) = map.get_mut(name) {
                place_in(child, rest, value);
            }
        }
    }
}

fn place_in(slot: &mut AttributeValue, segments: &[PathSegment], value: Option<AttributeValue>) {
    let Some((segment, rest)) = segments.split_first() else { return };
    match (slot, segment) {
        (AttributeValue::M(map), PathSegment::Name(name)) => place_at(map, name, rest, value),
        (AttributeValue::L(list), PathSegment::Index(i)) => {
            if rest.is_empty() {
                match value {
                    Some(v) => match list.get_mut(*i) {
                        Some(slot) => *slot = v,
                        None => list.push(v),
                    },
                    None if *i < list.len() => {
                        list.remove(*i);
                    }
                    None => {}
                }
            } else if let Some(child) = list.get_mut(*i) {
                place_in(child, rest, value);
            }
        }
        _ => {}
    }
}
