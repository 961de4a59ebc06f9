//! [`RequestProblem`]: what DynamoDB would reject in a request, found before sending (in
//! [`Error::InvalidRequest`](super::Error::InvalidRequest)). Public as
//! `ddb_model::error::RequestProblem` and `ddb_model::expr::RequestProblem`; the checks that
//! find these problems are in `expr::check`.

use super::UpsertReason;

const KEYS_UNWRITTEN: &str = " (only an upsert started with the entity's generated \
    `update(&db, ..)` writes the key fields; in a transaction or from `Db::update`, declare them \
    `#[entity(from_key)]`)";

/// What is wrong with a request built from the caller's values: what DynamoDB would reject,
/// or what the library refuses to send (a query of an index the table lacks, an update with
/// nothing to do, ...). Carried by [`Error::InvalidRequest`](super::Error::InvalidRequest),
/// which names the attribute path; nothing was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestProblem {
    /// A generated-id field (`#[generated(..)]`, the attribute at the error's `path`) is unset
    /// in a write that does not fill it in: a `replace`, a batch, a transaction, a tree or
    /// edge write, or a `create`/`put` of a shared reference. Nothing was sent.
    #[error(
        "`{entity}`'s generated id is unset and this write does not generate it: `create` or `put` the value through `&mut`, or call `generate_ids()` first"
    )]
    IdNotGenerated {
        /// The entity type.
        entity: &'static str,
    },
    /// One value is larger than the largest item DynamoDB stores.
    #[error("the value is {size} bytes; DynamoDB items are limited to {max} bytes")]
    ValueTooLarge {
        /// Its size as DynamoDB counts it, in bytes.
        size: usize,
        /// The item size limit, in bytes.
        max: usize,
    },
    /// The values an update writes (`set`, `set_if_not_exists`, `append`) add up to more
    /// than the largest item DynamoDB stores, whatever the item holds already.
    #[error("the update writes {size} bytes of values; DynamoDB items are limited to {max} bytes")]
    UpdateTooLarge {
        /// Their size as DynamoDB counts it (attribute names included), in bytes.
        size: usize,
        /// The item size limit, in bytes.
        max: usize,
    },
    /// The values of one expression (or of a condition and an update together) add up to
    /// more than DynamoDB accepts in one request.
    #[error(
        "the expression values are {size} bytes; DynamoDB accepts at most {max} bytes per request"
    )]
    ValuesTooLarge {
        /// Their size, in bytes.
        size: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// An expression string is longer than DynamoDB accepts (too many conditions or
    /// actions in one request).
    #[error("the {expression} is {len} bytes long; the limit is {max} bytes")]
    ExpressionTooLong {
        /// Which expression (`ConditionExpression`, `UpdateExpression`, ...).
        expression: &'static str,
        /// Its length, in bytes.
        len: usize,
        /// The limit, in bytes.
        max: usize,
    },
    /// Lists and maps nested deeper than DynamoDB stores.
    #[error("the value nests {levels} levels deep in the item; DynamoDB allows {max}")]
    TooDeep {
        /// The levels the value would reach in the item (the top-level attribute is 1).
        levels: usize,
        /// The limit.
        max: usize,
    },
    /// An empty string, number or binary set (DynamoDB has no empty sets; use an `Option`
    /// and leave the attribute out).
    #[error("DynamoDB sets cannot be empty")]
    EmptySet,
    /// A set that holds one element twice (numbers are compared by value: `1` and `1.0`
    /// are the same).
    #[error("the set holds {element} twice; DynamoDB sets cannot hold duplicates")]
    DuplicateInSet {
        /// The repeated element, as text (binary elements as their length).
        element: String,
    },
    /// An element given to `add_to_set` / `delete_from_set` that is not a string, number or
    /// binary, or not of the same type as the first element.
    #[error(
        "a set element serialized as {found}; DynamoDB sets hold strings, numbers or binaries, all of one type"
    )]
    NotASetElement {
        /// The DynamoDB type it serialized as (`M`, `L`, `BOOL`, ...).
        found: &'static str,
    },
    /// An upsert writes a nested path (`a.b`, `a[0]`): when it creates the item, the parent
    /// attribute is absent, which DynamoDB rejects. Set the whole top-level attribute.
    #[error("an upsert cannot write a nested path: the item it creates has no parent attribute")]
    NestedPathInUpsert,
    /// The item an upsert would create does not read back as the entity (a field it
    /// requires is never written); the upsert is refused whether or not the item exists.
    #[error(
        "the item this upsert would create would not read back ({reason}{}): write every required field with `set` or `set_if_not_exists`",
        if *keys_unwritten { KEYS_UNWRITTEN } else { "" }
    )]
    UpsertIncomplete {
        /// Why the created item would not read back.
        reason: UpsertReason,
        /// True when the upsert does not write the entity's key fields (it was not started
        /// with the generated `update(&db, ..)`); the message then says how to declare them.
        keys_unwritten: bool,
    },
    /// An upsert would create the item in a sparse index (`index`) whose membership it
    /// gives only as defaults (`set_if_not_exists`, serde defaults): on an existing item that
    /// is not in the index, the same request would add it. Set the fields that decide the
    /// membership with `set`.
    #[error(
        "the item this upsert would create is in the sparse index `{index}`, but an existing item may not be, and one request cannot tell: set the fields that decide the membership with `set`"
    )]
    UpsertSparseIndex {
        /// The index.
        index: &'static str,
    },
    /// A plain update of an entity whose fields are copied to other items (a closure tree
    /// node: one copy under each ancestor): it would change the entity's item and leave the
    /// copies, which the tree's queries return, with the old values. Update it through
    /// `through` (the tree's `update(id)`), which changes the item and every copy in one
    /// transaction.
    #[error(
        "`{entity}` is copied to other items (its tree's copies) that a plain update would leave stale; update it with {through}, which changes the item and every copy together"
    )]
    UpdateCopies {
        /// The entity.
        entity: &'static str,
        /// The call to use instead.
        through: &'static str,
    },
    /// A write that cannot keep an entity's unique constraints (`#[unique]`): `operation`
    /// cannot write the constraint's sentinel items in the same transaction as the item (a
    /// batch write, a query's `delete_all`: no transactions). Nothing is sent; use the
    /// single-item write or a transaction.
    #[error(
        "`{entity}` has unique fields, whose sentinel items {operation} cannot write in the same transaction; use the single-item write or a transaction"
    )]
    UniqueUnenforced {
        /// The entity.
        entity: &'static str,
        /// What was refused (`"a batch put"`, ...).
        operation: &'static str,
    },
    /// An update that computes a unique field from the stored item (`add`,
    /// `set_if_not_exists`, a nested path): the new value must be known to claim it. Or an
    /// update that changes a unique field and asks for the entity back while computing
    /// another field (`add`, `append`): the transaction that moves the constraint returns
    /// nothing to read it from (use `no_return()`, or two updates).
    #[error(
        "`{entity}`: an update that changes a unique field needs every new value known before sending, and returns only what it set; `{field}` is computed from the stored item (set it to a value, or send the update with `no_return()` or as two updates)"
    )]
    UniqueComputed {
        /// The entity.
        entity: &'static str,
        /// The unique field, or the field computed.
        field: String,
    },
    /// An empty map key or attribute name.
    #[error("map keys and attribute names cannot be empty")]
    EmptyName,
    /// A number DynamoDB cannot read (`NaN`, infinities, malformed text).
    #[error("{number:?} is not a number DynamoDB can store")]
    NotANumber {
        /// The number's text.
        number: String,
    },
    /// A number with more significant digits than DynamoDB keeps.
    #[error("{number} has {digits} significant digits; DynamoDB numbers keep at most {max}")]
    TooManyDigits {
        /// The number's text.
        number: String,
        /// Its significant digits.
        digits: usize,
        /// The limit.
        max: usize,
    },
    /// A number whose magnitude is outside DynamoDB's range (1E-130 up to, not including,
    /// 1E+126).
    #[error("{number} is outside DynamoDB's number range (magnitude 1E-130 to 9.99E+125)")]
    NumberOutOfRange {
        /// The number's text.
        number: String,
    },
    /// An update changes a field an index-key attribute (the index's partition or sort
    /// key) is made of but does not set the field `field`, which that attribute holds too
    /// (or the other attribute, when a value for an `Option` part may bring the item into
    /// the index): the attribute cannot be rewritten in the same request (one `UpdateItem`
    /// cannot read the stored value), so set that field as well.
    #[error(
        "the update changes the key of index `{index}`, which also holds `{field}`: set `{field}` in the same update, so the whole key can be written"
    )]
    IndexKeyIncomplete {
        /// The index.
        index: &'static str,
        /// The field (its stored attribute name) the update leaves out.
        field: &'static str,
    },
    /// An update changes the field `field`, which an index key is made of, with an action
    /// whose result depends on the stored item (`add`, `append`, `set_if_not_exists`, set
    /// elements, a nested path): the new key is unknown. Set the field to a value.
    #[error(
        "`{field}` is part of the key of index `{index}`: change it with `set` (the key cannot follow `add`, `append`, `set_if_not_exists` or a nested path)"
    )]
    IndexKeyNotSet {
        /// The index.
        index: &'static str,
        /// The field (its stored attribute name).
        field: &'static str,
    },
    /// An expiry time (`#[entity(ttl = field)]`) outside what a TTL attribute holds: whole
    /// seconds from the Unix epoch (1970-01-01) up to the end of year 9999
    /// (`max`). A later value is most likely
    /// milliseconds, which the service would never expire.
    #[error(
        "an expiry time is stored as whole seconds from 1970-01-01 up to the end of year 9999 (0..={max}), but this one is {seconds} s from the epoch (before it, or milliseconds instead of seconds?)"
    )]
    ExpiryOutOfRange {
        /// The time, in seconds from the epoch (negative before it; saturated to `i64`).
        seconds: i64,
        /// The latest expiry time, in seconds from the epoch.
        max: i64,
    },
    /// A table option of `create_table` below the service's minimum (warm throughput, an
    /// on-demand maximum); the path names the option.
    #[error("{value} is below the least the service accepts, {min}")]
    BelowMinimum {
        /// The value given.
        value: i64,
        /// The least the service accepts.
        min: i64,
    },
    /// A tag of the table options breaks the service's rules (the path names it).
    #[error("tag `{key}`: {problem}")]
    Tag {
        /// The tag's key.
        key: String,
        /// What is wrong.
        problem: TagProblem,
    },
    /// The resource policy is larger than the service takes.
    #[error("the resource policy is {bytes} bytes, more than the {max} the service takes")]
    PolicyTooLarge {
        /// Its size.
        bytes: usize,
        /// The most the service takes.
        max: usize,
    },
    /// The resource policy is not a JSON document.
    #[error("the resource policy is not JSON (line {line}, column {column})")]
    PolicyNotJson {
        /// Where the JSON goes wrong (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
    },
    /// Two actions of one update change the same attribute, or one changes an attribute
    /// inside the other's (`a` and `a.b`): DynamoDB rejects overlapping paths.
    #[error("another action of the update changes the overlapping path `{other}`")]
    OverlappingPaths {
        /// The other path.
        other: String,
    },
    /// An update with no action (no `set`, `remove`, `add`, ...).
    #[error("an update needs at least one action")]
    EmptyUpdate,
    /// An `IN` condition (`is_in`) with no values, or more than DynamoDB accepts; the path
    /// is the attribute compared.
    #[error("IN takes 1 to {max} values, got {count}")]
    InOperands {
        /// The values given.
        count: usize,
        /// The most `IN` takes.
        max: usize,
    },
    /// A condition that nests `&`, `|` and `!` deeper than the library renders.
    #[error("the condition nests `&`, `|` and `!` more than {max} levels deep")]
    ConditionTooDeep {
        /// The deepest nesting rendered.
        max: usize,
    },
    /// A request names an index (a query, a scan, a vector search, table options) that the
    /// table does not declare.
    #[error("the table declares no index `{index}`")]
    UnknownIndex {
        /// The index name.
        index: String,
    },
    /// A query by the attributes of a multi-attribute index, of an index that is not one (or
    /// whose partition attributes are not the ones given).
    #[error(
        "`{index}` is not a multi-attribute index of the table with the partition attributes given"
    )]
    NotMultiAttributeIndex {
        /// The index (`<table>` for the table's own key).
        index: &'static str,
    },
    /// A query of a multi-attribute index names more sort attributes than the index has.
    #[error("the query names more sort attributes than index `{index}` has ({max})")]
    TooManySortAttributes {
        /// The index.
        index: &'static str,
        /// Its sort attributes.
        max: usize,
    },
    /// A sort-key condition on a table or index that has no sort key.
    #[error(
        "a sort-key condition on {}, which has no sort key",
        index.map_or("the table".to_owned(), |i| format!("index `{i}`"))
    )]
    NoSortKey {
        /// The index, `None` for the table.
        index: Option<&'static str>,
    },
    /// A collection query would filter on more entity types than one `IN` condition holds.
    #[error("`{collection}` lists {count} entity types; a query can keep at most {max}")]
    TooManyEntityTypes {
        /// The collection.
        collection: &'static str,
        /// Its entity types.
        count: usize,
        /// The most a query can filter on.
        max: usize,
    },
    /// A query of a multi-attribute index filters on one of the index's key attributes
    /// (the path), which the service refuses: the condition belongs in the key.
    #[error(
        "a query of index `{index}` cannot filter on one of its key attributes: put the condition in the key (the generated level methods), or filter after reading"
    )]
    FilterOnIndexKey {
        /// The index.
        index: &'static str,
    },
    /// `between_entities` names an entity that is not a variant of the collection.
    #[error(
        "`{entity}` is not an entity of collection `{collection}`: between_entities spans the collection's own entity types"
    )]
    NotInCollection {
        /// The entity.
        entity: &'static str,
        /// The collection.
        collection: &'static str,
    },
    /// `between_entities` on a query that has a sort-key condition already (it narrows the
    /// query of a whole partition).
    #[error(
        "between_entities narrows the query of a whole partition, and this query has a sort-key condition already"
    )]
    SortKeyConditionTwice,
    /// `between_entities::<First, Last>` where `First`'s keys sort after `Last`'s.
    #[error(
        "`{first}` keys (`{first_keys}`..) sort after `{last}` keys (`{last_keys}`..): name the first entity first"
    )]
    EntitiesOutOfOrder {
        /// The first entity named.
        first: &'static str,
        /// The start of its sort keys.
        first_keys: &'static str,
        /// The last entity named.
        last: &'static str,
        /// The start of its sort keys.
        last_keys: &'static str,
    },
    /// `expect_version` on an entity without a version field.
    #[error("`expect_version` on `{entity}`, which has no version field")]
    NoVersionField {
        /// The entity.
        entity: &'static str,
    },
    /// The stored version of an item is the largest its version field holds: the write
    /// cannot increment it.
    #[error("`{entity}` version {version} cannot be incremented: the field holds at most {max}")]
    VersionExhausted {
        /// The entity.
        entity: &'static str,
        /// The stored version.
        version: u64,
        /// The largest value of the field's type.
        max: u64,
    },
    /// The clock (`Db::with_clock`) reads a time a timestamp field cannot hold (before the
    /// Unix epoch, or too far after it).
    #[error(
        "`{entity}`: the clock reads {}s {} the Unix epoch, which a timestamp field cannot hold",
        seconds.unsigned_abs(),
        if *seconds < 0 { "before" } else { "after" }
    )]
    ClockOutOfRange {
        /// The entity written.
        entity: &'static str,
        /// The clock's time, in seconds from the epoch (negative before it; saturated).
        seconds: i64,
    },
    /// A write builder used again after it was sent (polled as a future, then sent).
    #[error("the write was already sent (polled as a future)")]
    AlreadySent,
    /// `Db::migrate` of an entity that declares no schema version (`#[entity(schema = ..)]`).
    #[error(
        "`{entity}` declares no schema version (#[entity(schema = ..)]): there is nothing to migrate"
    )]
    NoSchema {
        /// The entity.
        entity: &'static str,
    },
    /// An option outside the range the library accepts; the path names the option.
    #[error("{value} is outside the accepted range {min}..={max}")]
    OutOfRange {
        /// The value given.
        value: i64,
        /// The least accepted.
        min: i64,
        /// The most accepted.
        max: i64,
    },
    /// An interceptor added a condition to a request that takes none (a read,
    /// `BatchWriteItem`, a table operation), or to an action a transaction does not have.
    #[error("an interceptor added a condition to a {op:?} request{}, which takes none", action.map(|a| format!(" (action {a})")).unwrap_or_default())]
    ConditionNotApplicable {
        /// The request's operation.
        op: crate::stats::Op,
        /// The transaction action it named, if any.
        action: Option<usize>,
    },
    /// A condition an interceptor added uses a placeholder it did not declare, declares one
    /// it does not use or declares one twice (empty: the expression is empty).
    #[error(
        "an added condition's placeholder `{placeholder}` is undeclared, unused or declared twice"
    )]
    AddedPlaceholder {
        /// The placeholder.
        placeholder: String,
    },
    /// A slot of another batch read (`BatchReadResult::get`).
    #[error("a `{entity}` slot of another batch read")]
    ForeignSlot {
        /// The slot's entity.
        entity: &'static str,
    },
}

/// What is wrong with a tag (in [`RequestProblem::Tag`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TagProblem {
    /// The key is empty or too long.
    #[error("the key has {chars} characters; 1 to {max} are allowed")]
    KeyLength {
        /// Its length, in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// The value is too long.
    #[error("the value has {chars} characters; at most {max} are allowed")]
    ValueLength {
        /// Its length, in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// The key starts with `aws:`, which the service keeps for its own tags.
    #[error("keys starting with `aws:` are the service's")]
    ReservedPrefix,
    /// A character the service does not take in tags (it takes letters, digits, white space
    /// and `+ - = . _ : /`).
    #[error("{character:?} is not allowed (letters, digits, white space and + - = . _ : / are)")]
    Character {
        /// The character.
        character: char,
    },
    /// More tags than a table takes (the error names the first one over).
    #[error("{count} tags; a table takes at most {max}")]
    TooMany {
        /// How many were given.
        count: usize,
        /// The most a table takes.
        max: usize,
    },
}
