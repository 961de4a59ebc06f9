//! `#[index(name, pk = "..", sk = "..", when = .., query = ..)]`: the key of the entity on
//! one table index, the condition for an item to be in it, and the name of its queries.

use syn::{Attribute, Ident, LitStr, Token};

use super::{Slot, ident_value, key_text, lit_value, skip_value};
use crate::ctxt::Ctxt;

pub struct IndexAttr {
    pub name: Ident,
    pub pk: Option<LitStr>,
    pub sk: Option<LitStr>,
    /// `when = unread`: a bool field or a method; the item is in the index while it is true.
    pub when: Option<Ident>,
    /// `query = forks`: the name of the access path (`query_forks`) instead of the index's.
    pub query: Option<Ident>,
}

pub fn index_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<IndexAttr> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("index")) {
        let mut name: Option<Ident> = None;
        let mut pk = Slot::new("index", "pk");
        let mut sk = Slot::new("index", "sk");
        let mut when = Slot::new("index", "when");
        let mut query = Slot::new("index", "query");
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("pk") {
                let lit = lit_value(cx, &meta, "pk = \"ORG#<org>\"")?;
                pk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("sk") {
                let lit = lit_value(cx, &meta, "sk = \"USER#<id>\"")?;
                sk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("when") {
                let ident = ident_value(cx, &meta, "a bool field or a method", "when = unread")?;
                when.set(cx, &meta.path, ident);
            } else if meta.path.is_ident("query") {
                let ident = ident_value(cx, &meta, "a name", "query = forks")?;
                query.set(cx, &meta.path, ident);
            } else if let (Some(ident), true, true) =
                (meta.path.get_ident(), name.is_none(), meta.input.is_empty() || meta.input.peek(Token![,]))
            {
                name = Some(ident.clone());
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown key `{}` in #[index]; expected the index name, then `pk`, `sk`, `when` and `query`, as in #[index(gsi1, pk = \"ORG#<org>\", sk = \"USER#<id>\")]",
                        key_text(&meta)
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
            continue;
        }
        let Some(name) = name else {
            cx.error_spanned_by(
                attr.path(),
                "#[index] needs the name of a table index first, as in #[index(gsi1, pk = \"ORG#<org>\")]",
            );
            continue;
        };
        if !pk.given {
            cx.error_spanned_by(
                &name,
                format!("#[index({name})] needs a `pk` template, as in #[index({name}, pk = \"ORG#<org>\")]"),
            );
        }
        out.push(IndexAttr {
            name,
            pk: pk.value,
            sk: sk.value,
            when: when.value,
            query: query.value,
        });
    }
    out
}
