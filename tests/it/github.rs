//! The GitHub model of `examples/github` (the same file, included): every access pattern of
//! the design with its exact result set and request count, the writes' edge cases (repeats,
//! missing targets, concurrency), and a property test of the repository patterns over
//! arbitrary owner and repository names.

#[path = "../../examples/github/model.rs"]
mod model;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use ddb_model::prelude::*;
use futures_util::future::join_all;
use model::write::*;
use model::*;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::support;

async fn loaded() -> Db<GitHub> {
    let db = support::db::<GitHub>().await;
    if let Err(e) = load(&db).await {
        panic!("cannot load the data set: {e}");
    }
    db
}

/// Every stored item as comparable text.
async fn table_items(db: &Db<GitHub>) -> Vec<String> {
    support::snapshot(db).await
}

/// Asserts that the table holds exactly `before`, printing only the items that differ.
async fn unchanged(db: &Db<GitHub>, before: &[String]) {
    let after = table_items(db).await;
    let gone: Vec<&String> = before.iter().filter(|i| !after.contains(i)).collect();
    let new: Vec<&String> = after.iter().filter(|i| !before.contains(i)).collect();
    assert!(gone.is_empty() && new.is_empty(), "items gone: {gone:#?}\nitems new: {new:#?}");
}

/// Runs `f` and returns its output with the number of requests it sent.
async fn counted<T>(
    db: &Db<GitHub>,
    f: impl Future<Output = Result<T, Error>>,
) -> Result<(T, u64), Error> {
    let before = db.requests().total();
    let out = f.await?;
    Ok((out, db.requests().total() - before))
}

fn logins(items: &[AccountAndRepos]) -> Vec<String> {
    items
        .iter()
        .map(|i| match i {
            AccountAndRepos::User(u) => format!("user {}", u.login),
            AccountAndRepos::Organization(o) => format!("org {}", o.login),
            AccountAndRepos::Repo(r) => format!("{}/{}", r.owner, r.name),
        })
        .collect()
}

#[tokio::test]
async fn accounts_and_memberships() -> Result<(), Error> {
    let db = loaded().await;
    let (alice, n) = counted(&db, User::get(&db, "alice").into_future()).await?;
    assert_eq!((alice.map(|u| u.name), n), (Some("Alice".to_owned()), 1));
    let (acme, n) = counted(&db, Organization::get(&db, "acme").into_future()).await?;
    assert_eq!((acme.map(|o| o.members), n), (Some(3), 1));

    // A user and an organization share the login space, both ways.
    let org = Organization {
        login: "bob".into(),
        name: "Bob Inc".into(),
        members: 0,
        created_at: at(2, 0),
    };
    assert!(org.create(&db).await.unwrap_err().is_already_exists());
    let user = User { login: "acme".into(), name: "Acme".into(), created_at: at(2, 0) };
    assert!(user.create(&db).await.unwrap_err().is_already_exists());
    // Reading one as the other is a typed error, not wrong data.
    assert!(User::get(&db, "acme").await.is_err());

    let erin = Membership { org: "acme".into(), user: "erin".into(), role: Role::Member };
    let ((), n) = counted(&db, add_member(&db, &erin)).await?;
    assert_eq!(n, 1);
    // Again: nothing changes, the count included.
    assert!(add_member(&db, &erin).await.unwrap_err().is_already_exists());
    // An organization that does not exist: nothing is written.
    let before = table_items(&db).await;
    let nowhere = Membership { org: "nowhere".into(), user: "erin".into(), role: Role::Owner };
    assert!(add_member(&db, &nowhere).await.unwrap_err().is_not_found());
    unchanged(&db, &before).await;

    let (items, n) =
        counted(&db, Organization::partition(&db, "acme").collection::<OrgAndMembers>().all())
            .await?;
    assert_eq!(n, 1);
    let Some((OrgAndMembers::Organization(org), members)) = items.split_first() else {
        panic!("the organization first: {items:?}");
    };
    assert_eq!(org.members, 4);
    let members: Vec<(&str, Role)> = members
        .iter()
        .map(|m| match m {
            OrgAndMembers::Membership(m) => (m.user.as_str(), m.role),
            other => panic!("not a membership: {other:?}"),
        })
        .collect();
    assert_eq!(
        members,
        [
            ("alice", Role::Owner),
            ("bob", Role::Member),
            ("carol", Role::Member),
            ("erin", Role::Member)
        ]
    );

    let (items, n) =
        counted(&db, User::partition_gsi1(&db, "erin").collection::<UserAndOrgs>().all()).await?;
    assert_eq!(n, 1);
    assert!(
        matches!(&items[..], [UserAndOrgs::User(u), UserAndOrgs::Membership(m)]
            if u.login == "erin" && m.org == "acme"),
        "{items:?}"
    );
    let items = User::partition_gsi1(&db, "dave").collection::<UserAndOrgs>().all().await?;
    assert!(matches!(&items[..], [UserAndOrgs::User(_)]), "dave is in no organization: {items:?}");
    Ok(())
}

