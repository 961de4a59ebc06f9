//! Collection queries over a sort-key range that spans entity types: "the repository and its
//! ten newest issues" is one query of the partition from the first issue key through the
//! repository's key, read backwards.

use super::key::{ComponentRange, KeyCond, KeyError, SkCond, successor};
use super::{AsCollection, Collection, OnTable, Query};
use crate::error::RequestProblem;
use crate::model::Entity;

impl<C: Collection> Query<'_, C::Table, AsCollection<C>, OnTable> {
    /// Only the items whose sort keys run from entity `First`'s through entity `Last`'s, in
    /// sort-key order: every key that starts with the literal start of `First`'s sort-key
    /// template, every key that starts with `Last`'s, and every key between them. One
    /// `Query` request with a `BETWEEN` condition, whatever the entity types; with
    /// [`reverse`](Query::reverse) and [`limit`](Query::limit) it reads "the last items
    /// before and including `Last`'s".
    ///
    /// Both entities must be variants of the collection and `First`'s keys must sort before
    /// `Last`'s (or be the same entity); the query must be of a whole partition. Otherwise it
    /// is `Error::InvalidRequest`, and nothing is sent.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Collection, Entity, local};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize, Debug)]
    /// #[entity(pk = "REPO#<repo>", sk = "REPO")]
    /// struct Repo { repo: String, stars: u32 }
    ///
    /// #[derive(Entity, Serialize, Deserialize, Debug)]
    /// #[entity(pk = "REPO#<repo>", sk = "ISSUE#<number>")]
    /// struct Issue { repo: String, number: u32, title: String }
    ///
    /// #[derive(Collection, Debug)]
    /// enum RepoItems { Repo(Repo), Issue(Issue) }
    ///
    /// let db = local::isolated_db().await?;
    /// Repo { repo: "app".into(), stars: 3 }.create(&db).await?;
    /// for number in 1..=20 {
    ///     Issue { repo: "app".into(), number, title: format!("#{number}") }.create(&db).await?;
    /// }
    /// // The repository and its ten newest issues: one request.
    /// let items = Repo::partition(&db, "app")
    ///     .collection::<RepoItems>()
    ///     .between_entities::<Issue, Repo>()
    ///     .reverse()
    ///     .limit(11)
    ///     .all()
    ///     .await?;
    /// assert!(matches!(&items[0], RepoItems::Repo(r) if r.stars == 3));
    /// assert!(matches!(&items[1], RepoItems::Issue(i) if i.number == 20));
    /// assert!(matches!(&items[10], RepoItems::Issue(i) if i.number == 11));
    /// # Ok(()) }
    /// ```
    pub fn between_entities<First, Last>(mut self) -> Self
    where
        First: Entity<Table = C::Table>,
        Last: Entity<Table = C::Table>,
    {
        self.key = self.key.and_then(|cond| span::<C, First, Last>(cond));
        self
    }
}

/// The key condition `cond` (a whole partition) narrowed to the keys of `First` through those
/// of `Last`.
fn span<C: Collection, First: Entity, Last: Entity>(
    mut cond: KeyCond,
) -> Result<KeyCond, KeyError> {
    let invalid = |problem| Err(KeyError::Invalid(problem));
    for entity in [First::NAME, Last::NAME] {
        if !C::TYPES.contains(&entity) {
            return invalid(RequestProblem::NotInCollection { entity, collection: C::NAME });
        }
    }
    if cond.sk != SkCond::Any {
        return invalid(RequestProblem::SortKeyConditionTwice);
    }
    let (lo, last) = (First::SORT_KEY_BASE, Last::SORT_KEY_BASE);
    if lo > last {
        return invalid(RequestProblem::EntitiesOutOfOrder {
            first: First::NAME,
            first_keys: lo,
            last: Last::NAME,
            last_keys: last,
        });
    }
    // Every key that starts with `last` is below its successor.
    let hi = if last.is_empty() { None } else { successor(last) };
    cond.sk = match (lo.is_empty(), &hi) {
        (false, Some(hi)) => SkCond::Between(lo.to_owned(), hi.clone()),
        (false, None) => SkCond::Ge(lo.to_owned()),
        (true, Some(hi)) => SkCond::Le(hi.clone()),
        (true, None) => SkCond::Any,
    };
    // The sent condition includes the successor itself: the check drops an item keyed so.
    cond.range = hi.map(|hi| ComponentRange {
        prefix: String::new(),
        sep: None,
        lower: std::ops::Bound::Unbounded,
        upper: std::ops::Bound::Excluded(hi),
    });
    Ok(cond)
}
