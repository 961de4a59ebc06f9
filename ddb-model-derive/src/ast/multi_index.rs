//! `#[index(by_status, pk = [tenant, status], sk = [priority, created])]`: an entity on a
//! multi-attribute index, whose key attributes are the listed fields themselves.

use syn::Ident;

use super::{Field, field_list};
use crate::attr::{FieldList, IndexAttr};
use crate::ctxt::Ctxt;

/// Most attributes of each key of a multi-attribute index.
const MAX_KEY_ATTRS: usize = 4;

pub struct MultiIndex {
    pub name: Ident,
    /// The name of the access path (`query_by_status`), when it is not the index's.
    pub query: Option<Ident>,
    /// The positions in the entity's fields of the partition key's fields, in order, with the
    /// ident that named each (its span is where errors point).
    pub pk: Vec<(usize, Ident)>,
    /// The same for the sort key (empty: the index has no sort key).
    pub sk: Vec<(usize, Ident)>,
}

impl MultiIndex {
    /// The name of the access path: `query = ..`, else the index name.
    pub fn path_name(&self) -> &Ident {
        self.query.as_ref().unwrap_or(&self.name)
    }
}

/// True when `attr` declares a multi-attribute key (`pk = [..]` or `sk = [..]`).
pub fn is_multi(attr: &IndexAttr) -> bool {
    attr.pk_fields.is_some() || attr.sk_fields.is_some()
}

/// Resolves a multi-attribute `#[index]`; `None` when it cannot be (reported).
pub fn multi_index(
    cx: &mut Ctxt,
    owner: &Ident,
    fields: &[Field],
    attr: IndexAttr,
) -> Option<MultiIndex> {
    let name = attr.name;
    let example = format!("#[index({name}, pk = [tenant, status], sk = [priority, created])]");
    if let (Some(list), Some(lit)) = (&attr.pk_fields, &attr.sk) {
        cx.error_spanned_by(
            lit,
            format!("`pk = [{}]` lists the fields of a multi-attribute key: list the sort key's fields too, as in {example}", names(list)),
        );
    }
    if let (Some(list), Some(lit)) = (&attr.sk_fields, &attr.pk) {
        cx.error_spanned_by(
            &list.key,
            format!("`pk = {:?}` is a key template, `sk = [..]` lists fields: a multi-attribute key lists both, as in {example}", lit.value()),
        );
        return None;
    }
    let Some(pk_list) = &attr.pk_fields else {
        return None;
    };
    if let Some(when) = &attr.when {
        cx.error_spanned_by(
            when,
            format!("`when` chooses between key templates; the fields of a multi-attribute key are its attributes: an item whose `Option` field is `None` is left out of index `{name}`"),
        );
    }
    let pk = resolve(cx, owner, fields, pk_list, &name, "partition", &example);
    let sk = match &attr.sk_fields {
        Some(list) => resolve(cx, owner, fields, list, &name, "sort", &example),
        None => Vec::new(),
    };
    let mut seen: Vec<&Ident> = Vec::new();
    for (_, ident) in pk.iter().chain(&sk) {
        if seen.contains(&ident) {
            cx.error_spanned_by(
                ident,
                format!("field `{ident}` is listed twice in #[index({name})]: each key attribute appears once"),
            );
        }
        seen.push(ident);
    }
    Some(MultiIndex { name, query: attr.query, pk, sk })
}

fn names(list: &FieldList) -> String {
    list.fields.iter().map(Ident::to_string).collect::<Vec<_>>().join(", ")
}

/// The fields of one key list, each checked: it exists, it is stored as an attribute of its
/// own, the list holds one to four.
fn resolve(
    cx: &mut Ctxt,
    owner: &Ident,
    fields: &[Field],
    list: &FieldList,
    index: &Ident,
    what: &str,
    example: &str,
) -> Vec<(usize, Ident)> {
    if list.fields.is_empty() {
        cx.error_spanned_by(
            &list.key,
            format!("the {what} key of #[index({index})] lists no field: give one to four, as in {example}"),
        );
    }
    if let Some(extra) = list.fields.get(MAX_KEY_ATTRS) {
        cx.error_spanned_by(
            extra,
            format!(
                "the {what} key of #[index({index})] lists {} fields: DynamoDB allows at most {MAX_KEY_ATTRS} attributes per key",
                list.fields.len()
            ),
        );
    }
    let mut out = Vec::new();
    for ident in &list.fields {
        let Some((i, field)) = fields.iter().enumerate().find(|(_, f)| f.ident == ident) else {
            let stored = fields.iter().filter(|f| f.computed.is_none());
            cx.error_spanned_by(
                ident,
                format!(
                    "no field `{ident}` on `{owner}` for #[index({index})]; fields are: {}",
                    field_list(stored)
                ),
            );
            continue;
        };
        if field.computed.is_some() {
            cx.error_spanned_by(
                ident,
                format!("`{ident}` is a computed placeholder, not a stored field: a multi-attribute key is made of the entity's fields"),
            );
        } else if field.from_key.is_some() {
            cx.error_spanned_by(
                ident,
                format!("field `{ident}` is `#[entity(from_key)]`, stored only in the table's keys: a multi-attribute key attribute is the field's own attribute"),
            );
        } else if let Some(skip) = field.skip_attr.filter(|_| field.skip_serializing) {
            cx.error_spanned_by(
                ident,
                format!("field `{ident}` is not stored (`#[serde({skip})]`): a multi-attribute key attribute is the field's own attribute"),
            );
        } else if field.flatten {
            cx.error_spanned_by(
                ident,
                format!("field `{ident}` is flattened into other attributes: a multi-attribute key attribute is one field's own attribute"),
            );
        }
        out.push((i, ident.clone()));
    }
    out
}
