//! Encrypted and signed fields (`#[encrypt]`, `#[sign_only]`, feature `encryption`): items
//! are encrypted at rest, interoperate with the AWS Database Encryption SDK used directly in
//! both directions, a tampered item or another key is a typed error, and what cannot keep a
//! signature (an update, a handle without a keyring) is refused before sending.

use std::collections::HashMap;

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::encryption::aws_db_esdk::CryptoAction;
use ddb_model::encryption::aws_db_esdk::item_encryptor::client::Client as ItemEncryptor;
use ddb_model::encryption::aws_db_esdk::item_encryptor::types::dynamo_db_item_encryptor_config::DynamoDbItemEncryptorConfig;
use ddb_model::encryption::aws_db_esdk::material_providers::client::Client as Mpl;
use ddb_model::encryption::aws_db_esdk::material_providers::types::AesWrappingAlg;
use ddb_model::encryption::aws_db_esdk::material_providers::types::keyring::KeyringRef;
use ddb_model::encryption::aws_db_esdk::material_providers::types::material_providers_config::MaterialProvidersConfig;
use ddb_model::encryption::{Encryption, attribute_actions};
use ddb_model::error::EncryptionProblem;
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Item, Op};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support::{self, n, put_raw, raw, s};

/// Encrypted, sign-only and (by default) signed fields.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "PATIENT#<id>", sk = "RECORD")]
struct Patient {
    id: String,
    #[encrypt]
    ssn: String,
    #[encrypt]
    notes: Option<String>,
    #[sign_only]
    plan: String,
    visits: u32,
}

fn ann() -> Patient {
    Patient {
        id: "ann".into(),
        ssn: "123-45-6789".into(),
        notes: Some("allergic to penicillin".into()),
        plan: "gold".into(),
        visits: 3,
    }
}

pub(crate) async fn keyring(key: u8) -> KeyringRef {
    let mpl = Mpl::from_conf(MaterialProvidersConfig::builder().build().expect("config"))
        .expect("material providers");
    mpl.create_raw_aes_keyring()
        .key_namespace("ddb-model-tests")
        .key_name("patients")
        .wrapping_key(vec![key; 32])
        .wrapping_alg(AesWrappingAlg::AlgAes256GcmIv12Tag16)
        .send()
        .await
        .expect("raw AES keyring")
}

async fn encrypted_db(key: u8) -> Db {
    support::db::<DefaultTable>().await.with_encryption(Encryption::new(keyring(key).await))
}

/// The SDK's item encryptor for `Patient`'s items, configured by hand as a program that does
/// not use ddb-model would: the same logical table, keys, keyring and attribute actions.
async fn sdk_encryptor(key: u8, notes: bool) -> ItemEncryptor {
    let mut actions = HashMap::from([
        ("pk".to_owned(), CryptoAction::SignOnly),
        ("sk".to_owned(), CryptoAction::SignOnly),
        ("_type".to_owned(), CryptoAction::SignOnly),
        ("id".to_owned(), CryptoAction::SignOnly),
        ("ssn".to_owned(), CryptoAction::EncryptAndSign),
        ("plan".to_owned(), CryptoAction::SignOnly),
        ("visits".to_owned(), CryptoAction::SignOnly),
    ]);
    if notes {
        actions.insert("notes".to_owned(), CryptoAction::EncryptAndSign);
    }
    let config = DynamoDbItemEncryptorConfig::builder()
        .logical_table_name("ddb-model")
        .partition_key_name("pk")
        .sort_key_name("sk")
        .attribute_actions_on_encrypt(actions)
        .keyring(keyring(key).await)
        .allowed_unsigned_attribute_prefix("_ddbm.")
        .build()
        .expect("encryptor config");
    ItemEncryptor::from_conf(config).expect("item encryptor")
}

fn problem(e: &Error) -> Option<EncryptionProblem> {
    match e {
        Error::Encryption { problem, .. } => Some(*problem),
        _ => None,
    }
}

