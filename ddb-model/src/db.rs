//! [`Db`]: the handle every operation goes through.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::ReturnConsumedCapacity;

use crate::error::{EncryptionProblem, Error};
use crate::intercept::Interceptor;
use crate::item::Item;
use crate::model::{
    Clock, DefaultTable, Entity, RekeyPhase, Stamp, Table, from_opened_item, is_sealed, refused,
    system_clock,
};
use crate::stats::{CostRecorder, CostReport, Counters, Finished, Op, RequestStats, Stats};

/// A DynamoDB client bound to one physical table of layout `T`, with request accounting.
///
/// Cheap to clone; clones share the client and the request counters.
///
/// ```no_run
/// # async fn demo(client: aws_sdk_dynamodb::Client) {
/// use ddb_model::{Db, DefaultTable};
///
/// // The table named by the layout...
/// let db: Db = Db::new(client.clone());
/// // ...or another physical table of the same layout (one per stage, per test).
/// let prod: Db<DefaultTable> = Db::with_table_name(client, "app-prod");
/// assert_eq!(prod.table_name(), "app-prod");
/// # }
/// ```
pub struct Db<T = DefaultTable> {
    inner: Arc<Inner>,
    _table: PhantomData<fn() -> T>,
}

#[derive(Clone)]
struct Inner {
    client: Client,
    table_name: String,
    counters: Arc<Counters>,
    /// Requests ask the service for the capacity they consumed.
    capacity: bool,
    /// What the timestamp fields are set from.
    clock: Clock,
    /// What sees every request and answer (`with_interceptor`).
    interceptor: Option<Arc<dyn Interceptor>>,
    /// The tenant the handle is scoped to (`for_tenant`), if any.
    tenant: Option<Arc<TenantScope>>,
    /// What seals and opens the items of sealed entities.
    sealer: Sealer,
    /// The cost report, for a handle that asked for one (`with_cost_report`).
    cost: Option<Arc<CostRecorder>>,
    /// Concurrent gets and writes gathered into batches (`with_coalescing`), if asked for.
    coalescing: Option<Arc<Coalescing>>,
    /// The re-key phase of each entity set with `with_rekey_phase` (by entity name).
    rekey_phases: Option<Arc<[(&'static str, RekeyPhase)]>>,
}

/// The gatherings of a coalescing handle (`ops/batch/coalesce.rs` runs them).
#[derive(Debug)]
pub(crate) struct Coalescing {
    /// How long the first request of a gathering waits for others.
    pub(crate) window: Duration,
    /// The gatherings of gets open to new gets: eventually consistent, consistent.
    pub(crate) gets: [Slot<GatherKey, Vec<Option<Item>>>; 2],
    /// The gathering of puts and deletes open to new writes.
    pub(crate) writes: Slot<GatherWrite, Vec<bool>>,
}

/// Where a gathering open to new requests is kept.
pub(crate) type Slot<K, A> = Mutex<Option<Arc<Gather<K, A>>>>;

impl Coalescing {
    fn new(window: Duration) -> Coalescing {
        Coalescing { window, gets: Default::default(), writes: Mutex::default() }
    }
}

/// One gathering: its members (keys to read, writes to send), how many requests joined,
/// and its answer `A` once sent, or `Err(())` when every request must be sent alone.
#[derive(Debug)]
pub(crate) struct Gather<K, A> {
    pub(crate) members: Mutex<Vec<K>>,
    pub(crate) joined: std::sync::atomic::AtomicUsize,
    pub(crate) result: tokio::sync::watch::Sender<Option<Result<Arc<A>, ()>>>,
}

/// A key of a gathering of gets: partition key, sort key, entity, key attributes.
pub(crate) type GatherKey = (String, Option<String>, &'static str, Item);

/// A write of a gathering of writes: partition key, sort key, entity, the request.
pub(crate) type GatherWrite =
    (String, Option<String>, &'static str, aws_sdk_dynamodb::types::WriteRequest);

impl<K, A> Default for Gather<K, A> {
    fn default() -> Self {
        Gather {
            members: Mutex::default(),
            joined: std::sync::atomic::AtomicUsize::new(0),
            result: tokio::sync::watch::Sender::new(None),
        }
    }
}

/// The tenant of a scoped handle: its id, and what its partition keys start with (the
/// table's tenant literal and the escaped id), as `ops::tenant` checks them.
#[derive(Debug)]
pub(crate) struct TenantScope {
    /// The tenant id, as given.
    pub id: String,
    /// The table's tenant literal followed by the escaped id.
    pub lead: String,
}

impl<T: Table> Db<T> {
    /// A handle on the table named by `T::NAME`.
    pub fn new(client: Client) -> Self {
        Self::with_table_name(client, T::NAME)
    }

    /// A handle on the physical table `table_name`, laid out as `T`.
    pub fn with_table_name(client: Client, table_name: impl Into<String>) -> Self {
        Db {
            inner: Arc::new(Inner {
                client: crate::trace::Counting::install(client),
                table_name: table_name.into(),
                counters: Arc::new(Counters::default()),
                capacity: false,
                clock: system_clock(),
                interceptor: None,
                tenant: None,
                sealer: Sealer::default(),
                cost: None,
                coalescing: None,
                rekey_phases: None,
            }),
            _table: PhantomData,
        }
    }

    /// The handle, asking the service for the capacity each request consumed (`true`:
    /// [`RequestStats::read_units`] and [`RequestStats::write_units`] add it up, [`Db::stats`]
    /// per table and index) or not (`false`, the default: both stay 0). Asking
    /// (`ReturnConsumedCapacity: INDEXES`) makes requests and responses a little longer and
    /// changes nothing else. The returned handle shares the client and the request counters
    /// with `self`. Example: see [`with_clock`](Db::with_clock).
    #[must_use]
    pub fn with_capacity(self, on: bool) -> Self {
        self.with(|inner| inner.capacity = on)
    }

    /// The handle, setting the timestamp fields of the entities it writes
    /// (`#[entity(created_at = .., updated_at = ..)]`) from `clock` instead of the system
    /// clock: a fixed or stepped clock makes tests deterministic, a clock shared across
    /// processes (a hybrid logical clock) makes them comparable. Every write reads the clock
    /// once, so an item's timestamps and the values returned to the caller agree. The returned
    /// handle shares the client and the request counters with `self`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use std::time::{Duration, SystemTime, UNIX_EPOCH};
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE", created_at = created, updated_at = updated)]
    /// struct User { id: String, created: u64, updated: u64 }
    ///
    /// let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    /// let db = local::isolated_db().await?.with_clock(move || at);
    /// let mut ann = User { id: "ann".into(), created: 0, updated: 0 };
    /// ann.create(&db).await?;
    /// assert_eq!(ann.updated, 1_800_000_000_000); // milliseconds since the epoch
    /// assert_eq!(db.requests().write_units(), 0.0); // capacity not asked for
    ///
    /// let metered = db.clone().with_capacity(true);
    /// assert_eq!(User::get(&metered, "ann").await?.unwrap().created, 1_800_000_000_000);
    /// assert!(metered.requests().read_units() > 0.0);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_clock(self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.with(|inner| inner.clock = Arc::new(clock))
    }

    /// The handle, calling `interceptor` for every request it sends and every answer: to
    /// audit or measure requests, or to add a condition to writes (see
    /// [`intercept`](crate::intercept) for what it may add and how a failed addition is
    /// told apart). Replaces any interceptor `self` had. The returned handle shares the client
    /// and the request counters with `self`; `self` keeps sending without it.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use std::sync::Arc;
    /// use ddb_model::intercept::{Additions, Interceptor, Request};
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// struct User { id: String }
    ///
    /// #[derive(Default)]
    /// struct Count(AtomicUsize);
    /// impl Interceptor for Count {
    ///     fn before(&self, _: &Request, _: &mut Additions) {
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///     }
    /// }
    ///
    /// let count = Arc::new(Count::default());
    /// let db = local::isolated_db().await?.with_interceptor(count.clone());
    /// User { id: "ann".into() }.create(&db).await?;
    /// User::get(&db, "ann").await?;
    /// assert_eq!(count.0.load(Ordering::Relaxed), 2);
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_interceptor(self, interceptor: Arc<dyn Interceptor>) -> Self {
        self.with(|inner| inner.interceptor = Some(interceptor))
    }

    /// The interceptor requests pass, if any.
    pub(crate) fn interceptor(&self) -> Option<&dyn Interceptor> {
        self.inner.interceptor.as_deref()
    }

    /// The handle, scoped to `tenant`: every request it sends lies inside the tenant's
    /// partitions, those whose partition key is the table's tenant literal
    /// (`#[table(tenant = "ORG#")]`) and the escaped tenant id, alone or followed by a
    /// separator. Keys of entities, indexes, collections, trees and edges, in gets, writes,
    /// queries, batches and transactions, and cursors, are checked before sending: one
    /// outside (another tenant's, or an item of an entity that is not tenant-scoped) is
    /// [`Error::OutsideTenant`](crate::Error::OutsideTenant) and nothing is sent. Scans,
    /// migrations, vector searches and queries of multi-attribute indexes read partitions by
    /// other means than their key and are refused the same way. Table operations
    /// (`create_table`, ...) are not confined. The returned handle shares the client and the
    /// request counters with `self`, and replaces the tenant of a scoped `self`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, Table, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Table)]
    /// #[table(name = "saas", tenant = "ORG#")]
    /// struct Saas;
    ///
    /// #[derive(Entity, Serialize, Deserialize, Debug)]
    /// #[entity(table = Saas, pk = "ORG#<org>", sk = "USER#<id>", tenant = org)]
    /// struct User { org: String, id: String }
    ///
    /// let db = local::isolated_db::<Saas>().await?;
    /// let acme = db.clone().for_tenant("acme");
    /// User { org: "acme".into(), id: "ann".into() }.create(&acme).await?;
    /// assert!(User::get(&acme, "acme", "ann").await?.is_some());
    ///
    /// let err = User::get(&acme, "globex", "bob").await.unwrap_err();
    /// assert!(err.is_outside_tenant());
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn for_tenant(self, tenant: impl Into<String>) -> Self
    where
        T: crate::model::TenantTable,
    {
        let id = tenant.into();
        let mut lead = T::TENANT.unwrap_or_default().to_owned();
        crate::escape::escape_into(&id, &mut lead);
        self.with(|inner| inner.tenant = Some(Arc::new(TenantScope { id, lead })))
    }

    /// The tenant the handle is scoped to ([`for_tenant`](Db::for_tenant)), if any.
    pub fn tenant(&self) -> Option<&str> {
        self.inner.tenant.as_ref().map(|t| t.id.as_str())
    }

    /// The tenant scope the guard checks requests against.
    pub(crate) fn tenant_scope(&self) -> Option<&TenantScope> {
        self.inner.tenant.as_deref()
    }

    /// The handle, encrypting, signing, verifying and decrypting the items of sealed entities
    /// (with `#[encrypt]` or `#[sign_only]` fields) with `encryption`'s keyring (feature
    /// `encryption`; see [`encryption`](crate::encryption)). Without it, every operation on
    /// a sealed entity is refused before sending
    /// ([`EncryptionProblem::NotConfigured`](crate::error::EncryptionProblem::NotConfigured)).
    /// The returned handle shares the client and the request counters with `self`.
    #[cfg(feature = "encryption")]
    #[must_use]
    pub fn with_encryption(self, encryption: crate::encryption::Encryption) -> Self {
        self.with(|inner| inner.sealer = Sealer { encryption: Some(encryption) })
    }

    /// `item`, an item of `E` in plaintext, as it is stored: encrypted and signed when `E`
    /// is sealed.
    pub(crate) fn seal<E: Entity>(&self, item: Item) -> Result<Item, Error> {
        self.inner.sealer.seal::<E>(item)
    }

    /// Refuses a sealed `E` on a handle that cannot seal or open its items.
    pub(crate) fn can_seal<E: Entity>(&self) -> Result<(), Error> {
        self.inner.sealer.can_seal::<E>()
    }

    /// Reads stored `item` as `E` ([`from_item`](crate::entity::from_item)), verifying and
    /// decrypting it first when `E` is sealed.
    pub(crate) fn open<E: Entity>(&self, item: Item) -> Result<E, Error> {
        self.inner.sealer.open::<E>(item)
    }

    /// What seals and opens sealed entities' items through this handle, for results that
    /// read items after the request (a transactional get's): a copy of nothing unless the
    /// handle has a keyring.
    pub(crate) fn sealer(&self) -> Sealer {
        self.inner.sealer.clone()
    }

    /// What seals and opens sealed entities' items through this handle.
    pub(crate) fn sealer_ref(&self) -> &Sealer {
        &self.inner.sealer
    }
}

// What the operations ask of a handle as they prepare and send requests.
impl<T: Table> Db<T> {
    /// The handle, gathering the requests that start within `window` of each other into
    /// batches, each caller handed its own typed result:
    ///
    /// - `get`s into one `BatchGetItem` per 100 distinct keys (see [`ops::Get`](crate::ops::Get));
    /// - `put`s and `delete`s whose meaning a batch keeps into `BatchWriteItem`s of up to 25
    ///   (see [`ops::Put`](crate::ops::Put)): writes that carry no condition expression and
    ///   return nothing, which in practice means puts and deletes of entities told apart by
    ///   their keys on a table without a type attribute (`#[table(no_type_attr)]`), without a
    ///   version field, unique fields or a condition, on a handle without an interceptor.
    ///   Every other write is sent alone, as without coalescing.
    ///
    /// Every get and joining write waits up to `window`; a request alone in its window is
    /// sent alone. The returned handle shares the client and the counters with `self`;
    /// handles derived from it by other `with_*` methods gather apart. The guide's section
    /// *Fewer round trips* has the whole rule and an example.
    #[must_use]
    pub fn with_coalescing(self, window: Duration) -> Self {
        self.with(|inner| inner.coalescing = Some(Arc::new(Coalescing::new(window))))
    }

    /// The gatherings of a coalescing handle.
    pub(crate) fn coalescing(&self) -> Option<&Coalescing> {
        self.inner.coalescing.as_deref()
    }

    fn with(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Inner::clone(&self.inner);
        // A derived handle (another tenant, keyring, ...) gathers its own gets and writes.
        if let Some(c) = &inner.coalescing {
            inner.coalescing = Some(Arc::new(Coalescing::new(c.window)));
        }
        change(&mut inner);
        Db { inner: Arc::new(inner), _table: PhantomData }
    }

    /// What reads of `E` compare expiry times with: the expiry attribute and the clock in
    /// whole seconds, or `None` when `E` has no expiry field.
    pub(crate) fn expiry_cutoff<E: crate::model::Entity>(&self) -> Option<(&'static str, i64)> {
        self.expiry_cutoff_of(E::TTL.map(|ttl| ttl.attr))
    }

    /// [`expiry_cutoff`](Db::expiry_cutoff) for the expiry attribute `attr`.
    pub(crate) fn expiry_cutoff_of(
        &self,
        attr: Option<&'static str>,
    ) -> Option<(&'static str, i64)> {
        attr.map(|attr| (attr, crate::model::now_secs((self.inner.clock)())))
    }

    /// The time of a write that creates its item (`creates`) or not, from the clock.
    pub(crate) fn stamp(&self, creates: bool) -> Stamp {
        Stamp { now: (self.inner.clock)(), creates }
    }

    /// What requests ask of the service's capacity report.
    pub(crate) fn capacity_mode(&self) -> Option<ReturnConsumedCapacity> {
        self.inner.capacity.then_some(ReturnConsumedCapacity::Indexes)
    }

    /// The SDK client: the one given to [`Db::new`], sending through the library's
    /// request-accounting wrapper of its HTTP client (requests sent through it directly are
    /// not counted).
    pub fn client(&self) -> &Client {
        &self.inner.client
    }

    /// The physical table name.
    pub fn table_name(&self) -> &str {
        &self.inner.table_name
    }

    /// The requests sent through this handle (and its clones) so far: calls and HTTP
    /// attempts per operation (see [`RequestStats`]).
    pub fn requests(&self) -> RequestStats {
        self.inner.counters.snapshot()
    }

    /// The requests sent through this handle (and its clones) so far, broken down per
    /// operation and per target, the table or one of its indexes (see [`Stats`]).
    pub fn stats(&self) -> Stats {
        self.inner.counters.stats(&self.inner.table_name)
    }

    /// Sets every request counter back to zero (and empties the cost report).
    pub fn reset_requests(&self) {
        self.inner.counters.reset();
        if let Some(cost) = &self.inner.cost {
            cost.reset();
        }
    }

    pub(crate) fn counters(&self) -> Arc<Counters> {
        Arc::clone(&self.inner.counters)
    }

    pub(crate) fn count(&self, op: Op) {
        self.inner.counters.record(op);
    }

    pub(crate) fn record_finished(&self, done: &Finished<'_>) {
        self.inner.counters.record_finished(done);
    }
}

/// The cost report of a handle (`stats::cost`).
impl<T: Table> Db<T> {
    /// The handle, keeping a [`CostReport`] of the requests it and its clones send from now
    /// on: per access pattern (the entity a request was built for, its operation and index)
    /// the requests, the capacity consumed (reported when the handle also asks for it,
    /// [`with_capacity`](Db::with_capacity)), the items read against the items returned
    /// (what filters threw away), item sizes; the `top_keys` most requested partition keys
    /// (a space-saving summary: bounded memory, counts that may overstate by a stated
    /// amount); and the throttling reasons of the requests that failed throttled. A handle
    /// without a report pays one `Option` check per request; one with it, a lock and the
    /// copy of each request it reads the partition key from.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// # use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// struct User { id: String }
    ///
    /// let db = local::isolated_db().await?.with_cost_report(10);
    /// User { id: "ann".into() }.put(&db).await?;
    /// User::get(&db, "ann").await?;
    /// let report = db.cost_report().expect("asked for");
    /// let get = report.patterns.iter().find(|p| p.operation == "GetItem").expect("a get");
    /// assert_eq!((get.entity.as_deref(), get.requests, get.items_returned), (Some("User"), 1, 1));
    /// assert_eq!((report.hot_keys[0].key.as_str(), report.hot_keys[0].requests), ("USER#ann", 2));
    /// println!("{report}"); // a table to log
    /// # Ok(()) }
    /// ```
    #[must_use]
    pub fn with_cost_report(self, top_keys: usize) -> Self {
        self.with(|inner| inner.cost = Some(Arc::new(CostRecorder::new(top_keys))))
    }

    /// The cost report so far ([`with_cost_report`](Db::with_cost_report)); `None` for a
    /// handle that keeps none.
    pub fn cost_report(&self) -> Option<CostReport> {
        self.inner.cost.as_ref().map(|cost| cost.report(&self.inner.table_name))
    }

    /// The recorder of the cost report, if the handle keeps one.
    pub(crate) fn cost(&self) -> Option<&CostRecorder> {
        self.inner.cost.as_deref()
    }
}

/// The keyring of a handle with encryption (`Db::with_encryption`), nothing otherwise:
/// seals the items of sealed entities (`#[encrypt]`, `#[sign_only]`) and opens them, and
/// refuses them when it cannot. Public for generated code only (collections pass it on to
/// their variants).
#[doc(hidden)]
#[derive(Clone, Default, Debug)]
pub struct Sealer {
    #[cfg(feature = "encryption")]
    encryption: Option<crate::encryption::Encryption>,
}

impl Sealer {
    /// No keyring: sealed entities are refused.
    pub const NONE: Sealer = Sealer {
        #[cfg(feature = "encryption")]
        encryption: None,
    };

    /// `item`, an item of `E` in plaintext, as it is stored: encrypted and signed when `E`
    /// is sealed.
    pub(crate) fn seal<E: Entity>(&self, item: Item) -> Result<Item, Error> {
        if !is_sealed::<E>() {
            return Ok(item);
        }
        #[cfg(feature = "encryption")]
        if let Some(encryption) = &self.encryption {
            return encryption.seal::<E>(item);
        }
        Err(refused::<E>(EncryptionProblem::NotConfigured))
    }

    /// Refuses a sealed `E` without a keyring.
    pub(crate) fn can_seal<E: Entity>(&self) -> Result<(), Error> {
        #[cfg(feature = "encryption")]
        if self.encryption.is_some() {
            return Ok(());
        }
        if is_sealed::<E>() { Err(refused::<E>(EncryptionProblem::NotConfigured)) } else { Ok(()) }
    }

    /// Reads stored `item` as `E`, verified and decrypted first when `E` is sealed.
    pub(crate) fn open<E: Entity>(&self, item: Item) -> Result<E, Error> {
        from_opened_item(self.open_item::<E>(item)?)
    }

    /// Stored `item` of `E` in plaintext: verified and decrypted when `E` is sealed, as it
    /// is otherwise. Read it with `from_opened_item`.
    pub(crate) fn open_item<E: Entity>(&self, item: Item) -> Result<Item, Error> {
        if !is_sealed::<E>() {
            return Ok(item);
        }
        #[cfg(feature = "encryption")]
        if let Some(encryption) = &self.encryption {
            return encryption.open::<E>(item);
        }
        Err(refused::<E>(EncryptionProblem::NotConfigured))
    }
}

impl<T> Clone for Db<T> {
    fn clone(&self) -> Self {
        Db { inner: Arc::clone(&self.inner), _table: PhantomData }
    }
}

impl<T> fmt::Debug for Db<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db")
            .field("table_name", &self.inner.table_name)
            .field("requests", &self.inner.counters.snapshot())
            .finish()
    }
}

/// A client of SDK crate `$sdk` for a DynamoDB-compatible `endpoint` (DynamoDB Local, the
/// embedded engine) with fixed placeholder credentials and region: such endpoints check
/// neither.
#[cfg(any(feature = "local", feature = "tooling"))]
macro_rules! endpoint_client_of {
    ($sdk:ident, $endpoint:expr) => {{
        use $sdk::config::{BehaviorVersion, Credentials, Region};
        let config = $sdk::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("local", "local", None, None, "ddb-model-local"))
            .endpoint_url($endpoint)
            .build();
        $sdk::Client::from_conf(config)
    }};
}
#[cfg(all(feature = "local", feature = "streams-sdk"))]
pub(crate) use endpoint_client_of;

