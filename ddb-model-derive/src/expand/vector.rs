//! `#[vector(index)]` fields: the compile-time checks against the table's vector index, and
//! the searches (`nearest`, and `nearest_<index>` for each vector field).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Items;
use crate::ast::Entity;

pub fn expand(entity: &Entity, db: &TokenStream) -> Items {
    let (ident, vis) = (entity.ident, entity.vis);
    let vectors: Vec<_> =
        entity.fields.iter().filter_map(|f| f.vector.as_ref().map(|i| (f, i))).collect();
    if vectors.is_empty() {
        return Items::default();
    }
    let attrs: Vec<&String> = entity
        .fields
        .iter()
        .filter(|f| f.is_stored() && f.from_key.is_none())
        .map(|f| &f.attr_name)
        .collect();
    let mut other = quote! {
        const __VECTOR_FIELDS: &[&str] = &[#(#attrs),*];
    };
    let mut inherent = TokenStream::new();
    for (field, index) in &vectors {
        let (name, attr, ty) = (index.to_string(), &field.attr_name, field.ty);
        let field_name = field.name();
        other.extend(quote_spanned! {index.span()=>
            const _: () = match __ddb::vector_field_check::<#ident>(#name, #field_name, #attr, __TABLE) {
                __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                __ddb::None => {}
            };
        });
        other.extend(quote_spanned! {ty.span()=>
            const _: () = __ddb::vector_field::<#ty>();
        });
        let doc = format!(
            "The `k` (1 to 100) `{ident}`s whose `{}` is nearest to `vector`, nearest first, with their scores: one `SearchVectors` request on vector index `{name}` (see [`Nearest`](::ddb_model::ops::Nearest)).",
            field.name()
        );
        let method = format_ident!("nearest_{}", name);
        inherent.extend(quote! {
            #[doc = #doc]
            #vis fn #method<'a>(db: &'a #db, k: usize, vector: &[f32]) -> __ddb::Nearest<'a, Self> {
                __ddb::nearest::<Self>(db, #name, __VECTOR_FIELDS, k, vector)
            }
        });
        if vectors.len() == 1 {
            inherent.extend(quote! {
                #[doc = #doc]
                #vis fn nearest<'a>(db: &'a #db, k: usize, vector: &[f32]) -> __ddb::Nearest<'a, Self> {
                    __ddb::nearest::<Self>(db, #name, __VECTOR_FIELDS, k, vector)
                }
            });
        }
    }
    Items { inherent, other }
}
