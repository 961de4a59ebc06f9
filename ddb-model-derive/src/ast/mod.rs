//! The IR of the derives: what the attributes say, resolved to the fields they name, with the
//! spans they came from. Building it reports what cannot be resolved (a field that does not
//! exist, a template that does not parse); the rules between its parts are `check`'s.
//!
//! One file per derive input: `Entity` (here, with its `Field`s and `Index`es), its
//! `#[hierarchy]` (`hierarchy.rs`), `#[derive(Edge)]` (`edge.rs`), `#[derive(Table)]`,
//! `#[derive(KeyPart)]`, `#[derive(Collection)]` and `#[derive(Projection)]`.

mod collection;
mod edge;
mod hierarchy;
mod key_part;
mod multi_index;
mod projection;
mod table;

pub use collection::{Collection, Variant};
pub use edge::{Edge, Inverse, ItemsInverse};
pub use hierarchy::{Hierarchy, Strategy};
pub use key_part::{KeyPart, KeyPartKind, TextVariant};
pub use multi_index::MultiIndex;
pub use projection::Projection;
pub use table::Table;

use proc_macro2::Span;
use syn::{Data, DeriveInput, Fields, Ident, LitStr, Type, Visibility};

use crate::attr::{self, RenameRule};
use crate::ctxt::Ctxt;
use crate::template::{self, Template};

pub struct Field<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    /// The stored attribute name (after serde renames).
    pub attr_name: String,
    pub skip_serializing: bool,
    /// The serde skip attribute of the field (`skip`, `skip_serializing`, ...), if any.
    pub skip_attr: Option<&'static str>,
    pub flatten: bool,
    /// serde's `skip` or `skip_deserializing`: reads ignore the attribute.
    pub skip_deserializing: bool,
    /// serde's `alias`es: other attribute names reads take the field from.
    pub aliases: Vec<String>,
    /// serde fills the field in when an item lacks it (an `Option`, or `#[serde(default)]` on
    /// the field or the struct).
    pub may_be_missing: bool,
    /// `#[entity(from_key)]`: stored only in the keys, read back from them (the span of
    /// `from_key`).
    pub from_key: Option<Span>,
    /// `#[entity(none_as_null)]`: a `None` is stored as `NULL` (the span of the key).
    pub none_as_null: Option<Span>,
    /// The type is written `Option<..>`.
    pub option: bool,
    /// serde cannot read the field back when its attribute is absent (`with` or
    /// `deserialize_with`, and no `default`): its `None` is stored as `NULL`.
    pub needs_null: bool,
    /// A computed placeholder of an `#[index]` (`computed(day: NaiveDate = day_of(created_at))`):
    /// not a field of the struct, its value is the function of the fields.
    pub computed: Option<Computed>,
    /// `#[vector(index)]`: the field holds the vectors of this vector index.
    pub vector: Option<Ident>,
    /// `#[unique]` attributes on the field, as written.
    pub unique: Vec<attr::UniqueAttr>,
    /// `#[generated(uuid7)]` / `#[generated(ulid)]`: the kind of id generated when unset.
    pub generated: Option<Ident>,
    /// `#[encrypt]` or `#[sign_only]`.
    pub crypto: Option<attr::CryptoAttr>,
}

/// A unique constraint: `#[unique]` on a field, or `#[entity(unique(a, b))]`.
pub struct Unique {
    /// The span of `unique`.
    pub span: Span,
    pub scope: Option<LitStr>,
    /// The fields, as indexes into `Entity::fields`, with the idents that named them.
    pub fields: Vec<(usize, Ident)>,
}

/// How a computed placeholder's value is made: `func(&self.arg, ..)`.
pub struct Computed {
    pub func: syn::ExprPath,
    pub args: Vec<Ident>,
}

impl Field<'_> {
    /// The Rust field name without `r#`.
    pub fn name(&self) -> String {
        self.ident.to_string().trim_start_matches("r#").to_owned()
    }

    /// True when the field is stored as its own attribute.
    pub fn is_stored(&self) -> bool {
        !self.skip_serializing && !self.flatten && self.computed.is_none()
    }
}

/// How the entity's items are told apart (`Identity` at run time).
pub enum Identity {
    /// The table's type attribute (or none, on a table with `no_type_attr`).
    Table,
    /// `#[entity(type_attr = "kind")]`.
    Tagged(LitStr),
    /// `#[entity(no_type_attr)]`.
    Keys(syn::Path),
}

