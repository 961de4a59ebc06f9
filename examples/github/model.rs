//! The GitHub model: the single-table design of GitHub's data from *The DynamoDB Book*
//! (accounts, memberships, repositories, forks, issues, pull requests, comments, reactions,
//! stars), declared with the derives. `examples/github/main.rs` runs every access pattern of
//! the design on it and `tests/it/github.rs` proves each one's result set and request count;
//! both include this file.
//!
//! | item | PK | SK | GSI1 | GSI2 | GSI3 |
//! | --- | --- | --- | --- | --- | --- |
//! | User | `ACCOUNT#<login>` | `ACCOUNT#<login>` | same | | same |
//! | Organization | `ACCOUNT#<login>` | `ACCOUNT#<login>` | | | same |
//! | Membership | `ACCOUNT#<org>` | `MEMBERSHIP#<user>` | `ACCOUNT#<user>` / `MEMBERSHIP#<org>` | | |
//! | Repo | `REPO#<owner>#<name>` | same | same | original: same; fork: `REPO#<parent>#<name>` / `FORK#<owner>` | `ACCOUNT#<owner>` / `#<updated_at>` |
//! | Issue | `REPO#<owner>#<name>` | `ISSUE#<number>` | | | |
//! | PullRequest | `PR#<owner>#<name>#<number>` | same | `REPO#<owner>#<name>` / `PR#<number>` | | |
//! | IssueComment | `ISSUECOMMENT#<owner>#<name>#<issue>` | `ISSUECOMMENT#<id>` | | | |
//! | PrComment | `PRCOMMENT#<owner>#<name>#<pr>` | `PRCOMMENT#<id>` | | | |
//! | Star | `REPO#<owner>#<name>` | `STAR#<user>` | | | |
//! | Reaction | `REACTION#<owner>#<name>#<target>` | `REACTION#<user>#<kind>` | | | |
//!
//! Issue and pull-request numbers share one counter on the repository (`last_number`), which
//! an update increments atomically, returning the number it produced.

use std::collections::BTreeMap;

use ddb_model::chrono::{DateTime, Utc};
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

/// The table: `PK`/`SK` and three global secondary indexes, named as in the book.
#[derive(Table)]
#[table(
    name = "github",
    pk = "PK",
    sk = "SK",
    gsi(name = "gsi1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi(name = "gsi2", pk = "GSI2PK", sk = "GSI2SK"),
    gsi(name = "gsi3", pk = "GSI3PK", sk = "GSI3SK")
)]
pub struct GitHub;

/// A user account. Users and organizations share the `ACCOUNT#` key space, so a login is
/// unique across both: creating one under the other's login is `AlreadyExists`.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "ACCOUNT#<login>", sk = "ACCOUNT#<login>")]
#[index(gsi1, pk = "ACCOUNT#<login>", sk = "ACCOUNT#<login>")]
#[index(gsi3, pk = "ACCOUNT#<login>", sk = "ACCOUNT#<login>")]
// The two indexes have the same key templates, which clippy takes for a repeated attribute.
#[allow(clippy::duplicated_attributes)]
pub struct User {
    pub login: String,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// An organization account, with the number of its members.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "ACCOUNT#<login>", sk = "ACCOUNT#<login>")]
#[index(gsi3, pk = "ACCOUNT#<login>", sk = "ACCOUNT#<login>")]
pub struct Organization {
    pub login: String,
    pub name: String,
    pub members: u32,
    pub created_at: DateTime<Utc>,
}

/// What a member may do in an organization.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Owner,
    Member,
}

/// A user's membership of an organization: in the organization's partition (the organization
/// and its members), and on `gsi1` in the user's (the user and their organizations).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "ACCOUNT#<org>", sk = "MEMBERSHIP#<user>")]
#[index(gsi1, pk = "ACCOUNT#<user>", sk = "MEMBERSHIP#<org>")]
pub struct Membership {
    pub org: String,
    pub user: String,
    pub role: Role,
}

