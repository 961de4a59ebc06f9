//! The integration suite: one binary, one module per capability. Runs against the embedded
//! engine, or against the endpoint in `DDB_ENDPOINT` (e.g. AWS's DynamoDB Local).

mod model;
mod proxy;
mod support;

mod absent;
mod adopt;
mod batch;
mod composite;
mod constants;
mod crud;
mod delete_all;
mod dry_run;
mod encryption;
mod faults;
mod fencing;
mod follow;
mod foreign;
mod futures;
mod generated;
mod github;
mod hooks;
mod index_update;
mod intercept;
mod key_formats;
mod keys;
mod lifecycle;
mod limits;
mod membership;
mod multi_index;
mod paths;
mod projection;
mod query;
mod ranges;
mod rekey;
mod scan;
mod schema;
mod sets;
mod soak;
mod spans;
mod streams;
mod strict;
mod table;
mod table_options;
mod telemetry;
mod tenants;
mod throttling;
mod tooling;
mod transact;
mod transport;
mod tree;
mod tree_adjacency;
mod tree_bookkeeping;
mod tree_bulk;
mod tree_closure;
mod tree_conformance;
mod tree_contention;
mod tree_nested;
mod tree_nested_deep_delete;
mod ttl;
mod unique;
// The filesystem example on every strategy.
mod filesystem;
mod update;
mod upsert;
mod validation;
mod vector;
mod versioning;

// Graph edges.
mod edge;
mod edge_model;
mod edge_shards;
mod relation;
