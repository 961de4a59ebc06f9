//! [`Db::sync_table`]: reading the live table (`DescribeTable` and, for the settings the
//! options manage, `DescribeTimeToLive`, `DescribeContinuousBackups`, `ListTagsOfResource`,
//! `GetResourcePolicy`), and applying a [`TableDiff`] change by change in an order the
//! service accepts.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{
    CreateGlobalSecondaryIndexAction, CreateVectorIndexAction, DeleteGlobalSecondaryIndexAction,
    GlobalSecondaryIndexUpdate, OnDemandThroughput, PointInTimeRecoverySpecification, Projection,
    ProjectionType, StreamSpecification, TableDescription, Tag, TimeToLiveSpecification,
    VectorIndexUpdate,
};

use super::diff::{self, LiveSettings, TableChange, TableDiff};
use super::layout::{attribute, attribute_definitions, index_schema, vector_index};
use super::options::TableOptions;
use crate::db::Db;
use crate::error::{Capability, Error, is_unknown_operation};
use crate::model::Table;
use crate::ops::Running;
use crate::ops::retry::{self, SendError};
use crate::ops::startable::startable;
use crate::stats::Op;

/// Compares the live table with its declaration (see [`Db::sync_table`]); `.await` it for the
/// [`TableDiff`], or [`apply`](SyncTable::apply) the differences.
#[must_use = "an operation does nothing until it is awaited"]
pub struct SyncTable<'a, T: Table> {
    db: &'a Db<T>,
    pub(super) options: TableOptions,
    delete_undeclared: bool,
    running: Running<'a, Result<TableDiff, Error>>,
}

/// Applies the differences of the live table from its declaration (see
/// [`SyncTable::apply`]); `.await` it.
#[must_use = "an operation does nothing until it is awaited"]
pub struct ApplySync<'a, T: Table> {
    sync: SyncTable<'a, T>,
    running: Running<'a, Result<TableDiff, Error>>,
}

impl<'a, T: Table> SyncTable<'a, T> {
    /// The settings to compare besides the layout (those left `None` are not compared).
    pub fn options(mut self, options: TableOptions) -> Self {
        self.options = options;
        self
    }

    /// Global secondary indexes the table has and the declaration does not are deleted
    /// ([`TableChange::DeleteIndex`]) instead of only reported.
    pub fn delete_undeclared_indexes(mut self, delete: bool) -> Self {
        self.delete_undeclared = delete;
        self
    }

    /// Applies the differences instead of only reporting them, and returns what was applied.
    /// Refused with [`Error::TableMismatch`] before any change is sent when one of them cannot
    /// be applied ([`TableDiff::unfixable`]).
    pub fn apply(self) -> ApplySync<'a, T> {
        ApplySync { sync: self, running: Running::default() }
    }

    /// Sends the describe requests and compares.
    pub async fn send(self) -> Result<TableDiff, Error> {
        Ok(self.db.table_diff(&self.options, self.delete_undeclared).await?.0)
    }
}

impl<T: Table> ApplySync<'_, T> {
    /// Compares, then applies the differences.
    pub async fn send(self) -> Result<TableDiff, Error> {
        let SyncTable { db, options, delete_undeclared, .. } = self.sync;
        let (diff, table) = db.table_diff(&options, delete_undeclared).await?;
        db.apply_diff(&diff, &table).await?;
        Ok(diff)
    }
}

