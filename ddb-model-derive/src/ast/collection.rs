//! `#[derive(Collection)]`: an enum with one variant per entity type.

use syn::{Data, DeriveInput, Fields, Ident, Type};

use crate::attr;
use crate::ctxt::Ctxt;

pub struct Variant<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    /// `#[collection(other)]`: receives the items of unlisted types.
    pub other: bool,
}

pub struct Collection<'a> {
    pub ident: &'a Ident,
    pub is_enum: bool,
    pub variants: Vec<Variant<'a>>,
}

impl<'a> Collection<'a> {
    pub fn from_ast(cx: &mut Ctxt, input: &'a DeriveInput) -> Collection<'a> {
        let ident = &input.ident;
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(
                &input.generics,
                "`Collection` cannot be derived for a generic enum",
            );
        }
        for attr in input.attrs.iter().filter(|a| a.path().is_ident("collection")) {
            cx.error_spanned_by(attr, "#[collection(other)] goes on a variant, not on the enum");
        }
        let mut variants = Vec::new();
        let Data::Enum(data) = &input.data else {
            cx.error_spanned_by(
                ident,
                "`Collection` is derived on an enum with one variant per entity type, as in `enum UserItems { User(User), Order(Order) }`",
            );
            return Collection { ident, is_enum: false, variants };
        };
        for v in &data.variants {
            let other = attr::is_other(cx, &v.attrs);
            match &v.fields {
                Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                    variants.push(Variant { ident: &v.ident, ty: &f.unnamed[0].ty, other });
                }
                _ => cx.error_spanned_by(
                    &v.ident,
                    format!(
                        "each variant of a collection holds one entity, as in `{}(User)`",
                        v.ident
                    ),
                ),
            }
        }
        Collection { ident, is_enum: true, variants }
    }

    /// The variants holding an entity (all but `other`).
    pub fn entities(&self) -> impl Iterator<Item = &Variant<'a>> {
        self.variants.iter().filter(|v| !v.other)
    }

    /// The `#[collection(other)]` variant.
    pub fn other(&self) -> Option<&Variant<'a>> {
        self.variants.iter().find(|v| v.other)
    }
}