#[tokio::test]
async fn repositories_by_account_newest_updated_first() -> Result<(), Error> {
    let db = loaded().await;
    let (items, n) = counted(
        &db,
        User::partition_gsi3(&db, "alice").collection::<AccountAndRepos>().reverse().all(),
    )
    .await?;
    assert_eq!(n, 1);
    assert_eq!(logins(&items), ["user alice", "alice/dotfiles", "alice/blog", "alice/kv"]);
    let (items, n) = counted(
        &db,
        Organization::partition_gsi3(&db, "acme")
            .collection::<AccountAndRepos>()
            .reverse()
            .limit(2)
            .all(),
    )
    .await?;
    assert_eq!((logins(&items), n), (vec!["org acme".to_owned(), "acme/web".to_owned()], 1));

    // A push moves the repository to the front; its counters survive.
    let (kv, n) = counted(&db, touch(&db, "alice", "kv", at(10, 0))).await?;
    assert_eq!(n, 1);
    assert_eq!((kv.stars, kv.forks, kv.last_number, kv.updated_at), (4, 2, 15, at(10, 0)));
    let items =
        User::partition_gsi3(&db, "alice").collection::<AccountAndRepos>().reverse().all().await?;
    assert_eq!(logins(&items), ["user alice", "alice/kv", "alice/dotfiles", "alice/blog"]);
    assert_eq!(Repo::get(&db, "alice", "kv").await?, Some(kv));
    // A push to a repository that does not exist creates nothing.
    assert!(touch(&db, "alice", "nothing", at(10, 0)).await.unwrap_err().is_not_found());
    assert!(Repo::get(&db, "alice", "nothing").await?.is_none());
    Ok(())
}

#[tokio::test]
async fn forks_of_a_repository_in_one_query() -> Result<(), Error> {
    let db = loaded().await;
    let (repos, n) =
        counted(&db, Repo::partition_forks(&db, "alice", "kv").reverse().all()).await?;
    assert_eq!(n, 1);
    let owners: Vec<(&str, &str)> =
        repos.iter().map(|r| (r.owner.as_str(), r.parent_owner.as_str())).collect();
    assert_eq!(owners, [("alice", ""), ("carol", "alice"), ("bob", "alice")]);
    assert_eq!(repos[0].forks, 2);
    // The fork of a fork is under its own parent.
    let forks = Repo::query_forks(&db, "bob", "kv").all().await?;
    assert_eq!(forks.iter().map(|r| r.owner.as_str()).collect::<Vec<_>>(), ["dave"]);
    assert_eq!(Repo::get(&db, "bob", "kv").await?.map(|r| r.forks), Some(1));
    assert_eq!(Repo::query_originals(&db, "alice", "kv").all().await?.len(), 1);

    let Some(kv) = Repo::get(&db, "alice", "kv").await? else { panic!("alice/kv") };
    let ((), n) = counted(&db, async { fork(&db, &kv, "erin", at(11, 0)).await.map(drop) }).await?;
    assert_eq!(n, 1);
    // A second fork into the same account, or a fork of a repository that is gone: refused,
    // nothing written.
    let before = table_items(&db).await;
    assert!(fork(&db, &kv, "erin", at(11, 1)).await.unwrap_err().is_already_exists());
    let gone = Repo::new("alice", "gone", "", at(1, 0));
    assert!(fork(&db, &gone, "erin", at(11, 1)).await.unwrap_err().is_not_found());
    unchanged(&db, &before).await;
    assert_eq!(Repo::get(&db, "alice", "kv").await?.map(|r| r.forks), Some(3));
    Ok(())
}

