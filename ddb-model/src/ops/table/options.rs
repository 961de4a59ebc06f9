//! The options [`Db::create_table`](crate::Db::create_table) sets on a table it creates and
//! [`Db::sync_table`](crate::Db::sync_table) keeps on a live one: deletion protection, warm
//! throughput and on-demand maxima, point-in-time recovery, the stream, tags and the resource
//! policy; checked against the service's limits and converted to the SDK's types.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, RequestProblem, TagProblem};
use crate::model::Table;

/// The most tags a table takes (besides the `aws:` ones the service assigns).
pub const MAX_TAGS: usize = 50;
/// The longest tag key, in Unicode characters.
pub const MAX_TAG_KEY_CHARS: usize = 128;
/// The longest tag value, in Unicode characters.
pub const MAX_TAG_VALUE_CHARS: usize = 256;
/// The largest resource policy document, in bytes (whitespace counts).
pub const MAX_POLICY_BYTES: usize = 20 * 1024;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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

/// What a stream keeps of each changed item: its `StreamViewType` (set with
/// [`TableOptions::stream`], read from records as [`stream::ViewType`](crate::stream::ViewType)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ViewType {
    /// `KEYS_ONLY`: the keys, no image.
    #[serde(rename = "KEYS_ONLY")]
    KeysOnly,
    /// `NEW_IMAGE`: the item after the change.
    #[serde(rename = "NEW_IMAGE")]
    NewImage,
    /// `OLD_IMAGE`: the item before the change.
    #[serde(rename = "OLD_IMAGE")]
    OldImage,
    /// `NEW_AND_OLD_IMAGES`: both.
    #[serde(rename = "NEW_AND_OLD_IMAGES")]
    NewAndOldImages,
}

impl ViewType {
    const ALL: [ViewType; 4] =
        [ViewType::KeysOnly, ViewType::NewImage, ViewType::OldImage, ViewType::NewAndOldImages];

    /// The value the service names `name`, `None` for another text.
    pub fn parse(name: &str) -> Option<ViewType> {
        ViewType::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// The name the service writes.
    pub fn as_str(self) -> &'static str {
        match self {
            ViewType::KeysOnly => "KEYS_ONLY",
            ViewType::NewImage => "NEW_IMAGE",
            ViewType::OldImage => "OLD_IMAGE",
            ViewType::NewAndOldImages => "NEW_AND_OLD_IMAGES",
        }
    }

    pub(super) fn sdk(self) -> aws_sdk_dynamodb::types::StreamViewType {
        aws_sdk_dynamodb::types::StreamViewType::from(self.as_str())
    }
}

/// The settings of a table besides its layout: what [`Db::create_table`](crate::Db::create_table)
/// sets on a table it creates, and what [`Db::sync_table`](crate::Db::sync_table) compares with
/// (and applies to) a live one. A setting left `None` is not managed: a created table gets the
/// service's default, a synced one keeps what it has.
///
/// ```
/// use ddb_model::ops::{TableOptions, ViewType};
///
/// let options = TableOptions::default()
///     .point_in_time_recovery(true)
///     .stream(ViewType::NewAndOldImages)
///     .tag("team", "orders")
///     .deletion_protection(true);
/// assert_eq!(options.tags.as_ref().map(|t| t.len()), Some(1));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableOptions {
    /// The table cannot be deleted while this is on.
    pub deletion_protection: Option<bool>,
    /// The table's warm throughput (at creation only: the service reports none to compare
    /// with on the endpoints the tests reach, and only raises it).
    pub warm_throughput: Option<WarmThroughput>,
    /// The table's on-demand maximum.
    pub max_on_demand: Option<OnDemandMax>,
    /// Per index (by name): its warm throughput and on-demand maximum (at creation only).
    pub indexes: Vec<IndexOptions>,
    /// Point-in-time recovery on or off (`UpdateContinuousBackups`, once the table is active).
    pub point_in_time_recovery: Option<bool>,
    /// The stream: `Some(Some(view))` on with that view type, `Some(None)` off.
    pub stream: Option<Option<ViewType>>,
    /// Every tag of the table (a synced table loses the tags not listed; the `aws:` ones the
    /// service assigns are left alone).
    pub tags: Option<BTreeMap<String, String>>,
    /// The resource-based policy (a JSON document): `Some(None)` for none.
    pub resource_policy: Option<Option<String>>,
}

impl TableOptions {
    /// Turns deletion protection on (or off): `DeleteTable` fails while it is on.
    #[must_use]
    pub fn deletion_protection(mut self, on: bool) -> Self {
        self.deletion_protection = Some(on);
        self
    }

    /// The table's warm throughput (at least 12,000 reads and 4,000 writes per second).
    #[must_use]
    pub fn warm_throughput(mut self, warm: WarmThroughput) -> Self {
        self.warm_throughput = Some(warm);
        self
    }

    /// The table's on-demand maximum (at least 1 each).
    #[must_use]
    pub fn max_on_demand(mut self, max: OnDemandMax) -> Self {
        self.max_on_demand = Some(max);
        self
    }

    /// The warm throughput of index `name` (one the table declares).
    #[must_use]
    pub fn index_warm_throughput(mut self, name: &str, warm: WarmThroughput) -> Self {
        self.set_index(name, |i| i.warm_throughput = Some(warm));
        self
    }

