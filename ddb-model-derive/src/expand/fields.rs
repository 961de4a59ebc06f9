//! Typed attribute paths: one associated constant per stored field (`User::EMAIL`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{Entity, Field};

/// `userId` / `user_id` -> `USER_ID`.
pub fn const_name(field: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in field.chars() {
        if c.is_uppercase() && previous_lower {
            out.push('_');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_uppercase());
    }
    out
}

/// The stored fields whose `None` is stored as `NULL`: `#[entity(none_as_null)]`, and an
/// `Option` that serde could not read back absent (`with` without `default`).
fn keeps_null(field: &Field) -> bool {
    field.is_stored()
        && field.from_key.is_none()
        && (field.none_as_null.is_some() || field.needs_null)
}

/// The stored `Option` fields whose `None` leaves the attribute out.
fn leaves_none_out(field: &Field) -> bool {
    field.is_stored() && field.from_key.is_none() && field.option && !keeps_null(field)
}

/// `NULL_ATTRS` (the attributes of [`keeps_null`] fields) and `ABSENT_ATTRS` (those of
/// [`leaves_none_out`] fields); nothing for an empty list.
pub fn null_attrs(entity: &Entity) -> TokenStream {
    let names = |keep: fn(&Field) -> bool| -> Vec<&String> {
        entity.fields.iter().filter(|f| keep(f)).map(|f| &f.attr_name).collect()
    };
    let (nulls, absent) = (names(keeps_null), names(leaves_none_out));
    let nulls = (!nulls.is_empty())
        .then(|| quote! { const NULL_ATTRS: &'static [&'static str] = &[#(#nulls),*]; });
    let absent = (!absent.is_empty())
        .then(|| quote! { const ABSENT_ATTRS: &'static [&'static str] = &[#(#absent),*]; });
    quote! { #nulls #absent }
}

/// `CRYPTO`: the `#[encrypt]` and `#[sign_only]` fields' attributes and actions; nothing for
/// an entity with neither.
pub fn crypto_attrs(entity: &Entity) -> TokenStream {
    let fields: Vec<TokenStream> = entity
        .fields
        .iter()
        .filter_map(|f| {
            let crypto = f.crypto?;
            let attr = &f.attr_name;
            let action = if crypto.encrypt { quote!(Encrypt) } else { quote!(SignOnly) };
            Some(quote! { __ddb::CryptoField { attr: #attr, action: __ddb::Crypto::#action } })
        })
        .collect();
    if fields.is_empty() {
        return TokenStream::new();
    }
    quote! { const CRYPTO: &'static [__ddb::CryptoField] = &[#(#fields),*]; }
}

pub fn expand(entity: &Entity) -> TokenStream {
    let ident = entity.ident;
    let vis = entity.vis;
    // Fields of index keys that an update rewrites with them are writable.
    let writable = entity.index_writable();
    let read_only: Vec<String> = entity
        .templates()
        .flat_map(|t| t.fields().map(|(n, _)| n.to_owned()).collect::<Vec<_>>())
        .chain(entity.version.as_ref().and_then(|(i, _)| entity.fields.get(*i)).map(|f| f.name()))
        // The timestamps: every update sets `updated_at` itself, an upsert `created_at`.
        .chain(entity.timestamp_fields().map(|(f, _)| f.name()))
        // A field that decides an index membership (`when = unread`), unless the update
        // rewrites the index keys with it.
        .chain(
            entity
                .indexes
                .iter()
                .filter_map(|i| i.when.as_ref())
                .map(|w| w.to_string().trim_start_matches("r#").to_owned()),
        )
        .filter(|name| !writable.contains(name))
        .collect();
    // A `from_key` field has no attribute of its own to name: its value is in the keys.
    // An encrypted field has no path: a condition, a filter, an update or a projection would
    // name its ciphertext.
    let consts = entity.fields.iter().filter(|f| {
        f.is_stored() && f.from_key.is_none() && !f.crypto.is_some_and(|c| c.encrypt)
    }).map(|field| {
        let name = field.name();
        let const_ident = format_ident!("{}", const_name(&name));
        let ty = field.ty;
        let attr = &field.attr_name;
        // The expiry field's path takes its type and writes seconds since the epoch.
        let is_ttl = entity.ttl.as_ref().is_some_and(|(i, _)| {
            entity.fields.get(*i).is_some_and(|f| f.ident == field.ident)
        });
        let ty = if is_ttl { quote! { __ddb::Expiry<#ty> } } else { quote! { #ty } };
        let (access, note) = if writable.contains(&name) {
            (
                quote! { __ddb::Writable },
                " An index key holds it: an update that sets it writes that key again (set the key's other fields with it).",
            )
        } else if read_only.contains(&name) {
            (
                quote! { __ddb::ReadOnly },
                " Read-only in updates: it is part of the primary key, the version, a timestamp (set by every write), or feeds an index key that an update cannot rewrite (chosen by a `when` method).",
            )
        } else {
            (quote! { __ddb::Writable }, "")
        };
        let doc = format!(
            "Typed path of field `{name}` (stored as `{attr}`), for conditions and updates.{note}"
        );
        // A `None` set is `NULL` where the item stores it so: the field's or the table's
        // `none_as_null`.
        let make = match (keeps_null(field), field.option) {
            (true, _) => quote! { nullable },
            (false, true) => quote! { optional },
            (false, false) => quote! { field },
        };
        quote! {
            #[doc = #doc]
            #vis const #const_ident: __ddb::Attr<#ident, #ty, #access> = __ddb::#make(#attr);
        }
    });
    quote! { #(#consts)* }
}
