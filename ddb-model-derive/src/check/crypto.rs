//! `#[encrypt]` and `#[sign_only]`: what the library must read in plaintext is never encrypted
//! (keys and what they are made of (a `from_key` field fills a placeholder too), the version, the timestamps, the expiry, unique values,
//! vectors), a field without an attribute of its own has nothing to encrypt or sign, and the
//! layers that write items of their own (trees) take no encrypted entity.

use crate::ast::{Entity, Field};
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let marked = || entity.fields.iter().filter_map(|f| f.crypto.map(|c| (f, c)));
    if let (Some(_), Some((_, first))) = (&entity.hierarchy, marked().next()) {
        cx.error_at(
            first.span,
            format!(
                "{} on a `#[hierarchy]` entity: a tree moves and counts its nodes in place, which a signed item cannot take; keep the protected data on an entity of its own",
                first.name()
            ),
        );
    }
    for (field, crypto) in marked() {
        let ident = field.ident;
        let name = field.name();
        if let Some(attr) = field.skip_attr.or(field.flatten.then_some("flatten")) {
            cx.error_at(
                crypto.span,
                format!(
                    "{} on `{ident}`, which has #[serde({attr})]: the field has no attribute of its own to protect",
                    crypto.name()
                ),
            );
            continue;
        }
        if !crypto.encrypt {
            continue;
        }
        if let Some(why) = plaintext_use(entity, field, &name) {
            cx.error_at(
                crypto.span,
                format!(
                    "#[encrypt] on `{ident}`, which {why}: the library and the service read it in plaintext; sign it instead (every attribute of an entity with encrypted fields is signed, or write #[sign_only])"
                ),
            );
        }
    }
}

/// What makes field `name` a value the library or the service reads in plaintext, if anything.
fn plaintext_use(entity: &Entity, field: &Field, name: &str) -> Option<&'static str> {
    let is = |slot: &Option<(usize, syn::Ident)>| {
        slot.as_ref().and_then(|(i, _)| entity.fields.get(*i)).is_some_and(|f| f.name() == name)
    };
    let in_template = entity.templates().any(|t| t.fields().any(|(n, _)| n == name));
    let computed_from = entity
        .fields
        .iter()
        .filter_map(|f| f.computed.as_ref())
        .any(|c| c.args.iter().any(|a| a.to_string().trim_start_matches("r#") == name));
    let multi = entity.multi_indexes.iter().any(|m| {
        m.pk.iter()
            .chain(&m.sk)
            .any(|(i, _)| entity.fields.get(*i).is_some_and(|f| f.name() == name))
    });
    if in_template {
        Some("fills a placeholder of a key template")
    } else if computed_from {
        Some("an index key is computed from")
    } else if multi {
        Some("keys a multi-attribute index")
    } else if is(&entity.version) {
        Some("is the version (conditions compare it)")
    } else if is(&entity.created_at) || is(&entity.updated_at) {
        Some("is a timestamp the library sets")
    } else if is(&entity.ttl) {
        Some("is the expiry time DynamoDB deletes the item by")
    } else if !field.unique.is_empty()
        || entity
            .uniques
            .iter()
            .any(|u| u.fields.iter().any(|(_, i)| i.to_string().trim_start_matches("r#") == name))
    {
        Some("is unique (its value is the key of a sentinel item)")
    } else if field.vector.is_some() {
        Some("holds the vectors of a vector index")
    } else {
        None
    }
}
