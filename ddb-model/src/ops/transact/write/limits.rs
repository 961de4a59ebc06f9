//! The checks of a whole transaction that need no request: every action valid, the number
//! of actions, one action per item, the aggregate size.

use super::action::Action;
use crate::error::Error;
use crate::ops::transact::{MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES, TransactionProblem};

pub(super) fn invalid(problem: TransactionProblem) -> Error {
    Error::InvalidTransaction { problem }
}

/// The checks that need no request: every action valid, the number of actions, one action
/// per item, the aggregate size.
pub(super) fn checked(actions: Vec<Result<Action<'_>, Error>>) -> Result<Vec<Action<'_>>, Error> {
    if actions.len() > MAX_TRANSACTION_ACTIONS {
        return Err(invalid(TransactionProblem::TooManyActions {
            actions: actions.len(),
            max: MAX_TRANSACTION_ACTIONS,
        }));
    }
    let mut valid = Vec::with_capacity(actions.len());
    for (i, action) in actions.into_iter().enumerate() {
        match action {
            Ok(action) => valid.push(action),
            Err(source) => {
                return Err(Error::InvalidAction { action: i, source: Box::new(source) });
            }
        }
    }
    let keys: Vec<(&str, Option<&str>)> =
        valid.iter().map(|a| (a.info.pk.as_str(), a.info.sk.as_deref())).collect();
    if let Some((first, second)) = first_duplicate(&keys) {
        return Err(invalid(TransactionProblem::DuplicateItem {
            key: valid.get(second).map(|a| a.info.key_text()).unwrap_or_default(),
            first,
            second,
        }));
    }
    let size: usize = valid.iter().map(|a| a.size).sum();
    if size > MAX_TRANSACTION_BYTES {
        return Err(invalid(TransactionProblem::TooLarge { size, max: MAX_TRANSACTION_BYTES }));
    }
    Ok(valid)
}

/// The first position (in order) whose key an earlier position holds too, with that earlier
/// position: `(first, second)`. Sorted by key and then position, the positions of one key are
/// neighbours, the earliest first, so the pair with the smallest `second` is the answer. No
/// hashing: a transaction holds at most 100 actions, and sorting them costs less than hashing
/// every key.
fn first_duplicate<K: Ord>(keys: &[K]) -> Option<(usize, usize)> {
    let mut order: Vec<(&K, usize)> = keys.iter().zip(0..).collect();
    order.sort_unstable();
    order
        .windows(2)
        .filter_map(|pair| match pair {
            [(a, first), (b, second)] if a == b => Some((*first, *second)),
            _ => None,
        })
        .min_by_key(|&(_, second)| second)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// What `checked` reported before it sorted: the first position whose key was seen
    /// before, with the position where it was first seen.
    fn first_duplicate_by_hashing(keys: &[(String, Option<String>)]) -> Option<(usize, usize)> {
        let mut seen = HashMap::new();
        for (i, key) in keys.iter().enumerate() {
            if let Some(&first) = seen.get(key) {
                return Some((first, i));
            }
            seen.insert(key, i);
        }
        None
    }

    #[test]
    fn first_duplicate_is_the_earliest_repeat() {
        let k = |pk: &str, sk: Option<&str>| (pk.to_owned(), sk.map(str::to_owned));
        assert_eq!(first_duplicate::<(String, Option<String>)>(&[]), None);
        assert_eq!(first_duplicate(&[k("a", None)]), None);
        assert_eq!(first_duplicate(&[k("a", None), k("a", Some(""))]), None);
        // "b" repeats at 3, before "a" repeats at 4; "b" was first at 1.
        let keys = [k("a", None), k("b", Some("x")), k("c", None), k("b", Some("x")), k("a", None)];
        assert_eq!(first_duplicate(&keys), Some((1, 3)));
        // Three of one key: the first two.
        let keys = [k("z", None), k("z", None), k("z", None)];
        assert_eq!(first_duplicate(&keys), Some((0, 1)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2048,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// Over arbitrary keys (few distinct ones, so that repeats are common, and any
        /// Unicode), sorting reports what hashing reported.
        #[test]
        fn first_duplicate_agrees_with_hashing(
            keys in proptest::collection::vec(
                (
                    proptest::prop_oneof![proptest::strategy::Just(String::new()), "[ab#\\\\%]{0,2}", "\\PC{0,3}"],
                    proptest::option::of("[a#]{0,2}"),
                ),
                0..120,
            )
        ) {
            proptest::prop_assert_eq!(first_duplicate(&keys), first_duplicate_by_hashing(&keys));
        }
    }
}
