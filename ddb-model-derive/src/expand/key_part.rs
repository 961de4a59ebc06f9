//! `#[derive(KeyPart)]`: newtypes delegate to their field, field-less enums use their variant
//! names (or renames), `#[key_part(via_str)]` goes through `Display` and `FromStr`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{KeyPart, KeyPartKind};

pub fn expand(key_part: &KeyPart) -> TokenStream {
    let input = key_part.input;
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let body = match &key_part.kind {
        KeyPartKind::ViaStr => quote! {
            fn key_text(&self) -> __ddb::Cow<'_, str> {
                __ddb::Cow::Owned(::std::string::ToString::to_string(self))
            }
            fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
                <Self as ::core::str::FromStr>::from_str(text)
                    .map_err(|e| __ddb::KeyPartError::new::<Self>(text, ::std::string::ToString::to_string(&e)))
            }
        },
        KeyPartKind::Newtype { ty, field } => {
            let (access, build) = match field {
                Some(name) => (quote! { self.#name }, quote! { #ident { #name: v } }),
                None => (quote! { self.0 }, quote! { #ident(v) }),
            };
            quote! {
                fn key_text(&self) -> __ddb::Cow<'_, str> {
                    <#ty as __ddb::KeyPart>::key_text(&#access)
                }
                fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
                    <#ty as __ddb::KeyPart>::from_key_text(text).map(|v| #build)
                }
            }
        }
        KeyPartKind::Enum(variants) => {
            let names: Vec<&String> = variants.iter().map(|v| &v.text).collect();
            let idents = variants.iter().map(|v| v.ident);
            let idents2 = idents.clone();
            let expected = variants.iter().map(|v| v.text.as_str()).collect::<Vec<_>>().join(", ");
            quote! {
                fn key_text(&self) -> __ddb::Cow<'_, str> {
                    __ddb::Cow::Borrowed(match self { #(Self::#idents => #names,)* })
                }
                fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
                    match text {
                        #(#names => __ddb::Ok(Self::#idents2),)*
                        _ => __ddb::Err(__ddb::KeyPartError::new::<Self>(text, concat!("expected one of: ", #expected))),
                    }
                }
            }
        }
        KeyPartKind::Unsupported => TokenStream::new(),
    };
    quote! {
        const _: () = {
            use ::ddb_model::__private as __ddb;
            impl #impl_generics __ddb::KeyPart for #ident #ty_generics #where_clause {
                #body
            }
        };
    }
}
