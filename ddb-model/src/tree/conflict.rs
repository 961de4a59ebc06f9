//! What a failed tree transaction says, and when a contended move gives up: shared by every
//! strategy's writes (how often each is tried: the policies of `ops::retry`).

use std::future::Future;

use crate::error::{Error, TreeProblem};
use crate::ops::retry::{self, Backoff, Try};
use crate::ops::{ActionReason, CancelReason};

/// Runs the tries of a small move of `node` (as displayed; a node of `entity`) under `policy` (see
/// [`retry::on_conflict`]); when every try met a concurrent change (`Changed`,
/// `NodeChanged`), the move gives up with [`TreeProblem::Contended`]. Other errors, and
/// other problems a try asked to retry on, are returned as they are.
pub(crate) async fn moving<T, F, Fut>(
    entity: &'static str,
    policy: Backoff,
    node: String,
    mut step: F,
) -> Result<T, Error>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<Try<T>, Error>>,
{
    let node = &node;
    retry::on_conflict(policy, move |n| {
        let fut = step(n);
        async move {
            Ok(match fut.await? {
                Try::Again(err) if err.is_tree_changed() => Try::Again(Error::Tree {
                    entity,
                    problem: TreeProblem::Contended {
                        node: node.clone(),
                        tries: policy.tries.max(1),
                    },
                }),
                other => other,
            })
        }
    })
    .await
}

/// A tree transaction that failed, and what canceled it.
pub(crate) struct Failed {
    pub err: Error,
    /// The actions whose condition failed, in order.
    pub conditions: Vec<usize>,
    /// Anything else (a conflict, throttling, ...) canceled it.
    pub other: bool,
    /// Refused by the intent record of an operation that has finished since.
    pub refused: bool,
}

impl Failed {
    pub(crate) fn new(err: Error) -> Failed {
        let (mut conditions, mut other) = (Vec::new(), false);
        for r in err.cancellation_reasons() {
            match &r.reason {
                CancelReason::None => {}
                CancelReason::Condition(_) => conditions.push(r.action),
                CancelReason::Other { code, .. } if code == "ConditionalCheckFailed" => {
                    conditions.push(r.action);
                }
                _ => other = true,
            }
        }
        Failed { err, conditions, other, refused: false }
    }

    /// The condition of action `i` failed.
    pub(crate) fn at(&self, i: usize) -> bool {
        self.conditions.contains(&i)
    }

    /// The first action whose condition failed.
    pub(crate) fn first(&self) -> Option<usize> {
        self.conditions.first().copied()
    }

    /// Nothing but a transaction conflict (a concurrent write of one of its items) canceled
    /// it: no condition failed, so sending it again may succeed.
    pub(crate) fn only_conflict(&self) -> bool {
        self.conditions.is_empty() && self.other && self.err.is_transaction_conflict()
    }

    /// `Ok(err)` (try again) when nothing but a conflict canceled it; the error otherwise.
    pub(crate) fn conflict(self) -> Result<Error, Error> {
        if self.only_conflict() { Ok(self.err) } else { Err(self.err) }
    }

    /// `Ok(())` (the tree changed: read it again) when a condition failed or a conflict
    /// canceled it; the error otherwise.
    pub(crate) fn changed(self) -> Result<(), Error> {
        if self.conditions.is_empty() && !self.only_conflict() { Err(self.err) } else { Ok(()) }
    }
}

/// The typed error of action `index` of a failed transaction: what the action alone would
/// have returned (`AlreadyExists`, a key problem, ...); `err` itself otherwise.
pub(crate) fn action_error(err: Error, index: usize) -> Error {
    match err {
        Error::InvalidAction { action, source } if action == index => *source,
        Error::TransactionCanceled { mut reasons, source } => {
            let Some(pos) = reasons.iter().position(|r| r.action == index) else {
                return Error::TransactionCanceled { reasons, source };
            };
            let ActionReason { action, entity, key, reason } = reasons.remove(pos);
            match reason {
                CancelReason::Condition(e) => e,
                reason => {
                    reasons.insert(pos, ActionReason { action, entity, key, reason });
                    Error::TransactionCanceled { reasons, source }
                }
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::error::NodeReason;

    fn quick(tries: u32) -> Backoff {
        Backoff { tries, base: Duration::from_millis(1), max: Duration::from_millis(2) }
    }

    fn changed() -> Error {
        Error::Tree { entity: "N", problem: TreeProblem::NodeChanged { id: "x".into() } }
    }

    #[tokio::test]
    async fn a_move_that_keeps_meeting_concurrent_writes_gives_up_contended() {
        let mut calls = 0;
        let out: Result<(), Error> = moving("N", quick(5), "x".into(), |_| {
            calls += 1;
            std::future::ready(Ok(Try::Again(changed())))
        })
        .await;
        assert_eq!(calls, 5, "bounded");
        let err = out.unwrap_err();
        assert!(err.is_tree_contended() && err.is_tree_changed(), "{err}");
        assert!(matches!(
            err,
            Error::Tree { entity: "N", problem: TreeProblem::Contended { ref node, tries: 5 } }
                if node == "x"
        ));
        assert!(err.to_string().contains("after 5 tries"), "{err}");
    }

    #[tokio::test]
    async fn other_outcomes_pass_through() {
        // Done after conflicts.
        let out = moving("N", quick(5), "x".into(), |n| {
            std::future::ready(Ok(if n < 4 { Try::Again(changed()) } else { Try::Done(n) }))
        })
        .await;
        assert_eq!(out.ok(), Some(4));
        // A problem retried for another reason stays that problem.
        let corrupt = || Error::Tree {
            entity: "N",
            problem: TreeProblem::CorruptNode { id: "x".into(), reason: NodeReason::Ancestors },
        };
        let out: Result<(), Error> =
            moving("N", quick(3), "x".into(), |_| std::future::ready(Ok(Try::Again(corrupt()))))
                .await;
        assert!(matches!(out, Err(Error::Tree { problem: TreeProblem::CorruptNode { .. }, .. })));
        // An error ends it at once, unchanged.
        let mut calls = 0;
        let out: Result<(), Error> = moving("N", quick(3), "x".into(), |_| {
            calls += 1;
            std::future::ready(Err(changed()))
        })
        .await;
        assert_eq!(calls, 1);
        assert!(matches!(out, Err(Error::Tree { problem: TreeProblem::NodeChanged { .. }, .. })));
    }
}
