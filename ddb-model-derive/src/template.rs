//! Key template parser: `"USER#<id>"` into literal runs and `<field>` placeholders.
//!
//! Rules (each broken rule is one error, all reported together):
//! - the template is not empty;
//! - every `<` is closed by `>`, with a field name in between (`<>` and `<a-b>` are errors);
//! - two placeholders have a literal between them;
//! - the literal after a placeholder starts with a separator (`# / | ~ :`), so the key
//!   runtime, which escapes separators inside values, can always tell where a value ends;
//!   or with another character than the escape character `%`, when the field's type never
//!   writes it (`<seq>x` for an integer): the type is only known to the compiler, so the
//!   entity derive emits that check (`Template::typed_follows`, `expand::checks`), and the
//!   other templates (an edge's inverse) keep the separator rule (`separator_error`);
//! - a placeholder may be marked verbatim, `<path:verbatim>`: its value is written without
//!   escapes (for layouts written by other code), and the runtime refuses a value holding
//!   the first character of the literal after it, which is then free to be any text;
//! - a placeholder may have a format, after the name or `:verbatim`, each option once:
//!   `:unpadded` (integers), `:iso8601(s|ms|us|ns)` (datetimes, written without escapes, so
//!   the literal after it must start with a character ISO 8601 text never holds), `:lower` or
//!   `:upper` (text, or the letters of `:iso8601(..)`). The field's type is checked by the
//!   compiler (`expand::keys`), at the placeholder.

use proc_macro2::Span;
use syn::LitStr;

/// The characters the runtime escapes inside values; kept in sync with
/// `ddb_model::key::SEPARATORS` (a runtime test checks the pairing).
pub const SEPARATORS: [char; 5] = ['#', '/', '|', '~', ':'];

#[derive(Debug, Clone)]
pub enum Segment {
    Lit(String),
    Field { name: String, span: Span, verbatim: bool, format: Option<Format> },
}

/// The value format of a placeholder: `:unpadded`, `:iso8601(..)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFormat {
    Unpadded,
    /// The precision's name: `s`, `ms`, `us`, `ns`.
    Iso8601(&'static str),
}

/// `:lower`, `:upper`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    Lower,
    Upper,
}

/// A placeholder's format: a value format, a case, or both (`:iso8601(ms):lower`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub value: Option<ValueFormat>,
    pub case: Option<Case>,
}

impl Format {
    /// Written without escapes whatever the placeholder says: ISO 8601 text holds `:`.
    pub fn raw(&self) -> bool {
        matches!(self.value, Some(ValueFormat::Iso8601(_)))
    }

    /// Every value reads back as itself: not a case of text (`Ann` reads back `ann`), not a
    /// datetime below nanoseconds (truncated).
    pub fn lossless(&self) -> bool {
        match self.value {
            Some(ValueFormat::Unpadded) => true,
            Some(ValueFormat::Iso8601(p)) => p == "ns",
            None => self.case.is_none(),
        }
    }

    /// The texts sort as their values: ISO 8601 does, unpadded integers and a case of text
    /// do not.
    pub fn ordered(&self) -> bool {
        matches!(self.value, Some(ValueFormat::Iso8601(_)))
    }

    /// The options as written (`:iso8601(ms):lower`).
    pub fn options(&self) -> String {
        let value = match self.value {
            Some(ValueFormat::Unpadded) => ":unpadded".to_owned(),
            Some(ValueFormat::Iso8601(p)) => format!(":iso8601({p})"),
            None => String::new(),
        };
        let case = match self.case {
            Some(Case::Lower) => ":lower",
            Some(Case::Upper) => ":upper",
            None => "",
        };
        format!("{value}{case}")
    }

    /// The characters an ISO 8601 text may hold (none for other formats, whose texts are
    /// escaped: `typed_follows` and the separator rule cover them).
    fn raw_chars(&self) -> &'static str {
        match (self.value, self.case) {
            (Some(ValueFormat::Iso8601(_)), Some(Case::Lower)) => "+-.:0123456789tz",
            (Some(ValueFormat::Iso8601(_)), _) => "+-.:0123456789TZ",
            _ => "",
        }
    }
}

