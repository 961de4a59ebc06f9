//! Table administration: [`Db::create_table`] (create as the [`Table`] declares it, or check
//! an existing table against the declaration) and [`Db::delete_table`].

use std::time::Instant;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, IndexStatus, KeySchemaElement, KeyType,
    Projection, ProjectionType, ScalarAttributeType, SearchSchemaElement, SearchSchemaElementType,
    TableStatus, VectorAttributeDefinition, VectorDistanceFunction, VectorIndex,
};

use super::retry::{self, TABLE_ACTIVE};
use super::{BoxFuture, Running, Startable, builder_future};
use crate::db::Db;
use crate::error::{Error, RequestProblem};
use crate::model::{AttrKind, IndexDef, Metric, Table, VectorIndexDef};
use crate::stats::Op;

/// The least warm throughput the service accepts when creating a table or index, in read
/// units per second: what an on-demand table can serve from the start anyway.
pub const MIN_WARM_READ_UNITS: i64 = 12_000;
/// The least warm throughput the service accepts when creating a table or index, in write
/// units per second.
pub const MIN_WARM_WRITE_UNITS: i64 = 4_000;

/// Warm throughput: the read and write units per second a new table (or index) serves at
/// once, without scaling up first (for a launch or a migration). Either may be left out.
/// Below [`MIN_WARM_READ_UNITS`] / [`MIN_WARM_WRITE_UNITS`] is refused before sending; the
/// maximum is an account quota the service checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WarmThroughput {
    /// Read units per second.
    pub read_units_per_second: Option<i64>,
    /// Write units per second.
    pub write_units_per_second: Option<i64>,
}

impl WarmThroughput {
    /// `read` and `write` units per second.
    pub const fn new(read: i64, write: i64) -> WarmThroughput {
        WarmThroughput { read_units_per_second: Some(read), write_units_per_second: Some(write) }
    }
}

/// The most request units per second an on-demand table (or index) may consume: requests
/// beyond it are throttled (`ThrottleLimit::MaxOnDemand`), which caps the bill. Either may
/// be left out (no maximum). At least 1 each; the maximum is an account quota the service
/// checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OnDemandMax {
    /// Read request units per second.
    pub max_read_request_units: Option<i64>,
    /// Write request units per second.
    pub max_write_request_units: Option<i64>,
}

impl OnDemandMax {
    /// At most `read` and `write` request units per second.
    pub const fn new(read: i64, write: i64) -> OnDemandMax {
        OnDemandMax { max_read_request_units: Some(read), max_write_request_units: Some(write) }
    }
}

/// What [`Db::create_table`] sets on a table it creates, besides its layout: deletion
/// protection, warm throughput and on-demand maxima, for the table and its indexes. An
/// existing table keeps its own (they are operations settings, changed with `UpdateTable`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// The table cannot be deleted until this is turned off.
    pub deletion_protection: bool,
    /// The table's warm throughput.
    pub warm_throughput: Option<WarmThroughput>,
    /// The table's on-demand maximum.
    pub max_on_demand: Option<OnDemandMax>,
    /// Per index (by name): its warm throughput and on-demand maximum.
    pub indexes: Vec<IndexOptions>,
}

/// The options of one index in [`TableOptions`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexOptions {
    /// The index name, one the table declares.
    pub name: String,
    /// Its warm throughput.
    pub warm_throughput: Option<WarmThroughput>,
    /// Its on-demand maximum.
    pub max_on_demand: Option<OnDemandMax>,
}

impl TableOptions {
    /// Changes the options of index `name` with `change` (added when it has none yet).
    fn set_index(&mut self, name: &str, change: impl FnOnce(&mut IndexOptions)) {
        match self.indexes.iter_mut().find(|i| i.name == name) {
            Some(index) => change(index),
            None => {
                let mut index = IndexOptions { name: name.to_owned(), ..IndexOptions::default() };
                change(&mut index);
                self.indexes.push(index);
            }
        }
    }

