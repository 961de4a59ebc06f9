//! Query constructors: one per access path (the table's primary key and every index), taking
//! the partition-key fields, then one level per sort-key placeholder, in template order.
//!
//! For `sk = "<state>#<city>#<zip>"` the derive generates `Store::query(&db, country)`
//! returning `StoreQuery<'a, 0>`, whose `state(..)` returns `StoreQuery<'a, 1>`, whose
//! `city(..)` returns `StoreQuery<'a, 2>`, whose `zip(..)` returns the finished query. Each
//! level also has range methods on its placeholder (`state_between`, `state_gt`, ...). A
//! level exists only after the one before it, so skipping a level does not compile.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Entity, Field};
use crate::template::{Segment, Template};

/// Method names the levels forward to the finished query.
const FORWARDS: &[&str] = &[
    "limit",
    "page_size",
    "reverse",
    "consistent",
    "filter",
    "project",
    "collection",
    "items",
    "all",
    "first",
    "stream",
    "pages",
    "page",
    "count",
];

struct AccessPath<'e> {
    /// `None`: the table's primary key.
    index: Option<&'e syn::Ident>,
    pk: &'e Template,
    sk: Option<&'e Template>,
}

struct Level<'a, 'e> {
    field: &'e Field<'a>,
    /// The literal after the placeholder (empty at the end of the template).
    lit_after: String,
}

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

pub fn expand(entity: &Entity, table: &TokenStream) -> (TokenStream, TokenStream) {
    let mut outside = TokenStream::new();
    let mut inside = TokenStream::new();
    let paths = std::iter::once(AccessPath { index: None, pk: &entity.pk, sk: entity.sk.as_ref() })
        .chain(entity.indexes.iter().map(|i| AccessPath {
            index: Some(&i.name),
            pk: &i.pk,
            sk: i.sk.as_ref(),
        }));
    for path in paths {
        let (o, i) = access_path(entity, table, &path);
        outside.extend(o);
        inside.extend(i);
    }
    (outside, inside)
}

