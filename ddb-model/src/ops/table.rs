//! Table administration: [`Db::create_table`] (create as the [`Table`] declares it, or check
//! an existing table against the declaration) and [`Db::delete_table`].

use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, IndexStatus, KeySchemaElement, KeyType,
    Projection, ProjectionType, ScalarAttributeType, SearchSchemaElement, SearchSchemaElementType,
    TableStatus, VectorAttributeDefinition, VectorDistanceFunction, VectorIndex,
};

use super::retry;
use crate::db::Db;
use crate::error::Error;
use crate::model::{AttrKind, IndexDef, Metric, Table, VectorIndexDef};
use crate::stats::Op;

/// How long [`Db::create_table`] waits for the table to become active.
const ACTIVE_TIMEOUT: Duration = Duration::from_secs(120);

fn key_schema(pk: &str, sk: Option<&str>) -> Result<Vec<KeySchemaElement>, Error> {
    let mut schema = vec![element(pk, KeyType::Hash)?];
    if let Some(sk) = sk {
        schema.push(element(sk, KeyType::Range)?);
    }
    Ok(schema)
}

fn element(name: &str, key_type: KeyType) -> Result<KeySchemaElement, Error> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .map_err(|e| Error::InvalidExpression(e.to_string()))
}

fn attribute(name: &str, kind: AttrKind) -> Result<AttributeDefinition, Error> {
    let kind = match kind {
        AttrKind::S => ScalarAttributeType::S,
        AttrKind::N => ScalarAttributeType::N,
        AttrKind::B => ScalarAttributeType::B,
    };
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(kind)
        .build()
        .map_err(|e| Error::InvalidExpression(e.to_string()))
}

/// The key schema of an index: one attribute per key, or the typed attributes of a
/// multi-attribute key in order (every partition attribute `HASH`, every sort attribute
/// `RANGE`).
fn index_schema(index: &IndexDef) -> Result<Vec<KeySchemaElement>, Error> {
    if !index.is_multi() {
        return key_schema(index.pk, index.sk);
    }
    let hash = index.pk_attrs.iter().map(|a| element(a.name, KeyType::Hash));
    hash.chain(index.sk_attrs.iter().map(|a| element(a.name, KeyType::Range))).collect()
}

