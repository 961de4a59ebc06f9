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
    schema_attr(cx, table);
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
    vectors(cx, table);
}

/// Most vector indexes of a table (the service's limit).
const MAX_VECTOR_INDEXES: usize = 5;
/// Most dimensions of a vector index.
const MAX_VECTOR_DIMS: u32 = 4096;

/// The rules of the vector indexes: a name the service takes and no other index has, 1 to
/// 4,096 dimensions, at most five indexes, an attribute that is no key attribute (the
/// service refuses a vector attribute it has a definition for), and one number of dimensions
/// per attribute.
fn vectors(cx: &mut Ctxt, table: &Table) {
    let mut dims_of: Vec<(String, u32)> = Vec::new();
    for (i, vector) in table.vectors.iter().enumerate() {
        let name = vector.name.value();
        if i == MAX_VECTOR_INDEXES {
            cx.error_spanned_by(
                &vector.name,
                format!(
                    "a table has at most {MAX_VECTOR_INDEXES} vector indexes; `{name}` is the {}th",
                    i + 1
                ),
            );
        }
        if !(3..=255).contains(&name.len())
            || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        {
            cx.error_spanned_by(
                &vector.name,
                format!("vector index name `{name}` is not one DynamoDB takes: 3 to 255 characters of a-z, A-Z, 0-9, `_`, `-` and `.`"),
            );
        }
        let earlier_vector = table.vectors[..i].iter().any(|v| v.name.value() == name);
        if earlier_vector || table.gsis.iter().any(|g| g.name.value() == name) {
            cx.error_spanned_by(
                &vector.name,
                format!("duplicate index name `{name}`: each index of a table, vector or not, needs its own name"),
            );
        }
        let dims = match vector.dims.base10_parse::<u32>() {
            Ok(dims) if (1..=MAX_VECTOR_DIMS).contains(&dims) => Some(dims),
            _ => {
                cx.error_spanned_by(
                    &vector.dims,
                    format!("vector index `{name}` has {} dimensions: a vector index takes 1 to {MAX_VECTOR_DIMS}", vector.dims.base10_digits()),
                );
                None
            }
        };
        let attr = vector.attr.value();
        let key_of = if table.pk == attr {
            Some("the table's partition key".to_owned())
        } else if table.sk.as_deref() == Some(attr.as_str()) {
            Some("the table's sort key".to_owned())
        } else if table.type_attr.as_deref() == Some(attr.as_str()) {
            Some("the entity type attribute".to_owned())
        } else {
            table.gsis.iter().find_map(|g| {
                let keys =
                    std::iter::once(g.pk.value()).chain(g.sk.as_ref().map(LitStr::value)).chain(
                        g.pk_list
                            .iter()
                            .chain(&g.sk_list)
                            .flat_map(|l| &l.attrs)
                            .map(|a| a.name.value()),
                    );
                keys.into_iter()
                    .any(|k| k == attr)
                    .then(|| format!("a key of gsi `{}`", g.name.value()))
            })
        };
        if let Some(role) = key_of {
            cx.error_spanned_by(
                &vector.attr,
                format!("vector index `{name}` cannot store its vectors in `{attr}`, which is {role}: give the vectors an attribute of their own"),
            );
        }
        filters(cx, table, vector, &attr);
        if let Some(dims) = dims {
            match dims_of.iter().find(|(a, _)| *a == attr) {
                Some((_, other)) if *other != dims => cx.error_spanned_by(
                    &vector.dims,
                    format!("attribute `{attr}` holds vectors of {other} dimensions for another vector index: every vector index of one attribute has the same dimensions"),
                ),
                Some(_) => {}
                None => dims_of.push((attr, dims)),
            }
        }
    }
}

