//! `#[derive(Projection)]`: the attributes of the fields (the entity's typed paths name
//! them) and the reading of each field, plus an assertion per field, at its type, that the
//! entity has the field with that type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::fields::const_name;
use crate::ast::Projection;

pub fn expand(projection: &Projection) -> TokenStream {
    let Some(entity) = &projection.entity else {
        return TokenStream::new();
    };
    let ident = projection.ident;
    let paths: Vec<TokenStream> = projection
        .fields
        .iter()
        .map(|f| {
            let c = format_ident!("{}", const_name(&f.name()), span = f.ident.span());
            quote! { <#entity>::#c }
        })
        .collect();
    let checks = projection.fields.iter().zip(&paths).map(|(f, path)| {
        let ty = f.ty;
        quote_spanned! {ty.span()=> __ddb::projected_field::<#ty, _>(&#path); }
    });
    let reads = projection.fields.iter().zip(&paths).map(|(f, path)| {
        let (fi, name) = (f.ident, f.name());
        quote! { #fi: fields.take(#name, #path.name())? }
    });

    super::wrap(quote! {
        #[allow(dead_code)]
        fn __ddb_projected_fields() {
            #(#checks)*
        }

        impl __ddb::Projection for #ident {
            type Entity = #entity;
            const ATTRS: &'static [&'static str] = &[#(#paths.name()),*];
            fn from_fields(
                fields: &mut __ddb::ProjectedFields,
            ) -> __ddb::Result<Self, ::ddb_model::__private::SerdeDynamoError> {
                __ddb::Ok(Self { #(#reads),* })
            }
        }

        impl __ddb::Variant for #ident {
            type Entity = #entity;
            const ATTRS: __ddb::Option<&'static [&'static str]> =
                __ddb::Some(<Self as __ddb::Projection>::ATTRS);
            fn from_item(item: __ddb::Item) -> __ddb::Result<Self, __ddb::Error> {
                __ddb::projection_variant::<Self>(item)
            }
        }
    })
}
