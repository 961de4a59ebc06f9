//! `#[derive(Table)]`: the `Table` impl.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::Table;
use crate::attr::{KeyList, METRICS};

fn option<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote! { ::core::option::Option::Some(#value) },
        None => quote! { ::core::option::Option::None },
    }
}

/// `&[KeyAttr { .. }, ..]` of a typed attribute list (empty when there is none).
fn key_attrs(list: &Option<KeyList>) -> TokenStream {
    let attrs = list.iter().flat_map(|l| &l.attrs).map(|a| {
        let (name, kind) = (&a.name, format_ident!("{}", a.kind));
        quote! {
            ::ddb_model::__private::KeyAttr { name: #name, kind: ::ddb_model::__private::AttrKind::#kind }
        }
    });
    quote! { &[#(#attrs),*] }
}

pub fn expand(table: &Table) -> TokenStream {
    let Table { ident, name, pk, sk, type_attr, .. } = table;
    let sk = option(sk.as_ref());
    let type_attr = option(type_attr.as_ref());
    let schema_attr = table.schema_attr.as_ref().map(|lit| {
        quote! { const SCHEMA_ATTR: &'static str = #lit; }
    });
    let ttl = option(table.ttl.as_ref());
    let tenant = table.tenant.as_ref().map(|lit| {
        quote! {
            const TENANT: ::core::option::Option<&'static str> = ::core::option::Option::Some(#lit);
        }
    });
    let tenant_table = table.tenant.as_ref().map(|_| {
        quote! { impl ::ddb_model::__private::TenantTable for #ident {} }
    });
    let none_as_null = table.none_as_null.then(|| quote! { const NONE_AS_NULL: bool = true; });
    let indexes = table.gsis.iter().map(|gsi| {
        let (n, p, s) = (&gsi.name, &gsi.pk, option(gsi.sk.as_ref()));
        let (pk_attrs, sk_attrs) = (key_attrs(&gsi.pk_list), key_attrs(&gsi.sk_list));
        quote! {
            ::ddb_model::__private::IndexDef {
                name: #n, pk: #p, sk: #s, pk_attrs: #pk_attrs, sk_attrs: #sk_attrs,
            }
        }
    });
    // On a table with a type attribute, vector indexes are partitioned by it.
    let by_type = table.type_attr.is_some();
    let vectors = table.vectors.iter().map(|v| {
        let (n, a, d) = (&v.name, &v.attr, &v.dims);
        let filters = key_attrs(&v.filters);
        let variant = METRICS.iter().find(|(m, _)| v.metric == m).map_or("Cosine", |(_, var)| var);
        let metric = format_ident!("{}", variant, span = v.metric.span());
        quote! {
            ::ddb_model::__private::VectorIndexDef {
                name: #n, attr: #a, dims: #d, metric: ::ddb_model::__private::Metric::#metric, by_type: #by_type,
                filters: #filters,
            }
        }
    });
    quote! {
        impl ::ddb_model::__private::Table for #ident {
            const NAME: &'static str = #name;
            const PK: &'static str = #pk;
            const SK: ::core::option::Option<&'static str> = #sk;
            const TYPE_ATTR: ::core::option::Option<&'static str> = #type_attr;
            const INDEXES: &'static [::ddb_model::__private::IndexDef] = &[#(#indexes),*];
            #schema_attr
            const VECTOR_INDEXES: &'static [::ddb_model::__private::VectorIndexDef] = &[#(#vectors),*];
            const TTL: ::core::option::Option<&'static str> = #ttl;
            #none_as_null
            #tenant
        }
        #tenant_table
    }
}
