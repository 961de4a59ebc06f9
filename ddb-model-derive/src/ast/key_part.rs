//! `#[derive(KeyPart)]`: a newtype, a struct of several fields, an enum (of field-less
//! variants, or with data), or any type through `Display` and `FromStr`.

use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::attr::RenameRule;
use crate::ctxt::Ctxt;

pub struct KeyPart<'a> {
    pub input: &'a DeriveInput,
    pub kind: KeyPartKind<'a>,
}

pub enum KeyPartKind<'a> {
    /// `#[key_part(via_str)]`.
    ViaStr,
    /// A struct with one field; `field` is its name when it has one.
    Newtype { ty: &'a Type, field: Option<&'a Ident> },
    /// A struct with several fields: its components, in order.
    Composite(&'a Fields),
    /// An enum, each variant with its key text (and its fields, if it has data).
    Enum(Vec<TextVariant<'a>>),
    /// Anything else (reported).
    Unsupported,
}

pub struct TextVariant<'a> {
    pub ident: &'a Ident,
    pub text: String,
    /// The rename if there is one, else the variant name: the token to fix.
    pub span: Span,
    pub fields: &'a Fields,
}

impl<'a> KeyPart<'a> {
    pub fn from_ast(cx: &mut Ctxt, input: &'a DeriveInput) -> KeyPart<'a> {
        let container = attr::key_part_container(cx, &input.attrs);
        let kind = if container.via_str.value.is_some() {
            KeyPartKind::ViaStr
        } else {
            match &input.data {
                Data::Struct(data) if data.fields.len() == 1 => match data.fields.iter().next() {
                    Some(f) => KeyPartKind::Newtype { ty: &f.ty, field: f.ident.as_ref() },
                    None => KeyPartKind::Unsupported,
                },
                Data::Struct(data) if data.fields.len() > 1 => KeyPartKind::Composite(&data.fields),
                Data::Enum(data) if !data.variants.is_empty() => {
                    let rule = container.rename_all.value.unwrap_or(RenameRule::None);
                    KeyPartKind::Enum(data.variants.iter().map(|v| variant(cx, v, rule)).collect())
                }
                _ => {
                    cx.error_spanned_by(
                        &input.ident,
                        "`KeyPart` can be derived for a struct with fields, an enum, or any type with #[key_part(via_str)] (through Display and FromStr)",
                    );
                    KeyPartKind::Unsupported
                }
            }
        };
        KeyPart { input, kind }
    }
}

/// A variant and its key text: its own rename, else its name under the type's `rename_all`.
fn variant<'a>(cx: &mut Ctxt, variant: &'a syn::Variant, rule: RenameRule) -> TextVariant<'a> {
    let rename = attr::key_part_variant(cx, &variant.attrs);
    TextVariant {
        ident: &variant.ident,
        text: rename
            .as_ref()
            .map_or_else(|| rule.apply_to_variant(&variant.ident.to_string()), |l| l.value()),
        span: rename.as_ref().map_or_else(|| variant.ident.span(), |l| l.span()),
        fields: &variant.fields,
    }
}