/// The options of a placeholder, as parsed: `:verbatim` and a format.
struct Options {
    verbatim: bool,
    format: Option<Format>,
}

const OPTIONS_HELP: &str = "the options are `:verbatim` (written without escapes), `:unpadded` (an integer in as few digits as it needs), `:iso8601(s)`, `(ms)`, `(us)` or `(ns)` (a UTC datetime in ISO 8601, to that precision), `:lower` and `:upper` (text, or the letters of an ISO 8601 datetime, in one case)";

/// Parses the options after a placeholder's name (`["verbatim", "lower"]`); the error text
/// otherwise.
fn options(inside: &str, options: &[&str]) -> Result<Options, String> {
    let (mut verbatim, mut value, mut case) = (false, None, None);
    let mut seen: Vec<&str> = Vec::new();
    for &option in options {
        if seen.contains(&option) {
            return Err(format!("placeholder option `:{option}` is repeated in `<{inside}>`"));
        }
        seen.push(option);
        let precision = option
            .strip_prefix("iso8601")
            .map(|p| p.strip_prefix('(').and_then(|p| p.strip_suffix(')')));
        let (new_value, new_case) = match (option, precision) {
            ("verbatim", _) => {
                verbatim = true;
                continue;
            }
            ("unpadded", _) => (Some(ValueFormat::Unpadded), None),
            ("lower", _) => (None, Some(Case::Lower)),
            ("upper", _) => (None, Some(Case::Upper)),
            (_, Some(Some(p))) if ["s", "ms", "us", "ns"].contains(&p) => {
                let p = ["s", "ms", "us", "ns"].into_iter().find(|n| *n == p).unwrap_or("ns");
                (Some(ValueFormat::Iso8601(p)), None)
            }
            (_, Some(_)) => {
                return Err(format!(
                    "`:{option}` in `<{inside}>`: an ISO 8601 format names its precision, one of `:iso8601(s)`, `:iso8601(ms)`, `:iso8601(us)`, `:iso8601(ns)`"
                ));
            }
            _ => {
                let name = inside.split(':').next().unwrap_or_default();
                return Err(format!(
                    "unknown placeholder option `:{option}` in `<{inside}>`: {OPTIONS_HELP}, as in `<{name}:unpadded>`"
                ));
            }
        };
        if new_value.is_some() && value.is_some() {
            return Err(format!("`<{inside}>` has two formats: keep one of them"));
        }
        if new_case.is_some() && case.is_some() {
            return Err(format!("`<{inside}>` has two cases: keep `:lower` or `:upper`"));
        }
        value = value.or(new_value);
        case = case.or(new_case);
    }
    if value == Some(ValueFormat::Unpadded) && case.is_some() {
        return Err(format!(
            "`<{inside}>`: an unpadded integer is digits only, it has no case: remove `:lower` or `:upper`"
        ));
    }
    let format = (value.is_some() || case.is_some()).then_some(Format { value, case });
    Ok(Options { verbatim, format })
}

#[derive(Debug, Clone)]
pub struct Template {
    pub text: String,
    pub segments: Vec<Segment>,
}

impl Template {
    /// Stands in for a template that is missing or empty (its error is reported already), so
    /// the checks of the other templates still run. It has no placeholders, and it never
    /// reaches code generation: the reported error stops the derive first.
    pub fn invalid() -> Template {
        Template { text: String::new(), segments: Vec::new() }
    }

