//! Query constructors: one per access path (the table's primary key and every index), taking
//! the partition-key fields, then one level per sort-key placeholder, in template order.
//!
//! For `sk = "<state>#<city>#<zip>"` the derive generates `Store::query(&db, country)`
//! returning `StoreQuery<'a, 0>`, whose `state(..)` returns `StoreQuery<'a, 1>`, whose
//! `city(..)` returns `StoreQuery<'a, 2>`, whose `zip(..)` returns the finished query. Each
//! level also has range methods on its placeholder (`state_between`, `state_gt`, ...). A
//! level exists only after the one before it, so skipping a level does not compile.
//!
//! A level type wraps the runtime's `LevelQuery` and dereferences to it for the methods that
//! finish a query (`limit`, `all`, `stream`, ...): only the methods named after the
//! placeholders are generated, each one line calling `LevelQuery`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Items;
use super::keys::{args, bound, index_const, params};
use crate::ast::{Entity, Field, Index};
use crate::template::{Format, Segment, Template};

/// One access path: the table's primary key, or an index.
struct AccessPath<'e, 'a> {
    entity: &'e Entity<'a>,
    /// `None`: the table's primary key.
    index: Option<&'e Index>,
    pk: &'e Template,
    sk: Option<&'e Template>,
    /// The placeholders of the sort key that get a level, in order.
    levels: Vec<Level<'e, 'a>>,
    /// The number of placeholders of the sort key (a repeated one ends the levels early).
    total: usize,
}

struct Level<'e, 'a> {
    field: &'e Field<'a>,
    /// The literal after the placeholder (empty at the end of the template).
    lit_after: String,
    /// The placeholder is verbatim.
    verbatim: bool,
    /// The placeholder's format, if it has one.
    format: Option<Format>,
}

