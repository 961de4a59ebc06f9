//! `#[table(name = "..", pk = "..", sk = "..", no_sort_key, type_attr = "..", gsi(..))]`.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use super::{Slot, flag, lit_value, skip_value, unknown_key};
use crate::ctxt::Ctxt;

pub struct GsiAttr {
    pub name: LitStr,
    pub pk: LitStr,
    pub sk: Option<LitStr>,
}

pub struct TableAttrs {
    pub name: Slot<LitStr>,
    pub pk: Slot<LitStr>,
    pub sk: Slot<LitStr>,
    pub no_sort_key: Slot<syn::Path>,
    pub type_attr: Slot<LitStr>,
    pub no_type_attr: Slot<syn::Path>,
    pub gsis: Vec<GsiAttr>,
}

const TABLE_KEYS: &str = "name, pk, sk, no_sort_key, type_attr, no_type_attr, gsi";

fn non_empty(cx: &mut Ctxt, lit: &Option<LitStr>, what: &str) {
    if let Some(lit) = lit.as_ref().filter(|l| l.value().is_empty()) {
        cx.error_spanned_by(lit, format!("{what} cannot be empty"));
    }
}

pub fn table_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> TableAttrs {
    let mut out = TableAttrs {
        name: Slot::new("table", "name"),
        pk: Slot::new("table", "pk"),
        sk: Slot::new("table", "sk"),
        no_sort_key: Slot::new("table", "no_sort_key"),
        type_attr: Slot::new("table", "type_attr"),
        no_type_attr: Slot::new("table", "no_type_attr"),
        gsis: Vec::new(),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("table")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = meta.path.clone();
            if path.is_ident("name") {
                let lit = lit_value(cx, &meta, "name = \"app\"")?;
                non_empty(cx, &lit, "the table name");
                out.name.set(cx, &path, lit);
            } else if path.is_ident("pk") {
                let lit = lit_value(cx, &meta, "pk = \"pk\"")?;
                non_empty(cx, &lit, "a key attribute name");
                out.pk.set(cx, &path, lit);
            } else if path.is_ident("sk") {
                let lit = lit_value(cx, &meta, "sk = \"sk\"")?;
                non_empty(cx, &lit, "a key attribute name");
                out.sk.set(cx, &path, lit);
            } else if path.is_ident("no_sort_key") {
                flag(cx, &meta, "table")?;
                out.no_sort_key.set(cx, &path, Some(path.clone()));
            } else if path.is_ident("type_attr") {
                let lit = lit_value(cx, &meta, "type_attr = \"_type\"")?;
                non_empty(cx, &lit, "the entity type attribute name");
                out.type_attr.set(cx, &path, lit);
            } else if path.is_ident("no_type_attr") {
                flag(cx, &meta, "table")?;
                out.no_type_attr.set(cx, &path, Some(path.clone()));
            } else if path.is_ident("gsi") {
                gsi(cx, &meta, &mut out.gsis)?;
            } else {
                unknown_key(cx, &meta, "table", TABLE_KEYS)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

const GSI_EXAMPLE: &str = "gsi(name = \"gsi1\", pk = \"gsi1pk\", sk = \"gsi1sk\")";

/// `gsi(name = "...", pk = "...", sk = "...")` inside #[table].
fn gsi(cx: &mut Ctxt, meta: &ParseNestedMeta, gsis: &mut Vec<GsiAttr>) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`gsi` describes one index in parentheses, as in {GSI_EXAMPLE}"),
        );
        return skip_value(meta);
    }
    let mut name = Slot::new("table(gsi)", "name");
    let mut pk = Slot::new("table(gsi)", "pk");
    let mut sk = Slot::new("table(gsi)", "sk");
    meta.parse_nested_meta(|inner| {
        let key = inner.path.clone();
        let slot = if key.is_ident("name") {
            &mut name
        } else if key.is_ident("pk") {
            &mut pk
        } else if key.is_ident("sk") {
            &mut sk
        } else {
            return unknown_key(cx, &inner, "table(gsi)", "name, pk, sk");
        };
        let lit = lit_value(cx, &inner, GSI_EXAMPLE)?;
        non_empty(cx, &lit, "a gsi name or key attribute");
        slot.set(cx, &key, lit);
        Ok(())
    })?;
    for (slot, what) in [
        (&name, "`name`: the index name"),
        (&pk, "`pk`: the attribute holding the index partition key"),
    ] {
        if !slot.given {
            cx.error_spanned_by(&meta.path, format!("gsi(...) needs {what}, as in {GSI_EXAMPLE}"));
        }
    }
    if let (Some(name), Some(pk)) = (name.value, pk.value) {
        gsis.push(GsiAttr { name, pk, sk: sk.value });
    }
    Ok(())
}
