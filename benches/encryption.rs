//! The cost of encrypted and signed fields (feature `encryption`) per item: the same entity
//! sealed (`#[encrypt]` on two fields, every attribute signed) and plain, written and read
//! through the embedded engine, and the SDK's item encryptor alone on the item ddb-model
//! stores (no engine, no HTTP): what sealing and opening add to a `put` and a `get`.
//!
//!     cargo bench --bench encryption
//!
//! The keyring is a raw AES key: no network. An AWS KMS keyring adds a KMS call per data
//! key (the SDK's default caches none for the item encryptor: one call per item written and
//! per item read).

use std::collections::HashMap;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group};
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::encryption::aws_db_esdk::item_encryptor::client::Client as ItemEncryptor;
use ddb_model::encryption::aws_db_esdk::item_encryptor::types::dynamo_db_item_encryptor_config::DynamoDbItemEncryptorConfig;
use ddb_model::encryption::aws_db_esdk::material_providers::client::Client as Mpl;
use ddb_model::encryption::aws_db_esdk::material_providers::types::AesWrappingAlg;
use ddb_model::encryption::aws_db_esdk::material_providers::types::keyring::KeyringRef;
use ddb_model::encryption::aws_db_esdk::material_providers::types::material_providers_config::MaterialProvidersConfig;
use ddb_model::encryption::{Encryption, attribute_actions};
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Item, local};
use serde::{Deserialize, Serialize};

/// Sealed: two encrypted fields, everything signed.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "PATIENT#<id>", sk = "RECORD")]
struct Patient {
    id: String,
    #[encrypt]
    ssn: String,
    #[encrypt]
    notes: String,
    plan: String,
    visits: u32,
}

/// The same fields, plain.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "PLAIN#<id>", sk = "RECORD")]
struct PlainPatient {
    id: String,
    ssn: String,
    notes: String,
    plan: String,
    visits: u32,
}

fn patient() -> Patient {
    Patient {
        id: "ann".into(),
        ssn: "123-45-6789".into(),
        notes: "allergic to penicillin; prefers morning appointments".into(),
        plan: "gold".into(),
        visits: 3,
    }
}

fn plain(p: &Patient) -> PlainPatient {
    PlainPatient {
        id: p.id.clone(),
        ssn: p.ssn.clone(),
        notes: p.notes.clone(),
        plan: p.plan.clone(),
        visits: p.visits,
    }
}

async fn keyring() -> KeyringRef {
    let mpl = Mpl::from_conf(MaterialProvidersConfig::builder().build().expect("config"))
        .expect("material providers");
    mpl.create_raw_aes_keyring()
        .key_namespace("bench")
        .key_name("patients")
        .wrapping_key(vec![9u8; 32])
        .wrapping_alg(AesWrappingAlg::AlgAes256GcmIv12Tag16)
        .send()
        .await
        .expect("raw AES keyring")
}

fn encryption(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let (db, keyring) = rt.block_on(async {
        let keyring = keyring().await;
        let db: Db = local::isolated_db::<DefaultTable>().await.expect("table");
        (db.with_encryption(Encryption::new(keyring.clone())), keyring)
    });
    let sealed = patient();
    let unsealed = plain(&sealed);

    // The SDK's item encryptor configured as ddb-model configures it for this item.
    let item: Item = HashMap::from([
        ("pk".to_owned(), AttributeValue::S("PATIENT#ann".into())),
        ("sk".to_owned(), AttributeValue::S("RECORD".into())),
        ("_type".to_owned(), AttributeValue::S("Patient".into())),
        ("id".to_owned(), AttributeValue::S(sealed.id.clone())),
        ("ssn".to_owned(), AttributeValue::S(sealed.ssn.clone())),
        ("notes".to_owned(), AttributeValue::S(sealed.notes.clone())),
        ("plan".to_owned(), AttributeValue::S(sealed.plan.clone())),
        ("visits".to_owned(), AttributeValue::N(sealed.visits.to_string())),
    ]);
    let config = DynamoDbItemEncryptorConfig::builder()
        .logical_table_name("ddb-model")
        .partition_key_name("pk")
        .sort_key_name("sk")
        .attribute_actions_on_encrypt(attribute_actions::<Patient>(&item))
        .keyring(keyring)
        .allowed_unsigned_attribute_prefix("_ddbm.")
        .build()
        .expect("encryptor config");
    let encryptor = ItemEncryptor::from_conf(config).expect("item encryptor");
    let encrypt = |item: Item| {
        rt.block_on(encryptor.encrypt_item().plaintext_item(item).send())
            .expect("encrypt")
            .encrypted_item
            .expect("encrypted")
    };
    let encrypted = encrypt(item.clone());

    // Both entities stored and read back equal.
    rt.block_on(async {
        sealed.put(&db).await.expect("put sealed");
        unsealed.put(&db).await.expect("put plain");
        assert_eq!(Patient::get(&db, "ann").await.expect("get"), Some(sealed.clone()));
        assert_eq!(PlainPatient::get(&db, "ann").await.expect("get"), Some(unsealed.clone()));
    });

    let mut g = c.benchmark_group("encryption/sdk");
    g.bench_function("encrypt_item", |b| {
        b.iter_batched(|| item.clone(), encrypt, BatchSize::SmallInput)
    });
    g.bench_function("decrypt_item", |b| {
        b.iter_batched(
            || encrypted.clone(),
            |e| rt.block_on(encryptor.decrypt_item().encrypted_item(e).send()).expect("decrypt"),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("encryption/put");
    g.sample_size(30);
    g.bench_function("plain", |b| b.iter(|| rt.block_on(unsealed.put(&db)).expect("put")));
    g.bench_function("sealed", |b| b.iter(|| rt.block_on(sealed.put(&db)).expect("put")));
    g.finish();

    let mut g = c.benchmark_group("encryption/get");
    g.sample_size(30);
    g.bench_function("plain", |b| {
        b.iter(|| rt.block_on(PlainPatient::get(&db, "ann")).expect("get"))
    });
    g.bench_function("sealed", |b| b.iter(|| rt.block_on(Patient::get(&db, "ann")).expect("get")));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(6));
    targets = encryption
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
