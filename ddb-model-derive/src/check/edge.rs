//! The rules of `#[derive(Edge)]`: two endpoint fields, one way to find incoming edges,
//! counters that suit the direction, and key templates that hold exactly the endpoint they
//! are for (the forward key, the inverse items' or the inverting index's).

use proc_macro2::Span;
use syn::LitStr;

use crate::ast::{Edge, Entity, Field, Inverse, ItemsInverse, field_list};
use crate::ctxt::Ctxt;
use crate::template::{Segment, Template};

const INVERSE_ITEMS: &str =
    "inverse(pk = \"USER#<followee>\", sk = \"FOLLOWER#<follower>\") for inverse items";

pub fn edge(cx: &mut Ctxt, entity: &Entity, edge: &Edge) {
    version(cx, entity);
    // Links and unlinks write the edge's items without the sentinels of unique constraints.
    for unique in &entity.uniques {
        cx.error_at(
            unique.span,
            format!(
                "the edge `{}` cannot have unique constraints: its links and unlinks write its items without the sentinel items that keep a constraint; keep the unique value on an entity of its own",
                entity.ident
            ),
        );
    }
    adopted(cx, entity, edge);
    endpoints(cx, edge);
    direction(cx, edge);
    counters(cx, edge);
    let (Some(from), Some(to)) = (edge.from_field, edge.to_field) else {
        return;
    };
    let (Some(from), Some(to)) = (entity.fields.get(from), entity.fields.get(to)) else {
        return;
    };
    if from.ident == to.ident {
        return;
    }
    let ends = Ends { entity, edge, from: from.name(), to: to.name() };
    // A symmetric edge has no inverse to check (with `inverse(..)` as well, that is reported).
    if !ends.forward(cx) || edge.symmetric.is_some() {
        return;
    }
    match &edge.inverse {
        Some(Inverse::Index { index, position }) => ends.index(cx, index, *position),
        Some(Inverse::Items(items)) => ends.items(cx, items),
        Some(Inverse::None(_)) | None => {}
    }
}

fn version(cx: &mut Ctxt, entity: &Entity) {
    if let Some((_, version)) = &entity.version {
        cx.error_spanned_by(
            version,
            format!(
                "an edge cannot have a version field: `{}`'s items are written in transactions that check what they need, and an edge is identified by its endpoints; remove `version`",
                entity.ident
            ),
        );
    }
}

fn endpoints(cx: &mut Ctxt, edge: &Edge) {
    for (slot, key, example) in [
        (&edge.from, "from", "starts at, as in from = follower"),
        (&edge.to, "to", "ends at, as in to = followee"),
    ] {
        if !slot.given {
            cx.error_at(
                edge.span,
                format!("#[edge] needs `{key}`: the field holding the node the edge {example}"),
            );
        }
    }
    if let (Some(from), Some(to), Some(to_ident)) = (edge.from_field, edge.to_field, &edge.to.value)
        && from == to
    {
        cx.error_spanned_by(
            to_ident,
            "`from` and `to` name the same field: an edge links two endpoint fields; for edges that link both ways, use two fields and `symmetric`",
        );
    }
}

/// Exactly one of `inverse(..)`, `inverse = none` and `symmetric`.
fn direction(cx: &mut Ctxt, edge: &Edge) {
    match (&edge.inverse, &edge.symmetric) {
        (Some(Inverse::None(none)), Some(_)) => cx.error_spanned_by(
            none,
            "`inverse = none` declares a one-directional edge, but `symmetric` stores every edge from both ends: remove `inverse = none` for a symmetric edge, or `symmetric` for a one-directional one",
        ),
        (Some(_), Some(symmetric)) => cx.error_spanned_by(
            symmetric,
            "a symmetric edge is its own inverse: remove `inverse(..)` or `symmetric`",
        ),
        (None, None) if !edge.inverse_given => cx.error_at(
            edge.span,
            format!(
                "#[edge] needs the other direction: {INVERSE_ITEMS}, inverse(index = gsi1) for an index that inverts the keys, `symmetric` for edges that link both ways, or `inverse = none` for a one-directional edge read only from its `from` node"
            ),
        ),
        _ => {}
    }
}

