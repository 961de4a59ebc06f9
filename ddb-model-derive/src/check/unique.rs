//! Unique constraints (`#[unique]`, `#[entity(unique(a, b))]`): on stored fields the writes
//! set, not implied by the primary key, each once, and not on a tree node.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    if entity.uniques.is_empty() {
        return;
    }
    if let Some(unique) = entity.uniques.first()
        && entity.hierarchy.is_some()
    {
        cx.error_at(
            unique.span,
            "a `#[hierarchy]` entity cannot have unique constraints: its tree writes its items, without the sentinel items that keep a constraint; keep the unique value on an entity of its own",
        );
    }
    let key_fields: Vec<String> = entity.key_fields().iter().map(|f| f.name()).collect();
    let version = entity.version.as_ref().map(|(i, _)| *i);
    let stamps: Vec<usize> =
        entity.created_at.iter().chain(&entity.updated_at).map(|(i, _)| *i).collect();
    for (n, unique) in entity.uniques.iter().enumerate() {
        for (i, ident) in &unique.fields {
            let Some(field) = entity.fields.get(*i) else { continue };
            let name = field.name();
            let refused = if field.computed.is_some() {
                Some(format!("`{name}` is a computed placeholder, not a field"))
            } else if let Some(attr) = field.skip_attr.or(field.flatten.then_some("flatten")) {
                Some(format!("`{name}` has #[serde({attr})]: its value is not stored"))
            } else if field.from_key.is_some() {
                Some(format!("`{name}` is `from_key`: it is stored only in the keys"))
            } else if version == Some(*i) {
                Some(format!("`{name}` is the version field, which the writes set"))
            } else if stamps.contains(i) {
                Some(format!("`{name}` is a timestamp field, which the writes set"))
            } else {
                None
            };
            if let Some(reason) = refused {
                let span = if unique.fields.len() == 1 { unique.span } else { ident.span() };
                cx.error_at(
                    span,
                    format!(
                        "{reason}; a unique constraint needs a stored field that the caller sets"
                    ),
                );
            }
        }
        // Implied by the primary key: two items never share their key fields.
        let names: Vec<String> = unique
            .fields
            .iter()
            .filter_map(|(i, _)| entity.fields.get(*i).map(|f| f.name()))
            .collect();
        if !key_fields.is_empty() && key_fields.iter().all(|k| names.contains(k)) {
            cx.error_at(
                unique.span,
                format!(
                    "this unique constraint holds already: no two items share the primary key's fields ({}); remove it, or constrain fields outside the key",
                    key_fields.join(", ")
                ),
            );
        }
        let mut sorted: Vec<usize> = unique.fields.iter().map(|(i, _)| *i).collect();
        sorted.sort_unstable();
        let repeat = entity.uniques.iter().take(n).any(|other| {
            let mut o: Vec<usize> = other.fields.iter().map(|(i, _)| *i).collect();
            o.sort_unstable();
            o == sorted
        });
        if repeat {
            cx.error_at(
                unique.span,
                format!(
                    "a unique constraint on {} is declared already; keep one",
                    names.join(", ")
                ),
            );
        }
    }
}
