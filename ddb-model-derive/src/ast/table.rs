//! `#[derive(Table)]`: the table's attributes, with the defaults of `DefaultTable` filled in.

use syn::{DeriveInput, Ident, LitStr};

use crate::attr::{self, GsiAttr, VectorAttr};
use crate::ctxt::Ctxt;

pub struct Table<'a> {
    pub ident: &'a Ident,
    pub name: String,
    pub pk: String,
    /// `None`: no sort key.
    pub sk: Option<String>,
    /// `None`: `no_type_attr`, items carry no entity type.
    pub type_attr: Option<String>,
    /// The literals as written (`None`: the default), for errors.
    pub pk_lit: Option<LitStr>,
    pub sk_lit: Option<LitStr>,
    pub type_attr_lit: Option<LitStr>,
    /// `schema_attr = ".."` as written (`None`: the runtime's default, `_schema`).
    pub schema_attr: Option<LitStr>,
    /// The `no_sort_key` flag.
    pub no_sort_key: Option<syn::Path>,
    /// The `no_type_attr` flag.
    pub no_type_attr: Option<syn::Path>,
    /// The `none_as_null` flag: a `None` is stored as `NULL`.
    pub none_as_null: bool,
    /// The expiry (Time to Live) attribute, if any.
    pub ttl: Option<LitStr>,
    /// `tenant = "ORG#"`: the literal before the tenant id, if the table has tenants.
    pub tenant: Option<LitStr>,
    pub gsis: Vec<GsiAttr>,
    pub vectors: Vec<VectorAttr>,
}

impl<'a> Table<'a> {
    pub fn from_ast(cx: &mut Ctxt, input: &'a DeriveInput) -> Table<'a> {
        let attrs = attr::table_attrs(cx, &input.attrs);
        if !input.generics.params.is_empty() {
            cx.error_spanned_by(&input.generics, "`Table` cannot be derived for a generic type");
        }
        let ident = &input.ident;
        let value = |lit: &Option<LitStr>, default: &str| {
            lit.as_ref().map_or_else(|| default.to_owned(), LitStr::value)
        };
        let sk = match (&attrs.sk.value, &attrs.no_sort_key.value) {
            (None, Some(_)) => None,
            (sk, _) => Some(value(sk, "sk")),
        };
        Table {
            ident,
            name: value(&attrs.name.value, &ident.to_string()),
            pk: value(&attrs.pk.value, "pk"),
            sk,
            type_attr: match (&attrs.type_attr.value, &attrs.no_type_attr.value) {
                (None, Some(_)) => None,
                (lit, _) => Some(value(lit, "_type")),
            },
            pk_lit: attrs.pk.value,
            sk_lit: attrs.sk.value,
            type_attr_lit: attrs.type_attr.value,
            schema_attr: attrs.schema_attr.value,
            no_sort_key: attrs.no_sort_key.value,
            no_type_attr: attrs.no_type_attr.value,
            none_as_null: attrs.none_as_null.value.is_some(),
            ttl: attrs.ttl.value,
            tenant: attrs.tenant.value,
            gsis: attrs.gsis,
            vectors: attrs.vectors,
        }
    }
}