/// A repository. On `gsi2` an original is keyed by itself and a fork by its parent, so the
/// original and its forks are one query; on `gsi3` it sits in its owner's partition sorted
/// by when it was last updated, below the account item.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "REPO#<owner>#<name>", sk = "REPO#<owner>#<name>")]
#[index(gsi1, pk = "REPO#<owner>#<name>", sk = "REPO#<owner>#<name>")]
#[index(gsi2, pk = "REPO#<owner>#<name>", sk = "REPO#<owner>#<name>", when = is_original, query = originals)]
#[index(gsi2, pk = "REPO#<parent_owner>#<name>", sk = "FORK#<owner>", when = is_fork, query = forks)]
#[index(gsi3, pk = "ACCOUNT#<owner>", sk = "#<updated_at>")]
pub struct Repo {
    pub owner: String,
    pub name: String,
    /// The owner of the repository this one forks; empty for an original.
    pub parent_owner: String,
    pub description: String,
    pub stars: i64,
    pub forks: i64,
    /// The last issue or pull-request number given out.
    pub last_number: u32,
    pub updated_at: DateTime<Utc>,
}

impl Repo {
    /// A new original repository.
    pub fn new(owner: &str, name: &str, description: &str, updated_at: DateTime<Utc>) -> Repo {
        Repo {
            owner: owner.into(),
            name: name.into(),
            parent_owner: String::new(),
            description: description.into(),
            stars: 0,
            forks: 0,
            last_number: 0,
            updated_at,
        }
    }

    /// Whether this repository is a fork of another.
    pub fn is_fork(&self) -> bool {
        !self.parent_owner.is_empty()
    }

    /// Whether this repository is an original.
    pub fn is_original(&self) -> bool {
        !self.is_fork()
    }
}

/// Whether an issue or a pull request is open.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Closed,
}

/// An issue, in its repository's partition: the repository and its newest issues are one
/// query.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "REPO#<owner>#<name>", sk = "ISSUE#<number>")]
pub struct Issue {
    pub owner: String,
    pub name: String,
    pub number: u32,
    pub title: String,
    pub author: String,
    pub status: Status,
    pub comments: u32,
    pub reactions: BTreeMap<String, u64>,
}

/// A pull request, in a partition of its own; on `gsi1` in its repository's partition.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "PR#<owner>#<name>#<number>", sk = "PR#<owner>#<name>#<number>")]
#[index(gsi1, pk = "REPO#<owner>#<name>", sk = "PR#<number>")]
pub struct PullRequest {
    pub owner: String,
    pub name: String,
    pub number: u32,
    pub title: String,
    pub author: String,
    pub status: Status,
    pub comments: u32,
    pub reactions: BTreeMap<String, u64>,
}

/// A comment on an issue. Its id sorts by time (see [`comment_id`]), so the comments of an
/// issue read oldest first.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "ISSUECOMMENT#<owner>#<name>#<issue>", sk = "ISSUECOMMENT#<id>")]
pub struct IssueComment {
    pub owner: String,
    pub name: String,
    pub issue: u32,
    pub id: String,
    pub author: String,
    pub body: String,
    pub reactions: BTreeMap<String, u64>,
}

/// A comment on a pull request.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "PRCOMMENT#<owner>#<name>#<pr>", sk = "PRCOMMENT#<id>")]
pub struct PrComment {
    pub owner: String,
    pub name: String,
    pub pr: u32,
    pub id: String,
    pub author: String,
    pub body: String,
    pub reactions: BTreeMap<String, u64>,
}

/// A star, in the repository's partition after the repository's own item: the repository
/// and its stargazers are one query.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "REPO#<owner>#<name>", sk = "STAR#<user>")]
pub struct Star {
    pub owner: String,
    pub name: String,
    pub user: String,
    pub starred_at: DateTime<Utc>,
}