    /// The on-demand maximum of index `name` (one the table declares).
    #[must_use]
    pub fn index_max_on_demand(mut self, name: &str, max: OnDemandMax) -> Self {
        self.set_index(name, |i| i.max_on_demand = Some(max));
        self
    }

    /// Turns point-in-time recovery on (or off).
    #[must_use]
    pub fn point_in_time_recovery(mut self, on: bool) -> Self {
        self.point_in_time_recovery = Some(on);
        self
    }

    /// Turns the table's stream on, keeping `view` of each change.
    #[must_use]
    pub fn stream(mut self, view: ViewType) -> Self {
        self.stream = Some(Some(view));
        self
    }

    /// Turns the table's stream off.
    #[must_use]
    pub fn no_stream(mut self) -> Self {
        self.stream = Some(None);
        self
    }

    /// Adds tag `key` with `value` (the table's tags become managed: see
    /// [`tags`](TableOptions::tags)).
    #[must_use]
    pub fn tag(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.tags.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
        self
    }

    /// The table has no tags of its own (a synced table loses its tags).
    #[must_use]
    pub fn no_tags(mut self) -> Self {
        self.tags = Some(BTreeMap::new());
        self
    }

    /// The table's resource-based policy, a JSON document of at most 20 KB.
    #[must_use]
    pub fn resource_policy(mut self, document: impl Into<String>) -> Self {
        self.resource_policy = Some(Some(document.into()));
        self
    }

    /// The table has no resource-based policy (a synced table loses its policy).
    #[must_use]
    pub fn no_resource_policy(mut self) -> Self {
        self.resource_policy = Some(None);
        self
    }
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
    pub(super) fn set_index(&mut self, name: &str, change: impl FnOnce(&mut IndexOptions)) {
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
        for (key, value) in self.tags.iter().flatten() {
            check_tag(key, value)?;
        }
        if let Some(tags) = &self.tags
            && tags.len() > MAX_TAGS
        {
            let problem = TagProblem::TooMany { count: tags.len(), max: MAX_TAGS };
            return Err(tag_error(tags.keys().nth(MAX_TAGS).cloned().unwrap_or_default(), problem));
        }
        if let Some(Some(policy)) = &self.resource_policy {
            let path = "ResourcePolicy".to_owned();
            if policy.len() > MAX_POLICY_BYTES {
                let problem =
                    RequestProblem::PolicyTooLarge { bytes: policy.len(), max: MAX_POLICY_BYTES };
                return Err(Error::InvalidRequest { path, problem });
            }
            if let Err(e) = serde_json::from_str::<serde_json::Value>(policy) {
                let problem = RequestProblem::PolicyNotJson { line: e.line(), column: e.column() };
                return Err(Error::InvalidRequest { path, problem });
            }
        }
        Ok(())
    }

    pub(super) fn index(&self, name: &str) -> Option<&IndexOptions> {
        self.indexes.iter().find(|i| i.name == name)
    }
}

fn tag_error(key: String, problem: TagProblem) -> Error {
    Error::InvalidRequest {
        path: format!("Tags[{key}]"),
        problem: RequestProblem::Tag { key, problem },
    }
}

/// A tag as the service documents them: a key of 1 to 128 characters that does not start
/// with `aws:`, a value of up to 256, both of letters, digits, white space and `+ - = . _ : /`.
fn check_tag(key: &str, value: &str) -> Result<(), Error> {
    let fail = |problem| Err(tag_error(key.to_owned(), problem));
    let chars = key.chars().count();
    if chars == 0 || chars > MAX_TAG_KEY_CHARS {
        return fail(TagProblem::KeyLength { chars, max: MAX_TAG_KEY_CHARS });
    }
    let chars = value.chars().count();
    if chars > MAX_TAG_VALUE_CHARS {
        return fail(TagProblem::ValueLength { chars, max: MAX_TAG_VALUE_CHARS });
    }
    if key.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("aws:")) {
        return fail(TagProblem::ReservedPrefix);
    }
    let allowed = |c: char| c.is_alphanumeric() || c.is_whitespace() || "+-=._:/".contains(c);
    if let Some(character) = key.chars().chain(value.chars()).find(|c| !allowed(*c)) {
        return fail(TagProblem::Character { character });
    }
    Ok(())
}

pub(super) fn warm(w: &WarmThroughput) -> Option<aws_sdk_dynamodb::types::WarmThroughput> {
    (w.read_units_per_second.is_some() || w.write_units_per_second.is_some()).then(|| {
        aws_sdk_dynamodb::types::WarmThroughput::builder()
            .set_read_units_per_second(w.read_units_per_second)
            .set_write_units_per_second(w.write_units_per_second)
            .build()
    })
}

pub(super) fn on_demand(m: &OnDemandMax) -> Option<aws_sdk_dynamodb::types::OnDemandThroughput> {
    (m.max_read_request_units.is_some() || m.max_write_request_units.is_some()).then(|| {
        aws_sdk_dynamodb::types::OnDemandThroughput::builder()
            .set_max_read_request_units(m.max_read_request_units)
            .set_max_write_request_units(m.max_write_request_units)
            .build()
    })
}
