//! `#[derive(KeyPart)]`: newtypes delegate to their field, field-less enums use their variant
//! names (or renames), `#[key_part(via_str)]` goes through `Display` and `FromStr`. A struct
//! of several fields, or an enum with data, is a composite: its components' key texts joined
//! by `.` (`alice.app`, `Org.acme`), each with `%` and `.` escaped (`push_component`).

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Fields;
use syn::spanned::Spanned;

use crate::ast::{KeyPart, KeyPartKind, TextVariant};

/// The bindings of `fields` (`__f0, __f1` or the field names) and the pattern or
/// constructor body around them: `(a, b)` / `{ a, b }`.
fn bindings(fields: &Fields) -> (Vec<syn::Ident>, TokenStream) {
    let vars: Vec<syn::Ident> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| f.ident.clone().unwrap_or_else(|| format_ident!("__f{}", i)))
        .collect();
    let shape = match fields {
        Fields::Named(_) => quote! { { #(#vars),* } },
        Fields::Unnamed(_) => quote! { ( #(#vars),* ) },
        Fields::Unit => TokenStream::new(),
    };
    (vars, shape)
}

/// Pushes the components of `fields`, bound to `vars`, onto `__out`, each after a `.`
/// (`first`: the first one without).
fn push(fields: &Fields, vars: &[syn::Ident], first: bool) -> TokenStream {
    let steps = fields.iter().zip(vars).enumerate().map(|(i, (f, var))| {
        let ty = &f.ty;
        let dot = (i > 0 || !first).then(|| quote! { __out.push('.'); });
        // Spanned at the field type: a type without `KeyPart` is reported there.
        let text = quote_spanned! {ty.span()=> <#ty as __ddb::KeyPart>::key_text(#var) };
        quote! {
            #dot
            __ddb::push_component(&mut __out, &#text);
        }
    });
    quote! { #(#steps)* }
}

/// Reads the components of `fields` from `text` into `vars` (with `?` on each).
fn read(fields: &Fields, vars: &[syn::Ident], text: TokenStream) -> TokenStream {
    let n = fields.len();
    let comps: Vec<syn::Ident> = (0..n).map(|i| format_ident!("__c{}", i)).collect();
    let reads = fields.iter().zip(vars).zip(&comps).map(|((f, var), c)| {
        let ty = &f.ty;
        let parse = quote_spanned! {ty.span()=> <#ty as __ddb::KeyPart>::from_key_text };
        quote! { let #var = #parse(&#c)?; }
    });
    quote! {
        let [#(#comps),*] = __ddb::split_components::<Self, #n>(#text)?;
        #(#reads)*
    }
}

/// A struct of several fields.
fn composite(fields: &Fields) -> TokenStream {
    let (vars, shape) = bindings(fields);
    let push = push(fields, &vars, true);
    let read = read(fields, &vars, quote!(text));
    quote! {
        fn key_text(&self) -> __ddb::Cow<'_, str> {
            let Self #shape = self;
            let mut __out = __ddb::String::new();
            #push
            __ddb::Cow::Owned(__out)
        }
        fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
            #read
            __ddb::Ok(Self #shape)
        }
    }
}

/// An enum with a variant with data: the variant's name, then its components.
fn data_enum(variants: &[TextVariant]) -> TokenStream {
    let writes = variants.iter().map(|v| {
        let (ident, text) = (v.ident, &v.text);
        let (vars, shape) = bindings(v.fields);
        let push = push(v.fields, &vars, false);
        quote! {
            Self::#ident #shape => {
                __ddb::push_component(&mut __out, #text);
                #push
            }
        }
    });
    let reads = variants.iter().map(|v| {
        let (ident, text) = (v.ident, &v.text);
        let (vars, shape) = bindings(v.fields);
        if v.fields.is_empty() {
            return quote! { (#text, __ddb::None) => __ddb::Ok(Self::#ident), };
        }
        let read = read(v.fields, &vars, quote!(__rest));
        quote! {
            (#text, __ddb::Some(__rest)) => {
                #read
                __ddb::Ok(Self::#ident #shape)
            }
        }
    });
    let expected = variants
        .iter()
        .map(|v| if v.fields.is_empty() { v.text.clone() } else { format!("{}.<..>", v.text) })
        .collect::<Vec<_>>()
        .join(", ");
    quote! {
        fn key_text(&self) -> __ddb::Cow<'_, str> {
            let mut __out = __ddb::String::new();
            match self { #(#writes)* }
            __ddb::Cow::Owned(__out)
        }
        fn from_key_text(text: &str) -> __ddb::Result<Self, __ddb::KeyPartError> {
            let (__name, __rest) = __ddb::split_variant::<Self>(text)?;
            match (&*__name, __rest) {
                #(#reads)*
                _ => __ddb::Err(__ddb::KeyPartError::new::<Self>(text, concat!("expected one of: ", #expected))),
            }
        }
    }
}

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
        KeyPartKind::Composite(fields) => composite(fields),
        KeyPartKind::Enum(variants) if variants.iter().any(|v| !v.fields.is_empty()) => {
            data_enum(variants)
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
