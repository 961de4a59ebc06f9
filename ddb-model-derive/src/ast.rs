//! The IR of `#[derive(Entity)]`: what the attributes say, with the spans they came from.

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
}

impl Field<'_> {
    /// The Rust field name without `r#`.
    pub fn name(&self) -> String {
        self.ident.to_string().trim_start_matches("r#").to_owned()
    }

    /// True when the field is stored as its own attribute.
    pub fn is_stored(&self) -> bool {
        !self.skip_serializing && !self.flatten
    }
}

pub struct Index {
    pub name: Ident,
    pub pk: Template,
    pub sk: Option<Template>,
}

/// How a tree is stored (`#[hierarchy(strategy = ..)]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Nodes addressed by their path (the default).
    Path,
    /// Nodes addressed by id, one copy per ancestor.
    Closure,
    /// Nodes addressed by id, a parent reference and an index on it.
    Adjacency,
}

impl Strategy {
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Path => "path",
            Strategy::Closure => "closure",
            Strategy::Adjacency => "adjacency",
        }
    }

    /// The deepest tree the strategy accepts.
    pub fn depth_limit(self) -> usize {
        match self {
            Strategy::Path => MAX_PATH_DEPTH,
            Strategy::Closure | Strategy::Adjacency => MAX_NODE_DEPTH,
        }
    }
}

/// `#[hierarchy(..)]`: the entity is the node type of a tree.
pub struct Hierarchy {
    /// The `hierarchy` token, for errors about the whole declaration.
    pub span: Span,
    pub strategy: Strategy,
    /// The path field (index into `fields`) and the ident that named it (path strategy).
    pub path: Option<(usize, Ident)>,
    /// The parent field and the ident that named it (closure and adjacency).
    pub parent: Option<(usize, Ident)>,
    /// The index that serves children and depth queries (path), or children (adjacency).
    pub index: Option<Ident>,
    /// The deepest node the tree accepts.
    pub max_depth: usize,
}

/// The deepest path any tree accepts (`ddb_model::MAX_PATH_DEPTH`).
pub const MAX_PATH_DEPTH: usize = 128;

/// The deepest node a closure or adjacency tree accepts (`ddb_model::tree::MAX_NODE_DEPTH`):
/// an insert or a move then fits one transaction.
pub const MAX_NODE_DEPTH: usize = 96;

pub struct Entity<'a> {
    pub ident: &'a Ident,
    pub vis: &'a Visibility,
    /// `None`: the default table.
    pub table: Option<syn::Path>,
    pub pk: Template,
    pub sk: Option<Template>,
    pub sk_lit: Option<LitStr>,
    pub name: String,
    /// Index into `fields`.
    pub version: Option<(usize, Ident)>,
    pub indexes: Vec<Index>,
    pub fields: Vec<Field<'a>>,
    pub hierarchy: Option<Hierarchy>,
}

