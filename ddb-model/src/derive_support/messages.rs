//! Messages of the compile-time checks, built during constant evaluation.

use crate::model::{Entity, KeyAttr};

/// A message built during constant evaluation (a `panic!` in a `const` item can only print
/// text it is given whole).
pub struct ConstMsg {
    buf: [u8; ConstMsg::CAPACITY],
    len: usize,
}

impl ConstMsg {
    const CAPACITY: usize = 1024;
    const EMPTY: ConstMsg = ConstMsg { buf: [0; ConstMsg::CAPACITY], len: 0 };

    /// Appends `text`, or as much of it as fits, cut at a character boundary.
    const fn push(mut self, text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut n = bytes.len();
        if n > Self::CAPACITY - self.len {
            n = Self::CAPACITY - self.len;
            while n > 0 && (bytes[n] & 0b1100_0000) == 0b1000_0000 {
                n -= 1;
            }
        }
        let mut i = 0;
        while i < n {
            self.buf[self.len + i] = bytes[i];
            i += 1;
        }
        self.len += n;
        self
    }

    /// "field `field` is stored as attribute `attr`".
    const fn stored_as(field: &str, attr: &str) -> Self {
        ConstMsg::EMPTY.push("field `").push(field).push("` is stored as attribute `").push(attr)
    }

    /// "index `name` of table".
    const fn index_of(name: &str, table: &str) -> Self {
        ConstMsg::EMPTY.push("index `").push(name).push("` of ").push(table)
    }

    /// The message.
    pub const fn as_str(&self) -> &str {
        match std::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "",
        }
    }
}

/// The compile-time error for field `field`, stored as attribute `attr`, when the table of
/// `E` (`table`, as the message names it) uses that attribute itself; no message otherwise.
pub const fn attr_clash<E: Entity>(field: &str, attr: &str, table: &str) -> Option<ConstMsg> {
    let (before, after) = match super::private::table_attr_role::<E>(attr) {
        1 => ("the partition key attribute of ", ""),
        2 => ("the sort key attribute of ", ""),
        3 => ("where ", " stores each item's entity type"),
        4 => ("a key attribute of an index of ", ""),
        _ => return None,
    };
    let message = ConstMsg::stored_as(field, attr)
        .push("`, which is ")
        .push(before)
        .push(table)
        .push(after)
        .push("; give the field another attribute name with #[serde(rename = \"...\")]");
    Some(message)
}

/// The compile-time error for constant attribute `attr` of `E` (`#[entity(constant(..))]`)
/// when the table of `E` (`table`, as the message names it) writes that attribute itself: a
/// key, the entity type, or the schema version of an entity that declares one.
pub const fn constant_clash<E: Entity>(attr: &str, table: &str) -> Option<ConstMsg> {
    let what = match super::private::table_attr_role::<E>(attr) {
        1 => "the partition key attribute of ",
        2 => "the sort key attribute of ",
        3 => "the entity type attribute of ",
        4 => "a key attribute of an index of ",
        _ if E::SCHEMA.is_some()
            && crate::model::str_eq(attr, <E::Table as crate::model::Table>::SCHEMA_ATTR) =>
        {
            "the schema version attribute of "
        }
        _ => return None,
    };
    let message = ConstMsg::EMPTY
        .push("constant `")
        .push(attr)
        .push("` is ")
        .push(what)
        .push(table)
        .push(", which every write sets itself: pick another attribute name for the constant");
    Some(message)
}

/// The compile-time error for placeholder `<placeholder>` of key type `T` (`ty`, as the
/// template's field is written) directly followed by a literal that starts with `next`
/// (`next_text`, the same character as text), when `T`'s escaped key text may hold it: the
/// value's end could not be found. No message when it may not.
pub const fn follow_check<T: crate::key::KeyPart>(
    placeholder: &str,
    ty: &str,
    next: char,
    next_text: &str,
) -> Option<ConstMsg> {
    let chars = T::KEY_CHARS;
    if chars.may_follow(next) {
        return None;
    }
    let message = ConstMsg::EMPTY
        .push("placeholder `<")
        .push(placeholder)
        .push(">` is followed by `")
        .push(next_text)
        .push("`, which a key text of `")
        .push(ty)
        .push("` can hold, so the value's end could not be found: start the text after it with a separator (one of # / | ~ :)");
    let message = match chars {
        crate::key::KeyChars::Any => {
            message.push("; a `").push(ty).push("` key text may hold any other character")
        }
        crate::key::KeyChars::Only(set) => message
            .push(" or with any character a `")
            .push(ty)
            .push("` key text never holds, that is any but `")
            .push(set)
            .push("`"),
    };
    Some(message)
}