#[tokio::test]
async fn encrypted_fields_are_ciphertext_at_rest_and_read_back() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    let stored = raw(&db, "PATIENT#ann", "RECORD").await.expect("stored");
    assert!(matches!(stored["ssn"], AttributeValue::B(_)), "{:?}", stored["ssn"]);
    assert!(matches!(stored["notes"], AttributeValue::B(_)));
    assert_eq!(stored["plan"], s("gold"));
    assert_eq!(stored["visits"], n(3));
    assert!(stored.contains_key("aws_dbe_head") && stored.contains_key("aws_dbe_foot"));
    assert!(!format!("{stored:?}").contains("123-45-6789"));
    assert_eq!(Patient::get(&db, "ann").await?, Some(ann()));

    // replace and put re-sign the whole item.
    let mut changed = ann();
    changed.notes = None;
    changed.visits = 4;
    changed.replace(&db).await?;
    assert_eq!(Patient::get(&db, "ann").await?, Some(changed.clone()));
    changed.put(&db).await?;
    assert_eq!(Patient::get(&db, "ann").await?, Some(changed));
    Ok(())
}

#[tokio::test]
async fn items_written_by_ddb_model_decrypt_with_the_sdk() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    let stored = raw(&db, "PATIENT#ann", "RECORD").await.expect("stored");
    let plain = sdk_encryptor(7, true)
        .await
        .decrypt_item()
        .encrypted_item(stored)
        .send()
        .await
        .expect("the SDK decrypts")
        .plaintext_item
        .expect("plaintext");
    assert_eq!(plain["ssn"], s("123-45-6789"));
    assert_eq!(plain["notes"], s("allergic to penicillin"));
    assert_eq!(plain["plan"], s("gold"));
    assert_eq!(plain["visits"], n(3));
    Ok(())
}

#[tokio::test]
async fn items_written_by_the_sdk_read_through_ddb_model() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    let plain: Item = HashMap::from([
        ("pk".to_owned(), s("PATIENT#bob")),
        ("sk".to_owned(), s("RECORD")),
        ("_type".to_owned(), s("Patient")),
        ("id".to_owned(), s("bob")),
        ("ssn".to_owned(), s("987-65-4321")),
        ("plan".to_owned(), s("basic")),
        ("visits".to_owned(), n(1)),
    ]);
    let sealed = sdk_encryptor(7, false)
        .await
        .encrypt_item()
        .plaintext_item(plain.clone())
        .send()
        .await
        .expect("the SDK encrypts")
        .encrypted_item
        .expect("encrypted");
    assert!(matches!(sealed["ssn"], AttributeValue::B(_)));
    // ddb-model's attribute actions for the same item are the hand-written ones.
    let ours = attribute_actions::<Patient>(&plain);
    assert_eq!(ours["ssn"], CryptoAction::EncryptAndSign);
    assert_eq!(ours["visits"], CryptoAction::SignOnly);
    put_raw(&db, sealed).await;
    let bob = Patient::get(&db, "bob").await?.expect("read");
    assert_eq!(
        bob,
        Patient {
            id: "bob".into(),
            ssn: "987-65-4321".into(),
            notes: None,
            plan: "basic".into(),
            visits: 1
        }
    );
    Ok(())
}

#[tokio::test]
async fn a_tampered_item_is_an_error_never_data() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    let stored = raw(&db, "PATIENT#ann", "RECORD").await.expect("stored");
    let tamper = |change: &dyn Fn(&mut Item)| {
        let mut item = stored.clone();
        change(&mut item);
        item
    };
    let cases: Vec<(&str, Item, EncryptionProblem)> = vec![
        (
            "a signed field changed",
            tamper(&|i| {
                i.insert("plan".into(), s("platinum"));
            }),
            EncryptionProblem::Unverified,
        ),
        (
            "a signed number changed",
            tamper(&|i| {
                i.insert("visits".into(), n(99));
            }),
            EncryptionProblem::Unverified,
        ),
        (
            "an encrypted field removed",
            tamper(&|i| {
                i.remove("notes");
            }),
            EncryptionProblem::Unverified,
        ),
        (
            "a signed field removed",
            tamper(&|i| {
                i.remove("plan");
            }),
            EncryptionProblem::Unverified,
        ),
        (
            "an attribute added",
            tamper(&|i| {
                i.insert("admin".into(), AttributeValue::Bool(true));
            }),
            EncryptionProblem::Unverified,
        ),
        (
            "the signature removed",
            tamper(&|i| {
                i.remove("aws_dbe_foot");
            }),
            EncryptionProblem::NotSigned,
        ),
        (
            "ciphertext swapped between fields",
            tamper(&|i| {
                let ssn = i["ssn"].clone();
                i.insert("ssn".into(), i["notes"].clone());
                i.insert("notes".into(), ssn);
            }),
            EncryptionProblem::Unverified,
        ),
    ];
    for (what, item, expected) in cases {
        put_raw(&db, item).await;
        let err = Patient::get(&db, "ann").await.expect_err(what);
        assert_eq!(problem(&err), Some(expected), "{what}: {err}");
    }
    Ok(())
}

