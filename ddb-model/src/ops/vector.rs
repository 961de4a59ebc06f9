//! Vector search: [`Nearest`], the `k` items of an entity whose vectors are nearest to a
//! query vector, through one `SearchVectors` request on a vector index of the table.

use crate::ops::startable::startable;
use std::collections::HashMap;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::AttributeValue;

use super::Running;
use super::retry::{self, Call, SendError};
use crate::db::Db;
use crate::error::{Capability, Error, VectorProblem, is_unknown_operation};
use crate::expr::{Attr, ValueArg};
use crate::model::{
    Entity, Table, VectorIndexDef, check_filter_value, check_vector, find_vector_index, from_item,
};
use crate::stats::Op;

/// The most results one search returns (the service's bound on `TopK`).
pub const MAX_TOP_K: usize = 100;

/// An entity found by a vector search, with its score: a distance for
/// [`Metric::Cosine`](crate::entity::Metric::Cosine) and [`Metric::Euclidean`](crate::entity::Metric::Euclidean)
/// (lower is nearer), a similarity for [`Metric::DotProduct`](crate::entity::Metric::DotProduct)
/// (higher is nearer).
#[derive(Debug, Clone, PartialEq)]
pub struct Scored<E> {
    /// The entity.
    pub entity: E,
    /// Its score against the query vector, as the service computed it.
    pub score: f64,
}

/// A vector search: the `k` items of `E` nearest to a vector, nearest first. Made by the
/// derive's `E::nearest(&db, k, &vector)` (`nearest_<index>` for each vector field when an
/// entity has several); `.await` it or call [`send`](Nearest::send).
///
/// Before sending, `k` must be 1 to [`MAX_TOP_K`] and the vector must have the index's
/// dimensions and finite elements ([`Error::InvalidVector`] otherwise). On a table with a
/// type attribute the index is partitioned by entity type, so the search reads `E`'s items
/// only and the `k` results are `E`'s nearest. Fewer than `k` come back when the index holds
/// fewer. The entities are whole: the search asks for the vector and every field (the
/// service leaves the vector out otherwise). Equal scores come back in no particular order.
///
/// [`filter`](Nearest::filter) narrows the search to the items whose attribute (one of the
/// index's `filters`) equals a value; the service filters before it takes the top `k`.
///
/// An endpoint without vector search (DynamoDB Local) is
/// [`Error::Unsupported`]; an index added to a live table that is still being
/// built is [`Error::VectorIndexBackfilling`]; other refusals of the service are
/// [`Error::Sdk`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Db, Entity, Table, local};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Table)]
/// #[table(name = "shop", vector(name = "by_look", attr = "look", dims = 3, metric = cosine))]
/// struct Shop;
///
/// #[derive(Entity, Serialize, Deserialize, Debug)]
/// #[entity(table = Shop, pk = "ITEM#<id>", sk = "ITEM")]
/// struct Item {
///     id: String,
///     #[vector(by_look)]
///     look: Vec<f32>,
/// }
///
/// let db: Db<Shop> = local::isolated_db().await?;
/// Item { id: "red".into(), look: vec![1.0, 0.0, 0.0] }.put(&db).await?;
/// Item { id: "pink".into(), look: vec![0.9, 0.3, 0.3] }.put(&db).await?;
/// Item { id: "blue".into(), look: vec![0.0, 0.0, 1.0] }.put(&db).await?;
///
/// let hits = Item::nearest(&db, 2, &[1.0, 0.1, 0.1]).await?;
/// let ids: Vec<&str> = hits.iter().map(|h| h.entity.id.as_str()).collect();
/// assert_eq!(ids, ["red", "pink"]);
/// assert!(hits[0].score <= hits[1].score); // cosine distances, nearest first
///
/// // Checked before sending.
/// assert!(Item::nearest(&db, 2, &[1.0, 0.0]).await.unwrap_err().is_invalid_input());
/// # Ok(()) }
/// ```
#[must_use = "an operation does nothing until it is awaited"]
pub struct Nearest<'a, E: Entity> {
    db: &'a Db<E::Table>,
    index: &'static str,
    fields: &'static [&'static str],
    k: usize,
    vector: Vec<f32>,
    filters: Vec<(&'static str, Result<AttributeValue, Error>)>,
    running: Running<'a, Result<Vec<Scored<E>>, Error>>,
}

