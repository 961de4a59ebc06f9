//! Composite key parts: `#[derive(KeyPart)]` on a struct of several fields or an enum with
//! data, used in entity keys and as the endpoint of a graph edge (a repository keyed by its
//! owner and name). And case-insensitive key parts: two values that differ only in case are
//! one key.

use std::collections::HashSet;

use ddb_model::key::CaseInsensitive;
use ddb_model::prelude::*;
use ddb_model::{Edge, key::KeyPartError};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support;

#[derive(KeyPart, Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct RepoId {
    owner: String,
    name: String,
}

#[derive(KeyPart, Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
struct Pair(u32, String);

#[derive(KeyPart, Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum Owner {
    Nobody,
    User(String),
    #[key_part(rename = "org")]
    Org {
        name: String,
        seat: u16,
    },
}

fn repo(owner: &str, name: &str) -> RepoId {
    RepoId { owner: owner.into(), name: name.into() }
}

#[derive(Table)]
#[table(name = "composite", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Hub;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Hub, pk = "REPO#<id>", sk = "REPO")]
#[index(gsi1, pk = "OWNER#<owner>", sk = "REPO#<id>")]
struct Repo {
    id: RepoId,
    owner: Owner,
    stars: u64,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Hub, pk = "USER#<user>", sk = "PROFILE")]
struct User {
    user: String,
    starred: u64,
}

/// A star: an edge from a user to a repository keyed by owner and name.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Hub, pk = "USER#<user>", sk = "STARS#<repo>")]
#[edge(
    from = user,
    to = repo,
    inverse(pk = "REPO#<repo>", sk = "STARRED_BY#<user>"),
    from_count = User::STARRED,
    to_count = Repo::STARS,
)]
struct Star {
    user: String,
    repo: RepoId,
}

#[test]
fn composite_texts() {
    assert_eq!(repo("alice", "app").key_text(), "alice.app");
    assert_eq!(repo("a.b", "50%").key_text(), "a%2Eb.50%25");
    assert_eq!(Pair(7, "x".into()).key_text(), "0000000007.x");
    assert_eq!(Owner::Nobody.key_text(), "Nobody");
    assert_eq!(Owner::User("ann".into()).key_text(), "User.ann");
    assert_eq!(Owner::Org { name: "acme".into(), seat: 2 }.key_text(), "org.acme.00002");
    assert_eq!(Repo::key(repo("alice", "app")).pk(), "REPO#alice.app");
    assert_eq!(Repo::key(repo("a#b", "c")).pk(), "REPO#a%23b.c");
    // Texts the encoding does not write are errors, never other values.
    for bad in ["alice", "a.b.c", "a%41.b", "a%2.b", "a%.b", ""] {
        let err: Result<RepoId, KeyPartError> = RepoId::from_key_text(bad);
        assert!(err.is_err(), "{bad:?} read as {err:?}");
    }
    for bad in ["User", "Nobody.x", "org.acme", "org.acme.2", "Stranger.x", "user.ann"] {
        assert!(Owner::from_key_text(bad).is_err(), "{bad:?}");
    }
}

fn owner() -> impl Strategy<Value = Owner> {
    prop_oneof![
        Just(Owner::Nobody),
        any::<String>().prop_map(Owner::User),
        (any::<String>(), any::<u16>()).prop_map(|(name, seat)| Owner::Org { name, seat }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
    ))]

    /// Over the whole of Unicode: every composite reads back to itself, two values share a
    /// text only when equal, and so do the keys built from them.
    #[test]
    fn composites_round_trip_and_are_injective(
        a in (any::<String>(), any::<String>()),
        b in (any::<String>(), any::<String>()),
        oa in owner(),
        ob in owner(),
    ) {
        let (ra, rb) = (repo(&a.0, &a.1), repo(&b.0, &b.1));
        prop_assert_eq!(RepoId::from_key_text(&ra.key_text()), Ok(ra.clone()));
        prop_assert_eq!(Owner::from_key_text(&oa.key_text()), Ok(oa.clone()));
        prop_assert_eq!(ra == rb, ra.key_text() == rb.key_text());
        prop_assert_eq!(oa == ob, oa.key_text() == ob.key_text());
        let key = Repo::key(&ra);
        prop_assert_eq!(Repo::parse_key(key.pk(), "REPO").ok(), Some((ra.clone(),)));
        prop_assert_eq!(Repo::key(&ra) == Repo::key(&rb), ra == rb);
    }
}

