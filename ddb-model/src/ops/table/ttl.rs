//! Time to Live: enabling the service's expiry on the attribute the table declares.

use crate::db::Db;
use crate::error::{Error, TableMismatchReason};
use crate::model::Table;
use crate::ops::retry;
use crate::stats::Op;

impl<T: Table> Db<T> {
    /// Enables Time to Live on the table's expiry attribute ([`Table::TTL`]), after checking
    /// with `DescribeTimeToLive` what the table has: nothing to do when it is enabled (or
    /// being enabled) on that attribute; [`Error::TableMismatch`] when it is on another one
    /// (the service allows one per table) or being disabled (the service refuses to enable
    /// it again for a while); else one `UpdateTimeToLive`.
    pub(super) async fn enable_ttl(&self) -> Result<(), Error> {
        use aws_sdk_dynamodb::types::{TimeToLiveSpecification, TimeToLiveStatus};
        let Some(attr) = T::TTL else { return Ok(()) };
        let mismatch =
            |reason| Error::TableMismatch { table: self.table_name().to_owned(), reason };
        let request = self.client().describe_time_to_live().table_name(self.table_name());
        let out = retry::send(self, Op::DescribeTimeToLive, request).await?;
        let current = out.time_to_live_description();
        let status = current.and_then(|d| d.time_to_live_status());
        let current_attr = current.and_then(|d| d.attribute_name());
        match status {
            Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling) => {
                return if current_attr == Some(attr) {
                    Ok(())
                } else {
                    let found = current_attr.map(str::to_owned);
                    Err(mismatch(TableMismatchReason::TtlAttribute { found, declared: attr }))
                };
            }
            Some(TimeToLiveStatus::Disabling) => {
                let found = current_attr.map(str::to_owned);
                return Err(mismatch(TableMismatchReason::TtlDisabling { found, declared: attr }));
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
        retry::send(self, Op::UpdateTimeToLive, request).await?;
        Ok(())
    }
}