/// `#[index(name, pk = "..", sk = "..", when = .., query = ..)]`.
pub struct Index {
    pub name: Ident,
    pub pk: Template,
    pub sk: Option<Template>,
    pub pk_lit: Option<LitStr>,
    pub sk_lit: Option<LitStr>,
    /// The bool field or method that says whether the item is in the index.
    pub when: Option<Ident>,
    /// The name of the access path, when it is not the index's.
    pub query: Option<Ident>,
}

impl Index {
    /// The name of the access path: `query = ..`, else the index name (`query_gsi1`).
    pub fn path_name(&self) -> &Ident {
        self.query.as_ref().unwrap_or(&self.name)
    }
}

pub struct Entity<'a> {
    pub ident: &'a Ident,
    pub vis: &'a Visibility,
    /// `None`: the default table.
    pub table: Option<syn::Path>,
    pub pk: Template,
    pub sk: Option<Template>,
    pub pk_lit: Option<LitStr>,
    pub sk_lit: Option<LitStr>,
    /// The entity type stored in every item.
    pub name: String,
    /// The version field: its index in `fields` and the ident that named it.
    pub version: Option<(usize, Ident)>,
    /// The `created_at` field: its index in `fields` and the ident that named it.
    pub created_at: Option<(usize, Ident)>,
    /// The `updated_at` field: its index in `fields` and the ident that named it.
    pub updated_at: Option<(usize, Ident)>,
    /// `schema = 3` as written (checked in `check::schema`).
    pub schema: Option<syn::LitInt>,
    /// `upgrade = path` as written.
    pub upgrade: Option<syn::Path>,
    /// `upgrade` was written, even with an invalid value (already reported).
    pub upgrade_given: bool,
    /// The expiry (`ttl`) field: its index in `fields` and the ident that named it.
    pub ttl: Option<(usize, Ident)>,
    /// The tenant field (`tenant = org`): its index in `fields` and the ident that named it.
    pub tenant: Option<(usize, Ident)>,
    pub indexes: Vec<Index>,
    /// The multi-attribute indexes (`#[index(name, pk(a, b), sk(c))]`).
    pub multi_indexes: Vec<MultiIndex>,
    pub fields: Vec<Field<'a>>,
    pub hierarchy: Option<Hierarchy>,
    pub identity: Identity,
    /// The unique constraints: the fields' `#[unique]` in field order, then the composite
    /// ones of `#[entity(unique(..))]`.
    pub uniques: Vec<Unique>,
    /// The constant attributes (`#[entity(constant(..))]`), in order as written.
    pub constants: Vec<attr::ConstantAttr>,
    /// `strict`, as written.
    pub strict: Option<syn::Path>,
    /// `validate = path`.
    pub validate: Option<syn::Path>,
    /// `after_read = path`.
    pub after_read: Option<syn::Path>,
    /// `rekey(pk = "..", sk = "..")`: the key layout the items are re-keyed from.
    pub rekey: Option<Rekey>,
}

/// The old key layout of a re-keyed entity (`#[entity(rekey(pk = "..", sk = ".."))]`).
pub struct Rekey {
    /// The `rekey` path as written.
    pub path: syn::Path,
    pub pk: Template,
    pub sk: Option<Template>,
    pub pk_lit: LitStr,
}

