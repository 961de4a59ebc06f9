//! `#[derive(KeyPart)]`: newtypes delegate to their field, field-less enums use their variant
//! names, `#[key_part(via_str)]` goes through `Display` and `FromStr`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::attr;
use crate::ctxt::Ctxt;

pub fn derive(input: &DeriveInput) -> Result<TokenStream, syn::Error> {
    let mut cx = Ctxt::default();
    let container = attr::key_part_container(&mut cx, &input.attrs);
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();

    let body = if container.via_str.value.is_some() {
        Some(quote! {
            fn key_text(&self) -> __ddb::Cow<'_, str> {
                __ddb::Cow::Owned(::std::string::ToString::to_string(self))
            }
            fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
                <Self as ::core::str::FromStr>::from_str(text)
                    .map_err(|e| __ddb::KeyPartError::new::<Self>(text, ::std::string::ToString::to_string(&e)))
            }
        })
    } else {
        match &input.data {
            Data::Struct(data) if data.fields.len() == 1 => {
                let field = data.fields.iter().next();
                let ty = field.map(|f| &f.ty);
                let (access, build) = match (&data.fields, field.and_then(|f| f.ident.as_ref())) {
                    (Fields::Named(_), Some(name)) => {
                        (quote! { self.#name }, quote! { #ident { #name: v } })
                    }
                    _ => (quote! { self.0 }, quote! { #ident(v) }),
                };
                Some(quote! {
                    fn key_text(&self) -> __ddb::Cow<'_, str> {
                        <#ty as __ddb::KeyPart>::key_text(&#access)
                    }
                    fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
                        <#ty as __ddb::KeyPart>::from_key_text(text).map(|v| #build)
                    }
                })
            }
            Data::Enum(data) if !data.variants.is_empty() => {
                let mut names = Vec::new();
                let mut variants = Vec::new();
                for variant in &data.variants {
                    if !matches!(variant.fields, Fields::Unit) {
                        cx.error_spanned_by(
                            &variant.ident,
                            "`KeyPart` can be derived only for enums whose variants have no fields; use #[key_part(via_str)] with Display and FromStr otherwise",
                        );
                        continue;
                    }
                    let rename = attr::key_part_variant(&mut cx, &variant.attrs);
                    let text =
                        rename.as_ref().map_or_else(|| variant.ident.to_string(), |l| l.value());
                    // A rename is the token to fix; without one, the variant name is.
                    let at = rename.as_ref().map_or_else(|| variant.ident.span(), |l| l.span());
                    if text.is_empty() {
                        cx.error_at(
                            at,
                            format!(
                                "the key text of `{}` cannot be empty: give a non-empty rename, or remove it to use the variant name",
                                variant.ident
                            ),
                        );
                    }
                    if let Some(i) = names.iter().position(|n| *n == text) {
                        cx.error_at(
                            at,
                            format!(
                                "`{}` has the key text `{text}`, like `{}`: each variant needs its own text to be read back; give one a different #[key_part(rename = \"...\")]",
                                variant.ident, variants[i]
                            ),
                        );
                    }
                    names.push(text);
                    variants.push(&variant.ident);
                }
                let expected = names.join(", ");
                Some(quote! {
                    fn key_text(&self) -> __ddb::Cow<'_, str> {
                        __ddb::Cow::Borrowed(match self { #(Self::#variants => #names,)* })
                    }
                    fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
                        match text {
                            #(#names => __ddb::Ok(Self::#variants),)*
                            _ => __ddb::Err(__ddb::KeyPartError::new::<Self>(text, concat!("expected one of: ", #expected))),
                        }
                    }
                })
            }
            _ => {
                cx.error_spanned_by(
                    ident,
                    "`KeyPart` can be derived for a newtype (a struct with one field), an enum of field-less variants, or any type with #[key_part(via_str)] (through Display and FromStr)",
                );
                None
            }
        }
    };
    cx.check()?;
    Ok(quote! {
        const _: () = {
            use ::ddb_model::__private as __ddb;
            impl #impl_generics __ddb::KeyPart for #ident #ty_generics #where_clause {
                #body
            }
        };
    })
}