/// `from_count` / `to_count` on a directed edge, `count` on a symmetric one, each a path
/// `Node::FIELD`.
fn counters(cx: &mut Ctxt, edge: &Edge) {
    let node_path = |cx: &mut Ctxt, path: &Option<syn::Path>, key: &str| {
        if let Some(path) = path.as_ref().filter(|p| p.segments.len() < 2) {
            cx.error_spanned_by(
                path,
                format!(
                    "`{key}` names a counter as `Node::FIELD`, the typed attribute of a number field of the node entity, as in {key} = User::FOLLOWERS"
                ),
            );
        }
    };
    if edge.is_symmetric() {
        for (path, key) in [(&edge.from_count, "from_count"), (&edge.to_count, "to_count")] {
            if let Some(path) = path {
                cx.error_spanned_by(
                    path,
                    format!(
                        "a symmetric edge has one degree counter for both endpoints: write `count = ..` instead of `{key}`"
                    ),
                );
            }
        }
        node_path(cx, &edge.count, "count");
    } else {
        if let Some(path) = &edge.count {
            cx.error_spanned_by(
                path,
                "`count` is the degree counter of a symmetric edge; a directed edge counts each endpoint on its own: from_count = .. (edges out of a node), to_count = .. (edges into it)",
            );
        }
        node_path(cx, &edge.from_count, "from_count");
        node_path(cx, &edge.to_count, "to_count");
    }
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

/// The entity, the edge and the names of its two endpoint fields.
struct Ends<'e, 'a> {
    entity: &'e Entity<'a>,
    edge: &'e Edge,
    from: String,
    to: String,
}

impl Ends<'_, '_> {
    fn shape<'s>(
        &'s self,
        role: String,
        endpoint: &'static str,
        last: bool,
        example: &str,
    ) -> Shape<'s> {
        let field = if endpoint == "from" { &self.from } else { &self.to };
        Shape { role, endpoint, field, last, example: format!("{example}<{field}>") }
    }

    /// The span of `lit`, else of the `edge` token.
    fn span(&self, lit: Option<&LitStr>) -> Span {
        lit.map_or(self.edge.span, LitStr::span)
    }

    /// The forward key: the partition key holds `from`, the sort key ends with `to`. False
    /// when there is no sort key (reported): nothing more can be checked.
    fn forward(&self, cx: &mut Ctxt) -> bool {
        let (entity, ident, to) = (self.entity, self.entity.ident, &self.to);
        let pk_span = self.span(entity.pk_lit.as_ref());
        let Some(sk) = &entity.sk else {
            cx.error_at(
                pk_span,
                format!(
                    "an edge is stored in the partition of its `from` node, one item per `to` node: give `{ident}` a sort key template ending with `<{to}>`, as in sk = \"FOLLOWS#<{to}>\" (the table needs a sort key)"
                ),
            );
            return false;
        };
        let role = |what: &str| format!("the {what} template of edge `{ident}`");
        let pk_shape = self.shape(role("partition key"), "from", false, "USER#");
        check_shape(cx, entity, &entity.pk, pk_span, &pk_shape);
        let sk_shape = self.shape(role("sort key"), "to", true, "FOLLOWS#");
        check_shape(cx, entity, sk, entity.span_of_sk(), &sk_shape);
        true
    }

    /// `inverse(index = ..)`: an `#[index]` of the entity whose keys invert the edge's.
    fn index(&self, cx: &mut Ctxt, index: &syn::Ident, position: Option<usize>) {
        let (ident, from, to) = (self.entity.ident, &self.from, &self.to);
        let Some(def) = position.and_then(|i| self.entity.indexes.get(i)) else {
            let declared: Vec<String> =
                self.entity.indexes.iter().map(|i| i.name.to_string()).collect();
            let declared = if declared.is_empty() {
                "it declares none".to_owned()
            } else {
                format!("it declares: {}", declared.join(", "))
            };
            cx.error_spanned_by(
                index,
                format!(
                    "`{ident}` has no #[index({index}, ..)] ({declared}): inverse(index = ..) names an #[index] of the edge whose keys invert it, as in #[index({index}, pk = \"USER#<{to}>\", sk = \"FOLLOWER#<{from}>\")]"
                ),
            );
            return;
        };
        let role = |what: &str| {
            format!("the {what} template of #[index({index})], which inverts edge `{ident}`,")
        };
        let at = |lit: Option<&LitStr>| lit.map_or(index.span(), LitStr::span);
        let pk_shape = self.shape(role("partition key"), "to", false, "USER#");
        check_shape(cx, self.entity, &def.pk, at(def.pk_lit.as_ref()), &pk_shape);
        match &def.sk {
            Some(sk) => {
                let sk_shape = self.shape(role("sort key"), "from", true, "FOLLOWER#");
                check_shape(cx, self.entity, sk, at(def.sk_lit.as_ref()), &sk_shape);
            }
            None => cx.error_spanned_by(
                index,
                format!(
                    "#[index({index})] needs a sort key template ending with `<{from}>` to invert edge `{ident}`, as in sk = \"FOLLOWER#<{from}>\""
                ),
            ),
        }
    }

    /// `inverse(pk = .., sk = .., name = .., fields(..))`: inverse items.
    fn items(&self, cx: &mut Ctxt, items: &ItemsInverse) {
        let (Some((pk, pk_valid)), Some((sk, sk_valid))) = (&items.pk, &items.sk) else {
            return;
        };
        let entity = self.entity;
        for t in [pk, sk] {
            for (name, span) in t.fields() {
                if entity.field(name).is_none() {
                    super::placeholders::unknown_field(cx, entity, name, span);
                }
            }
        }
        let role = |what: &str| format!("the {what} template of inverse items");
        let (pk_span, sk_span) =
            (self.span(items.pk_lit.as_ref()), self.span(items.sk_lit.as_ref()));
        if *pk_valid {
            let shape = self.shape(role("partition key"), "to", false, "USER#");
            check_shape(cx, entity, pk, pk_span, &shape);
        }
        if *sk_valid {
            let shape = self.shape(role("sort key"), "from", true, "FOLLOWER#");
            check_shape(cx, entity, sk, sk_span, &shape);
        }
        if let Some(forward_sk) = &entity.sk
            && skeleton(pk) == skeleton(&entity.pk)
            && skeleton(sk) == skeleton(forward_sk)
        {
            cx.error_at(
                sk_span,
                "the inverse item of `a -> b` would have the key of the edge `b -> a`: give inverse items other literal text, as in sk = \"FOLLOWER#<..>\", or declare the edge `symmetric` if it links both ways",
            );
        }
        if let Some(lit) = items.name.as_ref().filter(|lit| lit.value() == entity.name) {
            cx.error_spanned_by(
                lit,
                format!(
                    "inverse items need an entity type of their own: `{}` is the edge's; pick another name, or remove `name`",
                    entity.name
                ),
            );
        }
        if let Some(list) = &items.fields {
            self.copied_fields(cx, list);
        }
    }

    /// `fields(..)` lists stored fields, and every field left out may be missing.
    fn copied_fields(&self, cx: &mut Ctxt, list: &[syn::Ident]) {
        let entity = self.entity;
        for field in list {
            match entity.fields.iter().find(|f| f.ident == field) {
                Some(f) if f.is_stored() => {}
                Some(_) => cx.error_spanned_by(
                    field,
                    format!("field `{field}` is not stored (serde skips or flattens it), so it cannot be copied onto inverse items"),
                ),
                None => cx.error_spanned_by(
                    field,
                    format!(
                        "no field `{field}` on `{}` to copy onto inverse items; fields are: {}",
                        entity.ident,
                        field_list(&entity.fields)
                    ),
                ),
            }
        }
        let endpoint = |f: &Field| f.name() == self.from || f.name() == self.to;
        for f in entity.fields.iter().filter(|f| f.is_stored() && !endpoint(f)) {
            if !list.iter().any(|l| l == f.ident) && !f.may_be_missing {
                cx.error_spanned_by(
                    f.ident,
                    format!(
                        "field `{}` is not copied onto inverse items (inverse(fields(..)) leaves it out), so incoming edges are read without it: make it an `Option`, give it #[serde(default)], or list it in fields(..)",
                        f.name()
                    ),
                );
            }
        }
    }
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

/// Edges keep counters and inverse items next to the edge items, told apart by the table's
/// type attribute, and read their endpoints back from escaped keys.
fn adopted(cx: &mut Ctxt, entity: &Entity, edge: &Edge) {
    let message = "an edge is told apart from its inverse and counter items by the table's type attribute: remove this setting";
    match &entity.identity {
        crate::ast::Identity::Table => {}
        crate::ast::Identity::Tagged(lit) => cx.error_spanned_by(lit, message),
        crate::ast::Identity::Keys(flag) => cx.error_spanned_by(flag, message),
    }
    let inverse = match &edge.inverse {
        Some(crate::ast::Inverse::Items(items)) => {
            items.pk.iter().chain(items.sk.iter()).map(|(t, _)| t).collect()
        }
        _ => Vec::new(),
    };
    for template in entity.templates().chain(inverse) {
        for (span, options) in template.option_spans() {
            cx.error_at(span, format!("an edge's keys are read back escaped: remove `{options}`"));
        }
    }
}
