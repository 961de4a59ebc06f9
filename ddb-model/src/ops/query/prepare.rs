//! The query rendered for the wire, once per query: the key condition, the entity-type and
//! caller's filters, the projection, and the key attributes a start key holds.

use super::*;
use crate::error::RequestProblem;
use crate::model::TypeTag;
use crate::ops::tenant;

/// Most values of one `IN` comparison.
const MAX_IN_OPERANDS: usize = 100;

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
    pub(super) fn prepare(&self) -> Result<Prepared, Error> {
        D::can_read(self.db)?;
        let key = self.key.as_ref().map_err(|e| e.to_error(self.entity))?;
        let (pk_attr, sk_attr) = match key.index {
            Some(index) => (index.pk, index.sk),
            None => {
                D::can_query_table_key(self.db)?;
                (T::PK, T::SK)
            }
        };
        let mut b = ExprBuilder::default();
        let mut key_expr = match &key.attrs {
            // Values checked as the condition was built.
            Some(attrs) => {
                tenant::unconfined(self.db, Op::Query, key.index.map(|i| i.name))?;
                attrs.render(&mut b)
            }
            None => {
                key.validate(self.entity, pk_attr)?;
                let pk = AttributeValue::S(key.pk.clone());
                tenant::guard(self.db, tenant::Source::Key(Op::Query), pk_attr, Some(&pk))?;
                let pk_name = b.name(pk_attr);
                let pk_value = b.value(AttributeValue::S(key.pk.clone()));
                format!("{pk_name} = {pk_value}")
            }
        };
        if key.sk != SkCond::Any {
            let Some(sk_attr) = sk_attr else {
                return Err(Error::InvalidRequest {
                    path: String::new(),
                    problem: RequestProblem::NoSortKey { index: key.index.map(|i| i.name) },
                });
            };
            let sk = b.name(sk_attr);
            let mut v = |s: &String| b.value(AttributeValue::S(s.clone()));
            let cond = match &key.sk {
                SkCond::Any => String::new(),
                SkCond::Eq(x) => format!("{sk} = {}", v(x)),
                SkCond::BeginsWith(x) => format!("begins_with({sk}, {})", v(x)),
                SkCond::Between(lo, hi) => format!("{sk} BETWEEN {} AND {}", v(lo), v(hi)),
                SkCond::Ge(x) => format!("{sk} >= {}", v(x)),
                SkCond::Le(x) => format!("{sk} <= {}", v(x)),
            };
            key_expr.push_str(" AND ");
            key_expr.push_str(&cond);
        }
        let mut filters = Vec::new();
        let tag = D::type_filter();
        if let Some(tag) = tag {
            filters.push(type_equals(&mut b, tag));
        }
        for constant in D::constants() {
            filters.push(type_equals(&mut b, *constant));
        }
        if tag.is_none()
            && let Some(types) = D::type_set()
        {
            // `IN` takes at most 100 values; no collection has more variants than that
            // in practice, and one that does is refused rather than sent.
            if types.len() > MAX_IN_OPERANDS {
                return Err(Error::InvalidRequest {
                    path: String::new(),
                    problem: RequestProblem::TooManyEntityTypes {
                        collection: D::NAME,
                        count: types.len(),
                        max: MAX_IN_OPERANDS,
                    },
                });
            }
            let constants = D::type_set_constants();
            match (types.is_empty(), T::TYPE_ATTR) {
                (false, Some(type_attr)) if constants.iter().all(|c| c.is_empty()) => {
                    let name = b.name(type_attr);
                    let values: Vec<String> =
                        types.iter().map(|t| b.value(AttributeValue::S((*t).to_owned()))).collect();
                    filters.push(format!("{name} IN ({})", values.join(", ")));
                }
                // Types with constant attributes: each type with its own constants.
                (false, Some(attr)) => {
                    let mut alternatives = Vec::with_capacity(types.len());
                    for (i, value) in types.iter().copied().enumerate() {
                        let held = constants.get(i).copied().unwrap_or_default();
                        let tag = TypeTag { attr, value };
                        alternatives.push(tags_equal(&mut b, Some(tag), held).unwrap_or_default());
                    }
                    filters.push(format!("(({}))", alternatives.join(") OR (")));
                }
                _ => {}
            }
        }
        if let Some(filter) = &self.filter {
            // The service refuses a filter on a key attribute of a multi-attribute index
            // being queried (the key condition is where such conditions go).
            if let Some(index) = key.index.filter(|i| i.is_multi()) {
                let mut scratch = ExprBuilder::default();
                filter.render(&mut scratch)?;
                let (names, _) = scratch.finish();
                let named = names.iter().flat_map(|n| n.values());
                let mut keys = super::attrs::AttrKey::index_attrs(index);
                if let Some(attr) = named.into_iter().find(|n| keys.any(|k| k == n.as_str())) {
                    return Err(Error::InvalidRequest {
                        path: attr.clone(),
                        problem: RequestProblem::FilterOnIndexKey { index: index.name },
                    });
                }
            }
            filters.push(format!("({})", filter.render(&mut b)?));
        }
        let filter_expr = (!filters.is_empty()).then(|| filters.join(" AND "));
        let range_check = key.range.clone().filter(|_| sk_attr.is_some());
        let mut key_attrs: Vec<&'static str> = vec![T::PK];
        key_attrs.extend(T::SK);
        if let Some(index) = key.index {
            if index.is_multi() {
                key_attrs.extend(super::attrs::AttrKey::index_attrs(index));
            } else {
                key_attrs.push(index.pk);
                key_attrs.extend(index.sk);
            }
        }
        key_attrs.sort_unstable();
        key_attrs.dedup();
        // The paths of `project`, or the attributes of a projecting collection.
        let rendered: Option<Vec<String>> = match (&self.projection, D::projection()) {
            (Some(paths), _) => Some(paths.iter().map(|p| b.path(p)).collect()),
            (None, Some(attrs)) => Some(attrs.iter().map(|a| b.name(a)).collect()),
            (None, None) => None,
        };
        let projection = rendered.map(|mut rendered| {
            // Keys are needed for the component check and to continue after an item.
            for attr in &key_attrs {
                let name = b.name(attr);
                if !rendered.contains(&name) {
                    rendered.push(name);
                }
            }
            rendered.join(", ")
        });
        for (kind, expression) in
            [("FilterExpression", &filter_expr), ("ProjectionExpression", &projection)]
        {
            crate::expr::check_expression(kind, expression.as_deref().unwrap_or(""))?;
        }
        let (names, values) = b.finish();
        Ok(Prepared {
            key_attrs,
            key_expr,
            filter_expr,
            projection,
            names,
            values,
            index: key.index.map(|i| i.name),
            pk_attr,
            sk_attr,
            range: range_check,
            empty: key.empty,
        })
    }
}