impl<'a> Entity<'a> {
    /// Builds the IR; `None` when the input is not a struct with named fields (errors in
    /// `cx`). With errors in `cx`, the result may hold `Template::invalid()` and is only good
    /// for the checks, which then report every other mistake in the same compile.
    pub fn from_ast(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<Entity<'a>> {
        let named = named_fields(cx, input);
        let attrs = attr::entity_attrs(cx, &input.attrs);
        let mut index_attrs = attr::index_attrs(cx, &input.attrs);
        let hierarchy_attrs = attr::hierarchy_attrs(cx, &input.attrs);
        let mut fields = named.map(|named| fields(cx, input, named)).unwrap_or_default();
        let computed: Vec<attr::ComputedAttr> =
            index_attrs.iter_mut().flat_map(|i| std::mem::take(&mut i.computed)).collect();
        computed_fields(cx, &input.ident, &mut fields, computed);

        if !attrs.pk.given {
            let span = attrs.span.unwrap_or_else(|| input.ident.span());
            cx.error_at(
                span,
                format!(
                    "missing partition key template: add #[entity(pk = \"...\")] to `{}`, as in #[entity(pk = \"USER#<id>\")]",
                    input.ident
                ),
            );
        }
        let pk = attrs.pk.value.as_ref().map_or_else(Template::invalid, |lit| parse(cx, lit));
        let sk = attrs.sk.value.as_ref().map(|lit| parse(cx, lit));
        let (multi_attrs, index_attrs): (Vec<_>, Vec<_>) =
            index_attrs.into_iter().partition(multi_index::is_multi);
        let indexes = indexes(cx, index_attrs);
        let mut multi_indexes: Vec<MultiIndex> = Vec::new();
        for attr in multi_attrs {
            let Some(multi) = multi_index::multi_index(cx, &input.ident, &fields, attr) else {
                continue;
            };
            let taken = indexes.iter().any(|i| i.name == multi.name)
                || multi_indexes.iter().any(|i| i.name == multi.name);
            let path_taken = indexes.iter().any(|i| i.path_name() == multi.path_name())
                || multi_indexes.iter().any(|i| i.path_name() == multi.path_name());
            if taken {
                cx.error_spanned_by(
                    &multi.name,
                    format!("duplicate #[index({})]: an item has one key on an index", multi.name),
                );
            } else if path_taken {
                cx.error_spanned_by(
                    multi.path_name(),
                    format!("the query name `{}` is taken by another #[index]: pick another with `query = ..`", multi.path_name()),
                );
            } else {
                multi_indexes.push(multi);
            }
        }
        let version = attrs.version.value.and_then(|ident| {
            let i = field_index(cx, &input.ident, &fields, &ident, "the version")?;
            Some((i, ident))
        });
        let created_at = attrs.created_at.value.and_then(|ident| {
            let i = field_index(cx, &input.ident, &fields, &ident, "`created_at`")?;
            Some((i, ident))
        });
        let updated_at = attrs.updated_at.value.and_then(|ident| {
            let i = field_index(cx, &input.ident, &fields, &ident, "`updated_at`")?;
            Some((i, ident))
        });
        let ttl = attrs.ttl.value.and_then(|ident| {
            let i = field_index(cx, &input.ident, &fields, &ident, "the expiry (`ttl`)")?;
            Some((i, ident))
        });
        let tenant = attrs.tenant.value.and_then(|ident| {
            let i = field_index(cx, &input.ident, &fields, &ident, "the tenant")?;
            Some((i, ident))
        });
        let name = attrs.name.value.as_ref().map_or_else(
            || input.ident.to_string().trim_start_matches("r#").to_owned(),
            LitStr::value,
        );
        let hierarchy =
            hierarchy_attrs.map(|h| Hierarchy::from_attrs(cx, &input.ident, &fields, h));
        let identity = match (attrs.type_attr.value, attrs.no_type_attr.value) {
            (Some(lit), Some(flag)) => {
                cx.error_spanned_by(
                    &flag,
                    "`no_type_attr` contradicts `type_attr`: keep one of them",
                );
                Identity::Tagged(lit)
            }
            (Some(lit), None) => Identity::Tagged(lit),
            (None, Some(flag)) => Identity::Keys(flag),
            (None, None) => Identity::Table,
        };
        let uniques = uniques(cx, &input.ident, &mut fields, attrs.uniques);
        let rekey = attrs.rekey.value.and_then(|r| {
            let pk_lit = r.pk?;
            Some(Rekey {
                pk: parse(cx, &pk_lit),
                sk: r.sk.as_ref().map(|lit| parse(cx, lit)),
                path: r.path,
                pk_lit,
            })
        });
        named?;
        Some(Entity {
            ident: &input.ident,
            vis: &input.vis,
            table: attrs.table.value,
            pk,
            sk,
            pk_lit: attrs.pk.value,
            sk_lit: attrs.sk.value,
            name,
            version,
            created_at,
            updated_at,
            schema: attrs.schema.value,
            upgrade_given: attrs.upgrade.given,
            upgrade: attrs.upgrade.value,
            ttl,
            tenant,
            indexes,
            multi_indexes,
            fields,
            hierarchy,
            identity,
            uniques,
            constants: attrs.constants,
            strict: attrs.strict.value,
            validate: attrs.validate.value,
            after_read: attrs.after_read.value,
            rekey,
        })
    }