fn issue_numbers(items: &[RepoItems]) -> Vec<u32> {
    items
        .iter()
        .filter_map(|i| if let RepoItems::Issue(i) = i { Some(i.number) } else { None })
        .collect()
}

#[tokio::test]
async fn issues_and_pull_requests_share_one_counter() -> Result<(), Error> {
    let db = loaded().await;
    let (items, n) = counted(
        &db,
        Repo::partition(&db, "alice", "kv")
            .collection::<RepoItems>()
            .between_entities::<Issue, Repo>()
            .reverse()
            .limit(6)
            .all(),
    )
    .await?;
    assert_eq!(n, 1);
    assert!(matches!(&items[0], RepoItems::Repo(r) if r.last_number == 15), "{items:?}");
    assert_eq!(issue_numbers(&items), [15, 13, 12, 11, 9]);
    // Every issue, and no star, in the whole range.
    let items = Repo::partition(&db, "alice", "kv")
        .collection::<RepoItems>()
        .between_entities::<Issue, Repo>()
        .all()
        .await?;
    assert_eq!(issue_numbers(&items), [1, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15]);
    assert_eq!(items.len(), 12);

    let (items, n) = counted(
        &db,
        Repo::partition_gsi1(&db, "alice", "kv").collection::<RepoAndPulls>().reverse().all(),
    )
    .await?;
    assert_eq!(n, 1);
    let numbers: Vec<u32> = items
        .iter()
        .filter_map(|i| if let RepoAndPulls::PullRequest(p) = i { Some(p.number) } else { None })
        .collect();
    assert!(matches!(&items[0], RepoAndPulls::Repo(_)), "{items:?}");
    assert_eq!(numbers, [14, 10, 6, 2]);

    // Opening one: the counter (one `at_least_once` update), then the item.
    let (issue, n) = counted(&db, open_issue(&db, "alice", "kv", "Slow", "dave")).await?;
    assert_eq!((issue.number, n), (16, 2));
    let (pr, n) = counted(&db, open_pull_request(&db, "alice", "kv", "Faster", "dave")).await?;
    assert_eq!((pr.number, n), (17, 2));
    let (got, n) = counted(&db, Issue::get(&db, "alice", "kv", 16).into_future()).await?;
    assert_eq!((got, n), (Some(issue), 1));
    let (got, n) = counted(&db, PullRequest::get(&db, "alice", "kv", 17).into_future()).await?;
    assert_eq!((got, n), (Some(pr), 1));
    // In a repository that does not exist, nothing is numbered or written.
    let before = table_items(&db).await;
    assert!(open_issue(&db, "alice", "none", "x", "dave").await.unwrap_err().is_not_found());
    unchanged(&db, &before).await;

    // Concurrent openers get distinct numbers, each the one its own update produced.
    let opened = join_all((0..12).map(|i| {
        let db = &db;
        async move {
            if i % 3 == 0 {
                open_pull_request(db, "alice", "kv", "p", "erin").await.map(|p| p.number)
            } else {
                open_issue(db, "alice", "kv", "i", "erin").await.map(|i| i.number)
            }
        }
    }))
    .await;
    let numbers: BTreeSet<u32> = opened.into_iter().collect::<Result<_, _>>()?;
    assert_eq!(numbers, (18..=29).collect());
    assert_eq!(Repo::get(&db, "alice", "kv").await?.map(|r| r.last_number), Some(29));
    Ok(())
}

