//! `#[derive(Collection)]`: an enum with one variant per entity type, read from items by
//! their entity-type attribute.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

use crate::ctxt::Ctxt;

struct Variant<'a> {
    ident: &'a syn::Ident,
    ty: &'a syn::Type,
    other: bool,
}

fn is_other(cx: &mut Ctxt, attrs: &[syn::Attribute]) -> bool {
    let mut other = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("collection")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("other") {
                if other {
                    cx.error_spanned_by(&meta.path, "duplicate `other` in #[collection]");
                }
                other = true;
                Ok(())
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    "unknown key in #[collection]; the only key is `other`, on the variant that receives items of unlisted types",
                );
                Ok(())
            }
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    other
}

pub fn derive(input: &DeriveInput) -> Result<TokenStream, syn::Error> {
    let mut cx = Ctxt::default();
    let ident = &input.ident;
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(&input.generics, "`Collection` cannot be derived for a generic enum");
    }
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("collection")) {
        cx.error_spanned_by(attr, "#[collection(other)] goes on a variant, not on the enum");
    }
    let mut variants = Vec::new();
    match &input.data {
        Data::Enum(data) => {
            for v in &data.variants {
                let other = is_other(&mut cx, &v.attrs);
                match &v.fields {
                    Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                        variants.push(Variant { ident: &v.ident, ty: &f.unnamed[0].ty, other });
                    }
                    _ => cx.error_spanned_by(
                        &v.ident,
                        format!(
                            "each variant of a collection holds one entity, as in `{}(User)`",
                            v.ident
                        ),
                    ),
                }
            }
        }
        _ => cx.error_spanned_by(
            ident,
            "`Collection` is derived on an enum with one variant per entity type, as in `enum UserItems { User(User), Order(Order) }`",
        ),
    }
    let others: Vec<&Variant> = variants.iter().filter(|v| v.other).collect();
    for extra in others.iter().skip(1) {
        cx.error_spanned_by(
            extra.ident,
            "only one variant can be #[collection(other)]: it receives every item of an unlisted type",
        );
    }
    let entities: Vec<&Variant> = variants.iter().filter(|v| !v.other).collect();
    if entities.is_empty() && matches!(input.data, Data::Enum(_)) {
        cx.error_spanned_by(ident, "a collection needs at least one entity variant");
    }
    cx.check()?;

    let Some(first) = entities.first().map(|v| v.ty) else {
        return Err(syn::Error::new_spanned(
            ident,
            "a collection needs at least one entity variant",
        ));
    };
    let name = ident.to_string();
    let names: Vec<TokenStream> = entities
        .iter()
        .map(|v| {
            let ty = v.ty;
            quote_spanned! {ty.span()=> <#ty as __ddb::Entity>::NAME }
        })
        .collect();
    // Every entity is in the first one's table, and no two variants read the same type.
    let same_table = entities.iter().skip(1).map(|v| {
        let ty = v.ty;
        quote_spanned! {ty.span()=> __ddb::same_table::<#first, #ty>(); }
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
                    !__ddb::str_eq(<#ta as __ddb::Entity>::NAME, <#tb as __ddb::Entity>::NAME),
                    #message
                );
            });
        }
    }
    let arms = entities.iter().enumerate().map(|(i, v)| {
        let (vi, ty) = (v.ident, v.ty);
        quote! { __ddb::Some(#i) => __ddb::entity_from_item::<#ty>(item).map(Self::#vi), }
    });
    let fallback = match others.first() {
        Some(v) => {
            let vi = v.ident;
            quote! { _ => __ddb::Ok(Self::#vi(item)), }
        }
        None => quote! {
            _ => __ddb::Err(__ddb::unknown_type::<<Self as __ddb::Collection>::Table>(#name, &item)),
        },
    };

    Ok(super::wrap(quote! {
        #[allow(dead_code)]
        fn __ddb_same_table() {
            #(#same_table)*
        }
        #(#distinct)*

        impl __ddb::Collection for #ident {
            type Table = <#first as __ddb::Entity>::Table;
            const NAME: &'static str = #name;
            const TYPES: &'static [&'static str] = &[#(#names),*];

            fn from_item(item: __ddb::Item) -> __ddb::Result<Self, __ddb::Error> {
                let __position = {
                    let __t = __ddb::item_type::<<Self as __ddb::Collection>::Table>(&item);
                    <Self as __ddb::Collection>::TYPES.iter().position(|n| __t == __ddb::Some(*n))
                };
                match __position {
                    #(#arms)*
                    #fallback
                }
            }
        }
    }))
}
