//! `#[entity(table = .., pk = "..", sk = "..", name = "..", version = field,
//! created_at = field, updated_at = field, ttl = field, tenant = field, schema = 3,
//! upgrade = path::to::upgrade_fn, unique(a, b), constant(attr = "value", "any name" = ".."),
//! strict, validate = path, after_read = path, rekey(pk = "..", sk = ".."))]`.

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Attribute, Ident, LitStr, Token};

use super::{Slot, flag, ident_value, lit_value, path_value, unknown_key, value_expr};
use crate::ctxt::Ctxt;

pub struct EntityAttrs {
    pub table: Slot<syn::Path>,
    pub pk: Slot<LitStr>,
    pub sk: Slot<LitStr>,
    pub name: Slot<LitStr>,
    pub version: Slot<Ident>,
    pub created_at: Slot<Ident>,
    pub updated_at: Slot<Ident>,
    pub ttl: Slot<Ident>,
    /// `tenant = org`: the field holding the tenant id.
    pub tenant: Slot<Ident>,
    pub type_attr: Slot<LitStr>,
    pub no_type_attr: Slot<syn::Path>,
    /// `schema = 3`: the schema version, as written (its value is checked in `check`).
    pub schema: Slot<syn::LitInt>,
    /// `upgrade = path::to::upgrade_fn`: the function upgrading older items.
    pub upgrade: Slot<syn::Path>,
    /// `unique(a, b)`: composite unique constraints, in order.
    pub uniques: Vec<super::UniqueAttr>,
    /// `constant(attr = "value", ..)`: the constant attributes, in order, repeats included
    /// (reported in `check`).
    pub constants: Vec<ConstantAttr>,
    /// `strict`: reads refuse attributes that are neither fields nor the library's.
    pub strict: Slot<syn::Path>,
    /// `validate = path`: the validation before every write of a whole value.
    pub validate: Slot<syn::Path>,
    /// `after_read = path`: the transformation after every read.
    pub after_read: Slot<syn::Path>,
    /// `rekey(pk = "..", sk = "..")`: the key layout the items are re-keyed from.
    pub rekey: Slot<RekeyAttr>,
    /// Span of the first `#[entity]` attribute, for "missing pk" errors.
    pub span: Option<Span>,
}

/// `rekey(pk = "OLD#<id>", sk = "..")` as written.
pub struct RekeyAttr {
    /// The `rekey` path, where errors about the whole declaration point.
    pub path: syn::Path,
    pub pk: Option<LitStr>,
    pub sk: Option<LitStr>,
}

/// One constant attribute: `name = "value"`, the name an identifier or a string literal.
pub struct ConstantAttr {
    /// The attribute name (an identifier without `r#`, or the literal's text).
    pub attr: String,
    /// The span of the name as written.
    pub span: Span,
    pub value: LitStr,
}

const ENTITY_KEYS: &str = "table, pk, sk, name, version, created_at, updated_at, ttl, tenant, schema, upgrade, type_attr, no_type_attr, unique, constant, strict, validate, after_read, rekey";

const CONSTANT_EXAMPLE: &str = "constant(__edb_v__ = \"1\", \"entity kind\" = \"task\")";