/// The kinds of reaction GitHub offers.
#[derive(KeyPart, Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReactionKind {
    ThumbsUp,
    ThumbsDown,
    Laugh,
    Hooray,
    Confused,
    Heart,
    Rocket,
    Eyes,
}

impl ReactionKind {
    /// Every kind.
    pub const ALL: [ReactionKind; 8] = [
        ReactionKind::ThumbsUp,
        ReactionKind::ThumbsDown,
        ReactionKind::Laugh,
        ReactionKind::Hooray,
        ReactionKind::Confused,
        ReactionKind::Heart,
        ReactionKind::Rocket,
        ReactionKind::Eyes,
    ];

    /// The name of the kind's counter in a target's `reactions` map.
    pub fn counter(self) -> &'static str {
        match self {
            ReactionKind::ThumbsUp => "+1",
            ReactionKind::ThumbsDown => "-1",
            ReactionKind::Laugh => "laugh",
            ReactionKind::Hooray => "hooray",
            ReactionKind::Confused => "confused",
            ReactionKind::Heart => "heart",
            ReactionKind::Rocket => "rocket",
            ReactionKind::Eyes => "eyes",
        }
    }

    /// A `reactions` map with every counter at zero: new targets start with it, so that a
    /// reaction can add to its counter (a nested path needs its map to exist).
    pub fn zeroed() -> BTreeMap<String, u64> {
        ReactionKind::ALL.iter().map(|k| (k.counter().to_owned(), 0)).collect()
    }
}

/// What a reaction is on, within one repository.
#[derive(KeyPart, Serialize, Deserialize, Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Issue(u32),
    PullRequest(u32),
    IssueComment { issue: u32, id: String },
    PrComment { pr: u32, id: String },
}

/// One user's reaction of one kind on one target: the item makes a second identical reaction
/// a no-op, and the target's `reactions` map counts them.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = GitHub, pk = "REACTION#<owner>#<name>#<target>", sk = "REACTION#<user>#<kind>")]
pub struct Reaction {
    pub owner: String,
    pub name: String,
    pub target: Target,
    pub user: String,
    pub kind: ReactionKind,
}

/// The repository with its issues and stargazers (its partition of the table).
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum RepoItems {
    Repo(Repo),
    Issue(Issue),
    Star(Star),
}

/// The repository and its pull requests (its partition of `gsi1`).
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum RepoAndPulls {
    Repo(Repo),
    PullRequest(PullRequest),
}

/// An account and its repositories (its partition of `gsi3`).
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum AccountAndRepos {
    User(User),
    Organization(Organization),
    Repo(Repo),
}

/// An organization and its memberships (its partition of the table).
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum OrgAndMembers {
    Organization(Organization),
    Membership(Membership),
}

/// A user and their memberships (their partition of `gsi1`).
#[derive(Collection, Debug, Clone, PartialEq)]
pub enum UserAndOrgs {
    User(User),
    Membership(Membership),
}

/// A comment id that sorts by time, like the book's KSUIDs: the instant (fixed width, to the
/// nanosecond) and a random suffix that keeps two comments of the same instant apart.
pub fn comment_id(at: DateTime<Utc>) -> String {
    let random = ddb_model::uuid::Uuid::new_v4().simple().to_string();
    format!("{}-{}", at.format("%Y%m%dT%H%M%S%9fZ"), &random[..12])
}

/// The writes of the design that touch more than one item or return a number.
pub mod write {
    use super::*;

    /// The next number of `owner/name`'s issues and pull requests (one counter for both):
    /// one `UpdateItem` that returns the number its own write produced, whatever the
    /// concurrency. `at_least_once`, as in the design: after a lost response the SDK's retry
    /// may skip a number, never hand one out twice.
    async fn next_number(db: &Db<GitHub>, owner: &str, name: &str) -> Result<u32, Error> {
        let repo =
            Repo::update(db, owner, name).add(Repo::LAST_NUMBER, 1u32).at_least_once().await?;
        Ok(repo.last_number)
    }