/// The filter that keeps the items of entity type `tag` (or that hold a constant).
pub(crate) fn type_equals(b: &mut ExprBuilder, tag: TypeTag) -> String {
    let name = b.name(tag.attr);
    let value = b.value(AttributeValue::S(tag.value.to_owned()));
    format!("{name} = {value}")
}

/// The filter that keeps the items holding `tag` and each of `constants`, joined by `AND`;
/// `None` when there is nothing to compare.
pub(crate) fn tags_equal(
    b: &mut ExprBuilder,
    tag: Option<TypeTag>,
    constants: &[TypeTag],
) -> Option<String> {
    let mut parts = tag.into_iter().chain(constants.iter().copied());
    let mut out = type_equals(b, parts.next()?);
    for part in parts {
        out.push_str(" AND ");
        out.push_str(&type_equals(b, part));
    }
    Some(out)
}

/// The filter that keeps `E`'s items as far as their attributes tell: its tag and its
/// constants (`None` for an entity told apart by its keys, without constants).
pub(crate) fn identity_filter<E: crate::model::Entity>(b: &mut ExprBuilder) -> Option<String> {
    tags_equal(b, E::IDENTITY.tag(), E::CONSTANTS)
}

pub(super) struct Prepared {
    /// The attributes of an `ExclusiveStartKey`: the table's keys and the index's.
    pub(super) key_attrs: Vec<&'static str>,
    pub(super) key_expr: String,
    pub(super) filter_expr: Option<String>,
    pub(super) projection: Option<String>,
    pub(super) names: Option<crate::expr::Names>,
    pub(super) values: Option<crate::expr::Values>,
    pub(super) index: Option<&'static str>,
    pub(super) pk_attr: &'static str,
    pub(super) sk_attr: Option<&'static str>,
    pub(super) range: Option<ComponentRange>,
    pub(super) empty: bool,
}

impl Prepared {
    /// The start key of a request that continues after `item`.
    pub(super) fn key_of(&self, item: &Item) -> Item {
        self.key_attrs
            .iter()
            .filter_map(|a| item.get(*a).map(|v| ((*a).to_owned(), v.clone())))
            .collect()
    }
}
