//! Unique constraints (`#[unique]` on a field, `#[entity(unique(a, b))]`): what a constraint
//! is and how a value becomes the text its sentinel item is keyed by. The writes that keep
//! the sentinels are in `ops` (`ops::unique`).

use std::borrow::Cow;

use serde::de::DeserializeOwned;

use crate::error::Error;
use crate::item::Item;
use crate::key::KeyPart;

/// One unique constraint of an entity: a value of its fields is owned by at most one item of
/// the constraint's scope.
///
/// Declared with `#[unique]` on a field (scope `"<Entity>.<field>"`), `#[unique(scope =
/// "email")]` (a namespace that fields of several entities share), or `#[entity(unique(org,
/// name))]` (the combination of fields is unique).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniqueDef {
    /// The field, or the fields of a composite constraint joined by `", "`, as written in
    /// the struct: what errors name.
    pub field: &'static str,
    /// The stored attribute names of the fields, in order.
    pub attrs: &'static [&'static str],
    /// The namespace of the values: the declared `scope`, else `"<Entity>.<field>"`.
    pub scope: &'static str,
}

/// A field type that can be declared `#[unique]`: a [`KeyPart`] (its key text is the
/// value the constraint compares, exactly as in keys) or an `Option` of one (`None` owns
/// nothing).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a unique field",
    label = "`#[unique]` compares the field's key text, so its type must implement `ddb_model::KeyPart` (or be an `Option` of one)",
    note = "`KeyPart` is implemented for String, bool, char and the integer types; for your own struct or enum, add `#[derive(ddb_model::KeyPart)]`"
)]
pub trait UniqueField {
    /// The key part type inside.
    type Part: KeyPart;
    /// The value, or `None` when the field owns nothing.
    fn unique_part(&self) -> Option<&Self::Part>;
}

impl<T: KeyPart> UniqueField for T {
    type Part = T;
    fn unique_part(&self) -> Option<&T> {
        Some(self)
    }
}

impl<T: KeyPart> UniqueField for Option<T> {
    type Part = T;
    fn unique_part(&self) -> Option<&T> {
        self.as_ref()
    }
}

/// The text of a constraint's value, built from its fields' parts in order: each part's key
/// text escaped (so it holds no separator) and the parts joined by `#`, which keeps the text
/// injective. A part that owns nothing (`None`, an absent attribute) makes the whole value
/// own nothing.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct UniqueText {
    text: String,
    parts: usize,
    none: bool,
}

impl UniqueText {
    /// An empty text, before its first part.
    pub fn new() -> Self {
        UniqueText::default()
    }

    /// Adds the part stored in attribute `attr` of `item`, read as a `T`.
    pub fn part<T: UniqueField + DeserializeOwned>(
        &mut self,
        entity: &'static str,
        attr: &'static str,
        item: &Item,
    ) -> Result<(), Error> {
        let value = match item.get(attr) {
            None | Some(aws_sdk_dynamodb::types::AttributeValue::Null(_)) => None,
            Some(value) => {
                let field: T = crate::item::from_value(value.clone()).map_err(|source| {
                    Error::Deserialize { entity, key: format!("attribute `{attr}`"), source }
                })?;
                field.unique_part().map(|p| p.key_text().into_owned())
            }
        };
        self.push(value.as_deref().map(Cow::Borrowed));
        Ok(())
    }

    fn push(&mut self, part: Option<Cow<'_, str>>) {
        match part {
            None => self.none = true,
            Some(text) => {
                if self.parts > 0 {
                    self.text.push('#');
                }
                crate::escape::escape_into(&text, &mut self.text);
            }
        }
        self.parts += 1;
    }

    /// The value's text; `None` when a part owns nothing.
    pub fn finish(self) -> Option<String> {
        (!self.none).then_some(self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(parts: &[Option<&str>]) -> Option<String> {
        let mut t = UniqueText::new();
        for p in parts {
            t.push(p.map(Cow::Borrowed));
        }
        t.finish()
    }

    #[test]
    fn parts_are_escaped_and_joined() {
        assert_eq!(text(&[Some("a@b.c")]).as_deref(), Some("a@b.c"));
        assert_eq!(text(&[Some("")]).as_deref(), Some(""));
        assert_eq!(text(&[Some("a#b")]).as_deref(), Some("a%23b"));
        assert_eq!(text(&[Some("a"), Some("b")]).as_deref(), Some("a#b"));
        assert_ne!(text(&[Some("a#b")]), text(&[Some("a"), Some("b")]));
        assert_eq!(text(&[Some("a"), None]), None);
    }

    proptest::proptest! {
        /// Two lists of parts have one text only when they are the same list.
        #[test]
        fn texts_are_injective(
            a in proptest::collection::vec("\\PC{0,4}|[#%:]{0,3}", 1..3),
            b in proptest::collection::vec("\\PC{0,4}|[#%:]{0,3}", 1..3),
        ) {
            let ta = text(&a.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>());
            let tb = text(&b.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>());
            // The same number of parts is what one constraint compares.
            if a.len() == b.len() {
                proptest::prop_assert_eq!(ta == tb, a == b);
            }
        }
    }
}