    /// Checks the options against the service's minimums and the table's indexes.
    pub fn validate<T: Table>(&self) -> Result<(), Error> {
        fn at_least(path: String, value: Option<i64>, min: i64) -> Result<(), Error> {
            match value {
                Some(value) if value < min => Err(Error::InvalidRequest {
                    path,
                    problem: RequestProblem::BelowMinimum { value, min },
                }),
                _ => Ok(()),
            }
        }
        let check = |at: &str, warm: &Option<WarmThroughput>, max: &Option<OnDemandMax>| {
            if let Some(w) = warm {
                let read = format!("{at}WarmThroughput.ReadUnitsPerSecond");
                at_least(read, w.read_units_per_second, MIN_WARM_READ_UNITS)?;
                let write = format!("{at}WarmThroughput.WriteUnitsPerSecond");
                at_least(write, w.write_units_per_second, MIN_WARM_WRITE_UNITS)?;
            }
            if let Some(m) = max {
                let read = format!("{at}OnDemandThroughput.MaxReadRequestUnits");
                at_least(read, m.max_read_request_units, 1)?;
                let write = format!("{at}OnDemandThroughput.MaxWriteRequestUnits");
                at_least(write, m.max_write_request_units, 1)?;
            }
            Ok::<(), Error>(())
        };
        check("", &self.warm_throughput, &self.max_on_demand)?;
        for index in &self.indexes {
            if crate::model::find_index::<T>(&index.name).is_none() {
                return Err(Error::InvalidRequest {
                    path: String::new(),
                    problem: RequestProblem::UnknownIndex { index: index.name.clone() },
                });
            }
            let at = format!("GlobalSecondaryIndexes[{}].", index.name);
            check(&at, &index.warm_throughput, &index.max_on_demand)?;
        }
        Ok(())
    }

    fn index(&self, name: &str) -> Option<&IndexOptions> {
        self.indexes.iter().find(|i| i.name == name)
    }
}

fn warm(w: &WarmThroughput) -> Option<aws_sdk_dynamodb::types::WarmThroughput> {
    (w.read_units_per_second.is_some() || w.write_units_per_second.is_some()).then(|| {
        aws_sdk_dynamodb::types::WarmThroughput::builder()
            .set_read_units_per_second(w.read_units_per_second)
            .set_write_units_per_second(w.write_units_per_second)
            .build()
    })
}

fn on_demand(m: &OnDemandMax) -> Option<aws_sdk_dynamodb::types::OnDemandThroughput> {
    (m.max_read_request_units.is_some() || m.max_write_request_units.is_some()).then(|| {
        aws_sdk_dynamodb::types::OnDemandThroughput::builder()
            .set_max_read_request_units(m.max_read_request_units)
            .set_max_write_request_units(m.max_write_request_units)
            .build()
    })
}

/// Creates the table (see [`Db::create_table`]); `.await` it, after setting options.
///
/// Options apply when the table is created. Why a builder rather than `#[table(..)]`:
/// they are operations settings that differ per stage (protection and warm throughput in
/// production, neither in tests) on one model.
#[must_use = "an operation does nothing until it is awaited"]
pub struct CreateTable<'a, T: Table> {
    db: &'a Db<T>,
    options: TableOptions,
    running: Running<'a, Result<(), Error>>,
}

impl<'a, T: Table> CreateTable<'a, T> {
    /// Turns deletion protection on (or off): `DeleteTable` fails until it is turned off.
    pub fn deletion_protection(mut self, on: bool) -> Self {
        self.options.deletion_protection = on;
        self
    }

    /// The table's warm throughput (at least 12,000 reads and 4,000 writes per second).
    pub fn warm_throughput(mut self, warm: WarmThroughput) -> Self {
        self.options.warm_throughput = Some(warm);
        self
    }

    /// The table's on-demand maximum (at least 1 each).
    pub fn max_on_demand(mut self, max: OnDemandMax) -> Self {
        self.options.max_on_demand = Some(max);
        self
    }

    /// The warm throughput of index `name` (one the table declares).
    pub fn index_warm_throughput(mut self, name: &str, warm: WarmThroughput) -> Self {
        self.options.set_index(name, |i| i.warm_throughput = Some(warm));
        self
    }

    /// The on-demand maximum of index `name` (one the table declares).
    pub fn index_max_on_demand(mut self, name: &str, max: OnDemandMax) -> Self {
        self.options.set_index(name, |i| i.max_on_demand = Some(max));
        self
    }

    /// Every option at once (the tooling CLI's flags).
    pub fn options(mut self, options: TableOptions) -> Self {
        self.options = options;
        self
    }

    /// Sends the requests.
    pub async fn send(self) -> Result<(), Error> {
        self.db.create_table_with(&self.options).await
    }
}

impl<'a, T: Table> Startable<'a> for CreateTable<'a, T> {
    type Raw = Result<(), Error>;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        CreateTable {
            db: self.db,
            options: std::mem::take(&mut self.options),
            running: Running::default(),
        }
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        Box::pin(self.send())
    }
}

