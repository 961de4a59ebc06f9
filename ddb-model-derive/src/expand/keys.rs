//! The key templates written down as data (`__KEYS`, one `__INDEX_<name>` per `#[index]`),
//! and the inherent `E::key(..)` and `E::parse_key(..)`. Every key is built by the runtime
//! from this data (`EntityKeys::key`, `IndexKeys::write`, ...); the generated code only says
//! where each part's text comes from.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Items;
use crate::ast::{Entity, Field, Index};
use crate::template::{Case, Format, Segment, Template, ValueFormat};

/// The constant holding an index's templates.
pub fn index_const(index: &Index) -> syn::Ident {
    format_ident!("__INDEX_{}", index.path_name().to_string().trim_start_matches("r#"))
}

/// `__ddb::KeyTemplate::new(..)` for `template`, placeholders numbered as in `parts`.
fn template(template: &Template, parts: &[&Field]) -> TokenStream {
    let (text, segs) = template_args(template, parts);
    quote! { __ddb::KeyTemplate::new(#text, #segs) }
}

/// The arguments of `KeyTemplate::new` for `template`: its text and its runs
/// (`&[__ddb::lit("USER#"), __ddb::part(0)]`), placeholders numbered as in `parts`.
pub fn template_args(template: &Template, parts: &[&Field]) -> (String, TokenStream) {
    let segs = template.segments.iter().map(|s| match s {
        Segment::Lit(l) => quote! { __ddb::lit(#l) },
        Segment::Field { name, verbatim, format, .. } => {
            let n = parts.iter().position(|f| f.name() == *name).unwrap_or_default();
            let n = proc_macro2::Literal::usize_unsuffixed(n);
            if let Some(format) = format {
                let konst = format_const(name, format, *verbatim);
                quote! { __ddb::formatted(#n, #konst) }
            } else if *verbatim {
                quote! { __ddb::verbatim(#n) }
            } else {
                quote! { __ddb::part(#n) }
            }
        }
    });
    (template.text.clone(), quote! { &[#(#segs),*] })
}

/// The constant holding the runtime format of placeholders of field `name` with `format`
/// (`__FMT_due_iso8601_ms_lower`), emitted once per entity by [`format_consts`].
pub fn format_const(name: &str, format: &Format, verbatim: bool) -> syn::Ident {
    let options: String =
        format.options().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let verbatim = if verbatim { "_verbatim" } else { "" };
    format_ident!(
        "__FMT_{}{}{}",
        name.trim_start_matches("r#"),
        options.trim_end_matches('_'),
        verbatim
    )
}

/// `tokens` with every span set to `span`.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tree| {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                inner.set_span(span);
                tree = proc_macro2::TokenTree::Group(inner);
            } else {
                tree.set_span(span);
            }
            tree
        })
        .collect()
}

/// The runtime formats of the entity's placeholders, one constant per field and format. Each
/// names the field's type spanned at the placeholder, so a format on a type it does not
/// apply to is one error there.
fn format_consts(entity: &Entity) -> TokenStream {
    let mut seen: Vec<syn::Ident> = Vec::new();
    let mut out = TokenStream::new();
    for template in entity.templates() {
        for segment in &template.segments {
            let Segment::Field { name, span, verbatim, format: Some(format) } = segment else {
                continue;
            };
            let Some(field) = entity.field(name) else { continue };
            let konst = format_const(name, format, *verbatim);
            if seen.contains(&konst) {
                continue;
            }
            seen.push(konst.clone());
            let ty = respan(field.ty.to_token_stream(), *span);
            let mut expr = match format.value {
                Some(ValueFormat::Unpadded) => quote_spanned! {*span=> __ddb::unpadded::<#ty>() },
                Some(ValueFormat::Iso8601(p)) => {
                    let p = format_ident!(
                        "{}",
                        match p {
                            "s" => "Seconds",
                            "ms" => "Millis",
                            "us" => "Micros",
                            _ => "Nanos",
                        }
                    );
                    quote_spanned! {*span=> __ddb::iso8601::<#ty>(__ddb::Precision::#p) }
                }
                None => quote_spanned! {*span=> __ddb::text_format::<#ty>() },
            };
            match format.case {
                Some(Case::Lower) => expr.extend(quote! { .lower() }),
                Some(Case::Upper) => expr.extend(quote! { .upper() }),
                None => {}
            }
            if *verbatim {
                expr.extend(quote! { .verbatim() });
            }
            out.extend(quote! { const #konst: __ddb::KeyFormat = #expr; });
        }
    }
    out
}

fn optional(tokens: Option<TokenStream>) -> TokenStream {
    match tokens {
        Some(tokens) => quote! { __ddb::Some(#tokens) },
        None => quote! { __ddb::None },
    }
}

/// The bound of a parameter for field `f`: `impl KeyArg<String>`, spanned at the field type,
/// so a wrong argument's "required by this bound" note points at the field it is for. On an
/// index the bound is `IndexArg`, which also takes the `KeyPart` inside an `Option` field.
pub fn bound(f: &Field, on_index: bool) -> TokenStream {
    let ty = f.ty;
    if on_index {
        quote_spanned! {ty.span()=> impl __ddb::IndexArg<#ty> }
    } else {
        quote_spanned! {ty.span()=> impl __ddb::KeyArg<#ty> }
    }
}

/// The parameters of `key(..)` and of the other constructors taking key fields
/// (`id: impl KeyArg<String>`).
pub fn params(fields: &[&Field], on_index: bool) -> Vec<TokenStream> {
    fields
        .iter()
        .map(|f| {
            let (ident, bound) = (f.ident, bound(f, on_index));
            quote! { #ident: #bound }
        })
        .collect()
}

/// The key texts of the parameters `params` made: `[__ddb::key_arg::<String>(&id), ..]`.
pub fn args(fields: &[&Field], on_index: bool) -> TokenStream {
    let texts = fields.iter().map(|f| {
        let (ident, ty) = (f.ident, f.ty);
        if on_index {
            quote! { __ddb::index_arg::<#ty>(&#ident) }
        } else {
            quote! { __ddb::key_arg::<#ty>(&#ident) }
        }
    });
    quote! { [#(#texts),*] }
}

/// The key text of field `f` of `self`, through `key_part::<T>()` spanned at the field type:
/// a type without `KeyPart` is one error, at the field.
pub fn self_text(f: &Field) -> TokenStream {
    let (ident, ty) = (f.ident, f.ty);
    let fns = quote_spanned! {ty.span()=> __ddb::key_part::<#ty>() };
    quote! { (#fns.key_text)(&self.#ident) }
}

/// Where each part of an index key comes from when an update rewrites it (the primary key's
/// part, or a field the update sets: `update_index_keys` in the runtime), and the `when`
/// field's attribute; nothing for an index no update can change.
fn update_sources(
    entity: &Entity,
    index: &Index,
    fields: &[&Field],
    key_fields: &[&Field],
) -> (TokenStream, TokenStream) {
    if !entity.index_updatable(&index.name) {
        return (quote! { &[] }, quote! { __ddb::None });
    }
    let sources = fields.iter().map(|f| match key_fields.iter().position(|k| k.ident == f.ident) {
        Some(n) => quote! { __ddb::from_key(#n) },
        None => match &f.computed {
            // The function of the values the update sets (decoded as the fields' types).
            Some(c) => {
                let ty = f.ty;
                // Outside the entity's impl: `Self::f` names the entity.
                let mut func = c.func.clone();
                if let Some(first) = func.path.segments.first_mut()
                    && first.ident == "Self"
                {
                    first.ident = entity.ident.clone();
                }
                let args: Vec<&Field> = c
                    .args
                    .iter()
                    .filter_map(|a| entity.fields.iter().find(|f| f.ident == a))
                    .collect();
                let vars: Vec<syn::Ident> =
                    (0..args.len()).map(|i| quote::format_ident!("__a{}", i)).collect();
                // An input that is a primary-key field is read back from the key's text;
                // the others are the values the update sets.
                let (inputs, decodes): (Vec<_>, Vec<_>) = args
                    .iter()
                    .zip(&vars)
                    .map(|(a, var)| {
                        let ty = a.ty;
                        match key_fields.iter().position(|k| k.ident == a.ident) {
                            Some(n) => (
                                quote! { __ddb::ComputedInput::Key(#n) },
                                quote! { let #var: #ty = __ddb::decode_key(#var)?; },
                            ),
                            None => {
                                let attr = &a.attr_name;
                                (
                                    quote! { __ddb::ComputedInput::Field(#attr) },
                                    quote! { let #var: #ty = __ddb::decode(#var)?; },
                                )
                            }
                        }
                    })
                    .unzip();
                let text = quote_spanned! {func.span()=>
                    __ddb::computed_text::<#ty>(&#func(#(&#vars),*))
                };
                quote! {
                    __ddb::computed::<#ty>(&[#(#inputs),*], |__v| {
                        let [#(#vars),*] = __v else { return __ddb::Ok(__ddb::None) };
                        #(#decodes)*
                        __ddb::Ok(#text)
                    })
                }
            }
            None => {
                let (attr, ty) = (&f.attr_name, f.ty);
                quote! { __ddb::from_field::<#ty>(#attr) }
            }
        },
    });
    let when = index.when.as_ref().and_then(|w| entity.fields.iter().find(|f| f.ident == w));
    let when = optional(when.map(|f| {
        let attr = &f.attr_name;
        quote! { #attr }
    }));
    (quote! { &[#(#sources),*] }, when)
}

pub fn expand(entity: &Entity) -> Items {
    let ident = entity.ident;
    let vis = entity.vis;
    let key_fields = entity.key_fields();
    let pk = template(&entity.pk, &key_fields);
    let sk = optional(entity.sk.as_ref().map(|sk| template(sk, &key_fields)));
    let indexes = entity.indexes.iter().map(|index| {
        let fields = entity.fields_of(std::iter::once(&index.pk).chain(index.sk.as_ref()));
        let name = index.name.to_string();
        let pk = template(&index.pk, &fields);
        let sk = optional(index.sk.as_ref().map(|sk| template(sk, &fields)));
        let konst = index_const(index);
        let (sources, when) = update_sources(entity, index, &fields, &key_fields);
        quote! {
            const #konst: __ddb::IndexKeys = __ddb::IndexKeys::new(
                __ddb::table_index::<#ident>(#name), #name, #pk, #sk, #sources, #when
            );
        }
    });

    let params = params(&key_fields, false);
    let args = args(&key_fields, false);
    let tys = key_fields.iter().map(|f| f.ty);
    let key_doc = format!(
        "The primary key of the `{ident}` with these key fields: pk `{}`{}.",
        entity.pk.text,
        entity.sk.as_ref().map(|s| format!(", sk `{}`", s.text)).unwrap_or_default()
    );
    let (parse_sig, parse_call) = if entity.sk.is_some() {
        (quote! { pk: &str, sk: &str }, quote! { pk, __ddb::Some(sk) })
    } else {
        (quote! { pk: &str }, quote! { pk, __ddb::None })
    };
    let formats = format_consts(entity);
    let rekey = entity.rekey.as_ref().map(|r| {
        let pk = template(&r.pk, &key_fields);
        let sk = optional(r.sk.as_ref().map(|sk| template(sk, &key_fields)));
        quote! { const __REKEY: __ddb::EntityKeys<#ident> = __ddb::EntityKeys::new(#pk, #sk); }
    });
    let other = quote! {
        #formats
        #rekey
        const __KEYS: __ddb::EntityKeys<#ident> = __ddb::EntityKeys::new(#pk, #sk);
        #(#indexes)*
    };
    let parse_doc = "Reads the key fields back from a stored key; fails on a key that this entity's templates did not produce.";
    let inherent = quote! {
        #[doc = #key_doc]
        #vis fn key(#(#params),*) -> __ddb::Key<#ident> {
            let parts = #args;
            __KEYS.key(&parts)
        }

        #[doc = #parse_doc]
        #vis fn parse_key(#parse_sig) -> __ddb::Result<(#(#tys,)*), __ddb::Error> {
            <Self as __ddb::Entity>::parse_key(#parse_call)
        }
    };
    Items { inherent, other }
}
