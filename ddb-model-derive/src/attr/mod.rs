//! Attribute parsing: `#[entity]`, `#[index]`, `#[table]`, `#[key_part]`, and the serde
//! attributes that change stored attribute names.

use proc_macro2::Span;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Attribute, Ident, LitStr, Token};

use crate::ctxt::Ctxt;

/// A value set at most once; a second setting is an error at the second occurrence.
pub struct Slot<T> {
    attr: &'static str,
    key: &'static str,
    pub value: Option<T>,
    /// The key was written, even if its value was invalid (that error is reported already).
    pub given: bool,
}

impl<T> Slot<T> {
    pub fn new(attr: &'static str, key: &'static str) -> Self {
        Slot { attr, key, value: None, given: false }
    }

    /// Records the key written at `at` with its value (`None`: invalid, already reported).
    pub fn set<S: ToTokens>(&mut self, cx: &mut Ctxt, at: S, value: Option<T>) {
        if self.given {
            cx.error_spanned_by(
                at,
                format!(
                    "duplicate `{}` in #[{}]: it is set already; keep one",
                    self.key, self.attr
                ),
            );
        } else {
            self.given = true;
            self.value = value;
        }
    }
}

fn key_text(meta: &ParseNestedMeta) -> String {
    meta.path.to_token_stream().to_string().replace(' ', "")
}

/// Reports a key the parser does not know and skips its value, so the keys after it are
/// still read (and a misspelt key does not also cause "missing key" errors).
fn unknown_key(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    attr: &str,
    expected: &str,
) -> syn::Result<()> {
    cx.error_spanned_by(
        &meta.path,
        format!("unknown key `{}` in #[{attr}]; expected one of: {expected}", key_text(meta)),
    );
    skip_value(meta)
}

/// Skips the value of a key this parser does not handle (`= expr` or `(...)`).
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

/// The `= value` of a key as an expression; `None` (reported) when the key has no `=`.
fn value_expr(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    example: &str,
) -> syn::Result<Option<syn::Expr>> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned_by(
            &meta.path,
            format!("`{}` needs a value, as in {example}", key_text(meta)),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(Some(meta.value()?.parse()?))
}

/// A `key = "text"` value; `None` (reported) when it is not a string literal.
fn lit_value(cx: &mut Ctxt, meta: &ParseNestedMeta, example: &str) -> syn::Result<Option<LitStr>> {
    Ok(value_expr(cx, meta, example)?.and_then(|expr| match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(lit), .. }) => Some(lit),
        other => {
            cx.error_spanned_by(
                &other,
                format!("`{}` takes a string literal, as in {example}", key_text(meta)),
            );
            None
        }
    }))
}

/// A `key = path` value; `None` (reported) otherwise.
fn path_value(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    example: &str,
) -> syn::Result<Option<syn::Path>> {
    Ok(value_expr(cx, meta, example)?.and_then(|expr| match expr {
        syn::Expr::Path(syn::ExprPath { qself: None, path, .. }) => Some(path),
        other => {
            let quoted =
                matches!(&other, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(_), .. }));
            let how = if quoted { " without quotes" } else { "" };
            cx.error_spanned_by(
                &other,
                format!("`{}` takes {what}{how}, as in {example}", key_text(meta)),
            );
            None
        }
    }))
}

/// A key that takes no value (`no_sort_key`); a value is reported and skipped.
fn flag(cx: &mut Ctxt, meta: &ParseNestedMeta, attr: &str) -> syn::Result<()> {
    if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
        let key = key_text(meta);
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` takes no value: write it alone, as in #[{attr}({key})]"),
        );
        skip_value(meta)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// #[entity(...)]

pub struct EntityAttrs {
    pub table: Slot<syn::Path>,
    pub pk: Slot<LitStr>,
    pub sk: Slot<LitStr>,
    pub name: Slot<LitStr>,
    pub version: Slot<Ident>,
    /// Span of the first `#[entity]` attribute, for "missing pk" errors.
    pub span: Option<Span>,
}

pub const ENTITY_KEYS: &str = "table, pk, sk, name, version";