#[tokio::test]
async fn comments_and_reactions() -> Result<(), Error> {
    let db = loaded().await;
    let (comments, n) = counted(&db, IssueComment::query(&db, "alice", "kv", 3).all()).await?;
    assert_eq!(n, 1);
    let authors: Vec<&str> = comments.iter().map(|c| c.author.as_str()).collect();
    assert_eq!(authors, ["bob", "carol", "alice"]);
    assert_eq!(comments[0].reactions["+1"], 1);
    let issue = Issue::get(&db, "alice", "kv", 3).await?.expect("issue 3");
    assert_eq!((issue.comments, issue.reactions["heart"], issue.reactions["+1"]), (3, 2, 1));
    assert_eq!(issue.reactions.values().sum::<u64>(), 3);

    // Time-sorted ids: a later comment reads last.
    let later = IssueComment { id: comment_id(at(12, 0)), ..issue_comment(3, 0, "dave", "Still?") };
    let ((), n) = counted(&db, comment_on_issue(&db, &later)).await?;
    assert_eq!(n, 1);
    let comments = IssueComment::query(&db, "alice", "kv", 3).all().await?;
    assert_eq!(comments.last(), Some(&later));
    assert_eq!(Issue::get(&db, "alice", "kv", 3).await?.map(|i| i.comments), Some(4));
    // On an issue that does not exist (4 is an issue, 6 a pull request): nothing written.
    let before = table_items(&db).await;
    let stray = issue_comment(6, 1, "dave", "wrong place");
    assert!(comment_on_issue(&db, &stray).await.unwrap_err().is_not_found());
    unchanged(&db, &before).await;

    let on_pr = PrComment {
        owner: "alice".into(),
        name: "kv".into(),
        pr: 6,
        id: comment_id(at(12, 1)),
        author: "bob".into(),
        body: "LGTM".into(),
        reactions: ReactionKind::zeroed(),
    };
    let ((), n) = counted(&db, comment_on_pull_request(&db, &on_pr)).await?;
    assert_eq!(n, 1);
    let (comments, n) = counted(&db, PrComment::query(&db, "alice", "kv", 6).all()).await?;
    assert_eq!((comments, n), (vec![on_pr.clone()], 1));

    // Reactions: once per user and kind; the counter moves with the first only.
    let (reactions, n) =
        counted(&db, Reaction::query(&db, "alice", "kv", Target::Issue(3)).all()).await?;
    assert_eq!(n, 1);
    let who: Vec<(&str, ReactionKind)> =
        reactions.iter().map(|r| (r.user.as_str(), r.kind)).collect();
    assert_eq!(
        who,
        [
            ("bob", ReactionKind::Heart),
            ("carol", ReactionKind::Heart),
            ("carol", ReactionKind::ThumbsUp)
        ]
    );
    let target = Target::PrComment { pr: 6, id: on_pr.id.clone() };
    for kind in ReactionKind::ALL {
        let (new, n) = counted(&db, react(&db, &reaction(target.clone(), "erin", kind))).await?;
        assert_eq!((new, n), (true, 1));
    }
    let (new, n) =
        counted(&db, react(&db, &reaction(target.clone(), "erin", ReactionKind::Eyes))).await?;
    assert_eq!((new, n), (false, 1));
    let stored = PrComment::get(&db, "alice", "kv", 6, &on_pr.id).await?.expect("comment");
    assert_eq!(
        stored.reactions,
        ReactionKind::ALL.iter().map(|k| (k.counter().to_owned(), 1)).collect::<BTreeMap<_, _>>()
    );
    assert_eq!(Reaction::query(&db, "alice", "kv", target).all().await?.len(), 8);
    // Concurrent reactions of many users: each counted once.
    let users: Vec<String> = (0..10).map(|i| format!("u{i}")).collect();
    let done = join_all(users.iter().flat_map(|u| {
        let db = &db;
        [0, 1].map(move |_| async move {
            react(db, &reaction(Target::Issue(4), u, ReactionKind::Rocket)).await
        })
    }))
    .await;
    let firsts =
        done.into_iter().collect::<Result<Vec<bool>, _>>()?.into_iter().filter(|b| *b).count();
    assert_eq!(firsts, 10);
    assert_eq!(Issue::get(&db, "alice", "kv", 4).await?.map(|i| i.reactions["rocket"]), Some(10));
    // A target that does not exist: nothing written.
    let before = table_items(&db).await;
    let missing = [
        Target::Issue(2),
        Target::PullRequest(3),
        Target::IssueComment { issue: 3, id: "nope".into() },
    ];
    for target in missing {
        let err = react(&db, &reaction(target, "erin", ReactionKind::Laugh)).await.unwrap_err();
        assert!(err.is_not_found(), "{err:?}");
    }
    unchanged(&db, &before).await;
    Ok(())
}

