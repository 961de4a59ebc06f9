//! Table administration: [`Db::create_table`] (create as the [`Table`] declares it, or check
//! an existing table against the declaration) and [`Db::delete_table`].

use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, IndexStatus, KeySchemaElement, KeyType,
    Projection, ProjectionType, ScalarAttributeType, TableStatus,
};

use super::retry;
use crate::db::Db;
use crate::error::Error;
use crate::model::{AttrKind, IndexDef, Table};
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
    let mut seen = Vec::new();
    attributes.retain(|(name, _)| {
        let first = !seen.contains(name);
        seen.push(*name);
        first
    });
    attributes.sort_unstable_by_key(|(name, _)| *name);
    attributes
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
    /// enabled already. Time to Live on another attribute is [`Error::TableMismatch`]. Meant for tests, examples and bootstrapping; production tables usually come
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

        let sent = retry::send(self, Op::CreateTable, || request.send()).await;
        if let Err(err) = sent {
            match err.into_service()? {
                aws_sdk_dynamodb::Error::ResourceInUseException(_) => {}
                err => return Err(Error::service(Op::CreateTable, err)),
            }
        }
        self.wait_active().await?;
        self.enable_ttl().await
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
            .map_err(|e| Error::InvalidExpression(e.to_string()))?;
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

    async fn wait_active(&self) -> Result<(), Error> {
        let started = Instant::now();
        let mut delay = Duration::from_millis(20);
        loop {
            let request = self.client().describe_table().table_name(self.table_name());
            let out = retry::send(self, Op::DescribeTable, || request.send()).await?;
            if let Some(table) = out.table() {
                self.check_layout(table)?;
                let indexes_active = table
                    .global_secondary_indexes()
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
        Ok(())
    }
}
