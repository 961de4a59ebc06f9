//! A UTC time stored as ISO 8601 text with a fixed number of fractional digits (feature
//! `chrono`): what JavaScript libraries write (`2026-01-05T10:00:13.056Z`), in one precision,
//! so that stored times sort as text in time order.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, SecondsFormat, SubsecRound, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::key::{KeyChars, KeyPart, KeyPartError};
use crate::model::TimestampField;

/// A `DateTime<Utc>` kept to `DIGITS` fractional digits of a second (0, 3, 6 or 9; another
/// number does not compile) and stored as ISO 8601 text with exactly that many
/// (`IsoMillis`: `2026-01-05T10:00:13.056Z`), as JavaScript's `Date#toISOString` and the
/// libraries built on it (DynamoDB-Toolbox's `_ct` and `_md`, ElectroDB's date strings)
/// write. chrono's own `DateTime<Utc>` writes as many digits as the value needs, and texts of
/// mixed precision do not sort in time order (`…13Z` after `…13.056Z`).
///
/// A value made from a finer time is truncated (`Iso8601::new`), so what is stored is what
/// the value holds. Reading accepts any RFC 3339 text and truncates it the same way. As a
/// timestamp field (`#[entity(created_at = ..)]`) it holds the write's time, truncated; as a
/// key placeholder it writes `DateTime<Utc>`'s key text, and takes `:iso8601(..)` formats.
///
/// ```
/// use ddb_model::chrono::{TimeZone, Utc};
/// use ddb_model::entity::{IsoMillis, IsoSeconds};
///
/// let t = Utc.timestamp_opt(1_767_607_213, 56_758_219).unwrap();
/// assert_eq!(IsoMillis::new(t).to_string(), "2026-01-05T10:00:13.056Z");
/// assert_eq!(IsoSeconds::new(t).to_string(), "2026-01-05T10:00:13Z");
/// let stored = serde_json::to_string(&IsoMillis::new(t)).unwrap();
/// assert_eq!(stored, "\"2026-01-05T10:00:13.056Z\"");
/// let read: IsoMillis = serde_json::from_str("\"2026-01-05T10:00:13.056758219Z\"").unwrap();
/// assert_eq!(read, IsoMillis::new(t));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Iso8601<const DIGITS: u8>(DateTime<Utc>);

/// Whole seconds: `2026-01-05T10:00:13Z`.
pub type IsoSeconds = Iso8601<0>;
/// Milliseconds: `2026-01-05T10:00:13.056Z`, as JavaScript writes.
pub type IsoMillis = Iso8601<3>;
/// Microseconds: `2026-01-05T10:00:13.056758Z`.
pub type IsoMicros = Iso8601<6>;
/// Nanoseconds: `2026-01-05T10:00:13.056758219Z`.
pub type IsoNanos = Iso8601<9>;

impl<const DIGITS: u8> Iso8601<DIGITS> {
    // Evaluated at compile time (`new` names it): another `DIGITS` is a build error, never a
    // panic at run time.
    const FORMAT: SecondsFormat = match DIGITS {
        0 => SecondsFormat::Secs,
        3 => SecondsFormat::Millis,
        6 => SecondsFormat::Micros,
        9 => SecondsFormat::Nanos,
        _ => panic!("Iso8601<DIGITS> keeps 0, 3, 6 or 9 fractional digits"),
    };

    /// `time`, truncated to the precision.
    pub fn new(time: DateTime<Utc>) -> Self {
        let _ = Self::FORMAT;
        Iso8601(time.trunc_subsecs(u16::from(DIGITS)))
    }

    /// The current time, truncated to the precision.
    pub fn now() -> Self {
        Self::new(Utc::now())
    }

    /// The time.
    pub fn get(self) -> DateTime<Utc> {
        self.0
    }
}

impl<const DIGITS: u8> From<DateTime<Utc>> for Iso8601<DIGITS> {
    fn from(time: DateTime<Utc>) -> Self {
        Self::new(time)
    }
}

impl<const DIGITS: u8> From<Iso8601<DIGITS>> for DateTime<Utc> {
    fn from(time: Iso8601<DIGITS>) -> Self {
        time.0
    }
}

