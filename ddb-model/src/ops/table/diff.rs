//! The one comparison of the declared table with the live one: [`TableDiff`], a list of
//! [`TableChange`]s, from what `DescribeTable` and the other describe requests report. Both
//! [`Db::create_table`](crate::Db::create_table) (an existing table's layout and Time to Live)
//! and [`Db::sync_table`](crate::Db::sync_table) (everything) read it.

use std::collections::BTreeMap;
use std::fmt;

use aws_sdk_dynamodb::types::{
    KeySchemaElement, KeyType, TableDescription, TimeToLiveDescription, TimeToLiveStatus,
};
use serde::{Deserialize, Serialize};

use super::options::{OnDemandMax, TableOptions, ViewType};
use crate::error::{TableMismatchReason, TableMismatchReason as Why, VectorLayout};
use crate::model::Table;
use crate::stats::Op;

/// How a live table differs from its declaration (the [`Table`] type's layout and a
/// [`TableOptions`]): what [`Db::sync_table`](crate::Db::sync_table) reports, in the order
/// [`apply`](crate::ops::SyncTable::apply) would send the changes. `Display` prints it as a
/// table an operator reads; it serializes with serde.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableDiff {
    /// The physical table name.
    pub table: String,
    /// The differences, in the order they are applied (the ones that cannot be, first).
    pub changes: Vec<TableChange>,
}

impl TableDiff {
    /// True when the table is as declared.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// The differences that cannot be applied (a key schema, an index's keys, ...):
    /// [`apply`](crate::ops::SyncTable::apply) refuses to start while there is one.
    pub fn unfixable(&self) -> impl Iterator<Item = &TableMismatchReason> {
        self.changes.iter().filter_map(|c| match c {
            TableChange::Mismatch { reason } => Some(reason),
            _ => None,
        })
    }

    /// The requests applying the changes sends (besides the `DescribeTable` polls that wait
    /// for the table to be active after each `UpdateTable`).
    pub fn requests(&self) -> usize {
        let tags = |op| self.changes.iter().any(|c| c.requests() == (Some(op), 0));
        let shared = usize::from(tags(Op::TagResource)) + usize::from(tags(Op::UntagResource));
        self.changes.iter().map(|c| c.requests().1).sum::<usize>() + shared
    }
}

/// One difference between the declared table and the live one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TableChange {
    /// A declared global secondary index the table lacks: one `UpdateTable`, then a wait
    /// until it is active.
    CreateIndex {
        /// The index.
        index: String,
    },
    /// A declared vector index the table lacks: one `UpdateTable`, then a wait.
    CreateVectorIndex {
        /// The index.
        index: String,
    },
    /// An index the table has and the declaration does not: reported, left in place (see
    /// [`SyncTable::delete_undeclared_indexes`](crate::ops::SyncTable::delete_undeclared_indexes)).
    UndeclaredIndex {
        /// The index.
        index: String,
        /// True for a vector index.
        vector: bool,
    },
    /// An undeclared global secondary index to delete, as asked: one `UpdateTable`.
    DeleteIndex {
        /// The index.
        index: String,
    },
    /// Time to Live to enable on the declared attribute: one `UpdateTimeToLive`.
    EnableTtl {
        /// The attribute.
        attribute: String,
    },
    /// Deletion protection to turn on or off: one `UpdateTable`.
    DeletionProtection {
        /// The declared setting.
        enabled: bool,
    },
    /// The table's on-demand maximum to change: one `UpdateTable`.
    OnDemandMax {
        /// What the table has.
        found: Option<OnDemandMax>,
        /// What is declared.
        declared: OnDemandMax,
    },
    /// The stream to turn on, off, or to another view type (the service changes a view type
    /// in two steps, off and on: two `UpdateTable`s).
    Stream {
        /// The table's stream view type, `None` without a stream.
        found: Option<ViewType>,
        /// The declared one.
        declared: Option<ViewType>,
    },
    /// Point-in-time recovery to turn on or off: one `UpdateContinuousBackups`.
    PointInTimeRecovery {
        /// The declared setting.
        enabled: bool,
    },
    /// A tag to add, change (`TagResource`) or remove (`UntagResource`); the tags of one
    /// sync share one request of each kind.
    Tag {
        /// The key.
        key: String,
        /// The table's value, `None` without the tag.
        found: Option<String>,
        /// The declared value, `None` to remove it.
        declared: Option<String>,
    },
    /// The resource policy to put (`PutResourcePolicy`) or delete (`DeleteResourcePolicy`).
    ResourcePolicy {
        /// The declared document, `None` to delete the table's.
        declared: Option<String>,
    },
    /// A difference the service cannot change in place: reported, never applied.
    Mismatch {
        /// What differs.
        reason: TableMismatchReason,
    },
}

