//! The graph models of the edge tests: one of each kind of edge, in a table of their own.

use ddb_model::{Edge, Entity, Table};
use serde::{Deserialize, Serialize};

/// A table with one index that has a sort key (for edges inverted by an index).
#[derive(Table)]
#[table(name = "graph", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
pub struct Graph;

/// A member of a social network: a node with degree counters.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "MEMBER#<id>", sk = "PROFILE")]
pub struct Member {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub following: u64,
    #[serde(default)]
    pub followers: u64,
}

impl Member {
    pub fn new(id: &str) -> Member {
        Member { id: id.into(), name: format!("Name of {id}"), following: 0, followers: 0 }
    }
}

/// `follower` follows `followee` (seed 004's social network): inverse items in the
/// followee's partition carry the follower's name (denormalised) but not `muted`, which
/// only the follower sees; both members' counters move with every link.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "MEMBER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "MEMBER#<followee>", sk = "FOLLOWER#<follower>", fields(follower_name, since)),
    from_count = Member::FOLLOWING,
    to_count = Member::FOLLOWERS
)]
pub struct Follow {
    pub follower: String,
    pub followee: String,
    pub follower_name: String,
    pub since: u32,
    #[serde(default)]
    pub muted: bool,
}

impl Follow {
    pub fn new(follower: &str, followee: &str) -> Follow {
        Follow {
            follower: follower.into(),
            followee: followee.into(),
            follower_name: format!("Name of {follower}"),
            since: 2024,
            muted: false,
        }
    }
}

/// A shopper likes a product (seed 004's recommendations): the products' side is the
/// index, so a like is one item and one write; no counters.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "SHOPPER#<shopper>", sk = "LIKES#<product>")]
#[index(gsi1, pk = "PRODUCT#<product>", sk = "LIKED_BY#<shopper>")]
#[edge(from = shopper, to = product, inverse(index = gsi1))]
pub struct Like {
    pub shopper: String,
    pub product: u32,
}

/// A device of a network (seed 004's topology): a node with one degree counter.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "DEVICE#<id>", sk = "DEVICE")]
pub struct Device {
    pub id: u32,
    #[serde(default)]
    pub links: i64,
}

/// A cable between two devices: undirected, stored once from each end.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "DEVICE#<a>", sk = "CABLE#<b>")]
#[edge(from = a, to = b, symmetric, count = Device::LINKS)]
pub struct Cable {
    pub a: u32,
    pub b: u32,
    pub meters: u32,
}

/// Tags on posts (seed 004's many-to-many): inverse items of a type of their own.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Graph, pk = "POST#<post>", sk = "TAG#<tag>")]
#[edge(from = post, to = tag, inverse(pk = "TAG#<tag>", sk = "POST#<post>", name = "PostOfTag"))]
pub struct Tagged {
    pub post: u64,
    pub tag: String,
}
