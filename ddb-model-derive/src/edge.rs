//! The IR of `#[derive(Edge)]` and its rules: which fields are the endpoints, where the other
//! direction is stored, which counters move. Built on the entity's IR (`ast::Entity`), whose
//! own mistakes are reported by `#[derive(Entity)]`.

use proc_macro2::Span;
use syn::{DeriveInput, Ident, LitStr};

use crate::ast::{Entity, Field, field_list};
use crate::attr::{self, InverseAttr};
use crate::ctxt::Ctxt;
use crate::template::{self, Segment, Template};

/// Where the incoming edges of a node are stored.
pub enum Inverse {
    /// Materialised inverse items.
    Items {
        pk: Template,
        sk: Template,
        /// The entity type stored on inverse items.
        name: String,
        /// The stored attributes copied onto inverse items besides the endpoints (`None`:
        /// every field).
        fields: Option<Vec<String>>,
    },
    /// The entity's index `entity.indexes[index]`.
    Index { index: usize },
    /// Mirrored forward items.
    Symmetric,
}

pub struct Edge {
    /// Index into `entity.fields`.
    pub from: usize,
    /// Index into `entity.fields`.
    pub to: usize,
    pub inverse: Inverse,
    /// The counter of the `from` node (`count` of a symmetric edge), as `Node::FIELD`.
    pub from_count: Option<syn::Path>,
    /// The counter of the `to` node (`count` of a symmetric edge).
    pub to_count: Option<syn::Path>,
}

/// Which endpoint a template must hold, and how to talk about it.
struct Shape<'a> {
    /// "the partition key template of edge `Follow`", ...
    role: String,
    /// "from" or "to".
    endpoint: &'static str,
    /// The endpoint field's name.
    field: &'a str,
    /// The placeholder must end the template.
    last: bool,
    /// A template that would be right, for messages.
    example: String,
}

/// Reports every way `template` differs from holding exactly the placeholder of `shape`.
/// Placeholders that name no field are left to the error that says so.
fn check_shape(cx: &mut Ctxt, entity: &Entity, template: &Template, whole: Span, shape: &Shape) {
    let Shape { role, endpoint, field, last, example } = shape;
    let known: Vec<(&str, Span)> =
        template.fields().filter(|(name, _)| entity.field(name).is_some()).collect();
    let unknown = template.fields().count() > known.len();
    let holds = known.iter().any(|(name, _)| name == field);
    let mut seen = false;
    for (name, span) in &known {
        if name != field {
            let message = if holds {
                format!(
                    "{role} holds only the `{endpoint}` endpoint `<{field}>`; `<{name}>` cannot be part of it: an edge is identified by its two endpoints"
                )
            } else {
                format!(
                    "{role} must hold the `{endpoint}` endpoint `<{field}>` instead of `<{name}>`, as in \"{example}\""
                )
            };
            cx.error_at(*span, message);
        } else if seen {
            cx.error_at(*span, format!("{role} holds `<{field}>` once; remove this one"));
        }
        seen |= name == field;
    }
    if !holds {
        if known.is_empty() && !unknown {
            cx.error_at(
                whole,
                format!(
                    "{role} must hold the `{endpoint}` endpoint `<{field}>`, as in \"{example}\""
                ),
            );
        }
        return;
    }
    if *last
        && let Some(Segment::Lit(_)) = template.segments.last()
        && let Some((_, span)) = known.iter().find(|(n, _)| n == field)
    {
        cx.error_at(
            *span,
            format!(
                "{role} must end with `<{field}>`, so that a node's edges sort by their other endpoint (mutual edges are a merge of sorted lists); move the text after it to before it"
            ),
        );
    }
}

/// The literal skeleton of a template: its text with every placeholder blanked.
fn skeleton(template: &Template) -> Vec<&str> {
    template
        .segments
        .iter()
        .map(|s| match s {
            Segment::Lit(l) => l.as_str(),
            Segment::Field { .. } => "<>",
        })
        .collect()
}

/// True when serde fills the field in when it is missing: an `Option`, or `#[serde(default)]`
/// on the field or the struct.
fn may_be_missing(input: &DeriveInput, field: &Ident) -> bool {
    let serde_default = |attrs: &[syn::Attribute]| {
        attrs.iter().filter(|a| a.path().is_ident("serde")).any(|a| {
            let mut found = false;
            let _ = a.parse_nested_meta(|meta| {
                found |= meta.path.is_ident("default");
                if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<syn::Expr>()?;
                } else if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|_| Ok(()))?;
                }
                Ok(())
            });
            found
        })
    };
    if serde_default(&input.attrs) {
        return true;
    }
    let syn::Data::Struct(data) = &input.data else {
        return false;
    };
    data.fields.iter().filter(|f| f.ident.as_ref() == Some(field)).any(|f| {
        let option = match &f.ty {
            syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Option"),
            _ => false,
        };
        option || serde_default(&f.attrs)
    })
}

