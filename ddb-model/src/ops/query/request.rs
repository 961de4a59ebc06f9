//! One `Query` request: a page read with the prepared query, its `Limit`, projection and
//! expiry filter chosen for what the caller reads, and the items checked on the way back.

use super::prepare::Prepared;
use super::*;

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
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
        // The copies of a re-keyed entity's items are told apart by their keys.
        let copies = D::REKEYED;
        let server_count =
            read == Read::Count && p.range.is_none() && item_filter.is_none() && !copies;
        let mut names = p.names.clone();
        let mut values = p.values.clone();
        let filter_expr = match expiry {
            Some((attr, now)) => {
                let filter = p.filter_expr.clone();
                Some(crate::ops::and_expiry_filter(filter, &mut names, &mut values, attr, now))
            }
            None => p.filter_expr.clone(),
        };
        // Telling items apart by what else they hold reads them whole (or as projected).
        let whole = (item_filter.is_some() || copies) && D::ITEM_FILTER_READS_ITEM;
        let projection = if count && !server_count && p.projection.is_some() {
            // A projection holds the keys already (and its names are in use).
            p.projection.clone()
        } else if count && !server_count && !whole {
            let names = names.get_or_insert_with(Default::default);
            let mut keys = Vec::new();
            for (i, attr) in p.key_attrs.iter().enumerate() {
                names.insert(format!("#key{i}"), (*attr).to_owned());
                keys.push(format!("#key{i}"));
            }
            // Telling a keys-identified entity's items apart reads the type attribute too.
            // Reading keys to act on them reads it too.
            let typed = item_filter.is_some() || copies || read == Read::Keys;
            if let (true, Some(attr)) = (typed, T::TYPE_ATTR) {
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
        let call = crate::ops::retry::Call {
            op: Op::Query,
            index: p.index,
            segment: None,
            entity: Some(self.entity),
        };
        let out = crate::ops::retry::send(self.db, call, request).await?;
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
        // Of a re-keyed entity's item, the copy the handle's phase reads (the other is left
        // as a filter leaves an item: the page holds fewer).
        if copies {
            let before = items.len();
            items.retain(|item| {
                D::copies_of(item).is_none_or(|c| crate::ops::rekey::read_copy(self.db, c)(item))
            });
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

pub(super) struct Output {
    pub(super) items: Vec<Item>,
    pub(super) count: usize,
    pub(super) next: Option<Item>,
    /// The service evaluated items that it (or the component check) did not return.
    pub(super) dropped: bool,
}
