//! The serde attributes that change what is stored: renames, skips, flatten, defaults.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr, Token};

use super::skip_value;

/// serde's `rename_all` rules, applied to snake_case field names as serde does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RenameRule {
    None,
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The rules' names, for an error message.
    pub const NAMES: &str = "lowercase, UPPERCASE, PascalCase, camelCase, snake_case, SCREAMING_SNAKE_CASE, kebab-case, SCREAMING-KEBAB-CASE";

    pub fn from_str(s: &str) -> Option<RenameRule> {
        Some(match s {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// The rule applied to a PascalCase variant name, as serde applies it.
    pub fn apply_to_variant(self, variant: &str) -> String {
        let snake = || {
            let mut out = String::new();
            for (i, c) in variant.char_indices() {
                if i > 0 && c.is_uppercase() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            }
            out
        };
        match self {
            RenameRule::None | RenameRule::Pascal => variant.to_owned(),
            RenameRule::Lower => variant.to_ascii_lowercase(),
            RenameRule::Upper => variant.to_ascii_uppercase(),
            RenameRule::Camel => {
                let mut chars = variant.chars();
                chars.next().map_or_else(String::new, |c| {
                    c.to_ascii_lowercase().to_string() + chars.as_str()
                })
            }
            RenameRule::Snake => snake(),
            RenameRule::ScreamingSnake => snake().to_ascii_uppercase(),
            RenameRule::Kebab => snake().replace('_', "-"),
            RenameRule::ScreamingKebab => snake().to_ascii_uppercase().replace('_', "-"),
        }
    }

    pub fn apply(self, field: &str) -> String {
        match self {
            RenameRule::None | RenameRule::Lower | RenameRule::Snake => field.to_owned(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::new();
                let mut capitalize = true;
                for c in field.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

/// The serialize-side name in `rename = "x"` or `rename(serialize = "x", ...)`.
fn serialize_name(meta: &ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut name = None;
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident("serialize") {
                let lit: LitStr = inner.value()?.parse()?;
                name = Some(lit.value());
            } else {
                skip_value(&inner)?;
            }
            Ok(())
        })?;
    }
    Ok(name)
}

/// Container-level serde settings that matter here. Malformed serde attributes are left for
/// serde to report.
pub fn serde_container(attrs: &[Attribute]) -> RenameRule {
    let mut rule = RenameRule::None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename_all") {
                if let Some(r) = serialize_name(&meta)?.as_deref().and_then(RenameRule::from_str) {
                    rule = r;
                }
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
    rule
}

#[derive(Default)]
pub struct SerdeField {
    pub rename: Option<String>,
    pub skip_serializing: bool,
    /// The first skip attribute written (`skip`, `skip_serializing`, ...), for messages.
    pub skip_attr: Option<&'static str>,
    pub flatten: bool,
    /// `skip` or `skip_deserializing`: reads ignore the attribute.
    pub skip_deserializing: bool,
    /// `alias = ".."`: other names reads take the field from.
    pub aliases: Vec<String>,
    /// `with` or `deserialize_with`: serde reads a missing field as an error unless it has a
    /// `default`.
    pub deserialize_with: bool,
}

pub fn serde_field(attrs: &[Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                if let Some(name) = serialize_name(&meta)? {
                    out.rename = Some(name);
                }
            } else if meta.path.is_ident("skip") {
                out.skip_serializing = true;
                out.skip_deserializing = true;
                out.skip_attr.get_or_insert("skip");
            } else if meta.path.is_ident("skip_serializing") {
                out.skip_serializing = true;
                out.skip_attr.get_or_insert("skip_serializing");
            } else if meta.path.is_ident("skip_deserializing") {
                out.skip_deserializing = true;
                out.skip_attr.get_or_insert("skip_deserializing");
            } else if meta.path.is_ident("flatten") {
                out.flatten = true;
            } else if meta.path.is_ident("alias") {
                let alias: LitStr = meta.value()?.parse()?;
                out.aliases.push(alias.value());
            } else if meta.path.is_ident("with") || meta.path.is_ident("deserialize_with") {
                out.deserialize_with = true;
                skip_value(&meta)?;
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
    out
}

/// True when the attributes hold `#[serde(default)]` (on a field or on the struct): serde
/// fills the field in when the item lacks it.
pub fn serde_default(attrs: &[Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("serde")).any(|a| {
        let mut found = false;
        let _ = a.parse_nested_meta(|meta| {
            found |= meta.path.is_ident("default");
            skip_value(&meta)
        });
        found
    })
}

#[cfg(test)]
mod tests {
    use super::RenameRule;

    /// serde's outcomes for a variant named `InReview` (serde_derive's `case.rs` rules).
    #[test]
    fn variant_names_follow_serde() {
        let cases = [
            ("lowercase", "inreview"),
            ("UPPERCASE", "INREVIEW"),
            ("PascalCase", "InReview"),
            ("camelCase", "inReview"),
            ("snake_case", "in_review"),
            ("SCREAMING_SNAKE_CASE", "IN_REVIEW"),
            ("kebab-case", "in-review"),
            ("SCREAMING-KEBAB-CASE", "IN-REVIEW"),
        ];
        for (rule, expected) in cases {
            let rule = RenameRule::from_str(rule).expect("a serde rule");
            assert_eq!(rule.apply_to_variant("InReview"), expected);
        }
        assert_eq!(
            RenameRule::from_str("snake_case").map(|r| r.apply_to_variant("A")),
            Some("a".into())
        );
        assert!(RenameRule::from_str("lower").is_none());
        assert_eq!(RenameRule::NAMES.split(", ").count(), cases.len());
    }
}