impl TableChange {
    /// The operation that applies the change and how many requests of it, `(None, 0)` for
    /// a change that is only reported. The tags of one sync share their requests (counted on
    /// the first tag of each kind by [`TableDiff::requests`]).
    fn requests(&self) -> (Option<Op>, usize) {
        match self {
            TableChange::CreateIndex { .. }
            | TableChange::CreateVectorIndex { .. }
            | TableChange::DeleteIndex { .. }
            | TableChange::DeletionProtection { .. }
            | TableChange::OnDemandMax { .. } => (Some(Op::UpdateTable), 1),
            TableChange::Stream { found: Some(_), declared: Some(_) } => (Some(Op::UpdateTable), 2),
            TableChange::Stream { .. } => (Some(Op::UpdateTable), 1),
            TableChange::EnableTtl { .. } => (Some(Op::UpdateTimeToLive), 1),
            TableChange::PointInTimeRecovery { .. } => (Some(Op::UpdateContinuousBackups), 1),
            TableChange::Tag { declared: Some(_), .. } => (Some(Op::TagResource), 0),
            TableChange::Tag { declared: None, .. } => (Some(Op::UntagResource), 0),
            TableChange::ResourcePolicy { declared: Some(_) } => (Some(Op::PutResourcePolicy), 1),
            TableChange::ResourcePolicy { declared: None } => (Some(Op::DeleteResourcePolicy), 1),
            TableChange::UndeclaredIndex { .. } | TableChange::Mismatch { .. } => (None, 0),
        }
    }

    /// What [`Db::create_table`](crate::Db::create_table) refuses in an existing table: a
    /// difference that cannot be applied, or a missing index.
    pub(super) fn into_mismatch(self) -> Option<TableMismatchReason> {
        match self {
            TableChange::Mismatch { reason } => Some(reason),
            TableChange::CreateIndex { index } => Some(Why::MissingIndex { index, vector: false }),
            TableChange::CreateVectorIndex { index } => {
                Some(Why::MissingIndex { index, vector: true })
            }
            _ => None,
        }
    }

    /// The change's row in the printed report: what, its details, how it is applied.
    fn row(&self) -> [String; 3] {
        let on = |b: bool| if b { "on" } else { "off" };
        let view = |v: &Option<ViewType>| v.map_or("off", ViewType::as_str);
        let max = |m: &OnDemandMax| {
            let n = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
            format!("{},{}", n(m.max_read_request_units), n(m.max_write_request_units))
        };
        let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
        let (what, detail) = match self {
            TableChange::CreateIndex { index } => ("create index", index.clone()),
            TableChange::CreateVectorIndex { index } => ("create vector index", index.clone()),
            TableChange::UndeclaredIndex { index, vector } => {
                let kind = if *vector { "undeclared vector index" } else { "undeclared index" };
                (kind, format!("{index} (kept)"))
            }
            TableChange::DeleteIndex { index } => ("delete index", index.clone()),
            TableChange::EnableTtl { attribute } => ("enable Time to Live", attribute.clone()),
            TableChange::DeletionProtection { enabled } => {
                ("deletion protection", format!("{} -> {}", on(!enabled), on(*enabled)))
            }
            TableChange::OnDemandMax { found, declared } => {
                let found = found.as_ref().map_or_else(|| "none".to_owned(), max);
                ("on-demand maximum", format!("{found} -> {}", max(declared)))
            }
            TableChange::Stream { found, declared } => {
                ("stream", format!("{} -> {}", view(found), view(declared)))
            }
            TableChange::PointInTimeRecovery { enabled } => {
                ("point-in-time recovery", format!("{} -> {}", on(!enabled), on(*enabled)))
            }
            TableChange::Tag { key, found, declared } => {
                ("tag", format!("{key}: {} -> {}", text(found), text(declared)))
            }
            TableChange::ResourcePolicy { declared: Some(doc) } => {
                ("resource policy", format!("put ({} bytes)", doc.len()))
            }
            TableChange::ResourcePolicy { declared: None } => ("resource policy", "delete".into()),
            TableChange::Mismatch { reason } => ("cannot be applied", reason.to_string()),
        };
        let how = match self.requests() {
            (Some(op), n) if n > 1 => format!("{op} x{n}"),
            (Some(op), _) => op.to_string(),
            (None, _) => "-".to_owned(),
        };
        [what.to_owned(), detail, how]
    }
}