#[tokio::test]
async fn another_key_does_not_verify() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    let other = db.clone().with_encryption(Encryption::new(keyring(8).await));
    let err = Patient::get(&other, "ann").await.expect_err("another key");
    assert_eq!(problem(&err), Some(EncryptionProblem::Unverified), "{err}");
    assert!(std::error::Error::source(&err).is_some(), "the SDK's error is the source");
    Ok(())
}

#[tokio::test]
async fn a_plaintext_item_of_a_sealed_entity_is_not_signed() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    let plain: Item = HashMap::from([
        ("pk".to_owned(), s("PATIENT#eve")),
        ("sk".to_owned(), s("RECORD")),
        ("_type".to_owned(), s("Patient")),
        ("id".to_owned(), s("eve")),
        ("ssn".to_owned(), s("000-00-0000")),
        ("plan".to_owned(), s("gold")),
        ("visits".to_owned(), n(0)),
    ]);
    put_raw(&db, plain).await;
    let err = Patient::get(&db, "eve").await.expect_err("plaintext");
    assert_eq!(problem(&err), Some(EncryptionProblem::NotSigned), "{err}");
    Ok(())
}

#[tokio::test]
async fn without_a_keyring_nothing_is_sent() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    db.reset_requests();
    let err = ann().create(&db).await.expect_err("no keyring");
    assert_eq!(problem(&err), Some(EncryptionProblem::NotConfigured), "{err}");
    let err = ann().put(&db).await.expect_err("no keyring");
    assert_eq!(problem(&err), Some(EncryptionProblem::NotConfigured));
    let err = Patient::get(&db, "ann").await.expect_err("no keyring");
    assert_eq!(problem(&err), Some(EncryptionProblem::NotConfigured));
    assert_eq!(db.requests().total(), 0);
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn an_update_reads_the_item_and_puts_it_back_sealed() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    db.reset_requests();
    let updated =
        Patient::update(&db, "ann").set(Patient::VISITS, 9).set(Patient::PLAN, "silver").await?;
    let expected = Patient { visits: 9, plan: "silver".into(), ..ann() };
    assert_eq!(updated, expected);
    // A consistent read, then a put on condition that the signature read is still stored.
    assert_eq!(db.requests().get(Op::GetItem), 1);
    assert_eq!(db.requests().get(Op::PutItem), 1);
    assert_eq!(db.requests().total(), 2);
    assert_sealed(&db, &expected).await;
    assert_eq!(Patient::get(&db, "ann").await?, Some(expected.clone()));

    // The caller's condition, on the stored (signed, plaintext) attributes.
    db.reset_requests();
    let err = Patient::update(&db, "ann")
        .set(Patient::VISITS, 10)
        .condition(Patient::PLAN.eq("gold"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::ConditionFailed { .. }), "{err}");
    assert_eq!(db.requests().total(), 2);
    let kept =
        Patient::update(&db, "ann").set(Patient::VISITS, 10).condition(Patient::PLAN.eq("silver"));
    assert_eq!(kept.await?.visits, 10);
    // No item: one read, nothing written.
    db.reset_requests();
    let err = Patient::update(&db, "bob").set(Patient::VISITS, 1).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert_eq!(db.requests().total(), 1);
    // An upsert must be able to create the item, with every field: an encrypted field has no
    // path to set, so `Patient` (whose `ssn` is no `Option`) cannot be upserted.
    db.reset_requests();
    let err = Patient::update(&db, "ann").upsert().set(Patient::VISITS, 11).await.unwrap_err();
    assert!(err.to_string().contains("upsert"), "{err}");
    assert_eq!(db.requests().total(), 0);
    // One whose encrypted fields may be absent is created sealed, then updated.
    let created = Badge::update(&db, "b1").upsert().set(Badge::LEVEL, 1).await?;
    assert_eq!(created, Badge { id: "b1".into(), pin: None, level: 1 });
    let stored = raw(&db, "BADGE#b1", "BADGE").await.expect("stored");
    assert!(stored.contains_key("aws_dbe_foot"), "{stored:?}");
    let again = Badge::update(&db, "b1").upsert().set(Badge::LEVEL, 2).await?;
    assert_eq!(Badge::get(&db, "b1").await?, Some(again));
    Ok(())
}

