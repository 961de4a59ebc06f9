//! `#[table(name = "..", pk = "..", sk = "..", no_sort_key, type_attr = "..", ttl = "..", schema_attr = "..",
//! tenant = "..", gsi(..))]`.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitStr};

use super::{Slot, flag, ident_value, lit_value, skip_value, unknown_key, value_expr};
use crate::ctxt::Ctxt;

pub struct GsiAttr {
    pub name: LitStr,
    /// The partition key attribute (the first one of a list).
    pub pk: LitStr,
    /// The sort key attribute (the first one of a list).
    pub sk: Option<LitStr>,
    /// `pk = ["tenant", "status"]`: the attributes of a multi-attribute partition key.
    pub pk_list: Option<KeyList>,
    /// `sk = ["priority": N, "created"]`: the attributes of a multi-attribute sort key.
    pub sk_list: Option<KeyList>,
}

/// A bracketed list of typed key attributes, with the span of its brackets.
pub struct KeyList {
    pub span: proc_macro2::Span,
    pub attrs: Vec<KeyAttrSyntax>,
}

/// One `"name"` or `"name": N` of a key list.
pub struct KeyAttrSyntax {
    pub name: LitStr,
    /// `S`, `N` or `B` (`S` when not written).
    pub kind: String,
}

/// `vector(name = "..", attr = "..", dims = 384, metric = cosine)`.
pub struct VectorAttr {
    pub name: LitStr,
    pub attr: LitStr,
    pub dims: syn::LitInt,
    /// `cosine`, `euclidean` or `dot_product` (checked here).
    pub metric: syn::Ident,
    /// `filters = ["category", "stock": N]`: the attributes a search may filter on.
    pub filters: Option<KeyList>,
}

/// The metrics as written, with the `Metric` variant each one is.
pub const METRICS: [(&str, &str); 3] =
    [("cosine", "Cosine"), ("euclidean", "Euclidean"), ("dot_product", "DotProduct")];

pub struct TableAttrs {
    pub name: Slot<LitStr>,
    pub pk: Slot<LitStr>,
    pub sk: Slot<LitStr>,
    pub no_sort_key: Slot<syn::Path>,
    pub type_attr: Slot<LitStr>,
    pub no_type_attr: Slot<syn::Path>,
    /// `none_as_null`: a `None` is stored as `NULL` rather than left out.
    pub none_as_null: Slot<syn::Path>,
    pub schema_attr: Slot<LitStr>,
    pub ttl: Slot<LitStr>,
    /// `tenant = "ORG#"`: the literal before the tenant id in tenants' partition keys.
    pub tenant: Slot<LitStr>,
    pub gsis: Vec<GsiAttr>,
    pub vectors: Vec<VectorAttr>,
}

