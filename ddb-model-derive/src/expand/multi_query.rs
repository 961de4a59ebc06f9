//! Multi-attribute indexes (`#[index(by_status, pk = [tenant, status], sk = [priority, created])]`):
//! the compile-time checks against the table, and the query constructor with one level per
//! sort attribute.
//!
//! `Order::query_by_status(&db, tenant, status)` returns `OrderByStatusQuery<'_, 0>`, whose
//! `priority(..)` returns level 1, whose `created(..)` returns the finished query; each level
//! also has the ranges on its attribute (`priority_between`, `priority_gt`, ...,
//! `created_begins_with` for strings). A level exists only after the one before it, so a
//! range on `created` without `priority`'s equality does not compile, as the service
//! requires. Level types are the same shape as the template levels' (`query.rs`): they wrap
//! the runtime's `LevelQuery`, dereference to it, and are futures.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Items;
use crate::ast::{Entity, Field, MultiIndex};

fn pascal(name: &str) -> String {
    name.split('_')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let mut chars = p.chars();
            chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

fn level_ty(entity: &Entity, index: &MultiIndex) -> syn::Ident {
    format_ident!("{}{}Query", entity.ident, pascal(&index.path_name().to_string()))
}

fn fields<'e, 'a>(entity: &'e Entity<'a>, list: &[(usize, syn::Ident)]) -> Vec<&'e Field<'a>> {
    list.iter().filter_map(|(i, _)| entity.fields.get(*i)).collect()
}

/// The field type the query arguments of field `f` are checked against (`AttrArg<T>`): a
/// type that is no index attribute is one error, at the field (`checks`), not one per method.
fn value_ty(f: &Field) -> TokenStream {
    let ty = f.ty;
    quote! { #ty }
}

/// The compile-time checks: the table has the index with as many attributes per key (at the
/// index name), each listed field is stored under the attribute's name (at the field in the
/// list) with the attribute's type (at the field's type).
pub fn checks(entity: &Entity) -> TokenStream {
    let ident = entity.ident;
    let mut out = TokenStream::new();
    for index in &entity.multi_indexes {
        let name = index.name.to_string();
        let (npk, nsk) = (index.pk.len(), index.sk.len());
        out.extend(quote_spanned! {index.name.span()=>
            const _: () = match __ddb::multi_index_check::<#ident>(#name, #npk, #nsk, __TABLE) {
                __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                __ddb::None => {}
            };
        });
        for (in_pk, list) in [(true, &index.pk), (false, &index.sk)] {
            for (pos, (i, listed)) in list.iter().enumerate() {
                let Some(field) = entity.fields.get(*i) else { continue };
                let (fname, attr, ty) = (field.name(), &field.attr_name, field.ty);
                out.extend(quote_spanned! {listed.span()=>
                    const _: () = match __ddb::multi_attr_name_check::<#ident>(
                        #name, #in_pk, #pos, #fname, #attr, __TABLE,
                    ) {
                        __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                        __ddb::None => {}
                    };
                });
                out.extend(quote_spanned! {ty.span()=>
                    const _: () = match __ddb::multi_attr_kind_check::<#ident, #ty>(
                        #name, #in_pk, #pos, #fname, __TABLE,
                    ) {
                        __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                        __ddb::None => {}
                    };
                });
            }
        }
    }
    out
}

/// The level types, declared next to the entity.
pub fn types(entity: &Entity) -> TokenStream {
    let (ident, vis) = (entity.ident, entity.vis);
    let mut out = TokenStream::new();
    for index in entity.multi_indexes.iter().filter(|i| !i.sk.is_empty()) {
        let level_ty = level_ty(entity, index);
        let names: Vec<String> =
            fields(entity, &index.sk).iter().map(|f| format!("`{}`", f.name())).collect();
        let doc = format!(
            "Query of `{ident}` on the multi-attribute index `{}`, its sort attributes fixed in order: {}. Made by [`{ident}::query_{}`]; `L` counts the attributes fixed so far.",
            index.name,
            names.join(", then "),
            index.path_name(),
        );
        out.extend(quote! {
            #[doc = #doc]
            #[must_use = "a query does nothing until it is run"]
            #vis struct #level_ty<'__db, const L: usize>(
                ::ddb_model::__private::LevelQuery<'__db, #ident, ::ddb_model::__private::OnIndex>,
            );
        });
    }
    out
}