/// A sealed entity whose encrypted field may be absent: an upsert can create it.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "BADGE#<id>", sk = "BADGE")]
struct Badge {
    id: String,
    #[encrypt]
    pin: Option<String>,
    level: u32,
}

#[tokio::test]
async fn computed_updates_and_transaction_updates_are_refused_before_sending() -> Result<(), Error>
{
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    db.reset_requests();
    let unsupported = |e: Error| {
        let found = match &e {
            Error::InvalidAction { source, .. } => problem(source),
            e => problem(e),
        };
        assert!(matches!(found, Some(EncryptionProblem::Unsupported { .. })), "{e}");
    };
    unsupported(Patient::update(&db, "ann").add(Patient::VISITS, 1).await.expect_err("add"));
    unsupported(
        db.transaction()
            .update(Patient::key("ann"), |u| u.set(Patient::VISITS, 5))
            .await
            .expect_err("transaction update"),
    );
    assert_eq!(db.requests().total(), 0);
    // A transaction put seals, a delete needs nothing.
    let mut bob = Patient { id: "bob".into(), ..ann() };
    db.transaction().put(&mut bob).delete(Patient::key("ann")).await?;
    assert_sealed(&db, &bob).await;
    assert_eq!(Patient::get(&db, "bob").await?, Some(bob));
    assert_eq!(Patient::get(&db, "ann").await?, None);
    Ok(())
}

/// Concurrent updates of different fields of one sealed item: each reads, changes and puts
/// back the whole item, so one that was overtaken starts again from a new read. No update
/// is lost, and the item always verifies.
#[tokio::test]
async fn concurrent_updates_of_a_sealed_item_lose_nothing() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    db.reset_requests();
    for round in 0..6u32 {
        let visits = Patient::update(&db, "ann").set(Patient::VISITS, round);
        let plan = Patient::update(&db, "ann").set(Patient::PLAN, format!("plan {round}"));
        // Both read before either puts: one of them is overtaken and reads again.
        let (a, b) = tokio::join!(visits.send(), plan.send());
        a?;
        b?;
        let stored = Patient::get(&db, "ann").await?.expect("stored");
        assert_eq!(
            (stored.visits, stored.plan.as_str()),
            (round, format!("plan {round}").as_str())
        );
    }
    // 12 updates: more than 12 puts, the overtaken ones' tries counted too.
    assert!(db.requests().get(Op::PutItem) > 12, "{:?}", db.requests());
    assert_sealed(&db, &Patient::get(&db, "ann").await?.expect("stored")).await;
    Ok(())
}

#[tokio::test]
async fn raw_conversions_refuse_sealed_entities() {
    let err = ddb_model::entity::to_item(&ann(), None).expect_err("to_item");
    assert_eq!(problem(&err), Some(EncryptionProblem::Unsupported { operation: "to_item" }));
    let err = ddb_model::entity::from_item::<Patient>(Item::new()).expect_err("from_item");
    assert_eq!(problem(&err), Some(EncryptionProblem::Unsupported { operation: "from_item" }));
}

fn patient() -> impl Strategy<Value = Patient> {
    (
        "[a-z0-9]{1,12}",
        any::<String>(),
        proptest::option::of(any::<String>()),
        ".{0,20}",
        any::<u32>(),
    )
        .prop_map(|(id, ssn, notes, plan, visits)| Patient { id, ssn, notes, plan, visits })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(16)
    ))]

    /// Any field values: stored encrypted (the SDK decrypts them to the plaintext item) and
    /// read back equal.
    #[test]
    fn any_patient_round_trips(p in patient()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let (read, plain) = runtime.expect("runtime").block_on(async {
            let db = encrypted_db(3).await;
            p.create(&db).await.expect("create");
            let stored = raw(&db, &format!("PATIENT#{}", p.id), "RECORD").await.expect("stored");
            let plain = sdk_encryptor(3, p.notes.is_some()).await
                .decrypt_item().encrypted_item(stored).send().await.expect("the SDK decrypts")
                .plaintext_item.expect("plaintext");
            (Patient::get(&db, &p.id).await.expect("get"), plain)
        });
        prop_assert_eq!(plain.get("ssn"), Some(&s(&p.ssn)));
        prop_assert_eq!(read, Some(p));
    }
}