impl Level<'_, '_> {
    /// The runtime's description of the level: the literal after it (`"#"`) for an escaped
    /// placeholder, `__ddb::Level::verbatim("path", "#")` for a verbatim one.
    fn spec(&self) -> TokenStream {
        let lit = &self.lit_after;
        let name = self.field.name();
        if let Some(format) = &self.format {
            let konst = super::keys::format_const(&name, format, self.verbatim);
            quote! { __ddb::Level::formatted(#name, #lit, #konst) }
        } else if self.verbatim {
            quote! { __ddb::Level::verbatim(#name, #lit) }
        } else if lit.chars().next().is_some_and(|c| !crate::template::SEPARATORS.contains(&c)) {
            // Ended by a character the type never writes: a value that does is refused.
            quote! { __ddb::Level::escaped_named(#name, #lit) }
        } else {
            quote! { #lit }
        }
    }
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

fn paths<'e, 'a>(entity: &'e Entity<'a>) -> Vec<AccessPath<'e, 'a>> {
    let table = (None, &entity.pk, entity.sk.as_ref());
    let indexes = entity.indexes.iter().map(|i| (Some(i), &i.pk, i.sk.as_ref()));
    std::iter::once(table)
        .chain(indexes)
        .map(|(index, pk, sk)| {
            let (levels, total) = levels(entity, pk, sk);
            AccessPath { entity, index, pk, sk, levels, total }
        })
        .collect()
}

/// The placeholders of `sk` not bound already (by the partition key or an earlier
/// occurrence): levels stop at the first one that is.
fn levels<'e, 'a>(
    entity: &'e Entity<'a>,
    pk: &Template,
    sk: Option<&Template>,
) -> (Vec<Level<'e, 'a>>, usize) {
    let (mut levels, mut total) = (Vec::new(), 0);
    let Some(sk) = sk else {
        return (levels, total);
    };
    let mut bound: Vec<&str> = pk.fields().map(|(n, _)| n).collect();
    let mut stopped = false;
    for (i, segment) in sk.segments.iter().enumerate() {
        let Segment::Field { name, verbatim, format, .. } = segment else {
            continue;
        };
        total += 1;
        let field = entity.field(name);
        stopped |= field.is_none() || bound.contains(&name.as_str());
        let (Some(field), false) = (field, stopped) else {
            continue;
        };
        bound.push(name);
        let lit_after = match sk.segments.get(i + 1) {
            Some(Segment::Lit(l)) => l.clone(),
            _ => String::new(),
        };
        levels.push(Level { field, lit_after, verbatim: *verbatim, format: *format });
    }
    (levels, total)
}

impl AccessPath<'_, '_> {
    fn on_index(&self) -> bool {
        self.index.is_some()
    }

    /// `, OnIndex` on an index, reached through `prefix`; nothing on the table (the
    /// default of the query types' `On` parameter).
    fn on(&self, prefix: TokenStream) -> TokenStream {
        if self.on_index() { quote!(, #prefix::OnIndex) } else { TokenStream::new() }
    }

    fn level_ty(&self) -> syn::Ident {
        let ident = self.entity.ident;
        match self.index {
            None => format_ident!("{}Query", ident),
            Some(i) => format_ident!("{}{}Query", ident, pascal(&i.path_name().to_string())),
        }
    }

    fn where_text(&self) -> String {
        match self.index {
            None => "the table".to_owned(),
            Some(i) => format!("index `{}`", i.name),
        }
    }

    /// The query `EntityQuery<'__db, E, On>`.
    fn query_ty(&self) -> TokenStream {
        let (ident, on) = (self.entity.ident, self.on(quote!(__ddb)));
        quote! { __ddb::EntityQuery<'__db, #ident #on> }
    }

    /// A `LevelQuery` of the partition named by the constructor's parameters.
    fn start(&self) -> TokenStream {
        let args = args(&self.pk_fields(), self.on_index());
        match self.index {
            None => quote! { __KEYS.levels(db, &#args) },
            Some(index) => {
                let konst = index_const(index);
                quote! { #konst.levels(db, &#args) }
            }
        }
    }

    fn pk_fields(&self) -> Vec<&Field<'_>> {
        self.entity.fields_of([self.pk])
    }
}

/// The level types, declared next to the entity (users may name them).
pub fn types(entity: &Entity) -> TokenStream {
    let mut out = TokenStream::new();
    for path in paths(entity).iter().filter(|p| !p.levels.is_empty()) {
        let (ident, vis) = (path.entity.ident, path.entity.vis);
        let level_ty = path.level_ty();
        let on = path.on(quote!(::ddb_model::__private));
        let names: Vec<String> =
            path.levels.iter().map(|l| format!("`{}`", l.field.name())).collect();
        let doc = format!(
            "Query of `{ident}` on {}, built level by level from the sort key `{}`: {}. Made by [`{ident}::query{}`]; `L` counts the levels fixed so far.",
            path.where_text(),
            path.sk.map_or("", |s| s.text.as_str()),
            names.join(", then "),
            path.index.map(|i| format!("_{}", i.path_name())).unwrap_or_default(),
        );
        out.extend(quote! {
            #[doc = #doc]
            #[must_use = "a query does nothing until it is run"]
            #vis struct #level_ty<'__db, const L: usize>(
                ::ddb_model::__private::LevelQuery<'__db, #ident #on>,
            );
        });
    }
    out
}

pub fn expand(entity: &Entity, db: &TokenStream) -> Items {
    let mut items = Items::default();
    for path in paths(entity) {
        items.inherent.extend(constructors(&path, db));
        if !path.levels.is_empty() {
            for i in 0..path.levels.len() {
                items.other.extend(level(&path, i));
            }
            items.other.extend(level_traits(&path));
        }
    }
    items
}

/// `E::query(..)` and `E::partition(..)` (`query_gsi1`, `partition_gsi1` on an index).
fn constructors(path: &AccessPath, db: &TokenStream) -> TokenStream {
    let (ident, vis) = (path.entity.ident, path.entity.vis);
    let suffix = path.index.map(|i| format!("_{}", i.path_name())).unwrap_or_default();
    let (query_fn, partition_fn) =
        (format_ident!("query{suffix}"), format_ident!("partition{suffix}"));
    let pk_params = params(&path.pk_fields(), path.on_index());
    let (start, q) = (path.start(), path.query_ty());
    let (where_text, pk_text) = (path.where_text(), &path.pk.text);
    let sk_text = path.sk.map_or("", |s| s.text.as_str());
    let partition_doc = format!(
        "Every `{ident}` of one partition of {where_text} (`{pk_text}`), whatever its sort key; `.collection::<C>()` reads the partition's other entity types too."
    );
    let (query_doc, query_ty, query_body) = if path.levels.is_empty() {
        let doc = match path.sk {
            Some(_) => format!(
                "Query of `{ident}` on {where_text}: partition `{pk_text}`, sort key `{sk_text}`."
            ),
            None => format!("Query of `{ident}` on {where_text}: partition `{pk_text}`."),
        };
        // A literal sort key is one item's; otherwise the partition (or a prefix of it).
        let body = if path.sk.is_some() && path.total == 0 {
            quote! { __ddb::LevelQuery::exact(#start) }
        } else {
            quote! { __ddb::LevelQuery::finish(#start) }
        };
        (doc, q.clone(), body)
    } else {
        let names: Vec<String> = path.levels.iter().map(|l| l.field.name()).collect();
        let doc = format!(
            "Query of `{ident}` on {where_text}: partition `{pk_text}`, then the sort key `{sk_text}` level by level ({}).",
            names.join(" → ")
        );
        let level_ty = path.level_ty();
        (doc, quote! { #level_ty<'__db, 0> }, quote! { #level_ty(#start) })
    };
    quote! {
        #[doc = #query_doc]
        #vis fn #query_fn<'__db>(db: &'__db #db, #(#pk_params),*) -> #query_ty {
            #query_body
        }

        #[doc = #partition_doc]
        #vis fn #partition_fn<'__db>(db: &'__db #db, #(#pk_params),*) -> #q {
            __ddb::LevelQuery::partition(#start)
        }
    }
}

/// The methods of level `i`: its placeholder equals a value (the next level, or the finished
/// query on the last), or lies in a range.
fn level(path: &AccessPath, i: usize) -> TokenStream {
    let Some(level) = path.levels.get(i) else {
        return TokenStream::new();
    };
    let (vis, level_ty, q) = (path.entity.vis, path.level_ty(), path.query_ty());
    let field = level.field;
    let (fi, ty, name) = (field.ident, field.ty, field.name());
    let bound = bound(field, path.on_index());
    let spec = level.spec();
    let (eq_doc, eq) = if i + 1 == path.total {
        let doc = format!("`{name}` equals the value: the full sort key.");
        (doc, quote! { -> #q { __ddb::LevelQuery::last::<#ty>(self.0, #fi, #spec) } })
    } else {
        let next = path.levels.get(i + 1).map(|l| l.field.name()).unwrap_or_default();
        let doc = format!("`{name}` equals the value; the next level is `{next}`.");
        let l = i + 1;
        let body = quote! { #level_ty(__ddb::LevelQuery::next::<#ty>(self.0, #fi, #spec)) };
        (doc, quote! { -> #level_ty<'__db, #l> { #body } })
    };
    // A format whose texts do not sort as their values has no range: equality only.
    let unordered = level.format.filter(|f| !f.ordered());
    let note = unordered.map(|f| {
        format!(
            "\n\nThe placeholder is written `<{name}{}>`, whose texts do not sort as the values they write: the level has no range methods.",
            f.options()
        )
    });
    let eq_doc = format!("{eq_doc}{}", note.unwrap_or_default());
    let eq_method = quote! {
        #[doc = #eq_doc]
        #vis fn #fi(self, #fi: #bound) #eq
    };
    if unordered.is_some() {
        return quote! {
            impl<'__db> #level_ty<'__db, #i> {
                #eq_method
            }
        };
    }
    let [between, gt, ge, lt, le, begins] =
        ["between", "gt", "ge", "lt", "le", "begins_with"].map(|op| format_ident!("{name}_{op}"));
    let order_doc = if let Some(format) = level.format {
        format!(
            "Values of `{name}` compare as the text `<{name}{}>` writes, by UTF-8 bytes: for an ISO 8601 datetime, chronological order (years 0 to 9999) at the placeholder's precision, a value cut to it (a bound of `10:00:00.0009` is `10:00:00.000` in milliseconds). The result is exactly the values in the range at that precision.",
            format.options()
        )
    } else if level.verbatim {
        format!(
            "Values of `{name}` (a verbatim placeholder) compare as their key text, by UTF-8 bytes: the order the service sorts keys in. The result is exactly the values in the range. `\"\"` is the smallest value: a lower bound `\"\"` is no lower bound, and a range that holds no value sends no request. A bound holding the character that ends the value in the template is `Error::InvalidKey`, and nothing is sent."
        )
    } else {
        format!(
            "Values of `{name}` compare as their escaped key text, by UTF-8 bytes (`%` and the separators `# / | ~ :` written as `%25 %23 %2F %7C %7E %3A`): the order the service sorts keys in, which is the natural order for fixed-width numbers, dates, UUIDs and strings without those characters. The result is exactly the values in the range, over the whole of Unicode. `\"\"` is the smallest value: a lower bound `\"\"` is no lower bound, and a range that holds no value sends no request."
        )
    };
    let begins_doc = if level.format.is_some() {
        "Values of this level whose text starts with `prefix`, given in the text the placeholder writes (for an ISO 8601 datetime `2026-01` is every one of January 2026; its letters are written in the placeholder's case). A `prefix` holding the character that ends the value in the template is `Error::InvalidKey`, and nothing is sent. An empty `prefix` matches every value."
    } else if level.verbatim {
        "Values of this level that start with `prefix` (a verbatim placeholder: written as it is; a `prefix` holding the character that ends the value in the template is `Error::InvalidKey`, and nothing is sent). An empty `prefix` matches every value."
    } else {
        "Values of this level that start with `prefix` (escaped like any value, so a separator in `prefix` never reaches into the next level). An empty `prefix` matches every value."
    };
    let compared = format!("compared as by [`Self::{between}`]");
    let [gt_doc, ge_doc, lt_doc, le_doc] =
        ["greater than", "greater than or equal to", "less than", "less than or equal to"]
            .map(|rel| format!("Values {rel} `value` on this level, {compared}."));
    let [gt_body, ge_body, lt_body, le_body] = ["gt", "ge", "lt", "le"].map(|op| {
        let op = format_ident!("{op}");
        quote! { __ddb::LevelQuery::#op::<#ty>(self.0, value, #spec) }
    });
    quote! {
        impl<'__db> #level_ty<'__db, #i> {
            #eq_method

            /// `low <= value <= high` on this level (inclusive).
            ///
            #[doc = #order_doc]
            #vis fn #between(self, low: #bound, high: #bound) -> #q {
                __ddb::LevelQuery::between::<#ty>(self.0, low, high, #spec)
            }

            #[doc = #gt_doc]
            #vis fn #gt(self, value: #bound) -> #q {
                #gt_body
            }

            #[doc = #ge_doc]
            #vis fn #ge(self, value: #bound) -> #q {
                #ge_body
            }

            #[doc = #lt_doc]
            #vis fn #lt(self, value: #bound) -> #q {
                #lt_body
            }

            #[doc = #le_doc]
            #vis fn #le(self, value: #bound) -> #q {
                #le_body
            }

            #[doc = #begins_doc]
            #vis fn #begins(self, prefix: &str) -> #q {
                __ddb::LevelQuery::begins_with(self.0, prefix, #spec)
            }
        }
    }
}

/// Every level dereferences to the runtime's `LevelQuery` (which finishes the query with the
/// levels fixed so far: `limit`, `all`, `stream`, ...) and is a future that runs `all`.
fn level_traits(path: &AccessPath) -> TokenStream {
    let (ident, level_ty, on) = (path.entity.ident, path.level_ty(), path.on(quote!(__ddb)));
    quote! {
        impl<'__db, const L: usize> ::core::ops::Deref for #level_ty<'__db, L> {
            type Target = __ddb::LevelQuery<'__db, #ident #on>;
            fn deref(&self) -> &Self::Target {
                &self.0
            }
        }

        // A future (not only `IntoFuture`), so that `join_all` takes levels too.
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