/// The schema version attribute is an attribute of its own: not a key of the table or of an
/// index, not the entity type attribute.
fn schema_attr(cx: &mut Ctxt, table: &Table) {
    let Some(lit) = &table.schema_attr else {
        return;
    };
    let value = lit.value();
    let gsi_keys = table.gsis.iter().flat_map(|g| {
        let lists = [&g.pk_list, &g.sk_list];
        let listed: Vec<String> =
            lists.into_iter().flatten().flat_map(|l| &l.attrs).map(|a| a.name.value()).collect();
        [Some(g.pk.value()), g.sk.as_ref().map(LitStr::value)].into_iter().flatten().chain(listed)
    });
    let role = if value == table.pk {
        Some("the partition key attribute".to_owned())
    } else if table.sk.as_ref() == Some(&value) {
        Some("the sort key attribute".to_owned())
    } else if table.type_attr.as_ref() == Some(&value) {
        Some("the entity type attribute".to_owned())
    } else if table.ttl.as_ref().map(LitStr::value) == Some(value.clone()) {
        Some("the expiry (Time to Live) attribute".to_owned())
    } else {
        gsi_keys.into_iter().any(|k| k == value).then(|| "a key attribute of an index".to_owned())
    };
    if let Some(role) = role {
        cx.error_spanned_by(
            lit,
            format!(
                "the schema version attribute `{value}` is also {role}: each item stores its schema version in an attribute of its own; pick another name, such as \"_schema\""
            ),
        );
    }
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

/// The rules of a vector index's filters: a non-empty list, each attribute once, neither the
/// vector attribute nor the type attribute (the index's partition), and one type per
/// attribute in the table.
fn filters(cx: &mut Ctxt, table: &Table, vector: &crate::attr::VectorAttr, vector_attr: &str) {
    let Some(list) = &vector.filters else { return };
    let name = vector.name.value();
    if list.attrs.is_empty() {
        cx.error_at(
            list.span,
            format!("vector index `{name}` has an empty filter list: list attributes, as in [\"category\"], or leave `filters` out"),
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for attr in &list.attrs {
        let value = attr.name.value();
        let clash = if seen.contains(&value) {
            Some("is listed twice".to_owned())
        } else if value == vector_attr {
            Some("holds the index's vectors".to_owned())
        } else if table.type_attr.as_deref() == Some(value.as_str()) {
            Some("is the entity type attribute, which partitions the index".to_owned())
        } else {
            typed_elsewhere(table, vector, &value)
                .filter(|(_, kind)| *kind != attr.kind)
                .map(|(role, kind)| format!("is {role} of type {kind}, here it is {}: an attribute has one type in a table", attr.kind))
        };
        if let Some(clash) = clash {
            cx.error_spanned_by(
                &attr.name,
                format!("filter `{value}` of vector index `{name}` {clash}"),
            );
        }
        seen.push(value);
    }
}

/// The type the table gives attribute `value` elsewhere: its keys, a gsi, an earlier vector
/// index's filters.
fn typed_elsewhere(
    table: &Table,
    vector: &crate::attr::VectorAttr,
    value: &str,
) -> Option<(String, String)> {
    if table.pk == value || table.sk.as_deref() == Some(value) {
        return Some(("a key of the table".into(), "S".into()));
    }
    for gsi in &table.gsis {
        let typed = gsi.pk_list.iter().chain(&gsi.sk_list).flat_map(|l| &l.attrs);
        if let Some(a) = typed.into_iter().find(|a| a.name.value() == value) {
            return Some((format!("a key of gsi `{}`", gsi.name.value()), a.kind.clone()));
        }
        let plain = gsi.pk_list.is_none()
            && (gsi.pk.value() == value || gsi.sk.as_ref().is_some_and(|s| s.value() == value));
        if plain {
            return Some((format!("a key of gsi `{}`", gsi.name.value()), "S".into()));
        }
    }
    for other in table.vectors.iter().take_while(|v| !std::ptr::eq(*v, vector)) {
        let attrs = other.filters.iter().flat_map(|l| &l.attrs);
        if let Some(a) = attrs.into_iter().find(|a| a.name.value() == value) {
            return Some((
                format!("a filter of vector index `{}`", other.name.value()),
                a.kind.clone(),
            ));
        }
    }
    None
}
