//! What an interceptor adds to a write: conditions, written with placeholders of its own that
//! the library renames so that they cannot collide with the request's.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::error::RequestProblem;

/// A condition an [`Interceptor`](super::Interceptor) adds to a write: a DynamoDB condition
/// expression with its own placeholders (`#name` for attribute names, `:name` for values),
/// each declared with [`name`](AddedCondition::name) or [`value`](AddedCondition::value).
/// The library renames the placeholders before adding it, so any names may be used.
///
/// ```
/// use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
/// use ddb_model::intercept::AddedCondition;
///
/// let same_region = AddedCondition::new("attribute_not_exists(#r) OR #r = :r")
///     .name("#r", "region")
///     .value(":r", AttributeValue::S("eu-west-1".into()));
/// # let _ = same_region;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AddedCondition {
    expression: String,
    names: Vec<(String, String)>,
    values: Vec<(String, AttributeValue)>,
}

impl AddedCondition {
    /// A condition expression (DynamoDB syntax; names and values only through
    /// placeholders).
    pub fn new(expression: impl Into<String>) -> Self {
        AddedCondition { expression: expression.into(), names: Vec::new(), values: Vec::new() }
    }

    /// Declares the placeholder `placeholder` (`#h`) as the attribute name `attribute`.
    #[must_use]
    pub fn name(mut self, placeholder: impl Into<String>, attribute: impl Into<String>) -> Self {
        self.names.push((placeholder.into(), attribute.into()));
        self
    }

    /// Declares the placeholder `placeholder` (`:v`) as the value `value`.
    #[must_use]
    pub fn value(mut self, placeholder: impl Into<String>, value: AttributeValue) -> Self {
        self.values.push((placeholder.into(), value));
        self
    }

    /// The condition with its placeholders renamed to `#x<n>` / `:x<n>` (counting from
    /// `*next`, skipping any `taken`), checked: every placeholder it uses is declared, and
    /// every declared one is used.
    pub(crate) fn render(
        &self,
        taken: &dyn Fn(&str) -> bool,
        next: &mut usize,
    ) -> Result<Rendered, RequestProblem> {
        let mut renamed: HashMap<&str, String> = HashMap::new();
        let mut out = Rendered::default();
        let mut fresh = |sigil: char| loop {
            let candidate = format!("{sigil}x{next}");
            *next += 1;
            if !taken(&candidate) {
                return candidate;
            }
        };
        for (placeholder, attribute) in &self.names {
            let new = fresh('#');
            out.names.insert(new.clone(), attribute.clone());
            renamed.insert(placeholder, new);
        }
        for (placeholder, value) in &self.values {
            let new = fresh(':');
            out.values.insert(new.clone(), value.clone());
            renamed.insert(placeholder, new);
        }
        if self.expression.trim().is_empty() {
            return Err(RequestProblem::AddedPlaceholder { placeholder: String::new() });
        }
        let mut used = std::collections::HashSet::new();
        let mut text = String::with_capacity(self.expression.len() + 8);
        for token in placeholders(&self.expression) {
            match token {
                Token::Text(t) => text.push_str(t),
                Token::Placeholder(p) => {
                    let new = renamed.get(p).ok_or_else(|| RequestProblem::AddedPlaceholder {
                        placeholder: p.to_owned(),
                    })?;
                    used.insert(p);
                    text.push_str(new);
                }
            }
        }
        // Declared twice, or declared and not used: the service would refuse the request.
        let declared = self.names.iter().map(|n| &n.0).chain(self.values.iter().map(|v| &v.0));
        let mut seen = std::collections::HashSet::new();
        for p in declared {
            if !seen.insert(p.as_str()) || !used.contains(p.as_str()) {
                return Err(RequestProblem::AddedPlaceholder { placeholder: p.clone() });
            }
        }
        out.expression = text;
        Ok(out)
    }
}

/// An added condition, renamed: its expression, names and values.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rendered {
    pub(crate) expression: String,
    pub(crate) names: HashMap<String, String>,
    pub(crate) values: HashMap<String, AttributeValue>,
}

impl Rendered {
    /// ANDs the condition to a request's `condition` (its names and values into the
    /// request's maps).
    pub(crate) fn and_into(
        self,
        condition: &mut Option<String>,
        names: &mut Option<HashMap<String, String>>,
        values: &mut Option<HashMap<String, AttributeValue>>,
    ) {
        *condition = Some(match condition.take() {
            Some(own) => format!("{} AND {}", grouped(&own), grouped(&self.expression)),
            None => self.expression,
        });
        if !self.names.is_empty() {
            names.get_or_insert_with(HashMap::new).extend(self.names);
        }
        if !self.values.is_empty() {
            values.get_or_insert_with(HashMap::new).extend(self.values);
        }
    }
}

