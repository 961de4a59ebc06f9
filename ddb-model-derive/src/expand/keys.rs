//! The `Entity` impl: key construction, key parsing, index keys, version access.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{Entity, Field};
use crate::template::{Segment, Template};

/// An expression building the key string of `template`; `text_of(field)` is an expression of
/// type `Cow<str>` (or `&str`) giving that field's unescaped key text.
fn build_key(template: &Template, text_of: &dyn Fn(&str) -> TokenStream) -> TokenStream {
    let has_fields = template.fields().next().is_some();
    if !has_fields {
        let text = &template.text;
        return quote! { __ddb::String::from(#text) };
    }
    let literal_len: usize = template
        .segments
        .iter()
        .map(|s| match s {
            Segment::Lit(l) => l.len(),
            Segment::Field { .. } => 16,
        })
        .sum();
    let steps = template.segments.iter().map(|s| match s {
        Segment::Lit(l) => quote! { __w.lit(#l); },
        Segment::Field { name, .. } => {
            let text = text_of(name);
            quote! { __w.part(&#text); }
        }
    });
    quote! {{
        let mut __w = __ddb::KeyWriter::with_capacity(#literal_len);
        #(#steps)*
        __w.finish()
    }}
}

/// The parameters of `key(..)` and of the repository methods taking key fields:
/// `id: impl KeyArg<String>`, with the bound spanned at the field type, so a wrong argument's
/// "required by this bound" note points at the field it is for.
pub fn key_params(entity: &Entity) -> Vec<TokenStream> {
    entity
        .key_fields()
        .iter()
        .map(|f| {
            let (ident, ty) = (f.ident, f.ty);
            let bound = quote_spanned! {ty.span()=> impl __ddb::KeyArg<#ty> };
            quote! { #ident: #bound }
        })
        .collect()
}

fn key_var(field: &Field) -> syn::Ident {
    format_ident!("__k_{}", field.name())
}

/// Statements reading `input` with `template`, binding every placeholder field to `__k_<name>`
/// (first occurrence) or checking a repeated occurrence against it.
fn read_key(
    entity: &Entity,
    template: &Template,
    attribute: TokenStream,
    input: TokenStream,
    bound: &mut Vec<String>,
) -> TokenStream {
    let entity_name = &entity.name;
    let text = &template.text;
    let mut steps = Vec::new();
    for (i, segment) in template.segments.iter().enumerate() {
        match segment {
            Segment::Lit(l) => steps.push(quote! { __r.lit(#l)?; }),
            Segment::Field { name, .. } => {
                let Some(field) = entity.field(name) else {
                    continue;
                };
                let until = match template.segments.get(i + 1) {
                    Some(Segment::Lit(l)) => {
                        let c = l.chars().next().unwrap_or('#');
                        quote! { __ddb::Some(#c) }
                    }
                    _ => quote! { __ddb::None },
                };
                let var = key_var(field);
                let ty = field.ty;
                let fns = quote_spanned! {ty.span()=> __ddb::key_part::<#ty>() };
                if bound.contains(name) {
                    steps.push(quote! { __r.repeated(#name, #until, #fns, &#var)?; });
                } else {
                    bound.push(name.clone());
                    steps.push(quote! { let #var: #ty = __r.part(#name, #until, #fns)?; });
                }
            }
        }
    }
    quote! {
        let mut __r = __ddb::KeyReader::new(#entity_name, #attribute, #text, #input);
        #(#steps)*
        __r.end()?;
    }
}

pub fn expand(entity: &Entity, table: &TokenStream) -> TokenStream {
    let ident = entity.ident;
    let vis = entity.vis;
    let name = &entity.name;
    let key_fields = entity.key_fields();
    let key_params = key_params(entity);
    let param_tys: Vec<_> = key_fields.iter().map(|f| f.ty).collect();

    // User::key(..)
    let arg_text = |name: &str| {
        let field = entity.field(name).map(|f| (f.ident, f.ty));
        match field {
            Some((ident, ty)) => quote! { __ddb::KeyArg::<#ty>::arg_key_text(&#ident) },
            None => quote! { "" },
        }
    };
    let pk_expr = build_key(&entity.pk, &arg_text);
    let sk_expr = match &entity.sk {
        Some(sk) => {
            let e = build_key(sk, &arg_text);
            quote! { __ddb::Some(#e) }
        }
        None => quote! { __ddb::None },
    };
    let key_doc = format!(
        "The primary key of the `{ident}` with these key fields: pk `{}`{}.",
        entity.pk.text,
        entity.sk.as_ref().map(|s| format!(", sk `{}`", s.text)).unwrap_or_default()
    );

    // User::parse_key(..)
    let mut bound = Vec::new();
    let read_pk = read_key(
        entity,
        &entity.pk,
        quote! { __ddb::table_pk::<Self>() },
        quote! { pk },
        &mut bound,
    );
    let read_sk = match &entity.sk {
        Some(sk) => {
            let text = &sk.text;
            let attribute = quote! {
                match __ddb::table_sk::<Self>() { __ddb::Some(a) => a, __ddb::None => "sk" }
            };
            let read = read_key(entity, sk, attribute.clone(), quote! { sk }, &mut bound);
            quote! {
                let sk = match sk {
                    __ddb::Some(sk) => sk,
                    __ddb::None => {
                        return __ddb::Err(__ddb::KeyReader::missing(#name, #attribute, #text));
                    }
                };
                #read
            }
        }
        None => quote! { let _ = sk; },
    };
    let key_vars: Vec<_> = key_fields.iter().map(|f| key_var(f)).collect();
    let (parse_sig, parse_call) = if entity.sk.is_some() {
        (quote! { pk: &str, sk: &str }, quote! { pk, __ddb::Some(sk) })
    } else {
        (quote! { pk: &str }, quote! { pk, __ddb::None })
    };

    // Index keys.
    let index_blocks = entity.indexes.iter().map(|index| {
        let index_name = index.name.to_string();
        let part_text = |name: &str| match entity.field(name) {
            Some(field) => {
                let (fi, ty) = (field.ident, field.ty);
                let text = quote_spanned! {ty.span()=> __ddb::index_key_text::<#ty>() };
                quote! { (#text)(&self.#fi)? }
            }
            None => quote! { "" },
        };
        let pk = build_key(&index.pk, &part_text);
        let sk = match &index.sk {
            Some(sk) => {
                let e = build_key(sk, &part_text);
                quote! { (|| -> __ddb::Option<__ddb::String> { __ddb::Some(#e) })().map(__ddb::Some) }
            }
            None => quote! { __ddb::Some(__ddb::None) },
        };
        quote! {
            if let __ddb::Some(__index) = const { __ddb::table_index::<Self>(#index_name) } {
                let __pk = (|| -> __ddb::Option<__ddb::String> { __ddb::Some(#pk) })();
                let __sk: __ddb::Option<__ddb::Option<__ddb::String>> = #sk;
                if let (__ddb::Some(__pk), __ddb::Some(__sk)) = (__pk, __sk) {
                    sink(__index, __pk, __sk);
                }
            }
        }
    });

    // A tree node also keys the index of its tree.
    let (tree_index, tree_node) = match entity.hierarchy.as_ref().map(|h| h.strategy) {
        Some(crate::ast::Strategy::Path) => (
            quote! { __ddb::tree_index_keys::<Self>(self, sink); },
            quote! { const BOOKKEEPING_ATTRS: &'static [&'static str] = __ddb::TREE_BOOKKEEPING_ATTRS; },
        ),
        Some(crate::ast::Strategy::Adjacency) => (
            quote! { __ddb::adjacency_index_keys::<Self>(self, sink); },
            quote! { const BOOKKEEPING_ATTRS: &'static [&'static str] = __ddb::TREE_BOOKKEEPING_ATTRS; },
        ),
        Some(crate::ast::Strategy::Closure) => (
            TokenStream::new(),
            quote! { const BOOKKEEPING_ATTRS: &'static [&'static str] = __ddb::TREE_BOOKKEEPING_ATTRS; },
        ),
        None => (TokenStream::new(), TokenStream::new()),
    };

    // Version.
    let (version_def, version_get, version_set) = match &entity.version {
        Some((i, _)) => {
            let field = &entity.fields[*i];
            let (fi, ty, attr) = (field.ident, field.ty, &field.attr_name);
            let fns = quote_spanned! {ty.span()=> __ddb::version_fns::<#ty>() };
            (
                quote! { __ddb::Some(__ddb::VersionDef { attr: #attr, max: #fns.max }) },
                quote! { __ddb::Some((#fns.get)(self.#fi)) },
                quote! { self.#fi = (#fns.set)(version); },
            )
        }
        None => (quote! { __ddb::None }, quote! { __ddb::None }, quote! { let _ = version; }),
    };

    // e.key() reads the fields through `key_part` (not through `User::key`), so a field type
    // without `KeyPart` is reported once, at the field.
    let self_text = |name: &str| match entity.field(name) {
        Some(field) => {
            let (fi, ty) = (field.ident, field.ty);
            let fns = quote_spanned! {ty.span()=> __ddb::key_part::<#ty>() };
            quote! { (#fns.key_text)(&self.#fi) }
        }
        None => quote! { "" },
    };
    let self_pk = build_key(&entity.pk, &self_text);
    let self_sk = match &entity.sk {
        Some(sk) => {
            let e = build_key(sk, &self_text);
            quote! { __ddb::Some(#e) }
        }
        None => quote! { __ddb::None },
    };

    quote! {
        impl __ddb::Entity for #ident {
            type Table = #table;
            type KeyFields = (#(#param_tys,)*);
            const NAME: &'static str = #name;
            const VERSION: __ddb::Option<__ddb::VersionDef> = #version_def;
            #tree_node

            fn key(&self) -> __ddb::Key<Self> {
                __ddb::Key::from_parts(#self_pk, #self_sk)
            }

            fn parse_key(
                pk: &str,
                sk: __ddb::Option<&str>,
            ) -> __ddb::Result<Self::KeyFields, __ddb::Error> {
                #read_pk
                #read_sk
                __ddb::Ok((#(#key_vars,)*))
            }

            fn index_keys(
                &self,
                sink: &mut dyn FnMut(&'static __ddb::IndexDef, __ddb::String, __ddb::Option<__ddb::String>),
            ) {
                let _ = &sink;
                #(#index_blocks)*
                #tree_index
            }

            fn version(&self) -> __ddb::Option<u64> {
                #version_get
            }

            fn set_version(&mut self, version: u64) {
                #version_set
            }
        }

        impl #ident {
            #[doc = #key_doc]
            #[allow(clippy::needless_borrows_for_generic_args)]
            #vis fn key(#(#key_params),*) -> __ddb::Key<#ident> {
                __ddb::Key::from_parts(#pk_expr, #sk_expr)
            }

            /// Reads the key fields back from a stored key; fails on a key that this entity's
            /// templates did not produce.
            #vis fn parse_key(#parse_sig) -> __ddb::Result<(#(#param_tys,)*), __ddb::Error> {
                <Self as __ddb::Entity>::parse_key(#parse_call)
            }
        }
    }
}
