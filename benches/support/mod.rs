//! Models and the hand-written aws-sdk-dynamodb + serde_dynamo code the benches compare
//! ddb-model with. The hand-written side is what a careful user would write without the
//! library: `format!` for the keys, `serde_dynamo` for the fields, the entity-type attribute
//! set on write and checked on read.
//!
//! Each bench binary uses part of this module.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::{Entity, Item, Table};
use serde::{Deserialize, Serialize};

/// The table every bench model lives in.
#[derive(Table)]
#[table(name = "bench", pk = "pk", sk = "sk", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
pub struct App;

// -------------------------------------------------------------------------------------------
// A small entity: 5 fields, no index.
// -------------------------------------------------------------------------------------------

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE", name = "Small")]
pub struct Small {
    pub id: String,
    pub name: String,
    pub email: String,
    pub age: u32,
    pub active: bool,
}

pub fn small() -> Small {
    Small {
        id: "u-4711".into(),
        name: "Ann Example".into(),
        email: "ann@example.com".into(),
        age: 42,
        active: true,
    }
}

pub mod hand_small {
    use super::*;

    pub fn to_item(e: &Small) -> Result<Item, serde_dynamo::Error> {
        let mut item: Item = serde_dynamo::to_item(e)?;
        item.insert("pk".into(), AttributeValue::S(format!("USER#{}", e.id)));
        item.insert("sk".into(), AttributeValue::S("PROFILE".into()));
        item.insert("_type".into(), AttributeValue::S("Small".into()));
        Ok(item)
    }

    pub fn from_item(mut item: Item) -> Result<Small, serde_dynamo::Error> {
        check_type(&item, "Small")?;
        for attr in ["pk", "sk", "_type"] {
            item.remove(attr);
        }
        serde_dynamo::from_item(item)
    }
}

