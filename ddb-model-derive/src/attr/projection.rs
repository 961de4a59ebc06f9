//! `#[projection(entity = Customer)]` on the struct of a `#[derive(Projection)]`.

use syn::{Attribute, Path};

use super::{Slot, unknown_key, value_expr};
use crate::ctxt::Ctxt;

const EXAMPLE: &str = "`#[projection(entity = Customer)]`";

/// The entity named by `#[projection(entity = ..)]`, if given and a path.
pub fn projection_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Slot<Path> {
    let mut entity = Slot::new("projection", "entity");
    for attr in attrs.iter().filter(|a| a.path().is_ident("projection")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("entity") {
                let value = value_expr(cx, &meta, EXAMPLE)?.and_then(|expr| match expr {
                    syn::Expr::Path(p) if p.qself.is_none() => Some(p.path),
                    other => {
                        cx.error_spanned_by(
                            &other,
                            format!("`entity` names the entity type, as in {EXAMPLE}"),
                        );
                        None
                    }
                });
                entity.set(cx, &meta.path, value);
                Ok(())
            } else {
                unknown_key(cx, &meta, "projection", "entity")
            }
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    entity
}
