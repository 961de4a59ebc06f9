//! `impl Entity`: keys from the templates of `keys.rs`, key parsing, index keys, the version.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::keys::{index_const, self_text};
use crate::ast::{Entity, Strategy};
use crate::template::{Segment, Template};

pub fn expand(entity: &Entity, table: &TokenStream) -> TokenStream {
    let ident = entity.ident;
    let name = &entity.name;
    let key_fields = entity.key_fields();
    let tys = key_fields.iter().map(|f| f.ty);
    let texts = key_fields.iter().map(|f| self_text(f));
    let parse_key = parse_key(entity);
    let index_keys = index_keys(entity);
    let (version_def, version) = version(entity);
    let tree_node = entity.hierarchy.as_ref().map(|_| {
        quote! { const BOOKKEEPING_ATTRS: &'static [&'static str] = __ddb::TREE_BOOKKEEPING_ATTRS; }
    });
    quote! {
        impl __ddb::Entity for #ident {
            type Table = #table;
            type KeyFields = (#(#tys,)*);
            const NAME: &'static str = #name;
            const VERSION: __ddb::Option<__ddb::VersionDef> = #version_def;
            #tree_node

            fn key(&self) -> __ddb::Key<Self> {
                let parts = [#(#texts),*];
                __KEYS.key(&parts)
            }

            #parse_key
            #index_keys
            #version
        }
    }
}

/// Reads the stored key a run at a time, partition key first: each literal, each placeholder
/// (`part` for a field's first occurrence, `repeated` for a repeat, checked equal to the
/// first), then the end of the key.
fn parse_key(entity: &Entity) -> TokenStream {
    let mut read: Vec<String> = Vec::new();
    let pk = read_template(entity, &entity.pk, &mut read);
    let sk = match &entity.sk {
        Some(sk) => {
            let steps = read_template(entity, sk, &mut read);
            quote! {
                let mut __r = __KEYS.read_sk(sk)?;
                #steps
            }
        }
        None => quote! { let _ = sk; },
    };
    let vars = read.iter().map(|name| format_ident!("__k_{}", name));
    quote! {
        fn parse_key(pk: &str, sk: __ddb::Option<&str>) -> __ddb::Result<Self::KeyFields, __ddb::Error> {
            let mut __r = __KEYS.read_pk(pk);
            #pk
            #sk
            __ddb::Ok((#(#vars,)*))
        }
    }
}

/// The reader's steps for `template`; `read` holds the fields read so far.
fn read_template(entity: &Entity, template: &Template, read: &mut Vec<String>) -> TokenStream {
    let mut steps = TokenStream::new();
    for (i, segment) in template.segments.iter().enumerate() {
        let name = match segment {
            Segment::Lit(l) => {
                steps.extend(quote! { __r.lit(#l)?; });
                continue;
            }
            Segment::Field { name, .. } => name,
        };
        let Some(field) = entity.field(name) else {
            continue;
        };
        let until = match template.segments.get(i + 1) {
            Some(Segment::Lit(l)) => l.chars().next().map(|c| quote! { __ddb::Some(#c) }),
            _ => None,
        };
        let until = until.unwrap_or_else(|| quote! { __ddb::None });
        let ty = field.ty;
        let fns = quote_spanned! {ty.span()=> __ddb::key_part::<#ty>() };
        let var = format_ident!("__k_{}", name);
        if read.contains(name) {
            steps.extend(quote! { __r.repeated(#name, #until, #fns, &#var)?; });
        } else {
            read.push(name.clone());
            steps.extend(quote! { let #var: #ty = __r.part(#name, #until, #fns)?; });
        }
    }
    steps.extend(quote! { __r.end()?; });
    steps
}

/// Every index key of the item: its `#[index]`es, and the index of its tree.
fn index_keys(entity: &Entity) -> TokenStream {
    let indexes = entity.indexes.iter().map(|index| {
        let konst = index_const(index);
        let fields = entity.fields_of(std::iter::once(&index.pk).chain(index.sk.as_ref()));
        let texts = fields.iter().map(|f| {
            let (fi, ty) = (f.ident, f.ty);
            let text = quote_spanned! {ty.span()=> __ddb::index_key_text::<#ty>() };
            quote! { (#text)(&self.#fi) }
        });
        quote! {
            let parts = [#(#texts),*];
            #konst.write(&parts, sink);
        }
    });
    let tree = match entity.hierarchy.as_ref().map(|h| h.strategy) {
        Some(Strategy::Path) => quote! { __ddb::tree_index_keys::<Self>(self, sink); },
        Some(Strategy::Adjacency) => quote! { __ddb::adjacency_index_keys::<Self>(self, sink); },
        Some(Strategy::Closure) | None => TokenStream::new(),
    };
    let body = quote! { #(#indexes)* #tree };
    let sink = if body.is_empty() { quote!(_) } else { quote!(sink) };
    quote! {
        fn index_keys(&self, #sink: &mut __ddb::IndexSink<'_>) {
            #body
        }
    }
}

/// `VERSION`, `version()` and `set_version()`.
fn version(entity: &Entity) -> (TokenStream, TokenStream) {
    let Some(field) = entity.version.as_ref().and_then(|(i, _)| entity.fields.get(*i)) else {
        let methods = quote! {
            fn version(&self) -> __ddb::Option<u64> {
                __ddb::None
            }

            fn set_version(&mut self, _: u64) {}
        };
        return (quote! { __ddb::None }, methods);
    };
    let (fi, ty, attr) = (field.ident, field.ty, &field.attr_name);
    let fns = quote_spanned! {ty.span()=> __ddb::version_fns::<#ty>() };
    let methods = quote! {
        fn version(&self) -> __ddb::Option<u64> {
            __ddb::Some((#fns.get)(self.#fi))
        }

        fn set_version(&mut self, version: u64) {
            self.#fi = (#fns.set)(version);
        }
    };
    (quote! { __ddb::Some(__ddb::VersionDef { attr: #attr, max: #fns.max }) }, methods)
}