/// The search of `E`'s vector index `index` (generated code): `fields` are the attributes of
/// `E`'s stored fields, which the search reads back.
#[doc(hidden)]
pub fn nearest<'a, E: Entity>(
    db: &'a Db<E::Table>,
    index: &'static str,
    fields: &'static [&'static str],
    k: usize,
    vector: &[f32],
) -> Nearest<'a, E> {
    Nearest {
        db,
        index,
        fields,
        k,
        vector: vector.to_vec(),
        filters: Vec::new(),
        running: Running::default(),
    }
}

impl<'a, E: Entity> Nearest<'a, E> {
    /// The vector index searched (`None` only for an index the table lacks, which the
    /// derive refuses at compile time).
    pub fn index(&self) -> Option<&'static VectorIndexDef> {
        find_vector_index::<E::Table>(self.index)
    }

    /// Only the items whose attribute `attr` equals `value`: `attr` must be one of the
    /// index's `filters` (declared with `#[table(vector(.., filters = ["category"]))]`), of
    /// the type declared there, filtered once per search ([`Error::InvalidVector`] before
    /// sending otherwise). Several filters must all hold. The service applies them while
    /// searching, so the `k` results are the nearest of the items that pass.
    pub fn filter<T, A>(mut self, attr: Attr<E, T, A>, value: impl ValueArg<T>) -> Self {
        let value = value
            .to_attribute_value()
            .map_err(|source| Error::Serialize { entity: attr.name().to_owned(), source });
        self.filters.push((attr.name(), value));
        self
    }

    /// Sends the request.
    pub async fn send(self) -> Result<Vec<Scored<E>>, Error> {
        let invalid =
            |index: &'static str, problem| Error::InvalidVector { entity: E::NAME, index, problem };
        crate::ops::tenant::unconfined(self.db, Op::SearchVectors, Some(self.index))?;
        let Some(def) = find_vector_index::<E::Table>(self.index) else {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: crate::error::RequestProblem::UnknownIndex {
                    index: self.index.to_owned(),
                },
            });
        };
        if self.k == 0 || self.k > MAX_TOP_K {
            return Err(invalid(def.name, VectorProblem::TopK { k: self.k, max: MAX_TOP_K }));
        }
        check_vector(&self.vector, def).map_err(|problem| invalid(def.name, problem))?;
        let mut conditions: Vec<(&'static str, AttributeValue)> = Vec::new();
        for (attr, value) in self.filters {
            let value = value?;
            let problem = |reason| VectorProblem::Filter { attr: attr.to_owned(), reason };
            let Some(filter) = def.filters.iter().find(|f| f.name == attr) else {
                return Err(invalid(def.name, problem("not one of the index's filters")));
            };
            if conditions.iter().any(|(a, _)| *a == attr) {
                return Err(invalid(def.name, problem("a search filters on an attribute once")));
            }
            check_filter_value(&value, filter).map_err(|p| invalid(def.name, p))?;
            conditions.push((attr, value));
        }
        let top_k = i32::try_from(self.k).unwrap_or(i32::MAX);

        // Every attribute the entity is read from: keys, tag, constants, bookkeeping, fields.
        let table_attrs = std::iter::once(<E::Table as Table>::PK)
            .chain(<E::Table as Table>::SK)
            .chain(E::IDENTITY.tag().map(|t| t.attr))
            .chain(E::CONSTANTS.iter().map(|c| c.attr));
        let mut names: Vec<&str> = conditions.iter().map(|(a, _)| *a).collect();
        for attr in table_attrs
            .chain(E::BOOKKEEPING_ATTRS.iter().copied())
            .chain(self.fields.iter().copied())
        {
            if !names.contains(&attr) {
                names.push(attr);
            }
        }
        let placeholder =
            |attr: &str| names.iter().position(|n| *n == attr).map(|i| format!("#a{i}"));
        let projection: Vec<String> = names.iter().filter_map(|n| placeholder(n)).collect();
        let mut request = self
            .db
            .client()
            .search_vectors()
            .table_name(self.db.table_name())
            .index_name(def.name)
            .top_k(top_k)
            .set_search_vector(Some(
                self.vector.iter().map(|v| AttributeValue::N(v.to_string())).collect(),
            ))
            .projection_expression(projection.join(", "));
        let mut condition: Vec<String> = Vec::new();
        for (i, (attr, value)) in conditions.into_iter().enumerate() {
            let name = placeholder(attr).unwrap_or_default();
            condition.push(format!("{name} = :f{i}"));
            request = request.expression_attribute_values(format!(":f{i}"), value);
        }
        if def.by_type {
            // The index is partitioned by the table's type attribute: name `E`'s partition.
            let tag = E::IDENTITY
                .tag()
                .filter(|t| Some(t.attr) == <E::Table as Table>::TYPE_ATTR)
                .ok_or_else(|| invalid(def.name, VectorProblem::NoTypeAttr))?;
            let name = placeholder(tag.attr).unwrap_or_default();
            condition.push(format!("{name} = :type"));
            request = request
                .expression_attribute_values(":type", AttributeValue::S(tag.value.to_owned()));
        }
        if !condition.is_empty() {
            request = request.search_condition_expression(condition.join(" AND "));
        }
        let names: HashMap<String, String> =
            names.iter().enumerate().map(|(i, n)| (format!("#a{i}"), (*n).to_owned())).collect();
        let request = request.set_expression_attribute_names(Some(names));

        let call = Call {
            op: Op::SearchVectors,
            index: Some(def.name),
            segment: None,
            entity: Some(E::NAME),
        };
        let out = match retry::send(self.db, call, request).await {
            Ok(out) => out,
            Err(err) => return Err(search_error(err, def.name)),
        };
        let mut found = Vec::with_capacity(out.search_results().len());
        // Of a re-keyed entity's item, the copy the phase reads: the other is left out.
        let copy = crate::ops::rekey::read_copy_of::<E, E::Table>(self.db);
        for result in out.search_results.into_iter().flatten() {
            let item = result.item.unwrap_or_default();
            if copy.is_some_and(|read| !read(&item)) {
                continue;
            }
            found.push(Scored { entity: from_item::<E>(item)?, score: result.score });
        }
        Ok(found)
    }
}

/// The start of the service's refusal to search an index that is still being built (it has
/// no error code of its own: a `ValidationException`).
const BACKFILLING: &str = "Cannot search backfilling vector index";

/// A failed search of `index` as its typed error: an endpoint without the operation is
/// [`Error::Unsupported`], an index still being built
/// [`Error::VectorIndexBackfilling`].
fn search_error(err: SendError, index: &'static str) -> Error {
    match err.into_service() {
        Ok(err) if is_unknown_operation(&err) => Error::Unsupported {
            capability: Capability::VectorSearch,
            operation: Op::SearchVectors,
            source: Some(Box::new(err)),
        },
        Ok(err) if err.message().is_some_and(|m| m.starts_with(BACKFILLING)) => {
            Error::VectorIndexBackfilling { index, source: Box::new(err) }
        }
        Ok(err) => Error::service(Op::SearchVectors, err),
        Err(e) => e,
    }
}

startable!(
    ['a, E: Entity] Nearest<'a, E> => Result<Vec<Scored<E>>, Error>,
    |n| nearest(n.db, n.index, n.fields, n.k, &[]),
    send
);