    pub fn field(&self, name: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.name() == name)
    }

    /// The fields of the placeholders of `templates`, in order of first appearance, without
    /// repeats (placeholders naming no field are left out).
    pub fn fields_of<'t>(
        &self,
        templates: impl IntoIterator<Item = &'t Template>,
    ) -> Vec<&Field<'a>> {
        let mut out: Vec<&Field<'a>> = Vec::new();
        for template in templates {
            for (name, _) in template.fields() {
                if let Some(f) = self.field(name)
                    && !out.iter().any(|o| o.ident == f.ident)
                {
                    out.push(f);
                }
            }
        }
        out
    }

    /// The primary-key placeholder fields: the parameters of `key(..)`, in order.
    pub fn key_fields(&self) -> Vec<&Field<'a>> {
        self.fields_of(std::iter::once(&self.pk).chain(self.sk.as_ref()))
    }

    /// Every template of the entity: the primary key's, the old layout's of a re-keyed
    /// entity, then each index's.
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        std::iter::once(&self.pk)
            .chain(self.sk.as_ref())
            .chain(self.rekey.iter().flat_map(|r| std::iter::once(&r.pk).chain(r.sk.as_ref())))
            .chain(self.indexes.iter().flat_map(|i| std::iter::once(&i.pk).chain(i.sk.as_ref())))
    }

    /// The names of the fields an index key is made of: its templates' fields, a computed
    /// placeholder standing for the fields it is computed from, and its `when` field.
    pub fn index_inputs(&self, index: &Index) -> Vec<String> {
        let mut names: Vec<String> = std::iter::once(&index.pk)
            .chain(index.sk.as_ref())
            .flat_map(|t| t.fields().map(|(n, _)| n.to_owned()).collect::<Vec<_>>())
            .flat_map(|n| match self.field(&n).and_then(|f| f.computed.as_ref()) {
                Some(c) => c
                    .args
                    .iter()
                    .map(|a| a.to_string().trim_start_matches("r#").to_owned())
                    .collect(),
                None => vec![n],
            })
            .collect();
        names
            .extend(index.when.as_ref().map(|w| w.to_string().trim_start_matches("r#").to_owned()));
        names
    }

    /// True when an update can rewrite the keys of index `name` (with the fields they are
    /// made of): each key of the index is in it always or while a `when` *field* is true. A
    /// `when` method cannot be evaluated by an update, which does not read the item.
    pub fn index_updatable(&self, name: &Ident) -> bool {
        self.indexes
            .iter()
            .filter(|i| &i.name == name)
            .all(|i| i.when.as_ref().is_none_or(|w| self.fields.iter().any(|f| f.ident == w)))
    }

    /// The names of the fields an update may change although an index key is made of them
    /// (the update rewrites the key in the same request): the fields of the templates and
    /// the `when` fields of the updatable indexes, except key fields, the version field and
    /// fields of an index that is not updatable.
    pub fn index_writable(&self) -> Vec<String> {
        let templates = |i: &Index| self.index_inputs(i);
        let fixed: Vec<String> = self
            .key_fields()
            .iter()
            .map(|f| f.name())
            .chain(self.version.as_ref().and_then(|(i, _)| self.fields.get(*i)).map(|f| f.name()))
            .chain(self.timestamp_fields().map(|(f, _)| f.name()))
            .chain(
                self.indexes.iter().filter(|i| !self.index_updatable(&i.name)).flat_map(templates),
            )
            .collect();
        let mut out: Vec<String> = Vec::new();
        for index in self.indexes.iter().filter(|i| self.index_updatable(&i.name)) {
            for name in templates(index) {
                if !fixed.contains(&name) && !out.contains(&name) && self.field(&name).is_some() {
                    out.push(name);
                }
            }
        }
        out
    }

    /// The timestamp fields with the idents that named them, `created_at` first; `true` for
    /// `created_at`.
    pub fn timestamp_fields(&self) -> impl Iterator<Item = (&Field<'a>, (&Ident, bool))> {
        let created = self.created_at.iter().map(|(i, ident)| (*i, ident, true));
        let updated = self.updated_at.iter().map(|(i, ident)| (*i, ident, false));
        created
            .chain(updated)
            .filter_map(|(i, ident, c)| self.fields.get(i).map(|f| (f, (ident, c))))
    }

    /// The span of the sort-key template, else of the struct name.
    pub fn span_of_sk(&self) -> Span {
        self.sk_lit.as_ref().map_or_else(|| self.ident.span(), LitStr::span)
    }

    /// `table `App``, or the default table, as messages name it.
    pub fn table_display(&self) -> String {
        match &self.table {
            Some(path) => match path.segments.last() {
                Some(seg) => format!("table `{}`", seg.ident),
                None => "the table".to_owned(),
            },
            None => "the default table (ddb_model::DefaultTable)".to_owned(),
        }
    }
}