/// `expression` in parentheses, unless one pair encloses it already (DynamoDB refuses
/// redundant parentheses).
fn grouped(expression: &str) -> std::borrow::Cow<'_, str> {
    let trimmed = expression.trim();
    let mut depth = 0usize;
    let mut enclosed = trimmed.starts_with('(');
    for (i, c) in trimmed.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && i + c.len_utf8() < trimmed.len() {
            enclosed = false;
        }
    }
    if enclosed {
        std::borrow::Cow::Borrowed(trimmed)
    } else {
        std::borrow::Cow::Owned(format!("({trimmed})"))
    }
}

/// Where an added condition goes: the request (`None`) or one action of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Added {
    pub(crate) action: Option<usize>,
    pub(crate) condition: AddedCondition,
}

/// What an [`Interceptor`](super::Interceptor) adds to the request it is shown: conditions
/// only (see [the module docs](super) for what may take one).
#[derive(Debug, Default)]
pub struct Additions {
    pub(crate) added: Vec<Added>,
}

impl Additions {
    /// ANDs `condition` to the request's own (`PutItem`, `UpdateItem`, `DeleteItem`).
    pub fn condition(&mut self, condition: AddedCondition) {
        self.added.push(Added { action: None, condition });
    }

    /// ANDs `condition` to the condition of action `action` (counting from 0) of a
    /// `TransactWriteItems`.
    pub fn action_condition(&mut self, action: usize, condition: AddedCondition) {
        self.added.push(Added { action: Some(action), condition });
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
    }
}

/// A piece of an expression: text, or a placeholder (`#name`, `:name`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Token<'a> {
    Text(&'a str),
    Placeholder(&'a str),
}

/// The pieces of `expression`, in order.
pub(crate) fn placeholders(expression: &str) -> impl Iterator<Item = Token<'_>> {
    let mut rest = expression;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let starts = |s: &str| {
            let mut chars = s.chars();
            matches!(chars.next(), Some('#' | ':')) && chars.next().is_some_and(word)
        };
        if starts(rest) {
            let end = 1 + rest[1..].find(|c: char| !word(c)).unwrap_or(rest.len() - 1);
            let (p, tail) = rest.split_at(end);
            rest = tail;
            return Some(Token::Placeholder(p));
        }
        let end = rest
            .char_indices()
            .skip(1)
            .find(|(i, _)| starts(&rest[*i..]))
            .map_or(rest.len(), |(i, _)| i);
        let (t, tail) = rest.split_at(end);
        rest = tail;
        Some(Token::Text(t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(c: &AddedCondition, taken: &[&str]) -> Result<Rendered, RequestProblem> {
        c.render(&|p| taken.contains(&p), &mut 0)
    }

    #[test]
    fn placeholders_are_renamed_around_taken_ones() {
        let c = AddedCondition::new("#a = :a AND attribute_exists(#b)")
            .name("#a", "region")
            .name("#b", "owner")
            .value(":a", AttributeValue::S("eu".into()));
        let r = render(&c, &["#x0", ":x3"]).expect("valid");
        assert_eq!(r.expression, "#x1 = :x4 AND attribute_exists(#x2)");
        assert_eq!(r.names.get("#x1").map(String::as_str), Some("region"));
        assert_eq!(r.values.get(":x4"), Some(&AttributeValue::S("eu".into())));
    }

    #[test]
    fn undeclared_unused_duplicate_and_empty_are_refused() {
        let undeclared = AddedCondition::new("#a = :b").name("#a", "x");
        assert!(render(&undeclared, &[]).is_err());
        let unused = AddedCondition::new("attribute_exists(#a)").name("#a", "x").name("#b", "y");
        assert!(render(&unused, &[]).is_err());
        let twice = AddedCondition::new("#a = #a").name("#a", "x").name("#a", "y");
        assert!(render(&twice, &[]).is_err());
        assert!(render(&AddedCondition::new("  "), &[]).is_err());
    }

    #[test]
    fn grouping_never_doubles_parentheses() {
        assert_eq!(grouped("a AND b"), "(a AND b)");
        assert_eq!(grouped("(a OR b)"), "(a OR b)");
        assert_eq!(grouped("(a) AND (b)"), "((a) AND (b))");
        assert_eq!(grouped("attribute_exists(#a)"), "(attribute_exists(#a))");
    }

    #[test]
    fn and_into_keeps_the_request_condition_first() {
        let c = AddedCondition::new("attribute_exists(#h)").name("#h", "hold");
        let r = render(&c, &["#n0"]).expect("valid");
        let mut cond = Some("#n0 = :v0".to_owned());
        let mut names = Some(HashMap::from([("#n0".to_owned(), "t".to_owned())]));
        let mut values = None;
        r.and_into(&mut cond, &mut names, &mut values);
        assert_eq!(cond.as_deref(), Some("(#n0 = :v0) AND (attribute_exists(#x0))"));
        assert_eq!(names.map(|n| n.len()), Some(2));
        assert!(values.is_none());
    }
}
