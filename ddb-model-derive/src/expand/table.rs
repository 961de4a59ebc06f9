//! `#[derive(Table)]`: the `Table` impl.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::Table;
use crate::attr::KeyList;

fn option<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote! { ::core::option::Option::Some(#value) },
        None => quote! { ::core::option::Option::None },
    }
}

pub fn expand(table: &Table) -> TokenStream {
    let Table { ident, name, pk, sk, type_attr, .. } = table;
    let sk = option(sk.as_ref());
    let type_attr = option(type_attr.as_ref());
    let ttl = option(table.ttl.as_ref());
    let indexes = table.gsis.iter().map(|gsi| {
        let (n, p, s) = (&gsi.name, &gsi.pk, option(gsi.sk.as_ref()));
        let list = |list: &Option<KeyList>| {
            let attrs = list.iter().flat_map(|l| &l.attrs).map(|a| {
                let (name, kind) = (&a.name, format_ident!("{}", a.kind));
                quote! {
                    ::ddb_model::KeyAttr { name: #name, kind: ::ddb_model::AttrKind::#kind }
                }
            });
            quote! { &[#(#attrs),*] }
        };
        let (pk_attrs, sk_attrs) = (list(&gsi.pk_list), list(&gsi.sk_list));
        quote! {
            ::ddb_model::IndexDef {
                name: #n, pk: #p, sk: #s, pk_attrs: #pk_attrs, sk_attrs: #sk_attrs,
            }
        }
    });
    quote! {
        impl ::ddb_model::Table for #ident {
            const NAME: &'static str = #name;
            const PK: &'static str = #pk;
            const SK: ::core::option::Option<&'static str> = #sk;
            const TYPE_ATTR: ::core::option::Option<&'static str> = #type_attr;
            const INDEXES: &'static [::ddb_model::IndexDef] = &[#(#indexes),*];
            const TTL: ::core::option::Option<&'static str> = #ttl;
        }
    }
}