/// A small count as text (the positions and lengths of multi-attribute keys).
const fn count_text(n: usize) -> &'static str {
    const COUNTS: [&str; 9] = ["0", "1", "2", "3", "4", "5", "6", "7", "8"];
    if n < COUNTS.len() { COUNTS[n] } else { "many" }
}

const fn key_word(in_pk: bool) -> &'static str {
    if in_pk { "partition" } else { "sort" }
}

/// Attribute `pos` of the partition (`in_pk`) or sort key of the multi-attribute index
/// `name` of `E`'s table, if there is one.
const fn multi_attr<E: Entity>(name: &str, in_pk: bool, pos: usize) -> Option<&'static KeyAttr> {
    let Some(index) = super::private::table_index::<E>(name) else { return None };
    let attrs = if in_pk { index.pk_attrs } else { index.sk_attrs };
    if index.is_multi() && pos < attrs.len() { Some(&attrs[pos]) } else { None }
}

/// The compile-time error for `#[index(name, pk = [..], sk = [..])]` listing `pk` and `sk` fields
/// when the table (`table`, as the message names it) has no multi-attribute index `name`
/// with as many attributes per key; no message otherwise.
pub const fn multi_index_check<E: Entity>(
    name: &str,
    pk: usize,
    sk: usize,
    table: &str,
) -> Option<ConstMsg> {
    let Some(index) = super::private::table_index::<E>(name) else {
        return Some(ConstMsg::EMPTY.push(table).push(" has no index `").push(name).push("`"));
    };
    if !index.is_multi() {
        let message = ConstMsg::index_of(name, table)
            .push(" is keyed by one string attribute per key, which key templates write: give #[index(")
            .push(name)
            .push(")] templates, as in pk = \"ORG#<org>\", or declare its attributes as lists in the table, as in gsi(name = \"")
            .push(name)
            .push("\", pk = [\"tenant\", \"status\"])");
        return Some(message);
    }
    let (want_pk, want_sk) = (index.pk_attrs.len(), index.sk_attrs.len());
    if want_pk == pk && want_sk == sk {
        return None;
    }
    let message = ConstMsg::index_of(name, table)
        .push(" has ")
        .push(count_text(want_pk))
        .push(" partition key and ")
        .push(count_text(want_sk))
        .push(" sort key attributes; #[index(")
        .push(name)
        .push(")] lists ")
        .push(count_text(pk))
        .push(" and ")
        .push(count_text(sk))
        .push(" fields: list one field per attribute, in the index's order");
    Some(message)
}

/// The compile-time error for field `field`, stored as attribute `attr`, listed at position
/// `pos` of the partition (`in_pk`) or sort key of multi-attribute index `name`, when the
/// index's attribute there has another name; no message otherwise (or when the index or the
/// position does not exist: [`multi_index_check`] says so).
pub const fn multi_attr_name_check<E: Entity>(
    name: &str,
    in_pk: bool,
    pos: usize,
    field: &str,
    attr: &str,
    table: &str,
) -> Option<ConstMsg> {
    let Some(declared) = multi_attr::<E>(name, in_pk, pos) else { return None };
    if crate::model::str_eq(declared.name, attr) {
        return None;
    }
    let message = ConstMsg::stored_as(field, attr)
        .push("`, but attribute ")
        .push(count_text(pos + 1))
        .push(" of the ")
        .push(key_word(in_pk))
        .push(" key of ")
        .push(ConstMsg::index_of(name, table).as_str())
        .push(" is `")
        .push(declared.name)
        .push("`: list the fields in the index's order, or store the field under that name with #[serde(rename = \"")
        .push(declared.name)
        .push("\")]");
    Some(message)
}

