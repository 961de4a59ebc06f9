//! Client-side encrypted and signed fields with the AWS Database Encryption SDK (feature
//! `encryption`):
//!
//! - a patient record whose `ssn` and `notes` are encrypted (`#[encrypt]`), whose `plan` is
//!   signed in plaintext (`#[sign_only]`, so a filter can read it), and whose every other
//!   attribute (keys, entity type, `visits`) is signed;
//! - the keyring given to the handle: a raw AES key here (no network; production uses AWS
//!   KMS, see `docs/encryption.md`);
//! - what is stored, what reads return, what a tampered item, an update and an `add` give.
//!
//!     cargo run --example encryption
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local): encryption is client-side, the endpoint stores ciphertext.

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::encryption::Encryption;
use ddb_model::encryption::aws_db_esdk::material_providers::client::Client as Mpl;
use ddb_model::encryption::aws_db_esdk::material_providers::types::AesWrappingAlg;
use ddb_model::encryption::aws_db_esdk::material_providers::types::material_providers_config::MaterialProvidersConfig;
use ddb_model::error::EncryptionProblem;
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, local};
use serde::{Deserialize, Serialize};

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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A raw AES keyring: the 32-byte key would come from a secret store.
    let mpl = Mpl::from_conf(MaterialProvidersConfig::builder().build()?)?;
    let keyring = mpl
        .create_raw_aes_keyring()
        .key_namespace("clinic")
        .key_name("records-2026")
        .wrapping_key(vec![42u8; 32])
        .wrapping_alg(AesWrappingAlg::AlgAes256GcmIv12Tag16)
        .send()
        .await?;
    let db = local::isolated_db::<DefaultTable>().await?.with_encryption(Encryption::new(keyring));

    let ann = Patient {
        id: "ann".into(),
        ssn: "123-45-6789".into(),
        notes: Some("allergic to penicillin".into()),
        plan: "gold".into(),
        visits: 3,
    };
    ann.create(&db).await?;

    // What the table holds: ciphertext for the encrypted fields, the SDK's header and
    // signature, everything else in plaintext.
    let key = ann.key();
    let stored = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .key("pk", AttributeValue::S(key.pk().to_owned()))
        .key("sk", AttributeValue::S(key.sk().unwrap_or_default().to_owned()))
        .send()
        .await?
        .item
        .unwrap_or_default();
    let mut names: Vec<&String> = stored.keys().collect();
    names.sort();
    for name in names {
        let shown = match &stored[name] {
            AttributeValue::B(b) => format!("<{} bytes>", b.as_ref().len()),
            AttributeValue::S(s) => format!("{s:?}"),
            AttributeValue::N(n) => n.clone(),
            other => format!("{other:?}"),
        };
        println!("stored {name:>13}: {shown}");
    }
    assert!(matches!(stored["ssn"], AttributeValue::B(_)));

    // Reads verify and decrypt: get, query, scan (a filter on the signed plaintext `plan`).
    assert_eq!(Patient::get(&db, "ann").await?, Some(ann.clone()));
    assert_eq!(Patient::query(&db, "ann").all().await?, std::slice::from_ref(&ann));
    let gold = db.scan::<Patient>().filter(Patient::PLAN.eq("gold")).all().await?;
    println!("read back: {:?}", gold[0]);

    // An update cannot change a signed item in place: it reads the item, changes it, seals
    // it again and puts it back if no one wrote it since (2 requests).
    let before = db.requests().total();
    let updated = Patient::update(&db, "ann").set(Patient::VISITS, 4).await?;
    assert_eq!((updated.visits, db.requests().total() - before), (4, 2));
    println!("updated: {} visits, in 2 requests", updated.visits);
    // What it would compute from the stored value (`add`) is the service's work: refused.
    let refused = Patient::update(&db, "ann").add(Patient::VISITS, 1).await.unwrap_err();
    println!("add: {refused}");

    // A change made behind the library's back does not verify: an error, never data.
    let mut tampered = stored.clone();
    tampered.insert("plan".into(), AttributeValue::S("platinum".into()));
    db.client().put_item().table_name(db.table_name()).set_item(Some(tampered)).send().await?;
    match Patient::get(&db, "ann").await {
        Err(Error::Encryption { problem: EncryptionProblem::Unverified, .. }) => {
            println!("tampered item: refused");
        }
        other => return Err(format!("a tampered item read as {other:?}").into()),
    }
    Ok(())
}