/// The named fields of a struct; `None` (reported) for any other input, or a generic one.
fn named_fields<'a>(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<&'a syn::FieldsNamed> {
    let named = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => Some(named),
            _ => {
                cx.error_spanned_by(
                    &input.ident,
                    "`Entity` needs a struct with named fields: the key templates name them",
                );
                None
            }
        },
        _ => {
            cx.error_spanned_by(
                &input.ident,
                "`Entity` can only be derived for a struct with named fields",
            );
            None
        }
    };
    if !input.generics.params.is_empty() {
        cx.error_spanned_by(
            &input.generics,
            "`Entity` cannot be derived for a generic struct: each entity type is stored under one fixed name",
        );
    }
    named
}

fn fields<'a>(
    cx: &mut Ctxt,
    input: &'a DeriveInput,
    named: &'a syn::FieldsNamed,
) -> Vec<Field<'a>> {
    let rename_rule: RenameRule = attr::serde_container(&input.attrs);
    let struct_default = attr::serde_default(&input.attrs);
    named
        .named
        .iter()
        .filter_map(|f| {
            let ident = f.ident.as_ref()?;
            let serde = attr::serde_field(&f.attrs);
            let rust_name = ident.to_string().trim_start_matches("r#").to_owned();
            let attr_name = serde.rename.unwrap_or_else(|| rename_rule.apply(&rust_name));
            let option = match &f.ty {
                Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
                _ => false,
            };
            let field_default = struct_default || attr::serde_default(&f.attrs);
            let flags = attr::field_attrs(cx, &f.attrs);
            Some(Field {
                ident,
                ty: &f.ty,
                attr_name,
                skip_serializing: serde.skip_serializing,
                skip_attr: serde.skip_attr,
                flatten: serde.flatten,
                skip_deserializing: serde.skip_deserializing,
                aliases: serde.aliases,
                may_be_missing: field_default || option,
                from_key: flags.from_key,
                none_as_null: flags.none_as_null,
                option,
                needs_null: option && serde.deserialize_with && !field_default,
                computed: None,
                vector: attr::vector_attr(cx, &f.attrs),
                unique: attr::unique_field_attrs(cx, &f.attrs),
                generated: attr::generated_attr(cx, &f.attrs),
                crypto: attr::crypto_attr(cx, &f.attrs),
            })
        })
        .collect()
}

/// The unique constraints: each field's `#[unique]` (a repeat is an error), then the
/// composite ones, whose fields must exist and be distinct.
fn uniques(
    cx: &mut Ctxt,
    owner: &Ident,
    fields: &mut [Field],
    composite: Vec<attr::UniqueAttr>,
) -> Vec<Unique> {
    let mut out = Vec::new();
    for (i, field) in fields.iter_mut().enumerate() {
        let mut attrs = std::mem::take(&mut field.unique).into_iter();
        let Some(first) = attrs.next() else { continue };
        for repeat in attrs {
            cx.error_at(
                repeat.span,
                format!(
                    "duplicate #[unique] on `{}`: a field has one unique constraint; keep one",
                    field.name()
                ),
            );
        }
        out.push(Unique {
            span: first.span,
            scope: first.scope,
            fields: vec![(i, field.ident.clone())],
        });
    }
    for attr in composite {
        let mut resolved: Vec<(usize, Ident)> = Vec::new();
        for ident in attr.fields {
            let Some(i) = field_index(cx, owner, fields, &ident, "a unique constraint") else {
                continue;
            };
            if resolved.iter().any(|(j, _)| *j == i) {
                cx.error_spanned_by(
                    &ident,
                    format!(
                        "`{ident}` is named twice in this unique constraint: name each field once"
                    ),
                );
                continue;
            }
            resolved.push((i, ident));
        }
        out.push(Unique { span: attr.span, scope: attr.scope, fields: resolved });
    }
    out
}