impl<'a> Entity<'a> {
    /// Parses the input; `None` when it is not a struct with named fields (errors are in `cx`).
    /// When `cx` holds errors, the result may contain `Template::invalid()` and is only good for
    /// running the remaining checks.
    pub fn from_ast(cx: &mut Ctxt, input: &'a DeriveInput) -> Option<Entity<'a>> {
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

        let attrs = attr::entity_attrs(cx, &input.attrs);
        let index_attrs = attr::index_attrs(cx, &input.attrs);
        let hierarchy_attrs = attr::hierarchy_attrs(cx, &input.attrs);
        let rename_rule: RenameRule = attr::serde_container(&input.attrs);

        let fields: Vec<Field<'a>> = named
            .map(|named| {
                named
                    .named
                    .iter()
                    .filter_map(|f| {
                        let ident = f.ident.as_ref()?;
                        let serde = attr::serde_field(&f.attrs);
                        let rust_name = ident.to_string().trim_start_matches("r#").to_owned();
                        let attr_name =
                            serde.rename.unwrap_or_else(|| rename_rule.apply(&rust_name));
                        Some(Field {
                            ident,
                            ty: &f.ty,
                            attr_name,
                            skip_serializing: serde.skip_serializing,
                            skip_attr: serde.skip_attr,
                            flatten: serde.flatten,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();

        // A template with errors keeps the placeholders that parsed, and a missing one is
        // `Template::invalid()` (errors in `cx`), so every placeholder is still checked in the
        // same compile.
        let parse_template = |cx: &mut Ctxt, lit: &LitStr| {
            let (template, errors) = template::parse(lit);
            cx.extend(errors);
            template
        };

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
        let pk =
            attrs.pk.value.as_ref().map_or_else(Template::invalid, |lit| parse_template(cx, lit));
        let sk = attrs.sk.value.as_ref().map(|lit| parse_template(cx, lit));

        let mut indexes = Vec::new();
        for index in index_attrs {
            if indexes.iter().any(|i: &Index| i.name == index.name) {
                cx.error_spanned_by(
                    &index.name,
                    format!(
                        "duplicate #[index({})]: an entity gives each index one key; keep one of these attributes",
                        index.name
                    ),
                );
                continue;
            }
            let pk =
                index.pk.as_ref().map_or_else(Template::invalid, |lit| parse_template(cx, lit));
            let sk = index.sk.as_ref().map(|lit| parse_template(cx, lit));
            indexes.push(Index { name: index.name, pk, sk });
        }

        let version = attrs.version.value.as_ref().and_then(|ident| {
            match fields.iter().position(|f| f.ident == ident) {
                Some(i) => Some((i, ident.clone())),
                None => {
                    cx.error_spanned_by(
                        ident,
                        format!(
                            "no field `{ident}` on `{}` for the version; fields are: {}",
                            input.ident,
                            field_list(&fields)
                        ),
                    );
                    None
                }
            }
        });

        let name = attrs
            .name
            .value
            .as_ref()
            .map(LitStr::value)
            .unwrap_or_else(|| input.ident.to_string().trim_start_matches("r#").to_owned());

        let hierarchy = hierarchy_attrs.map(|h| {
            let strategy = match h.strategy.value.as_ref().map(Ident::to_string).as_deref() {
                Some("closure") => Strategy::Closure,
                Some("adjacency") => Strategy::Adjacency,
                _ => Strategy::Path,
            };
            let name = strategy.name();
            let field_of = |cx: &mut Ctxt, ident: Option<Ident>, what: &str| {
                ident.and_then(|ident| match fields.iter().position(|f| f.ident == &ident) {
                    Some(i) => Some((i, ident)),
                    None => {
                        cx.error_spanned_by(
                            &ident,
                            format!(
                                "no field `{ident}` on `{}` for the {what}; fields are: {}",
                                input.ident,
                                field_list(&fields)
                            ),
                        );
                        None
                    }
                })
            };
            let (path, parent) = match strategy {
                Strategy::Path => {
                    if !h.path.given {
                        cx.error_at(
                            h.span,
                            "#[hierarchy] needs the field holding each node's path, as in #[hierarchy(path = path, index = gsi1)]",
                        );
                    }
                    if !h.index.given {
                        cx.error_at(
                            h.span,
                            "#[hierarchy] needs an index with a sort key for children and depth queries, as in #[hierarchy(path = path, index = gsi1)]",
                        );
                    }
                    if let Some(parent) = &h.parent.value {
                        cx.error_spanned_by(
                            parent,
                            "`parent` is for the closure and adjacency strategies, whose nodes are addressed by id; the path strategy reads the parent from the path. Add `strategy = closure` (or `adjacency`), or remove `parent`",
                        );
                    }
                    (field_of(cx, h.path.value, "node path"), None)
                }
                Strategy::Closure | Strategy::Adjacency => {
                    let example = match strategy {
                        Strategy::Adjacency => "#[hierarchy(strategy = adjacency, parent = parent, index = gsi1)]",
                        _ => "#[hierarchy(strategy = closure, parent = parent)]",
                    };
                    if !h.parent.given {
                        cx.error_at(
                            h.span,
                            format!(
                                "a {name} tree needs the field naming each node's parent (an `Option` of the id type), as in {example}"
                            ),
                        );
                    }
                    if let Some(path) = &h.path.value {
                        cx.error_spanned_by(
                            path,
                            format!(
                                "`path` is for the path strategy; {name} nodes are addressed by the id in their sort key and name their `parent`, as in {example}"
                            ),
                        );
                    }
                    match (strategy, &h.index.value) {
                        (Strategy::Closure, Some(index)) => cx.error_spanned_by(
                            index,
                            "the closure strategy keeps its copies under the table's sort key and needs no index; remove `index`",
                        ),
                        (Strategy::Adjacency, None) if !h.index.given => cx.error_at(
                            h.span,
                            format!(
                                "an adjacency tree needs an index with a sort key to find the children of a node, as in {example}"
                            ),
                        ),
                        _ => {}
                    }
                    (None, field_of(cx, h.parent.value, "parent"))
                }
            };
            let limit = strategy.depth_limit();
            let max_depth = match &h.max_depth.value {
                None => limit,
                Some(lit) => match lit.base10_parse::<usize>() {
                    Ok(n) if (1..=limit).contains(&n) => n,
                    _ => {
                        let message = match strategy {
                            Strategy::Path => format!("`max_depth` must be between 1 and {limit}"),
                            _ => format!(
                                "`max_depth` must be between 1 and {limit} for the {name} strategy, so that an insert or a move fits one transaction"
                            ),
                        };
                        cx.error_spanned_by(lit, message);
                        limit
                    }
                },
            };
            let index = match strategy {
                Strategy::Closure => None,
                _ => h.index.value,
            };
            Hierarchy { span: h.span, strategy, path, parent, index, max_depth }
        });

        named?;
        Some(Entity {
            ident: &input.ident,
            vis: &input.vis,
            table: attrs.table.value,
            pk,
            sk,
            sk_lit: attrs.sk.value,
            name,
            version,
            indexes,
            fields,
            hierarchy,
        })
    }

    pub fn field(&self, name: &str) -> Option<&Field<'a>> {
        self.fields.iter().find(|f| f.name() == name)
    }

    /// The primary-key placeholder fields, in order of first appearance, without repeats.
    pub fn key_fields(&self) -> Vec<&Field<'a>> {
        let mut out: Vec<&Field<'a>> = Vec::new();
        for t in std::iter::once(&self.pk).chain(self.sk.as_ref()) {
            for (name, _) in t.fields() {
                if let Some(f) = self.field(name)
                    && !out.iter().any(|o| o.ident == f.ident)
                {
                    out.push(f);
                }
            }
        }
        out
    }

    /// Every template of the entity with what it keys.
    pub fn templates(&self) -> impl Iterator<Item = &Template> {
        std::iter::once(&self.pk)
            .chain(self.sk.as_ref())
            .chain(self.indexes.iter().flat_map(|i| std::iter::once(&i.pk).chain(i.sk.as_ref())))
    }

    pub fn span_of_sk(&self) -> Span {
        self.sk_lit.as_ref().map_or_else(|| self.ident.span(), LitStr::span)
    }
}

pub fn field_list(fields: &[Field]) -> String {
    fields.iter().map(Field::name).collect::<Vec<_>>().join(", ")
}