/// `endpoint_client_of` for DynamoDB: used by `local` and the model tooling's `--endpoint`.
#[cfg(any(feature = "local", feature = "tooling"))]
pub(crate) fn endpoint_client(endpoint: &str) -> Client {
    endpoint_client_of!(aws_sdk_dynamodb, endpoint)
}

/// The re-key phases (`ops::rekey`).
impl<T: Table> Db<T> {
    /// The handle, reading and writing the re-keyed entity `E` (declared with
    /// `#[entity(rekey(pk = ..))]`) as a deployment in `phase` does (see [`RekeyPhase`]
    /// for what each phase reads and writes, and the re-keying chapter of the guide (`docs/rekeying.md`) for
    /// the order of the steps). An entity that declares `rekey` is in
    /// [`RekeyPhase::Old`] until a handle says otherwise; the setting means nothing for any
    /// other entity. Shares the client and counters with `self`.
    #[must_use]
    pub fn with_rekey_phase<E: crate::model::Entity<Table = T>>(self, phase: RekeyPhase) -> Self {
        self.with(|inner| {
            let mut phases: Vec<(&'static str, RekeyPhase)> = inner
                .rekey_phases
                .as_deref()
                .unwrap_or_default()
                .iter()
                .filter(|(name, _)| *name != E::NAME)
                .copied()
                .collect();
            phases.push((E::NAME, phase));
            inner.rekey_phases = Some(phases.into());
        })
    }

    /// The re-key phase of `E` on this handle: [`RekeyPhase::New`] for an entity that
    /// declares no `rekey`.
    pub fn rekey_phase<E: crate::model::Entity<Table = T>>(&self) -> RekeyPhase {
        self.rekey_phase_of::<E>()
    }

    /// [`rekey_phase`](Db::rekey_phase), for an entity whose table the caller does not name.
    pub(crate) fn rekey_phase_of<E: crate::model::Entity>(&self) -> RekeyPhase {
        if E::REKEY.is_none() {
            return RekeyPhase::New;
        }
        self.rekey_phase_named(E::NAME)
    }

    /// The phase of the re-keyed entity named `entity` on this handle ([`RekeyPhase::Old`]
    /// until a handle says otherwise).
    pub(crate) fn rekey_phase_named(&self, entity: &str) -> RekeyPhase {
        let set = self.inner.rekey_phases.as_deref().unwrap_or_default();
        set.iter().find(|(name, _)| *name == entity).map_or(RekeyPhase::Old, |(_, p)| *p)
    }
}
