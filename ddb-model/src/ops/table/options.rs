//! The options [`Db::create_table`](crate::Db::create_table) sets on a table it creates:
//! deletion protection, warm throughput and on-demand maxima, checked against the service's
//! minimums and converted to the SDK's types.

use crate::error::{Error, RequestProblem};
use crate::model::Table;

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

/// What [`Db::create_table`](crate::Db::create_table) sets on a table it creates, besides its layout: deletion
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
        Ok(())
    }

    pub(super) fn index(&self, name: &str) -> Option<&IndexOptions> {
        self.indexes.iter().find(|i| i.name == name)
    }
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