    /// The placeholder names, in order, with repeats.
    pub fn fields(&self) -> impl Iterator<Item = (&str, Span)> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Field { name, span, .. } => Some((name.as_str(), *span)),
            Segment::Lit(_) => None,
        })
    }

    /// The escaped placeholders directly followed by a literal that does not start with a
    /// separator: `(name, span, first character of the literal)`. Each is sound only for a
    /// field type that never writes that character.
    pub fn typed_follows(&self) -> Vec<(&str, Span, char)> {
        let mut out = Vec::new();
        for pair in self.segments.windows(2) {
            if let [Segment::Field { name, span, verbatim: false, format }, Segment::Lit(lit)] =
                pair
                && !format.is_some_and(|f| f.raw())
                && let Some(first) = lit.chars().next()
                && !SEPARATORS.contains(&first)
            {
                out.push((name.as_str(), *span, first));
            }
        }
        out
    }

    /// The placeholders with options (`:verbatim`, a format): their spans and options as
    /// written (`:verbatim`, `:unpadded`).
    pub fn option_spans(&self) -> impl Iterator<Item = (Span, String)> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Field { span, verbatim, format, .. } if *verbatim || format.is_some() => {
                let verbatim = if *verbatim { ":verbatim" } else { "" };
                let format = format.map(|f| f.options()).unwrap_or_default();
                Some((*span, format!("{verbatim}{format}")))
            }
            _ => None,
        })
    }

    /// The placeholders with a format: name, span and format.
    pub fn formats(&self) -> impl Iterator<Item = (&str, Span, Format)> {
        self.segments.iter().filter_map(|s| match s {
            Segment::Field { name, span, format: Some(format), .. } => {
                Some((name.as_str(), *span, *format))
            }
            _ => None,
        })
    }
}

/// The span of bytes `range` inside the literal, where the compiler can give one (nightly),
/// else the whole literal.
fn sub_span(lit: &LitStr, range: std::ops::Range<usize>) -> Span {
    // +1 skips the opening quote; only exact for literals without escapes or raw markers.
    let raw = lit.token().to_string();
    if raw.starts_with('"')
        && !raw.contains('\\')
        && let Some(span) = lit.token().subspan(range.start + 1..range.end + 1)
    {
        return span;
    }
    lit.span()
}

fn is_ident(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c == '_' || c.is_alphabetic() => {}
        _ => return false,
    }
    chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Parses `lit`. With errors, the template holds only the placeholders that did parse, so the
/// field checks still run on them; it must not reach code generation.
pub fn parse(lit: &LitStr) -> (Template, Vec<syn::Error>) {
    let text = lit.value();
    let mut errors = Vec::new();
    let mut segments = Vec::new();
    if text.is_empty() {
        errors.push(syn::Error::new(
            lit.span(),
            "empty key template: DynamoDB keys cannot be empty; write a literal such as \"PROFILE\" or a placeholder such as \"USER#<id>\"",
        ));
        return (Template::invalid(), errors);
    }

    let mut literal = String::new();
    let mut rest = text.as_str();
    let mut offset = 0;
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            literal.push_str(rest);
            break;
        };
        literal.push_str(&rest[..open]);
        let start = offset + open;
        let after_open = &rest[open + 1..];
        let close = after_open.find('>');
        let next_open = after_open.find('<');
        match close {
            Some(close) if next_open.is_none_or(|n| n > close) => {
                let inside = &after_open[..close];
                let end = start + close + 2;
                let span = sub_span(lit, start..end);
                let mut parts = inside.split(':');
                let name = parts.next().unwrap_or_default();
                let options = match options(inside, &parts.collect::<Vec<_>>()) {
                    Ok(options) => options,
                    Err(message) => {
                        errors.push(syn::Error::new(span, message));
                        literal.clear();
                        offset = end;
                        rest = &text[end..];
                        continue;
                    }
                };
                if name.is_empty() {
                    errors.push(syn::Error::new(
                        span,
                        format!("empty placeholder `<>` at byte {start}: put a field name inside, as in `<id>`"),
                    ));
                } else if !is_ident(name) {
                    errors.push(syn::Error::new(
                        span,
                        format!("`<{name}>` is not a placeholder: a placeholder names one field, as in `<id>`"),
                    ));
                } else {
                    if !literal.is_empty() {
                        segments.push(Segment::Lit(std::mem::take(&mut literal)));
                    }
                    let Options { verbatim, format } = options;
                    segments.push(Segment::Field { name: name.to_owned(), span, verbatim, format });
                }
                literal.clear();
                offset = end;
                rest = &text[end..];
            }
            _ => {
                let span = sub_span(lit, start..start + 1);
                let name: String =
                    after_open.chars().take_while(|c| *c == '_' || c.is_alphanumeric()).collect();
                let message = if name.is_empty() {
                    format!(
                        "unclosed `<` at byte {start}: a placeholder looks like `<field>`, and a key template cannot contain `<` otherwise"
                    )
                } else {
                    format!("unclosed placeholder `<{name}`: close it with `>`, as in `<{name}>`")
                };
                errors.push(syn::Error::new(span, message));
                break;
            }
        }
    }
    if !literal.is_empty() {
        segments.push(Segment::Lit(literal));
    }

    // Placeholder neighbours; skipped after a syntax error, which leaves gaps in `segments`.
    if errors.is_empty() {
        neighbours(&segments, &mut errors);
    }
    (Template { text, segments }, errors)
}

