//! `#[derive(Table)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, LitStr};

use crate::attr;
use crate::ctxt::Ctxt;

pub fn derive(input: &DeriveInput) -> Result<TokenStream, syn::Error> {
    let mut cx = Ctxt::default();
    let attrs = attr::table_attrs(&mut cx, &input.attrs);
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "`Table` cannot be derived for a generic type");
    }

    let ident = &input.ident;
    let name = attrs.name.value.as_ref().map_or_else(|| ident.to_string(), LitStr::value);
    let pk = attrs.pk.value.as_ref().map_or_else(|| "pk".to_owned(), LitStr::value);
    let sk = match (&attrs.sk.value, &attrs.no_sort_key.value) {
        (Some(sk), Some(flag)) => {
            cx.error_spanned_by(flag, "`no_sort_key` contradicts `sk`: keep one of them");
            Some(sk.value())
        }
        (Some(sk), None) => Some(sk.value()),
        (None, Some(_)) => None,
        (None, None) => Some("sk".to_owned()),
    };
    let type_attr =
        attrs.type_attr.value.as_ref().map_or_else(|| "_type".to_owned(), LitStr::value);

    if sk.as_deref() == Some(pk.as_str()) {
        let at = attrs.sk.value.as_ref().map_or_else(|| ident.span(), LitStr::span);
        cx.error_at(at, format!(
                "the sort key attribute cannot be the partition key attribute `{pk}`: pick another name, or write `no_sort_key` for a table without a sort key"
            ));
    }
    if type_attr == pk || sk.as_deref() == Some(type_attr.as_str()) {
        // Point at the setting that differs from the defaults: an explicit `type_attr`, else
        // the key attribute that took the default `_type`.
        let (role, key_lit) = if type_attr == pk {
            ("partition", &attrs.pk.value)
        } else {
            ("sort", &attrs.sk.value)
        };
        let at = attrs
            .type_attr
            .value
            .as_ref()
            .or(key_lit.as_ref())
            .map_or_else(|| ident.span(), LitStr::span);
        cx.error_at(
            at,
            format!(
                "the entity type attribute and the {role} key attribute are both `{type_attr}`: each item stores its entity type in an attribute of its own; pick another name"
            ),
        );
    }
    let mut seen: Vec<String> = Vec::new();
    for gsi in &attrs.gsis {
        let gsi_name = gsi.name.value();
        if seen.contains(&gsi_name) {
            cx.error_spanned_by(
                &gsi.name,
                format!(
                    "duplicate gsi name `{gsi_name}`: each index of a table needs its own name"
                ),
            );
        }
        seen.push(gsi_name.clone());
        if gsi.sk.as_ref().map(LitStr::value) == Some(gsi.pk.value()) {
            cx.error_spanned_by(
                &gsi.pk,
                format!("gsi `{gsi_name}`: its partition and sort key attributes must differ"),
            );
        }
        for lit in std::iter::once(&gsi.pk).chain(gsi.sk.as_ref()) {
            if lit.value() == type_attr {
                cx.error_spanned_by(lit, format!("gsi `{gsi_name}` cannot be keyed by the entity type attribute `{type_attr}`"));
            }
        }
    }
    cx.check()?;

    let sk_tokens = match &sk {
        Some(sk) => quote! { ::core::option::Option::Some(#sk) },
        None => quote! { ::core::option::Option::None },
    };
    let indexes = attrs.gsis.iter().map(|gsi| {
        let (n, p) = (&gsi.name, &gsi.pk);
        let s = match &gsi.sk {
            Some(s) => quote! { ::core::option::Option::Some(#s) },
            None => quote! { ::core::option::Option::None },
        };
        quote! { ::ddb_model::IndexDef { name: #n, pk: #p, sk: #s } }
    });
    Ok(quote! {
        impl ::ddb_model::Table for #ident {
            const NAME: &'static str = #name;
            const PK: &'static str = #pk;
            const SK: ::core::option::Option<&'static str> = #sk_tokens;
            const TYPE_ATTR: &'static str = #type_attr;
            const INDEXES: &'static [::ddb_model::IndexDef] = &[#(#indexes),*];
        }
    })
}
