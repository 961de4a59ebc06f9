//! Compile-time checks that need another derive's output (the table is another type, derived
//! elsewhere): `const` items spanned at the user's token, which fail constant evaluation with
//! a message written here, so the compiler's error (E0080) points there. They read the table
//! through the generic helpers of `ddb_model::__private` (`table_sk`, `table_index`,
//! `attr_clash`, `constant_clash`), so a table type that is not a `Table` is one error, at `type Table = ..`,
//! not one per assertion.
//!
//! Field types are checked where the generated code uses them (`keys.rs`, `entity.rs`):
//! always through one bounded helper (`key_part::<T>()`, `index_key_text::<T>()`,
//! `version_fns::<T>()`) spanned at the field type, so a wrong type is one error at the field,
//! in the words of the runtime traits' `#[diagnostic::on_unimplemented]`.
//!
//! None of the `panic!`s below can run in a built program: they run while the user's crate
//! compiles.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::{Entity, Index};

/// A message usable as a `panic!` format string.
pub fn lit(message: String) -> String {
    message.replace('{', "{{").replace('}', "}}")
}

pub fn expand(entity: &Entity) -> TokenStream {
    let sort_key = sort_key(entity);
    let indexes = entity.indexes.iter().map(|index| index_exists(entity, index));
    let table = entity.table_display();
    let ident = entity.ident;
    let fields =
        entity.fields.iter().filter(|f| f.is_stored() && f.from_key.is_none()).map(|field| {
            let (name, attr) = (field.name(), &field.attr_name);
            // `panic!("{}", msg)` is the form constant evaluation accepts in every edition.
            quote_spanned! {field.ident.span()=>
                const _: () = match __ddb::attr_clash::<#ident>(#name, #attr, __TABLE) {
                    __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                    __ddb::None => {}
                };
            }
        });
    // A constant stored under an attribute the table uses itself.
    let constants = entity.constants.iter().map(|constant| {
        let attr = &constant.attr;
        quote_spanned! {constant.span=>
            const _: () = match __ddb::constant_clash::<#ident>(#attr, __TABLE) {
                __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                __ddb::None => {}
            };
        }
    });
    let follows = follows(entity);
    let ttl = ttl(entity);
    let tenant = tenant(entity);
    quote! {
        #ttl
        #tenant
        #sort_key
        #(#indexes)*
        const __TABLE: &str = #table;
        #(#fields)*
        #(#constants)*
        #(#follows)*
    }
}

/// A placeholder directly followed by a literal that does not start with a separator: the
/// field's key type never writes the literal's first character (a letter after an integer),
/// else the value's end could not be found. Spanned at the placeholder.
fn follows(entity: &Entity) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for template in entity.templates() {
        for (name, span, first) in template.typed_follows() {
            let Some(field) = entity.field(name) else { continue };
            let ty = field.ty;
            let ty_text = quote!(#ty).to_string().replace(' ', "");
            // An index key field's `Option` is not part of the key type.
            let ty_text = match ty_text.strip_prefix("Option<").and_then(|t| t.strip_suffix('>')) {
                Some(inner) => inner.to_owned(),
                None => ty_text,
            };
            let first_text = first.to_string();
            // An index key field may be an `Option` of its key type.
            out.push(quote_spanned! {span=>
                const _: () = match __ddb::follow_check::<<#ty as __ddb::IndexKeyPart>::Part>(
                    #name, #ty_text, #first, #first_text,
                ) {
                    __ddb::Some(m) => ::core::panic!("{}", m.as_str()),
                    __ddb::None => {}
                };
            });
        }
    }
    out
}

/// The sort key agrees with the table.
fn sort_key(entity: &Entity) -> TokenStream {
    let ident = entity.ident;
    let table = entity.table_display();
    if entity.sk.is_some() {
        let message = lit(format!("`{ident}` has an `sk` template, but {table} has no sort key"));
        quote_spanned! {entity.span_of_sk()=>
            const _: () = if __ddb::table_sk::<#ident>().is_none() { ::core::panic!(#message) };
        }
    } else {
        let message = lit(format!(
            "{table} has a sort key: give `{ident}` an `sk` template, as in #[entity(sk = \"PROFILE\")]"
        ));
        quote_spanned! {ident.span()=>
            const _: () = if __ddb::table_sk::<#ident>().is_some() { ::core::panic!(#message) };
        }
    }
}