const TABLE_KEYS: &str = "name, pk, sk, no_sort_key, type_attr, no_type_attr, none_as_null, ttl, schema_attr, tenant, gsi, vector";

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
        no_type_attr: Slot::new("table", "no_type_attr"),
        none_as_null: Slot::new("table", "none_as_null"),
        schema_attr: Slot::new("table", "schema_attr"),
        ttl: Slot::new("table", "ttl"),
        tenant: Slot::new("table", "tenant"),
        gsis: Vec::new(),
        vectors: Vec::new(),
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
            } else if path.is_ident("no_type_attr") {
                flag(cx, &meta, "table")?;
                out.no_type_attr.set(cx, &path, Some(path.clone()));
            } else if path.is_ident("none_as_null") {
                flag(cx, &meta, "table")?;
                out.none_as_null.set(cx, &path, Some(path.clone()));
            } else if path.is_ident("schema_attr") {
                let lit = lit_value(cx, &meta, "schema_attr = \"_schema\"")?;
                non_empty(cx, &lit, "the schema version attribute name");
                out.schema_attr.set(cx, &path, lit);
            } else if path.is_ident("ttl") {
                let lit = lit_value(cx, &meta, "ttl = \"expires\"")?;
                non_empty(cx, &lit, "the expiry attribute name");
                out.ttl.set(cx, &path, lit);
            } else if path.is_ident("tenant") {
                let lit = lit_value(cx, &meta, "tenant = \"ORG#\"")?;
                if let Some(lit) = lit.as_ref().filter(|l| l.value().contains(['<', '>'])) {
                    cx.error_spanned_by(
                        lit,
                        "`tenant` is the literal text before the tenant id in partition keys, without placeholders: write tenant = \"ORG#\" and name the tenant field on each entity with #[entity(tenant = org)]",
                    );
                }
                out.tenant.set(cx, &path, lit);
            } else if path.is_ident("gsi") {
                gsi(cx, &meta, &mut out.gsis)?;
            } else if path.is_ident("vector") {
                vector(cx, &meta, &mut out.vectors)?;
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
const LIST_EXAMPLE: &str = "pk = [\"tenant\", \"status\"], sk = [\"priority\": N, \"created\"]";

/// `= ["a", "b": N, ..]` after `pk` or `sk`; `None` (reported) when malformed.
fn key_list(cx: &mut Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<KeyList>> {
    let input = meta.value()?;
    let content;
    let bracket = syn::bracketed!(content in input);
    let mut attrs = Vec::new();
    let mut ok = true;
    while !content.is_empty() {
        let name: LitStr = match content.parse() {
            Ok(name) => name,
            Err(err) => {
                cx.error_at(
                    err.span(),
                    format!("expected the name of an attribute as a string, as in {LIST_EXAMPLE}"),
                );
                // Skip what is left of the list.
                let _: proc_macro2::TokenStream = content.parse()?;
                return Ok(None);
            }
        };
        let mut kind = "S".to_owned();
        if content.peek(syn::Token![:]) {
            content.parse::<syn::Token![:]>()?;
            let ident: syn::Ident = content.parse()?;
            kind = ident.to_string();
            if !["S", "N", "B"].contains(&kind.as_str()) {
                cx.error_spanned_by(
                    &ident,
                    format!(
                        "unknown attribute type `{ident}`: a key attribute is `S` (a string, the default), `N` (a number) or `B` (a binary), as in \"priority\": N"
                    ),
                );
                ok = false;
            }
        }
        non_empty(cx, &Some(name.clone()), "a key attribute name");
        attrs.push(KeyAttrSyntax { name, kind });
        if content.is_empty() {
            break;
        }
        content.parse::<syn::Token![,]>()?;
    }
    Ok(ok.then_some(KeyList { span: bracket.span.join(), attrs }))
}

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
    let mut pk_list: Option<KeyList> = None;
    let mut sk_list: Option<KeyList> = None;
    meta.parse_nested_meta(|inner| {
        let key = inner.path.clone();
        let is_list = inner.input.peek(syn::Token![=]) && inner.input.peek2(syn::token::Bracket);
        if is_list && (key.is_ident("pk") || key.is_ident("sk")) {
            let (slot, list) =
                if key.is_ident("pk") { (&mut pk, &mut pk_list) } else { (&mut sk, &mut sk_list) };
            let parsed = key_list(cx, &inner)?;
            let first = parsed.as_ref().and_then(|l| l.attrs.first()).map(|a| a.name.clone());
            let given = slot.given;
            if parsed.as_ref().is_some_and(|l| l.attrs.is_empty()) {
                // Reported by the table's checks, at the brackets; keep the list.
                slot.given = true;
            } else {
                slot.set(cx, &key, first);
            }
            if !given {
                *list = parsed;
            }
            return Ok(());
        }
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
    // An empty list has no first attribute: the index keeps the list for its checks.
    let pk_value = pk.value.or_else(|| pk_list.as_ref().map(|l| LitStr::new("", l.span)));
    if let (Some(name), Some(pk)) = (name.value, pk_value) {
        let sk = sk.value.or_else(|| sk_list.as_ref().map(|l| LitStr::new("", l.span)));
        gsis.push(GsiAttr { name, pk, sk, pk_list, sk_list });
    }
    Ok(())
}

const VECTOR_EXAMPLE: &str =
    "vector(name = \"by_embedding\", attr = \"embedding\", dims = 384, metric = cosine)";

/// `vector(name = "..", attr = "..", dims = N, metric = cosine)` inside #[table].
fn vector(cx: &mut Ctxt, meta: &ParseNestedMeta, out: &mut Vec<VectorAttr>) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            format!("`vector` describes one vector index in parentheses, as in {VECTOR_EXAMPLE}"),
        );
        return skip_value(meta);
    }
    let mut name = Slot::new("table(vector)", "name");
    let mut attr = Slot::new("table(vector)", "attr");
    let mut dims: Slot<syn::LitInt> = Slot::new("table(vector)", "dims");
    let mut metric: Slot<syn::Ident> = Slot::new("table(vector)", "metric");
    let mut filters: Slot<KeyList> = Slot::new("table(vector)", "filters");
    meta.parse_nested_meta(|inner| {
        let key = inner.path.clone();
        if key.is_ident("filters") {
            if !(inner.input.peek(syn::Token![=]) && inner.input.peek2(syn::token::Bracket)) {
                cx.error_spanned_by(
                    &key,
                    "`filters` lists the attributes a search may filter on, as in filters = [\"category\", \"stock\": N]",
                );
                return skip_value(&inner);
            }
            let list = key_list(cx, &inner)?;
            filters.set(cx, &key, list);
        } else if key.is_ident("name") || key.is_ident("attr") {
            let lit = lit_value(cx, &inner, VECTOR_EXAMPLE)?;
            non_empty(cx, &lit, "a vector index name or attribute");
            let slot = if key.is_ident("name") { &mut name } else { &mut attr };
            slot.set(cx, &key, lit);
        } else if key.is_ident("dims") {
            let value = value_expr(cx, &inner, VECTOR_EXAMPLE)?.and_then(|expr| match expr {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(int), .. }) => Some(int),
                other => {
                    cx.error_spanned_by(
                        &other,
                        "`dims` takes the number of elements of every vector, an integer from 1 to 4096, as in dims = 384",
                    );
                    None
                }
            });
            dims.set(cx, &key, value);
        } else if key.is_ident("metric") {
            let ident = ident_value(
                cx,
                &inner,
                "`cosine`, `euclidean` or `dot_product`",
                "metric = cosine",
            )?;
            let ident = ident.filter(|ident| {
                let known = METRICS.iter().any(|(m, _)| ident == m);
                if !known {
                    cx.error_spanned_by(
                        ident,
                        format!(
                            "unknown metric `{ident}`: a vector index compares vectors by `cosine`, `euclidean` or `dot_product`"
                        ),
                    );
                }
                known
            });
            metric.set(cx, &key, ident);
        } else {
            return unknown_key(cx, &inner, "table(vector)", "name, attr, dims, metric, filters");
        }
        Ok(())
    })?;
    for (given, what) in [
        (name.given, "`name`: the index name"),
        (attr.given, "`attr`: the attribute holding the vectors"),
        (dims.given, "`dims`: the number of elements of every vector"),
        (metric.given, "`metric`: `cosine`, `euclidean` or `dot_product`"),
    ] {
        if !given {
            cx.error_spanned_by(
                &meta.path,
                format!("vector(...) needs {what}, as in {VECTOR_EXAMPLE}"),
            );
        }
    }
    if let (Some(name), Some(attr), Some(dims), Some(metric)) =
        (name.value, attr.value, dims.value, metric.value)
    {
        out.push(VectorAttr { name, attr, dims, metric, filters: filters.value });
    }
    Ok(())
}
