//! `#[derive(Projection)]`: a struct of some of an entity's fields.

use syn::{Data, DeriveInput, Fields, Ident, Path, Type};

use crate::attr;
use crate::ctxt::Ctxt;

pub struct ProjectedField<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
}

impl ProjectedField<'_> {
    /// The Rust field name without `r#`.
    pub fn name(&self) -> String {
        self.ident.to_string().trim_start_matches("r#").to_owned()
    }
}

pub struct Projection<'a> {
    pub ident: &'a Ident,
    /// `#[projection(entity = ..)]`.
    pub entity: Option<Path>,
    pub fields: Vec<ProjectedField<'a>>,
}

impl<'a> Projection<'a> {
    pub fn from_ast(cx: &mut Ctxt, input: &'a DeriveInput) -> Projection<'a> {
        let ident = &input.ident;
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(
                &input.generics,
                "`Projection` cannot be derived for a generic struct",
            );
        }
        let slot = attr::projection_attrs(cx, &input.attrs);
        if !slot.given {
            cx.error_spanned_by(
                ident,
                "a projection names its entity: add `#[projection(entity = Customer)]`",
            );
        }
        let mut fields = Vec::new();
        match &input.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => {
                    for f in &named.named {
                        if let Some(ident) = &f.ident {
                            fields.push(ProjectedField { ident, ty: &f.ty });
                        }
                    }
                }
                _ => cx.error_spanned_by(
                    ident,
                    "`Projection` is derived on a struct with named fields, each named like a field of the entity, as in `struct CustomerCard { name: String }`",
                ),
            },
            _ => cx.error_spanned_by(
                ident,
                "`Projection` is derived on a struct with named fields, each named like a field of the entity, as in `struct CustomerCard { name: String }`",
            ),
        }
        Projection { ident, entity: slot.value, fields }
    }
}