builder_future!(['a, T: Table] CreateTable<'a, T> => Result<(), Error>, |r| r);

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
        .map_err(Error::build)
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
        .map_err(Error::build)
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
    let invalid = Error::build;
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
    /// active.
    ///
    /// A table with an expiry attribute (`#[table(ttl = "expires")]`) then has the service's
    /// Time to Live enabled on it: `DescribeTimeToLive`, and `UpdateTimeToLive` unless it is
    /// enabled already. Time to Live on another attribute is [`Error::TableMismatch`].
    ///
    /// The returned [`CreateTable`] sets table options before it is awaited (deletion
    /// protection, warm throughput, on-demand maxima; see [`TableOptions`]). Meant for tests,
    /// examples and bootstrapping; production tables usually come from infrastructure code.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Db, DefaultTable, local, ops::OnDemandMax};
    ///
    /// let db: Db<DefaultTable> = Db::with_table_name(local::client()?, "doc-create-table");
    /// db.create_table().max_on_demand(OnDemandMax::new(1_000, 200)).await?;
    /// db.create_table().await?; // exists already: checked, left as it is
    /// # db.delete_table().await?;
    /// # Ok(()) }
    /// ```
    pub fn create_table(&self) -> CreateTable<'_, T> {
        CreateTable { db: self, options: TableOptions::default(), running: Running::default() }
    }

    async fn create_table_with(&self, options: &TableOptions) -> Result<(), Error> {
        options.validate::<T>()?;
        let mut request = self
            .client()
            .create_table()
            .table_name(self.table_name())
            .billing_mode(BillingMode::PayPerRequest)
            .set_key_schema(Some(key_schema(T::PK, T::SK)?))
            .set_deletion_protection_enabled(options.deletion_protection.then_some(true))
            .set_warm_throughput(options.warm_throughput.as_ref().and_then(warm))
            .set_on_demand_throughput(options.max_on_demand.as_ref().and_then(on_demand));
        for (name, kind) in attribute_definitions::<T>() {
            request = request.attribute_definitions(attribute(name, kind)?);
        }
        for index in T::INDEXES {
            let opts = options.index(index.name);
            let gsi = GlobalSecondaryIndex::builder()
                .index_name(index.name)
                .set_warm_throughput(opts.and_then(|o| o.warm_throughput.as_ref()).and_then(warm))
                .set_on_demand_throughput(
                    opts.and_then(|o| o.max_on_demand.as_ref()).and_then(on_demand),
                )
                .set_key_schema(Some(index_schema(index)?))
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()
                .map_err(Error::build)?;
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
        self.wait_active(created).await?;
        self.enable_ttl().await
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

    /// Enables Time to Live on the table's expiry attribute ([`Table::TTL`]), after checking
    /// with `DescribeTimeToLive` what the table has: nothing to do when it is enabled (or
    /// being enabled) on that attribute; [`Error::TableMismatch`] when it is on another one
    /// (the service allows one per table) or being disabled (the service refuses to enable
    /// it again for a while); else one `UpdateTimeToLive`.
    async fn enable_ttl(&self) -> Result<(), Error> {
        use aws_sdk_dynamodb::types::{TimeToLiveSpecification, TimeToLiveStatus};
        let Some(attr) = T::TTL else { return Ok(()) };
        let mismatch =
            |reason: String| Error::TableMismatch { table: self.table_name().to_owned(), reason };
        let request = self.client().describe_time_to_live().table_name(self.table_name());
        let out = retry::send(self, Op::DescribeTimeToLive, || request.send()).await?;
        let current = out.time_to_live_description();
        let status = current.and_then(|d| d.time_to_live_status());
        let current_attr = current.and_then(|d| d.attribute_name());
        match status {
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling) => {
                return if current_attr == Some(attr) {
                    Ok(())
                } else {
                    Err(mismatch(format!(
                        "Time to Live is enabled on attribute {current_attr:?}, the definition says `{attr}` (a table has one)"
                    )))
                };
            }
            Some(TimeToLiveStatus::Disabling) => {
                return Err(mismatch(format!(
                    "Time to Live is being disabled (on attribute {current_attr:?}); the service refuses to enable it on `{attr}` until that is done"
                )));
            }
            _ => {}
        }
        let spec = TimeToLiveSpecification::builder()
            .attribute_name(attr)
            .enabled(true)
            .build()
            .map_err(Error::build)?;
        let request = self
            .client()
            .update_time_to_live()
            .table_name(self.table_name())
            .time_to_live_specification(spec);
        retry::send(self, Op::UpdateTimeToLive, || request.send()).await?;
        Ok(())
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
        let mut polls = 0;
        loop {
            polls += 1;
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
            if started.elapsed() > TABLE_ACTIVE.timeout {
                return Err(Error::TableNotActive {
                    table: self.table_name().to_owned(),
                    seconds: TABLE_ACTIVE.timeout.as_secs(),
                });
            }
            TABLE_ACTIVE.pause(polls).await;
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