/// The compile-time error for field `field` of type `T` at position `pos` of a key of
/// multi-attribute index `name` when `T` is stored with another DynamoDB type than the
/// index declares for that attribute; no message otherwise.
pub const fn multi_attr_kind_check<E: Entity, T: crate::model::IndexAttribute>(
    name: &str,
    in_pk: bool,
    pos: usize,
    field: &str,
    table: &str,
) -> Option<ConstMsg> {
    let Some(attr) = multi_attr::<E>(name, in_pk, pos) else { return None };
    let declared = attr.kind.as_str();
    let stored = T::KIND.as_str();
    if crate::model::str_eq(declared, stored) {
        return None;
    }
    let message = ConstMsg::EMPTY
        .push("field `")
        .push(field)
        .push("` is stored as type ")
        .push(stored)
        .push(", but ")
        .push(ConstMsg::index_of(name, table).as_str())
        .push(" declares its attribute `")
        .push(attr.name)
        .push("` as type ")
        .push(declared)
        .push(": declare it as \"")
        .push(attr.name)
        .push("\": ")
        .push(stored)
        .push(" in the table, or give the field a type stored as ")
        .push(declared);
    Some(message)
}

/// The compile-time error for field `field` of `E`, stored as attribute `attr`, that holds
/// the vectors of vector index `index` of `E`'s table (`table`, as messages name it): the
/// index must exist, keep its vectors in `attr`, and, when it is partitioned by the table's
/// type attribute, `E` must write that attribute. No message when all hold.
pub const fn vector_field_check<E: Entity>(
    index: &str,
    field: &str,
    attr: &str,
    table: &str,
) -> Option<ConstMsg> {
    let Some(def) = super::private::table_vector_index::<E>(index) else {
        let message = ConstMsg::EMPTY
            .push(table)
            .push(" has no vector index `")
            .push(index)
            .push("`: declare it with #[table(vector(name = \"")
            .push(index)
            .push("\", attr = \"")
            .push(attr)
            .push("\", dims = .., metric = ..))]");
        return Some(message);
    };
    if !crate::model::str_eq(def.attr, attr) {
        let message = ConstMsg::stored_as(field, attr)
            .push("`, but vector ")
            .push(ConstMsg::index_of(index, table).as_str())
            .push(" holds the vectors of attribute `")
            .push(def.attr)
            .push("`: store the field under that name with #[serde(rename = \"")
            .push(def.attr)
            .push("\")]");
        return Some(message);
    }
    if def.by_type && !super::private::tagged_by_table::<E>() {
        let message = ConstMsg::EMPTY
            .push("vector ")
            .push(ConstMsg::index_of(index, table).as_str())
            .push(" is partitioned by the table's entity type attribute, which the items of this entity do not carry (it has a type attribute of its own, or none): leave out `type_attr` / `no_type_attr` in #[entity]");
        return Some(message);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_messages_are_cut_at_a_character_boundary() {
        let long = "é".repeat(ConstMsg::CAPACITY);
        let msg = ConstMsg::EMPTY.push("a").push(&long);
        let text = msg.as_str();
        assert!(text.len() <= ConstMsg::CAPACITY && text.len() > ConstMsg::CAPACITY - 2);
        assert!(ConstMsg::EMPTY.as_str().is_empty());
    }

    #[test]
    fn follow_checks_name_the_accepted_literals() {
        assert!(follow_check::<u32>("n", "u32", 'x', "x").is_none());
        assert!(follow_check::<String>("id", "String", '#', "#").is_none());
        let msg = follow_check::<u32>("n", "u32", '7', "7").map(|m| m.as_str().to_owned());
        assert!(msg.is_some_and(|m| m.contains("any but `0123456789`")));
        let msg = follow_check::<String>("id", "String", '-', "-").map(|m| m.as_str().to_owned());
        assert!(msg.is_some_and(|m| m.contains("may hold any other character")));
    }
}