/// Every placeholder is followed by a literal that starts with a separator.
fn neighbours(segments: &[Segment], errors: &mut Vec<syn::Error>) {
    for pair in segments.windows(2) {
        if let [Segment::Field { name, span, verbatim, format }, next] = pair {
            match next {
                Segment::Field { name: next_name, .. } => errors.push(syn::Error::new(
                    *span,
                    format!(
                        "placeholders `<{name}>` and `<{next_name}>` are adjacent: put a separator between them, as in `<{name}>#<{next_name}>`"
                    ),
                )),
                // An ISO 8601 text ends where a character it never holds starts.
                Segment::Lit(lit_text) if format.is_some_and(|f| f.raw()) => {
                    let chars = format.map(|f| f.raw_chars()).unwrap_or_default();
                    if let Some(first) = lit_text.chars().next().filter(|c| chars.contains(*c)) {
                        let options = format.map(|f| f.options()).unwrap_or_default();
                        errors.push(syn::Error::new(
                            *span,
                            format!(
                                "placeholder `<{name}{options}>` is followed by `{first}`, which its ISO 8601 text holds, so the key could not be read back: start the text after it with another character, such as `#`"
                            ),
                        ));
                    }
                }
                // A verbatim value is refused at run time when it holds the literal's first
                // character, whatever it is.
                Segment::Lit(_) if *verbatim => {}
                // Another character than a separator is checked against the field's type by
                // the compiler (`typed_follows`); never the escape character.
                Segment::Lit(lit_text) => {
                    if lit_text.starts_with('%') {
                        errors.push(syn::Error::new(
                            *span,
                            format!(
                                "placeholder `<{name}>` is followed by `%`, the escape character, which an escaped value holds wherever it escapes a separator: start the text after it with a separator (one of # / | ~ :), or with a character the field's type never writes (a letter after an integer, for example)"
                            ),
                        ));
                    }
                }
            }
        }
    }
}

