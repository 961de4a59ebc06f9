//! Expiry times (DynamoDB's Time to Live): the field named by `#[entity(ttl = field)]`, stored
//! as a Number of whole seconds since the Unix epoch whatever its Rust type
//! ([`ExpiryField`]), in the one attribute the table declares (`#[table(ttl = "..")]`).
//!
//! The service deletes an expired item in the background, typically within a few days of its
//! expiry; until then reads would return it. The library's reads hide it: an item is expired
//! when its attribute holds a number **less than** the reading handle's clock in whole seconds
//! (the service's own rule), and absent, non-numeric or `NULL` attributes never expire.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, RequestProblem};
use crate::expr::Expiry;
use crate::item::Item;

/// The latest expiry time, in seconds since the Unix epoch: 9999-12-31T23:59:59Z. A later
/// value is refused before anything is sent: it is most likely milliseconds, which the
/// service would read as a date tens of thousands of years away and never expire.
pub const MAX_EXPIRY_SECS: i64 = 253_402_300_799;

/// A field type that can hold an expiry time (`#[entity(ttl = field)]`).
///
/// | type | in Rust | `None` |
/// | --- | --- | --- |
/// | `std::time::SystemTime` | an instant (the sub-second part is dropped when stored) | |
/// | `chrono::DateTime<Utc>` (feature `chrono`) | an instant (likewise) | |
/// | `i64`, `u64` | whole seconds since the Unix epoch | |
/// | `Option<T>` of one of these | | never expires: the attribute is absent |
///
/// Whatever the type, the item stores a Number of whole seconds since the epoch, which is
/// what the service's Time to Live reads, and a read converts it back. Instants before the
/// epoch and after [`MAX_EXPIRY_SECS`] are refused with
/// [`RequestProblem::ExpiryOutOfRange`] and nothing is sent.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use std::time::{Duration, UNIX_EPOCH};
/// use ddb_model::{Entity, Table, local};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Table)]
/// #[table(name = "app", ttl = "expires")]
/// struct App;
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(table = App, pk = "SESSION#<id>", sk = "SESSION", ttl = expires)]
/// struct Session { id: String, expires: std::time::SystemTime }
///
/// let now = UNIX_EPOCH + Duration::from_secs(2_000_000_000);
/// let db = local::isolated_db::<App>().await?.with_clock(move || now);
/// let expires = now + Duration::from_secs(3600);
/// Session { id: "s".into(), expires }.put(&db).await?;
/// assert!(Session::get(&db, "s").await?.is_some());
/// // An hour later (and a second), it reads as absent until the service deletes it.
/// let later = db.clone().with_clock(move || expires + Duration::from_secs(1));
/// assert!(Session::get(&later, "s").await?.is_none());
/// assert!(Session::get(&later, "s").include_expired().await?.is_some());
/// # Ok(()) }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an expiry (TTL) field",
    label = "`ttl` needs a time type",
    note = "use `std::time::SystemTime`, `chrono::DateTime<Utc>` (feature `chrono`), or `i64` / `u64` seconds since the Unix epoch, or an `Option` of one (`None`: never expires)"
)]
pub trait ExpiryField: Serialize + DeserializeOwned + Sized {
    /// The expiry in whole seconds since the epoch (`Ok(None)`: never expires), or
    /// `Err(seconds)` when it is out of range (before the epoch, after [`MAX_EXPIRY_SECS`]).
    fn expiry_secs(&self) -> Result<Option<i64>, i128>;
    /// The value of a stored expiry of `secs` seconds since the epoch (`None` when the type
    /// cannot hold it).
    fn from_expiry_secs(secs: i64) -> Option<Self>;
}

fn in_range(secs: i128) -> Result<Option<i64>, i128> {
    match i64::try_from(secs) {
        Ok(s) if (0..=MAX_EXPIRY_SECS).contains(&s) => Ok(Some(s)),
        _ => Err(secs),
    }
}

impl ExpiryField for SystemTime {
    fn expiry_secs(&self) -> Result<Option<i64>, i128> {
        match self.duration_since(UNIX_EPOCH) {
            Ok(d) => in_range(i128::from(d.as_secs())),
            // Before the epoch: whole seconds towards the past (floor).
            Err(e) => {
                let d = e.duration();
                let secs = i128::from(d.as_secs()) + i128::from(d.subsec_nanos() > 0);
                Err(-secs)
            }
        }
    }
    fn from_expiry_secs(secs: i64) -> Option<Self> {
        let secs = u64::try_from(secs).ok()?;
        UNIX_EPOCH.checked_add(Duration::from_secs(secs))
    }
}