impl Edge {
    /// The `from` and `to` fields of `entity`.
    pub fn endpoints<'e, 'a>(
        &self,
        entity: &'e Entity<'a>,
    ) -> Option<(&'e Field<'a>, &'e Field<'a>)> {
        Some((entity.fields.get(self.from)?, entity.fields.get(self.to)?))
    }

    /// Reads and checks `#[edge]`. `None` when it cannot be generated (errors in `cx`).
    pub fn from_ast(cx: &mut Ctxt, input: &DeriveInput, entity: &Entity) -> Option<Edge> {
        let ident = entity.ident;
        let Some(attrs) = attr::edge_attrs(cx, &input.attrs) else {
            cx.error_spanned_by(
                ident,
                format!(
                    "`#[derive(Edge)]` needs an #[edge(..)] attribute naming the endpoints and the other direction, as in #[edge(from = follower, to = followee, {})]",
                    "inverse(pk = \"USER#<followee>\", sk = \"FOLLOWER#<follower>\")"
                ),
            );
            return None;
        };
        // The literals of the entity's templates, for errors about a whole template (the
        // entity derive reports their own mistakes).
        let mut quiet = Ctxt::default();
        let entity_attrs = attr::entity_attrs(&mut quiet, &input.attrs);
        let index_attrs = attr::index_attrs(&mut quiet, &input.attrs);
        let _ = quiet.check();
        let lit_span = |lit: &Option<LitStr>| lit.as_ref().map_or(attrs.span, LitStr::span);

        if let Some((_, version)) = &entity.version {
            cx.error_spanned_by(
                version,
                format!(
                    "an edge cannot have a version field: `{ident}`'s items are written in transactions that check what they need, and an edge is identified by its endpoints; remove `version`"
                ),
            );
        }

        let endpoint = |cx: &mut Ctxt, slot: &attr::Slot<Ident>, key: &str, example: &str| {
            let Some(field) = &slot.value else {
                if !slot.given {
                    cx.error_at(
                        attrs.span,
                        format!(
                            "#[edge] needs `{key}`: the field holding the node the edge {example}"
                        ),
                    );
                }
                return None;
            };
            match entity.fields.iter().position(|f| f.ident == field) {
                Some(i) => Some((i, field.clone())),
                None => {
                    cx.error_spanned_by(
                        field,
                        format!(
                            "no field `{field}` on `{ident}` for `{key}`; fields are: {}",
                            field_list(&entity.fields)
                        ),
                    );
                    None
                }
            }
        };
        let from = endpoint(cx, &attrs.from, "from", "starts at, as in from = follower");
        let to = endpoint(cx, &attrs.to, "to", "ends at, as in to = followee");
        let same_field = matches!((&from, &to), (Some((f, _)), Some((t, _))) if f == t);
        if let (true, Some((_, to_ident))) = (same_field, &to) {
            cx.error_spanned_by(
                to_ident,
                "`from` and `to` name the same field: an edge links two endpoint fields; for edges that link both ways, use two fields and `symmetric`",
            );
        }

        // Where incoming edges are.
        let inverse = match (attrs.inverse.value, &attrs.symmetric.value) {
            (Some(_), Some(symmetric)) => {
                cx.error_spanned_by(
                    symmetric,
                    "a symmetric edge is its own inverse: remove `inverse(..)` or `symmetric`",
                );
                None
            }
            (None, Some(_)) => Some(InverseAttrOrSymmetric::Symmetric),
            (Some(inverse), None) => Some(InverseAttrOrSymmetric::Inverse(inverse)),
            (None, None) => {
                if !attrs.inverse.given {
                    cx.error_at(
                        attrs.span,
                        format!(
                            "#[edge] needs the other direction: {}, inverse(index = gsi1) for an index that inverts the keys, or `symmetric` for edges that link both ways",
                            "inverse(pk = \"USER#<followee>\", sk = \"FOLLOWER#<follower>\") for inverse items"
                        ),
                    );
                }
                None
            }
        };
        let symmetric = matches!(inverse, Some(InverseAttrOrSymmetric::Symmetric));

        // Counters.
        let counter = |cx: &mut Ctxt, path: Option<syn::Path>, key: &str| {
            let path = path?;
            if path.segments.len() < 2 {
                cx.error_spanned_by(
                    &path,
                    format!(
                        "`{key}` names a counter as `Node::FIELD`, the typed attribute of a number field of the node entity, as in {key} = User::FOLLOWERS"
                    ),
                );
                return None;
            }
            Some(path)
        };
        let (from_count, to_count) = if symmetric {
            for (slot, key) in [(&attrs.from_count, "from_count"), (&attrs.to_count, "to_count")] {
                if let Some(path) = &slot.value {
                    cx.error_spanned_by(
                        path,
                        format!(
                            "a symmetric edge has one degree counter for both endpoints: write `count = ..` instead of `{key}`"
                        ),
                    );
                }
            }
            let count = counter(cx, attrs.count.value, "count");
            (count.clone(), count)
        } else {
            if let Some(path) = &attrs.count.value {
                cx.error_spanned_by(
                    path,
                    "`count` is the degree counter of a symmetric edge; a directed edge counts each endpoint on its own: from_count = .. (edges out of a node), to_count = .. (edges into it)",
                );
            }
            (
                counter(cx, attrs.from_count.value, "from_count"),
                counter(cx, attrs.to_count.value, "to_count"),
            )
        };

        let (Some((from, _)), Some((to, _)), false) = (from, to, same_field) else {
            return None;
        };
        let (Some(from_field), Some(to_field)) = (entity.fields.get(from), entity.fields.get(to))
        else {
            return None;
        };
        let (from_name, to_name) = (from_field.name(), to_field.name());

        // The forward key: the entity's own templates.
        let pk_span = lit_span(&entity_attrs.pk.value);
        let Some(forward_sk) = &entity.sk else {
            cx.error_at(
                pk_span,
                format!(
                    "an edge is stored in the partition of its `from` node, one item per `to` node: give `{ident}` a sort key template ending with `<{to_name}>`, as in sk = \"FOLLOWS#<{to_name}>\" (the table needs a sort key)"
                ),
            );
            return None;
        };
        check_shape(
            cx,
            entity,
            &entity.pk,
            pk_span,
            &Shape {
                role: format!("the partition key template of edge `{ident}`"),
                endpoint: "from",
                field: &from_name,
                last: false,
                example: format!("USER#<{from_name}>"),
            },
        );
        check_shape(
            cx,
            entity,
            forward_sk,
            entity.span_of_sk(),
            &Shape {
                role: format!("the sort key template of edge `{ident}`"),
                endpoint: "to",
                field: &to_name,
                last: true,
                example: format!("FOLLOWS#<{to_name}>"),
            },
        );

        let inverse = match inverse? {
            InverseAttrOrSymmetric::Symmetric => Inverse::Symmetric,
            InverseAttrOrSymmetric::Inverse(InverseAttr::Index { index }) => {
                let Some(i) = entity.indexes.iter().position(|x| x.name == index) else {
                    let declared: Vec<String> =
                        entity.indexes.iter().map(|i| i.name.to_string()).collect();
                    let declared = if declared.is_empty() {
                        "it declares none".to_owned()
                    } else {
                        format!("it declares: {}", declared.join(", "))
                    };
                    cx.error_spanned_by(
                        &index,
                        format!(
                            "`{ident}` has no #[index({index}, ..)] ({declared}): inverse(index = ..) names an #[index] of the edge whose keys invert it, as in #[index({index}, pk = \"USER#<{to_name}>\", sk = \"FOLLOWER#<{from_name}>\")]"
                        ),
                    );
                    return None;
                };
                let def = entity.indexes.get(i)?;
                let lits = index_attrs.iter().find(|a| a.name == index);
                let role = |what: &str| {
                    format!(
                        "the {what} template of #[index({index})], which inverts edge `{ident}`,"
                    )
                };
                check_shape(
                    cx,
                    entity,
                    &def.pk,
                    lits.and_then(|l| l.pk.as_ref()).map_or(index.span(), LitStr::span),
                    &Shape {
                        role: role("partition key"),
                        endpoint: "to",
                        field: &to_name,
                        last: false,
                        example: format!("USER#<{to_name}>"),
                    },
                );
                match &def.sk {
                    Some(sk) => check_shape(
                        cx,
                        entity,
                        sk,
                        lits.and_then(|l| l.sk.as_ref()).map_or(index.span(), LitStr::span),
                        &Shape {
                            role: role("sort key"),
                            endpoint: "from",
                            field: &from_name,
                            last: true,
                            example: format!("FOLLOWER#<{from_name}>"),
                        },
                    ),
                    None => cx.error_spanned_by(
                        &index,
                        format!(
                            "#[index({index})] needs a sort key template ending with `<{from_name}>` to invert edge `{ident}`, as in sk = \"FOLLOWER#<{from_name}>\""
                        ),
                    ),
                }
                Inverse::Index { index: i }
            }
            InverseAttrOrSymmetric::Inverse(InverseAttr::Items { pk, sk, name, fields }) => {
                // A template with syntax errors is not checked further.
                let mut parse = |lit: &Option<LitStr>| {
                    lit.as_ref().map(|lit| {
                        let (template, errors) = template::parse(lit);
                        let valid = errors.is_empty();
                        cx.extend(errors);
                        (template, valid)
                    })
                };
                let (Some((ipk, pk_valid)), Some((isk, sk_valid))) = (parse(&pk), parse(&sk))
                else {
                    return None;
                };
                for t in [&ipk, &isk] {
                    for (name, span) in t.fields() {
                        if entity.field(name).is_none() {
                            cx.error_at(
                                span,
                                format!(
                                    "no field `{name}` on `{ident}` for placeholder `<{name}>`; fields are: {}",
                                    field_list(&entity.fields)
                                ),
                            );
                        }
                    }
                }
                let role = |what: &str| format!("the {what} template of inverse items");
                let (pk_lit, sk_lit) = (lit_span(&pk), lit_span(&sk));
                if pk_valid {
                    check_shape(
                        cx,
                        entity,
                        &ipk,
                        pk_lit,
                        &Shape {
                            role: role("partition key"),
                            endpoint: "to",
                            field: &to_name,
                            last: false,
                            example: format!("USER#<{to_name}>"),
                        },
                    );
                }
                if sk_valid {
                    check_shape(
                        cx,
                        entity,
                        &isk,
                        sk_lit,
                        &Shape {
                            role: role("sort key"),
                            endpoint: "from",
                            field: &from_name,
                            last: true,
                            example: format!("FOLLOWER#<{from_name}>"),
                        },
                    );
                }
                if skeleton(&ipk) == skeleton(&entity.pk) && skeleton(&isk) == skeleton(forward_sk)
                {
                    cx.error_at(
                        sk_lit,
                        "the inverse item of `a -> b` would have the key of the edge `b -> a`: give inverse items other literal text, as in sk = \"FOLLOWER#<..>\", or declare the edge `symmetric` if it links both ways",
                    );
                }
                let name = match name {
                    Some(lit) if lit.value() == entity.name => {
                        cx.error_spanned_by(
                            &lit,
                            format!(
                                "inverse items need an entity type of their own: `{}` is the edge's; pick another name, or remove `name`",
                                entity.name
                            ),
                        );
                        lit.value()
                    }
                    Some(lit) => lit.value(),
                    None => format!("{}~inverse", entity.name),
                };
                let fields = fields.map(|list| {
                    let mut attrs = Vec::new();
                    for field in &list {
                        match entity.fields.iter().find(|f| f.ident == field) {
                            Some(f) if f.is_stored() => attrs.push(f.attr_name.clone()),
                            Some(_) => cx.error_spanned_by(
                                field,
                                format!("field `{field}` is not stored (serde skips or flattens it), so it cannot be copied onto inverse items"),
                            ),
                            None => cx.error_spanned_by(
                                field,
                                format!(
                                    "no field `{field}` on `{ident}` to copy onto inverse items; fields are: {}",
                                    field_list(&entity.fields)
                                ),
                            ),
                        }
                    }
                    for (i, f) in entity.fields.iter().enumerate() {
                        let listed = list.iter().any(|l| l == f.ident);
                        if i == from || i == to || listed || !f.is_stored() {
                            continue;
                        }
                        if !may_be_missing(input, f.ident) {
                            cx.error_spanned_by(
                                f.ident,
                                format!(
                                    "field `{}` is not copied onto inverse items (inverse(fields(..)) leaves it out), so incoming edges are read without it: make it an `Option`, give it #[serde(default)], or list it in fields(..)",
                                    f.name()
                                ),
                            );
                        }
                    }
                    attrs
                });
                Inverse::Items { pk: ipk, sk: isk, name, fields }
            }
        };

        Some(Edge { from, to, inverse, from_count, to_count })
    }
}

enum InverseAttrOrSymmetric {
    Inverse(InverseAttr),
    Symmetric,
}
