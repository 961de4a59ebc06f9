//! Collection queries whose sort-key range spans entity types (`between_entities`): one
//! request for "the repository and its newest issues" or "the repository and its
//! stargazers", exact at the ends of the range.

use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support;

#[derive(Table)]
#[table(name = "repos")]
struct Repos;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Repos, pk = "REPO#<repo>", sk = "REPO")]
struct Repo {
    repo: String,
    stars: u32,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Repos, pk = "REPO#<repo>", sk = "ISSUE#<number>")]
struct Issue {
    repo: String,
    number: u32,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Repos, pk = "REPO#<repo>", sk = "STAR#<user>")]
struct Star {
    repo: String,
    user: String,
}

/// Keyed exactly where the repository's keys end (`REPP` follows every `REPO..` key).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Repos, pk = "REPO#<repo>", sk = "REPP")]
struct Next {
    repo: String,
}

/// Keyed just inside the repository's keys.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Repos, pk = "REPO#<repo>", sk = "REPO#<tail>")]
struct Under {
    repo: String,
    tail: String,
}

#[derive(Collection, Debug, PartialEq)]
enum RepoItems {
    Repo(Repo),
    Issue(Issue),
    Star(Star),
    Next(Next),
    Under(Under),
}

#[derive(Collection, Debug, PartialEq)]
enum JustIssues {
    Issue(Issue),
}

async fn seeded() -> Result<Db<Repos>, Error> {
    let db = support::db::<Repos>().await;
    Repo { repo: "app".into(), stars: 2 }.create(&db).await?;
    for number in 1..=15 {
        Issue { repo: "app".into(), number }.create(&db).await?;
    }
    for user in ["ann", "bob"] {
        Star { repo: "app".into(), user: user.into() }.create(&db).await?;
    }
    Next { repo: "app".into() }.create(&db).await?;
    Under { repo: "app".into(), tail: "\u{10FFFF}".into() }.create(&db).await?;
    Ok(db)
}

#[tokio::test]
async fn the_repository_and_its_newest_issues_in_one_request() -> Result<(), Error> {
    let db = seeded().await?;
    let sent = db.requests().total();
    let items = Repo::partition(&db, "app")
        .collection::<RepoItems>()
        .between_entities::<Issue, Repo>()
        .reverse()
        .limit(11)
        .all()
        .await?;
    assert_eq!(db.requests().total() - sent, 1);
    assert_eq!(items.len(), 11);
    // Reversed: the repository's own keys first (the one under it sorts after it).
    assert!(matches!(&items[0], RepoItems::Under(_)), "{:?}", items[0]);
    assert_eq!(items[1], RepoItems::Repo(Repo { repo: "app".into(), stars: 2 }));
    let numbers: Vec<u32> = items[2..]
        .iter()
        .map(|i| match i {
            RepoItems::Issue(issue) => issue.number,
            other => panic!("not an issue: {other:?}"),
        })
        .collect();
    assert_eq!(numbers, [15, 14, 13, 12, 11, 10, 9, 8, 7]);
    Ok(())
}

#[tokio::test]
async fn the_range_holds_exactly_the_keys_from_the_first_entity_through_the_last()
-> Result<(), Error> {
    let db = seeded().await?;
    let items = Repo::partition(&db, "app")
        .collection::<RepoItems>()
        .between_entities::<Repo, Star>()
        .all()
        .await?;
    // REPO, REPO#.., REPP, STAR#ann, STAR#bob: no issue, the successor key included because it
    // is between them.
    assert_eq!(items.len(), 5, "{items:?}");
    assert!(matches!(items[2], RepoItems::Next(_)));
    // Ending at the repository leaves out the item keyed at its successor.
    let items = Repo::partition(&db, "app")
        .collection::<RepoItems>()
        .between_entities::<Issue, Repo>()
        .all()
        .await?;
    assert_eq!(items.len(), 17, "15 issues, the repository and the key under it");
    assert!(!items.iter().any(|i| matches!(i, RepoItems::Next(_) | RepoItems::Star(_))));
    // One entity: its own keys.
    let stars = Repo::partition(&db, "app")
        .collection::<RepoItems>()
        .between_entities::<Star, Star>()
        .count()
        .await?;
    assert_eq!(stars, 2);
    Ok(())
}

#[tokio::test]
async fn a_span_that_cannot_be_meant_is_refused_before_sending() -> Result<(), Error> {
    let db = seeded().await?;
    let sent = db.requests().total();
    let problems: Vec<RequestProblem> = [
        // Last before first.
        Repo::partition(&db, "app")
            .collection::<RepoItems>()
            .between_entities::<Star, Issue>()
            .all()
            .await,
        // Not an entity of the collection.
        Repo::partition(&db, "app")
            .collection::<JustIssues>()
            .between_entities::<Issue, Repo>()
            .all()
            .await
            .map(|_| Vec::new()),
        // Not a whole partition.
        Issue::query(&db, "app")
            .number_ge(3)
            .collection::<RepoItems>()
            .between_entities::<Issue, Repo>()
            .all()
            .await,
    ]
    .into_iter()
    .map(|result| match result {
        Err(Error::InvalidRequest { problem, .. }) => problem,
        other => panic!("{other:?}"),
    })
    .collect();
    assert!(
        matches!(
            &problems[..],
            [
                RequestProblem::EntitiesOutOfOrder { first: "Star", last: "Issue", .. },
                RequestProblem::NotInCollection { entity: "Repo", collection: "JustIssues" },
                RequestProblem::SortKeyConditionTwice,
            ]
        ),
        "{problems:?}"
    );
    assert_eq!(db.requests().total(), sent);
    Ok(())
}
