//! Collects every error of one derive so the user sees all mistakes at once.

use std::fmt::Display;

use quote::ToTokens;

#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
}

impl Ctxt {
    pub fn error_spanned_by<T: ToTokens, M: Display>(&mut self, tokens: T, message: M) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn error_at<M: Display>(&mut self, span: proc_macro2::Span, message: M) {
        self.errors.push(syn::Error::new(span, message));
    }

    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    pub fn extend(&mut self, errors: impl IntoIterator<Item = syn::Error>) {
        self.errors.extend(errors);
    }

    /// The number of errors so far.
    pub fn len(&self) -> usize {
        self.errors.len()
    }

    /// `Err` with all errors combined, if there were any.
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }

    /// `value` when there was no error. A derive's IR is `None` only after an error, so the
    /// fallback error at `ident` is never seen.
    pub fn check_value<T>(self, value: Option<T>, ident: &syn::Ident) -> Result<T, syn::Error> {
        self.check()?;
        value.ok_or_else(|| syn::Error::new_spanned(ident, "invalid input"))
    }
}