fn patients(n: usize) -> Vec<Patient> {
    (0..n).map(|i| Patient { id: format!("p{i}"), visits: i as u32, ..ann() }).collect()
}

async fn assert_sealed(db: &Db, p: &Patient) {
    let stored = raw(db, &format!("PATIENT#{}", p.id), "RECORD").await.expect("stored");
    assert!(matches!(stored["ssn"], AttributeValue::B(_)), "{}: {:?}", p.id, stored["ssn"]);
    assert!(stored.contains_key("aws_dbe_foot"), "{} is signed", p.id);
}

#[tokio::test]
async fn every_write_path_seals_and_every_read_path_opens() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    let all = patients(6);
    db.batch_write().put(&all[0]).put_unchecked(&all[1]).await?;
    db.transaction().create(&all[2]).create(&all[3]).await?;
    all[4].create(&db).await?;
    let mut replaced = all[5].clone();
    replaced.create(&db).await?;
    replaced.plan = "silver".into();
    db.transaction().replace(&mut replaced).await?;
    let mut expected = all.clone();
    expected[5] = replaced;
    for p in &expected {
        assert_sealed(&db, p).await;
    }

    let keys = expected.iter().map(Entity::key).collect::<Vec<_>>();
    let found = db.batch_get(keys.clone()).consistent().await?;
    assert_eq!(found, expected.iter().cloned().map(Some).collect::<Vec<_>>());
    let by_key = db.batch_get(keys.clone()).by_key().await?;
    assert_eq!(by_key.len(), 6);
    assert_eq!(by_key[&keys[3]], expected[3]);

    let mut read = db.batch_read();
    let slot = read.get(keys[2].clone());
    assert_eq!(read.await?.get(slot)?, Some(expected[2].clone()));

    let mut tx = db.transact_get();
    let slot = tx.get(keys[1].clone());
    assert_eq!(tx.await?.get(&slot)?, Some(expected[1].clone()));

    let mut scanned = db.scan::<Patient>().consistent().all().await?;
    scanned.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(scanned, expected);
    // A filter on a signed (plaintext) field works; an encrypted field has no path.
    let gold = db.scan::<Patient>().filter(Patient::PLAN.eq("silver")).all().await?;
    assert_eq!(gold, std::slice::from_ref(&expected[5]));

    assert_eq!(Patient::query(&db, "p4").all().await?, std::slice::from_ref(&expected[4]));
    Ok(())
}