// -------------------------------------------------------------------------------------------
// A large entity: 50 fields, nested structs, lists, maps, options; one index.
// -------------------------------------------------------------------------------------------

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Geo {
    pub lat: f64,
    pub lon: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Address {
    pub street: String,
    pub city: String,
    pub zip: String,
    pub country: String,
    pub geo: Geo,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Contact {
    pub kind: String,
    pub value: String,
    pub primary: bool,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Notifications {
    pub email: bool,
    pub sms: bool,
    pub push: bool,
    pub digest: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Settings {
    pub theme: String,
    pub font_size: u8,
    pub notifications: Notifications,
    pub shortcuts: Vec<String>,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "ACCOUNT#<id>", sk = "REGION#<region>", name = "Large")]
#[index(gsi1, pk = "ORG#<org>", sk = "ACCOUNT#<id>")]
pub struct Large {
    // 1-15: strings (three of them in keys)
    pub id: String,
    pub org: String,
    pub region: String,
    pub name: String,
    pub email: String,
    pub phone: String,
    pub company: String,
    pub title: String,
    pub bio: String,
    pub website: String,
    pub locale: String,
    pub timezone: String,
    pub currency: String,
    pub status: String,
    pub plan: String,
    // 16-25: numbers
    pub age: u32,
    pub logins: u64,
    pub failed_logins: u32,
    pub balance_cents: i64,
    pub credit_limit: i64,
    pub score: f64,
    pub rating: f32,
    pub created_at: i64,
    pub updated_at: i64,
    pub last_login_at: i64,
    // 26-30: booleans
    pub verified: bool,
    pub admin: bool,
    pub newsletter: bool,
    pub two_factor: bool,
    pub suspended: bool,
    // 31-34: options (two None, two Some)
    pub nickname: Option<String>,
    // Left out when `None`, as ddb-model stores them (serde_dynamo would write `NULL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub referrer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    pub manager_id: Option<String>,
    // 35-37: lists
    pub tags: Vec<String>,
    pub roles: Vec<String>,
    pub scores: Vec<u32>,
    // 38-40: nested structs
    pub address: Address,
    pub billing: Address,
    pub shipping: Option<Address>,
    // 41-42: maps
    pub preferences: BTreeMap<String, String>,
    pub counters: BTreeMap<String, u64>,
    // 43-44: a list of structs, a struct of structs
    pub contacts: Vec<Contact>,
    pub settings: Settings,
    // 45-50
    pub notes: String,
    pub avatar_url: String,
    pub department: String,
    pub cost_center: String,
    pub employee_no: u32,
    pub quota: u64,
}

fn address(n: u32) -> Address {
    Address {
        street: format!("{n} Example Street"),
        city: "Springfield".into(),
        zip: format!("{:05}", 10_000 + n),
        country: "US".into(),
        geo: Geo { lat: 40.7128 + f64::from(n), lon: -74.006 },
    }
}

pub fn large() -> Large {
    Large {
        id: "acct-000042".into(),
        org: "acme".into(),
        region: "eu-west-1".into(),
        name: "Ann Example".into(),
        email: "ann@example.com".into(),
        phone: "+1 555 0100".into(),
        company: "Acme Corporation".into(),
        title: "Principal Engineer".into(),
        bio: "Builds things that store other things. ".repeat(4),
        website: "https://example.com/~ann".into(),
        locale: "en-US".into(),
        timezone: "Europe/Dublin".into(),
        currency: "EUR".into(),
        status: "active".into(),
        plan: "enterprise".into(),
        age: 42,
        logins: 12_345,
        failed_logins: 3,
        balance_cents: -12_050,
        credit_limit: 1_000_000,
        score: 98.25,
        rating: 4.5,
        created_at: 1_700_000_000,
        updated_at: 1_710_000_000,
        last_login_at: 1_720_000_000,
        verified: true,
        admin: false,
        newsletter: true,
        two_factor: true,
        suspended: false,
        nickname: Some("annie".into()),
        referrer: None,
        deleted_at: None,
        manager_id: Some("acct-000001".into()),
        tags: (0..8).map(|i| format!("tag-{i}")).collect(),
        roles: vec!["reader".into(), "writer".into(), "admin-of-nothing".into()],
        scores: (0..10).map(|i| i * 7).collect(),
        address: address(1),
        billing: address(2),
        shipping: Some(address(3)),
        preferences: (0..6).map(|i| (format!("pref-{i}"), format!("value-{i}"))).collect(),
        counters: (0..6u64).map(|i| (format!("counter-{i}"), i * 1000)).collect(),
        contacts: (0..3)
            .map(|i| Contact {
                kind: "email".into(),
                value: format!("ann+{i}@example.com"),
                primary: i == 0,
            })
            .collect(),
        settings: Settings {
            theme: "dark".into(),
            font_size: 14,
            notifications: Notifications {
                email: true,
                sms: false,
                push: true,
                digest: "weekly".into(),
            },
            shortcuts: vec!["ctrl+k".into(), "ctrl+p".into(), "g g".into()],
        },
        notes: "Prefers e-mail. Do not call before 10:00.".into(),
        avatar_url: "https://example.com/avatars/ann.png".into(),
        department: "Platform".into(),
        cost_center: "CC-1234".into(),
        employee_no: 4711,
        quota: 50_000,
    }
}

pub mod hand_large {
    use super::*;

    pub fn to_item(e: &Large) -> Result<Item, serde_dynamo::Error> {
        let mut item: Item = serde_dynamo::to_item(e)?;
        item.insert("pk".into(), AttributeValue::S(format!("ACCOUNT#{}", e.id)));
        item.insert("sk".into(), AttributeValue::S(format!("REGION#{}", e.region)));
        item.insert("gsi1pk".into(), AttributeValue::S(format!("ORG#{}", e.org)));
        item.insert("gsi1sk".into(), AttributeValue::S(format!("ACCOUNT#{}", e.id)));
        item.insert("_type".into(), AttributeValue::S("Large".into()));
        Ok(item)
    }

    pub fn from_item(mut item: Item) -> Result<Large, serde_dynamo::Error> {
        check_type(&item, "Large")?;
        for attr in ["pk", "sk", "_type", "gsi1pk", "gsi1sk"] {
            item.remove(attr);
        }
        serde_dynamo::from_item(item)
    }
}

/// The hand-written entity-type check: the item must carry `name` in `_type`.
pub fn check_type(item: &Item, name: &str) -> Result<(), serde_dynamo::Error> {
    match item.get("_type") {
        Some(AttributeValue::S(t)) if t == name => Ok(()),
        _ => Err(<serde_dynamo::Error as serde::de::Error>::custom("not of this entity type")),
    }
}

// -------------------------------------------------------------------------------------------
// Ratios: criterion writes its estimates to target/criterion; after a run, each bench binary
// prints ddb-model's median over the hand-written median for every group it ran.
// -------------------------------------------------------------------------------------------

/// The function names every paired group uses.
pub const DDB: &str = "ddb-model";
pub const HAND: &str = "hand-written";

/// Where criterion stored its results: `$CRITERION_HOME`, else `<target>/criterion` found
/// from this executable's path (`<target>/release/deps/<bench>-<hash>`).
fn criterion_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return Some(PathBuf::from(home));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.parent()?.parent()?.parent()?.join("criterion"))
}

/// The median point estimate, in nanoseconds, of `group/function`, if this process measured
/// it (an older estimate, of a group filtered out of this run, is ignored).
fn median_ns(home: &Path, started: SystemTime, group: &str, function: &str) -> Option<f64> {
    // Criterion replaces characters that are not safe in file names.
    let dir = |s: &str| s.replace(['/', '\\', ':', '?', '*', '"', '<', '>', '|'], "_");
    let path = home.join(dir(group)).join(dir(function)).join("new").join("estimates.json");
    if std::fs::metadata(&path).and_then(|m| m.modified()).ok()? < started {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["median"]["point_estimate"].as_f64()
}

/// Prints a markdown table of `groups`: each one's two medians and their ratio. Groups not
/// measured since `started` (filtered out on the command line) are skipped.
pub fn print_ratios(started: SystemTime, groups: &[&str]) {
    let Some(home) = criterion_home() else { return };
    let mut rows = Vec::new();
    for group in groups {
        if let (Some(ddb), Some(hand)) =
            (median_ns(&home, started, group, DDB), median_ns(&home, started, group, HAND))
        {
            rows.push(format!(
                "| {group} | {} | {} | {:.2} |",
                show_ns(ddb),
                show_ns(hand),
                ddb / hand
            ));
        }
    }
    if rows.is_empty() {
        return;
    }
    println!("\n| benchmark | ddb-model (median) | hand-written (median) | ratio |");
    println!("| --- | ---: | ---: | ---: |");
    for row in rows {
        println!("{row}");
    }
}

fn show_ns(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// A map from attribute names to values, for readable hand-written keys.
pub fn key_map(pairs: &[(&str, &str)]) -> HashMap<String, AttributeValue> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), AttributeValue::S((*v).to_owned()))).collect()
}

