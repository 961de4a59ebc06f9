//! Lifecycle timestamps: the `created_at` / `updated_at` fields that every write maintains
//! (`#[entity(created_at = field, updated_at = field)]`), and the field types that can hold
//! them ([`TimestampField`]).

use std::time::{SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;

use crate::error::Error;

/// The timestamp fields of an entity: their stored attribute names (after serde renames).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TimestampsDef {
    /// The field set when the item is first written, and kept afterwards.
    pub created: Option<&'static str>,
    /// The field set by every write.
    pub updated: Option<&'static str>,
}

impl TimestampsDef {
    /// No timestamp fields.
    pub const NONE: TimestampsDef = TimestampsDef { created: None, updated: None };

    /// True when the entity has a timestamp field.
    pub const fn any(&self) -> bool {
        self.created.is_some() || self.updated.is_some()
    }
}

/// The time of one write and whether it writes a new item: what the timestamp fields are set
/// from. Made by the write from its [`Db`](crate::Db)'s clock ([`Db::with_clock`](crate::Db::with_clock)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The time of the write.
    pub now: SystemTime,
    /// The write creates the item (`create`, a tree insert, an edge link): `created_at` is
    /// set to `now` whatever the value holds. Otherwise `created_at` keeps the value's own
    /// time, and is set to `now` only when the field is unset ([`TimestampField::is_unset`]).
    pub creates: bool,
}

/// A field type that can hold a lifecycle timestamp.
///
/// | type | stored as | unset |
/// | --- | --- | --- |
/// | `std::time::SystemTime` | serde's `{secs_since_epoch, nanos_since_epoch}` map | `UNIX_EPOCH` |
/// | `i64`, `u64` | a Number: milliseconds since the Unix epoch | `0` |
/// | `chrono::DateTime<Utc>` (feature `chrono`) | an RFC 3339 string | the epoch (its `Default`) |
/// | `Option<T>` of one of these | `T`'s form, or no attribute | `None` |
///
/// "Unset" is the value of a struct built without a time (`Default`, `0`, `None`): a
/// whole-item write that does not create sets `created_at` from its clock only then.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a timestamp field",
    label = "`created_at` / `updated_at` need a time type",
    note = "use `std::time::SystemTime`, `chrono::DateTime<Utc>` (feature `chrono`), or `i64` / `u64` milliseconds since the Unix epoch, or an `Option` of one"
)]
pub trait TimestampField: Serialize + Sized {
    /// The field's value at `time`; `None` when the type cannot hold it (a time before the
    /// epoch in a `u64`).
    fn from_time(time: SystemTime) -> Option<Self>;
    /// True for the value of a struct built without a time.
    fn is_unset(&self) -> bool;
}

/// `time` as signed milliseconds since the Unix epoch.
fn epoch_millis(time: SystemTime) -> Option<i64> {
    match time.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).ok(),
        Err(e) => i64::try_from(e.duration().as_millis()).ok().map(|m| -m),
    }
}

impl TimestampField for SystemTime {
    fn from_time(time: SystemTime) -> Option<Self> {
        // Serde refuses to serialize a time before the epoch.
        time.duration_since(UNIX_EPOCH).ok().map(|_| time)
    }
    fn is_unset(&self) -> bool {
        *self == UNIX_EPOCH
    }
}

impl TimestampField for i64 {
    fn from_time(time: SystemTime) -> Option<Self> {
        epoch_millis(time)
    }
    fn is_unset(&self) -> bool {
        *self == 0
    }
}

impl TimestampField for u64 {
    fn from_time(time: SystemTime) -> Option<Self> {
        epoch_millis(time).and_then(|m| u64::try_from(m).ok())
    }
    fn is_unset(&self) -> bool {
        *self == 0
    }
}

#[cfg(feature = "chrono")]
impl TimestampField for chrono::DateTime<chrono::Utc> {
    fn from_time(time: SystemTime) -> Option<Self> {
        Some(chrono::DateTime::<chrono::Utc>::from(time))
    }
    fn is_unset(&self) -> bool {
        self.timestamp() == 0 && self.timestamp_subsec_nanos() == 0
    }
}

impl<T: TimestampField> TimestampField for Option<T> {
    fn from_time(time: SystemTime) -> Option<Self> {
        T::from_time(time).map(Some)
    }
    fn is_unset(&self) -> bool {
        self.is_none()
    }
}

/// The value a timestamp field takes in a write of `stamp`: `None` when the field keeps its
/// value (`created_at` of a value that holds one, in a write that does not create).
#[doc(hidden)]
pub fn stamped<E: crate::model::Entity, T: TimestampField>(
    current: &T,
    stamp: Stamp,
    created: bool,
) -> Result<Option<T>, Error> {
    if created && !stamp.creates && !current.is_unset() {
        return Ok(None);
    }
    T::from_time(stamp.now).map(Some).ok_or_else(|| out_of_range::<E>(stamp.now))
}

/// The stored attribute value of a timestamp field of type `T` at `stamp`'s time.
#[doc(hidden)]
pub fn stamp_now<E: crate::model::Entity, T: TimestampField>(
    stamp: Stamp,
) -> Result<AttributeValue, Error> {
    let value = T::from_time(stamp.now).ok_or_else(|| out_of_range::<E>(stamp.now))?;
    stamp_value::<E, T>(&value)
}

/// The stored attribute value of a timestamp field's value.
#[doc(hidden)]
pub fn stamp_value<E: crate::model::Entity, T: TimestampField>(
    value: &T,
) -> Result<AttributeValue, Error> {
    crate::item::to_value(value)
        .map_err(|source| Error::Serialize { entity: E::NAME.to_owned(), source })
}

fn out_of_range<E: crate::model::Entity>(now: SystemTime) -> Error {
    let secs = |d: std::time::Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
    let seconds = match now.duration_since(UNIX_EPOCH) {
        Ok(d) => secs(d),
        Err(e) => -secs(e.duration()),
    };
    Error::InvalidRequest {
        path: String::new(),
        problem: crate::error::RequestProblem::ClockOutOfRange { entity: E::NAME, seconds },
    }
}

/// A clock: what [`Db::with_clock`](crate::Db::with_clock) takes.
pub(crate) type Clock = std::sync::Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The system clock.
pub(crate) fn system_clock() -> Clock {
    std::sync::Arc::new(SystemTime::now)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn integers_hold_epoch_milliseconds() {
        let t = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        assert_eq!(i64::from_time(t), Some(1_700_000_000_123));
        assert_eq!(u64::from_time(t), Some(1_700_000_000_123));
        let before = UNIX_EPOCH - Duration::from_millis(5);
        assert_eq!(i64::from_time(before), Some(-5));
        assert_eq!(u64::from_time(before), None);
        assert_eq!(SystemTime::from_time(before), None);
        assert!(0i64.is_unset() && !1u64.is_unset() && None::<u64>.is_unset());
        assert!(UNIX_EPOCH.is_unset() && !t.is_unset());
    }
}
