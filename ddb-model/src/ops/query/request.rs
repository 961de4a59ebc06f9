//! One `Query` request: the query rendered for the wire, the cursor checked, a page read.

use super::*;
use crate::error::RequestProblem;

/// Most values of one `IN` comparison.
const MAX_IN_OPERANDS: usize = 100;

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
    pub(super) fn check_cursor(&self, p: &Prepared, cursor: &Cursor) -> Result<Item, Error> {
        let key = cursor.decode(self.binding(p))?;
        let text = |attr: &str| crate::model::string_attr(&key, attr);
        let expected = &p.key_attrs;
        let mut present: Vec<&str> = key.keys().map(String::as_str).collect();
        present.sort_unstable();
        let cond = self.key.as_ref().map_err(|_| invalid("the query is invalid"))?;
        let inside = present == *expected
            && match &cond.attrs {
                Some(attrs) => attrs.admits(&key),
                None => {
                    text(p.pk_attr) == Some(cond.pk.as_str())
                        && cond.admits(p.sk_attr.and_then(text))
                }
            };
        if inside { Ok(key) } else { Err(invalid("the cursor points outside the query")) }
    }

    /// What a cursor of this query is bound to: a fingerprint of the table, index, key
    /// condition, output type, filter, projection, order and every name and value. Computed
    /// only where a cursor is made or checked, not for every query.
    pub(super) fn binding(&self, p: &Prepared) -> u64 {
        // `p` exists only for a valid key (`prepare` refuses the others).
        let Ok(key) = self.key.as_ref() else {
            return 0;
        };
        let mut fp = Fnv::new()
            .field(self.db.table_name().as_bytes())
            .field(p.index.unwrap_or("").as_bytes())
            .field(key.pk.as_bytes())
            .field(format!("{:?}", key.sk).as_bytes())
            .field(format!("{:?}", key.range).as_bytes())
            .field(format!("{:?}", key.attrs).as_bytes())
            .field(D::NAME.as_bytes())
            .field(p.filter_expr.as_deref().unwrap_or("").as_bytes())
            .field(p.projection.as_deref().unwrap_or("").as_bytes())
            .field(&[u8::from(self.reverse)]);
        if let Some(values) = &p.values {
            let mut sorted: Vec<_> = values.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (placeholder, value) in sorted {
                fp = fp.field(placeholder.as_bytes());
                fp = canonical(fp, value);
            }
        }
        let mut names_sorted: Vec<_> = p.names.iter().flatten().collect();
        names_sorted.sort();
        for (placeholder, name) in names_sorted {
            fp = fp.field(placeholder.as_bytes()).field(name.as_bytes());
        }
        fp.finish()
    }

    pub(super) fn prepare(&self) -> Result<Prepared, Error> {
        let key = self.key.as_ref().map_err(|e| e.to_error(self.entity))?;
        let (pk_attr, sk_attr) = match key.index {
            Some(index) => (index.pk, index.sk),
            None => (T::PK, T::SK),
        };
        let mut b = ExprBuilder::default();
        let mut key_expr = match &key.attrs {
            // Values checked as the condition was built.
            Some(attrs) => attrs.render(&mut b),
            None => {
                key.validate(self.entity, pk_attr)?;
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
        if let Some(tag) = D::type_filter() {
            let name = b.name(tag.attr);
            let value = b.value(AttributeValue::S(tag.value.to_owned()));
            filters.push(format!("{name} = {value}"));
        } else if let Some(types) = D::type_set() {
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
            if let (false, Some(type_attr)) = (types.is_empty(), T::TYPE_ATTR) {
                let name = b.name(type_attr);
                let values: Vec<String> =
                    types.iter().map(|t| b.value(AttributeValue::S((*t).to_owned()))).collect();
                filters.push(format!("{name} IN ({})", values.join(", ")));
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

    pub(super) async fn request(
        &self,
        p: &Prepared,
        start: Option<Item>,
        remaining: Option<usize>,
        read: Read,
        widen: bool,
    ) -> Result<Output, Error> {
        let count = read != Read::Items;
        // DynamoDB's `Limit` counts evaluated items. Without a filter every evaluated item is
        // returned, so asking for what is missing never overshoots. With one, asking for
        // only what is missing would take many small requests: ask for full pages and cut
        // the result, starting the next request after the last item kept. The entity-type
        // filter drops items only where other entity types share the key range: it widens
        // the requests once it has dropped something (`widen`).
        // Items of a keys-identified entity are told apart here, like the type filter's they
        // widen the requests once one was dropped.
        let item_filter = D::item_filter();
        // Expired items are filtered by the service; the clock is read for each request, so
        // the filter is not part of the prepared query (nor of its cursors).
        let expiry =
            if self.include_expired { None } else { self.db.expiry_cutoff_of(D::expiry_attr()) };
        let filtered = widen || self.filter.is_some() || p.range.is_some() || expiry.is_some();
        let remaining32 = remaining.map(|r| u32::try_from(r).unwrap_or(u32::MAX));
        let limit = match (self.page_size, remaining32) {
            (Some(size), Some(r)) if !filtered => Some(size.min(r)),
            (Some(size), _) => Some(size),
            (None, Some(r)) if !filtered => Some(r),
            (None, _) => None,
        };
        let limit = limit.map(|l| i32::try_from(l.max(1)).unwrap_or(i32::MAX));
        // Counting with a component range reads the sort keys and checks them here.
        let server_count = read == Read::Count && p.range.is_none() && item_filter.is_none();
        let mut names = p.names.clone();
        let mut values = p.values.clone();
        let filter_expr = match expiry {
            Some((attr, now)) => {
                let clause = crate::ops::expiry_filter(
                    names.get_or_insert_with(Default::default),
                    values.get_or_insert_with(Default::default),
                    attr,
                    now,
                );
                Some(match &p.filter_expr {
                    Some(f) => format!("{f} AND {clause}"),
                    None => clause,
                })
            }
            None => p.filter_expr.clone(),
        };
        let projection = if count && !server_count && p.projection.is_some() {
            // A projection holds the keys already (and its names are in use).
            p.projection.clone()
        } else if count && !server_count {
            let names = names.get_or_insert_with(Default::default);
            let mut keys = Vec::new();
            for (i, attr) in p.key_attrs.iter().enumerate() {
                names.insert(format!("#key{i}"), (*attr).to_owned());
                keys.push(format!("#key{i}"));
            }
            // Telling a keys-identified entity's items apart reads the type attribute too.
            // Reading keys to act on them reads it too.
            if let (true, Some(attr)) = (item_filter.is_some() || read == Read::Keys, T::TYPE_ATTR)
            {
                names.insert("#keyt".to_owned(), attr.to_owned());
                keys.push("#keyt".to_owned());
            }
            Some(keys.join(", "))
        } else {
            p.projection.clone()
        };
        let select = if server_count {
            Some(Select::Count)
        } else if projection.is_some() {
            Some(Select::SpecificAttributes)
        } else {
            None
        };
        let request = self
            .db
            .client()
            .query()
            .table_name(self.db.table_name())
            .set_index_name(p.index.map(str::to_owned))
            .key_condition_expression(&p.key_expr)
            .set_filter_expression(filter_expr)
            .set_projection_expression(projection)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .set_exclusive_start_key(start)
            .set_limit(limit)
            .set_select(select)
            .set_scan_index_forward(self.reverse.then_some(false))
            .set_consistent_read(self.consistent.then_some(true))
            .set_return_consumed_capacity(self.db.capacity_mode());
        let call = crate::ops::retry::Call { op: Op::Query, index: p.index, segment: None };
        let out = crate::ops::retry::send(self.db, call, || request.send()).await?;
        let mut items = out.items.unwrap_or_default();
        let mut dropped = out.scanned_count > out.count;
        if let (Some(range), Some(sk)) = (&p.range, p.sk_attr) {
            let before = items.len();
            items.retain(|item| match item.get(sk) {
                Some(AttributeValue::S(s)) => range.contains(s.as_str()),
                _ => false,
            });
            dropped |= items.len() < before;
        }
        if let Some(is_entity_item) = item_filter {
            let before = items.len();
            items.retain(is_entity_item);
            dropped |= items.len() < before;
        }
        let mut next = out.last_evaluated_key;
        if let Some(r) = remaining
            && items.len() > r
        {
            items.truncate(r);
            next = items.last().map(|item| p.key_of(item));
        }
        let count =
            if server_count { usize::try_from(out.count).unwrap_or(0) } else { items.len() };
        Ok(Output { items, count, next, dropped })
    }
}

/// What a request reads of the items it finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Read {
    /// The items (or the query's projection).
    Items,
    /// Their number: `Select = COUNT` where the service can count alone, else their keys.
    Count,
    /// Their keys and type attribute.
    Keys,
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

pub(super) struct Output {
    pub(super) items: Vec<Item>,
    pub(super) count: usize,
    pub(super) next: Option<Item>,
    /// The service evaluated items that it (or the component check) did not return.
    pub(super) dropped: bool,
}

/// Adds a canonical encoding of `v` to the fingerprint.
pub(super) fn canonical(fp: Fnv, v: &AttributeValue) -> Fnv {
    match v {
        AttributeValue::S(s) => fp.field(b"S").field(s.as_bytes()),
        AttributeValue::N(n) => fp.field(b"N").field(n.as_bytes()),
        AttributeValue::B(b) => fp.field(b"B").field(b.as_ref()),
        AttributeValue::Bool(b) => fp.field(b"BOOL").field(&[u8::from(*b)]),
        AttributeValue::Null(_) => fp.field(b"NULL"),
        AttributeValue::Ss(v) | AttributeValue::Ns(v) => {
            v.iter().fold(fp.field(b"SET"), |fp, s| fp.field(s.as_bytes()))
        }
        AttributeValue::Bs(v) => v.iter().fold(fp.field(b"BS"), |fp, b| fp.field(b.as_ref())),
        AttributeValue::L(v) => v.iter().fold(fp.field(b"L"), canonical),
        AttributeValue::M(m) => {
            let mut entries: Vec<_> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            entries
                .into_iter()
                .fold(fp.field(b"M"), |fp, (k, v)| canonical(fp.field(k.as_bytes()), v))
        }
        _ => fp.field(b"?"),
    }
}
