//! The tenant field (`tenant = org`): the placeholder that leads every partition key of the
//! entity, right after the table's tenant literal (which `expand::checks` compares with the
//! table's `#[table(tenant = "..")]`), so that every item of the entity lies in one tenant's
//! partitions.

use crate::ast::Entity;
use crate::ctxt::Ctxt;
use crate::template::{Segment, Template};

/// The literal before the tenant placeholder when `template` leads with it (a literal, if
/// any, then `<name>` without format or `:verbatim`); `None` otherwise.
pub fn lead<'t>(template: &'t Template, name: &str) -> Option<&'t str> {
    let (literal, rest) = match template.segments.as_slice() {
        [Segment::Lit(lit), rest @ ..] => (lit.as_str(), rest),
        rest => ("", rest),
    };
    match rest.first() {
        Some(Segment::Field { name: n, verbatim: false, format: None, .. }) if n == name => {
            Some(literal)
        }
        _ => None,
    }
}

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let Some((index, ident)) = &entity.tenant else { return };
    let Some(field) = entity.fields.get(*index) else { return };
    let name = field.name();
    let what = |key: &str| {
        format!(
            "{key} does not lead with the tenant: a tenant-scoped entity's partition keys start with the table's tenant literal and `<{name}>` (no format, not verbatim), as in \"ORG#<{name}>#..\", so that its items lie in the tenant's partitions"
        )
    };
    let span = |lit: &Option<syn::LitStr>| lit.as_ref().map_or(ident.span(), syn::LitStr::span);
    let primary = lead(&entity.pk, &name);
    if primary.is_none() {
        cx.error_at(span(&entity.pk_lit), what("the partition key"));
    }
    for index in &entity.indexes {
        match lead(&index.pk, &name) {
            None => cx.error_at(
                span(&index.pk_lit),
                what(&format!("the partition key of index `{}`", index.name)),
            ),
            Some(literal) if primary.is_some_and(|p| p != literal) => cx.error_at(
                span(&index.pk_lit),
                format!(
                    "the partition key of index `{}` puts {literal:?} before `<{name}>`, and the entity's partition key {:?}: every tenant-scoped key starts with the table's one tenant literal",
                    index.name,
                    primary.unwrap_or_default()
                ),
            ),
            Some(_) => {}
        }
    }
    for multi in &entity.multi_indexes {
        cx.error_spanned_by(
            &multi.name,
            format!(
                "a tenant-scoped entity cannot be in multi-attribute index `{}`: its partition key is typed attributes, not a key string led by the tenant, so neither ddb-model nor an IAM policy can confine its queries to one tenant",
                multi.name
            ),
        );
    }
    if let Some(unique) = entity.uniques.first() {
        cx.error_at(
            unique.span,
            format!(
                "a tenant-scoped entity cannot have unique values: their sentinel items live in partitions of their own (`_unique#..`), outside any tenant's, so a handle scoped to a tenant would refuse every write of `{}`",
                entity.ident
            ),
        );
    }
}