#[tokio::test]
async fn stars_and_stargazers() -> Result<(), Error> {
    let db = loaded().await;
    let (items, n) = counted(
        &db,
        Repo::partition(&db, "alice", "kv")
            .collection::<RepoItems>()
            .between_entities::<Repo, Star>()
            .all(),
    )
    .await?;
    assert_eq!(n, 1);
    let Some((RepoItems::Repo(kv), stars)) = items.split_first() else { panic!("{items:?}") };
    assert_eq!(kv.stars, 4);
    let users: Vec<&str> = stars
        .iter()
        .map(|s| match s {
            RepoItems::Star(s) => s.user.as_str(),
            other => panic!("not a star: {other:?}"),
        })
        .collect();
    assert_eq!(users, ["bob", "carol", "dave", "erin"]);

    let star_of = |user: &str| Star {
        owner: "alice".into(),
        name: "kv".into(),
        user: user.into(),
        starred_at: at(12, 0),
    };
    let stars_now = || async { Repo::get(&db, "alice", "kv").await.map(|r| r.map(|r| r.stars)) };
    // A repeat, and an unstar of no star: one request each, nothing changes.
    let (new, n) = counted(&db, star(&db, &star_of("bob"))).await?;
    assert_eq!((new, n), (false, 1));
    let (gone, n) = counted(&db, unstar(&db, "alice", "kv", "alice")).await?;
    assert_eq!((gone, n), (false, 1));
    assert_eq!(stars_now().await?, Some(4));
    let (gone, n) = counted(&db, unstar(&db, "alice", "kv", "bob")).await?;
    assert_eq!((gone, n), (true, 1));
    assert_eq!(stars_now().await?, Some(3));
    // A repository that does not exist: nothing written.
    let before = table_items(&db).await;
    let nowhere = Star { name: "none".into(), ..star_of("bob") };
    assert!(star(&db, &nowhere).await.unwrap_err().is_not_found());
    unchanged(&db, &before).await;

    // Concurrent stars and unstars: the counter is the number of stars.
    let users: Vec<String> = (0..12).map(|i| format!("fan{i:02}")).collect();
    let results = join_all(users.iter().map(|u| {
        let one = star_of(u);
        let db = &db;
        async move { star(db, &one).await }
    }))
    .await;
    assert!(results.into_iter().collect::<Result<Vec<bool>, _>>()?.into_iter().all(|b| b));
    let results = join_all(users.iter().step_by(2).map(|u| unstar(&db, "alice", "kv", u))).await;
    assert!(results.into_iter().collect::<Result<Vec<bool>, _>>()?.into_iter().all(|b| b));
    let items = Repo::partition(&db, "alice", "kv")
        .collection::<RepoItems>()
        .between_entities::<Repo, Star>()
        .all()
        .await?;
    assert_eq!(items.len() as i64 - 1, 3 + 6);
    assert_eq!(stars_now().await?, Some(9));
    Ok(())
}

