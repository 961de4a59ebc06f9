//! A re-keyed entity (`rekey(pk = "..", sk = "..")`): the old layout has the same shape and
//! the same placeholders as the new one, differs from it in text (so a stored key tells which
//! layout wrote it), and the entity has no sentinel
//! items or tree whose keys would have to move with it.

use crate::ast::Entity;
use crate::ctxt::Ctxt;

pub fn check(cx: &mut Ctxt, entity: &Entity) {
    let Some(rekey) = &entity.rekey else { return };
    match (&entity.sk, &rekey.sk) {
        (Some(_), None) => cx.error_spanned_by(
            &rekey.path,
            "the entity has a sort key template but `rekey` names none: give the old layout's `sk` too (the table has one sort key attribute for both layouts)",
        ),
        (None, Some(_)) => cx.error_spanned_by(
            &rekey.path,
            "`rekey` names a sort key template but the entity has none: an item has a sort key in both layouts or in neither",
        ),
        _ => {}
    }
    let new: Vec<String> = entity.key_fields().iter().map(|f| f.name()).collect();
    let old: Vec<(&str, proc_macro2::Span)> =
        std::iter::once(&rekey.pk).chain(rekey.sk.as_ref()).flat_map(|t| t.fields()).collect();
    for (name, span) in &old {
        if entity.field(name).is_some() && !new.iter().any(|n| n == name) {
            cx.error_at(
                *span,
                format!(
                    "`<{name}>` is not a placeholder of the entity's key: a re-key maps each item's key fields from one layout to the other, so the old layout uses the same placeholders as `pk` / `sk`"
                ),
            );
        }
    }
    for name in &new {
        if !old.iter().any(|(o, _)| o == name) {
            cx.error_spanned_by(
                &rekey.pk_lit,
                format!(
                    "the old layout has no `<{name}>`: a re-key maps each item's key fields from one layout to the other, so the old layout uses every placeholder of `pk` / `sk`"
                ),
            );
        }
    }
    let same_sk = match (&entity.sk, &rekey.sk) {
        (Some(a), Some(b)) => a.text == b.text,
        (None, None) => true,
        _ => false,
    };
    if entity.pk.text == rekey.pk.text && same_sk {
        cx.error_spanned_by(&rekey.pk_lit, "the old layout is the entity's layout: nothing to re-key; remove `rekey` once a re-key is done");
    } else if shape(&entity.pk) == shape(&rekey.pk)
        && entity.sk.as_ref().map(shape) == rekey.sk.as_ref().map(shape)
    {
        cx.error_spanned_by(
            &rekey.pk_lit,
            "the old layout writes the same text as the entity's with its placeholders in another order: a stored key could be either layout's, and a re-key tells the two copies of an item apart by their keys; change a literal part of one layout",
        );
    }
    if !entity.uniques.is_empty() {
        cx.error_spanned_by(
            &rekey.path,
            "an entity with unique fields cannot be re-keyed yet: its sentinel items name the item's key",
        );
    }
    if let Some(f) = entity.fields.iter().find(|f| f.from_key.is_some()) {
        cx.error_spanned_by(
            f.ident,
            format!("`{}` is read back from the key (`from_key`), which a re-keyed entity's two layouts write differently: store it as a field while re-keying", f.name()),
        );
    }
    if let crate::ast::Identity::Keys(flag) = &entity.identity {
        cx.error_spanned_by(
            flag,
            "a re-keyed entity needs its type attribute: with `no_type_attr` its items are told apart by their keys, and the old copies' keys are the old layout's",
        );
    }
    if entity.hierarchy.is_some() {
        cx.error_spanned_by(
            &rekey.path,
            "a tree node cannot be re-keyed: its tree's bookkeeping names its key",
        );
    }
}

/// The text a template writes around its placeholders (each placeholder one `<>`): two
/// templates of the same shape can write the same key.
fn shape(template: &crate::template::Template) -> String {
    let mut out = String::new();
    for segment in &template.segments {
        match segment {
            crate::template::Segment::Lit(l) => out.push_str(l),
            crate::template::Segment::Field { .. } => out.push_str("<>"),
        }
    }
    out
}
