//! Why DynamoDB throttled a request ([`Throttle`], from the throttling reasons the service
//! has returned since 2025), and what to do about an error ([`RetryAdvice`]).

use std::fmt;
use std::time::Duration;

/// One reason DynamoDB gave for throttling a request: what was throttled (the table or an
/// index), for which kind of access, and which limit it hit. Read from the service's
/// `ThrottlingReasons` (`TableWriteKeyRangeThroughputExceeded`, `IndexReadAccountLimitExceeded`,
/// ...), with the ARN of the table or index.
///
/// ```
/// use ddb_model::error::{Throttle, ThrottleLimit, ThrottledAccess};
///
/// let t = Throttle::parse("TableWriteKeyRangeThroughputExceeded", None);
/// assert_eq!(t.limit, ThrottleLimit::KeyRange);
/// assert_eq!(t.access, Some(ThrottledAccess::Write));
/// assert!(!t.on_index);
/// assert!(t.limit.is_hot_key());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Throttle {
    /// The service's reason, as it sent it.
    pub reason: String,
    /// True when an index was throttled, false for the table.
    pub on_index: bool,
    /// Reads or writes; `None` when the reason does not say.
    pub access: Option<ThrottledAccess>,
    /// The limit the requests hit.
    pub limit: ThrottleLimit,
    /// The ARN of the table or index, when the service gave it.
    pub resource: Option<String>,
}

/// The kind of access a [`Throttle`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThrottledAccess {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// The limit a throttled request hit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThrottleLimit {
    /// The provisioned read or write capacity of the table or index
    /// (`ProvisionedThroughputExceeded`): raise it, or let auto scaling catch up.
    Provisioned,
    /// The account's per-table throughput quota in the Region, for an on-demand table
    /// (`AccountLimitExceeded`): ask for a higher quota.
    AccountLimit,
    /// The throughput one partition key value can take (`KeyRangeThroughputExceeded`): a
    /// hot key; spread its writes (sharded keys, sharded counters) or cache its reads.
    KeyRange,
    /// The maximum throughput configured for an on-demand table or index
    /// (`MaxOnDemandThroughputExceeded`): raise the maximum.
    MaxOnDemand,
    /// A reason this version does not know, as the service sent it.
    Other(String),
}

impl ThrottleLimit {
    /// True for a hot partition key ([`ThrottleLimit::KeyRange`]): retrying the same key
    /// soon meets the same limit.
    pub fn is_hot_key(&self) -> bool {
        matches!(self, ThrottleLimit::KeyRange)
    }
}

impl Throttle {
    /// Reads a reason of the form `<Table|Index><Read|Write><Limit>`; anything else is kept
    /// whole as [`ThrottleLimit::Other`].
    pub fn parse(reason: &str, resource: Option<String>) -> Throttle {
        let (on_index, rest) = match (reason.strip_prefix("Table"), reason.strip_prefix("Index")) {
            (Some(rest), _) => (false, rest),
            (_, Some(rest)) => (true, rest),
            _ => (false, reason),
        };
        let (access, rest) = match (rest.strip_prefix("Read"), rest.strip_prefix("Write")) {
            (Some(rest), _) => (Some(ThrottledAccess::Read), rest),
            (_, Some(rest)) => (Some(ThrottledAccess::Write), rest),
            _ => (None, rest),
        };
        let limit = match rest {
            "ProvisionedThroughputExceeded" => ThrottleLimit::Provisioned,
            "AccountLimitExceeded" => ThrottleLimit::AccountLimit,
            "KeyRangeThroughputExceeded" => ThrottleLimit::KeyRange,
            "MaxOnDemandThroughputExceeded" => ThrottleLimit::MaxOnDemand,
            _ => ThrottleLimit::Other(reason.to_owned()),
        };
        Throttle { reason: reason.to_owned(), on_index, access, limit, resource }
    }
}

impl fmt::Display for Throttle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)?;
        if let Some(resource) = &self.resource {
            write!(f, " on {resource}")?;
        }
        Ok(())
    }
}

/// What to do about an error ([`Error::retry_advice`](crate::Error::retry_advice)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryAdvice {
    /// Sending the same request again cannot succeed: the input, the stored data or the model
    /// must change first (a failed condition, a missing item, an invalid request, ...).
    DoNotRetry,
    /// Sending it again may succeed after a pause: wait about `after` (more on each further
    /// try, with jitter). `why` says what failed and what would stop it from recurring.
    RetryAfter {
        /// A first pause.
        after: Duration,
        /// What failed, and what to change if it persists.
        why: &'static str,
    },
    /// The write may have been applied: read the item before deciding (or send it again, if
    /// it is safe to repeat).
    CheckThenRetry {
        /// What failed.
        why: &'static str,
    },
}

impl RetryAdvice {
    /// True unless the advice is [`RetryAdvice::DoNotRetry`].
    pub fn may_retry(&self) -> bool {
        !matches!(self, RetryAdvice::DoNotRetry)
    }

    /// The advice for a request throttled for `reasons`.
    pub(crate) fn for_throttle(reasons: &[Throttle]) -> RetryAdvice {
        // Per limit: how bad it is (the worst reason decides), the pause in ms, and why.
        let advice = |limit: &ThrottleLimit| match limit {
            ThrottleLimit::KeyRange => (
                4,
                500,
                "a hot partition key: retrying the same key meets the same limit; spread its writes (sharded keys or counters) or cache its reads",
            ),
            ThrottleLimit::AccountLimit => (
                3,
                1000,
                "the account's per-table throughput quota: ask for a higher quota if it persists",
            ),
            ThrottleLimit::MaxOnDemand => (
                2,
                500,
                "the table's or index's on-demand maximum: raise it if the load is expected",
            ),
            ThrottleLimit::Provisioned => {
                (1, 200, "the provisioned capacity: raise it or let auto scaling catch up")
            }
            ThrottleLimit::Other(_) => (0, 200, "throttled: back off"),
        };
        let worst = reasons.iter().map(|r| advice(&r.limit)).max_by_key(|a| a.0);
        let (_, ms, why) = worst.unwrap_or((0, 200, "throttled: back off"));
        let after = Duration::from_millis(ms);
        RetryAdvice::RetryAfter { after, why }
    }
}
