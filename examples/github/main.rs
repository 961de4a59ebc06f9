//! The GitHub model of *The DynamoDB Book*, in one table with three indexes: accounts
//! (users and organizations), memberships, repositories and forks, issues and pull requests
//! numbered from one counter, comments, reactions and stars (the key design is in
//! `model.rs`). The program loads a small data set and runs every access pattern of the
//! design as one typed call, then prints a table of the patterns, the calls and the requests
//! each sent. It checks each result and each request count against what the design promises,
//! and exits with an error when one is wrong.
//!
//!     cargo run --example github
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

mod model;

use std::future::Future;

use ddb_model::local;
use ddb_model::prelude::*;
use model::write::*;
use model::*;

/// One access pattern as run: what it is, the call, the requests the design promises and
/// those it sent.
struct Row {
    pattern: &'static str,
    call: &'static str,
    promised: u64,
    sent: u64,
    note: &'static str,
}

/// The patterns run so far and what went wrong.
struct Report<'a> {
    db: &'a Db<GitHub>,
    rows: Vec<Row>,
    failures: Vec<String>,
}

impl<'a> Report<'a> {
    /// Runs `call` and records the requests it sent against `promised`.
    async fn run<T>(
        &mut self,
        pattern: &'static str,
        call: &'static str,
        promised: u64,
        note: &'static str,
        run: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let before = self.db.requests().total();
        let out = run.await?;
        let sent = self.db.requests().total() - before;
        if sent != promised {
            self.failures
                .push(format!("{pattern}: {sent} requests, the design promises {promised}"));
        }
        self.rows.push(Row { pattern, call, promised, sent, note });
        Ok(out)
    }

