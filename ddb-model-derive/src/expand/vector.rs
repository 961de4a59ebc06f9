//! `#[vector(index)]` fields: the compile-time checks against the table's vector index, and
//! the searches (`nearest`, and `nearest_<index>` for each vector field).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Items;
use super::checks::lit;
use crate::ast::Entity;

pub fn expand(entity: &Entity, db: &TokenStream) -> Items {
    let (ident, vis, table) = (entity.ident, entity.vis, entity.table_display());
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
        let missing = lit(format!(
            "{table} has no vector index `{name}`: declare it with #[table(vector(name = \"{name}\", attr = \"{attr}\", dims = .., metric = cosine))]"
        ));
        let wrong_attr = lit(format!(
            "vector index `{name}` of {table} stores its vectors in another attribute than `{attr}`, where field `{}` is stored: name the index's attribute with #[serde(rename = \"...\")]",
            field.name()
        ));
        let untagged = lit(format!(
            "vector index `{name}` of {table} is partitioned by the table's entity type attribute, which `{ident}` does not write (it has its own type attribute, or none): use the table's"
        ));
        other.extend(quote_spanned! {index.span()=>
            const _: () = match __ddb::table_vector_index::<#ident>(#name) {
                __ddb::None => ::core::panic!(#missing),
                __ddb::Some(index) => if !__ddb::str_eq(index.attr, #attr) {
                    ::core::panic!(#wrong_attr)
                } else if index.by_type && !__ddb::tagged_by_table::<#ident>() {
                    ::core::panic!(#untagged)
                },
            };
        });
        other.extend(quote_spanned! {ty.span()=>
            const _: () = __ddb::vector_field::<#ty>();
        });
        let doc = format!(
            "The `k` (1 to 100) `{ident}`s whose `{}` is nearest to `vector`, nearest first, with their scores: one `SearchVectors` request on vector index `{name}` (see [`Nearest`](::ddb_model::Nearest)).",
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