pub fn expand(entity: &Entity, db: &TokenStream) -> Items {
    let mut items = Items::default();
    for index in &entity.multi_indexes {
        items.inherent.extend(constructors(entity, index, db));
        let sk = fields(entity, &index.sk);
        for i in 0..sk.len() {
            items.other.extend(level(entity, index, &sk, i));
        }
        if !sk.is_empty() {
            items.other.extend(level_traits(entity, index));
        }
    }
    items
}

/// `E::query_<index>(db, ..)` and `E::partition_<index>(db, ..)`.
fn constructors(entity: &Entity, index: &MultiIndex, db: &TokenStream) -> TokenStream {
    let (ident, vis) = (entity.ident, entity.vis);
    let path = index.path_name().to_string();
    let (query_fn, partition_fn) =
        (format_ident!("query_{path}"), format_ident!("partition_{path}"));
    let pk = fields(entity, &index.pk);
    let params = pk.iter().map(|f| {
        let (fi, value) = (f.ident, value_ty(f));
        quote! { #fi: impl __ddb::AttrArg<#value> }
    });
    let values = pk.iter().map(|f| {
        let fi = f.ident;
        quote! { __ddb::AttrArg::attr_value(&#fi) }
    });
    let name = index.name.to_string();
    let start = quote! {
        __ddb::LevelQuery::new(db, __ddb::KeyStart::attributes(
            __ddb::table_index::<#ident>(#name),
            #name,
            ::std::vec![#(#values),*],
        ))
    };
    let pk_names: Vec<String> = pk.iter().map(|f| format!("`{}`", f.name())).collect();
    let sk_names: Vec<String> =
        fields(entity, &index.sk).iter().map(|f| format!("`{}`", f.name())).collect();
    let q = quote! { __ddb::EntityQuery<'__db, #ident, __ddb::OnIndex> };
    let partition_doc = format!(
        "Every `{ident}` of one partition of the multi-attribute index `{name}` ({}), in the order of its sort attributes.",
        pk_names.join(", ")
    );
    let (query_doc, query_ty, body) = if index.sk.is_empty() {
        let doc = format!(
            "Query of `{ident}` on the multi-attribute index `{name}`: the partition given by {}.",
            pk_names.join(", ")
        );
        (doc, q.clone(), quote! { __ddb::LevelQuery::finish(#start) })
    } else {
        let doc = format!(
            "Query of `{ident}` on the multi-attribute index `{name}`: the partition given by {}, then equality on a leading run of the sort attributes and at most one range on the next ({}), in that order. An `Option` field's item whose value is `None` is not in the index.",
            pk_names.join(", "),
            sk_names.join(" → ")
        );
        let level_ty = level_ty(entity, index);
        (doc, quote! { #level_ty<'__db, 0> }, quote! { #level_ty(#start) })
    };
    let params2 = params.clone();
    quote! {
        #[doc = #query_doc]
        #vis fn #query_fn<'__db>(db: &'__db #db, #(#params),*) -> #query_ty {
            #body
        }

        #[doc = #partition_doc]
        #vis fn #partition_fn<'__db>(db: &'__db #db, #(#params2),*) -> #q {
            __ddb::LevelQuery::finish(#start)
        }
    }
}

/// The methods of level `i`: equality on its attribute (the next level, or the finished
/// query on the last), or a range on it.
fn level(entity: &Entity, index: &MultiIndex, sk: &[&Field], i: usize) -> TokenStream {
    let Some(field) = sk.get(i) else {
        return TokenStream::new();
    };
    let (ident, vis) = (entity.ident, entity.vis);
    let level_ty = level_ty(entity, index);
    let q = quote! { __ddb::EntityQuery<'__db, #ident, __ddb::OnIndex> };
    let (fi, name, value) = (field.ident, field.name(), value_ty(field));
    let arg = quote! { impl __ddb::AttrArg<#value> };
    let (eq_doc, eq) = if i + 1 == sk.len() {
        let doc = format!("`{name}` equals the value: every sort attribute fixed.");
        (doc, quote! { -> #q { __ddb::LevelQuery::attr_last(self.0, #fi) } })
    } else {
        let next = sk.get(i + 1).map(|f| f.name()).unwrap_or_default();
        let doc = format!("`{name}` equals the value; the next attribute is `{next}`.");
        let l = i + 1;
        let body = quote! { #level_ty(__ddb::LevelQuery::attr_next(self.0, #fi)) };
        (doc, quote! { -> #level_ty<'__db, #l> { #body } })
    };
    let [between, gt, ge, lt, le, begins] =
        ["between", "gt", "ge", "lt", "le", "begins_with"].map(|op| format_ident!("{name}_{op}"));
    let order = "Values compare as DynamoDB compares them: numbers by value (9 < 10, negatives first), strings and binaries by their bytes (UTF-8). An empty string is below every stored value: a lower bound `\"\"` is no bound, and a range that holds no value sends no request.";
    let [gt_doc, ge_doc, lt_doc, le_doc] =
        ["greater than", "greater than or equal to", "less than", "less than or equal to"]
            .map(|rel| format!("`{name}` {rel} `value`. {order}"));
    let between_doc = format!(
        "`low <= {name} <= high` (inclusive). {order} Bounds in the wrong order hold no value: no request is sent."
    );
    let begins_doc = format!(
        "`{name}` starts with `prefix` (string attributes only: it does not compile on a number). An empty prefix matches every value."
    );
    quote! {
        impl<'__db> #level_ty<'__db, #i> {
            #[doc = #eq_doc]
            #vis fn #fi(self, #fi: #arg) #eq

            #[doc = #between_doc]
            #vis fn #between(self, low: #arg, high: #arg) -> #q {
                __ddb::LevelQuery::attr_between(self.0, low, high)
            }

            #[doc = #gt_doc]
            #vis fn #gt(self, value: #arg) -> #q {
                __ddb::LevelQuery::attr_gt(self.0, value)
            }

            #[doc = #ge_doc]
            #vis fn #ge(self, value: #arg) -> #q {
                __ddb::LevelQuery::attr_ge(self.0, value)
            }

            #[doc = #lt_doc]
            #vis fn #lt(self, value: #arg) -> #q {
                __ddb::LevelQuery::attr_lt(self.0, value)
            }

            #[doc = #le_doc]
            #vis fn #le(self, value: #arg) -> #q {
                __ddb::LevelQuery::attr_le(self.0, value)
            }

            #[doc = #begins_doc]
            #vis fn #begins(self, prefix: impl __ddb::AttrPrefix<#value>) -> #q {
                __ddb::LevelQuery::attr_begins_with(self.0, prefix)
            }
        }
    }
}

/// Every level dereferences to `LevelQuery` (which finishes the query with the attributes
/// fixed so far) and is a future that runs `all`.
fn level_traits(entity: &Entity, index: &MultiIndex) -> TokenStream {
    let (ident, level_ty) = (entity.ident, level_ty(entity, index));
    quote! {
        impl<'__db, const L: usize> ::core::ops::Deref for #level_ty<'__db, L> {
            type Target = __ddb::LevelQuery<'__db, #ident, __ddb::OnIndex>;
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        impl<'__db, const L: usize> ::core::future::Future for #level_ty<'__db, L> {
            type Output = __ddb::Result<__ddb::Vec<#ident>, __ddb::Error>;
            fn poll(
                self: ::core::pin::Pin<&mut Self>,
                cx: &mut ::core::task::Context<'_>,
            ) -> ::core::task::Poll<Self::Output> {
                __ddb::LevelQuery::poll_all(&mut ::core::pin::Pin::into_inner(self).0, cx)
            }
        }
    }
}
