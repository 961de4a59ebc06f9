//! Table administration: [`Db::create_table`] (create as the [`Table`] declares it, or check
//! an existing table against the declaration), [`Db::sync_table`] and [`Db::delete_table`].
//! The options a table gets are in `options.rs`, the declared layout rendered for
//! `CreateTable` in `layout.rs`, the one comparison of the declared table with the live one
//! in `diff.rs`, reading the live table and applying the differences in `sync.rs`.

mod diff;
mod layout;
mod options;
mod sync;

use crate::ops::startable::startable;
use std::time::Instant;

use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, IndexStatus, Projection, ProjectionType,
    StreamSpecification, TableStatus, Tag,
};

use super::Running;
use super::retry::{self, TABLE_ACTIVE};
use crate::db::Db;
use crate::error::{Capability, Error};
use crate::model::Table;
use crate::stats::Op;

pub use diff::{TableChange, TableDiff};
use layout::{attribute, attribute_definitions, index_schema, key_schema, vector_index};
pub use options::{
    IndexOptions, MAX_POLICY_BYTES, MAX_TAG_KEY_CHARS, MAX_TAG_VALUE_CHARS, MAX_TAGS,
    MIN_WARM_READ_UNITS, MIN_WARM_WRITE_UNITS, OnDemandMax, TableOptions, ViewType, WarmThroughput,
};
use options::{on_demand, warm};
pub use sync::{ApplySync, SyncTable};

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

/// Setters of [`TableOptions`] on a builder that holds them in `options`, each calling the
/// option's own setter (documented there).
macro_rules! option_setters {
    ($builder:ident: $($name:ident($($arg:ident: $ty:ty),*);)+) => {
        impl<'a, T: Table> $builder<'a, T> {
            $(
                #[doc = concat!("See [`TableOptions::", stringify!($name), "`].")]
                pub fn $name(mut self $(, $arg: $ty)*) -> Self {
                    self.options = self.options.$name($($arg),*);
                    self
                }
            )+
        }
    };
}

option_setters!(CreateTable:
    deletion_protection(on: bool);
    warm_throughput(warm: WarmThroughput);
    max_on_demand(max: OnDemandMax);
    index_warm_throughput(name: &str, warm: WarmThroughput);
    index_max_on_demand(name: &str, max: OnDemandMax);
    point_in_time_recovery(on: bool);
    stream(view: ViewType);
    tag(key: impl Into<String>, value: impl Into<String>);
    resource_policy(document: impl Into<String>);
);

option_setters!(SyncTable:
    deletion_protection(on: bool);
    max_on_demand(max: OnDemandMax);
    point_in_time_recovery(on: bool);
    stream(view: ViewType);
    no_stream();
    tag(key: impl Into<String>, value: impl Into<String>);
    no_tags();
    resource_policy(document: impl Into<String>);
    no_resource_policy();
);

impl<'a, T: Table> CreateTable<'a, T> {
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

startable!(writes
    ['a, T: Table] CreateTable<'a, T> => Result<(), Error>,
    |create| create.db.create_table(),
    send
);

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
    /// protection, warm throughput, on-demand maxima, the stream, tags and the resource policy
    /// go into `CreateTable`; point-in-time recovery is one `UpdateContinuousBackups` once the
    /// table is active; see [`TableOptions`]). An existing table keeps its own settings:
    /// [`Db::sync_table`] compares and changes them. Meant for tests, examples and
    /// bootstrapping; production tables usually come from infrastructure code.
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
            .set_deletion_protection_enabled(options.deletion_protection)
            .set_warm_throughput(options.warm_throughput.as_ref().and_then(warm))
            .set_on_demand_throughput(options.max_on_demand.as_ref().and_then(on_demand))
            .set_resource_policy(options.resource_policy.clone().flatten());
        if let Some(view) = options.stream {
            let spec = StreamSpecification::builder()
                .stream_enabled(view.is_some())
                .set_stream_view_type(view.map(ViewType::sdk))
                .build()
                .map_err(Error::build)?;
            request = request.stream_specification(spec);
        }
        for (key, value) in options.tags.iter().flatten() {
            request =
                request.tags(Tag::builder().key(key).value(value).build().map_err(Error::build)?);
        }
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

        let sent = retry::send(self, Op::CreateTable, request).await;
        let mut arn = None;
        let created = match sent {
            Ok(out) => {
                arn = out.table_description.and_then(|t| t.table_arn);
                true
            }
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
        self.wait_active(created, true).await?;
        let mut changes = Vec::new();
        self.ttl_changes(&mut changes).await?;
        if created && options.point_in_time_recovery == Some(true) {
            changes.push(TableChange::PointInTimeRecovery { enabled: true });
        }
        for change in changes {
            if let Some(reason) = change.clone().into_mismatch() {
                return Err(Error::TableMismatch { table: self.table_name().to_owned(), reason });
            }
            self.apply_change(&change, "").await?;
        }
        // An endpoint without tags or resource policies may take them and drop them (DynamoDB
        // Local does): ask it for them (`Error::Unsupported` from one without the operation).
        if let Some(arn) = arn {
            if options.tags.as_ref().is_some_and(|t| !t.is_empty()) {
                self.tags(&arn).await?;
            }
            if let Some(Some(_)) = &options.resource_policy {
                self.resource_policy(&arn).await?;
            }
        }
        Ok(())
    }

    /// `Some(Unsupported)` (vector search) when the endpoint answers a `SearchVectors` with
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
        match retry::send(self, Op::SearchVectors, request).await {
            Err(err) => match err.into_service() {
                Ok(err) if crate::error::is_unknown_operation(&err) => Some(Error::Unsupported {
                    capability: Capability::VectorSearch,
                    operation: Op::SearchVectors,
                    source: Some(Box::new(err)),
                }),
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
        let out = retry::send(self, Op::DescribeTable, request).await?;
        Ok(out.table().and_then(|t| t.item_count()).and_then(|n| u64::try_from(n).ok()))
    }

    /// Deletes the table (tests and tooling). A missing table is not an error.
    pub async fn delete_table(&self) -> Result<(), Error> {
        let request = self.client().delete_table().table_name(self.table_name());
        match retry::send(self, Op::DeleteTable, request).await {
            Ok(_) => Ok(()),
            Err(err) => match err.into_service()? {
                aws_sdk_dynamodb::Error::ResourceNotFoundException(_) => Ok(()),
                err => Err(Error::service(Op::DeleteTable, err)),
            },
        }
    }

    /// `created`: this call created the table (a vector index missing from it was then
    /// dropped by the endpoint, not by someone else).
    /// `check`: the layout is compared with the declaration on each poll (a difference is
    /// [`Error::TableMismatch`]).
    async fn wait_active(&self, created: bool, check: bool) -> Result<(), Error> {
        let started = Instant::now();
        let mut polls = 0;
        loop {
            polls += 1;
            let request = self.client().describe_table().table_name(self.table_name());
            let out = retry::send(self, Op::DescribeTable, request).await?;
            if let Some(table) = out.table() {
                if created && table.vector_indexes().len() < T::VECTOR_INDEXES.len() {
                    return Err(Error::Unsupported {
                        capability: Capability::VectorSearch,
                        operation: Op::CreateTable,
                        source: None,
                    });
                }
                let mut changes = Vec::new();
                if check {
                    diff::layout::<T>(table, false, &mut changes);
                }
                if let Some(reason) = changes.into_iter().find_map(TableChange::into_mismatch) {
                    return Err(Error::TableMismatch {
                        table: self.table_name().to_owned(),
                        reason,
                    });
                }
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
}