// -------------------------------------------------------------------------------------------
// A composite key: a string partition, a sort key of two fixed-width integers.
// -------------------------------------------------------------------------------------------

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<user>", sk = "ORDER#<year>#<seq>", name = "Order")]
pub struct Order {
    pub user: String,
    pub year: u16,
    pub seq: u64,
    pub total_cents: u64,
    pub note: String,
}

pub mod hand_keys {
    /// `USER#<id>` / `PROFILE`, as `format!` writes it.
    pub fn small(id: &str) -> (String, String) {
        (format!("USER#{id}"), "PROFILE".to_owned())
    }

    /// `USER#<user>` / `ORDER#<year>#<seq>`, the integers at the widths that keep byte order
    /// numeric (the widths ddb-model uses).
    pub fn order(user: &str, year: u16, seq: u64) -> (String, String) {
        (format!("USER#{user}"), format!("ORDER#{year:05}#{seq:020}"))
    }

    pub fn parse_small(pk: &str, sk: &str) -> Option<String> {
        let id = pk.strip_prefix("USER#")?;
        (sk == "PROFILE" && !id.contains('#')).then(|| id.to_owned())
    }

    pub fn parse_order(pk: &str, sk: &str) -> Option<(String, u16, u64)> {
        let user = pk.strip_prefix("USER#")?;
        let (year, seq) = sk.strip_prefix("ORDER#")?.split_once('#')?;
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        if user.contains('#') || !digits(year, 5) || !digits(seq, 20) {
            return None;
        }
        Some((user.to_owned(), year.parse().ok()?, seq.parse().ok()?))
    }
}

/// Order `seq` of user `user`, about 120 bytes stored.
pub fn order(user: &str, seq: u64) -> Order {
    Order {
        user: user.into(),
        year: 2020 + (seq % 5) as u16,
        seq,
        total_cents: seq * 100 + 99,
        note: format!("order number {seq} of {user}"),
    }
}

// -------------------------------------------------------------------------------------------
// Instruction counting: `benches/instructions.sh` runs a bench binary under valgrind with
// `DDB_BENCH_COUNT=<group>:<side>`; the binary then runs that one function
// `COUNT_ITERATIONS` times instead of criterion.
// -------------------------------------------------------------------------------------------

pub const COUNT_ENV: &str = "DDB_BENCH_COUNT";
pub const COUNT_ITERATIONS: u32 = 10_000;

/// The `(group, side)` to count, in counting mode. `DDB_BENCH_COUNT=list` prints `groups`
/// and exits.
pub fn counting(groups: &[&str]) -> Option<(String, String)> {
    let spec = std::env::var(COUNT_ENV).ok()?;
    if spec == "list" {
        for group in groups {
            println!("{group}");
        }
        std::process::exit(0);
    }
    let (group, side) = spec.rsplit_once(':')?;
    Some((group.to_owned(), side.to_owned()))
}