impl ExpiryField for i64 {
    fn expiry_secs(&self) -> Result<Option<i64>, i128> {
        in_range(i128::from(*self))
    }
    fn from_expiry_secs(secs: i64) -> Option<Self> {
        Some(secs)
    }
}

impl ExpiryField for u64 {
    fn expiry_secs(&self) -> Result<Option<i64>, i128> {
        in_range(i128::from(*self))
    }
    fn from_expiry_secs(secs: i64) -> Option<Self> {
        u64::try_from(secs).ok()
    }
}

#[cfg(feature = "chrono")]
impl ExpiryField for chrono::DateTime<chrono::Utc> {
    fn expiry_secs(&self) -> Result<Option<i64>, i128> {
        in_range(i128::from(self.timestamp()))
    }
    fn from_expiry_secs(secs: i64) -> Option<Self> {
        chrono::DateTime::<chrono::Utc>::from_timestamp(secs, 0)
    }
}

impl<T: ExpiryField> ExpiryField for Option<T> {
    fn expiry_secs(&self) -> Result<Option<i64>, i128> {
        match self {
            Some(t) => t.expiry_secs(),
            None => Ok(None),
        }
    }
    fn from_expiry_secs(secs: i64) -> Option<Self> {
        T::from_expiry_secs(secs).map(Some)
    }
}

/// The expiry attribute of an entity (`#[entity(ttl = field)]`): its name, which is the
/// table's [`Table::TTL`](crate::Table::TTL), and the conversions between the field's serde
/// form and the stored seconds. Made by the derive with [`TtlDef::of`].
#[derive(Clone, Copy)]
pub struct TtlDef {
    /// The stored attribute name.
    pub attr: &'static str,
    decode: fn(AttributeValue) -> Result<AttributeValue, serde_dynamo::Error>,
}

impl std::fmt::Debug for TtlDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TtlDef").field("attr", &self.attr).finish_non_exhaustive()
    }
}

impl TtlDef {
    /// The expiry attribute `attr`, held in a field of type `T`.
    pub const fn of<T: ExpiryField>(attr: &'static str) -> TtlDef {
        TtlDef { attr, decode: decode::<T> }
    }

    /// The expiry attribute `attr`, read back with `fns` (what the derive generates).
    #[doc(hidden)]
    pub const fn with<T>(attr: &'static str, fns: TtlFns<T>) -> TtlDef {
        TtlDef { attr, decode: fns.decode }
    }

    /// Replaces the field's serde form in `item` by `secs`, the stored seconds (removes it
    /// when the value never expires).
    pub(crate) fn encode_item(&self, item: &mut Item, secs: Option<i64>) {
        item.remove(self.attr);
        if let Some(secs) = secs {
            item.insert(self.attr.to_owned(), AttributeValue::N(secs.to_string()));
        }
    }

    /// Replaces the stored seconds in `item` by the field's serde form.
    pub(crate) fn decode_item(&self, item: &mut Item) -> Result<(), serde_dynamo::Error> {
        if let Some(value) = item.remove(self.attr) {
            item.insert(self.attr.to_owned(), (self.decode)(value)?);
        }
        Ok(())
    }
}

/// The conversions of an expiry field of type `T`, for the derive: every use goes through
/// one `ttl_fns::<T>()`, so a type that is no [`ExpiryField`] is one error at the field.
#[doc(hidden)]
pub struct TtlFns<T> {
    /// What a whole-item write stores: whole seconds, `None` for never, or the typed error
    /// of a value out of range.
    pub secs: fn(&'static str, &T) -> Result<Option<i64>, Error>,
    decode: fn(AttributeValue) -> Result<AttributeValue, serde_dynamo::Error>,
}

#[doc(hidden)]
pub const fn ttl_fns<T: ExpiryField>() -> TtlFns<T> {
    TtlFns { secs: expiry_secs::<T>, decode: decode::<T> }
}

/// The seconds a whole-item write stores for the expiry field `attr` holding `value`
/// (`None`: never expires), or the typed error of a value out of range.
fn expiry_secs<T: ExpiryField>(attr: &'static str, value: &T) -> Result<Option<i64>, Error> {
    let invalid =
        |seconds| Error::InvalidRequest { path: attr.into(), problem: out_of_range(seconds) };
    value.expiry_secs().map_err(invalid)
}

/// `seconds` within `i64`'s range.
fn saturate(seconds: i128) -> i64 {
    i64::try_from(seconds).unwrap_or(if seconds < 0 { i64::MIN } else { i64::MAX })
}

fn out_of_range(seconds: i128) -> RequestProblem {
    RequestProblem::ExpiryOutOfRange { seconds: saturate(seconds), max: MAX_EXPIRY_SECS }
}

fn decode<T: ExpiryField>(value: AttributeValue) -> Result<AttributeValue, serde_dynamo::Error> {
    use serde::de::Error as _;
    let secs = match &value {
        AttributeValue::N(n) => parse_secs(n),
        // `None` of an `Option` field written by another program.
        AttributeValue::Null(_) => return Ok(value),
        _ => None,
    };
    let time = secs.and_then(T::from_expiry_secs).ok_or_else(|| {
        serde_dynamo::Error::custom(format!(
            "the expiry attribute holds {value:?}, not a number of seconds since the Unix epoch that the field can hold"
        ))
    })?;
    crate::item::to_value(&time)
}

/// Whole seconds of a stored number: an integer, or the floor of a decimal (the service
/// expires decimals too).
pub(crate) fn parse_secs(n: &str) -> Option<i64> {
    if let Ok(s) = n.trim().parse::<i64>() {
        return Some(s);
    }
    let f = n.trim().parse::<f64>().ok()?.floor();
    // `as` saturates; the range check keeps only values an i64 holds exactly enough.
    (f.is_finite() && f.abs() < 9.0e18).then_some(f as i64)
}

/// `now` in whole seconds since the epoch (negative before it).
pub(crate) fn now_secs(now: SystemTime) -> i64 {
    match now.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_secs()).map_or(i64::MIN, |s| -s),
    }
}