pub fn entity_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> EntityAttrs {
    let mut out = EntityAttrs {
        table: Slot::new("entity", "table"),
        pk: Slot::new("entity", "pk"),
        sk: Slot::new("entity", "sk"),
        name: Slot::new("entity", "name"),
        version: Slot::new("entity", "version"),
        span: None,
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("entity")) {
        out.span.get_or_insert_with(|| {
            attr.path().get_ident().map_or_else(Span::call_site, Ident::span)
        });
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("table") {
                let path = path_value(cx, &meta, "the table type", "table = App")?;
                out.table.set(cx, &meta.path, path);
            } else if meta.path.is_ident("pk") {
                let lit = lit_value(cx, &meta, "pk = \"USER#<id>\"")?;
                out.pk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("sk") {
                let lit = lit_value(cx, &meta, "sk = \"PROFILE\"")?;
                out.sk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("name") {
                let lit = lit_value(cx, &meta, "name = \"User\"")?;
                if let Some(lit) = lit.as_ref().filter(|l| l.value().is_empty()) {
                    cx.error_spanned_by(
                        lit,
                        "the entity name cannot be empty: it is stored in every item to tell entity types apart; give a name such as \"User\", or remove `name` to use the struct name",
                    );
                }
                out.name.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("version") {
                let path = path_value(cx, &meta, "a field name", "version = version")?;
                let field = path.and_then(|path| match path.get_ident() {
                    Some(ident) => Some(ident.clone()),
                    None => {
                        cx.error_spanned_by(&path, "`version` takes a field name, as in version = version");
                        None
                    }
                });
                out.version.set(cx, &meta.path, field);
            } else {
                unknown_key(cx, &meta, "entity", ENTITY_KEYS)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// #[index(name, pk = "...", sk = "...")]

pub struct IndexAttr {
    pub name: Ident,
    pub pk: Option<LitStr>,
    pub sk: Option<LitStr>,
}

pub fn index_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Vec<IndexAttr> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("index")) {
        let mut name: Option<Ident> = None;
        let mut pk = Slot::new("index", "pk");
        let mut sk = Slot::new("index", "sk");
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("pk") {
                let lit = lit_value(cx, &meta, "pk = \"ORG#<org>\"")?;
                pk.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("sk") {
                let lit = lit_value(cx, &meta, "sk = \"USER#<id>\"")?;
                sk.set(cx, &meta.path, lit);
            } else if let (Some(ident), true, true) =
                (meta.path.get_ident(), name.is_none(), meta.input.is_empty() || meta.input.peek(Token![,]))
            {
                name = Some(ident.clone());
            } else {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "unknown key `{}` in #[index]; expected the index name, then `pk` and `sk`, as in #[index(gsi1, pk = \"ORG#<org>\", sk = \"USER#<id>\")]",
                        key_text(&meta)
                    ),
                );
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
            continue;
        }
        let Some(name) = name else {
            cx.error_spanned_by(
                attr.path(),
                "#[index] needs the name of a table index first, as in #[index(gsi1, pk = \"ORG#<org>\")]",
            );
            continue;
        };
        if !pk.given {
            cx.error_spanned_by(
                &name,
                format!("#[index({name})] needs a `pk` template, as in #[index({name}, pk = \"ORG#<org>\")]"),
            );
        }
        out.push(IndexAttr { name, pk: pk.value, sk: sk.value });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// #[hierarchy(path = field, index = gsi1, max_depth = 32)]
// #[hierarchy(strategy = closure, parent = field)]
// #[hierarchy(strategy = adjacency, parent = field, index = gsi1)]

pub struct HierarchyAttrs {
    /// The `hierarchy` token of the attribute, for errors about the whole declaration.
    pub span: Span,
    pub path: Slot<Ident>,
    pub parent: Slot<Ident>,
    pub index: Slot<Ident>,
    pub max_depth: Slot<syn::LitInt>,
    pub strategy: Slot<Ident>,
}

pub const HIERARCHY_KEYS: &str = "strategy, path, parent, index, max_depth";

/// The strategies `#[hierarchy(strategy = ..)]` accepts.
pub const STRATEGIES: &[&str] = &["path", "closure", "adjacency"];

fn ident_value(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    what: &str,
    example: &str,
) -> syn::Result<Option<Ident>> {
    let path = path_value(cx, meta, what, example)?;
    Ok(path.and_then(|path| match path.get_ident() {
        Some(ident) => Some(ident.clone()),
        None => {
            cx.error_spanned_by(
                &path,
                format!("`{}` takes {what}, as in {example}", key_text(meta)),
            );
            None
        }
    }))
}

/// The `#[hierarchy]` attribute, if there is one (a second one is an error).
pub fn hierarchy_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<HierarchyAttrs> {
    let mut out: Option<HierarchyAttrs> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("hierarchy")) {
        if out.is_some() {
            cx.error_spanned_by(
                attr.path(),
                "duplicate #[hierarchy]: an entity is the node of one tree; keep one attribute",
            );
            continue;
        }
        let span = attr.path().get_ident().map_or_else(Span::call_site, Ident::span);
        let mut h = HierarchyAttrs {
            span,
            path: Slot::new("hierarchy", "path"),
            parent: Slot::new("hierarchy", "parent"),
            index: Slot::new("hierarchy", "index"),
            max_depth: Slot::new("hierarchy", "max_depth"),
            strategy: Slot::new("hierarchy", "strategy"),
        };
        if matches!(attr.meta, syn::Meta::Path(_)) {
            cx.error_spanned_by(
                attr.path(),
                "#[hierarchy] needs the path field and the index for children, as in #[hierarchy(path = path, index = gsi1)]",
            );
            // Reported once, here, not again as missing keys.
            h.path.given = true;
            h.index.given = true;
            out = Some(h);
            continue;
        }
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("path") {
                let v = ident_value(cx, &meta, "a field name", "path = path")?;
                h.path.set(cx, &meta.path, v);
            } else if meta.path.is_ident("parent") {
                let v = ident_value(cx, &meta, "a field name", "parent = parent")?;
                h.parent.set(cx, &meta.path, v);
            } else if meta.path.is_ident("index") {
                let v = ident_value(cx, &meta, "an index name", "index = gsi1")?;
                h.index.set(cx, &meta.path, v);
            } else if meta.path.is_ident("strategy") {
                let v = ident_value(cx, &meta, "a strategy name", "strategy = path")?;
                if let Some(v) =
                    v.as_ref().filter(|v| !STRATEGIES.contains(&v.to_string().as_str()))
                {
                    cx.error_spanned_by(
                        v,
                        format!(
                            "unknown tree strategy `{v}`; expected one of: {}",
                            STRATEGIES.join(", ")
                        ),
                    );
                }
                h.strategy.set(cx, &meta.path, v);
            } else if meta.path.is_ident("max_depth") {
                let expr = value_expr(cx, &meta, "max_depth = 32")?;
                let lit = expr.and_then(|expr| match expr {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(lit), .. }) => Some(lit),
                    other => {
                        cx.error_spanned_by(
                            &other,
                            "`max_depth` takes an integer, as in max_depth = 32",
                        );
                        None
                    }
                });
                h.max_depth.set(cx, &meta.path, lit);
            } else {
                unknown_key(cx, &meta, "hierarchy", HIERARCHY_KEYS)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
        out = Some(h);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// #[table(...)]

pub struct GsiAttr {
    pub name: LitStr,
    pub pk: LitStr,
    pub sk: Option<LitStr>,
}

pub struct TableAttrs {
    pub name: Slot<LitStr>,
    pub pk: Slot<LitStr>,
    pub sk: Slot<LitStr>,
    pub no_sort_key: Slot<syn::Path>,
    pub type_attr: Slot<LitStr>,
    pub gsis: Vec<GsiAttr>,
}

pub const TABLE_KEYS: &str = "name, pk, sk, no_sort_key, type_attr, gsi";

fn non_empty(cx: &mut Ctxt, lit: &Option<LitStr>, what: &str) {
    if let Some(lit) = lit.as_ref().filter(|l| l.value().is_empty()) {
        cx.error_spanned_by(lit, format!("{what} cannot be empty"));
    }
}

pub fn table_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> TableAttrs {
    let mut out = TableAttrs {
        name: Slot::new("table", "name"),
        pk: Slot::new("table", "pk"),
        sk: Slot::new("table", "sk"),
        no_sort_key: Slot::new("table", "no_sort_key"),
        type_attr: Slot::new("table", "type_attr"),
        gsis: Vec::new(),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("table")) {
        let result = attr.parse_nested_meta(|meta| {
            let path = meta.path.clone();
            if path.is_ident("name") {
                let lit = lit_value(cx, &meta, "name = \"app\"")?;
                non_empty(cx, &lit, "the table name");
                out.name.set(cx, &path, lit);
            } else if path.is_ident("pk") {
                let lit = lit_value(cx, &meta, "pk = \"pk\"")?;
                non_empty(cx, &lit, "a key attribute name");
                out.pk.set(cx, &path, lit);
            } else if path.is_ident("sk") {
                let lit = lit_value(cx, &meta, "sk = \"sk\"")?;
                non_empty(cx, &lit, "a key attribute name");
                out.sk.set(cx, &path, lit);
            } else if path.is_ident("no_sort_key") {
                flag(cx, &meta, "table")?;
                out.no_sort_key.set(cx, &path, Some(path.clone()));
            } else if path.is_ident("type_attr") {
                let lit = lit_value(cx, &meta, "type_attr = \"_type\"")?;
                non_empty(cx, &lit, "the entity type attribute name");
                out.type_attr.set(cx, &path, lit);
            } else if path.is_ident("gsi") {
                gsi(cx, &meta, &mut out.gsis)?;
            } else {
                unknown_key(cx, &meta, "table", TABLE_KEYS)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

const GSI_EXAMPLE: &str = "gsi(name = \"gsi1\", pk = \"gsi1pk\", sk = \"gsi1sk\")";

/// `gsi(name = "...", pk = "...", sk = "...")` inside #[table].
fn gsi(cx: &mut Ctxt, meta: &ParseNestedMeta, gsis: &mut Vec<GsiAttr>) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`gsi` describes one index in parentheses, as in {GSI_EXAMPLE}"),
        );
        return skip_value(meta);
    }
    let mut name = Slot::new("table(gsi)", "name");
    let mut pk = Slot::new("table(gsi)", "pk");
    let mut sk = Slot::new("table(gsi)", "sk");
    meta.parse_nested_meta(|inner| {
        let key = inner.path.clone();
        let slot = if key.is_ident("name") {
            &mut name
        } else if key.is_ident("pk") {
            &mut pk
        } else if key.is_ident("sk") {
            &mut sk
        } else {
            return unknown_key(cx, &inner, "table(gsi)", "name, pk, sk");
        };
        let lit = lit_value(cx, &inner, GSI_EXAMPLE)?;
        non_empty(cx, &lit, "a gsi name or key attribute");
        slot.set(cx, &key, lit);
        Ok(())
    })?;
    for (slot, what) in [
        (&name, "`name`: the index name"),
        (&pk, "`pk`: the attribute holding the index partition key"),
    ] {
        if !slot.given {
            cx.error_spanned_by(&meta.path, format!("gsi(...) needs {what}, as in {GSI_EXAMPLE}"));
        }
    }
    if let (Some(name), Some(pk)) = (name.value, pk.value) {
        gsis.push(GsiAttr { name, pk, sk: sk.value });
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// #[key_part(...)]

pub struct KeyPartAttrs {
    pub via_str: Slot<syn::Path>,
}

pub fn key_part_container(cx: &mut Ctxt, attrs: &[Attribute]) -> KeyPartAttrs {
    let mut out = KeyPartAttrs { via_str: Slot::new("key_part", "via_str") };
    for attr in attrs.iter().filter(|a| a.path().is_ident("key_part")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("via_str") {
                flag(cx, &meta, "key_part")?;
                out.via_str.set(cx, &meta.path, Some(meta.path.clone()));
                Ok(())
            } else if meta.path.is_ident("rename") {
                cx.error_spanned_by(
                    &meta.path,
                    "`rename` goes on an enum variant, as in #[key_part(rename = \"open\")] Open; on the type, the only key is `via_str`",
                );
                skip_value(&meta)
            } else {
                unknown_key(cx, &meta, "key_part", "via_str")
            }
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    out
}

/// `#[key_part(rename = "...")]` on an enum variant.
pub fn key_part_variant(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<LitStr> {
    let mut rename = Slot::new("key_part", "rename");
    for attr in attrs.iter().filter(|a| a.path().is_ident("key_part")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                let lit = lit_value(cx, &meta, "rename = \"open\"")?;
                rename.set(cx, &meta.path, lit);
                Ok(())
            } else {
                unknown_key(cx, &meta, "key_part", "rename (on a variant)")
            }
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    rename.value
}

// ---------------------------------------------------------------------------------------------
// serde

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
    fn from_str(s: &str) -> Option<RenameRule> {
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
                out.skip_attr.get_or_insert("skip");
            } else if meta.path.is_ident("skip_serializing") {
                out.skip_serializing = true;
                out.skip_attr.get_or_insert("skip_serializing");
            } else if meta.path.is_ident("skip_deserializing") {
                out.skip_attr.get_or_insert("skip_deserializing");
            } else if meta.path.is_ident("flatten") {
                out.flatten = true;
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
    out
}

// ---------------------------------------------------------------------------------------------
// #[edge(from = .., to = .., inverse(..) | symmetric, from_count = .., to_count = .., count = ..)]

/// Where the incoming edges of a node are, as written in `#[edge]`.
pub enum InverseAttr {
    /// `inverse(pk = "..", sk = "..", name = "..", fields(..))`: materialised inverse items.
    Items {
        pk: Option<LitStr>,
        sk: Option<LitStr>,
        name: Option<LitStr>,
        fields: Option<Vec<Ident>>,
    },
    /// `inverse(index = gsi1)`: an index of the entity that inverts the keys.
    Index { index: Ident },
}

pub struct EdgeAttrs {
    /// The first `#[edge]` attribute, for errors about missing keys.
    pub span: Span,
    pub from: Slot<Ident>,
    pub to: Slot<Ident>,
    pub inverse: Slot<InverseAttr>,
    pub symmetric: Slot<syn::Path>,
    pub from_count: Slot<syn::Path>,
    pub to_count: Slot<syn::Path>,
    pub count: Slot<syn::Path>,
}

pub const EDGE_KEYS: &str = "from, to, inverse, symmetric, from_count, to_count, count";

const INVERSE_KEYS: &str = "pk, sk, name, fields, index";

const INVERSE_EXAMPLE: &str = "inverse(pk = \"USER#<followee>\", sk = \"FOLLOWER#<follower>\")";

/// `key = field` inside `#[edge]`.
fn field_value(cx: &mut Ctxt, meta: &ParseNestedMeta, example: &str) -> syn::Result<Option<Ident>> {
    let key = key_text(meta);
    let path = path_value(cx, meta, "a field name", example)?;
    Ok(path.and_then(|path| match path.get_ident() {
        Some(ident) => Some(ident.clone()),
        None => {
            cx.error_spanned_by(&path, format!("`{key}` takes a field name, as in {example}"));
            None
        }
    }))
}

/// `inverse(...)` inside `#[edge]`.
fn inverse_attr(cx: &mut Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<InverseAttr>> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "`inverse` describes the other direction in parentheses, as in {INVERSE_EXAMPLE} or inverse(index = gsi1)"
            ),
        );
        skip_value(meta)?;
        return Ok(None);
    }
    let mut pk = Slot::new("edge(inverse)", "pk");
    let mut sk = Slot::new("edge(inverse)", "sk");
    let mut name = Slot::new("edge(inverse)", "name");
    let mut fields: Slot<Vec<Ident>> = Slot::new("edge(inverse)", "fields");
    let mut index: Slot<Ident> = Slot::new("edge(inverse)", "index");
    let mut index_key: Option<syn::Path> = None;
    meta.parse_nested_meta(|inner| {
        let key = inner.path.clone();
        if key.is_ident("pk") {
            let lit = lit_value(cx, &inner, "pk = \"USER#<followee>\"")?;
            pk.set(cx, &key, lit);
        } else if key.is_ident("sk") {
            let lit = lit_value(cx, &inner, "sk = \"FOLLOWER#<follower>\"")?;
            sk.set(cx, &key, lit);
        } else if key.is_ident("name") {
            let lit = lit_value(cx, &inner, "name = \"Follower\"")?;
            if let Some(lit) = lit.as_ref().filter(|l| l.value().is_empty()) {
                cx.error_spanned_by(
                    lit,
                    "the inverse entity name cannot be empty: it is stored in every inverse item; give a name such as \"Follower\", or remove `name`",
                );
            }
            name.set(cx, &key, lit);
        } else if key.is_ident("index") {
            let value = field_value(cx, &inner, "index = gsi1")?;
            index_key.get_or_insert_with(|| key.clone());
            index.set(cx, &key, value);
        } else if key.is_ident("fields") {
            if !inner.input.peek(syn::token::Paren) {
                cx.error_spanned_by(
                    &key,
                    "`fields` lists the fields copied onto inverse items, as in fields(since, name)",
                );
                return skip_value(&inner);
            }
            let mut list = Vec::new();
            inner.parse_nested_meta(|f| {
                match f.path.get_ident() {
                    Some(ident) if f.input.is_empty() || f.input.peek(Token![,]) => {
                        list.push(ident.clone());
                    }
                    _ => {
                        cx.error_spanned_by(
                            &f.path,
                            "`fields(..)` lists field names, as in fields(since, name)",
                        );
                        skip_value(&f)?;
                    }
                }
                Ok(())
            })?;
            fields.set(cx, &key, Some(list));
        } else {
            unknown_key(cx, &inner, "edge(inverse)", INVERSE_KEYS)?;
        }
        Ok(())
    })?;
    if let Some(at) = index_key {
        for (given, what) in
            [(pk.given, "pk"), (sk.given, "sk"), (name.given, "name"), (fields.given, "fields")]
        {
            if given {
                cx.error_spanned_by(
                    &at,
                    format!(
                        "inverse(index = ..) reads the edges through the index's own keys, so `{what}` has no use here: keep `index` for an index, or {INVERSE_EXAMPLE} for inverse items"
                    ),
                );
            }
        }
        return Ok(index.value.map(|index| InverseAttr::Index { index }));
    }
    for (slot, what) in [(&pk, "pk"), (&sk, "sk")] {
        if !slot.given {
            cx.error_spanned_by(
                &meta.path,
                format!(
                    "inverse(..) needs `{what}`: the key template of inverse items, as in {INVERSE_EXAMPLE}"
                ),
            );
        }
    }
    Ok(Some(InverseAttr::Items {
        pk: pk.value,
        sk: sk.value,
        name: name.value,
        fields: fields.value,
    }))
}

/// The `#[edge]` attribute; `None` when there is none.
pub fn edge_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<EdgeAttrs> {
    let mut out: Option<EdgeAttrs> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("edge")) {
        if out.is_some() {
            cx.error_spanned_by(
                attr,
                "duplicate #[edge]: an entity is one kind of edge; put every key in one #[edge(..)]",
            );
            continue;
        }
        let mut edge = EdgeAttrs {
            span: attr.path().get_ident().map_or_else(Span::call_site, Ident::span),
            from: Slot::new("edge", "from"),
            to: Slot::new("edge", "to"),
            inverse: Slot::new("edge", "inverse"),
            symmetric: Slot::new("edge", "symmetric"),
            from_count: Slot::new("edge", "from_count"),
            to_count: Slot::new("edge", "to_count"),
            count: Slot::new("edge", "count"),
        };
        let result = attr.parse_nested_meta(|meta| {
            let key = meta.path.clone();
            if key.is_ident("from") {
                let field = field_value(cx, &meta, "from = follower")?;
                edge.from.set(cx, &key, field);
            } else if key.is_ident("to") {
                let field = field_value(cx, &meta, "to = followee")?;
                edge.to.set(cx, &key, field);
            } else if key.is_ident("inverse") {
                let inverse = inverse_attr(cx, &meta)?;
                edge.inverse.set(cx, &key, inverse);
            } else if key.is_ident("symmetric") {
                flag(cx, &meta, "edge")?;
                edge.symmetric.set(cx, &key, Some(key.clone()));
            } else if key.is_ident("from_count")
                || key.is_ident("to_count")
                || key.is_ident("count")
            {
                let example = format!("{} = User::FOLLOWERS", key_text(&meta));
                let path = path_value(cx, &meta, "the counter field's path", &example)?;
                let slot = if key.is_ident("from_count") {
                    &mut edge.from_count
                } else if key.is_ident("to_count") {
                    &mut edge.to_count
                } else {
                    &mut edge.count
                };
                slot.set(cx, &key, path);
            } else {
                unknown_key(cx, &meta, "edge", EDGE_KEYS)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
        out = Some(edge);
    }
    out
}