startable!(
    ['a, T: Table] SyncTable<'a, T> => Result<TableDiff, Error>,
    |s| s.db.sync_table(),
    send
);

startable!(writes
    ['a, T: Table] ApplySync<'a, T> => Result<TableDiff, Error>,
    |s| s.sync.db.sync_table().apply(),
    send
);

/// A failed request of `capability` as its typed error: [`Error::Unsupported`] when the
/// endpoint does not know the operation.
fn unsupported(capability: Capability, operation: Op) -> impl FnOnce(SendError) -> Error {
    move |err| match err.into_service() {
        Ok(err) if is_unknown_operation(&err) => {
            Error::Unsupported { capability, operation, source: Some(Box::new(err)) }
        }
        Ok(err) => Error::service(operation, err),
        Err(err) => err,
    }
}

impl<T: Table> Db<T> {
    /// Compares the live table with `T`'s declaration and a [`TableOptions`], and reports
    /// (or, with [`apply`](SyncTable::apply), applies) the differences: indexes to create,
    /// indexes the declaration lacks (reported; deleted only when asked), Time to Live,
    /// deletion protection, the on-demand maximum, the stream, point-in-time recovery, tags
    /// and the resource policy. Differences the service cannot change in place (a key schema,
    /// an index's keys, a vector index's layout, Time to Live on another attribute) are
    /// reported as [`TableChange::Mismatch`], never applied.
    ///
    /// Requests: one `DescribeTable`; `DescribeTimeToLive` when the table declares Time to
    /// Live; one `DescribeContinuousBackups`, `ListTagsOfResource` (one per page of tags) and
    /// `GetResourcePolicy` when the options manage point-in-time
    /// recovery, tags or the policy. Applying sends [`TableDiff::requests`] more, each
    /// `UpdateTable` followed by `DescribeTable` polls until the table and its indexes are
    /// active; a second sync then finds nothing. An endpoint without an operation a managed
    /// setting needs is [`Error::Unsupported`] naming it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Db, DefaultTable, local, ops::{TableOptions, ViewType}};
    ///
    /// let db: Db<DefaultTable> = Db::with_table_name(local::client()?, "doc-sync-table");
    /// db.create_table().await?;
    /// let options = TableOptions::default().stream(ViewType::NewImage).tag("team", "orders");
    /// let diff = db.sync_table().options(options.clone()).await?;
    /// assert_eq!(diff.changes.len(), 2); // the stream, the tag
    /// println!("{diff}");
    /// db.sync_table().options(options.clone()).apply().await?;
    /// assert!(db.sync_table().options(options).await?.is_empty());
    /// # db.delete_table().await?;
    /// # Ok(()) }
    /// ```
    pub fn sync_table(&self) -> SyncTable<'_, T> {
        SyncTable {
            db: self,
            options: TableOptions::default(),
            delete_undeclared: false,
            running: Running::default(),
        }
    }

    /// The table as `DescribeTable` reports it.
    pub(super) async fn describe_table(&self) -> Result<TableDescription, Error> {
        let request = self.client().describe_table().table_name(self.table_name());
        let out = retry::send(self, Op::DescribeTable, request).await?;
        Ok(out.table.unwrap_or_else(|| TableDescription::builder().build()))
    }

    /// The differences, and the table as described.
    async fn table_diff(
        &self,
        options: &TableOptions,
        delete_undeclared: bool,
    ) -> Result<(TableDiff, TableDescription), Error> {
        options.validate::<T>()?;
        let table = self.describe_table().await?;
        let mut changes = Vec::new();
        diff::layout::<T>(&table, delete_undeclared, &mut changes);
        self.ttl_changes(&mut changes).await?;
        let arn = table.table_arn().unwrap_or_default();
        let mut live = LiveSettings::default();
        if options.point_in_time_recovery.is_some() {
            live.pitr = Some(self.point_in_time_recovery().await?);
        }
        if options.tags.is_some() {
            live.tags = Some(self.tags(arn).await?);
        }
        if options.resource_policy.is_some() {
            live.policy = Some(self.resource_policy(arn).await?);
        }
        diff::settings(options, &table, &live, &mut changes);
        changes.sort_by_key(|c| !matches!(c, TableChange::Mismatch { .. }));
        Ok((TableDiff { table: self.table_name().to_owned(), changes }, table))
    }

    /// The Time to Live difference (`DescribeTimeToLive`, when `T` declares it).
    pub(super) async fn ttl_changes(&self, changes: &mut Vec<TableChange>) -> Result<(), Error> {
        if T::TTL.is_none() {
            return Ok(());
        }
        let request = self.client().describe_time_to_live().table_name(self.table_name());
        let out = retry::send(self, Op::DescribeTimeToLive, request).await?;
        diff::ttl::<T>(out.time_to_live_description(), changes);
        Ok(())
    }

    async fn point_in_time_recovery(&self) -> Result<bool, Error> {
        let op = Op::DescribeContinuousBackups;
        let request = self.client().describe_continuous_backups().table_name(self.table_name());
        let out = retry::send(self, op, request)
            .await
            .map_err(unsupported(Capability::PointInTimeRecovery, op))?;
        let status = out
            .continuous_backups_description()
            .and_then(|d| d.point_in_time_recovery_description())
            .and_then(|p| p.point_in_time_recovery_status());
        Ok(status.is_some_and(|s| s.as_str() == "ENABLED"))
    }

    /// The table's tags, without the `aws:` ones the service assigns.
    pub(super) async fn tags(&self, arn: &str) -> Result<BTreeMap<String, String>, Error> {
        let op = Op::ListTagsOfResource;
        let mut tags = BTreeMap::new();
        let mut next: Option<String> = None;
        loop {
            let request =
                self.client().list_tags_of_resource().resource_arn(arn).set_next_token(next);
            let out =
                retry::send(self, op, request).await.map_err(unsupported(Capability::Tags, op))?;
            for tag in out.tags() {
                if !tag.key().starts_with("aws:") {
                    tags.insert(tag.key().to_owned(), tag.value().to_owned());
                }
            }
            next = out.next_token().filter(|t| !t.is_empty()).map(str::to_owned);
            if next.is_none() {
                return Ok(tags);
            }
        }
    }

    /// The table's resource policy, `None` without one.
    pub(super) async fn resource_policy(&self, arn: &str) -> Result<Option<String>, Error> {
        let op = Op::GetResourcePolicy;
        let request = self.client().get_resource_policy().resource_arn(arn);
        match retry::send(self, op, request).await {
            Ok(out) => Ok(out.policy().map(str::to_owned)),
            Err(err) => match err.into_service()? {
                aws_sdk_dynamodb::Error::PolicyNotFoundException(_) => Ok(None),
                err if is_unknown_operation(&err) => Err(Error::Unsupported {
                    capability: Capability::ResourcePolicy,
                    operation: op,
                    source: Some(Box::new(err)),
                }),
                err => Err(Error::service(op, err)),
            },
        }
    }

    /// Applies `diff` to `table` (as described), change by change in its order; the tags
    /// last, in one `TagResource` and one `UntagResource`.
    async fn apply_diff(&self, diff: &TableDiff, table: &TableDescription) -> Result<(), Error> {
        if let Some(reason) = diff.unfixable().next() {
            let (table, reason) = (self.table_name().to_owned(), reason.clone());
            return Err(Error::TableMismatch { table, reason });
        }
        let arn = table.table_arn().unwrap_or_default();
        let mut put = Vec::new();
        let mut remove = Vec::new();
        for change in &diff.changes {
            match change {
                TableChange::Tag { key, declared: Some(value), .. } => {
                    put.push(Tag::builder().key(key).value(value).build().map_err(Error::build)?);
                }
                TableChange::Tag { key, declared: None, .. } => remove.push(key.clone()),
                change => self.apply_change(change, arn).await?,
            }
        }
        if !put.is_empty() {
            let op = Op::TagResource;
            let request = self.client().tag_resource().resource_arn(arn).set_tags(Some(put));
            retry::send(self, op, request).await.map_err(unsupported(Capability::Tags, op))?;
        }
        if !remove.is_empty() {
            let op = Op::UntagResource;
            let request =
                self.client().untag_resource().resource_arn(arn).set_tag_keys(Some(remove));
            retry::send(self, op, request).await.map_err(unsupported(Capability::Tags, op))?;
        }
        Ok(())
    }
}

/// Applying one change.
impl<T: Table> Db<T> {
    /// Applies one change (not a tag); after an `UpdateTable`, waits until the table and its
    /// indexes are active (the service takes one such change at a time).
    pub(super) async fn apply_change(&self, change: &TableChange, arn: &str) -> Result<(), Error> {
        let update = || self.client().update_table().table_name(self.table_name());
        let request = match change {
            TableChange::CreateIndex { index } => {
                let Some(def) = T::INDEXES.iter().find(|i| i.name == index) else {
                    return Ok(());
                };
                let schema = index_schema(def)?;
                let action = CreateGlobalSecondaryIndexAction::builder()
                    .index_name(index)
                    .set_key_schema(Some(schema.clone()))
                    .projection(Projection::builder().projection_type(ProjectionType::All).build())
                    .build()
                    .map_err(Error::build)?;
                let names: Vec<&str> = schema.iter().map(|e| e.attribute_name()).collect();
                let mut request = update().global_secondary_index_updates(
                    GlobalSecondaryIndexUpdate::builder().create(action).build(),
                );
                for (name, kind) in attribute_definitions::<T>() {
                    if names.contains(&name) {
                        request = request.attribute_definitions(attribute(name, kind)?);
                    }
                }
                request
            }
            TableChange::CreateVectorIndex { index } => {
                let Some(def) = T::VECTOR_INDEXES.iter().find(|i| i.name == index) else {
                    return Ok(());
                };
                let built = vector_index::<T>(def)?;
                let names: Vec<&str> =
                    built.search_schema().iter().map(|e| e.attribute_name()).collect();
                let mut request = update();
                for (name, kind) in attribute_definitions::<T>() {
                    if names.contains(&name) {
                        request = request.attribute_definitions(attribute(name, kind)?);
                    }
                }
                let action = CreateVectorIndexAction::builder()
                    .index_name(built.index_name())
                    .set_vector_attribute(built.vector_attribute().cloned())
                    .set_search_schema(Some(built.search_schema().to_vec()))
                    .set_projection(built.projection().cloned())
                    .dimensions(built.dimensions())
                    .distance_function(built.distance_function().clone())
                    .build()
                    .map_err(Error::build)?;
                request.vector_index_updates(VectorIndexUpdate::builder().create(action).build())
            }
            TableChange::DeleteIndex { index } => {
                let action = DeleteGlobalSecondaryIndexAction::builder()
                    .index_name(index)
                    .build()
                    .map_err(Error::build)?;
                update().global_secondary_index_updates(
                    GlobalSecondaryIndexUpdate::builder().delete(action).build(),
                )
            }
            TableChange::DeletionProtection { enabled } => {
                update().deletion_protection_enabled(*enabled)
            }
            TableChange::OnDemandMax { declared, .. } => {
                // -1: no maximum.
                let max = OnDemandThroughput::builder()
                    .max_read_request_units(declared.max_read_request_units.unwrap_or(-1))
                    .max_write_request_units(declared.max_write_request_units.unwrap_or(-1))
                    .build();
                update().on_demand_throughput(max)
            }
            TableChange::Stream { found, declared } => {
                if found.is_some() {
                    let off = StreamSpecification::builder().stream_enabled(false).build();
                    self.update_table(update().stream_specification(off.map_err(Error::build)?))
                        .await?;
                }
                let Some(view) = declared else { return Ok(()) };
                let on = StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(view.sdk())
                    .build()
                    .map_err(Error::build)?;
                update().stream_specification(on)
            }
            TableChange::EnableTtl { attribute } => {
                let spec = TimeToLiveSpecification::builder()
                    .attribute_name(attribute)
                    .enabled(true)
                    .build()
                    .map_err(Error::build)?;
                let request = self
                    .client()
                    .update_time_to_live()
                    .table_name(self.table_name())
                    .time_to_live_specification(spec);
                retry::send(self, Op::UpdateTimeToLive, request).await?;
                return Ok(());
            }
            TableChange::PointInTimeRecovery { enabled } => {
                let op = Op::UpdateContinuousBackups;
                let spec = PointInTimeRecoverySpecification::builder()
                    .point_in_time_recovery_enabled(*enabled)
                    .build()
                    .map_err(Error::build)?;
                let request = self
                    .client()
                    .update_continuous_backups()
                    .table_name(self.table_name())
                    .point_in_time_recovery_specification(spec);
                retry::send(self, op, request)
                    .await
                    .map_err(unsupported(Capability::PointInTimeRecovery, op))?;
                return Ok(());
            }
            TableChange::ResourcePolicy { declared } => {
                let capability = Capability::ResourcePolicy;
                let client = self.client();
                let sent = match declared {
                    Some(policy) => {
                        let op = Op::PutResourcePolicy;
                        let request = client.put_resource_policy().resource_arn(arn).policy(policy);
                        retry::send(self, op, request)
                            .await
                            .map(drop)
                            .map_err(unsupported(capability, op))
                    }
                    None => {
                        let op = Op::DeleteResourcePolicy;
                        let request = client.delete_resource_policy().resource_arn(arn);
                        retry::send(self, op, request)
                            .await
                            .map(drop)
                            .map_err(unsupported(capability, op))
                    }
                };
                return sent;
            }
            TableChange::Tag { .. }
            | TableChange::UndeclaredIndex { .. }
            | TableChange::Mismatch { .. } => {
                return Ok(());
            }
        };
        self.update_table(request).await
    }

    /// Sends one `UpdateTable` and waits until the table and its indexes are active.
    async fn update_table(
        &self,
        request: aws_sdk_dynamodb::operation::update_table::builders::UpdateTableFluentBuilder,
    ) -> Result<(), Error> {
        retry::send(self, Op::UpdateTable, request).await?;
        self.wait_active(false, false).await
    }
}