    /// Opens issue `title` in `owner/name`: the next number, then the issue. Two requests,
    /// as the design promises.
    pub async fn open_issue(
        db: &Db<GitHub>,
        owner: &str,
        name: &str,
        title: &str,
        author: &str,
    ) -> Result<Issue, Error> {
        let issue = Issue {
            owner: owner.into(),
            name: name.into(),
            number: next_number(db, owner, name).await?,
            title: title.into(),
            author: author.into(),
            status: Status::Open,
            comments: 0,
            reactions: ReactionKind::zeroed(),
        };
        issue.create(db).await?;
        Ok(issue)
    }

    /// Opens pull request `title` in `owner/name`, numbered from the same counter as issues.
    /// Two requests.
    pub async fn open_pull_request(
        db: &Db<GitHub>,
        owner: &str,
        name: &str,
        title: &str,
        author: &str,
    ) -> Result<PullRequest, Error> {
        let pr = PullRequest {
            owner: owner.into(),
            name: name.into(),
            number: next_number(db, owner, name).await?,
            title: title.into(),
            author: author.into(),
            status: Status::Open,
            comments: 0,
            reactions: ReactionKind::zeroed(),
        };
        pr.create(db).await?;
        Ok(pr)
    }

    /// Forks `parent/name` into `owner`'s account: the fork and the parent's fork counter in
    /// one transaction. A missing parent is `is_not_found()`, an existing fork
    /// `is_already_exists()`; either way nothing is written.
    pub async fn fork(
        db: &Db<GitHub>,
        parent: &Repo,
        owner: &str,
        at: DateTime<Utc>,
    ) -> Result<Repo, Error> {
        let fork = Repo {
            owner: owner.into(),
            parent_owner: parent.owner.clone(),
            ..Repo::new(owner, &parent.name, &parent.description, at)
        };
        db.transaction()
            .create(&fork)
            .update(Repo::key(&parent.owner, &parent.name), |u| u.add(Repo::FORKS, 1i64))
            .await?;
        Ok(fork)
    }

    /// Stars `owner/name` for `user`: the star and the repository's counter in one
    /// transaction. `Ok(false)` when the user had starred it already (nothing changes).
    // Not a one-directional `#[edge(inverse = none)]`, to keep the design's keys: an edge's
    // partition key holds its node's key as one key part, so a star edge would key the
    // repository by a composite `#[derive(KeyPart)]` of owner and name, stored as
    // `REPO#<owner>.<name>` (tested in tests/it/composite.rs), where the design writes
    // `REPO#<owner>#<name>` (two parts) so that stars share the repository's item
    // collection. A transaction is the same one request.
    pub async fn star(db: &Db<GitHub>, star: &Star) -> Result<bool, Error> {
        let done = db
            .transaction()
            .create(star)
            .update(Repo::key(&star.owner, &star.name), |u| u.add(Repo::STARS, 1i64))
            .await;
        match done {
            Err(e) if e.is_already_exists() => Ok(false),
            other => other.map(|()| true),
        }
    }

    /// Removes `user`'s star from `owner/name`, and one from the counter, in one transaction.
    /// `Ok(false)` when there was no star (nothing changes); a missing repository is
    /// `is_not_found()`.
    // A transaction for the same reason as `star`.
    pub async fn unstar(
        db: &Db<GitHub>,
        owner: &str,
        name: &str,
        user: &str,
    ) -> Result<bool, Error> {
        let done = db
            .transaction()
            .delete_with(Star::key(owner, name, user), |d| d.condition(Star::USER.exists()))
            .update(Repo::key(owner, name), |u| u.add(Repo::STARS, -1i64))
            .await;
        match done {
            // The star's own guard (action 0): there was none.
            Err(Error::TransactionCanceled { reasons, .. })
                if reasons
                    .iter()
                    .any(|r| r.action == 0 && matches!(r.reason, CancelReason::Condition(_))) =>
            {
                Ok(false)
            }
            other => other.map(|()| true),
        }
    }

