//! `#[derive(Collection)]`: an enum with one variant per entity type (the entity or a
//! projection of it), read from items by their entity-type attribute.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Collection, Variant};

pub fn expand(collection: &Collection) -> TokenStream {
    let ident = collection.ident;
    let entities: Vec<&Variant> = collection.entities().collect();
    let Some(first) = entities.first().map(|v| v.ty) else {
        return TokenStream::new();
    };
    let name = ident.to_string();
    let names: Vec<TokenStream> = entities
        .iter()
        .map(|v| {
            let ty = v.ty;
            quote_spanned! {ty.span()=> <<#ty as __ddb::Variant>::Entity as __ddb::Entity>::NAME }
        })
        .collect();
    // Every entity is in the first one's table, and no two variants read the same type.
    let same_table = entities.iter().skip(1).map(|v| {
        let ty = v.ty;
        quote_spanned! {ty.span()=> __ddb::same_table_variant::<#first, #ty>(); }
    });
    let mut distinct = Vec::new();
    for (i, a) in entities.iter().enumerate() {
        for b in entities.iter().skip(i + 1) {
            let (ta, tb) = (a.ty, b.ty);
            let message = format!(
                "variants `{}` and `{}` read the same entity type; keep one",
                a.ident, b.ident
            );
            distinct.push(quote_spanned! {tb.span()=>
                const _: () = ::core::assert!(
                    !__ddb::str_eq(
                        <<#ta as __ddb::Variant>::Entity as __ddb::Entity>::NAME,
                        <<#tb as __ddb::Variant>::Entity as __ddb::Entity>::NAME,
                    ),
                    #message
                );
            });
        }
    }
    let tys: Vec<_> = entities.iter().map(|v| v.ty).collect();
    let ids = entities.iter().map(|v| {
        let ty = v.ty;
        quote_spanned! {ty.span()=> __ddb::identifies::<<#ty as __ddb::Variant>::Entity> }
    });
    let arms = entities.iter().enumerate().map(|(i, v)| {
        let (vi, ty) = (v.ident, v.ty);
        quote! { __ddb::Some(#i) => <#ty as __ddb::Variant>::read(item, sealer).map(Self::#vi), }
    });
    let fallback = match collection.other() {
        Some(v) => {
            let vi = v.ident;
            quote! { _ => __ddb::Ok(Self::#vi(item)), }
        }
        None => quote! {
            _ => __ddb::Err(__ddb::unknown_type::<<Self as __ddb::Collection>::Table>(#name, &item)),
        },
    };

    super::wrap(quote! {
        #[allow(dead_code)]
        fn __ddb_same_table() {
            #(#same_table)*
        }
        #(#distinct)*

        impl __ddb::Collection for #ident {
            type Table = <<#first as __ddb::Variant>::Entity as __ddb::Entity>::Table;
            const NAME: &'static str = #name;
            const TYPES: &'static [&'static str] = &[#(#names),*];

            const CONSTANTS: &'static [&'static [__ddb::TypeTag]] = &[
                #(<<#tys as __ddb::Variant>::Entity as __ddb::Entity>::CONSTANTS),*
            ];

            const COPIES: &'static [__ddb::Option<__ddb::RekeyCopies>] = &[
                #(__ddb::rekey_copies::<<#tys as __ddb::Variant>::Entity>()),*
            ];

            const TAGGED_BY_TABLE: bool =
                #(__ddb::tagged_by_table::<<#tys as __ddb::Variant>::Entity>())&&*;

            fn projection() -> __ddb::Option<__ddb::Vec<&'static str>> {
                __ddb::collection_projection::<<Self as __ddb::Collection>::Table>(&[
                    #((
                        <#tys as __ddb::Variant>::ATTRS,
                        <<#tys as __ddb::Variant>::Entity as __ddb::Entity>::IDENTITY,
                        <<#tys as __ddb::Variant>::Entity as __ddb::Entity>::CONSTANTS,
                    )),*
                ])
            }

            fn variant_of(item: &__ddb::Item) -> __ddb::Option<usize> {
                let __ids: &[fn(&__ddb::Item, bool) -> bool] = &[#(#ids),*];
                __ddb::variant_of(item, __ids)
            }

            fn variant_of_key(keys: &__ddb::Item) -> __ddb::Option<usize> {
                let __keys: &[fn(&__ddb::Item) -> bool] =
                    &[#(__ddb::parses_key::<<#tys as __ddb::Variant>::Entity>),*];
                __keys.iter().position(|parses| parses(keys))
            }

            fn from_item(item: __ddb::Item) -> __ddb::Result<Self, __ddb::Error> {
                <Self as __ddb::Collection>::read(item, &__ddb::Sealer::NONE)
            }

            fn read(
                item: __ddb::Item,
                sealer: &__ddb::Sealer,
            ) -> __ddb::Result<Self, __ddb::Error> {
                let __position = <Self as __ddb::Collection>::variant_of(&item);
                match __position {
                    #(#arms)*
                    #fallback
                }
            }

            fn can_read(sealer: &__ddb::Sealer) -> __ddb::Result<(), __ddb::Error> {
                #(<#tys as __ddb::Variant>::can_read(sealer)?;)*
                __ddb::Ok(())
            }
        }
    })
}