pub fn entity_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> EntityAttrs {
    let mut out = EntityAttrs {
        table: Slot::new("entity", "table"),
        pk: Slot::new("entity", "pk"),
        sk: Slot::new("entity", "sk"),
        name: Slot::new("entity", "name"),
        version: Slot::new("entity", "version"),
        created_at: Slot::new("entity", "created_at"),
        updated_at: Slot::new("entity", "updated_at"),
        ttl: Slot::new("entity", "ttl"),
        tenant: Slot::new("entity", "tenant"),
        type_attr: Slot::new("entity", "type_attr"),
        no_type_attr: Slot::new("entity", "no_type_attr"),
        schema: Slot::new("entity", "schema"),
        upgrade: Slot::new("entity", "upgrade"),
        uniques: Vec::new(),
        constants: Vec::new(),
        strict: Slot::new("entity", "strict"),
        validate: Slot::new("entity", "validate"),
        after_read: Slot::new("entity", "after_read"),
        rekey: Slot::new("entity", "rekey"),
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
            } else if meta.path.is_ident("type_attr") {
                let lit = lit_value(cx, &meta, "type_attr = \"kind\"")?;
                if let Some(lit) = lit.as_ref().filter(|l| l.value().is_empty()) {
                    cx.error_spanned_by(lit, "the entity type attribute name cannot be empty");
                }
                out.type_attr.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("no_type_attr") {
                flag(cx, &meta, "entity")?;
                out.no_type_attr.set(cx, &meta.path, Some(meta.path.clone()));
            } else if meta.path.is_ident("version") {
                let field = ident_value(cx, &meta, "a field name", "version = version")?;
                out.version.set(cx, &meta.path, field);
            } else if meta.path.is_ident("created_at") {
                let field = ident_value(cx, &meta, "a field name", "created_at = created")?;
                out.created_at.set(cx, &meta.path, field);
            } else if meta.path.is_ident("schema") {
                let lit = schema_value(cx, &meta)?;
                out.schema.set(cx, &meta.path, lit);
            } else if meta.path.is_ident("upgrade") {
                let path =
                    path_value(cx, &meta, "a function path", "upgrade = upgrade_user")?;
                out.upgrade.set(cx, &meta.path, path);
            } else if meta.path.is_ident("unique") {
                if let Some(unique) = super::entity_unique(cx, &meta)? {
                    out.uniques.push(unique);
                }
            } else if meta.path.is_ident("constant") {
                constants(cx, &meta, &mut out.constants)?;
            } else if meta.path.is_ident("updated_at") {
                let field = ident_value(cx, &meta, "a field name", "updated_at = updated")?;
                out.updated_at.set(cx, &meta.path, field);
            } else if meta.path.is_ident("strict") {
                flag(cx, &meta, "entity")?;
                out.strict.set(cx, &meta.path, Some(meta.path.clone()));
            } else if meta.path.is_ident("validate") {
                let path = path_value(cx, &meta, "a function path", "validate = check_order")?;
                out.validate.set(cx, &meta.path, path);
            } else if meta.path.is_ident("after_read") {
                let path = path_value(cx, &meta, "a function path", "after_read = normalize")?;
                out.after_read.set(cx, &meta.path, path);
            } else if meta.path.is_ident("ttl") {
                let field = ident_value(cx, &meta, "a field name", "ttl = expires")?;
                out.ttl.set(cx, &meta.path, field);
            } else if meta.path.is_ident("rekey") {
                let rekey = rekey(cx, &meta)?;
                out.rekey.set(cx, &meta.path, rekey);
            } else if meta.path.is_ident("tenant") {
                let field = ident_value(cx, &meta, "a field name", "tenant = org")?;
                out.tenant.set(cx, &meta.path, field);
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

const REKEY_EXAMPLE: &str = "rekey(pk = \"USER#<id>\", sk = \"PROFILE\")";

/// `rekey(pk = "..", sk = "..")`: the old layout; `None` (reported) when malformed.
fn rekey(cx: &mut Ctxt, meta: &syn::meta::ParseNestedMeta) -> syn::Result<Option<RekeyAttr>> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "`rekey` takes the key templates the items are re-keyed from, as in {REKEY_EXAMPLE}"
            ),
        );
        super::skip_value(meta)?;
        return Ok(None);
    }
    let mut out = RekeyAttr { path: meta.path.clone(), pk: None, sk: None };
    let mut pk = Slot::new("entity(rekey(..))", "pk");
    let mut sk = Slot::new("entity(rekey(..))", "sk");
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident("pk") {
            let lit = lit_value(cx, &inner, "pk = \"USER#<id>\"")?;
            pk.set(cx, &inner.path, lit);
        } else if inner.path.is_ident("sk") {
            let lit = lit_value(cx, &inner, "sk = \"PROFILE\"")?;
            sk.set(cx, &inner.path, lit);
        } else {
            unknown_key(cx, &inner, "entity(rekey(..))", "pk, sk")?;
        }
        Ok(())
    })?;
    if !pk.given {
        cx.error_spanned_by(
            &meta.path,
            format!("`rekey` names no partition key template: the old layout's `pk` is required, as in {REKEY_EXAMPLE}"),
        );
        return Ok(None);
    }
    out.pk = pk.value;
    out.sk = sk.value;
    Ok(Some(out))
}