fn access_path(
    entity: &Entity,
    table: &TokenStream,
    path: &AccessPath,
) -> (TokenStream, TokenStream) {
    let ident = entity.ident;
    let vis = entity.vis;
    let on_index = path.index.is_some();
    let on = if on_index { quote!(__ddb::OnIndex) } else { quote!(__ddb::OnTable) };
    let on_abs = if on_index {
        quote!(::ddb_model::__private::OnIndex)
    } else {
        quote!(::ddb_model::__private::OnTable)
    };
    let arg_bound = |field: &Field| arg_bound(field, on_index);
    let arg_text = |field: &Field, value: &TokenStream| arg_text(field, value, on_index);
    let (pk_params, pk_expr) = partition_args(entity, path.pk, on_index);

    // Sort-key levels: the literal before the first placeholder, then the placeholders not
    // bound already (by the partition key or an earlier occurrence).
    let mut base = String::new();
    let mut levels: Vec<Level> = Vec::new();
    let mut total = 0usize;
    if let Some(sk) = path.sk {
        let mut bound: Vec<String> = path.pk.fields().map(|(n, _)| n.to_owned()).collect();
        let mut stopped = false;
        for (i, segment) in sk.segments.iter().enumerate() {
            match segment {
                Segment::Lit(l) if total == 0 => base.push_str(l),
                Segment::Lit(_) => {}
                Segment::Field { name, .. } => {
                    total += 1;
                    let Some(field) = entity.field(name) else {
                        stopped = true;
                        continue;
                    };
                    if stopped || bound.contains(name) {
                        stopped = true;
                        continue;
                    }
                    bound.push(name.clone());
                    let lit_after = match sk.segments.get(i + 1) {
                        Some(Segment::Lit(l)) => l.clone(),
                        _ => String::new(),
                    };
                    levels.push(Level { field, lit_after });
                }
            }
        }
    }

    let suffix = path.index.map(|i| format!("_{i}")).unwrap_or_default();
    let query_fn = format_ident!("query{}", suffix);
    let partition_fn = format_ident!("partition{}", suffix);
    let index_start = match path.index {
        None => quote! { __ddb::KeyStart::new(__ddb::None, #pk_expr, #base) },
        Some(index) => {
            let name = index.to_string();
            quote! {
                __ddb::KeyStart::on_index(
                    const { __ddb::table_index::<#ident>(#name) }, #name, #pk_expr, #base,
                )
            }
        }
    };
    let from = quote! {
        __ddb::QueryFrom::<'__db, #ident, #on>::new(db, #index_start)
    };
    let where_text = match path.index {
        None => "the table".to_owned(),
        Some(i) => format!("index `{i}`"),
    };
    let pk_text = &path.pk.text;
    let sk_text = path.sk.map(|s| s.text.as_str()).unwrap_or("");
    let partition_doc = format!(
        "Every `{ident}` of one partition of {where_text} (`{pk_text}`), whatever its sort key; `.collection::<C>()` reads the partition's other entity types too."
    );
    let partition = quote! {
        #[doc = #partition_doc]
        #vis fn #partition_fn<'__db>(
            db: &'__db __ddb::Db<#table>,
            #(#pk_params),*
        ) -> __ddb::EntityQuery<'__db, #ident, #on> {
            #from.partition()
        }
    };

    if levels.is_empty() {
        // No levels: the query is the partition (and the literal sort key, if any).
        let query_doc = if path.sk.is_some() {
            format!(
                "Query of `{ident}` on {where_text}: partition `{pk_text}`, sort key `{sk_text}`."
            )
        } else {
            format!("Query of `{ident}` on {where_text}: partition `{pk_text}`.")
        };
        let body = if path.sk.is_some() && total == 0 {
            quote! { #from.eq("", "") }
        } else {
            quote! { #from.prefix() }
        };
        let inside = quote! {
            impl #ident {
                #[doc = #query_doc]
                #vis fn #query_fn<'__db>(
                    db: &'__db __ddb::Db<#table>,
                    #(#pk_params),*
                ) -> __ddb::EntityQuery<'__db, #ident, #on> {
                    #body
                }

                #partition
            }
        };
        return (TokenStream::new(), inside);
    }

    // The level type.
    let level_ty = match path.index {
        None => format_ident!("{}Query", ident),
        Some(i) => format_ident!("{}{}Query", ident, pascal(&i.to_string())),
    };
    let level_names: Vec<String> = levels.iter().map(|l| l.field.name()).collect();
    let struct_doc = format!(
        "Query of `{ident}` on {where_text}, built level by level from the sort key `{sk_text}`: {}. Made by [`{ident}::{query_fn}`]; `L` counts the levels fixed so far.",
        level_names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", then ")
    );
    let outside = quote! {
        #[doc = #struct_doc]
        #[must_use = "a query does nothing until it is run"]
        #vis struct #level_ty<'__db, const L: usize>(
            ::ddb_model::__private::QueryFrom<'__db, #ident, #on_abs>,
        );
    };

    let query_doc = format!(
        "Query of `{ident}` on {where_text}: partition `{pk_text}`, then the sort key `{sk_text}` level by level ({}).",
        level_names.join(" → ")
    );

    let mut method_names: Vec<String> = Vec::new();
    let mut level_impls = Vec::new();
    for (i, level) in levels.iter().enumerate() {
        let field = level.field;
        let name = field.name();
        let fi = field.ident;
        let bound = arg_bound(field);
        let text = |v: &TokenStream| arg_text(field, v);
        let lit = &level.lit_after;
        let sep = match lit.chars().next() {
            Some(c) => quote! { __ddb::Some(#c) },
            None => quote! { __ddb::None },
        };
        let l = i;
        let is_last = i + 1 == total;
        let (next_ty, next_body) = if is_last {
            let t = text(&quote!(#fi));
            (quote! { __ddb::EntityQuery<'__db, #ident, #on> }, quote! { self.0.eq(&#t, #lit) })
        } else {
            let next = l + 1;
            let t = text(&quote!(#fi));
            (quote! { #level_ty<'__db, #next> }, quote! { #level_ty(self.0.push(&#t, #lit)) })
        };
        let eq_doc = if is_last {
            format!("`{name}` equals the value: the full sort key.")
        } else {
            format!(
                "`{name}` equals the value; the next level is `{}`.",
                level_names.get(i + 1).map_or("", |s| s.as_str())
            )
        };
        let between = format_ident!("{}_between", name);
        let gt = format_ident!("{}_gt", name);
        let ge = format_ident!("{}_ge", name);
        let lt = format_ident!("{}_lt", name);
        let le = format_ident!("{}_le", name);
        let begins = format_ident!("{}_begins_with", name);
        for m in [
            &name,
            &between.to_string(),
            &gt.to_string(),
            &ge.to_string(),
            &lt.to_string(),
            &le.to_string(),
            &begins.to_string(),
        ] {
            method_names.push(m.clone());
        }
        let lo = text(&quote!(low));
        let hi = text(&quote!(high));
        let v = text(&quote!(value));
        let q = quote! { __ddb::EntityQuery<'__db, #ident, #on> };
        let order_doc = format!(
            "Values of `{name}` compare as their escaped key text, by UTF-8 bytes (`%` and the separators `# / | ~ :` written as `%25 %23 %2F %7C %7E %3A`): the order the service sorts keys in, which is the natural order for fixed-width numbers, dates, UUIDs and strings without those characters. The result is exactly the values in the range, over the whole of Unicode. `\"\"` is the smallest value: a lower bound `\"\"` is no lower bound, and a range that holds no value sends no request."
        );
        level_impls.push(quote! {
            impl<'__db> #level_ty<'__db, #l> {
                #[doc = #eq_doc]
                #vis fn #fi(self, #fi: #bound) -> #next_ty {
                    #next_body
                }

                /// `low <= value <= high` on this level (inclusive).
                ///
                #[doc = #order_doc]
                #vis fn #between(self, low: #bound, high: #bound) -> #q {
                    self.0.range(__ddb::Included(&#lo), __ddb::Included(&#hi), #sep)
                }

                /// Values greater than `value` on this level.
                ///
                #[doc = #order_doc]
                #vis fn #gt(self, value: #bound) -> #q {
                    self.0.range(__ddb::Excluded(&#v), __ddb::Unbounded, #sep)
                }

                /// Values greater than or equal to `value` on this level.
                ///
                #[doc = #order_doc]
                #vis fn #ge(self, value: #bound) -> #q {
                    self.0.range(__ddb::Included(&#v), __ddb::Unbounded, #sep)
                }

                /// Values less than `value` on this level.
                ///
                #[doc = #order_doc]
                #vis fn #lt(self, value: #bound) -> #q {
                    self.0.range(__ddb::Unbounded, __ddb::Excluded(&#v), #sep)
                }

                /// Values less than or equal to `value` on this level.
                ///
                #[doc = #order_doc]
                #vis fn #le(self, value: #bound) -> #q {
                    self.0.range(__ddb::Unbounded, __ddb::Included(&#v), #sep)
                }

                /// Values of this level that start with `prefix` (escaped like any value, so a
                /// separator in `prefix` never reaches into the next level). An empty `prefix`
                /// matches every value.
                #vis fn #begins(self, prefix: &str) -> #q {
                    self.0.begins_with(prefix)
                }
            }
        });
    }

    // Forwards from any level to the finished query, unless a level method has the name.
    let clash = method_names.iter().any(|m| FORWARDS.contains(&m.as_str()));
    let q = quote! { __ddb::EntityQuery<'__db, #ident, #on> };
    let consistent = if on_index {
        quote! {}
    } else {
        quote! {
            /// Strongly consistent read (see `Query::consistent`).
            #vis fn consistent(self) -> #q { self.into_query().consistent() }
        }
    };
    let forwards = if clash {
        quote! {}
    } else {
        quote! {
            /// At most `n` items (see `Query::limit`).
            #vis fn limit(self, n: usize) -> #q { self.into_query().limit(n) }
            /// Items evaluated per request (see `Query::page_size`).
            #vis fn page_size(self, n: u32) -> #q { self.into_query().page_size(n) }
            /// Descending sort-key order.
            #vis fn reverse(self) -> #q { self.into_query().reverse() }
            #consistent
            /// Keeps the items for which `condition` holds (see `Query::filter`).
            #vis fn filter(self, condition: __ddb::Condition<#ident>) -> #q {
                self.into_query().filter(condition)
            }
            /// Reads only some attributes (see `Query::project`).
            #vis fn project<P: __ddb::DeserializeOwned + ::core::marker::Send + 'static>(
                self,
                paths: impl ::core::iter::IntoIterator<Item = __ddb::Path>,
            ) -> __ddb::Query<'__db, #table, __ddb::AsProjection<#ident, P>, #on> {
                self.into_query().project(paths)
            }
            /// Reads every entity type as collection `C` (see `Query::collection`).
            #vis fn collection<C: __ddb::Collection<Table = #table>>(
                self,
            ) -> __ddb::Query<'__db, #table, __ddb::AsCollection<C>, #on> {
                self.into_query().collection()
            }
            /// Reads raw items of every entity type.
            #vis fn items(self) -> __ddb::Query<'__db, #table, __ddb::AsItem, #on> {
                self.into_query().items()
            }
            /// Every item (see `Query::all`).
            #vis async fn all(self) -> __ddb::Result<__ddb::Vec<#ident>, __ddb::Error> {
                self.into_query().all().await
            }
            /// The first item (see `Query::first`).
            #vis async fn first(self) -> __ddb::Result<__ddb::Option<#ident>, __ddb::Error> {
                self.into_query().first().await
            }
            /// The items as a stream (see `Query::stream`).
            #vis fn stream(self) -> __ddb::BoxStream<'__db, __ddb::Result<#ident, __ddb::Error>> {
                self.into_query().stream()
            }
            /// The items page by page (see `Query::pages`).
            #vis fn pages(self) -> __ddb::BoxStream<'__db, __ddb::Result<__ddb::Vec<#ident>, __ddb::Error>> {
                self.into_query().pages()
            }
            /// One page behind a cursor (see `Query::page`).
            #vis async fn page(
                self,
                cursor: __ddb::Option<&__ddb::Cursor>,
            ) -> __ddb::Result<__ddb::Page<#ident>, __ddb::Error> {
                self.into_query().page(cursor).await
            }
            /// The number of items (see `Query::count`).
            #vis async fn count(self) -> __ddb::Result<usize, __ddb::Error> {
                self.into_query().count().await
            }
        }
    };

    let inside = quote! {
        impl #ident {
            #[doc = #query_doc]
            #vis fn #query_fn<'__db>(
                db: &'__db __ddb::Db<#table>,
                #(#pk_params),*
            ) -> #level_ty<'__db, 0> {
                #level_ty(#from)
            }

            #partition
        }

        #(#level_impls)*

        impl<'__db, const L: usize> #level_ty<'__db, L> {
            /// The query with the levels fixed so far (sort keys starting with them).
            #vis fn into_query(self) -> #q {
                self.0.prefix()
            }

            #forwards
        }

        impl<'__db, const L: usize> ::core::future::IntoFuture for #level_ty<'__db, L> {
            type Output = __ddb::Result<__ddb::Vec<#ident>, __ddb::Error>;
            type IntoFuture = __ddb::BoxFuture<'__db, Self::Output>;
            fn into_future(self) -> Self::IntoFuture {
                ::core::future::IntoFuture::into_future(self.into_query())
            }
        }
    };
    (outside, inside)
}