    /// Adds a member to an organization: the membership and the organization's member count
    /// in one transaction. A member already there is `is_already_exists()`.
    pub async fn add_member(db: &Db<GitHub>, membership: &Membership) -> Result<(), Error> {
        db.transaction()
            .create(membership)
            .update(Organization::key(&membership.org), |u| u.add(Organization::MEMBERS, 1u32))
            .await
    }

    /// Comments on an issue: the comment and the issue's comment count in one transaction
    /// (a missing issue is `is_not_found()` and writes nothing).
    pub async fn comment_on_issue(db: &Db<GitHub>, comment: &IssueComment) -> Result<(), Error> {
        db.transaction()
            .create(comment)
            .update(Issue::key(&comment.owner, &comment.name, comment.issue), |u| {
                u.add(Issue::COMMENTS, 1u32)
            })
            .await
    }

    /// Comments on a pull request, like [`comment_on_issue`].
    pub async fn comment_on_pull_request(
        db: &Db<GitHub>,
        comment: &PrComment,
    ) -> Result<(), Error> {
        db.transaction()
            .create(comment)
            .update(PullRequest::key(&comment.owner, &comment.name, comment.pr), |u| {
                u.add(PullRequest::COMMENTS, 1u32)
            })
            .await
    }

    /// Reacts: the reaction item and its counter on the target in one transaction.
    /// `Ok(false)` when the user had reacted so already (nothing changes); a missing target
    /// is `is_not_found()`.
    // A transaction: the counter is an entry of the target's `reactions` map chosen by the
    // reaction's kind, and the target is an issue, a pull request or a comment; an edge's
    // counter is one integer field of one node type.
    pub async fn react(db: &Db<GitHub>, reaction: &Reaction) -> Result<bool, Error> {
        let (owner, name) = (&reaction.owner, &reaction.name);
        let counter = reaction.kind.counter();
        let tx = db.transaction().create(reaction);
        let tx = match &reaction.target {
            Target::Issue(n) => tx.update(Issue::key(owner, name, *n), |u| {
                u.add(Issue::REACTIONS.entry(counter), 1u64)
            }),
            Target::PullRequest(n) => tx.update(PullRequest::key(owner, name, *n), |u| {
                u.add(PullRequest::REACTIONS.entry(counter), 1u64)
            }),
            Target::IssueComment { issue, id } => tx
                .update(IssueComment::key(owner, name, *issue, id), |u| {
                    u.add(IssueComment::REACTIONS.entry(counter), 1u64)
                }),
            Target::PrComment { pr, id } => tx.update(PrComment::key(owner, name, *pr, id), |u| {
                u.add(PrComment::REACTIONS.entry(counter), 1u64)
            }),
        };
        match tx.await {
            Err(e) if e.is_already_exists() => Ok(false),
            other => other.map(|()| true),
        }
    }

    /// Records a push: the repository's `updated_at` moves, and with it the repository's
    /// place in its owner's `gsi3` partition (the update writes that index key again; the
    /// owner comes from the key). One `UpdateItem`; the counters are untouched.
    pub async fn touch(
        db: &Db<GitHub>,
        owner: &str,
        name: &str,
        at: DateTime<Utc>,
    ) -> Result<Repo, Error> {
        Repo::update(db, owner, name).set(Repo::UPDATED_AT, at).await
    }
}

/// An instant of the data set: day `day` of March 2024 at `hour`:00 UTC.
pub fn at(day: u32, hour: u32) -> DateTime<Utc> {
    use ddb_model::chrono::TimeZone;
    Utc.with_ymd_and_hms(2024, 3, day, hour, 0, 0).single().unwrap_or_default()
}

/// A comment with a fixed id (the data set's comments are numbered, so results are exact).
pub fn issue_comment(issue: u32, seq: u32, author: &str, body: &str) -> IssueComment {
    IssueComment {
        owner: "alice".into(),
        name: "kv".into(),
        issue,
        id: format!("{}-{seq:04}", at(10, 9).format("%Y%m%dT%H%M%S%9fZ")),
        author: author.into(),
        body: body.into(),
        reactions: ReactionKind::zeroed(),
    }
}