#[tokio::test]
async fn reads_without_a_keyring_are_refused_before_sending() -> Result<(), Error> {
    let sealed = encrypted_db(7).await;
    ann().create(&sealed).await?;
    let db = support::db::<DefaultTable>().await;
    db.reset_requests();
    let not_configured = |e: Error| {
        let found = match &e {
            Error::InvalidAction { source, .. } => problem(source),
            e => problem(e),
        };
        assert_eq!(found, Some(EncryptionProblem::NotConfigured), "{e}");
    };
    not_configured(db.scan::<Patient>().all().await.expect_err("scan"));
    not_configured(Patient::query(&db, "ann").all().await.expect_err("query"));
    not_configured(db.batch_get([Patient::key("ann")]).await.expect_err("batch get"));
    not_configured(db.batch_write().put(&ann()).await.expect_err("batch put"));
    not_configured(db.transaction().create(&ann()).await.expect_err("transaction"));
    let mut tx = db.transact_get();
    tx.get(Patient::key("ann"));
    not_configured(tx.await.expect_err("transact get"));
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

/// A strict entity that is sealed: the SDK's header and footer are the library's attributes,
/// not unknown ones; an attribute another writer adds is still named (and, being unsigned,
/// also fails verification first).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CARD#<id>", sk = "CARD", strict)]
struct Card {
    id: String,
    #[encrypt]
    number: String,
    holder: String,
}

#[tokio::test]
async fn a_strict_sealed_entity_reads_back_what_it_wrote() -> Result<(), Error> {
    let db = encrypted_db(9).await;
    let card = Card { id: "c1".into(), number: "4111".into(), holder: "Ann".into() };
    card.create(&db).await?;
    assert_eq!(Card::get(&db, "c1").await?, Some(card.clone()));
    assert_eq!(Card::query(&db, "c1").all().await?, vec![card]);
    Ok(())
}

/// The SDK's other way in: its interceptor on an `aws-sdk-dynamodb` client, which encrypts
/// on `PutItem` and decrypts on `GetItem` for the tables it is configured for. A program
/// that uses it, not ddb-model, reads what ddb-model wrote, and ddb-model reads what it wrote.
#[tokio::test]
async fn the_sdks_encrypting_client_and_ddb_model_read_each_others_items() -> Result<(), Error> {
    use ddb_model::aws_sdk_dynamodb::Client;
    use ddb_model::encryption::aws_db_esdk::dynamodb::types::DynamoDbTableEncryptionConfig;
    use ddb_model::encryption::aws_db_esdk::intercept::DbEsdkInterceptor;
    use ddb_model::encryption::aws_db_esdk::types::dynamo_db_tables_encryption_config::DynamoDbTablesEncryptionConfig;

    let db = encrypted_db(5).await;
    let actions = HashMap::from([
        ("pk".to_owned(), CryptoAction::SignOnly),
        ("sk".to_owned(), CryptoAction::SignOnly),
        ("_type".to_owned(), CryptoAction::SignOnly),
        ("id".to_owned(), CryptoAction::SignOnly),
        ("ssn".to_owned(), CryptoAction::EncryptAndSign),
        ("notes".to_owned(), CryptoAction::EncryptAndSign),
        ("plan".to_owned(), CryptoAction::SignOnly),
        ("visits".to_owned(), CryptoAction::SignOnly),
    ]);
    let table = DynamoDbTableEncryptionConfig::builder()
        .logical_table_name("ddb-model")
        .partition_key_name("pk")
        .sort_key_name("sk")
        .attribute_actions_on_encrypt(actions)
        .keyring(keyring(5).await)
        .allowed_unsigned_attribute_prefix("_ddbm.")
        .build()
        .expect("table config");
    let tables = DynamoDbTablesEncryptionConfig::builder()
        .table_encryption_configs(HashMap::from([(db.table_name().to_owned(), table)]))
        .build()
        .expect("tables config");
    let config = db
        .client()
        .config()
        .to_builder()
        .interceptor(DbEsdkInterceptor::new(tables).expect("interceptor"))
        .build();
    // A handle over the SDK's client, for the support module's raw reads and writes: they send
    // plain `GetItem` / `PutItem` requests, which the SDK's interceptor encrypts and decrypts.
    let sdk: Db = Db::with_table_name(Client::from_conf(config), db.table_name());

    // ddb-model writes; the encrypting client reads the plaintext back.
    ann().create(&db).await?;
    let read = raw(&sdk, "PATIENT#ann", "RECORD").await.expect("found");
    assert_eq!(read["ssn"], s("123-45-6789"));
    assert_eq!(read["notes"], s("allergic to penicillin"));
    assert_eq!(read["visits"], n(3));

    // The encrypting client writes; ddb-model reads the entity.
    let item: Item = HashMap::from([
        ("pk".to_owned(), s("PATIENT#cy")),
        ("sk".to_owned(), s("RECORD")),
        ("_type".to_owned(), s("Patient")),
        ("id".to_owned(), s("cy")),
        ("ssn".to_owned(), s("555-12-3456")),
        ("plan".to_owned(), s("silver")),
        ("visits".to_owned(), n(2)),
    ]);
    put_raw(&sdk, item).await;
    let stored = raw(&db, "PATIENT#cy", "RECORD").await.expect("stored");
    assert!(matches!(stored["ssn"], AttributeValue::B(_)), "encrypted at rest");
    let cy = Patient::get(&db, "cy").await?.expect("read");
    assert_eq!(
        cy,
        Patient {
            id: "cy".into(),
            ssn: "555-12-3456".into(),
            notes: None,
            plan: "silver".into(),
            visits: 2
        }
    );
    Ok(())
}

/// An entity stored beside `Patient` in its partition, without encrypted fields.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "PATIENT#<patient>", sk = "VISIT#<n>")]
struct Visit {
    patient: String,
    n: u32,
    reason: String,
}

#[derive(Collection, Debug, PartialEq)]
enum Chart {
    Patient(Patient),
    Visit(Visit),
}

/// Some fields of `Patient`, in plaintext at rest; still not readable without the signature
/// over the whole item.
#[derive(Projection, Deserialize, Debug, PartialEq)]
#[projection(entity = Patient)]
struct PatientPlan {
    plan: String,
}

#[derive(Collection, Debug, PartialEq)]
enum Plans {
    Plan(PatientPlan),
    Visit(Visit),
}

#[tokio::test]
async fn a_collection_opens_its_sealed_variants_with_the_handles_keyring() -> Result<(), Error> {
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    let visit = Visit { patient: "ann".into(), n: 1, reason: "check-up".into() };
    visit.create(&db).await?;

    let chart = Patient::partition(&db, "ann").collection::<Chart>().all().await?;
    assert_eq!(chart, vec![Chart::Patient(ann()), Chart::Visit(visit.clone())]);

    // A tampered sealed item in the collection is the verification error, never data.
    let mut stored = raw(&db, "PATIENT#ann", "RECORD").await.expect("stored");
    stored.insert("visits".into(), n(4));
    put_raw(&db, stored).await;
    let err = Patient::partition(&db, "ann").collection::<Chart>().all().await.unwrap_err();
    assert_eq!(problem(&err), Some(EncryptionProblem::Unverified), "{err}");
    Ok(())
}

#[tokio::test]
async fn collections_and_projections_that_cannot_open_are_refused_before_sending()
-> Result<(), Error> {
    let sealed = encrypted_db(7).await;
    ann().create(&sealed).await?;
    let plain = support::db::<DefaultTable>().await;
    for db in [&sealed, &plain] {
        db.reset_requests();
        // A projection cannot check the signature over the whole item, keyring or not.
        let err = Patient::partition(db, "ann").collection::<Plans>().all().await.unwrap_err();
        let unsupported = EncryptionProblem::Unsupported { operation: "projection" };
        assert_eq!(problem(&err), Some(unsupported), "{err}");
        let err = Patient::query(db, "ann")
            .project::<PatientPlan>([Patient::PLAN.path()])
            .all()
            .await
            .unwrap_err();
        assert_eq!(problem(&err), Some(unsupported), "{err}");
        assert_eq!(db.requests().total(), 0);
    }
    // Without a keyring, a collection with a sealed variant is refused whole.
    let err = Patient::partition(&plain, "ann").collection::<Chart>().all().await.unwrap_err();
    assert_eq!(problem(&err), Some(EncryptionProblem::NotConfigured), "{err}");
    assert_eq!(plain.requests().total(), 0);
    Ok(())
}

#[tokio::test]
async fn stream_images_of_sealed_entities_open_with_the_handles_keyring() -> Result<(), Error> {
    use ddb_model::stream::{Image, StreamChange, StreamEvent, StreamRecord, UnknownReason};
    let db = encrypted_db(7).await;
    ann().create(&db).await?;
    let stored = raw(&db, "PATIENT#ann", "RECORD").await.expect("stored");
    let record = |image: Item| StreamRecord {
        event_name: "INSERT".into(),
        dynamodb: StreamChange {
            keys: image
                .iter()
                .filter(|(k, _)| *k == "pk" || *k == "sk")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            new_image: Some(image),
            ..StreamChange::default()
        },
        ..StreamRecord::default()
    };
    let mut tampered = stored.clone();
    tampered.insert("plan".into(), s("platinum"));
    // As Lambda delivers them: DynamoDB JSON, binary attributes in base64.
    let json =
        serde_json::to_string(&StreamEvent { records: vec![record(stored), record(tampered)] })
            .expect("json");
    let event: StreamEvent = serde_json::from_str(&json).expect("event");

    let opened = event.decode_in::<Chart>(&db);
    assert_eq!(opened[0].as_ref().expect("record").new_entity(), Some(&Chart::Patient(ann())));
    match opened[1].as_ref().expect("record").new.as_ref() {
        Some(Image::Unknown(u)) => match &u.reason {
            UnknownReason::Corrupt(e) => {
                assert_eq!(problem(e), Some(EncryptionProblem::Unverified), "{e}")
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    // Without the handle, the image cannot be opened, and says so.
    let closed = event.decode::<Chart>();
    match closed[0].as_ref().expect("record").new.as_ref() {
        Some(Image::Unknown(u)) => match &u.reason {
            UnknownReason::Corrupt(e) => {
                assert_eq!(problem(e), Some(EncryptionProblem::NotConfigured), "{e}")
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    Ok(())
}