/// The partition-key parameters of a generated constructor (`id: impl KeyArg<String>`, in
/// order of first appearance in `pk`) and the expression building the partition key from them.
pub fn partition_args(
    entity: &Entity,
    pk: &Template,
    on_index: bool,
) -> (Vec<TokenStream>, TokenStream) {
    let arg_bound = |field: &Field| arg_bound(field, on_index);
    let arg_text = |field: &Field, value: &TokenStream| arg_text(field, value, on_index);
    // Partition-key parameters, in order of first appearance.
    let mut pk_fields: Vec<&Field> = Vec::new();
    for (name, _) in pk.fields() {
        if let Some(f) = entity.field(name)
            && !pk_fields.iter().any(|o| o.ident == f.ident)
        {
            pk_fields.push(f);
        }
    }
    let pk_params: Vec<TokenStream> = pk_fields
        .iter()
        .map(|f| {
            let fi = f.ident;
            let bound = arg_bound(f);
            quote! { #fi: #bound }
        })
        .collect();
    let pk_expr = {
        let steps = pk.segments.iter().map(|s| match s {
            Segment::Lit(l) => quote! { __w.lit(#l); },
            Segment::Field { name, .. } => match entity.field(name) {
                Some(f) => {
                    let fi = f.ident;
                    let text = arg_text(f, &quote!(#fi));
                    quote! { __w.part(&#text); }
                }
                None => quote! {},
            },
        });
        quote! {{
            let mut __w = __ddb::KeyWriter::with_capacity(32);
            #(#steps)*
            __w.finish()
        }}
    };
    (pk_params, pk_expr)
}

// The bound of a placeholder argument: `KeyArg<field type>` on the table, and on an index
// `IndexArg<field type>` (which also takes the `KeyPart` inside an `Option`). Neither trait
// bounds its parameter, so a field type that is not a `KeyPart` is reported once, by the
// entity's own checks, not again here.
fn arg_bound(field: &Field, on_index: bool) -> TokenStream {
    let ty = field.ty;
    if on_index {
        quote_spanned! {ty.span()=> impl __ddb::IndexArg<#ty> }
    } else {
        quote_spanned! {ty.span()=> impl __ddb::KeyArg<#ty> }
    }
}

/// The unescaped key text of argument `value` for `field`.
fn arg_text(field: &Field, value: &TokenStream, on_index: bool) -> TokenStream {
    let ty = field.ty;
    if on_index {
        quote! { __ddb::IndexArg::<#ty>::index_arg_text(&#value) }
    } else {
        quote! { __ddb::KeyArg::<#ty>::arg_key_text(&#value) }
    }
}
