//! Compile-time checks that need the type system or another derive's output: each is an
//! item spanned at the user's token, so the compiler's error points there.
//!
//! - field types are checked where the generated code uses them (`keys.rs`): always through
//!   one bounded helper (`key_part::<T>()`, `index_key_text::<T>()`, `version_fns::<T>()`)
//!   spanned at the field type, so a wrong type is one error at the field, in the words of the
//!   runtime traits' `#[diagnostic::on_unimplemented]`;
//! - table agreement (the table is another type, derived elsewhere): `const` assertions that
//!   panic during constant evaluation with a message written here. They read the table through
//!   the generic helpers of `ddb_model::__private` (`table_sk`, `table_index`, ...), so a table type that is not a `Table` is
//!   one error, at `type Table = ..`, not one per assertion.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::ast::Entity;

/// `App`, or `the default table`, for messages.
pub fn table_display(entity: &Entity) -> String {
    match &entity.table {
        Some(path) => match path.segments.last() {
            Some(seg) => format!("table `{}`", seg.ident),
            None => "the table".to_owned(),
        },
        None => "the default table (ddb_model::DefaultTable)".to_owned(),
    }
}

// The `panic!`s below are in `const` items: they run while the user's crate compiles, which is
// how a declaration that disagrees with its table is reported (an E0080 error at the spanned
// token). None of them can run in a built program.

/// A message usable as a `panic!` format string.
fn lit(message: String) -> String {
    message.replace('{', "{{").replace('}', "}}")
}

pub fn expand(entity: &Entity) -> TokenStream {
    let mut out = TokenStream::new();
    let ident = entity.ident;
    let table_name = table_display(entity);

    // The sort key agrees with the table.
    if entity.sk.is_some() {
        let message =
            lit(format!("`{ident}` has an `sk` template, but {table_name} has no sort key"));
        out.extend(quote_spanned! {entity.span_of_sk()=>
            const _: () = if __ddb::table_sk::<#ident>().is_none() { ::core::panic!(#message) };
        });
    } else {
        let message = lit(format!(
            "{table_name} has a sort key: give `{ident}` an `sk` template, as in #[entity(sk = \"PROFILE\")]"
        ));
        out.extend(quote_spanned! {ident.span()=>
            const _: () = if __ddb::table_sk::<#ident>().is_some() { ::core::panic!(#message) };
        });
    }

    // Indexes exist and agree on the sort key.
    for index in &entity.indexes {
        let name = index.name.to_string();
        let missing = lit(format!("{table_name} has no index `{name}`"));
        let has_sk = index.sk.is_some();
        let sk_message = lit(if has_sk {
            format!(
                "index `{name}` of {table_name} has no sort key, but #[index({name})] gives an `sk` template"
            )
        } else {
            format!(
                "index `{name}` of {table_name} has a sort key: give #[index({name})] an `sk` template"
            )
        });
        out.extend(quote_spanned! {index.name.span()=>
            const _: () = match __ddb::table_index::<#ident>(#name) {
                __ddb::None => ::core::panic!(#missing),
                __ddb::Some(index) => if index.sk.is_some() != #has_sk { ::core::panic!(#sk_message) },
            };
        });
    }

    // No field is stored under a key or bookkeeping attribute.
    for field in entity.fields.iter().filter(|f| f.is_stored()) {
        let attr = &field.attr_name;
        let name = field.name();
        let message = |role: &str| {
            lit(format!(
                "field `{name}` is stored as attribute `{attr}`, which is {role}; give the field another attribute name with #[serde(rename = \"...\")]"
            ))
        };
        let pk = message(&format!("the partition key attribute of {table_name}"));
        let sk = message(&format!("the sort key attribute of {table_name}"));
        let type_attr = message(&format!("where {table_name} stores each item's entity type"));
        let index = message(&format!("a key attribute of an index of {table_name}"));
        out.extend(quote_spanned! {field.ident.span()=>
            const _: () = match __ddb::table_attr_role::<#ident>(#attr) {
                1 => ::core::panic!(#pk),
                2 => ::core::panic!(#sk),
                3 => ::core::panic!(#type_attr),
                4 => ::core::panic!(#index),
                _ => {}
            };
        });
    }

    quote! { #out }
}
