//! The rules of `#[derive(Table)]`: distinct key attributes, and indexes that do not reuse
//! the entity-type attribute.

use syn::LitStr;

use crate::ast::Table;
use crate::ctxt::Ctxt;

pub fn table(cx: &mut Ctxt, table: &Table) {
    if let (Some(_), Some(flag)) = (&table.sk_lit, &table.no_sort_key) {
        cx.error_spanned_by(flag, "`no_sort_key` contradicts `sk`: keep one of them");
    }
    if let (Some(_), Some(flag)) = (&table.type_attr_lit, &table.no_type_attr) {
        cx.error_spanned_by(flag, "`no_type_attr` contradicts `type_attr`: keep one of them");
    }
    let pk = &table.pk;
    if table.sk.as_ref() == Some(pk) {
        let at = table.sk_lit.as_ref().map_or_else(|| table.ident.span(), LitStr::span);
        cx.error_at(
            at,
            format!(
                "the sort key attribute cannot be the partition key attribute `{pk}`: pick another name, or write `no_sort_key` for a table without a sort key"
            ),
        );
    }
    if let Some(type_attr) = &table.type_attr
        && (type_attr == pk || table.sk.as_ref() == Some(type_attr))
    {
        // Point at the setting that differs from the defaults: an explicit `type_attr`, else
        // the key attribute that took the default `_type`.
        let (role, key_lit) =
            if type_attr == pk { ("partition", &table.pk_lit) } else { ("sort", &table.sk_lit) };
        let at = table
            .type_attr_lit
            .as_ref()
            .or(key_lit.as_ref())
            .map_or_else(|| table.ident.span(), LitStr::span);
        cx.error_at(
            at,
            format!(
                "the entity type attribute and the {role} key attribute are both `{type_attr}`: each item stores its entity type in an attribute of its own; pick another name"
            ),
        );
    }
    if let Some(ttl) = &table.ttl {
        let name = ttl.value();
        let role = if name == *pk {
            Some("the partition key")
        } else if table.sk.as_ref() == Some(&name) {
            Some("the sort key")
        } else if table.type_attr.as_ref() == Some(&name) {
            Some("the entity type attribute")
        } else {
            None
        };
        if let Some(role) = role {
            cx.error_spanned_by(
                ttl,
                format!(
                    "the expiry attribute cannot be {role} `{name}`: it holds a number of seconds that entities set and may change; pick another name"
                ),
            );
        }
    }
    gsis(cx, table);
}

fn gsis(cx: &mut Ctxt, table: &Table) {
    let mut seen: Vec<String> = Vec::new();
    for gsi in &table.gsis {
        let name = gsi.name.value();
        if seen.contains(&name) {
            cx.error_spanned_by(
                &gsi.name,
                format!("duplicate gsi name `{name}`: each index of a table needs its own name"),
            );
        }
        seen.push(name.clone());
        if gsi.pk_list.is_none()
            && gsi.sk_list.is_none()
            && gsi.sk.as_ref().map(LitStr::value) == Some(gsi.pk.value())
        {
            cx.error_spanned_by(
                &gsi.pk,
                format!("gsi `{name}`: its partition and sort key attributes must differ"),
            );
        }
        multi(cx, table, gsi);
        if gsi.pk_list.is_some() || gsi.sk_list.is_some() {
            continue;
        }
        for lit in std::iter::once(&gsi.pk).chain(gsi.sk.as_ref()) {
            if let Some(type_attr) = table.type_attr.as_ref().filter(|t| **t == lit.value()) {
                cx.error_spanned_by(
                    lit,
                    format!(
                        "gsi `{name}` cannot be keyed by the entity type attribute `{type_attr}`"
                    ),
                );
            }
        }
    }
}

/// Most attributes of each key of a multi-attribute index.
const MAX_KEY_ATTRS: usize = 4;

