//! The data rules' consts on `impl Entity`: `STRICT` (the attribute names the fields are read
//! from), `VALIDATE` and `AFTER_READ` (the hooks, called through fn pointers at the paths'
//! spans, so a wrong signature is reported there).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::Entity;

pub fn expand(entity: &Entity) -> TokenStream {
    let strict = entity.strict.as_ref().map(|_| {
        let mut names: Vec<&str> = Vec::new();
        let read = entity.fields.iter().filter(|f| f.computed.is_none() && !f.skip_deserializing);
        for field in read {
            for name in std::iter::once(&field.attr_name).chain(&field.aliases) {
                if !names.contains(&name.as_str()) {
                    names.push(name);
                }
            }
        }
        quote! {
            const STRICT: __ddb::Option<&'static [&'static str]> = __ddb::Some(&[#(#names),*]);
        }
    });
    let validate = entity.validate.as_ref().map(|path| {
        quote_spanned! {path.span()=>
            const VALIDATE: __ddb::Option<
                fn(&Self) -> __ddb::Result<(), __ddb::UpgradeError>,
            > = __ddb::Some(|__value: &Self| #path(__value).map_err(__ddb::hook_error));
        }
    });
    let after_read = entity.after_read.as_ref().map(|path| {
        quote_spanned! {path.span()=>
            const AFTER_READ: __ddb::Option<fn(&mut Self)> =
                __ddb::Some(|__value: &mut Self| #path(__value));
        }
    });
    quote! { #strict #validate #after_read }
}