impl<const DIGITS: u8> std::ops::Deref for Iso8601<DIGITS> {
    type Target = DateTime<Utc>;
    fn deref(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl<const DIGITS: u8> fmt::Display for Iso8601<DIGITS> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(Self::FORMAT, true))
    }
}

impl<const DIGITS: u8> Serialize for Iso8601<DIGITS> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de, const DIGITS: u8> Deserialize<'de> for Iso8601<DIGITS> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Cow::<'de, str>::deserialize(deserializer)?;
        DateTime::parse_from_rfc3339(&text)
            .map(|t| Self::new(t.with_timezone(&Utc)))
            .map_err(serde::de::Error::custom)
    }
}

impl<const DIGITS: u8> TimestampField for Iso8601<DIGITS> {
    fn from_time(time: std::time::SystemTime) -> Option<Self> {
        Some(Self::new(DateTime::<Utc>::from(time)))
    }
    fn is_unset(&self) -> bool {
        self.0.timestamp() == 0 && self.0.timestamp_subsec_nanos() == 0
    }
}

/// `DateTime<Utc>`'s key text; a text with digits beyond the precision is not one this type
/// writes, and is refused.
impl<const DIGITS: u8> KeyPart for Iso8601<DIGITS> {
    fn key_text(&self) -> Cow<'_, str> {
        self.0.key_text()
    }
    fn from_key_text(text: &str) -> Result<Self, KeyPartError> {
        let time = DateTime::<Utc>::from_key_text(text)?;
        let kept = Self::new(time);
        if kept.0 != time {
            return Err(KeyPartError::new::<Self>(
                text,
                "more fractional digits than the type keeps",
            ));
        }
        Ok(kept)
    }
    const KEY_CHARS: KeyChars = <DateTime<Utc> as KeyPart>::KEY_CHARS;
}

impl<const DIGITS: u8> crate::key::Iso8601Key for Iso8601<DIGITS> {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn time(secs: i64, nanos: u32) -> DateTime<Utc> {
        DateTime::from_timestamp(secs, nanos).expect("in range")
    }

    proptest! {
        /// Stored text has exactly the precision's digits, reads back as the value, and sorts
        /// as the values do.
        #[test]
        fn texts_round_trip_and_sort_in_time_order(
            a in 0i64..253_402_300_799, an in 0u32..1_000_000_000,
            b in 0i64..253_402_300_799, bn in 0u32..1_000_000_000,
        ) {
            fn check<const D: u8>(a: DateTime<Utc>, b: DateTime<Utc>) -> Result<(), TestCaseError> {
                let (x, y) = (Iso8601::<D>::new(a), Iso8601::<D>::new(b));
                let (tx, ty) = (x.to_string(), y.to_string());
                let frac = tx.split_once('.').map_or(0, |(_, f)| f.len() - 1);
                prop_assert_eq!(frac, usize::from(D), "{}", tx);
                let back: Iso8601<D> = serde_json::from_value(serde_json::json!(tx)).unwrap();
                prop_assert_eq!(back, x);
                prop_assert_eq!(tx.cmp(&ty), x.cmp(&y));
                prop_assert_eq!(Iso8601::<D>::from_key_text(&x.key_text()).unwrap(), x);
                Ok(())
            }
            let (a, b) = (time(a, an), time(b, bn));
            check::<0>(a, b)?;
            check::<3>(a, b)?;
            check::<6>(a, b)?;
            check::<9>(a, b)?;
        }
    }

    #[test]
    fn finer_key_texts_are_refused_and_stamps_truncate() {
        let t = time(1_767_607_213, 56_758_219);
        assert!(IsoMillis::from_key_text(&t.key_text()).is_err());
        assert_eq!(IsoNanos::from_key_text(&t.key_text()).unwrap().get(), t);
        let stamped = IsoMillis::from_time(t.into()).unwrap();
        assert_eq!(stamped.to_string(), "2026-01-05T10:00:13.056Z");
        assert!(IsoMillis::default().is_unset() && !stamped.is_unset());
    }
}