/// The rules of a multi-attribute index: both keys are lists (or the sort key is left out),
/// one to four attributes each, no attribute twice, none that is the entity type attribute,
/// and an attribute the table declares elsewhere keeps its type there (key attributes of the
/// table and of template indexes are strings).
fn multi(cx: &mut Ctxt, table: &Table, gsi: &crate::attr::GsiAttr) {
    let name = gsi.name.value();
    let (pk, sk) = match (&gsi.pk_list, &gsi.sk_list) {
        (None, None) => return,
        (Some(pk), sk) => (pk, sk.as_ref()),
        (None, Some(sk)) => {
            cx.error_at(
                sk.span,
                format!(
                    "gsi `{name}` lists its sort key attributes, but its partition key is one attribute: list the partition key's too, as in pk = [\"{}\"]",
                    gsi.pk.value()
                ),
            );
            return;
        }
    };
    if let (Some(lit), None) = (&gsi.sk, sk) {
        cx.error_spanned_by(
            lit,
            format!(
                "gsi `{name}` lists its partition key attributes: list its sort key attributes too, as in sk = [\"{}\"]",
                lit.value()
            ),
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for (list, what) in std::iter::once((pk, "partition")).chain(sk.map(|s| (s, "sort"))) {
        if list.attrs.is_empty() {
            cx.error_at(
                list.span,
                format!(
                    "gsi `{name}` has an empty {what} key list: give one to four attributes, as in [\"tenant\", \"status\"]"
                ),
            );
        }
        if let Some(extra) = list.attrs.get(MAX_KEY_ATTRS) {
            cx.error_spanned_by(
                &extra.name,
                format!(
                    "gsi `{name}` has {} {what} key attributes: DynamoDB allows at most {MAX_KEY_ATTRS}",
                    list.attrs.len()
                ),
            );
        }
        for attr in &list.attrs {
            let value = attr.name.value();
            if seen.contains(&value) {
                cx.error_spanned_by(
                    &attr.name,
                    format!("gsi `{name}` names attribute `{value}` twice: each key attribute appears once"),
                );
            }
            seen.push(value.clone());
            if table.type_attr.as_ref() == Some(&value) {
                cx.error_spanned_by(
                    &attr.name,
                    format!("gsi `{name}` cannot be keyed by the entity type attribute `{value}`"),
                );
            }
            if let Some(other) = declared_elsewhere(table, gsi, &value)
                && other.1 != attr.kind
            {
                cx.error_spanned_by(
                    &attr.name,
                    format!(
                        "attribute `{value}` is {} of type {}, here it is {}: an attribute has one type in a table; pick another attribute or the same type",
                        other.0, other.1, attr.kind
                    ),
                );
            }
        }
    }
}

/// Where else the table declares attribute `value` (the table's keys, an earlier index) and
/// with which type.
fn declared_elsewhere(
    table: &Table,
    gsi: &crate::attr::GsiAttr,
    value: &str,
) -> Option<(String, String)> {
    if table.pk == value {
        return Some(("the table's partition key".into(), "S".into()));
    }
    if table.sk.as_deref() == Some(value) {
        return Some(("the table's sort key".into(), "S".into()));
    }
    for other in table.gsis.iter().take_while(|g| !std::ptr::eq(*g, gsi)) {
        let other_name = other.name.value();
        match (&other.pk_list, &other.sk_list) {
            (None, None) => {
                let keys =
                    std::iter::once(other.pk.value()).chain(other.sk.as_ref().map(LitStr::value));
                if keys.into_iter().any(|k| k == value) {
                    return Some((format!("a key of gsi `{other_name}`"), "S".into()));
                }
            }
            (pk, sk) => {
                let attrs = pk.iter().chain(sk.iter()).flat_map(|l| &l.attrs);
                for attr in attrs {
                    if attr.name.value() == value {
                        return Some((format!("a key of gsi `{other_name}`"), attr.kind.clone()));
                    }
                }
            }
        }
    }
    None
}