impl fmt::Display for TableDiff {
    /// One line per change: what, its details, the request that applies it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.changes.is_empty() {
            return writeln!(f, "table `{}` is as declared", self.table);
        }
        let n = self.changes.len();
        writeln!(f, "table `{}`: {n} difference{}", self.table, if n == 1 { "" } else { "s" })?;
        let mut rows = vec![["change".to_owned(), "detail".to_owned(), "applied by".to_owned()]];
        rows.extend(self.changes.iter().map(TableChange::row));
        let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
        let (w0, w1) = (width(0), width(1));
        for [what, detail, how] in &rows {
            writeln!(f, "  {what:<w0$}  {detail:<w1$}  {how}")?;
        }
        Ok(())
    }
}

/// Every key attribute with its role, in order (true for a partition key attribute).
fn elements(schema: &[KeySchemaElement]) -> Vec<(String, bool)> {
    schema.iter().map(|e| (e.attribute_name().to_owned(), *e.key_type() == KeyType::Hash)).collect()
}

/// The declared attributes of a key of one partition and one sort attribute.
fn pair(pk: &str, sk: Option<&str>) -> Vec<(String, bool)> {
    std::iter::once((pk.to_owned(), true)).chain(sk.map(|s| (s.to_owned(), false))).collect()
}

/// The layout differences of `table` from `T`: key schemas, missing and undeclared indexes
/// (`delete_undeclared`: the undeclared global secondary indexes are to be deleted), vector
/// indexes.
pub(super) fn layout<T: Table>(
    table: &TableDescription,
    delete_undeclared: bool,
    changes: &mut Vec<TableChange>,
) {
    let mut mismatch = |reason| changes.push(TableChange::Mismatch { reason });
    let declared = pair(T::PK, T::SK);
    let found = elements(table.key_schema());
    if found != declared {
        mismatch(Why::KeySchema { index: None, found, declared });
    }
    for index in T::INDEXES {
        let live =
            table.global_secondary_indexes().iter().find(|g| g.index_name() == Some(index.name));
        let Some(live) = live else {
            changes.push(TableChange::CreateIndex { index: index.name.to_owned() });
            continue;
        };
        let declared: Vec<(String, bool)> = if index.is_multi() {
            let pk = index.pk_attrs.iter().map(|a| (a.name.to_owned(), true));
            pk.chain(index.sk_attrs.iter().map(|a| (a.name.to_owned(), false))).collect()
        } else {
            pair(index.pk, index.sk)
        };
        let found = elements(live.key_schema());
        if found != declared {
            let index = Some(index.name.to_owned());
            changes
                .push(TableChange::Mismatch { reason: Why::KeySchema { index, found, declared } });
        }
    }
    for live in table.global_secondary_indexes() {
        let name = live.index_name().unwrap_or_default();
        if !T::INDEXES.iter().any(|i| i.name == name) {
            changes.push(if delete_undeclared {
                TableChange::DeleteIndex { index: name.to_owned() }
            } else {
                TableChange::UndeclaredIndex { index: name.to_owned(), vector: false }
            });
        }
    }
    for index in T::VECTOR_INDEXES {
        let found = table.vector_indexes().iter().find(|v| v.index_name() == Some(index.name));
        let Some(found) = found else {
            changes.push(TableChange::CreateVectorIndex { index: index.name.to_owned() });
            continue;
        };
        let present = VectorLayout {
            attribute: found.vector_attribute().map(|a| a.attribute_name().to_owned()),
            dimensions: found.dimensions(),
            metric: found.distance_function().map(|m| m.as_str().to_owned()),
            search_schema: found
                .search_schema()
                .iter()
                .map(|e| {
                    (
                        e.attribute_name().to_owned(),
                        e.search_schema_element_type().as_str().to_owned(),
                    )
                })
                .collect(),
        };
        let mut schema = match (index.by_type, T::TYPE_ATTR) {
            (true, Some(type_attr)) => vec![(type_attr, "HASH")],
            _ => Vec::new(),
        };
        schema.extend(index.filters.iter().map(|f| (f.name, "INLINE_FILTER")));
        let declared = VectorLayout {
            attribute: Some(index.attr.to_owned()),
            dimensions: Some(i64::from(index.dims)),
            metric: Some(index.metric.as_str().to_owned()),
            search_schema: schema.iter().map(|(a, k)| ((*a).to_owned(), (*k).to_owned())).collect(),
        };
        if present != declared {
            let (index, found, declared) =
                (index.name.to_owned(), Box::new(present), Box::new(declared));
            changes.push(TableChange::Mismatch {
                reason: Why::VectorIndex { index, found, declared },
            });
        }
    }
    for live in table.vector_indexes() {
        let name = live.index_name().unwrap_or_default();
        if !T::VECTOR_INDEXES.iter().any(|i| i.name == name) {
            changes.push(TableChange::UndeclaredIndex { index: name.to_owned(), vector: true });
        }
    }
}