    /// Records a wrong result of the last pattern.
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            let pattern = self.rows.last().map_or("load", |r| r.pattern);
            self.failures.push(format!("{pattern}: {}", what()));
        }
    }

    fn print(&self) {
        println!("| pattern | call | requests |");
        println!("| --- | --- | --- |");
        for r in &self.rows {
            let mark = if r.sent == r.promised { "" } else { " (WRONG)" };
            let note = if r.note.is_empty() { String::new() } else { format!(" — {}", r.note) };
            println!("| {} | `{}` | {}{mark}{note} |", r.pattern, r.call, r.sent);
        }
    }
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db: Db<GitHub> = local::isolated_db().await?;
    load(&db).await?;
    let mut r = Report { db: &db, rows: Vec::new(), failures: Vec::new() };

    // Accounts and memberships.
    let alice =
        r.run("get a user", "User::get(&db, \"alice\")", 1, "", User::get(&db, "alice")).await?;
    r.check(alice.is_some_and(|u| u.name == "Alice"), || "alice not found".into());
    let acme = r
        .run(
            "get an organization",
            "Organization::get(&db, \"acme\")",
            1,
            "",
            Organization::get(&db, "acme"),
        )
        .await?;
    r.check(acme.is_some_and(|o| o.members == 3), || "acme should have 3 members".into());
    let erin = Membership { org: "acme".into(), user: "erin".into(), role: Role::Member };
    r.run(
        "add a member (membership + count)",
        "write::add_member(&db, &membership)",
        1,
        "",
        add_member(&db, &erin),
    )
    .await?;
    let items = r
        .run(
            "an organization and its members",
            "Organization::partition(&db, \"acme\").collection::<OrgAndMembers>()",
            1,
            "",
            Organization::partition(&db, "acme").collection::<OrgAndMembers>().all(),
        )
        .await?;
    let members: Vec<&str> = items
        .iter()
        .filter_map(|i| match i {
            OrgAndMembers::Membership(m) => Some(m.user.as_str()),
            OrgAndMembers::Organization(_) => None,
        })
        .collect();
    r.check(
        matches!(&items[..], [OrgAndMembers::Organization(o), ..] if o.members == 4)
            && members == ["alice", "bob", "carol", "erin"],
        || format!("{items:?}"),
    );
    let items = r
        .run(
            "a user and their organizations",
            "User::partition_gsi1(&db, \"bob\").collection::<UserAndOrgs>()",
            1,
            "",
            User::partition_gsi1(&db, "bob").collection::<UserAndOrgs>().all(),
        )
        .await?;
    r.check(
        matches!(&items[..], [UserAndOrgs::User(u), UserAndOrgs::Membership(m)]
            if u.login == "bob" && m.org == "acme" && m.role == Role::Member),
        || format!("{items:?}"),
    );

    // Repositories.
    let repo = r
        .run(
            "get a repository",
            "Repo::get(&db, \"alice\", \"kv\")",
            1,
            "",
            Repo::get(&db, "alice", "kv"),
        )
        .await?;
    r.check(repo.as_ref().is_some_and(|k| (k.stars, k.forks, k.last_number) == (4, 2, 15)), || {
        format!("{repo:?}")
    });
    let Some(kv) = repo else { return Err("alice/kv is missing".into()) };
    let tools = Repo::new("erin", "tools", "Small tools", at(9, 12));
    r.run("create a repository", "repo.create(&db)", 1, "", tools.create(&db)).await?;
    let items = r
        .run(
            "an account and its repositories, newest updated first",
            "User::partition_gsi3(&db, \"alice\").collection::<AccountAndRepos>().reverse().limit(3)",
            1,
            "",
            User::partition_gsi3(&db, "alice").collection::<AccountAndRepos>().reverse().limit(3).all(),
        )
        .await?;
    r.check(logins(&items) == ["user alice", "alice/dotfiles", "alice/blog"], || {
        format!("{:?}", logins(&items))
    });
    let touched = r
        .run(
            "record a push (updated_at moves the repository in gsi3)",
            "Repo::update(&db, \"alice\", \"kv\").set(Repo::UPDATED_AT, at)",
            1,
            "",
            touch(&db, "alice", "kv", at(10, 12)),
        )
        .await?;
    r.check(touched.updated_at == at(10, 12) && touched.stars == 4, || format!("{touched:?}"));
    let items = Organization::partition_gsi3(&db, "acme")
        .collection::<AccountAndRepos>()
        .reverse()
        .all()
        .await?;
    r.check(logins(&items) == ["org acme", "acme/web", "acme/api"], || {
        format!("{:?}", logins(&items))
    });
    let items = User::partition_gsi3(&db, "alice")
        .collection::<AccountAndRepos>()
        .reverse()
        .limit(2)
        .all()
        .await?;
    r.check(logins(&items) == ["user alice", "alice/kv"], || {
        format!("after the push: {:?}", logins(&items))
    });

    // Forks.
    let fork_of = r
        .run(
            "fork a repository (fork + parent's count)",
            "write::fork(&db, &parent, \"erin\", at)",
            1,
            "",
            fork(&db, &kv, "erin", at(10, 13)),
        )
        .await?;
    r.check(fork_of.parent_owner == "alice", || format!("{fork_of:?}"));
    let repos = r
        .run(
            "a repository and its forks",
            "Repo::partition_forks(&db, \"alice\", \"kv\").reverse()",
            1,
            "",
            Repo::partition_forks(&db, "alice", "kv").reverse().all(),
        )
        .await?;
    let owners: Vec<&str> = repos.iter().map(|r| r.owner.as_str()).collect();
    r.check(
        owners == ["alice", "erin", "carol", "bob"] && repos.first().is_some_and(|k| k.forks == 3),
        || format!("{owners:?}"),
    );
    let forks = Repo::query_forks(&db, "bob", "kv").all().await?;
    r.check(forks.len() == 1 && forks[0].owner == "dave", || format!("forks of bob/kv: {forks:?}"));

    // Issues and pull requests.
    let items = r
        .run(
            "a repository and its newest issues",
            "Repo::partition(&db, \"alice\", \"kv\").collection::<RepoItems>().between_entities::<Issue, Repo>().reverse().limit(4)",
            1,
            "",
            Repo::partition(&db, "alice", "kv")
                .collection::<RepoItems>()
                .between_entities::<Issue, Repo>()
                .reverse()
                .limit(4)
                .all(),
        )
        .await?;
    let numbers: Vec<u32> = items
        .iter()
        .filter_map(|i| if let RepoItems::Issue(i) = i { Some(i.number) } else { None })
        .collect();
    r.check(matches!(items.first(), Some(RepoItems::Repo(_))) && numbers == [15, 13, 12], || {
        format!("{items:?}")
    });
    let issue = r
        .run(
            "open an issue (number from the repository's counter)",
            "write::open_issue(&db, \"alice\", \"kv\", title, author)",
            2,
            "",
            open_issue(&db, "alice", "kv", "Crash on start", "erin"),
        )
        .await?;
    r.check(issue.number == 16, || format!("issue number {}", issue.number));
    let got = r
        .run(
            "get an issue",
            "Issue::get(&db, \"alice\", \"kv\", 3)",
            1,
            "",
            Issue::get(&db, "alice", "kv", 3),
        )
        .await?;
    r.check(
        got.as_ref().is_some_and(|i| {
            i.comments == 3
                && i.reactions.get("heart") == Some(&2)
                && i.reactions.get("+1") == Some(&1)
        }),
        || format!("{got:?}"),
    );
    let items = r
        .run(
            "a repository and its newest pull requests",
            "Repo::partition_gsi1(&db, \"alice\", \"kv\").collection::<RepoAndPulls>().reverse().limit(3)",
            1,
            "",
            Repo::partition_gsi1(&db, "alice", "kv").collection::<RepoAndPulls>().reverse().limit(3).all(),
        )
        .await?;
    let numbers: Vec<u32> = items
        .iter()
        .filter_map(|i| if let RepoAndPulls::PullRequest(p) = i { Some(p.number) } else { None })
        .collect();
    r.check(matches!(items.first(), Some(RepoAndPulls::Repo(_))) && numbers == [14, 10], || {
        format!("{items:?}")
    });
    let pr = r
        .run(
            "open a pull request",
            "write::open_pull_request(&db, \"alice\", \"kv\", title, author)",
            2,
            "",
            open_pull_request(&db, "alice", "kv", "Fix the crash", "erin"),
        )
        .await?;
    r.check(pr.number == 17, || format!("pull request number {}", pr.number));
    let got = r
        .run(
            "get a pull request",
            "PullRequest::get(&db, \"alice\", \"kv\", 6)",
            1,
            "",
            PullRequest::get(&db, "alice", "kv", 6),
        )
        .await?;
    r.check(got.as_ref().is_some_and(|p| p.reactions.get("rocket") == Some(&1)), || {
        format!("{got:?}")
    });

    // Comments and reactions.
    let comment = IssueComment {
        id: comment_id(at(10, 14)),
        ..issue_comment(16, 0, "alice", "Which version?")
    };
    r.run(
        "comment on an issue (comment + count)",
        "write::comment_on_issue(&db, &comment)",
        1,
        "",
        comment_on_issue(&db, &comment),
    )
    .await?;
    let comments = r
        .run(
            "an issue's comments, oldest first",
            "IssueComment::query(&db, \"alice\", \"kv\", 3)",
            1,
            "",
            IssueComment::query(&db, "alice", "kv", 3).all(),
        )
        .await?;
    let authors: Vec<&str> = comments.iter().map(|c| c.author.as_str()).collect();
    r.check(
        authors == ["bob", "carol", "alice"]
            && comments.first().is_some_and(|c| c.reactions.get("+1") == Some(&1)),
        || format!("{authors:?}"),
    );
    let on_pr = PrComment {
        owner: "alice".into(),
        name: "kv".into(),
        pr: 17,
        id: comment_id(at(10, 15)),
        author: "alice".into(),
        body: "Thanks!".into(),
        reactions: ReactionKind::zeroed(),
    };
    r.run(
        "comment on a pull request",
        "write::comment_on_pull_request(&db, &comment)",
        1,
        "",
        comment_on_pull_request(&db, &on_pr),
    )
    .await?;
    let comments = r
        .run(
            "a pull request's comments",
            "PrComment::query(&db, \"alice\", \"kv\", 17)",
            1,
            "",
            PrComment::query(&db, "alice", "kv", 17).all(),
        )
        .await?;
    r.check(comments == [on_pr.clone()], || format!("{comments:?}"));
    let heart = reaction(Target::PullRequest(17), "bob", ReactionKind::Heart);
    let new = r
        .run(
            "react (reaction + the target's counter)",
            "write::react(&db, &reaction)",
            1,
            "",
            react(&db, &heart),
        )
        .await?;
    let again = react(&db, &heart).await?;
    r.check(new && !again, || format!("first reaction {new}, second {again}"));
    let reactions = r
        .run(
            "the reactions on a target",
            "Reaction::query(&db, \"alice\", \"kv\", Target::Issue(3))",
            1,
            "",
            Reaction::query(&db, "alice", "kv", Target::Issue(3)).all(),
        )
        .await?;
    let who: Vec<(&str, ReactionKind)> =
        reactions.iter().map(|x| (x.user.as_str(), x.kind)).collect();
    r.check(
        who == [
            ("bob", ReactionKind::Heart),
            ("carol", ReactionKind::Heart),
            ("carol", ReactionKind::ThumbsUp),
        ],
        || format!("{who:?}"),
    );

    // Stars.
    let erins = Star {
        owner: "alice".into(),
        name: "kv".into(),
        user: "erin".into(),
        starred_at: at(10, 16),
    };
    let new = r
        .run(
            "star a repository (star + count)",
            "write::star(&db, &star)",
            1,
            "",
            star(&db, &erins),
        )
        .await?;
    r.check(!new, || "erin had starred alice/kv already".into());
    let alices = Star { user: "alice".into(), ..erins.clone() };
    r.check(star(&db, &alices).await?, || "alice's first star".into());
    let gone = r
        .run(
            "unstar a repository",
            "write::unstar(&db, \"alice\", \"kv\", \"erin\")",
            1,
            "",
            unstar(&db, "alice", "kv", "erin"),
        )
        .await?;
    r.check(gone, || "erin's star was there".into());
    let items = r
        .run(
            "a repository and its stargazers",
            "Repo::partition(&db, \"alice\", \"kv\").collection::<RepoItems>().between_entities::<Repo, Star>()",
            1,
            "",
            Repo::partition(&db, "alice", "kv").collection::<RepoItems>().between_entities::<Repo, Star>().all(),
        )
        .await?;
    let users: Vec<&str> = items
        .iter()
        .filter_map(|i| if let RepoItems::Star(s) = i { Some(s.user.as_str()) } else { None })
        .collect();
    r.check(
        matches!(items.first(), Some(RepoItems::Repo(k)) if k.stars == 4)
            && users == ["alice", "bob", "carol", "dave"],
        || format!("{items:?}"),
    );

    r.print();
    if r.failures.is_empty() {
        let over = r.rows.iter().filter(|row| row.note.starts_with("the design sends")).count();
        let over = match over {
            0 => String::new(),
            n => format!(" ({n} send more than the design needs, as their notes say)"),
        };
        println!(
            "\nall {} access patterns: the expected results and request counts{over}",
            r.rows.len()
        );
        Ok(())
    } else {
        for f in &r.failures {
            eprintln!("WRONG: {f}");
        }
        std::process::exit(1);
    }
}