/// True when `item` is expired at `now` (seconds): its `attr` holds a number less than
/// `now`. Absent, non-numeric and `NULL` attributes never expire.
pub(crate) fn is_expired(item: &Item, attr: &str, now: i64) -> bool {
    match item.get(attr) {
        Some(AttributeValue::N(n)) => parse_secs(n).is_some_and(|s| s < now),
        _ => false,
    }
}

fn arg<T: ExpiryField>(value: &T) -> Result<AttributeValue, serde_dynamo::Error> {
    use serde::ser::Error as _;
    // Stored as a Number of seconds.
    match value.expiry_secs() {
        Ok(Some(secs)) => Ok(AttributeValue::N(secs.to_string())),
        // A `None` expiry: what `remove` does is what "never expires" is.
        Ok(None) => Err(serde_dynamo::Error::custom(
            "an expiry of `None` is no value: clear the attribute with `remove` instead",
        )),
        Err(seconds) => Err(serde_dynamo::Error::custom(out_of_range(seconds).to_string())),
    }
}

impl<T: ExpiryField> crate::expr::ValueArg<Expiry<T>> for T {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        arg(self)
    }
}

impl<T: ExpiryField> crate::expr::ValueArg<Expiry<T>> for &T {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        arg(*self)
    }
}

impl<T: ExpiryField> crate::expr::ValueArg<Expiry<Option<T>>> for T {
    fn to_attribute_value(&self) -> Result<AttributeValue, serde_dynamo::Error> {
        arg(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_trip_and_range() {
        let t = UNIX_EPOCH + Duration::from_millis(1_800_000_000_999);
        assert_eq!(t.expiry_secs(), Ok(Some(1_800_000_000)));
        assert_eq!(
            SystemTime::from_expiry_secs(1_800_000_000),
            Some(t - Duration::from_millis(999))
        );
        assert_eq!((UNIX_EPOCH - Duration::from_millis(1)).expiry_secs(), Err(-1));
        assert_eq!(1_800_000_000_000i64.expiry_secs(), Err(1_800_000_000_000));
        assert_eq!((-1i64).expiry_secs(), Err(-1));
        assert_eq!(MAX_EXPIRY_SECS.expiry_secs(), Ok(Some(MAX_EXPIRY_SECS)));
        assert_eq!(None::<u64>.expiry_secs(), Ok(None));
        assert_eq!(u64::MAX.expiry_secs(), Err(i128::from(u64::MAX)));
    }

    #[test]
    fn expired_is_strictly_before_now() {
        let mut item = Item::new();
        item.insert("ttl".into(), AttributeValue::N("100".into()));
        assert!(!is_expired(&item, "ttl", 100));
        assert!(is_expired(&item, "ttl", 101));
        item.insert("ttl".into(), AttributeValue::N("99.9".into()));
        assert!(is_expired(&item, "ttl", 100));
        item.insert("ttl".into(), AttributeValue::S("1".into()));
        assert!(!is_expired(&item, "ttl", 100));
        assert!(!is_expired(&Item::new(), "ttl", 100));
        assert_eq!(parse_secs("1e3"), Some(1000));
        assert_eq!(parse_secs("NaN"), None);
    }
}
