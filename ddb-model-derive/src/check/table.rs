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
        if gsi.sk.as_ref().map(LitStr::value) == Some(gsi.pk.value()) {
            cx.error_spanned_by(
                &gsi.pk,
                format!("gsi `{name}`: its partition and sort key attributes must differ"),
            );
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