/// The Time to Live difference: nothing when it is enabled (or being enabled) on the declared
/// attribute; a mismatch when it is on another one (the service allows one per table) or
/// being disabled (the service refuses to enable it again for a while); else to enable.
pub(super) fn ttl<T: Table>(live: Option<&TimeToLiveDescription>, changes: &mut Vec<TableChange>) {
    let Some(attr) = T::TTL else { return };
    let found = live.and_then(|d| d.attribute_name()).map(str::to_owned);
    let declared = attr.to_owned();
    let reason = match live.and_then(|d| d.time_to_live_status()) {
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
            if found.as_deref() == Some(attr) =>
        {
            return;
        }
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling) => {
            Why::TtlAttribute { found, declared }
        }
        Some(TimeToLiveStatus::Disabling) => Why::TtlDisabling { found, declared },
        _ => return changes.push(TableChange::EnableTtl { attribute: declared }),
    };
    changes.push(TableChange::Mismatch { reason });
}

/// What the live table has of the settings a sync compares (`None`: not read, as the
/// options do not manage it).
#[derive(Debug, Default)]
pub(super) struct LiveSettings {
    pub pitr: Option<bool>,
    pub tags: Option<BTreeMap<String, String>>,
    pub policy: Option<Option<String>>,
}

/// The settings differences of `table` (and `live`, the settings read besides
/// `DescribeTable`) from `options`, in the order they are applied.
pub(super) fn settings(
    options: &TableOptions,
    table: &TableDescription,
    live: &LiveSettings,
    changes: &mut Vec<TableChange>,
) {
    if let Some(enabled) = options.deletion_protection
        && table.deletion_protection_enabled().unwrap_or(false) != enabled
    {
        changes.push(TableChange::DeletionProtection { enabled });
    }
    if let Some(declared) = options.max_on_demand {
        // The service reports "no maximum" as -1, or leaves it out.
        let set = |v: Option<i64>| v.filter(|v| *v > 0);
        let live = table.on_demand_throughput();
        let found = live.map(|m| OnDemandMax {
            max_read_request_units: set(m.max_read_request_units()),
            max_write_request_units: set(m.max_write_request_units()),
        });
        if found.unwrap_or_default() != declared {
            changes.push(TableChange::OnDemandMax { found, declared });
        }
    }
    if let Some(declared) = options.stream {
        let spec = table.stream_specification().filter(|s| s.stream_enabled());
        let found =
            spec.and_then(|s| s.stream_view_type()).and_then(|v| ViewType::parse(v.as_str()));
        if found != declared {
            changes.push(TableChange::Stream { found, declared });
        }
    }
    if let (Some(enabled), Some(found)) = (options.point_in_time_recovery, live.pitr)
        && enabled != found
    {
        changes.push(TableChange::PointInTimeRecovery { enabled });
    }
    if let (Some(declared), Some(found)) = (&options.tags, &live.tags) {
        for (key, value) in declared {
            if found.get(key) != Some(value) {
                let (key, found) = (key.clone(), found.get(key).cloned());
                changes.push(TableChange::Tag { key, found, declared: Some(value.clone()) });
            }
        }
        for (key, value) in found {
            if !declared.contains_key(key) {
                let (key, found) = (key.clone(), Some(value.clone()));
                changes.push(TableChange::Tag { key, found, declared: None });
            }
        }
    }
    if let (Some(declared), Some(found)) = (&options.resource_policy, &live.policy) {
        // Compared as JSON: the service may store the document with other white space.
        let parse =
            |d: &Option<String>| d.as_deref().map(serde_json::from_str::<serde_json::Value>);
        let same = match (parse(declared), parse(found)) {
            (Some(Ok(a)), Some(Ok(b))) => a == b,
            (None, None) => true,
            _ => false,
        };
        if !same {
            changes.push(TableChange::ResourcePolicy { declared: declared.clone() });
        }
    }
}