/// A reaction on `alice/kv`.
pub fn reaction(target: Target, user: &str, kind: ReactionKind) -> Reaction {
    Reaction { owner: "alice".into(), name: "kv".into(), target, user: user.into(), kind }
}

/// The data set: five users, the organization `acme` with three members, five repositories
/// (`alice/kv` with two forks and a fork of a fork), issues and pull requests 1..=15 of
/// `alice/kv` (pull requests are the numbers 2, 6, 10 and 14), four stars, comments and
/// reactions. Written through the design's own writes.
pub async fn load(db: &Db<GitHub>) -> Result<(), Error> {
    use write::*;
    let users = [
        ("alice", "Alice"),
        ("bob", "Bob"),
        ("carol", "Carol"),
        ("dave", "Dave"),
        ("erin", "Erin"),
    ];
    for (i, (login, name)) in users.into_iter().enumerate() {
        User { login: login.into(), name: name.into(), created_at: at(1, i as u32) }
            .create(db)
            .await?;
    }
    Organization {
        login: "acme".into(),
        name: "Acme Corp".into(),
        members: 0,
        created_at: at(1, 9),
    }
    .create(db)
    .await?;
    for (user, role) in [("alice", Role::Owner), ("bob", Role::Member), ("carol", Role::Member)] {
        add_member(db, &Membership { org: "acme".into(), user: user.into(), role }).await?;
    }
    let kv = Repo::new("alice", "kv", "An embedded key-value store", at(1, 12));
    for repo in [
        &kv,
        &Repo::new("alice", "blog", "Notes", at(3, 12)),
        &Repo::new("alice", "dotfiles", "Configuration", at(5, 12)),
        &Repo::new("acme", "api", "The public API", at(2, 12)),
        &Repo::new("acme", "web", "The website", at(4, 12)),
    ] {
        repo.create(db).await?;
    }
    let bobs = fork(db, &kv, "bob", at(6, 12)).await?;
    fork(db, &kv, "carol", at(7, 12)).await?;
    fork(db, &bobs, "dave", at(8, 12)).await?;
    for n in 1..=15u32 {
        let author = ["alice", "bob", "carol"][n as usize % 3];
        if n % 4 == 2 {
            open_pull_request(db, "alice", "kv", &format!("Change {n}"), author).await?;
        } else {
            open_issue(db, "alice", "kv", &format!("Problem {n}"), author).await?;
        }
    }
    for (i, user) in ["bob", "carol", "dave", "erin"].into_iter().enumerate() {
        let one = Star {
            owner: "alice".into(),
            name: "kv".into(),
            user: user.into(),
            starred_at: at(9, i as u32),
        };
        star(db, &one).await?;
    }
    star(
        db,
        &Star {
            owner: "acme".into(),
            name: "api".into(),
            user: "alice".into(),
            starred_at: at(9, 9),
        },
    )
    .await?;
    for (seq, author, body) in
        [(1, "bob", "I see it too"), (2, "carol", "Same here"), (3, "alice", "Fixed")]
    {
        comment_on_issue(db, &issue_comment(3, seq, author, body)).await?;
    }
    let first = issue_comment(3, 1, "", "").id;
    for (target, user, kind) in [
        (Target::Issue(3), "bob", ReactionKind::Heart),
        (Target::Issue(3), "carol", ReactionKind::Heart),
        (Target::Issue(3), "carol", ReactionKind::ThumbsUp),
        (Target::PullRequest(6), "alice", ReactionKind::Rocket),
        (Target::IssueComment { issue: 3, id: first }, "alice", ReactionKind::ThumbsUp),
    ] {
        react(db, &reaction(target, user, kind)).await?;
    }
    Ok(())
}
