//! The physical table: its key attributes and secondary indexes, and how to create it.

use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, IndexStatus, KeySchemaElement, KeyType,
    Projection, ProjectionType, ScalarAttributeType, TableStatus,
};

use crate::db::Db;
use crate::error::Error;
use crate::ops::retry;
use crate::stats::Op;

/// A global secondary index of a [`Table`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexDef {
    /// The index name.
    pub name: &'static str,
    /// The attribute holding the index partition key.
    pub pk: &'static str,
    /// The attribute holding the index sort key, if the index has one.
    pub sk: Option<&'static str>,
}

/// The layout of a physical DynamoDB table shared by many entity types.
///
/// Usually derived:
///
/// ```
/// use ddb_model::Table;
///
/// #[derive(Table)]
/// #[table(name = "app", pk = "pk", sk = "sk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
/// struct App;
///
/// assert_eq!(App::NAME, "app");
/// assert_eq!(App::INDEXES[0].pk, "gsi1pk");
/// ```
///
/// Every attribute of `#[table]` is optional: the default layout is that of [`DefaultTable`].
/// The name is only a default; [`Db::with_table_name`] picks the physical table at run time
/// (one per stage, one per test).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a table definition",
    label = "`#[entity(table = ..)]` must name a type with `#[derive(ddb_model::Table)]`",
    note = "add `#[derive(ddb_model::Table)]` and a `#[table(..)]` attribute to `{Self}`, or leave `table` out to use `ddb_model::DefaultTable`"
)]
pub trait Table: Send + Sync + 'static {
    /// The default physical table name.
    const NAME: &'static str;
    /// The partition key attribute.
    const PK: &'static str;
    /// The sort key attribute, if the table has one.
    const SK: Option<&'static str>;
    /// The attribute that stores each item's entity type.
    const TYPE_ATTR: &'static str;
    /// The global secondary indexes.
    const INDEXES: &'static [IndexDef];
}

/// The table layout used by entities that name no table: `pk`/`sk` keys, the entity type in
/// `_type`, and three global secondary indexes `gsi1`..`gsi3` keyed by `gsiNpk`/`gsiNsk`.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultTable;

impl Table for DefaultTable {
    const NAME: &'static str = "ddb-model";
    const PK: &'static str = "pk";
    const SK: Option<&'static str> = Some("sk");
    const TYPE_ATTR: &'static str = "_type";
    const INDEXES: &'static [IndexDef] = &[
        IndexDef { name: "gsi1", pk: "gsi1pk", sk: Some("gsi1sk") },
        IndexDef { name: "gsi2", pk: "gsi2pk", sk: Some("gsi2sk") },
        IndexDef { name: "gsi3", pk: "gsi3pk", sk: Some("gsi3sk") },
    ];
}

/// `a == b` in a const context.
#[doc(hidden)]
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The index named `name` of table `T`, in a const context.
#[doc(hidden)]
pub const fn find_index<T: Table>(name: &str) -> Option<&'static IndexDef> {
    let mut i = 0;
    while i < T::INDEXES.len() {
        if str_eq(T::INDEXES[i].name, name) {
            return Some(&T::INDEXES[i]);
        }
        i += 1;
    }
    None
}

/// What table `T` uses `attr` for, in a const context: 0 nothing, 1 partition key, 2 sort
/// key, 3 entity type, 4 a key of one of its indexes.
#[doc(hidden)]
pub(crate) const fn attribute_role<T: Table>(attr: &str) -> u8 {
    if str_eq(attr, T::PK) {
        return 1;
    }
    if let Some(sk) = T::SK
        && str_eq(attr, sk)
    {
        return 2;
    }
    if str_eq(attr, T::TYPE_ATTR) {
        return 3;
    }
    let mut i = 0;
    while i < T::INDEXES.len() {
        let index = &T::INDEXES[i];
        if str_eq(attr, index.pk) {
            return 4;
        }
        if let Some(sk) = index.sk
            && str_eq(attr, sk)
        {
            return 4;
        }
        i += 1;
    }
    0
}

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

fn string_attribute(name: &str) -> Result<AttributeDefinition, Error> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .map_err(|e| Error::InvalidExpression(e.to_string()))
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
        let mut attributes: Vec<&str> = vec![T::PK];
        attributes.extend(T::SK);
        for index in T::INDEXES {
            attributes.push(index.pk);
            attributes.extend(index.sk);
        }
        attributes.sort_unstable();
        attributes.dedup();

        let mut request = self
            .client()
            .create_table()
            .table_name(self.table_name())
            .billing_mode(BillingMode::PayPerRequest)
            .set_key_schema(Some(key_schema(T::PK, T::SK)?));
        for attr in attributes {
            request = request.attribute_definitions(string_attribute(attr)?);
        }
        for index in T::INDEXES {
            let gsi = GlobalSecondaryIndex::builder()
                .index_name(index.name)
                .set_key_schema(Some(key_schema(index.pk, index.sk)?))
                .projection(Projection::builder().projection_type(ProjectionType::All).build())
                .build()
                .map_err(|e| Error::InvalidExpression(e.to_string()))?;
            request = request.global_secondary_indexes(gsi);
        }

        let sent =
            retry::send(self, Op::CreateTable, |t| request.customize().interceptor(t).send()).await;
        if let Err(err) = sent {
            match err.into_service()? {
                aws_sdk_dynamodb::Error::ResourceInUseException(_) => {}
                err => return Err(Error::service(Op::CreateTable, err)),
            }
        }
        self.wait_active().await
    }

    /// Deletes the table (tests and tooling). A missing table is not an error.
    pub async fn delete_table(&self) -> Result<(), Error> {
        let request = self.client().delete_table().table_name(self.table_name());
        match retry::send(self, Op::DeleteTable, |t| request.customize().interceptor(t).send())
            .await
        {
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
            let out =
                retry::send(self, Op::DescribeTable, |t| request.customize().interceptor(t).send())
                    .await?;
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
            let (ipk, isk) = schema_of(found.key_schema());
            if ipk.as_deref() != Some(index.pk) || isk.as_deref() != index.sk {
                return Err(mismatch(format!(
                    "index `{}` is keyed by ({ipk:?}, {isk:?}), the definition says ({:?}, {:?})",
                    index.name, index.pk, index.sk
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_helpers() {
        assert!(str_eq("gsi1", "gsi1"));
        assert!(!str_eq("gsi1", "gsi10"));
        assert_eq!(find_index::<DefaultTable>("gsi2").map(|i| i.pk), Some("gsi2pk"));
        assert!(find_index::<DefaultTable>("gsi9").is_none());
        assert_eq!(attribute_role::<DefaultTable>("pk"), 1);
        assert_eq!(attribute_role::<DefaultTable>("sk"), 2);
        assert_eq!(attribute_role::<DefaultTable>("_type"), 3);
        assert_eq!(attribute_role::<DefaultTable>("gsi3sk"), 4);
        assert_eq!(attribute_role::<DefaultTable>("email"), 0);
    }
}