/// The error for placeholder `<name>` followed by `first`, which is not a separator, in a
/// template whose placeholder types are not checked (an edge's inverse keys).
pub fn separator_error(name: &str, span: Span, first: char) -> syn::Error {
    syn::Error::new(
        span,
        format!(
            "placeholder `<{name}>` is followed by `{first}`: the text after a placeholder here must start with a separator (one of # / | ~ :) so the value's end can be found"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> (Vec<String>, Vec<String>) {
        let lit = LitStr::new(text, Span::call_site());
        let (template, errors) = parse(&lit);
        let segments = template
            .segments
            .iter()
            .map(|s| match s {
                Segment::Lit(l) => format!("lit:{l}"),
                Segment::Field { name, verbatim, format, .. } => {
                    let kind = if *verbatim { "verbatim" } else { "field" };
                    let format = format.map(|f| f.options()).unwrap_or_default();
                    format!("{kind}:{name}{format}")
                }
            })
            .collect();
        (segments, errors.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn splits_literals_and_placeholders() {
        let (segments, errors) = parse_str("USER#<id>#ORDER#<year>:<seq>");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            segments,
            ["lit:USER#", "field:id", "lit:#ORDER#", "field:year", "lit::", "field:seq"]
        );
        let (segments, errors) = parse_str("PROFILE");
        assert!(errors.is_empty());
        assert_eq!(segments, ["lit:PROFILE"]);
        let (segments, _) = parse_str("<country>");
        assert_eq!(segments, ["field:country"]);
        // Checked against the field's type by the compiler.
        let lit = LitStr::new("A#<n>x<m>-<s>#", Span::call_site());
        let (template, errors) = parse(&lit);
        assert!(errors.is_empty(), "{errors:?}");
        let follows: Vec<(&str, char)> =
            template.typed_follows().into_iter().map(|(n, _, c)| (n, c)).collect();
        assert_eq!(follows, [("n", 'x'), ("m", '-')]);
        let (segments, errors) = parse_str("<root:verbatim>-<path:verbatim>");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(segments, ["verbatim:root", "lit:-", "verbatim:path"]);
    }

    #[test]
    fn parses_formats() {
        let (segments, errors) =
            parse_str("$t#n_<n:unpadded>#due_<due:iso8601(ms):lower>#<s:lower:verbatim>-<u:upper>");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            segments,
            [
                "lit:$t#n_",
                "field:n:unpadded",
                "lit:#due_",
                "field:due:iso8601(ms):lower",
                "lit:#",
                "verbatim:s:lower",
                "lit:-",
                "field:u:upper"
            ]
        );
        for p in ["s", "us", "ns"] {
            let (segments, errors) = parse_str(&format!("<d:iso8601({p})>"));
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(segments, [format!("field:d:iso8601({p})")]);
        }
        // ISO 8601 text is written without escapes: a literal of another character ends it.
        let lit = LitStr::new("<d:iso8601(s)>x<e:iso8601(ms):lower>Y", Span::call_site());
        let (template, errors) = parse(&lit);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(template.typed_follows().is_empty());
        let lossy: Vec<bool> = template.formats().map(|(_, _, f)| f.lossless()).collect();
        assert_eq!(lossy, [false, false]);
    }

    #[test]
    fn reports_each_rule() {
        let cases = [
            ("", "empty key template"),
            ("USER#<id", "unclosed placeholder"),
            ("USER#<>", "empty placeholder"),
            ("USER#<my-id>", "is not a placeholder"),
            ("<a><b>", "adjacent"),
            ("<a>%<b>", "followed by `%`"),
            ("<a:raw>#<b>", "unknown placeholder option `:raw`"),
            ("<a:verbatim><b>", "adjacent"),
            ("<:verbatim>", "empty placeholder"),
            ("<a:iso8601>#", "names its precision"),
            ("<a:iso8601(m)>#", "names its precision"),
            ("<a:unpadded:iso8601(ms)>", "two formats"),
            ("<a:lower:upper>", "two cases"),
            ("<a:lower:lower>", "is repeated"),
            ("<a:unpadded:lower>", "has no case"),
            ("<a:padded>", "unknown placeholder option `:padded`"),
            ("<a:iso8601(ms)>:<b>", "which its ISO 8601 text holds"),
            ("<a:iso8601(ms)>.", "which its ISO 8601 text holds"),
            ("<a:iso8601(ms):lower>t", "which its ISO 8601 text holds"),
        ];
        for (text, needle) in cases {
            let (_, errors) = parse_str(text);
            assert!(errors.iter().any(|e| e.contains(needle)), "{text}: {errors:?}");
        }
    }

    #[test]
    fn separators_match_the_runtime_list() {
        // The runtime escapes exactly these; tests/it/keys.rs checks the runtime side.
        assert_eq!(SEPARATORS, ['#', '/', '|', '~', ':']);
        for c in SEPARATORS {
            let (_, errors) = parse_str(&format!("<a>{c}<b>"));
            assert!(errors.is_empty(), "{c}: {errors:?}");
        }
    }
}
