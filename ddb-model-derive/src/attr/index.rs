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
    /// `computed(day: NaiveDate = day_of(created_at), ..)`: placeholders whose values a
    /// function computes from fields.
    pub computed: Vec<ComputedAttr>,
    /// `pk = [tenant, status]`: the fields that are the attributes of a multi-attribute
    /// partition key, in order (with the span of the `pk` key).
    pub pk_fields: Option<FieldList>,
    /// `sk = [priority, created]`: the fields of a multi-attribute sort key.
    pub sk_fields: Option<FieldList>,
}

/// `pk = [a, b]` or `sk = [a, b]` of `#[index]`: the key and the fields.
pub struct FieldList {
    pub key: syn::Path,
    pub fields: Vec<Ident>,
}

/// Reads the fields of `pk = [..]` / `sk = [..]` (possibly none: reported by `ast`).
fn field_list(cx: &mut Ctxt, meta: &syn::meta::ParseNestedMeta) -> syn::Result<FieldList> {
    let input = meta.value()?;
    let content;
    syn::bracketed!(content in input);
    let paths = syn::punctuated::Punctuated::<syn::Path, Token![,]>::parse_terminated(&content)?;
    let mut fields = Vec::new();
    for path in paths {
        match path.get_ident() {
            Some(ident) => fields.push(ident.clone()),
            None => cx.error_spanned_by(
                &path,
                "expected the name of a field, as in pk = [tenant, status]",
            ),
        }
    }
    Ok(FieldList { key: meta.path.clone(), fields })
}

/// `name: Type = function(field, ..)` in `computed(..)`.
pub struct ComputedAttr {
    pub name: Ident,
    pub ty: syn::Type,
    pub func: syn::ExprPath,
    pub args: Vec<Ident>,
}

/// Reads one `name: Type = function(field, ..)` after its name.
fn computed_value(
    cx: &mut Ctxt,
    meta: &syn::meta::ParseNestedMeta,
) -> syn::Result<Option<ComputedAttr>> {
    const FORM: &str = "computed(day: NaiveDate = day_of(created_at))";
    let Some(name) = meta.path.get_ident().cloned() else {
        cx.error_spanned_by(&meta.path, format!("expected a placeholder name, as in {FORM}"));
        return Ok(None);
    };
    let input = meta.input;
    if !input.peek(Token![:]) {
        cx.error_spanned_by(
            &name,
            format!("`{name}` needs its type and its function, as in {FORM}"),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    input.parse::<Token![:]>()?;
    let ty: syn::Type = input.parse()?;
    input.parse::<Token![=]>()?;
    let call: syn::Expr = input.parse()?;
    let syn::Expr::Call(call) = call else {
        cx.error_spanned_by(
            &call,
            format!("expected a call of a function on fields, as in {FORM}"),
        );
        return Ok(None);
    };
    let syn::Expr::Path(func) = *call.func else {
        cx.error_spanned_by(
            &call.func,
            "expected the path of a function, as in `day_of` or `Self::day_of`",
        );
        return Ok(None);
    };
    let mut args = Vec::new();
    for arg in &call.args {
        match arg {
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                args.extend(p.path.get_ident().cloned());
            }
            other => {
                cx.error_spanned_by(
                    other,
                    "each argument is a field of the entity (the function gets a reference to it)",
                );
                return Ok(None);
            }
        }
    }
    if args.is_empty() {
        cx.error_spanned_by(&func, format!("`{name}` is computed from no field: give the fields it is computed from, as in {FORM}"));
        return Ok(None);
    }
    Ok(Some(ComputedAttr { name, ty, func, args }))
}

pub fn index_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<IndexAttr> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("index")) {
        let mut name: Option<Ident> = None;
        let mut pk = Slot::new("index", "pk");
        let mut sk = Slot::new("index", "sk");
        let mut when = Slot::new("index", "when");
        let mut query = Slot::new("index", "query");
        let mut computed: Vec<ComputedAttr> = Vec::new();
        let mut pk_fields: Option<FieldList> = None;
        let mut sk_fields: Option<FieldList> = None;
        let result = attr.parse_nested_meta(|meta| {
            let list = meta.input.peek(Token![=]) && meta.input.peek2(syn::token::Bracket);
            if list && (meta.path.is_ident("pk") || meta.path.is_ident("sk")) {
                let (slot, list) = if meta.path.is_ident("pk") {
                    (&mut pk, &mut pk_fields)
                } else {
                    (&mut sk, &mut sk_fields)
                };
                let parsed = field_list(cx, &meta)?;
                let given = slot.given;
                slot.set(cx, &meta.path, None);
                if !given {
                    *list = Some(parsed);
                }
            } else if meta.path.is_ident("pk") {
                let lit = lit_value(cx, &meta, "pk = \"ORG#<org>\"")?;
                pk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("sk") {
                let lit = lit_value(cx, &meta, "sk = \"USER#<id>\"")?;
                sk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("when") {
                let ident = ident_value(cx, &meta, "a bool field or a method", "when = unread")?;
                when.set(cx, &meta.path, ident);
            } else if meta.path.is_ident("computed") {
                meta.parse_nested_meta(|inner| {
                    if let Some(c) = computed_value(cx, &inner)? {
                        computed.push(c);
                    }
                    Ok(())
                })?;
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
                        "unknown key `{}` in #[index]; expected the index name, then `pk`, `sk`, `when`, `query` and `computed` (or `pk = [..]` and `sk = [..]` listing fields), as in #[index(gsi1, pk = \"ORG#<org>\", sk = \"USER#<id>\")]",
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
                format!("#[index({name})] needs a `pk` template, as in #[index({name}, pk = \"ORG#<org>\")], or the fields of a multi-attribute key, as in #[index({name}, pk = [tenant, status])]"),
            );
        }
        out.push(IndexAttr {
            name,
            pk: pk.value,
            sk: sk.value,
            when: when.value,
            query: query.value,
            computed,
            pk_fields,
            sk_fields,
        });
    }
    out
}