/// Every attribute the table's keys and indexes are made of, with its type, each once. Two
/// declarations of one attribute with different types (the derive refuses them) keep the
/// first.
fn attribute_definitions<T: Table>() -> Vec<(&'static str, AttrKind)> {
    let mut attributes: Vec<(&'static str, AttrKind)> = vec![(T::PK, AttrKind::S)];
    attributes.extend(T::SK.map(|sk| (sk, AttrKind::S)));
    for index in T::INDEXES {
        if index.is_multi() {
            attributes
                .extend(index.pk_attrs.iter().chain(index.sk_attrs).map(|a| (a.name, a.kind)));
        } else {
            attributes.push((index.pk, AttrKind::S));
            attributes.extend(index.sk.map(|sk| (sk, AttrKind::S)));
        }
    }
    // The type attribute partitions the vector indexes that search one entity type; their
    // filter attributes are typed.
    if let Some(type_attr) = T::TYPE_ATTR
        && T::VECTOR_INDEXES.iter().any(|v| v.by_type)
    {
        attributes.push((type_attr, AttrKind::S));
    }
    for index in T::VECTOR_INDEXES {
        attributes.extend(index.filters.iter().map(|a| (a.name, a.kind)));
    }
    let mut seen = Vec::new();
    attributes.retain(|(name, _)| {
        let first = !seen.contains(name);
        seen.push(*name);
        first
    });
    attributes.sort_unstable_by_key(|(name, _)| *name);
    attributes
}

/// The vector index as `CreateTable` takes it: every attribute projected, partitioned by the
/// table's type attribute when `by_type`, and its filter attributes.
fn vector_index<T: Table>(index: &VectorIndexDef) -> Result<VectorIndex, Error> {
    let invalid = |e: aws_sdk_dynamodb::error::BuildError| Error::InvalidExpression(e.to_string());
    let attribute =
        VectorAttributeDefinition::builder().attribute_name(index.attr).build().map_err(invalid)?;
    let mut built = VectorIndex::builder()
        .index_name(index.name)
        .vector_attribute(attribute)
        .dimensions(i64::from(index.dims))
        .distance_function(distance_function(index.metric))
        .projection(Projection::builder().projection_type(ProjectionType::All).build());
    if let (true, Some(type_attr)) = (index.by_type, T::TYPE_ATTR) {
        let hash = SearchSchemaElement::builder()
            .attribute_name(type_attr)
            .search_schema_element_type(SearchSchemaElementType::Hash)
            .build()
            .map_err(invalid)?;
        built = built.search_schema(hash);
    }
    for filter in index.filters {
        let element = SearchSchemaElement::builder()
            .attribute_name(filter.name)
            .search_schema_element_type(SearchSchemaElementType::InlineFilter)
            .build()
            .map_err(invalid)?;
        built = built.search_schema(element);
    }
    built.build().map_err(invalid)
}

fn distance_function(metric: Metric) -> VectorDistanceFunction {
    match metric {
        Metric::Cosine => VectorDistanceFunction::Cosine,
        Metric::Euclidean => VectorDistanceFunction::Euclidean,
        Metric::DotProduct => VectorDistanceFunction::DotProduct,
    }
}

impl<T: Table> Db<T> {
    /// Creates the table as `T` declares it (on-demand billing, every index projecting all
    /// attributes) and waits until it and its indexes are active.
    ///
    /// Idempotent: when the table exists already, its key schema and indexes are compared with
    /// the definition ([`Error::TableMismatch`] if they differ) and the call waits for it to be
    /// active. Meant for tests, examples and bootstrapping; production tables usually come
    /// from infrastructure code.
    pub async fn create_table(&self) -> Result<(), Error> {
        let mut request = self
            .client()
            .create_table()
            .table_name(self.table_name())
            .billing_mode(BillingMode::PayPerRequest)
            .set_key_schema(Some(key_schema(T::PK, T::SK)?));
        for (name, kind) in attribute_definitions::<T>() {
            request = request.attribute_definitions(attribute(name, kind)?);
        }
        for index in T::INDEXES {
            let gsi = GlobalSecondaryIndex::builder()
                .index_name(index.name)
                .set_key_schema(Some(index_schema(index)?))
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()
                .map_err(|e| Error::InvalidExpression(e.to_string()))?;
            request = request.global_secondary_indexes(gsi);
        }
        for index in T::VECTOR_INDEXES {
            request = request.vector_indexes(vector_index::<T>(index)?);
        }

        let sent = retry::send(self, Op::CreateTable, || request.send()).await;
        let created = match sent {
            Ok(_) => true,
            Err(err) => match err.into_service()? {
                aws_sdk_dynamodb::Error::ResourceInUseException(_) => false,
                err => {
                    // An endpoint without vector search may refuse the request for what
                    // vector indexes need (DynamoDB Local: the type attribute's definition):
                    // ask it whether it has the operation at all.
                    if !T::VECTOR_INDEXES.is_empty()
                        && let Some(unsupported) = self.probe_vector_search().await
                    {
                        return Err(unsupported);
                    }
                    return Err(Error::service(Op::CreateTable, err));
                }
            },
        };
        self.wait_active(created).await
    }

    /// `Some(VectorSearchUnsupported)` when the endpoint answers a `SearchVectors` with
    /// `UnknownOperationException` (one request).
    async fn probe_vector_search(&self) -> Option<Error> {
        let index = T::VECTOR_INDEXES.first()?;
        let request = self
            .client()
            .search_vectors()
            .table_name(self.table_name())
            .index_name(index.name)
            .top_k(1)
            .set_search_vector(Some(vec![
                aws_sdk_dynamodb::types::AttributeValue::N(
                    "0".to_owned()
                );
                index.dims as usize
            ]));
        match retry::send(self, Op::SearchVectors, || request.send()).await {
            Err(err) => match err.into_service() {
                Ok(err) if super::is_unknown_operation(&err) => {
                    Some(Error::VectorSearchUnsupported {
                        operation: Op::SearchVectors,
                        source: Some(Box::new(err)),
                    })
                }
                _ => None,
            },
            Ok(_) => None,
        }
    }

    /// The table's item count as `DescribeTable` reports it: an estimate, which DynamoDB
    /// updates about every six hours (`None` when it reports none). One request. For
    /// progress bars ([`Migrate`](crate::ops::Migrate) through the tool's
    /// [`SchemaMigration`](crate::tooling::cli::SchemaMigration)), not for counting.
    pub async fn item_count_estimate(&self) -> Result<Option<u64>, Error> {
        let request = self.client().describe_table().table_name(self.table_name());
        let out = retry::send(self, Op::DescribeTable, || request.send()).await?;
        Ok(out.table().and_then(|t| t.item_count()).and_then(|n| u64::try_from(n).ok()))
    }

    /// Deletes the table (tests and tooling). A missing table is not an error.
    pub async fn delete_table(&self) -> Result<(), Error> {
        let request = self.client().delete_table().table_name(self.table_name());
        match retry::send(self, Op::DeleteTable, || request.send()).await {
            Ok(_) => Ok(()),
            Err(err) => match err.into_service()? {
                aws_sdk_dynamodb::Error::ResourceNotFoundException(_) => Ok(()),
                err => Err(Error::service(Op::DeleteTable, err)),
            },
        }
    }

    /// `created`: this call created the table (a vector index missing from it was then
    /// dropped by the endpoint, not by someone else).
    async fn wait_active(&self, created: bool) -> Result<(), Error> {
        let started = Instant::now();
        let mut delay = Duration::from_millis(20);
        loop {
            let request = self.client().describe_table().table_name(self.table_name());
            let out = retry::send(self, Op::DescribeTable, || request.send()).await?;
            if let Some(table) = out.table() {
                if created && table.vector_indexes().len() < T::VECTOR_INDEXES.len() {
                    return Err(Error::VectorSearchUnsupported {
                        operation: Op::CreateTable,
                        source: None,
                    });
                }
                self.check_layout(table)?;
                let indexes_active = table
                    .global_secondary_indexes()
                    .iter()
                    .all(|i| i.index_status().is_none_or(|s| *s == IndexStatus::Active))
                    && table
                        .vector_indexes()
                        .iter()
                        .all(|i| i.index_status().is_none_or(|s| *s == IndexStatus::Active));
                if table.table_status() == Some(&TableStatus::Active) && indexes_active {
                    return Ok(());
                }
            }
            if started.elapsed() > ACTIVE_TIMEOUT {
                return Err(Error::TableNotActive {
                    table: self.table_name().to_owned(),
                    seconds: ACTIVE_TIMEOUT.as_secs(),
                });
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(500));
        }
    }

    fn check_layout(&self, table: &aws_sdk_dynamodb::types::TableDescription) -> Result<(), Error> {
        let mismatch =
            |reason: String| Error::TableMismatch { table: self.table_name().to_owned(), reason };
        let schema_of = |schema: &[KeySchemaElement]| {
            let mut pk = None;
            let mut sk = None;
            for e in schema {
                match e.key_type() {
                    KeyType::Hash => pk = Some(e.attribute_name().to_owned()),
                    KeyType::Range => sk = Some(e.attribute_name().to_owned()),
                    _ => {}
                }
            }
            (pk, sk)
        };
        // Every key attribute with its role, in order: what a multi-attribute key compares.
        let elements = |schema: &[KeySchemaElement]| -> Vec<(String, bool)> {
            schema
                .iter()
                .map(|e| (e.attribute_name().to_owned(), *e.key_type() == KeyType::Hash))
                .collect()
        };
        let (pk, sk) = schema_of(table.key_schema());
        if pk.as_deref() != Some(T::PK) || sk.as_deref() != T::SK {
            return Err(mismatch(format!(
                "key schema is ({pk:?}, {sk:?}), the definition says ({:?}, {:?})",
                T::PK,
                T::SK
            )));
        }
        for index in T::INDEXES {
            let found = table
                .global_secondary_indexes()
                .iter()
                .find(|g| g.index_name() == Some(index.name));
            let Some(found) = found else {
                return Err(mismatch(format!("index `{}` is missing", index.name)));
            };
            if index.is_multi() {
                let declared: Vec<(String, bool)> = index
                    .pk_attrs
                    .iter()
                    .map(|a| (a.name.to_owned(), true))
                    .chain(index.sk_attrs.iter().map(|a| (a.name.to_owned(), false)))
                    .collect();
                let present = elements(found.key_schema());
                if present != declared {
                    return Err(mismatch(format!(
                        "index `{}` is keyed by {present:?}, the definition says {declared:?} (attribute, is partition key)",
                        index.name
                    )));
                }
                continue;
            }
            let (ipk, isk) = schema_of(found.key_schema());
            if elements(found.key_schema()).len() > 2
                || ipk.as_deref() != Some(index.pk)
                || isk.as_deref() != index.sk
            {
                return Err(mismatch(format!(
                    "index `{}` is keyed by ({ipk:?}, {isk:?}), the definition says ({:?}, {:?})",
                    index.name, index.pk, index.sk
                )));
            }
        }
        for index in T::VECTOR_INDEXES {
            let found = table.vector_indexes().iter().find(|v| v.index_name() == Some(index.name));
            let Some(found) = found else {
                return Err(mismatch(format!("vector index `{}` is missing", index.name)));
            };
            let present = (
                found.vector_attribute().map(|a| a.attribute_name()),
                found.dimensions(),
                found.distance_function().map(VectorDistanceFunction::as_str),
                found
                    .search_schema()
                    .iter()
                    .map(|e| (e.attribute_name(), e.search_schema_element_type().as_str()))
                    .collect::<Vec<_>>(),
            );
            let mut schema = match (index.by_type, T::TYPE_ATTR) {
                (true, Some(type_attr)) => vec![(type_attr, "HASH")],
                _ => Vec::new(),
            };
            schema.extend(index.filters.iter().map(|f| (f.name, "INLINE_FILTER")));
            let declared = (
                Some(index.attr),
                Some(i64::from(index.dims)),
                Some(index.metric.as_str()),
                schema,
            );
            if present != declared {
                return Err(mismatch(format!(
                    "vector index `{}` is {present:?}, the definition says {declared:?} (attribute, dimensions, metric, search schema)",
                    index.name
                )));
            }
        }
        Ok(())
    }
}
