//! Index membership chosen per item: `#[index(.., when = ..)]` (a bool field or a method), and
//! several keys on one index told apart by `when`, each with its own query (`query = ..`).

use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::{self, s};

#[derive(Table)]
#[table(name = "gh", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct Gh;

/// A message is in its owner's unread inbox while `unread` is true.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Gh, pk = "USER#<user>", sk = "MSG#<id>")]
#[index(gsi1, pk = "UNREAD#<user>", sk = "MSG#<id>", when = unread)]
struct Message {
    user: String,
    id: u32,
    unread: bool,
    text: String,
}

/// An original repository is keyed on the index by itself; a fork by its parent, so that the
/// forks of a repository are one query. Which key an item has depends on `is_fork()`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Gh, pk = "REPO#<owner>#<name>", sk = "REPO")]
#[index(gsi1, pk = "REPO#<owner>#<name>", sk = "REPO#<owner>", when = is_original, query = originals)]
#[index(gsi1, pk = "REPO#<parent_owner>#<name>", sk = "FORK#<owner>", when = is_fork, query = forks)]
struct Repo {
    owner: String,
    name: String,
    /// The owner of the repository this one forks; `""` for an original.
    parent_owner: String,
    stars: u32,
}

impl Repo {
    fn is_fork(&self) -> bool {
        !self.parent_owner.is_empty()
    }

    fn is_original(&self) -> bool {
        !self.is_fork()
    }

    fn new(owner: &str, name: &str, parent_owner: &str) -> Repo {
        Repo { owner: owner.into(), name: name.into(), parent_owner: parent_owner.into(), stars: 0 }
    }
}

/// Both keys at once: a mistake the write reports, writing nothing.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Gh, pk = "BOTH#<id>", sk = "X")]
#[index(gsi1, pk = "A#<id>", sk = "A", when = a, query = as_a)]
#[index(gsi1, pk = "B#<id>", sk = "B", when = b, query = as_b)]
struct Both {
    id: String,
    a: bool,
    b: bool,
}

#[tokio::test]
async fn an_item_is_in_the_index_while_its_condition_holds() -> Result<(), Error> {
    let db = support::db::<Gh>().await;
    let mut message = Message { user: "ann".into(), id: 1, unread: true, text: "hello".into() };
    message.create(&db).await?;
    Message { user: "ann".into(), id: 2, unread: false, text: "read".into() }.create(&db).await?;
    assert_eq!(Message::query_gsi1(&db, "ann").all().await?, std::slice::from_ref(&message));
    let raw = support::raw(&db, "USER#ann", "MSG#0000000001").await.expect("stored");
    assert_eq!(raw.get("gsi1pk"), Some(&s("UNREAD#ann")));

    // Marked read: the put writes the item without the index keys, in one request.
    message.unread = false;
    message.put(&db).await?;
    assert!(Message::query_gsi1(&db, "ann").all().await?.is_empty());
    let raw = support::raw(&db, "USER#ann", "MSG#0000000001").await.expect("stored");
    assert!(!raw.contains_key("gsi1pk") && !raw.contains_key("gsi1sk"), "{raw:?}");
    assert_eq!(Message::query(&db, "ann").all().await?.len(), 2);
    Ok(())
}

#[tokio::test]
async fn several_keys_on_one_index_each_with_its_query() -> Result<(), Error> {
    let db = support::db::<Gh>().await;
    let original = Repo::new("alice", "app", "");
    let forks = [Repo::new("bob", "app", "alice"), Repo::new("carol", "app", "alice")];
    original.create(&db).await?;
    for fork in &forks {
        fork.create(&db).await?;
    }
    Repo::new("dave", "app", "bob").create(&db).await?; // a fork of bob's fork

    // The forks of alice/app: one query, on the fork key only.
    let sent = db.requests().total();
    assert_eq!(Repo::query_forks(&db, "alice", "app").all().await?, forks);
    assert_eq!(db.requests().total() - sent, 1);
    assert_eq!(Repo::query_forks(&db, "alice", "app").owner("carol").all().await?.len(), 1);
    // The original, by the original key; the forks' partition on the index holds it too.
    assert_eq!(
        Repo::query_originals(&db, "alice", "app").all().await?,
        std::slice::from_ref(&original)
    );
    assert_eq!(Repo::query_forks(&db, "bob", "app").all().await?.len(), 1);

    // Each item carries exactly one of the keys.
    let raw = support::raw(&db, "REPO#bob#app", "REPO").await.expect("stored");
    assert_eq!(raw.get("gsi1pk"), Some(&s("REPO#alice#app")));
    assert_eq!(raw.get("gsi1sk"), Some(&s("FORK#bob")));
    let raw = support::raw(&db, "REPO#alice#app", "REPO").await.expect("stored");
    assert_eq!(raw.get("gsi1sk"), Some(&s("REPO#alice")));
    Ok(())
}

#[tokio::test]
async fn an_item_given_two_keys_on_one_index_is_refused() -> Result<(), Error> {
    let db = support::db::<Gh>().await;
    let before = support::snapshot(&db).await;
    let err = Both { id: "x".into(), a: true, b: true }.create(&db).await.unwrap_err();
    assert!(
        matches!(&err, Error::AttributeCollision { attribute, .. } if attribute == "gsi1pk"),
        "{err:?}"
    );
    assert_eq!(support::snapshot(&db).await, before);
    Both { id: "y".into(), a: false, b: true }.create(&db).await?;
    assert_eq!(Both::query_as_b(&db, "y").all().await?.len(), 1);
    assert!(Both::query_as_a(&db, "y").all().await?.is_empty());
    Ok(())
}