/// `constant(name = "value", ..)`: pushes each pair on `out`; a malformed list is reported.
fn constants(
    cx: &mut Ctxt,
    meta: &syn::meta::ParseNestedMeta,
    out: &mut Vec<ConstantAttr>,
) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!(
                "`constant` lists attribute names with their string values, as in {CONSTANT_EXAMPLE}"
            ),
        );
        return super::skip_value(meta);
    }
    let content;
    syn::parenthesized!(content in meta.input);
    if content.is_empty() {
        cx.error_spanned_by(
            &meta.path,
            format!("`constant()` names no attribute: write them, as in {CONSTANT_EXAMPLE}"),
        );
    }
    while !content.is_empty() {
        out.push(constant(cx, &content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(())
}

/// One `name = "value"` of `constant(..)`.
fn constant(cx: &mut Ctxt, input: ParseStream) -> syn::Result<ConstantAttr> {
    let (attr, span) = if input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        (lit.value(), lit.span())
    } else if input.peek(Ident::peek_any) {
        let ident = Ident::parse_any(input)?;
        (ident.to_string().trim_start_matches("r#").to_owned(), ident.span())
    } else {
        return Err(input.error(format!(
            "expected an attribute name (an identifier or a string literal), as in {CONSTANT_EXAMPLE}"
        )));
    };
    if attr.is_empty() {
        cx.error_at(span, "a constant attribute's name cannot be empty");
    }
    if !input.peek(Token![=]) {
        return Err(syn::Error::new(
            span,
            format!("constant `{attr}` needs a value: `{attr} = \"..\"`, as in {CONSTANT_EXAMPLE}"),
        ));
    }
    input.parse::<Token![=]>()?;
    let value: syn::Expr = input.parse()?;
    match value {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(value), .. }) => {
            Ok(ConstantAttr { attr, span, value })
        }
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "the value of constant `{attr}` is a string literal (`{attr} = \"1\"`): constants are stored as strings"
            ),
        )),
    }
}

/// `schema = 3`: an integer literal; `None` (reported) otherwise.
fn schema_value(
    cx: &mut Ctxt,
    meta: &syn::meta::ParseNestedMeta,
) -> syn::Result<Option<syn::LitInt>> {
    const EXAMPLE: &str = "schema = 2, upgrade = upgrade_user";
    Ok(value_expr(cx, meta, EXAMPLE)?.and_then(|expr| match expr {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(lit), .. }) => Some(lit),
        other => {
            cx.error_spanned_by(
                &other,
                format!("`schema` takes the version as an integer literal, as in {EXAMPLE}"),
            );
            None
        }
    }))
}

/// The flags of `#[entity(..)]` on a field, each the span of its key when given.
pub struct FieldAttrs {
    /// `from_key`: stored only in the keys.
    pub from_key: Option<Span>,
    /// `none_as_null`: a `None` is stored as `NULL` rather than left out.
    pub none_as_null: Option<Span>,
}

/// `#[entity(from_key)]`, `#[entity(none_as_null)]` on a field.
pub fn field_attrs(cx: &mut Ctxt, attrs: &[Attribute]) -> FieldAttrs {
    let mut from_key: Slot<Span> = Slot::new("entity", "from_key");
    let mut none_as_null: Slot<Span> = Slot::new("entity", "none_as_null");
    for attr in attrs.iter().filter(|a| a.path().is_ident("entity")) {
        let result = attr.parse_nested_meta(|meta| {
            let span = meta.path.get_ident().map_or_else(Span::call_site, Ident::span);
            if meta.path.is_ident("from_key") {
                flag(cx, &meta, "entity")?;
                from_key.set(cx, &meta.path, Some(span));
            } else if meta.path.is_ident("none_as_null") {
                flag(cx, &meta, "entity")?;
                none_as_null.set(cx, &meta.path, Some(span));
            } else {
                unknown_key(cx, &meta, "entity", "from_key, none_as_null (on a field)")?;
            }
            Ok(())
        });
        if let Err(err) = result {
            cx.syn_error(err);
        }
    }
    FieldAttrs { from_key: from_key.value, none_as_null: none_as_null.value }
}

/// `#[vector(index)]` on a field: the vector index it stores the vectors of.
pub fn vector_attr(cx: &mut Ctxt, attrs: &[Attribute]) -> Option<Ident> {
    const EXAMPLE: &str = "#[vector(by_embedding)]";
    let mut out: Option<Ident> = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("vector")) {
        let parsed = match &attr.meta {
            syn::Meta::List(list) => list.parse_args::<Ident>().map_err(|_| list.tokens.clone()),
            other => Err(other.to_token_stream()),
        };
        match parsed {
            Ok(ident) if out.is_some() => cx.error_spanned_by(
                &ident,
                "duplicate #[vector] on one field: a field holds the vectors of one index",
            ),
            Ok(ident) => out = Some(ident),
            Err(tokens) => {
                let at = if tokens.is_empty() { attr.to_token_stream() } else { tokens };
                cx.error_spanned_by(
                    at,
                    format!("#[vector] names the table's vector index the field holds the vectors of, as in {EXAMPLE}"),
                );
            }
        }
    }
    out
}