fn cases() -> u32 {
    std::env::var("DDB_PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(12)
}

/// Arbitrary names (the whole of Unicode, key separators and escape characters included, an
/// owner and a repository name that end or start with `#`): each repository's patterns read
/// exactly its own items, compared with a model, never a neighbour's.
#[test]
fn repository_patterns_over_arbitrary_names_agree_with_a_model() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let db = rt.block_on(support::db::<GitHub>());
    let runs = AtomicUsize::new(0);
    let mut runner =
        TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    let name = prop_oneof![
        "[a-c#%.~:/|]{1,4}",
        any::<String>().prop_filter("not empty", |s| !s.is_empty() && s.len() < 40),
    ];
    let repo = (name.clone(), name.clone(), 0u32..4, proptest::collection::btree_set(name, 0..4));
    let strategy = proptest::collection::vec(repo, 1..5);
    let result = runner.run(&strategy, |repos| {
        let round = runs.fetch_add(1, Ordering::SeqCst);
        rt.block_on(run_case(&db, round, repos))
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

async fn run_case(
    db: &Db<GitHub>,
    round: usize,
    repos: Vec<(String, String, u32, BTreeSet<String>)>,
) -> Result<(), TestCaseError> {
    let fail = |e: Error| TestCaseError::fail(e.to_string());
    // The model: (owner, name) -> (issues, stargazers). Owners are per round, so rounds do
    // not meet.
    let mut model: BTreeMap<(String, String), (u32, BTreeSet<String>)> = BTreeMap::new();
    for (owner, name, issues, stars) in repos {
        let owner = format!("{round}{owner}");
        if model.contains_key(&(owner.clone(), name.clone())) {
            continue;
        }
        Repo::new(&owner, &name, "", at(1, 0)).create(db).await.map_err(fail)?;
        for _ in 0..issues {
            open_issue(db, &owner, &name, "t", "u").await.map_err(fail)?;
        }
        for user in &stars {
            let one = Star {
                owner: owner.clone(),
                name: name.clone(),
                user: user.clone(),
                starred_at: at(1, 0),
            };
            prop_assert!(star(db, &one).await.map_err(fail)?);
        }
        model.insert((owner, name), (issues, stars));
    }
    for ((owner, name), (issues, stars)) in &model {
        let before = db.requests().total();
        let items = Repo::partition(db, owner, name)
            .collection::<RepoItems>()
            .between_entities::<Issue, Repo>()
            .reverse()
            .all()
            .await
            .map_err(fail)?;
        prop_assert_eq!(db.requests().total() - before, 1);
        prop_assert!(
            matches!(&items[0], RepoItems::Repo(r) if &r.owner == owner && &r.name == name)
        );
        prop_assert_eq!(issue_numbers(&items), (1..=*issues).rev().collect::<Vec<_>>());
        let items = Repo::partition(db, owner, name)
            .collection::<RepoItems>()
            .between_entities::<Repo, Star>()
            .all()
            .await
            .map_err(fail)?;
        let users: BTreeSet<String> = items
            .iter()
            .filter_map(|i| if let RepoItems::Star(s) = i { Some(s.user.clone()) } else { None })
            .collect();
        prop_assert_eq!(&users, stars);
        prop_assert!(matches!(&items[0], RepoItems::Repo(r) if r.stars == stars.len() as i64));
        let mine: Vec<String> = User::partition_gsi3(db, owner)
            .collection::<AccountAndRepos>()
            .all()
            .await
            .map_err(fail)?
            .into_iter()
            .filter_map(|i| if let AccountAndRepos::Repo(r) = i { Some(r.name) } else { None })
            .collect();
        let expected: Vec<String> =
            model.keys().filter(|(o, _)| o == owner).map(|(_, n)| n.clone()).collect();
        let mut mine_sorted = mine.clone();
        mine_sorted.sort();
        prop_assert_eq!(mine_sorted, expected);
    }
    Ok(())
}