/// Adds the computed placeholders to `fields` (after the struct's own fields), checking that
/// each has a name of its own and is computed from fields of the struct. A computed
/// placeholder lives as long as the macro call (leaked: the macro's process ends with it).
fn computed_fields<'a>(
    cx: &mut Ctxt,
    owner: &Ident,
    fields: &mut Vec<Field<'a>>,
    computed: Vec<attr::ComputedAttr>,
) {
    for c in computed {
        if fields.iter().any(|f| f.ident == &c.name) {
            let message = if fields.iter().any(|f| f.ident == &c.name && f.computed.is_some()) {
                format!(
                    "`{0}` is computed in another `#[index]` of `{owner}` already: write `<{0}>` here without declaring it again to reuse it, or give this one another name",
                    c.name
                )
            } else {
                format!(
                    "`{}` is a field of `{owner}` already: give the computed placeholder another name",
                    c.name
                )
            };
            cx.error_spanned_by(&c.name, message);
            continue;
        }
        for arg in &c.args {
            if !fields.iter().any(|f| f.ident == arg && f.computed.is_none()) {
                cx.error_spanned_by(
                    arg,
                    format!(
                        "no field `{arg}` on `{owner}` to compute `{}` from; fields are: {}",
                        c.name,
                        field_list(fields.iter().filter(|f| f.computed.is_none()))
                    ),
                );
            }
        }
        // An invalid one is added all the same (nothing is generated from it), so that its
        // placeholders are not reported again as unknown.
        let name = c.name.to_string().trim_start_matches("r#").to_owned();
        fields.push(Field {
            ident: Box::leak(Box::new(c.name)),
            ty: Box::leak(Box::new(c.ty)),
            attr_name: name,
            skip_serializing: false,
            skip_attr: None,
            flatten: false,
            skip_deserializing: false,
            aliases: Vec::new(),
            may_be_missing: false,
            from_key: None,
            none_as_null: None,
            option: false,
            needs_null: false,
            computed: Some(Computed { func: c.func, args: c.args }),
            vector: None,
            unique: Vec::new(),
            generated: None,
            crypto: None,
        });
    }
}

/// Parses a template, its errors into `cx`. A template with errors keeps the placeholders
/// that parsed, so every placeholder is still checked in the same compile.
pub fn parse(cx: &mut Ctxt, lit: &LitStr) -> Template {
    let (template, errors) = template::parse(lit);
    cx.extend(errors);
    template
}

fn indexes(cx: &mut Ctxt, attrs: Vec<attr::IndexAttr>) -> Vec<Index> {
    let mut indexes: Vec<Index> = Vec::new();
    for index in attrs {
        // Several keys on one index are told apart by `when` (which one an item has) and
        // `query` (the name of each access path).
        if let Some(first) = indexes.iter().find(|i| i.name == index.name) {
            let message = if index.when.is_none() || first.when.is_none() {
                format!(
                    "duplicate #[index({})]: an item has one key on an index; to give it one of several keys, add `when = ..` to each (a bool field or method) and a `query = ..` name to each",
                    index.name
                )
            } else if indexes
                .iter()
                .any(|i| i.path_name() == index.query.as_ref().unwrap_or(&index.name))
            {
                format!(
                    "#[index({})] is given twice with the query name `{}`: give each key of the index its own `query = ..` name",
                    index.name,
                    index.query.as_ref().unwrap_or(&index.name)
                )
            } else {
                String::new()
            };
            if !message.is_empty() {
                cx.error_spanned_by(&index.name, message);
                continue;
            }
        }
        if let Some(query) = &index.query
            && indexes.iter().any(|i| i.path_name() == query)
        {
            cx.error_spanned_by(
                query,
                format!("the query name `{query}` is taken by another #[index]: pick another"),
            );
            continue;
        }
        let pk = index.pk.as_ref().map_or_else(Template::invalid, |lit| parse(cx, lit));
        let sk = index.sk.as_ref().map(|lit| parse(cx, lit));
        indexes.push(Index {
            name: index.name,
            pk,
            sk,
            pk_lit: index.pk,
            sk_lit: index.sk,
            when: index.when,
            query: index.query,
        });
    }
    indexes
}

/// The index in `fields` of the field `ident` names; `None` (reported) when there is none.
pub fn field_index(
    cx: &mut Ctxt,
    owner: &Ident,
    fields: &[Field],
    ident: &Ident,
    what: &str,
) -> Option<usize> {
    let found = fields.iter().position(|f| f.ident == ident);
    if found.is_none() {
        cx.error_spanned_by(
            ident,
            format!(
                "no field `{ident}` on `{owner}` for {what}; fields are: {}",
                field_list(fields)
            ),
        );
    }
    found
}

pub fn field_list<'f, 'a: 'f>(fields: impl IntoIterator<Item = &'f Field<'a>>) -> String {
    fields.into_iter().map(Field::name).collect::<Vec<_>>().join(", ")
}