#[tokio::test]
async fn entities_keyed_and_indexed_by_composites() -> Result<(), Error> {
    let db = support::db::<Hub>().await;
    let acme = |seat| Owner::Org { name: "acme".into(), seat };
    let repos = [
        Repo { id: repo("alice", "app"), owner: Owner::User("alice".into()), stars: 0 },
        Repo { id: repo("acme", "api"), owner: acme(1), stars: 0 },
        Repo { id: repo("acme", "web.site"), owner: acme(1), stars: 0 },
        Repo { id: repo("acme", "old"), owner: acme(2), stars: 0 },
    ];
    for r in &repos {
        r.create(&db).await?;
    }
    assert_eq!(Repo::get(&db, repo("acme", "web.site")).await?.as_ref(), Some(&repos[2]));
    let by_owner: HashSet<String> =
        Repo::query_gsi1(&db, acme(1)).all().await?.into_iter().map(|r| r.id.name).collect();
    assert_eq!(by_owner, HashSet::from(["api".to_owned(), "web.site".to_owned()]));
    assert_eq!(Repo::query_gsi1(&db, Owner::User("alice".into())).all().await?.len(), 1);
    Ok(())
}

#[tokio::test]
async fn edges_to_nodes_with_composite_keys() -> Result<(), Error> {
    let db = support::db::<Hub>().await;
    let app = Repo { id: repo("alice", "app"), owner: Owner::Nobody, stars: 0 };
    app.create(&db).await?;
    for user in ["bob", "carol"] {
        User { user: user.into(), starred: 0 }.create(&db).await?;
        Star { user: user.into(), repo: app.id.clone() }.edges_link(&db).await?;
    }
    let stars = Star::edges(&db);
    let mut stargazers: Vec<String> =
        stars.incoming(app.id.clone()).all().await?.into_iter().map(|s| s.user).collect();
    stargazers.sort();
    assert_eq!(stargazers, ["bob", "carol"]);
    assert_eq!(Repo::get(&db, &app.id).await?.map(|r| r.stars), Some(2));
    assert_eq!(stars.outgoing("bob").all().await?[0].repo, app.id);
    stars.unlink("bob", app.id.clone()).await?;
    assert_eq!(Repo::get(&db, &app.id).await?.map(|r| r.stars), Some(1));
    assert_eq!(User::get(&db, "bob").await?.map(|u| u.starred), Some(0));
    Ok(())
}

trait LinkExt {
    async fn edges_link(&self, db: &Db<Hub>) -> Result<(), Error>;
}

impl LinkExt for Star {
    async fn edges_link(&self, db: &Db<Hub>) -> Result<(), Error> {
        Star::edges(db).link(self).await.map(drop)
    }
}

/// A brand, keyed whatever the case it is written in.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Hub, pk = "BRAND#<name>", sk = "BRAND")]
struct Brand {
    name: CaseInsensitive,
    country: String,
}

#[tokio::test]
async fn values_that_differ_only_in_case_are_one_key() -> Result<(), Error> {
    let db = support::db::<Hub>().await;
    let acme = Brand { name: "AcMe".into(), country: "NL".into() };
    acme.create(&db).await?;
    let raw = support::raw(&db, "BRAND#acme", "BRAND").await.expect("keyed in lower case");
    assert_eq!(raw.get("name"), Some(&support::s("AcMe")), "the value keeps its case");
    for spelling in ["acme", "ACME", "Acme"] {
        let found = Brand::get(&db, spelling).await?.expect("found whatever the case");
        assert_eq!(found.name.as_str(), "AcMe");
    }
    // The same key: a create in another case is refused, and reports the stored item.
    let err = Brand { name: "ACME".into(), country: "US".into() }.create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err:?}");
    assert_eq!(Brand::parse_key("BRAND#acme", "BRAND")?.0.as_str(), "acme");
    // A stored key with an upper-case letter there was not written by the type.
    assert!(matches!(Brand::parse_key("BRAND#Acme", "BRAND"), Err(Error::KeyParse { .. })));
    Ok(())
}

proptest! {
    /// Over the whole of Unicode: the key text is the lower case, reads back to an equal
    /// value, and two values share a key exactly when they are equal.
    #[test]
    fn case_insensitive_keys(a in any::<String>(), b in any::<String>()) {
        let (ca, cb) = (CaseInsensitive::from(a.as_str()), CaseInsensitive::from(b.as_str()));
        let text = ca.key_text().into_owned();
        prop_assert_eq!(&text, &a.to_lowercase());
        let back = CaseInsensitive::from_key_text(&text);
        prop_assert_eq!(back.as_ref().map(|v| v.key_text().into_owned()), Ok(text.clone()));
        prop_assert_eq!(back.ok(), Some(ca.clone()));
        prop_assert_eq!(ca == cb, Brand::key(ca.clone()) == Brand::key(cb.clone()));
        prop_assert_eq!(Brand::key(a.as_str()), Brand::key(ca));
    }
}