/// The table declares the expiry field's attribute as its Time to Live attribute (one per
/// table). Spanned at the field named by `ttl = ..`.
fn ttl(entity: &Entity) -> TokenStream {
    let Some((field, named)) =
        entity.ttl.as_ref().and_then(|(i, ident)| entity.fields.get(*i).map(|f| (f, ident)))
    else {
        return TokenStream::new();
    };
    let (ident, table, attr) = (entity.ident, entity.table_display(), &field.attr_name);
    let none = lit(if entity.table.is_some() {
        format!(
            "{table} declares no expiry attribute: add #[table(ttl = \"{attr}\")] to it (the service enables Time to Live on one attribute per table, which `create_table` does)"
        )
    } else {
        format!(
            "{table} has no expiry attribute: declare a table with #[derive(Table)] and #[table(.., ttl = \"{attr}\")], and name it with #[entity(table = ..)]"
        )
    });
    let other = lit(format!(
        "{table} keeps expiry times in another attribute than `{attr}` (its #[table(ttl = ..)]): the service allows one Time to Live attribute per table, so store this field there with #[serde(rename = \"..\")]"
    ));
    quote_spanned! {named.span()=>
        const _: () = match __ddb::table_ttl::<#ident>() {
            __ddb::None => ::core::panic!(#none),
            __ddb::Some(declared) => if !__ddb::str_eq(declared, #attr) { ::core::panic!(#other) },
        };
    }
}

/// The table declares tenants, with the literal the entity's partition key puts before the
/// tenant (`check::tenant` checked the templates), and the tenant field is a `String`.
/// Spanned at the field named by `tenant = ..`, and at its type.
fn tenant(entity: &Entity) -> TokenStream {
    let Some((field, named)) =
        entity.tenant.as_ref().and_then(|(i, ident)| entity.fields.get(*i).map(|f| (f, ident)))
    else {
        return TokenStream::new();
    };
    let Some(literal) = crate::check::tenant_lead(&entity.pk, &field.name()) else {
        return TokenStream::new();
    };
    let (ident, table, ty) = (entity.ident, entity.table_display(), field.ty);
    let none = lit(format!(
        "{table} declares no tenants: add #[table(tenant = \"{literal}\")] to it (the literal before the tenant id in partition keys)"
    ));
    let other = lit(format!(
        "`{ident}` puts {literal:?} before its tenant, but the tenant literal of {table} (its #[table(tenant = ..)]) is another: every tenant-scoped entity of a table starts its partition keys with the table's one tenant literal"
    ));
    let ty_check = quote_spanned! {syn::spanned::Spanned::span(ty)=>
        const _: () = __ddb::tenant_field::<#ty>();
    };
    quote_spanned! {named.span()=>
        const _: () = match __ddb::table_tenant::<#ident>() {
            __ddb::None => ::core::panic!(#none),
            __ddb::Some(declared) => if !__ddb::str_eq(declared, #literal) { ::core::panic!(#other) },
        };
        #ty_check
    }
}

/// The index exists in the table and agrees on the sort key.
fn index_exists(entity: &Entity, index: &Index) -> TokenStream {
    let (ident, table) = (entity.ident, entity.table_display());
    let name = index.name.to_string();
    let missing = lit(format!("{table} has no index `{name}`"));
    let has_sk = index.sk.is_some();
    let multi = lit(format!(
        "index `{name}` of {table} is keyed by several typed attributes, which are fields: list them, as in #[index({name}, pk = [tenant, status], sk = [priority])]"
    ));
    let sk_message = lit(if has_sk {
        format!(
            "index `{name}` of {table} has no sort key, but #[index({name})] gives an `sk` template"
        )
    } else {
        format!("index `{name}` of {table} has a sort key: give #[index({name})] an `sk` template")
    });
    quote_spanned! {index.name.span()=>
        const _: () = match __ddb::table_index::<#ident>(#name) {
            __ddb::None => ::core::panic!(#missing),
            __ddb::Some(index) => if index.is_multi() {
                ::core::panic!(#multi)
            } else if index.sk.is_some() != #has_sk {
                ::core::panic!(#sk_message)
            },
        };
    }
}
